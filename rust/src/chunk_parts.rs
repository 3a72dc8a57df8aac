//! A superword run's stage-2 chunks split into their distinct parts before stage 1's merges are known
//! (`split`), so that the chunks are encoded with those merges by encoding each distinct part once and
//! laying the parts' ids end to end (`Encoder::encode_parted`, src/encode_cut.rs), not chunk by chunk
//! through a cache after stage 1. The split runs on the core that stage 1's merge loop (one thread) leaves
//! idle.
//!
//! Why it is exact: every token that stage 1 makes is a run of adjacent bytes of one of its pre-tokens
//! (a merge joins two tokens side by side in a word), so a place between bytes `x` and `y` that no stage-1
//! pre-token holds side by side (`held_pairs`) is one that no stage-1 token spans, one of the places where
//! `Encoder::encode_words` cuts a chunk anyway (src/encode_cut.rs says why that cut is exact). Cutting
//! there first, then each part where the encoder would, gives the same pieces as the encoder's cut of the
//! whole chunk, so the same ids. `encode_parted` checks the condition against the encoder's own tokens
//! (`joinable`) and, should it not hold (tokens that are not stage 1's), encodes the chunks whole.

use crate::count::Table;

/// Adjacent byte pairs, as an index `x * 256 + y`.
pub const PAIRS: usize = 1 << 16;

/// Which adjacent byte pairs some key of `table` holds.
pub fn held_pairs(table: &Table) -> Vec<bool> {
    let mut held = vec![false; PAIRS];
    for (key, _) in table.iter() {
        for w in key.windows(2) {
            held[(w[0] as usize) << 8 | w[1] as usize] = true;
        }
    }
    held
}

/// One table's keys as the numbers of their parts: each key's parts' numbers one after the other
/// (`parts`), each key's number of parts (`lengths`) and each key's count, in the table's order.
#[derive(Default)]
pub struct PartedTable {
    pub parts: Vec<u32>,
    pub lengths: Vec<u32>,
    pub counts: Vec<i64>,
}

/// Tables' keys cut between any two bytes that `held` does not hold, as numbers of distinct parts.
pub struct Parted {
    /// The distinct parts in order of first appearance (over the tables in order); part `i` is the `i`-th
    /// key (its count: how many times it occurs, unused).
    pub parts: Table,
    /// Each table's keys, in the tables' order.
    pub tables: Vec<PartedTable>,
    /// The pairs kept together: a key is cut between any other two bytes.
    pub held: Vec<bool>,
}

/// The keys of `tables` cut between any two bytes that `held` (one flag per pair, `PAIRS` of them) does not
/// hold, as numbers of distinct parts; each table is dropped once split. Time linear in the keys' bytes.
pub fn split(tables: Vec<Table>, held: Vec<bool>) -> Parted {
    assert_eq!(held.len(), PAIRS, "one flag per pair of bytes");
    let mut parts = Table::default();
    let mut out = Vec::with_capacity(tables.len());
    for table in tables {
        let mut one = PartedTable {
            parts: Vec::with_capacity(table.len() * 4),
            lengths: Vec::with_capacity(table.len()),
            counts: Vec::with_capacity(table.len()),
        };
        let (lengths, counts) = (&mut one.lengths, &mut one.counts);
        let numbers = &mut one.parts;
        parts.add_indexed(
            |emit| {
                for (key, count) in table.iter() {
                    let mut start = 0;
                    let mut n = 0u32;
                    for i in 1..key.len() {
                        if !held[(key[i - 1] as usize) << 8 | key[i] as usize] {
                            emit(&key[start..i]);
                            n += 1;
                            start = i;
                        }
                    }
                    if start < key.len() {
                        emit(&key[start..]);
                        n += 1;
                    }
                    lengths.push(n);
                    counts.push(count);
                }
            },
            |number| numbers.push(number),
        );
        drop(table);
        out.push(one);
    }
    Parted { parts, tables: out, held }
}

impl Parted {
    /// The tables as they were split (each key whole again, in order, with its count).
    pub fn into_tables(self) -> Vec<Table> {
        let keys: Vec<&[u8]> = self.parts.iter().map(|(key, _)| key).collect();
        let mut whole = Vec::new();
        self.tables
            .iter()
            .map(|one| {
                let mut table = Table::default();
                let mut at = 0usize;
                for (&n, &count) in one.lengths.iter().zip(&one.counts) {
                    whole.clear();
                    for &p in &one.parts[at..at + n as usize] {
                        whole.extend_from_slice(keys[p as usize]);
                    }
                    at += n as usize;
                    table.add_key(&whole, count);
                }
                table
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(keys: &[(&str, i64)]) -> Table {
        let mut t = Table::default();
        for &(key, n) in keys {
            t.add_key(key.as_bytes(), n);
        }
        t
    }

    fn entries(t: &Table) -> Vec<(Vec<u8>, i64)> {
        t.iter().map(|(k, n)| (k.to_vec(), n)).collect()
    }

    #[test]
    fn keys_are_cut_where_no_pair_is_held_and_parts_are_numbered_once() {
        let words = table(&[("ab", 1), (" cd", 1)]);
        let held = held_pairs(&words);
        let first = table(&[("ab cd", 3), ("cd ab", 2)]);
        let second = table(&[(" cd", 5), ("ab cd", 1)]);
        let parted = split(vec![first, second], held);
        // " " + "c" is held (" cd"); "b" + " ", "d" + " " and " " + "a" are not.
        let parts: Vec<Vec<u8>> = parted.parts.iter().map(|(k, _)| k.to_vec()).collect();
        assert_eq!(parts, [b"ab".to_vec(), b" cd".to_vec(), b"cd".to_vec(), b" ".to_vec()]);
        assert_eq!(parted.tables[0].parts, [0, 1, 2, 3, 0]);
        assert_eq!(parted.tables[0].lengths, [2, 3]);
        assert_eq!(parted.tables[0].counts, [3, 2]);
        assert_eq!(parted.tables[1].parts, [1, 0, 1]);
        assert_eq!(parted.tables[1].lengths, [1, 2]);
        assert_eq!(parted.tables[1].counts, [5, 1]);
    }

    #[test]
    fn the_tables_come_back_whole_in_order() {
        let mut next = crate::testing::xorshift(0x9E37_79B9_7F4A_7C15u64);
        let mut tables = Vec::new();
        for _ in 0..3 {
            let mut t = Table::default();
            for _ in 0..200 {
                let key: Vec<u8> = (0..next(40)).map(|_| b"ab c\n"[next(5) as usize]).collect();
                t.add_key(&key, 1 + next(9) as i64);
            }
            tables.push(t);
        }
        let want: Vec<_> = tables.iter().map(entries).collect();
        let held: Vec<bool> = (0..PAIRS).map(|_| next(2) == 0).collect();
        let back = split(tables, held).into_tables();
        assert_eq!(back.iter().map(entries).collect::<Vec<_>>(), want);
    }
}
