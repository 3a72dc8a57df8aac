//! GPT-2's pre-tokenizer written out by hand, equal to the `regex` pattern of the `gpt2` preset
//! (bpe_studio/engine/config.py) on every input:
//!
//! `'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
//!
//! The character classes come from a table that Python builds with the `regex` module itself, so both
//! sides agree on every code point whatever Unicode version each has. The same table serves the cl100k
//! and o200k scanners (pretok_cl100k.rs, pretok_o200k.rs), which need letters split by case.

use rustc_hash::FxHashMap;

/// Classes in the table (bpe_studio/engine/native.py builds it): anything else.
pub const OTHER: u8 = 0;
/// `\p{Lu}` and `\p{Lt}`: letters only o200k's upper-case class takes.
pub const UPPER: u8 = 1;
/// `\p{Ll}`: letters only o200k's lower-case class takes.
pub const LOWER: u8 = 2;
/// `\p{Lm}` and `\p{Lo}`: letters both of o200k's classes take (no case: CJK, say).
pub const CASELESS: u8 = 3;
/// `\p{M}`: marks; not letters for `\p{L}`, but in both of o200k's letter classes.
pub const MARK: u8 = 4;
/// `\p{N}`.
pub const NUMBER: u8 = 5;
/// `\s`.
pub const SPACE: u8 = 6;

/// True for `\p{L}`.
pub fn is_letter(class: u8) -> bool {
    matches!(class, UPPER | LOWER | CASELESS)
}

/// True for `[^\s\p{L}\p{N}]` (a mark is one).
pub fn is_other(class: u8) -> bool {
    matches!(class, OTHER | MARK)
}

/// A text as code points with their classes and byte offsets, so that scanners look ahead freely.
pub struct Chars<'a> {
    text: &'a str,
    offsets: Vec<usize>,
    pub chars: Vec<char>,
    pub cls: Vec<u8>,
}

impl<'a> Chars<'a> {
    /// Classifies `text`; Err with the first code point the table does not cover.
    pub fn new(text: &'a str, classes: &[u8]) -> Result<Self, u32> {
        let mut offsets: Vec<usize> = Vec::with_capacity(text.len() + 1);
        let mut chars: Vec<char> = Vec::with_capacity(text.len());
        let mut cls: Vec<u8> = Vec::with_capacity(text.len());
        for (offset, c) in text.char_indices() {
            let Some(&class) = classes.get(c as usize) else {
                return Err(c as u32);
            };
            offsets.push(offset);
            chars.push(c);
            // A class no scanner knows counts as OTHER: each scanner then advances on every character
            // whatever table it is given (with an unknown class, cl100k's looped on an empty pre-token).
            cls.push(if class > SPACE { OTHER } else { class });
        }
        offsets.push(text.len());
        Ok(Chars { text, offsets, chars, cls })
    }

    /// Number of code points.
    pub fn len(&self) -> usize {
        self.chars.len()
    }

    /// The text of code points `a..b`.
    pub fn piece(&self, a: usize, b: usize) -> &'a str {
        &self.text[self.offsets[a]..self.offsets[b]]
    }

    /// The end of the run of code points from `start` whose class passes `test`.
    pub fn run(&self, start: usize, test: impl Fn(u8) -> bool) -> usize {
        let mut end = start;
        while end < self.cls.len() && test(self.cls[end]) {
            end += 1;
        }
        end
    }
}

/// Length of `'(?i:[sdmt]|ll|ve|re)` at `i` (0 when none): the contractions of cl100k and o200k, in any
/// case. `regex` folds case simply, so `s` also matches the long s `ſ` (tests check every code point).
pub fn contraction_ci(chars: &[char], i: usize) -> usize {
    if chars.get(i) != Some(&'\'') {
        return 0;
    }
    let at = |k: usize| chars.get(i + k).map_or('\0', |c| c.to_ascii_lowercase());
    match (at(1), at(2)) {
        ('s' | 'ſ' | 'd' | 'm' | 't', _) => 2,
        ('l', 'l') | ('v', 'e') | ('r', 'e') => 3,
        _ => 0,
    }
}

/// Calls `emit` with each pre-token of `text` in order. Returns the first code point that the class
/// table does not cover (the caller extends the table and asks again), or None when done.
pub fn gpt2_pretokens<'a>(text: &'a str, classes: &[u8], mut emit: impl FnMut(&'a str)) -> Option<u32> {
    let mut text = match Chars::new(text, classes) {
        Ok(text) => text,
        Err(code_point) => return Some(code_point),
    };
    // gpt2 knows letters, numbers, whitespace and the rest: one class for all letters, marks are other.
    for class in text.cls.iter_mut() {
        *class = if is_letter(*class) { LOWER } else if *class == MARK { OTHER } else { *class };
    }
    let (chars, cls, n) = (&text.chars, &text.cls, text.len());
    let piece = |a: usize, b: usize| text.piece(a, b);
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

/// A scanner: calls `emit` with each pre-token of a text in order; returns the first code point that
/// the class table does not cover (the caller extends the table and asks again), or None when done.
pub type Scanner = for<'a> fn(&'a str, &[u8], &mut dyn FnMut(&'a str)) -> Option<u32>;

/// The scanner of a preset by name (`gpt2`, `cl100k`, `o200k`), None for any other name.
pub fn scanner(preset: &str) -> Option<Scanner> {
    fn gpt2<'a>(text: &'a str, classes: &[u8], emit: &mut dyn FnMut(&'a str)) -> Option<u32> {
        gpt2_pretokens(text, classes, emit)
    }
    match preset {
        "gpt2" => Some(gpt2),
        "cl100k" => Some(crate::pretok_cl100k::cl100k_pretokens),
        "o200k" => Some(crate::pretok_o200k::o200k_pretokens),
        _ => None,
    }
}

/// Counts the pre-tokens of every text: (pre-token -> count, number of pre-tokens), or the first code
/// point the class table does not cover.
pub fn count<'a>(
    texts: &[&'a str],
    classes: &[u8],
    scan: Scanner,
) -> Result<(FxHashMap<&'a str, u64>, u64), u32> {
    let mut counts: FxHashMap<&'a str, u64> = FxHashMap::default();
    let mut total = 0u64;
    for text in texts {
        let missing = scan(text, classes, &mut |token| {
            *counts.entry(token).or_insert(0) += 1;
            total += 1;
        });
        if let Some(cp) = missing {
            return Err(cp);
        }
    }
    Ok((counts, total))
}
