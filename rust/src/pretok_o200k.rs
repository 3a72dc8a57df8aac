//! o200k's pre-tokenizer written out by hand, equal to the `regex` pattern of the `o200k` preset
//! (bpe_studio/engine/config.py, tiktoken's) on every input. Its alternatives, in order:
//!
//! ```text
//! A  [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//! B  [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//! C  \p{N}{1,3}
//! D   ?[^\s\p{L}\p{N}]+[\r\n/]*
//! E  \s*[\r\n]+
//! F  \s+(?!\S)
//! G  \s+
//! ```
//!
//! Call U the first letter class of A and B (upper case and caseless) and W the second (lower case and
//! caseless): UPPER is only in U, LOWER only in W, CASELESS and MARK in both. Nothing is possessive here,
//! so the scanner follows the backtracking: A with its prefix, A without it, then B with and without.

use crate::pretok::{
    contraction_ci, is_letter, is_other, Chars, CASELESS, LOWER, MARK, NUMBER, NUMBERS, OTHERS, SPACES,
    U_LETTERS, W_LETTERS,
};

fn in_w(class: u8) -> bool {
    matches!(class, LOWER | CASELESS | MARK)
}

/// Calls `emit` with each pre-token of `text` in order. Returns the first code point that the class
/// table does not cover, or None when done.
pub fn o200k_pretokens<'a>(text: &'a str, classes: &[u8], emit: &mut dyn FnMut(&'a str)) -> Option<u32> {
    family_pretokens::<3, true>(text, classes, emit)
}

/// `o200k_pretokens` with the family's parameters (see the module's documentation).
pub fn family_pretokens<'a, const DIGITS: usize, const CONTRACTIONS: bool>(
    text: &'a str,
    classes: &[u8],
    emit: &mut dyn FnMut(&'a str),
) -> Option<u32> {
    match Chars::new(text, classes) {
        Ok(text) => {
            family_scan::<DIGITS, CONTRACTIONS>(&text, emit);
            None
        }
        Err(code_point) => Some(code_point),
    }
}

/// `o200k_pretokens` on a classified text.
pub fn o200k_scan<'a>(text: &Chars<'a>, emit: &mut dyn FnMut(&'a str)) {
    family_scan::<3, true>(text, emit)
}

/// `family_pretokens` on a classified text.
pub fn family_scan<'a, const DIGITS: usize, const CONTRACTIONS: bool>(
    text: &Chars<'a>,
    emit: &mut dyn FnMut(&'a str),
) {
    let mut i = 0;
    while i < text.len() {
        let end = next_end::<DIGITS, CONTRACTIONS>(text, i);
        emit(text.piece(i, end));
        i = end;
    }
}

/// Where `U*W+` starting at `s` ends, if it matches there. U* first takes the whole U run; when no W
/// follows it gives back until the character after it is in W, which is then the run's last character
/// in both classes (the one after that is UPPER or not a letter, so W+ stops right there).
fn word_a(text: &Chars<'_>, s: usize) -> Option<usize> {
    let end_u = text.run(s, U_LETTERS);
    if end_u < text.len() && text.class(end_u) == LOWER {
        return Some(text.run(end_u, W_LETTERS));
    }
    text.rfind(s, end_u, |_, class| in_w(class)).map(|k| k + 1)
}

/// Where `U+W*` starting at `s` ends, if it matches there.
fn word_b(text: &Chars<'_>, s: usize) -> Option<usize> {
    let end_u = text.run(s, U_LETTERS);
    (end_u > s).then(|| text.run(end_u, W_LETTERS))
}

/// Where the pre-token that starts at `i` ends: the alternatives of the pattern in order.
fn next_end<const DIGITS: usize, const CONTRACTIONS: bool>(text: &Chars<'_>, i: usize) -> usize {
    let (chars, n) = (&text.chars, text.len());
    let (c, class) = (chars[i], text.class(i));
    // A and B: a word with an optional character before it that is not a newline, a letter or a number
    // (a mark may be that character or part of the word), and an optional contraction after it.
    let prefix = !is_letter(class) && class != NUMBER && c != '\r' && c != '\n';
    let word = (if prefix { word_a(text, i + 1) } else { None })
        .or_else(|| word_a(text, i))
        .or_else(|| if prefix { word_b(text, i + 1) } else { None })
        .or_else(|| word_b(text, i));
    if let Some(end) = word {
        return if CONTRACTIONS { end + contraction_ci(chars, end) } else { end };
    }
    // C: numbers in groups of three from the left (the run's end is remembered: one scan of a long number,
    // not one per group); or one by one.
    if class == NUMBER {
        return text.run(i, NUMBERS).min(i + DIGITS);
    }
    // D: punctuation (and marks), with its space before and newlines and slashes after.
    let start = if c == ' ' && i + 1 < n && is_other(text.class(i + 1)) { i + 1 } else { i };
    if is_other(text.class(start)) {
        return text.run_of_chars(text.run(start, OTHERS), &['\r', '\n', '/']);
    }
    // Whitespace from here on. E: up to the run's last newline.
    let end = text.run(i, SPACES);
    if let Some(last) = text.rfind(i, end, |c, _| matches!(c, '\r' | '\n')) {
        return last + 1;
    }
    // F and G: all but the last, which goes with what follows (" word"), unless the run ends the text
    // or is one character.
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
    fn contractions_stay_with_their_word_in_any_case() {
        assert_eq!(
            pieces("o200k", "I'm they're we've he'll she'd it's don't 'S 'LL 'Re"),
            [
                "I'm", " they're", " we've", " he'll", " she'd", " it's", " don't", " '", "S", " '", "LL",
                " '", "Re"
            ]
        );
        assert_eq!(pieces("o200k", "DON'T I'M"), ["DON'T", " I'M"]);
        assert_eq!(pieces("o200k", "it's'sa"), ["it's", "'sa"]);
        assert_eq!(pieces("o200k", "'ſ 'ſt"), ["'ſ", " '", "ſt"]);
    }

    #[test]
    fn words_are_split_where_lower_case_turns_to_upper_case() {
        assert_eq!(
            pieces("o200k", "HelloWorld ABCdef aBC JSONParser"),
            ["Hello", "World", " ABCdef", " a", "BC", " JSONParser"]
        );
    }

    #[test]
    fn marks_belong_to_words_and_caseless_letters_to_both_classes() {
        assert_eq!(
            pieces("o200k", "naïve café 日本語 ǅx Áb\u{301}c"),
            ["naïve", " café", " 日本語", " ǅx", " Áb\u{301}c"]
        );
        assert_eq!(pieces("o200k", "e\u{301} \u{301}a ."), ["e\u{301}", " \u{301}a", " ."]);
    }

    #[test]
    fn numbers_punctuation_and_whitespace() {
        assert_eq!(pieces("o200k", "1234567 12 x1234"), ["123", "456", "7", " ", "12", " x", "123", "4"]);
        assert_eq!(pieces("o200k", "x!!\n\ny a/b//\n"), ["x", "!!\n\n", "y", " a", "/b", "//\n"]);
        assert_eq!(pieces("o200k", "a   b\n\n  c  "), ["a", "  ", " b", "\n\n", " ", " c", "  "]);
        // Unlike cl100k, a run that ends the text still stops after its last newline.
        assert_eq!(pieces("o200k", "x \n\n  "), ["x", " \n\n", "  "]);
        assert_eq!(pieces("o200k", "a\u{a0}b \u{3000}c"), ["a", "\u{a0}b", " ", "\u{3000}c"]);
    }

    #[test]
    fn nemo_has_no_contractions_and_takes_numbers_one_by_one() {
        assert_eq!(
            pieces("nemo", "it's 1234 DON'T HelloWorld"),
            ["it", "'s", " ", "1", "2", "3", "4", " DON", "'T", " Hello", "World"]
        );
        assert_eq!(pieces("nemo", "x \n\n  "), ["x", " \n\n", "  "]);
    }
}
