//! cl100k's pre-tokenizer written out by hand, equal to the `regex` pattern of the `cl100k` preset
//! (bpe_studio/engine/config.py, tiktoken's) on every input:
//!
//! `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s`
//!
//! The possessive quantifiers change nothing here: no alternative could succeed by giving back what they
//! took. Classes come from the shared table (pretok.rs).
//!
//! The same scanner, with three parameters, is the pre-tokenizer of the models whose patterns are
//! cl100k's with small changes (bpe_studio/engine/pretokenize/patterns.py lists their spellings):
//!
//! * `DIGITS`: numbers in groups of 3 (`\p{N}{1,3}`) or one by one (`\p{N}`: Qwen 2, Qwen 3.5);
//! * `END_WHOLE`: whether `\s++$` makes a whitespace run that ends the text one pre-token (cl100k), or
//!   the run still stops after its last newline (`\s*[\r\n]+|\s+(?!\S)|\s+`: Llama 3, Qwen, OLMo 2, and
//!   tiktoken's cl100k before it added `\s++$`);
//! * `MARKS`: whether marks (`\p{M}`) are letters rather than punctuation (`[\p{L}\p{M}]+` and
//!   `[^\s\p{L}\p{M}\p{N}]+`: Qwen 3.5).

use crate::pretok::{
    contraction_ci, Chars, LETTERS, LETTERS_AND_MARKS, NUMBER, NUMBERS, OTHERS, OTHERS_BUT_MARKS, SPACES,
};

/// Calls `emit` with each pre-token of `text` in order. Returns the first code point that the class
/// table does not cover, or None when done.
pub fn cl100k_pretokens<'a>(text: &'a str, classes: &[u8], emit: &mut dyn FnMut(&'a str)) -> Option<u32> {
    family_pretokens::<3, true, false>(text, classes, emit)
}

/// `cl100k_pretokens` with the family's parameters (see the module's documentation).
pub fn family_pretokens<'a, const DIGITS: usize, const END_WHOLE: bool, const MARKS: bool>(
    text: &'a str,
    classes: &[u8],
    emit: &mut dyn FnMut(&'a str),
) -> Option<u32> {
    match Chars::new(text, classes) {
        Ok(text) => {
            family_scan::<DIGITS, END_WHOLE, MARKS>(&text, emit);
            None
        }
        Err(code_point) => Some(code_point),
    }
}

/// `cl100k_pretokens` on a classified text.
pub fn cl100k_scan<'a>(text: &Chars<'a>, emit: &mut dyn FnMut(&'a str)) {
    family_scan::<3, true, false>(text, emit)
}

/// `family_pretokens` on a classified text.
pub fn family_scan<'a, const DIGITS: usize, const END_WHOLE: bool, const MARKS: bool>(
    text: &Chars<'a>,
    emit: &mut dyn FnMut(&'a str),
) {
    let mut i = 0;
    while i < text.len() {
        let end = next_end::<DIGITS, END_WHOLE, MARKS>(text, i);
        emit(text.piece(i, end));
        i = end;
    }
}

/// Where the pre-token that starts at `i` ends: the alternatives of the pattern in order.
fn next_end<const DIGITS: usize, const END_WHOLE: bool, const MARKS: bool>(
    text: &Chars<'_>,
    i: usize,
) -> usize {
    let (chars, n) = (&text.chars, text.len());
    let (c, class) = (chars[i], text.class(i));
    // With MARKS, a mark is a letter (it is in `[\p{L}\p{M}]+`), and punctuation is only what is not one.
    let (letters, others) = if MARKS { (LETTERS_AND_MARKS, OTHERS_BUT_MARKS) } else { (LETTERS, OTHERS) };
    let (is_word, is_punctuation) = (|class: u8| letters.has(class), |class: u8| others.has(class));
    // '(?i:[sdmt]|ll|ve|re)
    let len = contraction_ci(chars, i);
    if len > 0 {
        return i + len;
    }
    // [^\r\n\p{L}\p{N}]?+\p{L}++: a letter run, with one character before it that is not a newline,
    // a letter or a number (" word", "'x", "\tword"). (A mark may be that character without MARKS; with
    // it, a mark starts the run itself, which ends at the same place.)
    if is_word(class) {
        return text.run(i, letters);
    }
    if class != NUMBER && c != '\r' && c != '\n' && i + 1 < n && is_word(text.class(i + 1)) {
        return text.run(i + 1, letters);
    }
    // \p{N}{1,3}+: numbers in groups of three from the left (the run's end is remembered: one scan of a
    // long number, not one per group); or \p{N}, one by one.
    if class == NUMBER {
        return text.run(i, NUMBERS).min(i + DIGITS);
    }
    // ` ?[^\s\p{L}\p{N}]++[\r\n]*+`: punctuation (and marks), with its space before and newlines after.
    let start = if c == ' ' && i + 1 < n && is_punctuation(text.class(i + 1)) { i + 1 } else { i };
    if is_punctuation(text.class(start)) {
        return text.run_of_chars(text.run(start, others), &['\r', '\n']);
    }
    // Whitespace from here on. \s++$: a run that ends the text is one pre-token.
    let end = text.run(i, SPACES);
    if END_WHOLE && end == n {
        return end;
    }
    // \s*[\r\n]: up to the run's last newline.
    if let Some(last) = text.rfind(i, end, |c, _| matches!(c, '\r' | '\n')) {
        return last + 1;
    }
    // \s+(?!\S)|\s: all but the last, which goes with what follows (" word"), unless it is alone or
    // (without \s++$) the run ends the text.
    if end < n && end - i >= 2 {
        end - 1
    } else {
        end
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::pieces;

    #[test]
    fn contractions_ignore_case_and_take_the_long_s() {
        assert_eq!(
            pieces("cl100k", "I'm they're we've he'll she'd it's don't 'S 'LL 'Re"),
            [
                "I", "'m", " they", "'re", " we", "'ve", " he", "'ll", " she", "'d", " it", "'s", " don",
                "'t", " '", "S", " '", "LL", " '", "Re"
            ]
        );
        assert_eq!(pieces("cl100k", "DON'T I'M"), ["DON", "'T", " I", "'M"]);
        assert_eq!(pieces("cl100k", "'ſ 'ſt"), ["'ſ", " '", "ſt"]);
    }

    #[test]
    fn numbers_go_in_groups_of_three_from_the_left_without_their_space() {
        assert_eq!(pieces("cl100k", "1234567 12 x1234"), ["123", "456", "7", " ", "12", " x", "123", "4"]);
        assert_eq!(pieces("cl100k", "١٢٣٤ ½"), ["١٢٣", "٤", " ", "½"]);
    }

    #[test]
    fn whitespace_before_a_letter_and_newline_runs() {
        // A run gives its last space to the word; newlines end a run of their own; a run at the end is whole.
        assert_eq!(pieces("cl100k", "a   b\n\n  c  "), ["a", "  ", " b", "\n\n", " ", " c", "  "]);
        assert_eq!(pieces("cl100k", "x \n\n  "), ["x", " \n\n  "]);
        // Any one character but a newline, a letter or a number may open a word: a tab, a quote, a no-break space.
        assert_eq!(
            pieces("cl100k", "\tword 'x ,y  !? \r\n\r\nz"),
            ["\tword", " '", "x", " ,", "y", " ", " !?", " \r\n\r\n", "z"]
        );
        assert_eq!(pieces("cl100k", "a\u{a0}b \u{3000}c"), ["a", "\u{a0}b", " ", "\u{3000}c"]);
    }

    #[test]
    fn punctuation_takes_the_newlines_after_it_and_letters_any_script() {
        assert_eq!(pieces("cl100k", "x!!\n\ny a/b//\n"), ["x", "!!\n\n", "y", " a", "/b", "//\n"]);
        assert_eq!(
            pieces("cl100k", "naïve café 日本語 ǅx Áb\u{301}c"),
            ["naïve", " café", " 日本語", " ǅx", " Áb", "\u{301}c"]
        );
        assert_eq!(pieces("cl100k", "HelloWorld ABCdef"), ["HelloWorld", " ABCdef"]);
    }

    #[test]
    fn llama3_is_cl100k_but_for_a_whitespace_run_that_ends_the_text() {
        // Without \s++$ the run still stops after its last newline; elsewhere the two agree.
        assert_eq!(pieces("llama3", "x \n\n  "), ["x", " \n\n", "  "]);
        assert_eq!(pieces("llama3", "x  "), ["x", "  "]);
        for text in ["a   b\n\n  c  ", "\tword 'x ,y  !? \r\n\r\nz", "DON'T 1234567 x!!\n\ny a/b//\n"] {
            assert_eq!(pieces("llama3", text), pieces("cl100k", text), "{text:?}");
        }
    }

    #[test]
    fn qwen2_takes_numbers_one_by_one() {
        assert_eq!(pieces("qwen2", "1234 x12 ١٢"), ["1", "2", "3", "4", " x", "1", "2", " ", "١", "٢"]);
        assert_eq!(pieces("qwen2", "x \n\n  "), ["x", " \n\n", "  "]);
    }

    #[test]
    fn qwen35_counts_marks_as_letters_not_punctuation() {
        assert_eq!(
            pieces("qwen35", "e\u{301} \u{301}a . Áb\u{301}c"),
            ["e\u{301}", " \u{301}a", " .", " Áb\u{301}c"]
        );
        // A mark after punctuation is a word with that punctuation before it, as a letter would be, and a
        // punctuation run stops before a mark.
        assert_eq!(pieces("qwen35", "!\u{301}\u{301} !!\u{301}"), ["!\u{301}\u{301}", " !!", "\u{301}"]);
        assert_eq!(pieces("qwen35", "12 it's"), ["1", "2", " it", "'s"]);
        // cl100k counts the marks as punctuation.
        assert_eq!(pieces("cl100k", "!\u{301}\u{301} !!\u{301}"), ["!\u{301}\u{301}", " !!\u{301}"]);
    }
}
