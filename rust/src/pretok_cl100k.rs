//! cl100k's pre-tokenizer written out by hand, equal to the `regex` pattern of the `cl100k` preset
//! (bpe_studio/engine/config.py, tiktoken's) on every input:
//!
//! `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s`
//!
//! The possessive quantifiers change nothing here: no alternative could succeed by giving back what they
//! took. Classes come from the shared table (pretok.rs).

use crate::pretok::{contraction_ci, is_letter, is_other, Chars, LETTERS, NUMBER, NUMBERS, OTHERS, SPACES};

/// Calls `emit` with each pre-token of `text` in order. Returns the first code point that the class
/// table does not cover, or None when done.
pub fn cl100k_pretokens<'a>(text: &'a str, classes: &[u8], emit: &mut dyn FnMut(&'a str)) -> Option<u32> {
    match Chars::new(text, classes) {
        Ok(text) => {
            cl100k_scan(&text, emit);
            None
        }
        Err(code_point) => Some(code_point),
    }
}

/// `cl100k_pretokens` on a classified text.
pub fn cl100k_scan<'a>(text: &Chars<'a>, emit: &mut dyn FnMut(&'a str)) {
    let mut i = 0;
    while i < text.len() {
        let end = next_end(text, i);
        emit(text.piece(i, end));
        i = end;
    }
}

/// Where the pre-token that starts at `i` ends: the alternatives of the pattern in order.
fn next_end(text: &Chars<'_>, i: usize) -> usize {
    let (chars, n) = (&text.chars, text.len());
    let (c, class) = (chars[i], text.class(i));
    // '(?i:[sdmt]|ll|ve|re)
    let len = contraction_ci(chars, i);
    if len > 0 {
        return i + len;
    }
    // [^\r\n\p{L}\p{N}]?+\p{L}++: a letter run, with one character before it that is not a newline,
    // a letter or a number (" word", "'x", "\tword").
    if is_letter(class) {
        return text.run(i, LETTERS);
    }
    if class != NUMBER && c != '\r' && c != '\n' && i + 1 < n && is_letter(text.class(i + 1)) {
        return text.run(i + 1, LETTERS);
    }
    // \p{N}{1,3}+: numbers in groups of three from the left (the run's end is remembered: one scan of a
    // long number, not one per group).
    if class == NUMBER {
        return text.run(i, NUMBERS).min(i + 3);
    }
    // ` ?[^\s\p{L}\p{N}]++[\r\n]*+`: punctuation (and marks), with its space before and newlines after.
    let start = if c == ' ' && i + 1 < n && is_other(text.class(i + 1)) { i + 1 } else { i };
    if is_other(text.class(start)) {
        return text.run_of_chars(text.run(start, OTHERS), &['\r', '\n']);
    }
    // Whitespace from here on. \s++$: a run that ends the text is one pre-token.
    let end = text.run(i, SPACES);
    if end == n {
        return end;
    }
    // \s*[\r\n]: up to the run's last newline.
    if let Some(last) = text.rfind(i, end, |c, _| matches!(c, '\r' | '\n')) {
        return last + 1;
    }
    // \s+(?!\S)|\s: all but the last, which goes with what follows (" word"), unless it is alone.
    if end - i >= 2 {
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
}
