//! A table of pre-token counts kept in Rust across chunks (`Table`, `CountTable` in Python: src/py/), so
//! that counting a corpus builds no Python dict per chunk and merging two tables never touches Python
//! objects.
//!
//! Keys are the pre-tokens' UTF-8 bytes. The table remembers the order in which keys first appeared,
//! as a Python dict does: `to_frame()` then gives exactly the bytes that
//! `bpe_studio.engine.workers.protocol.encode_table` gives for a dict counted from the same texts in the same
//! order (so `decode_table` and every other reader of frames stay valid).

use rustc_hash::FxHashMap;

use crate::merge::prefetch;
use crate::pretok;

/// Bytes of a frame's header: number of keys (u64), bytes of key text (u64), keys separated by NUL (bool).
const HEADER: usize = 17;
/// Bytes of one key length and of one count in a frame.
const ITEM: usize = 8;

/// Keys up to this many bytes are kept inside their entry (most pre-tokens are): compared as two
/// integers, with no pointer to follow and no call to memcmp.
const INLINE: usize = 16;

/// One key and its count, kept in the hash table's slot itself: finding a pre-token and counting it
/// reads one cache line. A slot with `len == u32::MAX` is empty.
#[derive(Clone, Copy)]
struct Slot {
    /// The key when it is at most INLINE bytes, zero-padded; else its first INLINE bytes.
    head: [u8; INLINE],
    len: u32,
    /// The key's place in the order of first appearance (a Python dict's order).
    order: u32,
    count: i64,
}

const EMPTY: Slot = Slot { head: [0; INLINE], len: u32::MAX, order: 0, count: 0 };

/// A key as the counting table reads it: a pre-token (`&str`) or raw bytes, without a copy.
trait KeyBytes<'k>: Copy {
    fn key_bytes(self) -> &'k [u8];
}

impl<'k> KeyBytes<'k> for &'k [u8] {
    #[inline]
    fn key_bytes(self) -> &'k [u8] {
        self
    }
}

impl<'k> KeyBytes<'k> for &'k str {
    #[inline]
    fn key_bytes(self) -> &'k [u8] {
        self.as_bytes()
    }
}

/// Pre-token (UTF-8 bytes) -> count, in order of first appearance.
///
/// An open-addressing hash table (linear probing, at most 3/4 full) written out here: std's HashMap
/// boxes every key, and following those boxes cost a cache miss and a memcmp call per pre-token (60% of
/// the time in a profile). Keys of at most INLINE bytes (most pre-tokens) live in their slot and are
/// compared as integers; longer ones also have their bytes in `long`.
#[derive(Default)]
pub struct Table {
    slots: Vec<Slot>,
    /// The slot of each key, in order of first appearance.
    positions: Vec<u32>,
    /// The hash of each key (its low 32 bits: a table has at most 2**32 slots), in order of first
    /// appearance: growing moves the keys without hashing their bytes again (`rehash`).
    hashes: Vec<u32>,
    /// Where each key's bytes start in `long` (used for keys longer than INLINE only).
    starts: Vec<u64>,
    long: Vec<u8>,
    /// Sum of all counts: the number of pre-tokens counted.
    total: i64,
    /// The entries laid out flat (`compact`), the hash table above emptied; a change thaws them back.
    flat: Option<Flat>,
}

/// A table's entries in order of first appearance with no hash table: each key's bytes, length and
/// count. A superword run's stage-2 tables wait in this form while stage 1 merges: 40-45 bytes a key
/// instead of 100-110 (slots at most 3/4 full, positions, long keys apart).
///
/// The keys longer than INLINE bytes stay where the table kept them (its `long`, moved here, not copied):
/// they are most of a stage-2 table's bytes (long chunks, most of them met once), and copying them made
/// compaction's time (and its peak, both copies at once); the short ones are copied from their slots.
#[derive(Default)]
struct Flat {
    /// The keys of at most INLINE bytes, one after the other.
    short: Vec<u8>,
    /// The longer keys, one after the other (the table's `long`).
    long: Vec<u8>,
    /// Where each key starts, in `short` or in `long` (by its length).
    starts: Vec<u64>,
    lens: Vec<u32>,
    counts: Vec<i64>,
}

impl Flat {
    /// The `i`-th entry.
    #[inline]
    fn entry(&self, i: usize) -> (&[u8], i64) {
        let (len, at) = (self.lens[i] as usize, self.starts[i] as usize);
        let bytes = if len <= INLINE { &self.short } else { &self.long };
        (&bytes[at..at + len], self.counts[i])
    }
}

/// `text` cut at the special tokens as Python's `re.split` with their alternation cuts it: the leftmost
/// match, the first of `specials` that matches there; then on from its end. The parts (empty ones
/// included) and the number of matches. A match of UTF-8 bytes in UTF-8 text starts and ends on
/// character boundaries, so the byte search gives the same cuts as the str one.
fn split_specials<'t>(text: &'t str, specials: &[&[u8]]) -> (Vec<&'t str>, usize) {
    let specials: Vec<&str> =
        specials.iter().filter(|s| !s.is_empty()).filter_map(|s| std::str::from_utf8(s).ok()).collect();
    let search = |special: &str, from: usize| text[from..].find(special).map(|at| from + at);
    // The next match of each special token at or after the search point.
    let mut next: Vec<Option<usize>> = specials.iter().map(|s| search(s, 0)).collect();
    let (mut parts, mut found, mut start) = (Vec::new(), 0usize, 0usize);
    loop {
        let mut best: Option<(usize, usize)> = None; // (position, index of the special)
        for (i, at) in next.iter().enumerate() {
            if let Some(at) = *at {
                if best.is_none_or(|(b, _)| at < b) {
                    best = Some((at, i));
                }
            }
        }
        let Some((at, i)) = best else {
            break;
        };
        parts.push(&text[start..at]);
        found += 1;
        start = at + specials[i].len();
        for (j, special) in specials.iter().enumerate() {
            if next[j].is_some_and(|n| n < start) {
                next[j] = search(special, start);
            }
        }
    }
    parts.push(&text[start..]);
    (parts, found)
}

/// The key zero-padded to INLINE bytes (its first INLINE bytes when longer).
///
/// Made in registers from at most two loads, each of 4, 8 or 16 bytes: copying `len` bytes into a buffer
/// called memcpy, and reading the buffer back right after as two words stalled each time (a store of a
/// few bytes cannot be forwarded to a wider load): a third of the time spent handing each key to the
/// table (counting both stages of a superword run, numbering its chunks' parts).
#[inline]
fn head_of(key: &[u8]) -> [u8; INLINE] {
    let n = key.len();
    let u32_at = |at: usize| u32::from_le_bytes(key[at..at + 4].try_into().expect("4 bytes")) as u64;
    let u64_at = |at: usize| u64::from_le_bytes(key[at..at + 8].try_into().expect("8 bytes"));
    // Little-endian: byte i of the key is byte i of (low, high). A tail read that overlaps the first read
    // is shifted down past the bytes the first one holds, which leaves zeros above the key's last byte.
    let (low, high) = if n >= INLINE {
        (u64_at(0), u64_at(8))
    } else if n > 8 {
        (u64_at(0), u64_at(n - 8) >> (8 * (INLINE - n)))
    } else if n == 8 {
        (u64_at(0), 0)
    } else if n >= 4 {
        (u32_at(0) | (u32_at(n - 4) << 32) >> (8 * (8 - n)), 0)
    } else {
        let mut low = 0u64;
        for (i, &b) in key.iter().enumerate() {
            low |= (b as u64) << (8 * i);
        }
        (low, 0)
    };
    ((high as u128) << 64 | low as u128).to_le_bytes()
}

#[inline]
fn hash_of(key: &[u8], head: &[u8; INLINE]) -> usize {
    use std::hash::Hasher;
    let mut h = rustc_hash::FxHasher::default();
    h.write_u128(u128::from_le_bytes(*head));
    h.write_usize(key.len());
    if key.len() > INLINE {
        h.write(&key[INLINE..]);
    }
    // FxHasher's low bits are weak, and the slot is taken from the low bits: mix the high ones in.
    let x = h.finish();
    (x ^ (x >> 32) ^ (x >> 47)) as usize
}

impl Table {
    /// Number of distinct keys.
    pub fn len(&self) -> usize {
        match &self.flat {
            Some(flat) => flat.counts.len(),
            None => self.positions.len(),
        }
    }

    /// True when no key was counted.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Lays the entries out flat and drops the hash table (see `Flat`): the same `len`, `total`, entries
    /// and order, in less memory, for a table that is read (`iter`, `to_frame`) and no longer counted
    /// into. Counting into it again, or looking a key up in it, first builds the hash table again.
    pub fn compact(&mut self) {
        if self.flat.is_some() {
            return;
        }
        let mut flat = self.flat_begun();
        for i in 0..self.len() {
            // The slots are read in order of first appearance, at random: fetched ahead.
            if let Some(&ahead) = self.positions.get(i + 16) {
                prefetch(&self.slots[ahead as usize]);
            }
            self.lay_flat(i, &mut flat);
        }
        self.become_flat(flat);
    }

    /// An empty `Flat` with room for this table's entries (`compact`).
    fn flat_begun(&self) -> Flat {
        let n = self.len();
        Flat {
            starts: Vec::with_capacity(n),
            lens: Vec::with_capacity(n),
            counts: Vec::with_capacity(n),
            ..Flat::default()
        }
    }

    /// Appends entry `i` to `flat` (its bytes copied if short; a long key's place in `long` noted).
    #[inline]
    fn lay_flat(&self, i: usize, flat: &mut Flat) {
        let slot = &self.slots[self.positions[i] as usize];
        let len = slot.len as usize;
        if len <= INLINE {
            flat.starts.push(flat.short.len() as u64);
            flat.short.extend_from_slice(&slot.head[..len]);
        } else {
            flat.starts.push(self.starts[slot.order as usize]);
        }
        flat.lens.push(slot.len);
        flat.counts.push(slot.count);
    }

    /// Drops the hash table for `flat` (all the entries, laid out by `lay_flat`), which takes `long`.
    fn become_flat(&mut self, mut flat: Flat) {
        debug_assert_eq!(flat.counts.len(), self.len());
        flat.long = std::mem::take(&mut self.long);
        let total = self.total;
        *self = Table { total, flat: Some(flat), ..Table::default() };
    }

    /// `count_new(earlier)`, then `compact()`, in one pass over this table's entries: each key is looked up
    /// in `earlier` as it is laid out flat (its slot in each of them fetched LAG keys ahead, from the hash
    /// kept for it: no key hashed again). A superword run does both to its stage-2 tables at the end of
    /// counting, on one thread while the other core waits: two passes over a million keys read at random
    /// were 0.18 s on 100 MB of text. The same answer, entries and order as the two calls.
    pub fn compact_counting_new(&mut self, earlier: &[&Table]) -> usize {
        if self.flat.is_some()
            || earlier.iter().all(|t| t.is_empty())
            || earlier.iter().any(|t| t.flat.is_some())
        {
            let new = self.count_new(earlier);
            self.compact();
            return new;
        }
        const LAG: usize = 8;
        let n = self.len();
        let mut flat = self.flat_begun();
        let mut new = 0;
        for i in 0..n + LAG {
            if i < n {
                // (as in `compact`: the slots are read in order of first appearance, at random)
                if let Some(&ahead) = self.positions.get(i + 16) {
                    prefetch(&self.slots[ahead as usize]);
                }
                self.lay_flat(i, &mut flat);
                let hash = self.hashes[i] as usize;
                for t in earlier.iter().filter(|t| !t.slots.is_empty()) {
                    prefetch(&t.slots[hash & (t.slots.len() - 1)]);
                }
            }
            if i >= LAG {
                let j = i - LAG;
                let slot = &self.slots[self.positions[j] as usize];
                let (key, hash) = (self.key(slot), self.hashes[j] as usize);
                if !earlier.iter().any(|t| !t.slots.is_empty() && t.find_hashed(key, &slot.head, hash).1) {
                    new += 1;
                }
            }
        }
        self.become_flat(flat);
        new
    }

    /// The hash table built again from the flat entries (`compact`'s undoing), if they are flat.
    #[inline]
    fn thaw(&mut self) {
        if self.flat.is_some() {
            self.thaw_flat();
        }
    }

    #[cold]
    fn thaw_flat(&mut self) {
        let Some(flat) = self.flat.take() else {
            return;
        };
        let total = self.total;
        self.reserve(flat.counts.len());
        for i in 0..flat.counts.len() {
            let (key, count) = flat.entry(i);
            self.bump(key, count);
        }
        self.total = total;
    }

    /// The `i`-th entry in order of first appearance.
    #[inline]
    fn entry(&self, i: usize) -> (&[u8], i64) {
        match &self.flat {
            Some(flat) => flat.entry(i),
            None => {
                let slot = &self.slots[self.positions[i] as usize];
                (self.key(slot), slot.count)
            }
        }
    }

    /// Sum of all counts: the number of pre-tokens counted.
    pub fn total(&self) -> i64 {
        self.total
    }

    /// The bytes of the key in `slot`.
    fn key<'a>(&'a self, slot: &'a Slot) -> &'a [u8] {
        let len = slot.len as usize;
        if len <= INLINE {
            &slot.head[..len]
        } else {
            let at = self.starts[slot.order as usize] as usize;
            &self.long[at..at + len]
        }
    }

    /// The slot of `key` (found, or the empty one where it would go).
    #[inline]
    fn find(&self, key: &[u8], head: &[u8; INLINE]) -> (usize, bool) {
        self.find_hashed(key, head, hash_of(key, head))
    }

    #[inline]
    fn find_hashed(&self, key: &[u8], head: &[u8; INLINE], hash: usize) -> (usize, bool) {
        let mask = self.slots.len() - 1;
        let mut i = hash & mask;
        loop {
            let slot = &self.slots[i];
            if slot.len == u32::MAX {
                return (i, false);
            }
            if slot.len as usize == key.len()
                && slot.head == *head
                && (key.len() <= INLINE || self.key(slot) == key)
            {
                return (i, true);
            }
            i = (i + 1) & mask;
        }
    }

    /// Makes room for `more` new keys without growing again.
    fn reserve(&mut self, more: usize) {
        // (A flat table is thawed here, for `merge` and `add_frame`; `add` thaws it before it counts.)
        self.thaw();
        // At most 3/4 full: probes stay short (two slots share a cache line), and a table of 500,000
        // pre-tokens fits 2**20 slots (32 MB) instead of 2**21.
        // Rounded up, not plus one: at a power of two times 3/4, "+ 1" asked for the next power and the
        // table quadrupled instead of doubling (a stage-2 thread's 900,000 chunks took 2**22 slots,
        // 128 MB, not 2**21).
        let need = ((self.len() + more) * 4).div_ceil(3);
        if need <= self.slots.len() {
            return;
        }
        let size = need.next_power_of_two().max(64);
        // (slot numbers are u32, and so are the hashes kept: `hash as u32 & mask` is `hash & mask`)
        assert!(size as u64 <= 1 << 32, "a count table of more than 2**32 slots");
        let old = std::mem::replace(&mut self.slots, vec![EMPTY; size]);
        let mut positions = std::mem::take(&mut self.positions);
        self.rehash(&old, &mut positions);
        self.positions = positions;
    }

    /// Moves the keys of `old` (the slots before growing) into `self.slots`, and sets each key's place in
    /// `positions` to its new slot. Read in the order of the old slots, not of first appearance: the old
    /// slots are then read one after the other and the new ones written near two running places (a key at
    /// slot `i` of the old table goes near `i` or `i` plus its old size, its hash's next bit deciding), with
    /// each key's hash kept (`hashes`), not made again from its bytes. In order of first appearance both
    /// slots were a cache miss each, one after the other: a superword run's stage-2 tables (a million long
    /// chunks a thread) spent 40% of their counting growing. Any order of insertion makes a table where
    /// every key is found; nothing is read in slot order but lookups.
    fn rehash(&mut self, old: &[Slot], positions: &mut [u32]) {
        let mask = self.slots.len() - 1;
        for slot in old {
            if slot.len == u32::MAX {
                continue;
            }
            let order = slot.order as usize;
            let mut i = self.hashes[order] as usize & mask;
            while self.slots[i].len != u32::MAX {
                i = (i + 1) & mask;
            }
            self.slots[i] = *slot;
            positions[order] = i as u32;
        }
    }

    /// Adds `n` to the count of `key`.
    #[inline]
    fn bump(&mut self, key: &[u8], n: i64) {
        let head = head_of(key);
        self.bump_hashed(key, head, hash_of(key, &head), n);
    }

    /// `bump` with the key's head and hash already made (see `add`). The table is not flat: its callers
    /// thaw it first (not here, on counting's hottest path).
    /// Returns the key's place in the order of first appearance.
    #[inline]
    fn bump_hashed(&mut self, key: &[u8], head: [u8; INLINE], hash: usize, n: i64) -> u32 {
        debug_assert!(self.flat.is_none());
        // Wrapping: a frame from elsewhere may declare any counts; never a panic for that.
        self.total = self.total.wrapping_add(n);
        if (self.positions.len() + 1) * 4 > self.slots.len() * 3 {
            self.reserve(self.positions.len().max(32));
        }
        let (i, found) = self.find_hashed(key, &head, hash);
        if found {
            let slot = &mut self.slots[i];
            slot.count = slot.count.wrapping_add(n);
            return slot.order;
        }
        let order = self.len() as u32;
        if key.len() > INLINE {
            self.starts.resize(order as usize, 0);
            self.starts.push(self.long.len() as u64);
            self.long.extend_from_slice(key);
        }
        self.slots[i] = Slot { head, len: key.len() as u32, order, count: n };
        self.positions.push(i as u32);
        self.hashes.push(hash as u32);
        order
    }

    /// Adds `n` to the count of `key` (appended last if new).
    pub fn add_key(&mut self, key: &[u8], n: i64) {
        self.thaw();
        self.bump(key, n);
    }

    /// Counts each key that `produce` hands its `emit` once, and hands `index` each one's place in the
    /// order of first appearance, in the order they came: a table used to number distinct keys
    /// (`chunk_parts`). Each key's slot is fetched ahead, as in `count_pieces`.
    pub fn add_indexed<'k>(
        &mut self,
        produce: impl FnOnce(&mut dyn FnMut(&'k [u8])),
        index: impl FnMut(u32),
    ) {
        self.thaw();
        self.bump_ahead(produce, index);
    }

    /// Counts each key that `produce` hands its `emit` once, in order, handing `counted` each one's place
    /// in the order of first appearance. Each key's slot is a cache miss in a table of megabytes (most of
    /// counting's time): it is hashed and its slot fetched when the key comes, and counted LAG keys later,
    /// so that several misses are under way at once.
    #[inline]
    fn bump_ahead<'k, K: KeyBytes<'k>>(
        &mut self,
        produce: impl FnOnce(&mut dyn FnMut(K)),
        mut counted: impl FnMut(u32),
    ) {
        const LAG: usize = 8;
        let mut ring: [(&'k [u8], [u8; INLINE], usize); LAG] = [(&[], [0; INLINE], 0); LAG];
        let mut found = 0usize;
        produce(&mut |key: K| {
            let key = key.key_bytes();
            let head = head_of(key);
            let hash = hash_of(key, &head);
            if !self.slots.is_empty() {
                prefetch(&self.slots[hash & (self.slots.len() - 1)]);
            }
            let at = found % LAG;
            if found >= LAG {
                let (key, head, hash) = ring[at];
                counted(self.bump_hashed(key, head, hash, 1));
            }
            ring[at] = (key, head, hash);
            found += 1;
        });
        for i in found.saturating_sub(LAG)..found {
            let (key, head, hash) = ring[i % LAG];
            counted(self.bump_hashed(key, head, hash, 1));
        }
    }

    /// Counts the pre-tokens of every text; Err with the first code point the class table does not
    /// cover, in which case nothing was counted.
    pub fn add(&mut self, texts: &[&str], classes: &[u8], scan: pretok::Scanner) -> Result<(), u32> {
        // Checked before counting anything, so that the caller can extend the class table and call
        // again without counting a text twice.
        for text in texts {
            if let Some(cp) = beyond(text, classes.len()) {
                return Err(cp);
            }
        }
        self.thaw();
        for text in texts {
            self.count_pieces(|emit| {
                let missing = scan(text, classes, emit);
                debug_assert!(missing.is_none());
            });
        }
        Ok(())
    }

    /// Counts the pieces that `produce` hands its `emit`, in order (their slots fetched ahead: `bump_ahead`).
    #[inline]
    fn count_pieces<'t>(&mut self, produce: impl FnOnce(&mut dyn FnMut(&'t str))) {
        self.bump_ahead(produce, |_| ());
    }

    /// Counts a chunk given as bytes: checks they are UTF-8, splits them on the special tokens and counts
    /// the non-empty parts' pre-tokens (`add`). `specials` in the order Python's alternation tries them
    /// (longest first: `corpus.plan.special_token_regex`), so at the leftmost match the first of them that
    /// matches there wins, as in `re.split`. Ok(None) when the bytes are not UTF-8 (nothing counted: the
    /// caller decodes them under its policy); otherwise (non-empty parts, special tokens found). Err as
    /// `add`, nothing counted. Reading, checking and splitting a chunk in Python held the GIL, one
    /// counting thread at a time (issue 22). Linear: each special token's next match is searched once
    /// per match of another that passes it, from where that one ends (at most the chunk per special).
    pub fn add_bytes(
        &mut self,
        data: &[u8],
        specials: &[&[u8]],
        classes: &[u8],
        scan: pretok::Scanner,
    ) -> Result<Option<(usize, usize)>, u32> {
        let Ok(text) = std::str::from_utf8(data) else {
            return Ok(None);
        };
        let (parts, found) = split_specials(text, specials);
        let parts: Vec<&str> = parts.into_iter().filter(|p| !p.is_empty()).collect();
        self.add(&parts, classes, scan)?;
        Ok(Some((parts.len(), found)))
    }

    /// `add_bytes` with `scan` (a `pretok::chars_scanner`) into this table, and in the same pass the
    /// superword split's pieces (pretok_superbpe.rs) of the same parts into `superwords`: a superword run
    /// counts its stage-2 chunks while stage 1 counts its pre-tokens, so the corpus is read, checked,
    /// split on the special tokens and classified once, not twice. Each part is classified once, for
    /// `scan`; the superword scan reads that classification (see `CharsScanner`). The same results as
    /// `add_bytes` into each table with its own scanner; nothing is counted into either table on Ok(None)
    /// or Err.
    pub fn add_bytes_with_superwords(
        &mut self,
        superwords: &mut Table,
        data: &[u8],
        specials: &[&[u8]],
        classes: &[u8],
        scan: pretok::CharsScanner,
    ) -> Result<Option<(usize, usize)>, u32> {
        let Ok(text) = std::str::from_utf8(data) else {
            return Ok(None);
        };
        let (parts, found) = split_specials(text, specials);
        let parts: Vec<&str> = parts.into_iter().filter(|p| !p.is_empty()).collect();
        for part in &parts {
            if let Some(cp) = beyond(part, classes.len()) {
                return Err(cp);
            }
        }
        self.thaw();
        superwords.thaw();
        for part in &parts {
            let chars = scan.classify(part, classes)?;
            self.count_pieces(|emit| (scan.scan)(&chars, emit));
            superwords.count_pieces(|emit| crate::pretok_superbpe::superbpe_scan(&chars, emit));
        }
        Ok(Some((parts.len(), found)))
    }

    /// Adds every count of `other` (keys new to this table follow in `other`'s order).
    pub fn merge(&mut self, other: &Table) {
        self.reserve(other.len().saturating_sub(self.len() / 2));
        if other.flat.is_some() {
            for (key, count) in other.iter() {
                self.bump(key, count);
            }
            return;
        }
        // As in `add`: each of `other`'s keys is a cache miss twice, its slot in `other` (read in order of
        // first appearance, so at random) and its slot here. Both are fetched ahead (other's slot 2 * LAG
        // keys ahead, ours LAG keys ahead, once the key is hashed) so that several misses are under way at
        // once; the keys are still added one at a time in `other`'s order, so the result is the same. The
        // 0.1 s serial merge of two threads' tables on 100 MB was in counting's wall time (issue 22).
        const LAG: usize = 8;
        let positions = &other.positions;
        let mut ring: [(&[u8], [u8; INLINE], usize, i64); LAG] = [(&[], [0; INLINE], 0, 0); LAG];
        for j in 0..positions.len() + LAG {
            if let Some(&ahead) = positions.get(j + 2 * LAG) {
                prefetch(&other.slots[ahead as usize]);
            }
            let at = j % LAG;
            if j >= LAG {
                let (key, head, hash, count) = ring[at];
                self.bump_hashed(key, head, hash, count);
            }
            if let Some(&position) = positions.get(j) {
                let slot = &other.slots[position as usize];
                let key = other.key(slot);
                let head = head_of(key);
                let hash = hash_of(key, &head);
                if !self.slots.is_empty() {
                    prefetch(&self.slots[hash & (self.slots.len() - 1)]);
                }
                ring[at] = (key, head, hash, slot.count);
            }
        }
    }

    /// True when `key` was counted.
    pub fn contains(&self, key: &[u8]) -> bool {
        if self.flat.is_some() {
            return self.iter().any(|(k, _)| k == key); // (no hash table: read through; see count_new)
        }
        !self.slots.is_empty() && self.find(key, &head_of(key)).1
    }

    /// How many keys of this table none of `earlier` holds: summed over tables in turn, the number of
    /// distinct keys of all of them, without merging them (a superword run's stage 2 keeps its threads'
    /// tables apart: merging them made a third table as large as both, the run's peak memory).
    pub fn count_new(&self, earlier: &[&Table]) -> usize {
        if earlier.iter().all(|t| t.is_empty()) {
            return self.len(); // (the first table: no key to look up)
        }
        if self.flat.is_some() || earlier.iter().any(|t| t.flat.is_some()) {
            let seen: rustc_hash::FxHashSet<&[u8]> =
                earlier.iter().flat_map(|t| t.iter().map(|(key, _)| key)).collect();
            return self.iter().filter(|(key, _)| !seen.contains(key)).count();
        }
        // As in `add` and `merge`: this table's slots (in order of first appearance, so at random) and the
        // earlier tables' slots are cache misses; both are fetched ahead so that several are under way.
        const LAG: usize = 8;
        let positions = &self.positions;
        let mut ring: [(&[u8], [u8; INLINE], usize); LAG] = [(&[], [0; INLINE], 0); LAG];
        let mut new = 0;
        for j in 0..positions.len() + LAG {
            if let Some(&ahead) = positions.get(j + 2 * LAG) {
                prefetch(&self.slots[ahead as usize]);
            }
            let at = j % LAG;
            if j >= LAG {
                let (key, head, hash) = ring[at];
                if !earlier.iter().any(|t| !t.slots.is_empty() && t.find_hashed(key, &head, hash).1) {
                    new += 1;
                }
            }
            if let Some(&position) = positions.get(j) {
                let key = self.key(&self.slots[position as usize]);
                let head = head_of(key);
                let hash = hash_of(key, &head);
                for t in earlier {
                    if !t.slots.is_empty() {
                        prefetch(&t.slots[hash & (t.slots.len() - 1)]);
                    }
                }
                ring[at] = (key, head, hash);
            }
        }
        new
    }

    /// The keys as the words of a merge loop over the 256 byte tokens (token id = byte value): every key's
    /// bytes widened to u32 one after the other, each key's length and its count, in order of first
    /// appearance. A run from scratch hands these to the merge loop instead of a dict of a `str` per key
    /// (which took 0.14 s of the counting phase on 100 MB, one thread holding the GIL: issue 22).
    pub fn byte_words(&self) -> (Vec<u32>, Vec<u32>, Vec<i64>) {
        let (mut ids, mut lengths, mut counts) =
            (Vec::new(), Vec::with_capacity(self.len()), Vec::with_capacity(self.len()));
        for (key, n) in self.iter() {
            ids.extend(key.iter().map(|&b| b as u32));
            lengths.push(key.len() as u32);
            counts.push(n);
        }
        (ids, lengths, counts)
    }

    /// The number of bytes of all keys: how many ids `byte_words` gives.
    pub fn key_bytes(&self) -> usize {
        self.iter().map(|(key, _)| key.len()).sum()
    }

    /// `byte_words` with the ids written into `out` as u32s in native byte order (`out` is 4 x `key_bytes`
    /// bytes long): for a caller that has the buffer the ids go to, not a Vec of them to copy (issue 22).
    pub fn byte_words_into(&self, out: &mut [u8]) -> (Vec<u32>, Vec<i64>) {
        assert_eq!(out.len(), 4 * self.key_bytes(), "a buffer of 4 bytes per key byte");
        let (mut lengths, mut counts) = (Vec::with_capacity(self.len()), Vec::with_capacity(self.len()));
        let mut slots = out.chunks_exact_mut(4);
        for (key, n) in self.iter() {
            for (&b, slot) in key.iter().zip(slots.by_ref()) {
                slot.copy_from_slice(&u32::from(b).to_ne_bytes());
            }
            lengths.push(key.len() as u32);
            counts.push(n);
        }
        (lengths, counts)
    }

    /// The entries (key, count) in order of first appearance.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&[u8], i64)> + '_ {
        self.iter_range(0, self.len())
    }

    /// The entries from the `start`-th to before the `end`-th in order of first appearance (`iter`'s).
    pub fn iter_range(&self, start: usize, end: usize) -> impl ExactSizeIterator<Item = (&[u8], i64)> + '_ {
        assert!(start <= end && end <= self.len(), "entries {start}..{end} of {}", self.len());
        (start..end).map(|i| self.entry_ahead(i))
    }

    /// `entry(i)`, the slot of entry `i + 16` fetched meanwhile: read in order of first appearance, the
    /// slots are at random in a table of megabytes, a cache miss each (a superword run's stage 2 reads its
    /// half a million distinct parts so as it encodes them, and a run from scratch its pre-tokens as it
    /// makes the merge loop's words). Flat entries are read in order, with nothing to fetch.
    #[inline]
    fn entry_ahead(&self, i: usize) -> (&[u8], i64) {
        if self.flat.is_none() {
            if let Some(&ahead) = self.positions.get(i + 16) {
                prefetch(&self.slots[ahead as usize]);
            }
        }
        self.entry(i)
    }

    /// The entries in order of first appearance.
    fn entries(&self) -> Vec<(&[u8], i64)> {
        self.iter().collect()
    }

    /// The table as a frame (the layout of `encode_table` in bpe_studio/engine/training/counting.py).
    pub fn to_frame(&self) -> Vec<u8> {
        let entries = self.entries();
        let n = entries.len();
        let text: usize = entries.iter().map(|(k, _)| k.len()).sum();
        // Keys are separated by NUL when none holds one (an empty table counts as separated).
        let separated = entries.iter().all(|(k, _)| !k.contains(&0));
        let size = if separated { text + n.saturating_sub(1) } else { text };
        let mut out = Vec::with_capacity(HEADER + size + if separated { ITEM * n } else { 2 * ITEM * n });
        out.extend_from_slice(&(n as u64).to_le_bytes());
        out.extend_from_slice(&(size as u64).to_le_bytes());
        out.push(separated as u8);
        for (i, (key, _)) in entries.iter().enumerate() {
            if separated && i > 0 {
                out.push(0);
            }
            out.extend_from_slice(key);
        }
        if !separated {
            for (key, _) in &entries {
                out.extend_from_slice(&(key.len() as u64).to_le_bytes());
            }
        }
        for (_, count) in &entries {
            out.extend_from_slice(&count.to_le_bytes());
        }
        out
    }

    /// Adds the counts of a frame, checked against its declared sizes first (a frame comes from another
    /// process: never trusted). On Err nothing was added.
    pub fn add_frame(&mut self, frame: &[u8]) -> Result<(), String> {
        let parsed = parse_frame(frame)?;
        let mut seen: FxHashMap<&[u8], ()> = FxHashMap::default();
        seen.reserve(parsed.len());
        for (key, _) in &parsed {
            if seen.insert(key, ()).is_some() {
                return Err("a count table frame holds the same key twice".into());
            }
        }
        drop(seen);
        self.reserve(parsed.len().saturating_sub(self.len() / 2));
        for (key, count) in parsed {
            self.bump(key, count);
        }
        Ok(())
    }
}

/// Compacts each of `tables` (`Table::compact`), the last first, and returns the number of distinct keys
/// among them all (`count_new` of each over the ones before it, summed), in one pass over each table
/// (`compact_counting_new`). One table at a time: each one's hash table is freed before the next one's
/// flat entries are made.
pub fn compact_all(tables: &mut [&mut Table]) -> usize {
    let mut distinct = 0;
    for i in (0..tables.len()).rev() {
        let (earlier, rest) = tables.split_at_mut(i);
        let earlier: Vec<&Table> = earlier.iter().map(|t| &**t).collect();
        distinct += rest[0].compact_counting_new(&earlier);
    }
    distinct
}

/// The first code point of `text` at or beyond `size`, if any.
fn beyond(text: &str, size: usize) -> Option<u32> {
    if size >= 0x110000 || (size >= 128 && text.is_ascii()) {
        return None;
    }
    text.chars().find(|&c| c as usize >= size).map(|c| c as u32)
}

fn u64_at(frame: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(frame[at..at + 8].try_into().expect("8 bytes"))
}

/// The (key, count) pairs of a frame, checked as `decode_table` checks them.
pub(crate) fn parse_frame(frame: &[u8]) -> Result<Vec<(&[u8], i64)>, String> {
    if frame.len() < HEADER {
        return Err("a count table frame is shorter than its header".into());
    }
    let (n, size) = (u64_at(frame, 0), u64_at(frame, 8));
    let separated = match frame[16] {
        0 => false,
        1 => true,
        other => return Err(format!("a count table frame's separator flag is {other}, not 0 or 1")),
    };
    // Computed in u128: declared sizes near 2**64 must not wrap around to a small, plausible length.
    let per_key = if separated { ITEM } else { 2 * ITEM } as u128;
    let expected = HEADER as u128 + size as u128 + per_key * n as u128;
    if frame.len() as u128 != expected {
        return Err(format!("a count table frame holds {} bytes, not the {n} keys it declares", frame.len()));
    }
    let (n, size) = (n as usize, size as usize);
    let text = &frame[HEADER..HEADER + size];
    let values = &frame[frame.len() - ITEM * n..];
    let mut keys: Vec<&[u8]> = Vec::with_capacity(n);
    if separated {
        if n > 0 {
            keys.extend(text.split(|&b| b == 0));
        }
    } else {
        let lengths = &frame[HEADER + size..HEADER + size + ITEM * n];
        let mut start = 0usize;
        for i in 0..n {
            let len = u64_at(lengths, i * ITEM);
            if len > (size - start) as u64 {
                return Err("a count table frame's key lengths do not add up to its text".into());
            }
            keys.push(&text[start..start + len as usize]);
            start += len as usize;
        }
        if start != size {
            return Err("a count table frame's key lengths do not add up to its text".into());
        }
    }
    if keys.len() != n {
        return Err(format!("a count table frame holds {} keys, not the {n} it declares", keys.len()));
    }
    Ok(keys.into_iter().enumerate().map(|(i, k)| (k, u64_at(values, i * ITEM) as i64)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{self, classes};

    fn counted(texts: &[&str]) -> Table {
        let mut table = Table::default();
        table.add(texts, classes(), pretok::scanner("gpt2").unwrap()).unwrap();
        table
    }

    #[test]
    fn byte_words_are_the_keys_bytes_lengths_and_counts_in_order() {
        let table = counted(&["ab é ab", ""]);
        let (ids, lengths, counts) = table.byte_words();
        assert_eq!(lengths, [2, 3, 3]);
        assert_eq!(counts, [1, 1, 1]);
        assert_eq!(ids, [97, 98, 32, 0xc3, 0xa9, 32, 97, 98]);
        assert_eq!(Table::default().byte_words(), (vec![], vec![], vec![]));
        let mut out = vec![0u8; 4 * table.key_bytes()];
        assert_eq!(table.byte_words_into(&mut out), (lengths, counts));
        let written: Vec<u32> =
            out.chunks_exact(4).map(|b| u32::from_ne_bytes(b.try_into().unwrap())).collect();
        assert_eq!(written, ids);
    }

    #[test]
    fn counts_and_first_appearances_are_those_of_the_pretokens_in_order() {
        // Many more pre-tokens than the lag between finding and counting one, new and repeated ones
        // mixed, short and long (over INLINE bytes), over several texts and a table that grows meanwhile.
        let words: Vec<String> = (0..3000).map(|i| format!(" w{}{}", i % 701, "x".repeat(i % 23))).collect();
        let texts: Vec<String> = words.chunks(37).map(|c| c.concat()).collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let mut expected: Vec<(String, i64)> = Vec::new();
        let mut index: FxHashMap<&str, usize> = FxHashMap::default();
        for text in &refs {
            for piece in crate::testing::pieces("gpt2", text) {
                let at = *index.entry(piece).or_insert_with(|| {
                    expected.push((piece.to_string(), 0));
                    expected.len() - 1
                });
                expected[at].1 += 1;
            }
        }
        let table = counted(&refs);
        assert_eq!(entries(&table), expected);
        assert_eq!(table.total(), expected.iter().map(|(_, n)| n).sum::<i64>());
    }

    /// The table's entries as text, in order of first appearance.
    fn entries(table: &Table) -> Vec<(String, i64)> {
        table.entries().into_iter().map(|(k, n)| (String::from_utf8(k.to_vec()).unwrap(), n)).collect()
    }

    fn owned(list: &[(&str, i64)]) -> Vec<(String, i64)> {
        list.iter().map(|&(k, n)| (k.to_string(), n)).collect()
    }

    #[test]
    fn pre_tokens_are_counted_in_order_of_first_appearance() {
        let table = counted(&["b a b", "it's a"]);
        assert_eq!(entries(&table), owned(&[("b", 1), (" a", 2), (" b", 1), ("it", 1), ("'s", 1)]));
        assert_eq!((table.len(), table.total()), (5, 6));
        assert!(Table::default().is_empty() && !table.is_empty());
    }

    #[test]
    fn a_frame_is_laid_out_as_encode_table_lays_it_out() {
        let mut expected = Vec::new();
        expected.extend(2u64.to_le_bytes()); // keys
        expected.extend(4u64.to_le_bytes()); // bytes of key text: "a", NUL, " b"
        expected.push(1); // keys separated by NUL
        expected.extend(b"a\0 b");
        expected.extend(2i64.to_le_bytes());
        expected.extend(1i64.to_le_bytes());
        assert_eq!(counted(&["a", "a b"]).to_frame(), expected);
        assert_eq!(Table::default().to_frame(), [&[0u8; 16][..], &[1]].concat(), "an empty table");
    }

    #[test]
    fn keys_holding_nul_are_framed_with_their_lengths() {
        let table = counted(&["a\0\0 b"]); // "a", "\0\0", " b"
        let mut expected = Vec::new();
        expected.extend(3u64.to_le_bytes());
        expected.extend(5u64.to_le_bytes());
        expected.push(0);
        expected.extend(b"a\0\0 b");
        for n in [1u64, 2, 2, 1, 1, 1] {
            expected.extend(n.to_le_bytes()); // three lengths, then three counts
        }
        assert_eq!(table.to_frame(), expected);
        let mut back = Table::default();
        back.add_frame(&expected).unwrap();
        assert_eq!(entries(&back), entries(&table));
    }

    #[test]
    fn merging_adds_counts_and_appends_new_keys_in_the_other_tables_order() {
        let mut mine = counted(&["x y"]);
        let theirs = counted(&["z y y x"]);
        mine.merge(&theirs);
        assert_eq!(entries(&mine), owned(&[("x", 1), (" y", 3), ("z", 1), (" x", 1)]));
        assert_eq!(mine.total(), 6);
        assert_eq!(entries(&theirs), owned(&[("z", 1), (" y", 2), (" x", 1)]), "left as it was");
    }

    #[test]
    fn special_tokens_cut_as_pythons_split_does() {
        fn cut<'t>(text: &'t str, specials: &[&str]) -> (Vec<&'t str>, usize) {
            let specials: Vec<&[u8]> = specials.iter().map(|s| s.as_bytes()).collect();
            split_specials(text, &specials)
        }
        assert_eq!(cut("abc", &[]), (vec!["abc"], 0));
        assert_eq!(cut("", &["<s>"]), (vec![""], 0));
        assert_eq!(cut("<s>", &["<s>"]), (vec!["", ""], 1));
        assert_eq!(cut("a<s><s>b<s", &["<s>"]), (vec!["a", "", "b<s"], 2));
        // Longest first: at one position the first that matches wins; the leftmost position first.
        assert_eq!(cut("x<a><a>y<a>", &["<a><a>", "<a>"]), (vec!["x", "y", ""], 2));
        assert_eq!(cut("<b<a>", &["<b<a>x", "<a>"]), (vec!["<b", ""], 1));
        // Overlapping matches: the search goes on from the end of the one taken.
        assert_eq!(cut("aaaa", &["aaa", "aa"]), (vec!["", "a"], 1));
        assert_eq!(cut("é中<|e|>🙃", &["<|e|>"]), (vec!["é中", "🙃"], 1));
    }

    #[test]
    fn bytes_that_are_not_utf8_count_nothing() {
        let mut table = Table::default();
        let scan = pretok::scanner("gpt2").unwrap();
        assert_eq!(table.add_bytes(b"a \xff b", &[], classes(), scan), Ok(None));
        assert!(table.is_empty());
        assert_eq!(table.add_bytes(b"a b<s>c<s>", &[b"<s>"], classes(), scan), Ok(Some((2, 2))));
        assert_eq!(entries(&table), owned(&[("a", 1), (" b", 1), ("c", 1)]));
    }

    #[test]
    fn a_merge_of_many_keys_equals_adding_them_one_at_a_time_in_order() {
        // The merge fetches keys ahead (a ring of LAG): its result must be the plain loop's, whatever the
        // sizes (fewer keys than the ring, a table that grows during the merge), short and long keys alike.
        let word = |i: usize| {
            if i.is_multiple_of(3) {
                format!(" {i}longer-than-sixteen-bytes")
            } else {
                format!(" w{i}")
            }
        };
        for (mine_keys, their_keys) in [(0, 0), (0, 3), (5, 0), (3, 9), (10, 5000), (4000, 300), (2000, 6000)]
        {
            let own = || {
                let mut table = Table::default();
                for i in 0..mine_keys {
                    table.bump(word(i * 2).as_bytes(), (i % 5) as i64 + 1);
                }
                table
            };
            let (mut mine, mut expected) = (own(), own());
            let mut theirs = Table::default();
            for i in (0..their_keys).rev() {
                theirs.bump(word(i).as_bytes(), (i % 7) as i64 + 1);
            }
            for (key, n) in theirs.iter() {
                expected.bump(key, n);
            }
            mine.merge(&theirs);
            assert_eq!(entries(&mine), entries(&expected), "{mine_keys} and {their_keys} keys");
            assert_eq!(mine.total(), expected.total());
        }
    }

    #[test]
    fn thousands_of_keys_short_and_long_survive_growth_and_a_frame_round_trip() {
        // Keys past INLINE bytes keep their bytes apart; the table grows from 64 slots many times.
        let letters = |i: usize| [i / 676, i / 26 % 26, i % 26].map(|d| (b'a' + d as u8) as char);
        let words: Vec<String> =
            (0..5_000).map(|i| format!("w{}{}", "x".repeat(i % 40), String::from_iter(letters(i)))).collect();
        let text = words.join(" ") + " " + &words[..100].join(" ");
        let table = counted(&[&text]);
        assert_eq!(table.len(), 5_000 + 1); // the first word comes back with a space
        assert_eq!(table.total(), 5_100);
        let found = entries(&table);
        assert_eq!(found[0], (words[0].clone(), 1));
        assert_eq!(found[39], (format!(" {}", words[39]), 2), "a long key counted twice");
        let mut back = Table::default();
        back.add_frame(&table.to_frame()).unwrap();
        assert_eq!(back.to_frame(), table.to_frame());
    }

    #[test]
    fn growing_keeps_each_keys_hash_and_finds_every_key_in_its_probe() {
        // Keys moved in the old slots' order (`rehash`): each must sit in the probe its hash starts, with no
        // empty slot before it there, whatever came through growth, a thaw and a merge.
        let key = |i: usize| format!("k{i}{}", "-".repeat(i % 23)).into_bytes();
        let mut table = Table::default();
        for i in 0..20_000 {
            table.add_key(&key(i), 1 + (i % 3) as i64);
        }
        table.compact();
        let mut other = Table::default();
        for i in (10_000..30_000).rev() {
            other.add_key(&key(i), 2);
        }
        table.merge(&other);
        assert_eq!(table.len(), 30_000);
        assert_eq!(table.hashes.len(), table.len());
        let mask = table.slots.len() - 1;
        for (order, &position) in table.positions.iter().enumerate() {
            let slot = table.slots[position as usize];
            assert_eq!(slot.order as usize, order);
            let hash = hash_of(table.key(&slot), &slot.head);
            assert_eq!(table.hashes[order], hash as u32, "the hash kept for key {order}");
            let mut i = hash & mask;
            while i != position as usize {
                assert_ne!(table.slots[i].len, u32::MAX, "an empty slot in key {order}'s probe");
                i = (i + 1) & mask;
            }
        }
        for i in 0..30_000 {
            assert!(table.contains(&key(i)), "key {i}");
        }
        assert!(!table.contains(b"k30000"));
    }

    #[test]
    fn a_keys_head_is_its_first_sixteen_bytes_zero_padded() {
        let bytes: Vec<u8> = (1..=40u8).map(|b| b.wrapping_mul(37) | 1).collect();
        for n in 0..=bytes.len() {
            let key = &bytes[..n];
            let mut want = [0u8; INLINE];
            want[..n.min(INLINE)].copy_from_slice(&key[..n.min(INLINE)]);
            assert_eq!(head_of(key), want, "{n} bytes");
        }
        assert_eq!(head_of(b"\0\xff\0"), [0, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn a_bad_frame_is_refused_and_nothing_is_added() {
        let good = counted(&["a b"]).to_frame();
        let mut table = counted(&["a"]);
        let before = table.to_frame();
        let mut wrong_flag = good.clone();
        wrong_flag[16] = 2;
        let mut duplicate = Vec::new();
        duplicate.extend(2u64.to_le_bytes());
        duplicate.extend(3u64.to_le_bytes());
        duplicate.push(1);
        duplicate.extend(b"a\0a");
        duplicate.extend([0u8; 16]);
        let mut huge = good.clone();
        huge[8..16].copy_from_slice(&u64::MAX.to_le_bytes()); // declared sizes must not wrap around
        let cases: [(&[u8], &str); 5] = [
            (&good[..10], "shorter than its header"),
            (&wrong_flag, "separator flag is 2"),
            (&good[..good.len() - 1], "not the 2 keys it declares"),
            (&duplicate, "the same key twice"),
            (&huge, "not the 2 keys it declares"),
        ];
        for (frame, message) in cases {
            let err = table.add_frame(frame).unwrap_err();
            assert!(err.contains(message), "{err}");
            assert_eq!(table.to_frame(), before);
        }
    }

    #[test]
    fn a_growing_table_doubles_and_stays_at_most_three_quarters_full() {
        let mut table = Table::default();
        let mut sizes = vec![];
        for i in 0..100_000u32 {
            table.bump(&i.to_le_bytes(), 1);
            if sizes.last() != Some(&table.slots.len()) {
                sizes.push(table.slots.len());
            }
            assert!(table.len() * 4 <= table.slots.len() * 3);
        }
        assert!(sizes.windows(2).all(|w| w[1] == 2 * w[0]), "{sizes:?}");
        assert_eq!(table.slots.len(), 1 << 18, "100,000 keys are more than 3/4 of 2**17");
        let mut merged = Table::default();
        merged.merge(&table);
        assert!(merged.len() * 4 <= merged.slots.len() * 3 && merged.slots.len() <= 1 << 18);
    }

    #[test]
    fn keys_new_to_earlier_tables_add_up_to_the_merged_tables_keys() {
        // Short and long keys (past INLINE bytes), some in both tables, some in one.
        let long = "y".repeat(30);
        let a = counted(&[&format!("a b {long} c")]);
        let b = counted(&[&format!("b d {long} {long}x e")]);
        let c = counted(&[""]);
        let mut merged = counted(&[&format!("a b {long} c")]);
        merged.merge(&b);
        assert_eq!(a.count_new(&[]), a.len());
        assert_eq!(b.count_new(&[&a]), 4, "\"b\" (a has \" b\"), \" d\", \" {long}x\", \" e\"");
        assert_eq!(a.len() + b.count_new(&[&a]) + c.count_new(&[&a, &b]), merged.len());
        assert!(a.contains(format!(" {long}").as_bytes()) && !a.contains(b" d") && !c.contains(b"a"));
        let listed: Vec<(&[u8], i64)> = b.iter().collect();
        assert_eq!(listed, b.entries());
    }

    #[test]
    fn text_beyond_the_class_table_counts_nothing() {
        let mut table = counted(&["a"]);
        let scan = pretok::scanner("gpt2").unwrap();
        assert_eq!(table.add(&["b c", "d é"], &classes()[..128], scan), Err(0xe9));
        assert_eq!(entries(&table), owned(&[("a", 1)]));
        assert_eq!(beyond("abc", 128), None);
        assert_eq!(beyond("ab日", 0x10000), None);
        assert_eq!(beyond("ab日", 128), Some(0x65e5));
    }

    /// Random text of letters, digits, spaces, newlines, punctuation, a mark, non-ASCII letters and the
    /// special token, `len` characters.
    fn random_text(next: &mut impl FnMut(u64) -> u64, len: usize) -> String {
        const PARTS: [&str; 16] =
            ["a", "b", "Z", " ", " ", "  ", "\n", "1", "23", ".", ",", "!?", "é", "\u{301}", "\t", "<|e|>"];
        (0..len).map(|_| PARTS[next(PARTS.len() as u64) as usize]).collect()
    }

    #[test]
    fn counting_both_splits_in_one_pass_equals_counting_each_alone() {
        let mut next = testing::xorshift(23);
        let specials: [&[u8]; 1] = [b"<|e|>"];
        for preset in pretok::SCANNERS {
            for _ in 0..40 {
                let len = next(200) as usize;
                let text = random_text(&mut next, len);
                let (mut first, mut words) = (Table::default(), Table::default());
                let scan = pretok::chars_scanner(preset).unwrap();
                let found =
                    first.add_bytes_with_superwords(&mut words, text.as_bytes(), &specials, classes(), scan);
                let (mut alone, mut words_alone) = (Table::default(), Table::default());
                let expected =
                    alone.add_bytes(text.as_bytes(), &specials, classes(), pretok::scanner(preset).unwrap());
                let superbpe = pretok::scanner("superbpe").unwrap();
                words_alone.add_bytes(text.as_bytes(), &specials, classes(), superbpe).unwrap();
                assert_eq!(found, expected, "{preset} {text:?}");
                assert_eq!(entries(&first), entries(&alone), "{preset} {text:?}");
                assert_eq!(entries(&words), entries(&words_alone), "{preset} {text:?}");
                assert_eq!((first.total(), words.total()), (alone.total(), words_alone.total()));
            }
        }
        // Bytes that are not UTF-8, and a code point beyond the class table: nothing counted in either.
        let (mut first, mut words) = (Table::default(), Table::default());
        let scan = pretok::chars_scanner("gpt2").unwrap();
        assert_eq!(first.add_bytes_with_superwords(&mut words, b"ab \xff", &[], classes(), scan), Ok(None));
        let beyond = "ab \u{10400}".as_bytes();
        assert_eq!(
            first.add_bytes_with_superwords(&mut words, beyond, &[], &classes()[..256], scan),
            Err(0x10400)
        );
        assert!(first.is_empty() && words.is_empty());
    }

    #[test]
    fn a_compact_table_keeps_its_entries_order_and_total_and_counts_on_as_before() {
        let mut next = testing::xorshift(7);
        let texts: Vec<String> = (0..300).map(|_| random_text(&mut next, 40)).collect();
        let texts: Vec<&str> = texts.iter().map(|t| t.as_str()).collect();
        let full = counted(&texts);
        let mut flat = counted(&texts);
        flat.compact();
        flat.compact(); // a second time: nothing to do
        assert_eq!((entries(&flat), flat.total(), flat.len()), (entries(&full), full.total(), full.len()));
        assert_eq!(flat.to_frame(), full.to_frame());
        assert_eq!(flat.byte_words(), full.byte_words());
        let middle: Vec<_> = flat.iter_range(3, 9).collect();
        assert_eq!(middle, full.iter_range(3, 9).collect::<Vec<_>>());
        // Looked up and counted into again: the hash table is built again first.
        let other = counted(&["zz ab", "a"]);
        assert_eq!(other.count_new(&[&flat]), other.count_new(&[&full]));
        assert_eq!(flat.count_new(&[&other]), full.count_new(&[&other]));
        let key = full.iter().next().unwrap().0.to_vec();
        assert!(flat.contains(&key) && !flat.contains(b"not a key"));
        let (mut again, mut full_again) = (flat, counted(&texts));
        again.add(&["zz ab"], classes(), pretok::scanner("gpt2").unwrap()).unwrap();
        full_again.add(&["zz ab"], classes(), pretok::scanner("gpt2").unwrap()).unwrap();
        assert_eq!((entries(&again), again.total()), (entries(&full_again), full_again.total()));
        let mut merged = counted(&["q"]);
        let mut flat_other = counted(&texts);
        flat_other.compact();
        merged.merge(&flat_other);
        let mut expected = counted(&["q"]);
        expected.merge(&full);
        assert_eq!(entries(&merged), entries(&expected));
        let mut empty = Table::default();
        empty.compact();
        assert!(empty.is_empty() && empty.iter().next().is_none());
    }

    #[test]
    fn a_compact_table_keeps_its_long_keys_in_place_and_thaws_back() {
        // Keys on either side of INLINE bytes, interleaved: the flat entries read short ones from their
        // copy and long ones from the table's own bytes, in order; counted into again, the table thaws.
        let key = |i: usize| format!("{i}:{}", "y".repeat(i % 37)).into_bytes();
        let mut table = Table::default();
        let mut expected = Table::default();
        for i in (0..5_000).chain(0..100) {
            table.add_key(&key(i), 1 + (i % 4) as i64);
            expected.add_key(&key(i), 1 + (i % 4) as i64);
        }
        table.compact();
        assert!(table.flat.as_ref().is_some_and(|f| !f.long.is_empty() && !f.short.is_empty()));
        assert_eq!((entries(&table), table.total()), (entries(&expected), expected.total()));
        assert_eq!(table.to_frame(), expected.to_frame());
        table.add_key(&key(7_000), 2);
        expected.add_key(&key(7_000), 2);
        table.add_key(&key(30), 5);
        expected.add_key(&key(30), 5);
        assert!(table.flat.is_none());
        assert_eq!((entries(&table), table.total()), (entries(&expected), expected.total()));
    }

    #[test]
    fn compacting_tables_together_counts_their_distinct_keys_as_count_new_does() {
        // Three tables sharing some keys (short and long), an empty one among them, and flat ones (the
        // two-pass way): each comes out as `compact` leaves it, and the count is count_new's sum.
        let mut next = testing::xorshift(11);
        let texts: Vec<String> = (0..400).map(|_| random_text(&mut next, 60)).collect();
        let make = |range: std::ops::Range<usize>| {
            let part: Vec<&str> = texts[range].iter().map(|t| t.as_str()).collect();
            counted(&part)
        };
        for (ranges, flat_first) in [
            (vec![0..200, 150..300, 250..400], false),
            (vec![0..200, 400..400, 100..300], false),
            (vec![0..10, 0..10], false),
            (vec![0..200, 150..300], true),
            (vec![], false),
            (vec![5..50, 0..0], false),
        ] {
            let originals: Vec<Table> = ranges.iter().map(|r| make(r.clone())).collect();
            let expected: usize = (0..originals.len())
                .map(|i| originals[i].count_new(&originals[..i].iter().collect::<Vec<_>>()))
                .sum();
            let mut tables: Vec<Table> = ranges.iter().map(|r| make(r.clone())).collect();
            if flat_first {
                tables[0].compact();
            }
            let mut refs: Vec<&mut Table> = tables.iter_mut().collect();
            assert_eq!(compact_all(&mut refs), expected, "{ranges:?}");
            for (table, original) in tables.iter().zip(&originals) {
                assert!(table.flat.is_some());
                assert_eq!((entries(table), table.total()), (entries(original), original.total()));
            }
        }
    }
}
