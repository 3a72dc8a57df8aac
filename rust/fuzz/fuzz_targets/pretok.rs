//! The preset scanners (src/pretok*.rs) on any text and any class table: no panic, no hang, and when
//! the table covers the text the pre-tokens are the whole text cut in order, none empty.
#![no_main]

use kernel::pretok;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&head, rest)) = data.split_first() else { return };
    let preset = ["gpt2", "cl100k", "o200k"][head as usize % 3];
    let scan = pretok::scanner(preset).expect("a preset");
    // Bit 7: a hostile table (any byte values, any length) taken from the input; else a table made from
    // the input's first bytes, covering the first 256 code points with classes 0-6.
    let (table, text): (Vec<u8>, &[u8]) = if head & 0x80 != 0 {
        let n = (rest.first().copied().unwrap_or(0) as usize * 2).min(rest.len());
        (rest[..n].to_vec(), &rest[n..])
    } else {
        let mut table: Vec<u8> = (0..256u32).map(|c| (c * 7 / 256) as u8).collect();
        for (i, &b) in rest.iter().take(16).enumerate() {
            table[(b as usize + i * 37) % 256] = b % 7;
        }
        (table, rest)
    };
    let text = String::from_utf8_lossy(text);
    let mut pieces: Vec<&str> = Vec::new();
    let missing = scan(&text, &table, &mut |p| pieces.push(p));
    if missing.is_none() {
        assert!(pieces.iter().all(|p| !p.is_empty()), "an empty pre-token");
        assert_eq!(pieces.concat(), text, "the pre-tokens are not the text in order");
    }
    if let Some(cp) = missing {
        assert!(cp as usize >= table.len(), "asked for code point {cp}, which the table covers");
    }
    let _ = pretok::count(&[&text], &table, scan);
});
