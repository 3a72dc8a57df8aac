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

use crate::pretok::{contraction_ci, is_letter, is_other, Chars, CASELESS, LOWER, MARK, NUMBER, SPACE, UPPER};

fn in_u(class: u8) -> bool {
    matches!(class, UPPER | CASELESS | MARK)
}

fn in_w(class: u8) -> bool {
    matches!(class, LOWER | CASELESS | MARK)
}

/// Calls `emit` with each pre-token of `text` in order. Returns the first code point that the class
/// table does not cover, or None when done.
pub fn o200k_pretokens<'a>(text: &'a str, classes: &[u8], emit: &mut dyn FnMut(&'a str)) -> Option<u32> {
    let text = match Chars::new(text, classes) {
        Ok(text) => text,
        Err(code_point) => return Some(code_point),
    };
    let n = text.len();
    let mut i = 0;
    while i < n {
        let end = next_end(&text, i);
        emit(text.piece(i, end));
        i = end;
    }
    None
}

/// Where `U*W+` starting at `s` ends, if it matches there. U* first takes the whole U run; when no W
/// follows it gives back until the character after it is in W, which is then the run's last character
/// in both classes (the one after that is UPPER or not a letter, so W+ stops right there).
fn word_a(text: &Chars<'_>, s: usize) -> Option<usize> {
    let end_u = text.run(s, in_u);
    if text.cls.get(end_u) == Some(&LOWER) {
        return Some(text.run(end_u, in_w));
    }
    (s..end_u).rev().find(|&k| in_w(text.cls[k])).map(|k| k + 1)
}

/// Where `U+W*` starting at `s` ends, if it matches there.
fn word_b(text: &Chars<'_>, s: usize) -> Option<usize> {
    let end_u = text.run(s, in_u);
    (end_u > s).then(|| text.run(end_u, in_w))
}

/// Where the pre-token that starts at `i` ends: the alternatives of the pattern in order.
fn next_end(text: &Chars<'_>, i: usize) -> usize {
    let (chars, cls, n) = (&text.chars, &text.cls, text.len());
    let (c, class) = (chars[i], cls[i]);
    // A and B: a word with an optional character before it that is not a newline, a letter or a number
    // (a mark may be that character or part of the word), and an optional contraction after it.
    let prefix = !is_letter(class) && class != NUMBER && c != '\r' && c != '\n';
    let word = (if prefix { word_a(text, i + 1) } else { None })
        .or_else(|| word_a(text, i))
        .or_else(|| if prefix { word_b(text, i + 1) } else { None })
        .or_else(|| word_b(text, i));
    if let Some(end) = word {
        return end + contraction_ci(chars, end);
    }
    // C: numbers in groups of three from the left.
    if class == NUMBER {
        return text.run(i, |k| k == NUMBER).min(i + 3);
    }
    // D: punctuation (and marks), with its space before and newlines and slashes after.
    let start = if c == ' ' && i + 1 < n && is_other(cls[i + 1]) { i + 1 } else { i };
    if is_other(cls[start]) {
        let mut end = text.run(start, is_other);
        while end < n && matches!(chars[end], '\r' | '\n' | '/') {
            end += 1;
        }
        return end;
    }
    // Whitespace from here on. E: up to the run's last newline.
    let end = text.run(i, |k| k == SPACE);
    if let Some(last) = (i..end).rev().find(|&k| matches!(chars[k], '\r' | '\n')) {
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
