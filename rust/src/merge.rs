//! The BPE merge loop over a table of unique pre-tokens, with the semantics of the Python `MergeLoop`
//! (bpe_studio/engine/training/merge.py): the most frequent pair is merged, ties going to the greatest
//! `(left bytes, right bytes)`; a merge whose bytes are already a token reuses that token's id; pairs whose
//! merged token would be longer than `max_token_length` bytes are never merged.
//!
//! Data structures (why a merge costs in proportion to the occurrences it touches):
//!
//! * every pre-token is a run of *positions* in one array; each position holds a token id (`sym`), links
//!   to its live neighbours (`prev`, `next`) and its pre-token (`word`), so a merge rewrites two positions
//!   and two links. The four fields of a position share one 16-byte record: a merge visits positions
//!   all over the array, waiting on memory more than computing (the load of a listed position was 40% of
//!   a CJK merge loop), so `apply` prefetches the records a few positions ahead, one cache line each;
//! * `pairs` (rust/src/pair_table.rs, the key in its slot, looked up ahead with a prefetch): pair -> its
//!   exact count in the corpus (frequency-weighted) and the positions where it was seen starting, a list
//!   in one arena whose place (or, for one position, the position) is in the pair's slot. Entries may be
//!   stale (the position lost the pair to another merge); each is checked against `sym`/`next` when used,
//!   which is cheaper than keeping the lists exact;
//! * a lazy max-heap of (count, left bytes, right bytes), rust/src/merge_heap.rs: a count that drops
//!   leaves a stale entry that is corrected when it reaches the top; only pairs whose count grew are
//!   pushed again;
//! * beside the heap, the entries of pairs that counted `LOW` (1) when listed, unordered: on CJK text most
//!   pairs (two characters side by side) occur once, and in the heap they made it ten times larger (every
//!   push and pop a walk through a table far larger than the cache) though they are merged last, if at
//!   all. They join the heap once its top counts `LOW` or less (see `best`).
//!
//! A long repetitive pre-token (`a` * 100 000) is no worse than many short ones: a merge visits each
//! occurrence of its pair once, and every occurrence it visits disappears.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::merge_heap::{prefix_of, Entry, PairHeap};
use crate::pair_table::PairTable;

/// Marks a link to no position (the start or end of a pre-token) and a position merged into its left.
const NONE: u32 = u32::MAX;

#[inline]
fn key(a: u32, b: u32) -> u64 {
    ((a as u64) << 32) | b as u64
}

#[inline]
fn unkey(k: u64) -> (u32, u32) {
    ((k >> 32) as u32, k as u32)
}

/// One pair's count and the positions where it was seen (left element of the pair).
///
/// Twenty-four bytes, its positions list's place in the arena (`Lists`) inside it: a merge late in a CJK
/// run updates four pairs per occurrence, each a random read of the pair table, and a list kept apart (an
/// index into a table of spans) was another random read each (issue 22).
#[derive(Clone, Copy, Default)]
struct Pair {
    count: i64,
    /// Its positions list: `Lists::get(&list)`.
    list: Span,
    /// The number of the merge that last grew the count: a pair is pushed on the heap once per merge.
    grown_in: u32,
}

/// The pairs' positions lists, in one arena.
///
/// Every list longer than one position lives in the arena (`data`), as a block of `cap` slots at `off`: a
/// list that outgrows its block moves to one twice as large, and freed blocks are reused by size class. A
/// list of one position holds it in its `Span` itself (`cap` 0): most pairs on CJK text (two characters
/// side by side) occur once, and need no block. The table holds a list per pair (a million on 2 MB of
/// Chinese): as a million small `Vec`s, freeing them was 10-25 ms at the end of every run (a background
/// thread that still ran while Python shut down, issue 22); as one arena it is a single free.
#[derive(Default)]
struct Lists {
    data: Vec<u32>,
    /// Free blocks by size class: `blocks[k]` holds offsets of blocks of at least `1 << k` slots.
    blocks: Vec<Vec<u32>>,
}

/// A list: where it lives in `Lists::data`, or with `cap` 0, its one position (`off`) or none.
#[derive(Clone, Copy, Default)]
struct Span {
    off: u32,
    len: u32,
    cap: u32,
}

/// The smallest block a list grows into.
const BLOCK_MIN: u32 = 4;

/// An offset in `Lists::data` as a u32 (the arena holds a few times the positions, which are u32s).
fn arena_offset(off: usize) -> u32 {
    u32::try_from(off).expect("positions lists: more than 4 billion slots; train on a smaller corpus")
}

impl Lists {
    /// Lists laid out in one go: `data` becomes the arena (which must be empty), and the spans of runs of
    /// `lengths` (in order, each at least 2) over it are returned.
    fn lay_out(&mut self, data: Vec<u32>, lengths: impl Iterator<Item = u32>) -> Vec<Span> {
        debug_assert!(self.data.is_empty());
        let mut off = 0u32;
        let spans = lengths
            .map(|len| {
                let span = Span { off, len, cap: len };
                off += len;
                span
            })
            .collect();
        debug_assert_eq!(off as usize, data.len());
        self.data = data;
        spans
    }

    /// The positions of `list`.
    #[inline]
    fn get<'a>(&'a self, list: &'a Span) -> &'a [u32] {
        if list.cap == 0 {
            &std::slice::from_ref(&list.off)[..list.len as usize]
        } else {
            &self.data[list.off as usize..(list.off + list.len) as usize]
        }
    }

    /// Gives the block of `list` back, to be reused by its size class (the largest that fits in it).
    #[inline]
    fn release(&mut self, list: Span) {
        if list.cap == 0 {
            return;
        }
        let k = (31 - list.cap.leading_zeros()) as usize;
        if self.blocks.len() <= k {
            self.blocks.resize_with(k + 1, Vec::new);
        }
        self.blocks[k].push(list.off);
    }

    /// Moves `list` to a block of at least `need` slots (a power of two).
    #[cold]
    fn grow(&mut self, list: &mut Span, need: u32) {
        let old = *list;
        let cap = need.max(BLOCK_MIN).next_power_of_two();
        let k = cap.trailing_zeros() as usize;
        let off = match self.blocks.get_mut(k).and_then(Vec::pop) {
            Some(off) => off,
            None => {
                let off = self.data.len();
                self.data.resize(off + cap as usize, 0);
                arena_offset(off)
            }
        };
        if old.cap == 0 {
            if old.len == 1 {
                self.data[off as usize] = old.off;
            }
        } else {
            self.data.copy_within(old.off as usize..(old.off + old.len) as usize, off as usize);
        }
        *list = Span { off, len: old.len, cap };
        self.release(old);
    }

    /// Appends `position` to `list`.
    #[inline]
    fn push(&mut self, list: &mut Span, position: u32) {
        if list.cap == 0 && list.len == 0 {
            *list = Span { off: position, len: 1, cap: 0 };
            return;
        }
        if list.len >= list.cap {
            self.grow(list, list.len + 1); // also a second position after one held in the span
        }
        self.data[(list.off + list.len) as usize] = position;
        list.len += 1;
    }

    /// Appends `positions` to `list`.
    fn extend(&mut self, list: &mut Span, positions: &[u32]) {
        match positions {
            [] => return,
            [position] => return self.push(list, *position),
            _ => {}
        }
        let need = list.len + positions.len() as u32;
        if need > list.cap {
            self.grow(list, need);
        }
        let at = (list.off + list.len) as usize;
        self.data[at..at + positions.len()].copy_from_slice(positions);
        list.len = need;
    }

    /// Copies `list` into `out` (cleared first) and empties it.
    fn take_into(&mut self, list: &mut Span, out: &mut Vec<u32>) {
        out.clear();
        out.extend_from_slice(self.get(list));
        list.len = 0;
    }
}

/// How many listed positions ahead `apply` fetches a position's record (twice as many) and its count, and
/// `commit` a pair's slot.
const AHEAD: usize = 8;

/// `AHEAD` for a merge that gathers its changes (`BATCH_MIN`): each step is less work, so the fetches go
/// further ahead to overlap as many misses (~10% less time in a CJK run's first 1,000 merges; a merge
/// updated one by one was slower so).
const AHEAD_GATHERED: usize = 16;

/// Asks the CPU to bring `value`'s cache line in, without waiting for it (nothing elsewhere than x86-64).
#[inline(always)]
pub(crate) fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint that never faults nor changes memory; the pointer comes from a reference.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            (value as *const T).cast::<i8>(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// From this many listed positions on, a merge gathers its count changes by neighbour before it touches
/// the pair table. The first merges of a corpus touch a large part of it (on CJK text, the pairs of bytes
/// inside each character: 1.5 of 2 million positions in the first 1,000 merges), but only a few hundred
/// distinct neighbours: two look-ups each in the large pair table (after one per occurrence in a small
/// array) instead of four per occurrence. Below it, the direct updates are cheaper.
const BATCH_MIN: usize = 256;

/// A merge's count changes on one side of its pair, gathered by the neighbour's token (see `BATCH_MIN` and
/// `Kernel::commit`): merging (a, b) into c at an occurrence whose left neighbour holds x takes `f` from
/// pair (x, a) and gives it to (x, c), which now starts at the neighbour; on the right, from (b, y) to
/// (c, y), which starts at the occurrence. One entry per neighbour token, found through a dense array by
/// id: no hashing per occurrence (a map by pair was a tenth of a CJK run's first 1,000 merges).
#[derive(Default)]
struct Side {
    /// Token id -> its index in `entries`, or NONE; only the used ones are set, and reset by `clear`.
    index: Vec<u32>,
    /// The neighbours met, `used` of them (the others keep their buffers for the next merge).
    entries: Vec<Neighbour>,
    used: usize,
}

/// A neighbour's buffer of positions larger than this is freed after the merge (see `Side::clear`).
const KEEP: usize = 1 << 12;

#[derive(Default)]
struct Neighbour {
    token: u32,
    /// The counts moved, added up.
    f: i64,
    /// Where the pairs with the merged token start.
    positions: Vec<u32>,
}

impl Side {
    /// Ready for a merge over `vocab` token ids.
    fn start(&mut self, vocab: usize) {
        if self.index.len() < vocab {
            self.index.resize(vocab, NONE);
        }
    }

    /// Notes that `f` moves to the pair with `token` that starts at `position`.
    #[inline]
    fn add(&mut self, token: u32, f: i64, position: u32) {
        let mut i = self.index[token as usize];
        if i == NONE {
            i = self.used as u32;
            if self.used == self.entries.len() {
                self.entries.push(Neighbour::default());
            }
            let entry = &mut self.entries[self.used];
            entry.token = token;
            entry.f = 0;
            entry.positions.clear();
            self.index[token as usize] = i;
            self.used += 1;
        }
        let entry = &mut self.entries[i as usize];
        entry.f += f;
        entry.positions.push(position);
    }

    /// The neighbours met since `clear`.
    fn met(&self) -> &[Neighbour] {
        &self.entries[..self.used]
    }

    fn clear(&mut self) {
        for entry in &mut self.entries[..self.used] {
            self.index[entry.token as usize] = NONE;
            if entry.positions.capacity() > KEEP {
                // Not kept for the next merge: the first merges of 100 MB of English have millions of
                // occurrences, and the buffers would stay that large for the rest of the run.
                entry.positions = Vec::new();
            }
        }
        self.used = 0;
    }
}

/// One merge made by `Kernel::merge_batch`: the pair's ids, the merged token's id, whether that id is new
/// and the pair's count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Made {
    pub left: u32,
    pub right: u32,
    pub id: u32,
    pub new: bool,
    pub count: i64,
}

/// Why `Kernel::merge_batch` stopped before its limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BatchEnd {
    /// No pair is left that may be merged.
    NoPair,
    /// The next pair counts fewer than the minimum.
    Rare,
}

/// One position of a pre-token: its token id and links (see the module's docs).
#[derive(Clone, Copy)]
struct Position {
    sym: u32,
    prev: u32,
    next: u32,
    /// The index of its pre-token, for the pre-token's frequency.
    word: u32,
}

/// The merge loop's state: the pre-tokens as linked positions, the pair table and the heap.
pub struct Kernel {
    pos: Vec<Position>,
    freq: Vec<i64>,
    pairs: PairTable<Pair>,
    heap: PairHeap,
    /// Entries listed with a count of at most `low_max`, kept out of the heap (see the module's docs).
    low: Vec<Entry>,
    /// `LOW` until `low` joins the heap, then 0 (every entry goes to the heap).
    low_max: i64,
    tokens: Vec<Arc<[u8]>>,
    /// `prefix_of` each token, for the heap's entries.
    prefixes: Vec<u64>,
    ids: FxHashMap<Arc<[u8]>, u32>,
    max_len: Option<usize>,
    merges: u32,
    /// `BATCH_MIN`, which the tests change to check that both ways of updating give the same merges.
    batch_min: usize,
    /// The pairs' positions lists.
    lists: Lists,
    /// The positions of the pair being merged, copied out of `lists` (kept between merges).
    scratch: Vec<u32>,
    /// The pairs whose count a merge grew (kept between merges, empty).
    grown: Vec<u64>,
    /// A large merge's count changes by neighbour, left and right (kept between merges, cleared).
    left: Side,
    right: Side,
    /// Pairs counting fewer than this are not offered to the heap when their count grows, and leave it
    /// when they reach its top (see `set_heap_min`); 0: every pair is.
    heap_min: i64,
}

/// Pairs listed with at most this count wait beside the heap, in `Kernel::low` (see the module's docs).
const LOW: i64 = 1;

impl Kernel {
    /// Builds the index: `symbols` holds every pre-token's token ids one after the other, `lengths` their
    /// lengths and `freqs` their counts; `tokens` are the bytes of every existing token id.
    ///
    /// The symbols are read once, in order, as the positions are built: a caller can hand them straight
    /// from a buffer it holds (no copy of millions of ids beside the positions).
    pub fn new<S>(
        symbols: S,
        lengths: &[u64],
        freqs: &[i64],
        tokens: Vec<Vec<u8>>,
        max_len: Option<usize>,
    ) -> Result<Kernel, String>
    where
        S: IntoIterator<Item = u32>,
        S::IntoIter: ExactSizeIterator,
    {
        let symbols = symbols.into_iter();
        let n = symbols.len();
        if n >= NONE as usize {
            return Err(format!("{n} token positions are more than the native merge loop holds (2**32 - 1)"));
        }
        if lengths.len() != freqs.len() {
            return Err("lengths and freqs differ in length".into());
        }
        // Checked: lengths near 2**64 must not wrap around to the right total (hostile callers).
        if lengths.iter().try_fold(0u64, |total, &len| total.checked_add(len)) != Some(n as u64) {
            return Err("the lengths do not add up to the number of symbols".into());
        }
        // Every pair count is a sum of some of the words' |count| x (length - 1): when their total fits in
        // an i64, no count overflows, however merges move them (hostile or absurd counts are refused).
        let bound = lengths.iter().zip(freqs).try_fold(0u128, |total, (&len, &f)| {
            total.checked_add(len.saturating_sub(1) as u128 * f.unsigned_abs() as u128)
        });
        if bound.is_none_or(|b| b > i64::MAX as u128) {
            // Word for word COUNT_LIMIT of bpe_studio/engine/merge.py, which the Python engine raises for the
            // same counts (it keeps the same limit), so that both engines accept exactly the same counts.
            return Err(
                "the counts are too large: pre-token counts times their lengths add up to more than \
                        2**63 - 1, so a pair count could overflow (no corpus comes near that: the counts are \
                        damaged or made up)"
                    .into(),
            );
        }
        let tokens: Vec<Arc<[u8]>> = tokens.into_iter().map(Arc::from).collect();
        let mut ids = FxHashMap::default();
        for (i, t) in tokens.iter().enumerate() {
            ids.insert(t.clone(), i as u32); // the last id of duplicate bytes wins, as in Python's dict
        }
        let mut pos = Vec::with_capacity(n);
        let mut symbols = symbols;
        let mut start = 0usize;
        let vocab = tokens.len();
        for (w, &len) in lengths.iter().enumerate() {
            let end = start + len as usize;
            for (p, sym) in (start..end).zip(symbols.by_ref()) {
                if sym as usize >= vocab {
                    return Err(format!("token id {sym} is not in the vocabulary of {vocab} tokens"));
                }
                pos.push(Position {
                    sym,
                    prev: if p > start { (p - 1) as u32 } else { NONE },
                    next: if p + 1 < end { (p + 1) as u32 } else { NONE },
                    word: w as u32,
                });
            }
            start = end;
        }
        drop(symbols); // an owned Vec of them is freed before the index is built, not after
        let mut kernel = Kernel {
            pos,
            freq: freqs.to_vec(),
            pairs: PairTable::default(),
            heap: PairHeap::default(),
            low: Vec::new(),
            low_max: LOW,
            prefixes: tokens.iter().map(|t| prefix_of(t)).collect(),
            tokens,
            ids,
            lists: Lists::default(),
            scratch: Vec::new(),
            grown: Vec::new(),
            left: Side::default(),
            right: Side::default(),
            max_len,
            merges: 0,
            batch_min: BATCH_MIN,
            heap_min: 0,
        };
        kernel.index();
        Ok(kernel)
    }

    /// Counts every adjacent pair and notes where it starts; then builds the heap.
    fn index(&mut self) {
        let n = self.pos.len();
        if self.tokens.len() <= 256 {
            // Byte pairs: a dense table of 65 536 slots is faster than hashing every position. The lists
            // are laid out by a counting sort, straight into the arena: as 65 536 growing Vecs copied into
            // it, they were twice the memory, which a fresh process pays in page faults (issue 22).
            let mut counts = vec![0i64; 1 << 16];
            let mut starts = vec![0u32; (1 << 16) + 1];
            // Each position's pair is read twice, not kept in between: a table of them would be 2 bytes a
            // position more at the merge loop's peak memory.
            let pair_at = |pos: &[Position], p: usize| {
                let at = pos[p];
                (at.next != NONE).then(|| ((at.sym as usize) << 8) | pos[at.next as usize].sym as usize)
            };
            for p in 0..n {
                if let Some(k) = pair_at(&self.pos, p) {
                    counts[k] += self.freq[self.pos[p].word as usize];
                    starts[k + 1] += 1;
                }
            }
            for k in 0..1 << 16 {
                starts[k + 1] += starts[k];
            }
            let mut data = vec![0u32; starts[1 << 16] as usize];
            let mut fill = starts.clone();
            for p in 0..n {
                if let Some(k) = pair_at(&self.pos, p) {
                    data[fill[k] as usize] = p as u32;
                    fill[k] += 1;
                }
            }
            let used: Vec<usize> = (0..1 << 16).filter(|&k| starts[k + 1] > starts[k]).collect();
            let spans = self.lists.lay_out(data, used.iter().map(|&k| starts[k + 1] - starts[k]));
            self.pairs = PairTable::with_capacity(used.len());
            for (&k, list) in used.iter().zip(spans) {
                let pair = Pair { count: counts[k], list, grown_in: 0 };
                self.pairs.insert(key((k >> 8) as u32, (k & 0xFF) as u32), pair);
            }
        } else {
            for p in 0..n {
                let at = self.pos[p];
                if at.next != NONE {
                    let f = self.freq[at.word as usize];
                    let lists = &mut self.lists;
                    let pair = self
                        .pairs
                        .get_or_insert_with(key(at.sym, self.pos[at.next as usize].sym), Pair::default);
                    pair.count += f;
                    lists.push(&mut pair.list, p as u32);
                }
            }
        }
        let mut entries = Vec::with_capacity(self.pairs.len());
        let mut low = Vec::new();
        for (k, pair) in self.pairs.iter() {
            let (a, b) = unkey(k);
            if pair.count > 0 && self.allowed(a, b) {
                let entry = self.entry(a, b, pair.count);
                if pair.count <= self.low_max {
                    low.push(entry);
                } else {
                    entries.push(entry);
                }
            }
        }
        self.heap = PairHeap::from_vec(entries, &self.tokens);
        self.low = low;
    }

    fn allowed(&self, a: u32, b: u32) -> bool {
        match self.max_len {
            None => true,
            Some(m) => self.tokens[a as usize].len() + self.tokens[b as usize].len() <= m,
        }
    }

    fn entry(&self, a: u32, b: u32, count: i64) -> Entry {
        Entry::new(count, a, b, self.prefixes[a as usize])
    }

    /// From now on, pairs counting fewer than `n` are left out of the choice of the next merge: `best`
    /// answers the most frequent pair among those counting at least `n` (or, before any merge, among all
    /// of them), and None when there is none, where it would have answered a pair counting fewer than
    /// `n`. For a caller that takes no merge counting fewer than `n` (a superword run's loop over cut
    /// words, which goes back to the whole words then): the many rare pairs that merges make (a million
    /// over 8,000 superword merges on 100 MB) take no heap entries.
    pub fn set_heap_min(&mut self, n: i64) {
        self.heap_min = n;
    }

    /// Number of token positions (the pre-tokens' lengths added up): the size of the kernel's tables.
    pub fn positions(&self) -> usize {
        self.pos.len()
    }

    /// Number of token ids (existing and made).
    pub fn vocab_len(&self) -> usize {
        self.tokens.len()
    }

    /// Adds an entry to the heap, or to `low` if it counts `low_max` or less.
    fn offer(&mut self, entry: Entry) {
        if entry.count <= self.low_max {
            self.low.push(entry);
        } else {
            self.heap.push(entry, &self.tokens);
        }
    }

    /// Drops stale heap entries until the top is current: returns (left, right, count) without popping.
    ///
    /// Every pair that occurs has an entry listing its count or more, in the heap or in `low` (an entry
    /// is listed whenever its pair's count grows; a count that drops leaves it listing more): a current top
    /// that counts more than `low_max` is the greatest pair. Once the top counts `low_max` or less (it may
    /// tie with `low`'s entries), or the heap is empty, `low` joins the heap for good.
    pub fn best(&mut self) -> Option<(u32, u32, i64)> {
        loop {
            let Some(&top) = self.heap.peek().filter(|top| top.count > self.low_max) else {
                if self.low_max == 0 {
                    return None;
                }
                // From here on, every entry goes to the heap: it is small enough by now.
                self.low_max = 0;
                self.heap.extend(std::mem::take(&mut self.low), &self.tokens);
                if self.heap.is_empty() {
                    return None;
                }
                continue;
            };
            let (a, b, listed) = (top.a, top.b, top.count);
            let current = self.pairs.get(key(a, b)).map_or(0, |p| p.count);
            if current == listed {
                return Some((a, b, current));
            }
            if current > 0 && current >= self.heap_min {
                self.heap.set_top_count(current, &self.tokens);
            } else {
                self.heap.pop(&self.tokens);
            }
        }
    }

    /// Makes merges one after the other, as `best` and `merge_top` called in turn would, appending each to
    /// `made`, until `new_tokens` new ids were made (`None`), no pair is left (`Some(BatchEnd::NoPair)`) or
    /// the next pair counts fewer than `min_count` (`Some(BatchEnd::Rare)`, that merge not made); or, also
    /// with `None`, once `max_merges` merges were made or they visited `budget` listed positions (at least
    /// one merge is made each call unless it ends with `Some`). One call for many merges: called once per
    /// merge from Python, the calls and their conversions were 1.5-3 µs a merge, a fifth of a CJK run's
    /// merge loop (issue 22).
    pub fn merge_batch(
        &mut self,
        new_tokens: u64,
        min_count: i64,
        max_merges: usize,
        budget: usize,
        made: &mut Vec<Made>,
    ) -> Option<BatchEnd> {
        let (mut created, mut visited, mut merges) = (0u64, 0usize, 0usize);
        while created < new_tokens && merges < max_merges.max(1) && visited < budget.max(1) {
            let Some((left, right, count)) = self.best() else {
                return Some(BatchEnd::NoPair);
            };
            if count < min_count {
                return Some(BatchEnd::Rare);
            }
            let (id, new, listed) = self.merge_best(left, right);
            visited += listed;
            made.push(Made { left, right, id, new, count });
            created += u64::from(new);
            merges += 1;
        }
        None
    }

    /// Merges the heap's top pair (call `best` first) everywhere: returns its token id and whether the id
    /// is new (false when the merged bytes were already a token).
    pub fn merge_top(&mut self) -> Option<(u32, bool)> {
        let (a, b, _) = self.best()?;
        let (id, new, _) = self.merge_best(a, b);
        Some((id, new))
    }

    /// Merges (`a`, `b`), which `best` just answered (its entry on top of the heap): the merged token's id,
    /// whether it is new, and how many positions were listed for the pair.
    fn merge_best(&mut self, a: u32, b: u32) -> (u32, bool, usize) {
        self.heap.pop(&self.tokens);
        self.merges += 1;
        let merged: Arc<[u8]> = [&self.tokens[a as usize][..], &self.tokens[b as usize][..]].concat().into();
        let (c, new) = match self.ids.get(&merged) {
            Some(&id) => (id, false),
            None => {
                let id = self.tokens.len() as u32;
                self.tokens.push(merged.clone());
                self.prefixes.push(prefix_of(&merged));
                self.ids.insert(merged, id);
                (id, true)
            }
        };
        let listed = self.apply(a, b, c);
        (c, new, listed)
    }

    /// Removes a pair, freeing its positions list.
    fn remove_pair(&mut self, k: u64) {
        if let Some(pair) = self.pairs.remove(k) {
            self.lists.release(pair.list);
        }
    }

    fn decrease(&mut self, a: u32, b: u32, f: i64) {
        // One probe of the table: most pairs a late CJK merge decreases occurred once and go.
        if let Ok(i) = self.pairs.slot(key(a, b)) {
            let pair = self.pairs.at(i);
            pair.count -= f;
            if pair.count <= 0 {
                // No occurrence left: its positions are all stale.
                let pair = self.pairs.remove_at(i);
                self.lists.release(pair.list);
            }
        }
    }

    fn increase(&mut self, a: u32, b: u32, f: i64, position: u32, grown: &mut Vec<u64>) {
        let merges = self.merges;
        let pair = self.pairs.get_or_insert_with(key(a, b), Pair::default);
        pair.count += f;
        self.lists.push(&mut pair.list, position);
        if pair.grown_in != merges {
            pair.grown_in = merges;
            grown.push(key(a, b));
        }
    }

    /// Applies a merge's count changes gathered by neighbour (`left`: pairs (x, a) -> (x, c); `right`:
    /// (b, y) -> (c, y)) to the pair table: the same counts, positions and grown pairs as the one-by-one
    /// `decrease`/`increase` calls, in two look-ups per neighbour. Every increase is made before any
    /// decrease: a pair can be on both lists (after `a b a b`, (c, a) was made and unmade) and its count
    /// must not reach 0, which removes it, before what it gains is added.
    fn commit(&mut self, (a, b, c): (u32, u32, u32), left: &Side, right: &Side, grown: &mut Vec<u64>) {
        let merges = self.merges;
        let made = left
            .met()
            .iter()
            .map(|n| (key(n.token, c), n))
            .chain(right.met().iter().map(|n| (key(c, n.token), n)));
        self.for_each_ahead(made, |kernel, k, n| {
            let pair = kernel.pairs.get_or_insert_with(k, Pair::default);
            pair.count += n.f;
            kernel.lists.extend(&mut pair.list, &n.positions);
            if pair.grown_in != merges {
                pair.grown_in = merges;
                grown.push(k);
            }
        });
        let unmade = left
            .met()
            .iter()
            .map(|n| (key(n.token, a), n))
            .chain(right.met().iter().map(|n| (key(b, n.token), n)));
        self.for_each_ahead(unmade, |kernel, k, n| {
            if let Ok(i) = kernel.pairs.slot(k) {
                let pair = kernel.pairs.at(i);
                pair.count -= n.f;
                if pair.count <= 0 {
                    let pair = kernel.pairs.remove_at(i);
                    kernel.lists.release(pair.list);
                }
            }
        });
    }

    /// Calls `f` on each (pair key, neighbour), the pair table's slot of the key a few ahead asked for
    /// first: a merge may have thousands of neighbours, each a random read of the table.
    fn for_each_ahead<'a>(
        &mut self,
        items: impl Iterator<Item = (u64, &'a Neighbour)> + Clone,
        mut f: impl FnMut(&mut Kernel, u64, &'a Neighbour),
    ) {
        let mut ahead = items.clone().skip(AHEAD);
        for (k, n) in items {
            if let Some((k, _)) = ahead.next() {
                self.pairs.prefetch(k);
            }
            f(self, k, n);
        }
    }

    /// Replaces every occurrence of (a, b), left to right, by c, updating the neighbouring pairs' counts.
    fn apply(&mut self, a: u32, b: u32, c: u32) -> usize {
        // Copied out (into a buffer kept for the next merge): the walk adds to other pairs' lists.
        let mut positions = std::mem::take(&mut self.scratch);
        match self.pairs.get_mut(key(a, b)) {
            Some(pair) => self.lists.take_into(&mut pair.list, &mut positions),
            None => {
                self.scratch = positions;
                return 0;
            }
        }
        let listed = positions.len();
        if a == b {
            // Overlapping occurrences (`a a a`) must merge left to right, as in the Python loop: [aa, a].
            positions.sort_unstable();
        }
        let mut grown = std::mem::take(&mut self.grown);
        // A merge with many occurrences gathers its count changes by neighbour first (see `Side`).
        let batched = positions.len() >= self.batch_min;
        let (mut left, mut right) = (std::mem::take(&mut self.left), std::mem::take(&mut self.right));
        if batched {
            left.start(self.tokens.len());
            right.start(self.tokens.len());
        }
        let far = if batched { AHEAD_GATHERED } else { AHEAD };
        for (i, &p) in positions.iter().enumerate() {
            // The listed positions lie all over the array: fetch the ones a few steps ahead, and their
            // pre-tokens' counts, so that their cache misses overlap this step's work.
            if let Some(&ahead) = positions.get(i + 2 * far) {
                // With its neighbours, which often lie across a cache line's edge (records are 16 bytes).
                let ahead = ahead as usize;
                prefetch(&self.pos[ahead.saturating_sub(1)]);
                prefetch(&self.pos[ahead]);
                prefetch(&self.pos[(ahead + 2).min(self.pos.len() - 1)]);
            }
            if let Some(&ahead) = positions.get(i + far) {
                // Its record is in by now: fetch its pre-token's count and its neighbours, wherever merges
                // left them (once bytes are merged into characters, they are records apart; 10% of a CJK
                // merge loop's time, issue 22).
                let at = self.pos[ahead as usize];
                prefetch(&self.freq[at.word as usize]);
                if at.prev != NONE {
                    prefetch(&self.pos[at.prev as usize]);
                }
                if at.next != NONE {
                    prefetch(&self.pos[at.next as usize]);
                }
            }
            if let Some(&ahead) = positions.get(i + far / 2) {
                // The right neighbour's right neighbour (the pair after the merged one), its record being
                // in by now too.
                let q = self.pos[ahead as usize].next;
                if q != NONE {
                    let y = self.pos[q as usize].next;
                    if y != NONE {
                        prefetch(&self.pos[y as usize]);
                    }
                }
                // Updated one by one, the pair table's slots of the left neighbour's pairs, before and
                // after the merge: four random look-ups per occurrence were most of a late CJK merge.
                let x = self.pos[ahead as usize].prev;
                if !batched && x != NONE {
                    let sx = self.pos[x as usize].sym;
                    self.pairs.prefetch(key(sx, a));
                    self.pairs.prefetch(key(sx, c));
                }
            }
            if let Some(&ahead) = positions.get(i + far / 4).filter(|_| !batched) {
                // And the right neighbour's, whose record came in by now.
                let q = self.pos[ahead as usize].next;
                if q != NONE {
                    let y = self.pos[q as usize].next;
                    if y != NONE {
                        let sy = self.pos[y as usize].sym;
                        self.pairs.prefetch(key(b, sy));
                        self.pairs.prefetch(key(c, sy));
                    }
                }
            }
            let pu = p as usize;
            let at = self.pos[pu];
            // Stale entries: the position was merged into its left neighbour (NONE), or holds another token.
            if at.sym != a {
                continue;
            }
            let q = at.next;
            if q == NONE || self.pos[q as usize].sym != b {
                continue;
            }
            let f = self.freq[at.word as usize];
            let x = at.prev;
            if x != NONE {
                let sx = self.pos[x as usize].sym;
                if batched {
                    left.add(sx, f, x);
                } else {
                    self.decrease(sx, a, f);
                    self.increase(sx, c, f, x, &mut grown);
                }
            }
            let y = self.pos[q as usize].next;
            if y != NONE {
                let sy = self.pos[y as usize].sym;
                if batched {
                    right.add(sy, f, p);
                } else {
                    self.decrease(b, sy, f);
                    self.increase(c, sy, f, p, &mut grown);
                }
            }
            self.pos[pu].sym = c;
            self.pos[pu].next = y;
            self.pos[q as usize].sym = NONE;
            if y != NONE {
                self.pos[y as usize].prev = p;
            }
        }
        if batched {
            self.commit((a, b, c), &left, &right, &mut grown);
            left.clear();
            right.clear();
        }
        (self.left, self.right) = (left, right);
        // str.replace in the Python loop leaves no occurrence of the pair, nor does this walk.
        self.remove_pair(key(a, b));
        self.scratch = positions;
        for &k in &grown {
            let (x, y) = unkey(k);
            if let Some(pair) = self.pairs.get(k) {
                if pair.count > 0 && pair.count >= self.heap_min && self.allowed(x, y) {
                    let entry = self.entry(x, y, pair.count);
                    self.offer(entry);
                }
            }
        }
        grown.clear();
        self.grown = grown;
        listed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The arena's lists hold what a `Vec` per list would, through pushes, extends (growing and reusing
    /// freed blocks, from one position held in the span too), takes and releases.
    #[test]
    fn arena_lists_hold_what_separate_vecs_would() {
        let mut lists = Lists::default();
        let mut model: Vec<(Span, Vec<u32>)> = Vec::new();
        let mut next = crate::testing::xorshift(22);
        let mut out = Vec::new();
        for step in 0..20_000u32 {
            let pick = if model.is_empty() { None } else { Some(next(model.len() as u64) as usize) };
            match (next(6), pick) {
                (0, _) | (_, None) => model.push((Span::default(), Vec::new())),
                (1 | 2, Some(i)) => {
                    lists.push(&mut model[i].0, step);
                    model[i].1.push(step);
                }
                (3, Some(i)) => {
                    let items: Vec<u32> = (0..next(40) as u32).map(|k| step ^ k).collect();
                    lists.extend(&mut model[i].0, &items);
                    model[i].1.extend_from_slice(&items);
                }
                (4, Some(i)) => {
                    lists.take_into(&mut model[i].0, &mut out);
                    assert_eq!(out, model[i].1);
                    model[i].1.clear();
                }
                (_, Some(i)) => lists.release(model.swap_remove(i).0),
            }
            for (span, list) in &model {
                assert_eq!(lists.get(span), &list[..]);
            }
        }
    }

    /// A kernel over words given as text with their counts: the 256 bytes are ids 0-255, then `extra`.
    fn kernel(words: &[(&str, i64)], extra: &[&str], max_len: Option<usize>) -> Kernel {
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        tokens.extend(extra.iter().map(|t| t.as_bytes().to_vec()));
        let symbols: Vec<u32> = words.iter().flat_map(|(w, _)| w.bytes().map(u32::from)).collect();
        let lengths: Vec<u64> = words.iter().map(|(w, _)| w.len() as u64).collect();
        let freqs: Vec<i64> = words.iter().map(|&(_, f)| f).collect();
        Kernel::new(symbols, &lengths, &freqs, tokens, max_len).unwrap()
    }

    /// Every merge to the end, as (left bytes + "|" + right bytes, count).
    fn merges(mut k: Kernel) -> Vec<(String, i64)> {
        let mut out = Vec::new();
        while let Some((a, b, count)) = k.best() {
            let (left, right) = (k.tokens[a as usize].to_vec(), k.tokens[b as usize].to_vec());
            let (id, new) = k.merge_top().unwrap();
            assert!(new);
            assert_eq!(*k.tokens[id as usize], [left.clone(), right.clone()].concat());
            let text = |t: Vec<u8>| String::from_utf8(t).unwrap();
            out.push((format!("{}|{}", text(left), text(right)), count));
        }
        assert_eq!(k.merge_top(), None);
        out
    }

    fn expected(list: &[(&str, i64)]) -> Vec<(String, i64)> {
        list.iter().map(|&(m, c)| (m.to_string(), c)).collect()
    }

    #[test]
    fn with_a_heap_minimum_the_merges_are_the_same_until_one_would_count_less() {
        // Random words of a few letters: every merge the full loop makes down to the first one counting
        // fewer than n; then `best` answers None or a pair counting fewer than n, never another one.
        let mut next = crate::testing::xorshift(0x9E37_79B9_7F4A_7C15u64);
        for round in 0..100 {
            let words: Vec<(String, i64)> = (0..1 + next(25))
                .map(|_| {
                    let word: String = (0..1 + next(9)).map(|_| char::from(b'a' + next(4) as u8)).collect();
                    (word, 1 + next(6) as i64)
                })
                .collect();
            let refs: Vec<(&str, i64)> = words.iter().map(|(w, f)| (w.as_str(), *f)).collect();
            let all = merges(kernel(&refs, &[], None));
            for n in 1..8 {
                let mut k = kernel(&refs, &[], None);
                k.set_heap_min(n);
                let mut made = Vec::new();
                while let Some((a, b, count)) = k.best() {
                    if count < n {
                        break;
                    }
                    let text = |id: u32| String::from_utf8(k.tokens[id as usize].to_vec()).unwrap();
                    made.push((format!("{}|{}", text(a), text(b)), count));
                    k.merge_top();
                }
                let until = all.iter().position(|&(_, c)| c < n).unwrap_or(all.len());
                assert_eq!(made, all[..until], "round {round}, n {n}");
            }
        }
    }

    #[test]
    fn the_most_frequent_pair_goes_first_and_its_neighbours_are_recounted() {
        // Pairs at the start: ab 2, bc 3, cd 1. After b|c, the words are a-bc (2) and bc-d (1).
        let k = kernel(&[("abc", 2), ("bcd", 1)], &[], None);
        assert_eq!(merges(k), expected(&[("b|c", 3), ("a|bc", 2), ("bc|d", 1)]));
    }

    #[test]
    fn a_tie_goes_to_the_greatest_pair_of_left_bytes_then_right_bytes() {
        let k = kernel(&[("ab", 1), ("cd", 1), ("ac", 1)], &[], None);
        assert_eq!(merges(k), expected(&[("c|d", 1), ("a|c", 1), ("a|b", 1)]));
        // "abc" once: ab and bc tie, b|c wins; then a|bc, while a|b's count fell to 0 (a stale entry).
        assert_eq!(merges(kernel(&[("abc", 1)], &[], None)), expected(&[("b|c", 1), ("a|bc", 1)]));
        // Equal left bytes: the right ones decide, and "bx" > "b".
        let k = kernel(&[("abx", 3), ("ab", 3), ("bx", 3)], &[], None);
        assert_eq!(merges(k), expected(&[("b|x", 6), ("a|bx", 3), ("a|b", 3)]));
    }

    #[test]
    fn a_tie_compares_bytes_not_ids_and_a_longer_left_token_is_greater() {
        // Ids: "z" = 0 after the reorder below, "a" = 1, "b" = 2: by ids (1, 2) is greater, by bytes "z|b".
        let tokens = vec![b"z".to_vec(), b"a".to_vec(), b"b".to_vec()];
        let mut k = Kernel::new(vec![0, 2, 1, 2], &[2, 2], &[1, 1], tokens, None).unwrap();
        assert_eq!(k.best(), Some((0, 2, 1)));
        // After a|b, "ab|z" and "a|z" tie (2 each): the left "ab" is greater than "a" (a prefix is less).
        let k = kernel(&[("ab", 10), ("abz", 2), ("az", 2)], &[], None);
        assert_eq!(merges(k), expected(&[("a|b", 12), ("ab|z", 2), ("a|z", 2)]));
    }

    #[test]
    fn overlapping_pairs_of_one_token_merge_left_to_right() {
        // "aaa": a|a counted twice; merged left to right it is [aa, a], so aa|a comes next.
        assert_eq!(merges(kernel(&[("aaa", 1)], &[], None)), expected(&[("a|a", 2), ("aa|a", 1)]));
        assert_eq!(merges(kernel(&[("aaaa", 1)], &[], None)), expected(&[("a|a", 3), ("aa|aa", 1)]));
    }

    #[test]
    fn merged_bytes_that_are_already_a_token_reuse_its_id() {
        let mut k = kernel(&[("ab", 4)], &["ab"], None);
        assert_eq!((k.vocab_len(), k.positions()), (257, 2));
        assert_eq!(k.best(), Some((b'a' as u32, b'b' as u32, 4)));
        assert_eq!(k.merge_top(), Some((256, false)));
        assert_eq!(k.vocab_len(), 257);
        assert_eq!(k.best(), None);
    }

    #[test]
    fn pairs_longer_than_the_limit_are_never_merged() {
        assert_eq!(merges(kernel(&[("abc", 5)], &[], Some(1))), []);
        // b|c first (the tie rule); a|bc would be 3 bytes: the loop ends.
        assert_eq!(merges(kernel(&[("abc", 5)], &[], Some(2))), expected(&[("b|c", 5)]));
    }

    #[test]
    fn a_long_repetitive_word_merges_to_powers_of_two() {
        let word = "a".repeat(1024);
        let found = merges(kernel(&[(&word, 1)], &[], None));
        let lengths: Vec<usize> = found.iter().map(|(m, _)| m.len() - 1).collect();
        assert_eq!(lengths, [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]);
        assert_eq!(found[0].1, 1023);
    }

    #[test]
    fn merges_gathered_by_pair_are_the_merges_made_one_by_one() {
        // Random words over a small alphabet (repeats, overlaps such as "aaa", shared neighbours), with
        // counts: every merge updated directly, or every merge gathered by neighbour first (`Side`).
        let mut next = crate::testing::xorshift(0x2545_F491_4F6C_DD1Du64);
        for _ in 0..30 {
            let words: Vec<(String, i64)> = (0..60)
                .map(|_| {
                    let len = 1 + next(12) as usize;
                    let word: String = (0..len).map(|_| b"aabbcd"[next(6) as usize] as char).collect();
                    (word, 1 + next(5) as i64)
                })
                .collect();
            let refs: Vec<(&str, i64)> = words.iter().map(|(w, f)| (w.as_str(), *f)).collect();
            let mut direct = kernel(&refs, &[], None);
            direct.batch_min = usize::MAX;
            let mut gathered = kernel(&refs, &[], None);
            gathered.batch_min = 0;
            assert_eq!(merges(gathered), merges(direct));
        }
    }

    #[test]
    fn pairs_kept_beside_the_heap_are_merged_as_from_the_heap() {
        // Mostly pairs that occur once (the entries `low` keeps), some more often, ties everywhere: the
        // merges are those of a kernel whose every entry is in the heap from the start.
        let mut next = crate::testing::xorshift(0x9E37_79B9_7F4A_7C15u64);
        for round in 0..40 {
            let alphabet: &[u8] = if round % 2 == 0 { b"abcdefghij" } else { b"aab" };
            let words: Vec<(String, i64)> = (0..30)
                .map(|_| {
                    let len = 1 + next(10) as usize;
                    let word = (0..len).map(|_| alphabet[next(alphabet.len() as u64) as usize] as char);
                    (word.collect(), 1 + next(3) as i64 / 2)
                })
                .collect();
            let refs: Vec<(&str, i64)> = words.iter().map(|(w, f)| (w.as_str(), *f)).collect();
            let beside = kernel(&refs, &[], None);
            assert!(round > 0 || !beside.low.is_empty(), "the test makes pairs that occur once");
            let mut heaped = kernel(&refs, &[], None);
            heaped.low_max = 0;
            let low = std::mem::take(&mut heaped.low);
            heaped.heap.extend(low, &heaped.tokens);
            assert_eq!(merges(beside), merges(heaped));
        }
    }

    #[test]
    fn merges_in_batches_are_the_merges_made_one_by_one() {
        // "ab" exists already: a|b reuses its id (not new), so a batch counts new ids, not merges.
        let words: &[(&str, i64)] = &[("abcabcab", 3), ("bcd", 2), ("aaaa", 1), ("abd", 1), ("xy", 1)];
        let mut one = kernel(words, &["ab"], None);
        let mut expected = Vec::new();
        while let Some((left, right, count)) = one.best() {
            let (id, new) = one.merge_top().unwrap();
            expected.push(Made { left, right, id, new, count });
        }
        for (max_merges, budget) in [(1, usize::MAX), (2, usize::MAX), (3, 1), (usize::MAX, 4), (0, 0)] {
            let mut batched = kernel(words, &["ab"], None);
            let mut made = Vec::new();
            let end = loop {
                let before = made.len();
                if let Some(end) = batched.merge_batch(u64::MAX, 1, max_merges, budget, &mut made) {
                    break end;
                }
                assert!(made.len() > before, "a batch that does not end makes a merge");
            };
            assert_eq!((made.as_slice(), end), (expected.as_slice(), BatchEnd::NoPair));
        }
        // It stops once `new_tokens` new ids exist, and before a pair rarer than `min_count`.
        let mut k = kernel(words, &["ab"], None);
        let mut made = Vec::new();
        assert_eq!(k.merge_batch(2, 1, usize::MAX, usize::MAX, &mut made), None);
        assert_eq!(made.iter().filter(|m| m.new).count(), 2);
        assert_eq!(made, expected[..made.len()]);
        let rare = expected.iter().position(|m| m.count < 3).unwrap();
        let mut made = Vec::new();
        let end = kernel(words, &["ab"], None).merge_batch(u64::MAX, 3, usize::MAX, usize::MAX, &mut made);
        assert_eq!((made.as_slice(), end), (&expected[..rare], Some(BatchEnd::Rare)));
    }

    #[test]
    fn inconsistent_tables_are_refused() {
        let bytes = || (0..=255u8).map(|b| vec![b]).collect::<Vec<_>>();
        let err = |r: Result<Kernel, String>| r.err().expect("refused");
        assert!(err(Kernel::new(vec![1, 2], &[2], &[1, 1], bytes(), None)).contains("lengths and freqs"));
        assert!(err(Kernel::new(vec![1, 2], &[3], &[1], bytes(), None)).contains("do not add up"));
        assert!(
            err(Kernel::new(vec![1, 2], &[u64::MAX, 3], &[1, 1], bytes(), None)).contains("do not add up")
        );
        assert!(err(Kernel::new(vec![1, 256], &[2], &[1], bytes(), None)).contains("token id 256"));
        assert!(err(Kernel::new(vec![1, 2, 3], &[3], &[i64::MAX], bytes(), None)).contains("too large"));
        // One pair per word of i64::MAX fits exactly.
        assert!(Kernel::new(vec![1, 2], &[2], &[i64::MAX], bytes(), None).is_ok());
    }
}
