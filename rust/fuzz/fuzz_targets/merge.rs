//! The merge kernel (src/merge.rs) on any word table, consistent or not: `Kernel::new` refuses it with an
//! error or the merge loop runs to its end, and never panics.
#![no_main]

use kernel::merge;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut it = data.iter().copied();
    let mut next = || it.next().unwrap_or(0);
    let vocab = 2 + next() as usize % 10;
    let mut tokens: Vec<Vec<u8>> = (0..vocab).map(|i| vec![b'a' + (i % 4) as u8]).collect();
    for _ in 0..next() % 4 {
        let (a, b) = (next() % 4, next() % 4);
        tokens.push(vec![b'a' + a, b'a' + b]); // bytes a merge may make: a reused id
    }
    let words = next() as usize % 12;
    let mut symbols = Vec::new();
    let mut lengths = Vec::new();
    let mut freqs = Vec::new();
    for _ in 0..words {
        let len = next() as u64 % 9;
        for _ in 0..len {
            symbols.push(next() as u32 % (tokens.len() as u32 + 1)); // sometimes one past the vocabulary
        }
        let tweak = next();
        lengths.push(match tweak {
            0 => u64::MAX - len,
            1 => len + 1,
            _ => len,
        });
        freqs.push(match tweak {
            2 => i64::MIN,
            3 => -1,
            4 => i64::MAX,
            t => 1 + t as i64 % 5,
        });
    }
    let max_len = match next() % 4 {
        0 => None,
        n => Some(n as usize),
    };
    let Ok(mut kernel) = merge::Kernel::new(symbols, &lengths, &freqs, tokens, max_len) else { return };
    for _ in 0..64 {
        if kernel.best().is_none() {
            break;
        }
        kernel.merge_top().expect("best() named a pair");
    }
});
