//! cl100k's pre-tokenizer written out by hand, equal to the `regex` pattern of the `cl100k` preset
//! (bpe_studio/engine/config.py, tiktoken's) on every input:
//!
//! `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s`
//!
//! The possessive quantifiers change nothing here: no alternative could succeed by giving back what they
//! took. Classes come from the shared table (pretok.rs).

use crate::pretok::{contraction_ci, is_letter, is_other, Chars, NUMBER};

/// Calls `emit` with each pre-token of `text` in order. Returns the first code point that the class
/// table does not cover, or None when done.
pub fn cl100k_pretokens<'a>(text: &'a str, classes: &[u8], emit: &mut dyn FnMut(&'a str)) -> Option<u32> {
    let text = match Chars::new(text, classes) {
        Ok(text) => text,
        Err(code_point) => return Some(code_point),
    };
    let (chars, cls, n) = (&text.chars, &text.cls, text.len());
    let mut i = 0;
    while i < n {
        let end = next_end(chars, cls, &text, i);
        emit(text.piece(i, end));
        i = end;
    }
    None
}

/// Where the pre-token that starts at `i` ends: the alternatives of the pattern in order.
fn next_end(chars: &[char], cls: &[u8], text: &Chars<'_>, i: usize) -> usize {
    let n = chars.len();
    let (c, class) = (chars[i], cls[i]);
    // '(?i:[sdmt]|ll|ve|re)
    let len = contraction_ci(chars, i);
    if len > 0 {
        return i + len;
    }
    // [^\r\n\p{L}\p{N}]?+\p{L}++: a letter run, with one character before it that is not a newline,
    // a letter or a number (" word", "'x", "\tword").
    if is_letter(class) {
        return text.run(i, is_letter);
    }
    if class != NUMBER && c != '\r' && c != '\n' && i + 1 < n && is_letter(cls[i + 1]) {
        return text.run(i + 1, is_letter);
    }
    // \p{N}{1,3}+: numbers in groups of three from the left.
    if class == NUMBER {
        return text.run(i, |k| k == NUMBER).min(i + 3);
    }
    // ` ?[^\s\p{L}\p{N}]++[\r\n]*+`: punctuation (and marks), with its space before and newlines after.
    let start = if c == ' ' && i + 1 < n && is_other(cls[i + 1]) { i + 1 } else { i };
    if is_other(cls[start]) {
        let mut end = text.run(start, is_other);
        while end < n && matches!(chars[end], '\r' | '\n') {
            end += 1;
        }
        return end;
    }
    // Whitespace from here on. \s++$: a run that ends the text is one pre-token.
    let end = text.run(i, |k| k == crate::pretok::SPACE);
    if end == n {
        return end;
    }
    // \s*[\r\n]: up to the run's last newline.
    if let Some(last) = (i..end).rev().find(|&k| matches!(chars[k], '\r' | '\n')) {
        return last + 1;
    }
    // \s+(?!\S)|\s: all but the last, which goes with what follows (" word"), unless it is alone.
    if end - i >= 2 {
        end - 1
    } else {
        end
    }
}
