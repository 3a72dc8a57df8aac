//! Helpers shared by the unit tests: a class table, a scanner's pre-tokens as a list, and a small encoder.

use std::sync::OnceLock;

use crate::encode::Encoder;
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

/// An encoder whose byte ids are the bytes and whose merges are given as (left, right) texts in rank order,
/// each making the next id from 256; `whole` maps texts to ids for `ignore_merges`.
pub fn encoder(merges: &[(&str, &str)], whole: Option<&[(&str, u32)]>) -> Encoder {
    let mut decoder: Vec<Option<Vec<u8>>> = (0..=255u8).map(|b| Some(vec![b])).collect();
    let id = |decoder: &Vec<Option<Vec<u8>>>, text: &str| {
        decoder.iter().position(|t| t.as_deref() == Some(text.as_bytes())).expect("a token") as u32
    };
    let mut table = Vec::new();
    for &(a, b) in merges {
        let (x, y) = (id(&decoder, a), id(&decoder, b));
        table.push((x, y, decoder.len() as u32));
        decoder.push(Some([a, b].concat().into_bytes()));
    }
    let whole = whole.map(|w| w.iter().map(|&(t, i)| (t.as_bytes().to_vec(), i)).collect());
    Encoder::new(std::array::from_fn(|b| b as u32), &table, whole, &decoder, 1000)
}

/// A small random source for property tests (xorshift64, reproducible from `seed`): each call gives a
/// number below its argument.
pub fn xorshift(seed: u64) -> impl FnMut(u64) -> u64 {
    let mut state = seed;
    move |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    }
}
