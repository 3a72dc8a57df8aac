//! Helpers shared by the unit tests: a class table and a scanner's pre-tokens as a list.

use std::sync::OnceLock;

use crate::pretok::{self, CASELESS, LOWER, MARK, NUMBER, OTHER, SPACE, UPPER};

/// Each code point's class below U+10000, from Rust's own Unicode properties. It equals the table that
/// bpe_studio/engine/native.py builds with the `regex` module on the characters the tests use (Python
/// checks the scanners against the patterns on every code point: tests/engine/pretokenize/test_native_pretokenize.py).
pub fn classes() -> &'static [u8] {
    static TABLE: OnceLock<Vec<u8>> = OnceLock::new();
    TABLE.get_or_init(|| (0..0x10000u32).map(class_of).collect())
}

fn class_of(code_point: u32) -> u8 {
    let Some(c) = char::from_u32(code_point) else { return OTHER };
    match code_point {
        0x300..=0x36f => MARK,                  // combining diacritical marks, \p{M}
        0x1c5 | 0x1c8 | 0x1cb | 0x1f2 => UPPER, // the title case letters of Latin, \p{Lt}
        _ if c.is_whitespace() => SPACE,
        _ if c.is_numeric() => NUMBER,
        _ if c.is_uppercase() => UPPER,
        _ if c.is_lowercase() => LOWER,
        _ if c.is_alphabetic() => CASELESS,
        _ => OTHER,
    }
}

/// The pre-tokens of `text` under a preset's scanner, checked to cut the whole text with none empty.
pub fn pieces<'a>(preset: &str, text: &'a str) -> Vec<&'a str> {
    let scan = pretok::scanner(preset).expect("a preset");
    let mut out = Vec::new();
    assert_eq!(scan(text, classes(), &mut |piece| out.push(piece)), None, "the table covers {text:?}");
    assert!(out.iter().all(|piece| !piece.is_empty()), "an empty pre-token in {out:?}");
    assert_eq!(out.concat(), text, "the pre-tokens are not the text in order");
    out
}
