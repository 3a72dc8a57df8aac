//! GPT-2's byte-level alphabet read back into bytes (bpe_studio/engine/bytes_unicode.py), for a
//! `tokenizer.json`'s vocab keys and merges (bpe_studio/engine/formats/hf.py, `_joined_bytes`, which stays
//! the reference): each character stands for one byte, printable bytes for themselves and the other 68, in
//! increasing order, for `chr(256 + n)`. A character outside the alphabet gives None (the Python side then
//! reads the file one entry at a time to name it).

/// Each code point 0..324's byte, or -1 for a code point outside the alphabet.
const TABLE: [i16; 324] = table();

const fn printable(b: usize) -> bool {
    matches!(b, 0x21..=0x7E | 0xA1..=0xAC | 0xAE..=0xFF) // '!'..='~', '¡'..='¬', '®'..='ÿ'
}

const fn table() -> [i16; 324] {
    let mut found = [-1i16; 324];
    let mut n = 0;
    let mut b = 0;
    while b < 256 {
        if printable(b) {
            found[b] = b as i16;
        } else {
            found[256 + n] = b as i16;
            n += 1;
        }
        b += 1;
    }
    found
}

/// The byte a code point stands for, or None outside the alphabet.
pub fn byte_of(code_point: u32) -> Option<u8> {
    match TABLE.get(code_point as usize) {
        Some(&b) if b >= 0 => Some(b as u8),
        _ => None,
    }
}

/// Appends the bytes of `code_points` to `out`; false (and `out` in any state) at one outside the alphabet.
pub fn decode_into(code_points: impl IntoIterator<Item = u32>, out: &mut Vec<u8>) -> bool {
    for c in code_points {
        match byte_of(c) {
            Some(b) => out.push(b),
            None => return false,
        }
    }
    true
}

/// Decodes a merge `left right` into `out` (the space stands for no byte: it is in the alphabet's gap): the length of `left`'s bytes, or None without exactly one space or at
/// a character outside the alphabet.
pub fn decode_pair(code_points: impl IntoIterator<Item = u32>, out: &mut Vec<u8>) -> Option<usize> {
    let mut cut = None;
    for c in code_points {
        if c == u32::from(b' ') {
            if cut.is_some() {
                return None;
            }
            cut = Some(out.len());
        } else {
            out.push(byte_of(c)?);
        }
    }
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_alphabet_is_gpt2s() {
        assert_eq!(byte_of('!' as u32), Some(b'!'));
        assert_eq!(byte_of('Ġ' as u32), Some(b' '));
        assert_eq!(byte_of('Ċ' as u32), Some(b'\n'));
        assert_eq!(byte_of('Ā' as u32), Some(0));
        assert_eq!(byte_of(0xAD), None); // the soft hyphen is not printable: U+0143 stands for it
        assert_eq!(byte_of('Ń' as u32), Some(0xAD));
        assert_eq!(byte_of(' ' as u32), None);
        assert_eq!(byte_of(324), None);
        // Every byte has exactly one character.
        let mut seen = [0; 256];
        for c in 0..400 {
            if let Some(b) = byte_of(c) {
                seen[b as usize] += 1;
            }
        }
        assert!(seen.iter().all(|&n| n == 1));
    }

    #[test]
    fn decodes_or_refuses() {
        let mut out = Vec::new();
        assert!(decode_into("ĠhiĊ".chars().map(u32::from), &mut out));
        assert_eq!(out, b" hi\n");
        assert!(!decode_into("a b".chars().map(u32::from), &mut Vec::new()));
        let mut pair = Vec::new();
        assert_eq!(decode_pair("Ġt he".chars().map(u32::from), &mut pair), Some(2));
        assert_eq!(pair, b" the");
        for bad in ["the", "a b c", "x\u{2028} y"] {
            assert_eq!(decode_pair(bad.chars().map(u32::from), &mut Vec::new()), None, "{bad:?}");
        }
    }
}
