//! The table under an encoder's pre-token cache: pre-token bytes -> ids, packed in one arena under an
//! open-addressing index (issue 22).
//!
//! A hash map of boxed keys and boxed ids put each entry in three places in memory (its bucket, its key's
//! allocation, its ids' allocation) besides the map's control bytes; a full cache of 100k pre-tokens was
//! about 10 MB a thread, scattered. Encoding 2.3 MB of Chinese after English and mixed text (both caches
//! full of their pre-tokens) then spent its time waiting for those lines, on two threads more than on one:
//! no pre-token was merged, yet a batch took 40% longer than with fresh caches. Here a lookup reads one
//! 8-byte slot (a tag of the hash rules out nearly every other key without reading it) and one record,
//! and the records of the pre-tokens met together sit together in the arena (in the order they came in,
//! which making room keeps), so a text's entries fill whole cache lines.
//!
//! A record is `[key length: u16][number of ids: u16][hash: u32][key bytes][ids: u32 each]`, little
//! endian, unaligned. The entries are only ever removed all at once (`retain` rebuilds the arena), so
//! the probe sequences need no tombstones.

use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};

use rustc_hash::FxBuildHasher;

use crate::merge::prefetch;

/// A slot's top bit: the entry was looked up since its cache was last full.
const USED: u64 = 1 << 63;
/// Then 23 bits of the key's hash...
const TAG_SHIFT: u32 = 40;
const TAG_BITS: u64 = ((1 << 23) - 1) << TAG_SHIFT;
/// ... and where the record starts in the arena, plus one (0 is an empty slot).
const AT_BITS: u64 = (1 << TAG_SHIFT) - 1;
/// A record's fixed part: key length, number of ids, hash.
const HEADER: usize = 8;
/// The longest pre-token kept (its length is stored in 16 bits). A longer one is merged each time it
/// comes: it is rare, and its merge costs a small multiple of hashing and copying it.
pub(crate) const LONGEST: usize = u16::MAX as usize;
/// Slots of a new table (it doubles whenever more than half are taken).
const FIRST_SLOTS: usize = 1 << 10;

/// The hash of a pre-token's bytes, computed once per lookup for all the tables it is looked up in.
#[inline]
pub(crate) fn hash(piece: &[u8]) -> u32 {
    let h = FxBuildHasher.hash_one(piece);
    (h >> 32) as u32 ^ h as u32
}

/// The slot bits of a hash's tag.
#[inline]
fn tag(hash: u32) -> u64 {
    (u64::from(hash) << (TAG_SHIFT - 9)) & TAG_BITS
}

/// Pre-token bytes -> ids, with a "used" mark per entry that may be set through a shared reference (a
/// batch's threads mark the entries of the one cache they all read).
pub(crate) struct PieceMap {
    slots: Vec<AtomicU64>,
    arena: Vec<u8>,
    len: usize,
}

impl Default for PieceMap {
    fn default() -> PieceMap {
        PieceMap { slots: empty_slots(FIRST_SLOTS), arena: Vec::new(), len: 0 }
    }
}

fn empty_slots(n: usize) -> Vec<AtomicU64> {
    (0..n).map(|_| AtomicU64::new(0)).collect()
}

#[inline]
fn u16_at(bytes: &[u8], at: usize) -> usize {
    usize::from(u16::from_le_bytes([bytes[at], bytes[at + 1]]))
}

impl PieceMap {
    /// How many entries.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether there is no entry.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes of the records (what bounds memory besides the number of entries).
    pub(crate) fn bytes(&self) -> usize {
        self.arena.len()
    }

    /// Where the record of a (full) slot starts.
    #[inline]
    fn record(slot: u64) -> usize {
        (slot & AT_BITS) as usize - 1
    }

    /// The key of the record at `at`.
    #[inline]
    fn key(&self, at: usize) -> &[u8] {
        &self.arena[at + HEADER..at + HEADER + u16_at(&self.arena, at)]
    }

    /// The ids of the record at `at`, as little-endian bytes.
    #[inline]
    fn ids_bytes(&self, at: usize) -> &[u8] {
        let start = at + HEADER + u16_at(&self.arena, at);
        &self.arena[start..start + 4 * u16_at(&self.arena, at + 2)]
    }

    /// The slot holding `piece` (whose `hash` it is), if any.
    #[inline]
    pub(crate) fn find(&self, hash: u32, piece: &[u8]) -> Option<usize> {
        let mask = self.slots.len() - 1;
        let tag = tag(hash);
        let mut i = hash as usize & mask;
        loop {
            let slot = self.slots[i].load(Ordering::Relaxed);
            if slot == 0 {
                return None;
            }
            if slot & TAG_BITS == tag && self.key(Self::record(slot)) == piece {
                return Some(i);
            }
            i = (i + 1) & mask;
        }
    }

    /// Fetches the slot where the probe of `hash` begins into the processor's cache (a hint).
    #[inline]
    pub(crate) fn fetch_slot(&self, hash: u32) {
        prefetch(&self.slots[hash as usize & (self.slots.len() - 1)]);
    }

    /// Fetches the record that the first slot of `hash`'s probe points at, if its tag is `hash`'s (a hint:
    /// the slot was fetched by `fetch_slot` a few pre-tokens before).
    #[inline]
    pub(crate) fn fetch_record(&self, hash: u32) {
        let slot = self.slots[hash as usize & (self.slots.len() - 1)].load(Ordering::Relaxed);
        if slot != 0 && slot & TAG_BITS == tag(hash) {
            prefetch(&self.arena[Self::record(slot)]);
        }
    }

    /// Appends the ids of the entry in slot `i` (from `find`) to `out`; returns how many.
    #[inline]
    pub(crate) fn ids_into(&self, i: usize, out: &mut Vec<u32>) -> usize {
        let ids = self.ids_bytes(Self::record(self.slots[i].load(Ordering::Relaxed)));
        out.extend(ids.chunks_exact(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])));
        ids.len() / 4
    }

    /// Marks the entry in slot `i` used, through a shared reference: read first, so that an entry already
    /// marked (most) is not written and its cache line stays shared with the threads reading it. A store,
    /// not a read-modify-write: while threads share the map, setting the mark is the only write to a slot,
    /// so two threads marking it at once store the same value.
    #[inline]
    pub(crate) fn mark(&self, i: usize) {
        let slot = self.slots[i].load(Ordering::Relaxed);
        if slot & USED == 0 {
            self.slots[i].store(slot | USED, Ordering::Relaxed);
        }
    }

    /// Adds `piece` (not in the map; `hash` is its hash) with its ids; a piece longer than `LONGEST` is
    /// not kept.
    pub(crate) fn insert(&mut self, hash: u32, piece: &[u8], ids: &[u32]) {
        if piece.len() > LONGEST || ids.len() > LONGEST {
            return;
        }
        let at = self.arena.len();
        self.arena.extend_from_slice(&(piece.len() as u16).to_le_bytes());
        self.arena.extend_from_slice(&(ids.len() as u16).to_le_bytes());
        self.arena.extend_from_slice(&hash.to_le_bytes());
        self.arena.extend_from_slice(piece);
        for id in ids {
            self.arena.extend_from_slice(&id.to_le_bytes());
        }
        self.add_slot(hash, at);
    }

    /// Whether the key of the record at `at` of `from` (see `records`) is in the map.
    pub(crate) fn holds_record(&self, from: &PieceMap, at: usize) -> bool {
        let hash = u32::from_le_bytes(from.arena[at + 4..at + 8].try_into().expect("4 bytes"));
        self.find(hash, from.key(at)).is_some()
    }

    /// Copies the record at `at` of `from` (see `records`) in (its key not in the map), unmarked.
    pub(crate) fn copy_record(&mut self, from: &PieceMap, at: usize) {
        let end = at + HEADER + u16_at(&from.arena, at) + 4 * u16_at(&from.arena, at + 2);
        let hash = u32::from_le_bytes([
            from.arena[at + 4],
            from.arena[at + 5],
            from.arena[at + 6],
            from.arena[at + 7],
        ]);
        let new = self.arena.len();
        self.arena.extend_from_slice(&from.arena[at..end]);
        self.add_slot(hash, new);
    }

    /// Points a slot at the new record at `at`, growing the index when more than half its slots are taken.
    fn add_slot(&mut self, hash: u32, at: usize) {
        if (self.len + 1) * 2 > self.slots.len() {
            let doubled = empty_slots(2 * self.slots.len());
            let slots = std::mem::replace(&mut self.slots, doubled);
            for slot in slots.into_iter().map(AtomicU64::into_inner).filter(|&s| s != 0) {
                let at = Self::record(slot);
                let hash = u32::from_le_bytes(self.arena[at + 4..at + 8].try_into().expect("4 bytes"));
                self.place(hash, slot);
            }
        }
        self.place(hash, tag(hash) | (at as u64 + 1));
        self.len += 1;
    }

    /// Puts `slot` in the first empty slot of `hash`'s probe sequence.
    fn place(&mut self, hash: u32, slot: u64) {
        let mask = self.slots.len() - 1;
        let mut i = hash as usize & mask;
        while *self.slots[i].get_mut() != 0 {
            i = (i + 1) & mask;
        }
        *self.slots[i].get_mut() = slot;
    }

    /// Where each record starts, in the arena's order.
    pub(crate) fn records(&self) -> impl Iterator<Item = usize> + '_ {
        let mut at = 0;
        std::iter::from_fn(move || {
            (at < self.arena.len()).then(|| {
                let record = at;
                at += HEADER + u16_at(&self.arena, at) + 4 * u16_at(&self.arena, at + 2);
                record
            })
        })
    }

    /// Keeps the entries that `keep` says to, asked with whether each was used, in the order of the
    /// index's slots (which has nothing to do with the keys); they stay in the arena in the order they
    /// came in, and all are marked unused.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(bool) -> bool) {
        let mut kept: Vec<usize> = self
            .slots
            .iter_mut()
            .map(|s| *s.get_mut())
            .filter(|&s| s != 0 && keep(s & USED != 0))
            .map(Self::record)
            .collect();
        kept.sort_unstable();
        let old = std::mem::take(&mut self.arena);
        let old = PieceMap { slots: Vec::new(), arena: old, len: 0 };
        // An index sized for what stays (it doubles again as entries come): a cache full of the pre-tokens
        // of texts encoded before, then kept to those of the text now encoded, looked them up in an index
        // of twice the size, a fifth slower on Chinese after English and mixed (issue 22).
        self.slots = empty_slots((2 * kept.len() + 1).next_power_of_two().max(FIRST_SLOTS));
        self.len = 0;
        for at in kept {
            self.copy_record(&old, at);
        }
    }

    /// How many entries are marked used.
    pub(crate) fn used(&mut self) -> usize {
        self.slots.iter_mut().map(|s| *s.get_mut()).filter(|s| *s & USED != 0).count()
    }

    /// Forgets every entry.
    pub(crate) fn clear(&mut self) {
        *self = PieceMap::default();
    }

    /// Whether `piece` is in the map.
    #[cfg(test)]
    pub(crate) fn contains(&self, piece: &[u8]) -> bool {
        self.find(hash(piece), piece).is_some()
    }

    /// The ids of `piece`, if it is in the map.
    #[cfg(test)]
    pub(crate) fn get(&self, piece: &[u8]) -> Option<Vec<u32>> {
        let mut out = Vec::new();
        self.find(hash(piece), piece).map(|i| {
            self.ids_into(i, &mut out);
            out
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustc_hash::FxHashMap;

    #[test]
    fn finds_what_went_in_and_only_that_through_growth_and_rebuilds() {
        let mut map = PieceMap::default();
        let mut model: FxHashMap<Vec<u8>, Vec<u32>> = FxHashMap::default();
        // Keys of many lengths, empty ones and a long one included; ids of many lengths.
        let key = |i: u32| -> Vec<u8> {
            match i % 7 {
                0 => Vec::new(),
                6 => vec![(i % 251) as u8; 300 + i as usize % 50],
                k => (0..k * 3).map(|j| (i.wrapping_mul(2654435761) >> (j % 24)) as u8).collect(),
            }
        };
        for i in 0..20_000u32 {
            let k = key(i);
            if model.contains_key(&k) {
                continue;
            }
            let ids: Vec<u32> = (0..i % 9).map(|j| i * 16 + j).collect();
            map.insert(hash(&k), &k, &ids);
            model.insert(k, ids);
        }
        assert_eq!(map.len(), model.len());
        for (k, ids) in &model {
            assert_eq!(map.get(k).as_ref(), Some(ids));
        }
        assert!(!map.contains(b"not a key"));
        // Mark a third used; keep the used ones; they stay, unmarked, with their ids.
        let used: Vec<&Vec<u8>> = model.keys().step_by(3).collect();
        for k in &used {
            map.mark(map.find(hash(k), k).unwrap());
        }
        assert_eq!(map.used(), used.len());
        map.retain(|u| u);
        assert_eq!((map.len(), map.used()), (used.len(), 0));
        for k in used {
            assert_eq!(map.get(k).as_ref(), model.get(k));
        }
        let mut other = PieceMap::default();
        other.insert(hash(b"x"), b"x", &[7, 8]);
        other.insert(hash(b""), b"", &[]);
        let mut small = PieceMap::default();
        for at in other.records() {
            small.copy_record(&other, at);
        }
        assert_eq!((small.len(), small.get(b"x"), small.get(b"")), (2, Some(vec![7, 8]), Some(vec![])));
        small.clear();
        assert_eq!((small.len(), small.bytes(), small.contains(b"x")), (0, 0, false));
    }

    #[test]
    fn a_piece_too_long_to_keep_is_not_kept() {
        let mut map = PieceMap::default();
        let long = vec![b'a'; LONGEST + 1];
        map.insert(hash(&long), &long, &[1]);
        assert_eq!((map.len(), map.contains(&long)), (0, false));
        let longest = vec![b'a'; LONGEST];
        map.insert(hash(&longest), &longest, &[1, 2]);
        assert_eq!(map.get(&longest), Some(vec![1, 2]));
    }

    #[test]
    fn retaining_keeps_the_arena_in_the_order_the_entries_came() {
        let mut map = PieceMap::default();
        for i in 0..3000u32 {
            let k = i.to_le_bytes();
            map.insert(hash(&k), &k, &[i]);
        }
        let mut n = 0;
        map.retain(|_| {
            n += 1;
            n % 2 == 0
        });
        let order: Vec<u32> =
            map.records().map(|at| u32::from_le_bytes(map.key(at).try_into().unwrap())).collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]) && order.len() == 1500, "{}", order.len());
    }
}
