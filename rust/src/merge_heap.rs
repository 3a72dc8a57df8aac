//! The merge loop's priority queue (rust/src/merge.rs): a binary max-heap of pairs ordered by count, then by
//! (left bytes, right bytes), greatest first; equal bytes (duplicate tokens) put the smaller ids first.
//!
//! Why not `std::collections::BinaryHeap` of entries that hold the tokens' bytes (`Arc<[u8]>`): late in
//! training nearly every pair has a count of 1-10, so almost every comparison is a tie of counts decided
//! by the bytes, and each such comparison followed two pointers to the bytes (two cache misses), while every
//! push and pop cloned or dropped two atomic reference counts. Here an entry is 24 bytes: the count, the
//! pair's ids and the first 8 bytes of the left token as a big-endian integer, which decides most ties
//! without leaving the heap's memory; only equal prefixes compare the tokens' bytes, from the token table
//! the caller passes in. A zero-padded prefix orders as the bytes do: where two prefixes first differ, either
//! both bytes are real, or the padded one's token ended there, and a proper prefix is the lesser.

use std::cmp::Ordering;
use std::sync::Arc;

/// One pair as the heap holds it (see the module's docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub count: i64,
    /// The first 8 bytes of the left token, big-endian, zero-padded.
    prefix: u64,
    pub a: u32,
    pub b: u32,
}

/// A token's first 8 bytes as a big-endian integer, zero-padded: what an entry keeps of its left token.
pub fn prefix_of(token: &[u8]) -> u64 {
    let mut head = [0u8; 8];
    let n = token.len().min(8);
    head[..n].copy_from_slice(&token[..n]);
    u64::from_be_bytes(head)
}

impl Entry {
    /// The entry of pair (`a`, `b`) occurring `count` times; `prefix` is `prefix_of` the left token (the
    /// caller keeps them per id: reading the token's bytes here was a cache miss per new entry).
    pub fn new(count: i64, a: u32, b: u32, prefix: u64) -> Entry {
        Entry { count, prefix, a, b }
    }
}

/// How `x` orders against `y`: Greater when `x` comes out of the heap first.
fn order(x: &Entry, y: &Entry, tokens: &[Arc<[u8]>]) -> Ordering {
    x.count
        .cmp(&y.count)
        .then_with(|| x.prefix.cmp(&y.prefix))
        .then_with(|| tokens[x.a as usize].cmp(&tokens[y.a as usize]))
        .then_with(|| tokens[x.b as usize].cmp(&tokens[y.b as usize]))
        .then_with(|| (y.a, y.b).cmp(&(x.a, x.b)))
}

/// A binary max-heap of `Entry` under `order`; every method that compares takes the token table.
#[derive(Default)]
pub struct PairHeap {
    entries: Vec<Entry>,
}

impl PairHeap {
    /// A heap of `entries` (in linear time).
    pub fn from_vec(entries: Vec<Entry>, tokens: &[Arc<[u8]>]) -> PairHeap {
        let mut heap = PairHeap { entries };
        for i in (0..heap.entries.len() / 2).rev() {
            heap.sift_down(i, tokens);
        }
        heap
    }

    /// The number of entries (current and stale).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when the heap holds no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The greatest entry.
    pub fn peek(&self) -> Option<&Entry> {
        self.entries.first()
    }

    /// Adds an entry.
    pub fn push(&mut self, entry: Entry, tokens: &[Arc<[u8]>]) {
        self.entries.push(entry);
        let mut i = self.entries.len() - 1;
        while i > 0 {
            let parent = (i - 1) / 2;
            if order(&self.entries[i], &self.entries[parent], tokens) != Ordering::Greater {
                break;
            }
            self.entries.swap(i, parent);
            i = parent;
        }
    }

    /// Adds `more` entries (in linear time: the heap is built again).
    pub fn extend(&mut self, more: Vec<Entry>, tokens: &[Arc<[u8]>]) {
        if more.is_empty() {
            return;
        }
        self.entries.extend(more);
        for i in (0..self.entries.len() / 2).rev() {
            self.sift_down(i, tokens);
        }
    }

    /// Removes and returns the greatest entry.
    pub fn pop(&mut self, tokens: &[Arc<[u8]>]) -> Option<Entry> {
        let last = self.entries.pop()?;
        if self.entries.is_empty() {
            return Some(last);
        }
        let top = std::mem::replace(&mut self.entries[0], last);
        self.sift_down(0, tokens);
        Some(top)
    }

    /// Gives the greatest entry another count and moves it to its place (a stale entry corrected: one
    /// walk down instead of a pop and a push). A greater count leaves it on top, where it already is.
    pub fn set_top_count(&mut self, count: i64, tokens: &[Arc<[u8]>]) {
        if let Some(top) = self.entries.first_mut() {
            top.count = count;
            self.sift_down(0, tokens);
        }
    }

    fn sift_down(&mut self, mut i: usize, tokens: &[Arc<[u8]>]) {
        let n = self.entries.len();
        loop {
            let left = 2 * i + 1;
            if left >= n {
                return;
            }
            let right = left + 1;
            let child = if right < n
                && order(&self.entries[right], &self.entries[left], tokens) == Ordering::Greater
            {
                right
            } else {
                left
            };
            if order(&self.entries[child], &self.entries[i], tokens) != Ordering::Greater {
                return;
            }
            self.entries.swap(i, child);
            i = child;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xorshift64: enough randomness for shuffled test entries, and the same on every run.
    struct Rng(u64);

    impl Rng {
        fn new(seed: u64) -> Rng {
            Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
        }

        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    fn tokens(list: &[&[u8]]) -> Vec<Arc<[u8]>> {
        list.iter().map(|t| Arc::from(*t)).collect()
    }

    fn entry(count: i64, a: u32, b: u32, tokens: &[Arc<[u8]>]) -> Entry {
        Entry::new(count, a, b, prefix_of(&tokens[a as usize]))
    }

    /// The order the merge loop wants, spelled out on the bytes themselves (no prefixes).
    fn reference(x: &Entry, y: &Entry, tokens: &[Arc<[u8]>]) -> Ordering {
        let key = |e: &Entry| (e.count, tokens[e.a as usize].to_vec(), tokens[e.b as usize].to_vec());
        key(x).cmp(&key(y)).then_with(|| (y.a, y.b).cmp(&(x.a, x.b)))
    }

    #[test]
    fn prefixes_order_as_the_bytes_do() {
        // Proper prefixes, zero bytes that look like padding, shared 8-byte heads, bytes above 0x7F.
        let table = tokens(&[
            b"",
            b"a",
            b"a\0",
            b"a\0\0",
            b"ab",
            b"abcdefgh",
            b"abcdefghi",
            b"abcdefgh\0",
            b"abcdefgz",
            b"\xff",
            b"\xff\xff\xff\xff\xff\xff\xff\xff\x01",
            b"\x80",
            b"z",
            b"a",
        ]);
        for a in 0..table.len() as u32 {
            for b in 0..table.len() as u32 {
                let x = entry(3, a, 1, &table);
                let y = entry(3, b, 1, &table);
                assert_eq!(order(&x, &y, &table), reference(&x, &y, &table), "{a} vs {b}");
            }
        }
    }

    #[test]
    fn the_heap_gives_entries_in_the_merge_loops_order() {
        let mut rng = Rng::new(7);
        let alphabet: &[u8] = b"ab\0\xff";
        let table: Vec<Arc<[u8]>> = (0..40)
            .map(|_| {
                let len = rng.below(12) as usize;
                Arc::from((0..len).map(|_| alphabet[rng.below(4) as usize]).collect::<Vec<u8>>())
            })
            .collect();
        for round in 0..20 {
            let entries: Vec<Entry> = (0..200)
                .map(|_| entry(rng.below(4) as i64, rng.below(40) as u32, rng.below(40) as u32, &table))
                .collect();
            let mut expected = entries.clone();
            expected.sort_by(|x, y| reference(y, x, &table));
            // Half built at once, half pushed (or added at once: `extend`); some tops recounted on the way.
            let mut heap = PairHeap::from_vec(entries[..100].to_vec(), &table);
            if round % 4 == 2 {
                heap.extend(entries[100..].to_vec(), &table);
            } else {
                for &e in &entries[100..] {
                    heap.push(e, &table);
                }
            }
            assert_eq!(heap.len(), 200);
            if round % 2 == 1 {
                let top = *heap.peek().unwrap();
                heap.set_top_count(top.count, &table); // unchanged: stays on top
                assert_eq!(heap.peek(), Some(&top));
            }
            let mut popped = Vec::new();
            while let Some(e) = heap.pop(&table) {
                popped.push(e);
            }
            assert!(heap.is_empty());
            let key = |e: &Entry| (e.count, e.a, e.b);
            // Entries equal under the order (same pair twice) may come in either order: compare keys.
            assert_eq!(
                popped.iter().map(key).collect::<Vec<_>>(),
                expected.iter().map(key).collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn a_recounted_top_moves_down_to_its_place() {
        let table = tokens(&[b"a", b"b", b"c"]);
        let mut heap = PairHeap::from_vec(
            vec![entry(9, 0, 1, &table), entry(5, 1, 2, &table), entry(4, 2, 0, &table)],
            &table,
        );
        heap.set_top_count(1, &table);
        let order: Vec<i64> = std::iter::from_fn(|| heap.pop(&table)).map(|e| e.count).collect();
        assert_eq!(order, [5, 4, 1]);
    }
}
