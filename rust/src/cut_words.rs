//! Words cut where a pair is too rare to be merged, equal pieces added up (`cut_rare_pairs`): how a
//! superword run's stage 2 gives its merge loop a few million positions instead of twenty million.
//!
//! Why it is exact (bpe_studio/engine/training/trainer.py checks the conditions as the loop runs and goes
//! back to the whole words when one fails): a pair of tokens `(u, v)` made by merges, each token made
//! once (no merge remade an existing token), always meets at the boundary between the same two original
//! ids `x` (u's last) and `y` (v's first); so its count never exceeds the count of `(x, y)` in the words.
//! When every boundary of a pair `(x, y)` counted fewer than `below` times is cut, a pair that spans a cut
//! counts fewer than `below`, while every merge the loop makes counts at least `below`: the loop over the
//! pieces makes exactly the merges (and counts) of the loop over the whole words. A piece of one id holds
//! no pair and is left out.

use rustc_hash::FxHashMap;

/// Words as flat ids: the ids one word after the other, each word's number of ids, each word's count.
pub struct Words {
    pub ids: Vec<u32>,
    pub lengths: Vec<u32>,
    pub freqs: Vec<i64>,
}

#[inline]
fn key(a: u32, b: u32) -> u64 {
    ((a as u64) << 32) | b as u64
}

/// The words cut between any two adjacent ids whose pair counts fewer than `below` in all the words
/// (each occurrence weighted by its word's count), the equal pieces added up (in order of first
/// appearance), the pieces of one id left out. Err when the lengths do not add up to the ids or the
/// counts are not one per word. Time and memory linear in the ids.
pub fn cut_rare_pairs(ids: &[u32], lengths: &[u32], freqs: &[i64], below: i64) -> Result<Words, String> {
    if lengths.len() != freqs.len() {
        return Err("lengths and freqs differ in length".into());
    }
    if lengths.iter().map(|&n| n as u64).sum::<u64>() != ids.len() as u64 {
        return Err("the lengths do not add up to the number of ids".into());
    }
    // Each pair once in a table (its slot) and each position's slot in order, so that the second pass
    // reads the counts without hashing again (the words are twenty million ids on 100 MB).
    let mut slot_of_pair: FxHashMap<u64, u32> = FxHashMap::default();
    let mut counts: Vec<i64> = Vec::new();
    let mut slots: Vec<u32> = Vec::with_capacity(ids.len());
    let mut at = 0usize;
    for (&len, &f) in lengths.iter().zip(freqs) {
        let word = &ids[at..at + len as usize];
        for w in word.windows(2) {
            let next = counts.len() as u32;
            let slot = *slot_of_pair.entry(key(w[0], w[1])).or_insert(next);
            if slot == next {
                counts.push(0);
            }
            counts[slot as usize] = counts[slot as usize].saturating_add(f);
            slots.push(slot);
        }
        at += len as usize;
    }
    drop(slot_of_pair);
    let mut out = Words { ids: Vec::new(), lengths: Vec::new(), freqs: Vec::new() };
    let mut slot: FxHashMap<&[u32], usize> = FxHashMap::default();
    let mut at = 0usize;
    let mut pairs = slots.iter();
    for (&len, &f) in lengths.iter().zip(freqs) {
        let end = at + len as usize;
        let mut start = at;
        for p in at + 1..end {
            let pair = *pairs.next().expect("one slot per pair");
            if counts[pair as usize] < below {
                emit(&ids[start..p], f, &mut out, &mut slot);
                start = p;
            }
        }
        emit(&ids[start..end], f, &mut out, &mut slot);
        at = end;
    }
    Ok(out)
}

/// Adds one piece to `out` (its count to an equal piece's, if any); a piece of one id holds no pair.
fn emit<'a>(piece: &'a [u32], f: i64, out: &mut Words, slot: &mut FxHashMap<&'a [u32], usize>) {
    if piece.len() < 2 {
        return;
    }
    match slot.get(piece) {
        Some(&i) => out.freqs[i] = out.freqs[i].saturating_add(f),
        None => {
            slot.insert(piece, out.freqs.len());
            out.ids.extend_from_slice(piece);
            out.lengths.push(piece.len() as u32);
            out.freqs.push(f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_cut_at_rare_pairs_and_equal_pieces_add_up() {
        // Pairs: (1,2) x5, (2,3) x1, (3,1) x1, (2,9) x2, (7,8) x1.
        let ids = [1, 2, 3, 1, 2, /* */ 1, 2, /* */ 1, 2, 9, /* */ 7, 8];
        let lengths = [5, 2, 3, 2];
        let freqs = [1, 2, 2, 1];
        let cut = cut_rare_pairs(&ids, &lengths, &freqs, 2).expect("valid");
        // Word 1 -> [1,2] [3] [1,2]; word 2 -> [1,2]; word 3 -> [1,2,9]; word 4 -> [7] [8].
        assert_eq!(cut.ids, [1, 2, 1, 2, 9]);
        assert_eq!(cut.lengths, [2, 3]);
        assert_eq!(cut.freqs, [1 + 1 + 2, 2]);
        let whole = cut_rare_pairs(&ids, &lengths, &freqs, 1).expect("valid");
        // Nothing is cut below 1, and every word is new.
        assert_eq!(whole.ids, ids);
        assert_eq!(whole.lengths, lengths);
        assert_eq!(whole.freqs, freqs);
    }

    #[test]
    fn lengths_that_do_not_add_up_are_refused() {
        assert!(cut_rare_pairs(&[1, 2], &[3], &[1], 1).is_err());
        assert!(cut_rare_pairs(&[1, 2], &[2], &[1, 1], 1).is_err());
        assert!(cut_rare_pairs(&[], &[], &[], 5).expect("valid").ids.is_empty());
    }
}
