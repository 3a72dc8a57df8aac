//! The merge loop's pair table (rust/src/merge.rs): pair key -> value, open addressing with linear probing,
//! the key inside its slot.
//!
//! Why not `HashMap`: on CJK text the table holds hundreds of thousands of pairs (two characters side by
//! side, most occurring once), far larger than the cache, and a merge late in training makes four look-ups
//! per occurrence it visits, each one at random. A `HashMap` look-up reads its control bytes, then the slot:
//! two cache misses, one after the other. Here a look-up starts at the slot itself (a miss, then usually
//! the same cache line), and the caller can ask for that line ahead (`prefetch`) while it works on another
//! occurrence, so that the misses overlap (issue 22). Removal shifts the following entries back (no
//! tombstones), so a table where pairs come and go stays as fast as a fresh one.

/// How many pairs a table of `slots` slots holds before it grows: 5/8 of them, so that probes stay short;
/// 7/8 from `LARGE` slots on (as a `HashMap`, whose slot is one control byte and 24 bytes to our 32), so
/// that the millions of pairs of a large English corpus take no more memory than they did in one (30 MB
/// more peak RSS on 100 MB at 5/8). Probing a fuller table costs ~5% of a CJK merge loop, whose table is
/// smaller.
fn capacity(slots: usize) -> usize {
    slots / 8 * if slots >= LARGE { 7 } else { 5 }
}

const LARGE: usize = 1 << 19;

/// A key no pair has: both ids would be `u32::MAX`, which the merge loop never gives a token.
const EMPTY: u64 = u64::MAX;

#[derive(Clone, Copy)]
struct Slot<V> {
    key: u64,
    value: V,
}

/// pair key (`u64`, never `u64::MAX`) -> `V` (see the module's docs).
pub struct PairTable<V> {
    slots: Vec<Slot<V>>,
    len: usize,
    /// `slots.len() - 1` (a power of two).
    mask: usize,
    /// 64 - log2(`slots.len()`): a key's home slot is the top bits of its hash.
    shift: u32,
}

impl<V: Copy + Default> Default for PairTable<V> {
    fn default() -> Self {
        PairTable::with_capacity(0)
    }
}

impl<V: Copy + Default> PairTable<V> {
    /// A table that holds `n` pairs before it grows.
    pub fn with_capacity(n: usize) -> PairTable<V> {
        let mut slots = 16;
        while capacity(slots) <= n {
            slots *= 2;
        }
        PairTable {
            slots: vec![Slot { key: EMPTY, value: V::default() }; slots],
            len: 0,
            mask: slots - 1,
            shift: 64 - slots.trailing_zeros(),
        }
    }

    /// The number of pairs held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no pair is held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    fn home(&self, key: u64) -> usize {
        // Fibonacci hashing: the top bits of key x 2^64/phi spread (a, b) pairs of nearby ids apart.
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// Asks the CPU for the cache line where a look-up of `key` starts, without waiting for it.
    #[inline(always)]
    pub fn prefetch(&self, key: u64) {
        crate::merge::prefetch(&self.slots[self.home(key)]);
    }

    /// `Ok(slot)` holding `key`, or `Err(slot)`: the empty slot where it would go.
    #[inline]
    fn find(&self, key: u64) -> Result<usize, usize> {
        debug_assert_ne!(key, EMPTY);
        let mut i = self.home(key);
        loop {
            let k = self.slots[i].key;
            if k == key {
                return Ok(i);
            }
            if k == EMPTY {
                return Err(i);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// The value of `key`, if held.
    #[inline]
    pub fn get(&self, key: u64) -> Option<&V> {
        self.find(key).ok().map(|i| &self.slots[i].value)
    }

    /// The value of `key`, if held, to change.
    #[inline]
    pub fn get_mut(&mut self, key: u64) -> Option<&mut V> {
        self.find(key).ok().map(|i| &mut self.slots[i].value)
    }

    /// The slot of `key` (`Ok`), or where it would go (`Err`), for `at`, `insert_at` and `remove_at`.
    #[inline]
    pub fn slot(&self, key: u64) -> Result<usize, usize> {
        self.find(key)
    }

    /// The value in slot `i` (a slot `slot` answered `Ok`, with no insert or remove since).
    #[inline]
    pub fn at(&mut self, i: usize) -> &mut V {
        &mut self.slots[i].value
    }

    /// Puts `key` -> `value` into slot `i`, which `slot(key)` answered `Err` with no change since: the slot
    /// that now holds it (the table may have grown).
    #[inline]
    pub fn insert_at(&mut self, i: usize, key: u64, value: V) -> usize {
        if self.len + 1 > capacity(self.slots.len()) {
            self.grow();
            let Err(i) = self.find(key) else { unreachable!("a key inserted twice") };
            self.put(i, key, value);
            return i;
        }
        self.put(i, key, value);
        i
    }

    #[inline]
    fn put(&mut self, i: usize, key: u64, value: V) {
        self.slots[i] = Slot { key, value };
        self.len += 1;
    }

    /// Inserts `key` -> `value` (`key` must not be held).
    pub fn insert(&mut self, key: u64, value: V) {
        let Err(i) = self.find(key) else { panic!("a key inserted twice") };
        self.insert_at(i, key, value);
    }

    /// The value of `key`, inserting `make()` first if it is not held.
    #[inline]
    pub fn get_or_insert_with(&mut self, key: u64, make: impl FnOnce() -> V) -> &mut V {
        let i = match self.find(key) {
            Ok(i) => i,
            Err(i) => self.insert_at(i, key, make()),
        };
        &mut self.slots[i].value
    }

    /// Removes the pair in slot `i` (one `slot` answered `Ok`, with no change since): its value.
    pub fn remove_at(&mut self, i: usize) -> V {
        let value = self.slots[i].value;
        // Backward shift: each following entry of the run moves into the hole when the hole lies between
        // its home and where it is, so that every probe still finds it; the run's end becomes empty.
        let mut hole = i;
        let mut j = i;
        loop {
            j = (j + 1) & self.mask;
            let k = self.slots[j].key;
            if k == EMPTY {
                break;
            }
            let home = self.home(k);
            if (j.wrapping_sub(home) & self.mask) >= (j.wrapping_sub(hole) & self.mask) {
                self.slots[hole] = self.slots[j];
                hole = j;
            }
        }
        self.slots[hole].key = EMPTY;
        self.len -= 1;
        value
    }

    /// Removes `key`: its value, if it was held.
    pub fn remove(&mut self, key: u64) -> Option<V> {
        self.find(key).ok().map(|i| self.remove_at(i))
    }

    /// Every (key, value), in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &V)> {
        self.slots.iter().filter(|s| s.key != EMPTY).map(|s| (s.key, &s.value))
    }

    #[cold]
    fn grow(&mut self) {
        let old = std::mem::take(&mut self.slots);
        *self = PairTable::with_capacity(capacity(old.len())); // twice the slots (or more)
        for s in old {
            if s.key != EMPTY {
                let Err(i) = self.find(s.key) else { unreachable!("a key held twice") };
                self.put(i, s.key, s.value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Random inserts, updates and removes (slot by slot and by key), over few keys (long runs that wrap
    /// around the end, shifted back by removes) and many (growth): the table holds what a HashMap would.
    #[test]
    fn the_table_holds_what_a_hash_map_would() {
        let mut next = crate::testing::xorshift(0x5EED_0022u64);
        for (keys, steps) in [(40u64, 20_000), (5_000, 60_000)] {
            let mut table: PairTable<u64> = PairTable::default();
            let mut model: HashMap<u64, u64> = HashMap::new();
            for step in 0..steps {
                // Keys as the merge loop makes them: (a << 32) | b with small ids.
                let k = ((next(keys) / 8) << 32) | (next(keys) % 8);
                match next(5) {
                    0 | 1 => {
                        *table.get_or_insert_with(k, || 7) += step;
                        *model.entry(k).or_insert(7) += step;
                    }
                    2 => match table.slot(k) {
                        Ok(i) => {
                            assert_eq!(table.remove_at(i), model.remove(&k).unwrap());
                        }
                        Err(i) => {
                            assert!(!model.contains_key(&k));
                            table.insert_at(i, k, step);
                            model.insert(k, step);
                        }
                    },
                    3 => assert_eq!(table.remove(k), model.remove(&k)),
                    _ => assert_eq!(table.get(k), model.get(&k)),
                }
                assert_eq!(table.len(), model.len());
            }
            for (k, v) in &model {
                assert_eq!(table.get(*k), Some(v));
            }
            let mut held: Vec<(u64, u64)> = table.iter().map(|(k, v)| (k, *v)).collect();
            let mut expected: Vec<(u64, u64)> = model.into_iter().collect();
            held.sort_unstable();
            expected.sort_unstable();
            assert_eq!(held, expected);
        }
    }

    /// A large table fills to 7/8 before it grows, and still finds and removes every key.
    #[test]
    fn a_large_table_grows_at_seven_eighths() {
        assert_eq!((capacity(LARGE / 2), capacity(LARGE)), (LARGE / 16 * 5, LARGE / 8 * 7));
        let mut table: PairTable<u32> = PairTable::with_capacity(capacity(LARGE) - 1);
        assert_eq!(table.slots.len(), LARGE);
        let keys = |n: u32| (0..n).map(|i| (u64::from(i % 977) << 32) | u64::from(i / 977));
        for (i, k) in keys(capacity(LARGE) as u32).enumerate() {
            table.insert(k, i as u32);
        }
        assert_eq!(table.slots.len(), LARGE, "7/8 full, not grown");
        table.insert(u64::MAX - 1, 0);
        assert_eq!(table.slots.len(), 2 * LARGE);
        for (i, k) in keys(capacity(LARGE) as u32).enumerate().step_by(3) {
            assert_eq!(table.remove(k), Some(i as u32));
        }
        for (i, k) in keys(capacity(LARGE) as u32).enumerate() {
            assert_eq!(table.get(k).copied(), (i % 3 != 0).then_some(i as u32));
        }
    }
}
