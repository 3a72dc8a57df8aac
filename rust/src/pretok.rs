//! GPT-2's pre-tokenizer written out by hand, equal to the `regex` pattern of the `gpt2` preset
//! (bpe_studio/engine/config.py) on every input:
//!
//! `'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
//!
//! The character classes (letter, number, whitespace, other) come from a table that Python builds with
//! the `regex` module itself, so both sides agree on every code point whatever Unicode version each has.

use rustc_hash::FxHashMap;

/// Classes in the table: 0 other, 1 letter (`\p{L}`), 2 number (`\p{N}`), 3 whitespace (`\s`).
pub const SPACE: u8 = 3;

/// Calls `emit` with each pre-token of `text` in order. Returns the first code point that the class
/// table does not cover (the caller extends the table and asks again), or None when done.
pub fn gpt2_pretokens<'a>(text: &'a str, classes: &[u8], mut emit: impl FnMut(&'a str)) -> Option<u32> {
    let mut offsets: Vec<usize> = Vec::with_capacity(text.len() + 1);
    let mut chars: Vec<char> = Vec::with_capacity(text.len());
    let mut cls: Vec<u8> = Vec::with_capacity(text.len());
    for (offset, c) in text.char_indices() {
        let Some(&class) = classes.get(c as usize) else {
            return Some(c as u32);
        };
        offsets.push(offset);
        chars.push(c);
        cls.push(class);
    }
    offsets.push(text.len());
    let n = chars.len();
    let piece = |a: usize, b: usize| &text[offsets[a]..offsets[b]];
    let mut i = 0;
    while i < n {
        let c = chars[i];
        // '(?:[sdmt]|ll|ve|re): the first alternative wins, so "'sa" is "'s" then "a".
        if c == '\'' && i + 1 < n {
            let next = chars[i + 1];
            let after = if i + 2 < n { chars[i + 2] } else { '\0' };
            let len = match (next, after) {
                ('s' | 'd' | 'm' | 't', _) => 2,
                ('l', 'l') | ('v', 'e') | ('r', 'e') => 3,
                _ => 0,
            };
            if len > 0 {
                emit(piece(i, i + len));
                i += len;
                continue;
            }
        }
        // ` ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+`: an optional space, then a run of one class.
        let start = if c == ' ' && i + 1 < n && cls[i + 1] != SPACE { i + 1 } else { i };
        let class = cls[start];
        if class != SPACE {
            let mut end = start + 1;
            while end < n && cls[end] == class {
                end += 1;
            }
            emit(piece(i, end));
            i = end;
            continue;
        }
        // `\s+(?!\S)|\s+`: a whitespace run, but for its last character when a non-space follows (that
        // one starts the next pre-token, " word" say), unless the run is that one character.
        let mut end = i + 1;
        while end < n && cls[end] == SPACE {
            end += 1;
        }
        if end < n && end - i >= 2 {
            end -= 1;
        }
        emit(piece(i, end));
        i = end;
    }
    None
}

/// Counts the pre-tokens of every text: (pre-token -> count, number of pre-tokens), or the first code
/// point the class table does not cover.
pub fn count_gpt2<'a>(
    texts: &[&'a str],
    classes: &[u8],
) -> Result<(FxHashMap<&'a str, u64>, u64), u32> {
    let mut counts: FxHashMap<&'a str, u64> = FxHashMap::default();
    let mut total = 0u64;
    for text in texts {
        let missing = gpt2_pretokens(text, classes, |token| {
            *counts.entry(token).or_insert(0) += 1;
            total += 1;
        });
        if let Some(cp) = missing {
            return Err(cp);
        }
    }
    Ok((counts, total))
}
