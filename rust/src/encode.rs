//! Native encoding and decoding for `Tokenizer` (bpe_studio/engine/encoding/tokenizer.py): the per-pre-token BPE,
//! its cache and the joining of token bytes (`Encoder`; the Python class is src/py/encoder.rs). Python keeps special tokens and normalization. For a custom
//! pattern Python also pre-tokenizes and passes the pre-tokens in (`encode`); for a preset pattern the
//! native scanners (pretok*.rs) split the text here, so that text becomes ids in one call (`encode_text`,
//! `encode_batch`, `encode_join`). The Python `_bpe` stays the reference, with the same semantics:
//! repeatedly merge the adjacent pair of lowest rank, leftmost first.
//!
//! A pair's rank comes from one of two rules. `merges` (Hugging Face `tokenizers`, GPT-2's files, our own
//! training): a pair of tokens is ranked only when it is listed as a merge. `ranks` (tiktoken's
//! `byte_pair_merge`, for rank files): any two adjacent parts whose concatenation is a token merge, ranked by
//! that token's id. The two agree on a vocabulary closed under BPE; a rank file (Llama 3's) need not be.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};

use rustc_hash::FxHashMap;

use crate::piece_map::{self, PieceMap};
use crate::pretok::Scanner;

// Encoding many words, each cut where no token can span (a superword run's stage 2).
#[path = "encode_cut.rs"]
mod cut;

/// "No such pair": larger than any rank.
const NO_RANK: u32 = u32::MAX;
/// A merged-away position in the long-word loop.
const GONE: u32 = u32::MAX;
/// Above this many bytes a pre-token is merged with a heap (O(n log n)) instead of rescanning its pair
/// ranks after each merge (O(n^2) but faster for the short words of ordinary text).
const LONG_WORD: usize = 256;

/// The BPE tables; shared read-only by every call.
struct Tables {
    /// Each byte's token id.
    byte_ids: [u32; 256],
    /// (left id, right id) -> (rank, merged id); a pair listed twice keeps its first rank.
    merges: FxHashMap<(u32, u32), (u32, u32)>,
    /// `ignore_merges`: a pre-token whose bytes are an ordinary token -> that token's id.
    whole: Option<FxHashMap<Vec<u8>, u32>>,
    /// tiktoken's rule (`Encoder::with_ranks`): ordinary token bytes -> rank (its id); `merges` is then empty.
    ranks: Option<Ranks>,
    /// With `ranks`: take a pre-token that is an ordinary token whole (`whole` would be the same table).
    whole_by_ranks: bool,
}

/// tiktoken's rank table, ordinary token bytes -> rank (its id), stored by length so that most lookups cost
/// one probe of a small table: a miss of the pre-token cache looks up every pair of adjacent parts (n - 1
/// two-byte slices, then two slices per merge), and hashing a slice and comparing it with a key behind a
/// pointer was half of cl100k's time on the mixed corpus (issue 22). The same bytes give the same rank as
/// one map of all tokens would.
struct Ranks {
    /// Two-byte tokens by `first << 8 | second`; NO_RANK for none.
    two: Vec<u32>,
    /// Tokens of 1 and 3-7 bytes, packed as `short_key` does.
    short: FxHashMap<u64, u32>,
    /// Longer tokens.
    long: FxHashMap<Vec<u8>, u32>,
}

/// Tokens of at most this many bytes are packed into a u64 key with their length.
const SHORT: usize = 7;

/// `bytes` (at most SHORT) in the low bytes, their length in the top byte: distinct for distinct strings.
#[inline]
fn short_key(bytes: &[u8]) -> u64 {
    let mut key = (bytes.len() as u64) << 56;
    for (i, &b) in bytes.iter().enumerate() {
        key |= (b as u64) << (8 * i);
    }
    key
}

impl Ranks {
    #[cfg(test)]
    fn new(all: FxHashMap<Vec<u8>, u32>) -> Ranks {
        let mut ranks =
            Ranks { two: vec![NO_RANK; 1 << 16], short: FxHashMap::default(), long: FxHashMap::default() };
        for (token, rank) in all {
            ranks.insert_first(&token, rank);
        }
        ranks
    }

    /// The ordinary tokens of an arena (see `Encoder`: token i is `bytes[starts[i]..starts[i + 1]]`, if
    /// `present[i]`), each ranked by its id; of repeated bytes the smallest id. Each table is sized once
    /// (a first pass counts the tokens of each kind), and a token's bytes are copied only for the long
    /// table: building a map of all tokens' owned bytes and then sorting it into these tables was most of
    /// a 128k-token rank file's `with_ranks` (issue 20).
    fn from_arena(bytes: &[u8], starts: &[usize], present: &[bool], special: &[bool]) -> Ranks {
        let ordinary = |i: usize| present[i] && !special[i];
        let (mut short, mut long) = (0, 0);
        for (i, w) in starts.windows(2).enumerate() {
            match w[1] - w[0] {
                _ if !ordinary(i) => {}
                2 => {}
                n if n <= SHORT => short += 1,
                _ => long += 1,
            }
        }
        let mut ranks = Ranks {
            two: vec![NO_RANK; 1 << 16],
            short: FxHashMap::with_capacity_and_hasher(short, Default::default()),
            long: FxHashMap::with_capacity_and_hasher(long, Default::default()),
        };
        for (i, w) in starts.windows(2).enumerate() {
            if ordinary(i) {
                ranks.insert_first(&bytes[w[0]..w[1]], i as u32);
            }
        }
        ranks
    }

    /// Ranks `token` as `rank` unless it has a smaller rank already.
    fn insert_first(&mut self, token: &[u8], rank: u32) {
        match token.len() {
            2 => {
                let slot = &mut self.two[(token[0] as usize) << 8 | token[1] as usize];
                *slot = (*slot).min(rank);
            }
            n if n <= SHORT => {
                let slot = self.short.entry(short_key(token)).or_insert(rank);
                *slot = (*slot).min(rank);
            }
            _ => {
                // One hash for a new token (repeated bytes are rare): the smaller rank is put back after.
                if let Some(before) = self.long.insert(token.to_vec(), rank) {
                    if let Some(slot) = self.long.get_mut(token) {
                        *slot = before.min(rank);
                    }
                }
            }
        }
    }

    /// The rank of the token `bytes`, if it is one.
    #[inline]
    fn get(&self, bytes: &[u8]) -> Option<u32> {
        match bytes.len() {
            2 => Some(self.two[(bytes[0] as usize) << 8 | bytes[1] as usize]).filter(|&r| r != NO_RANK),
            n if n <= SHORT => self.short.get(&short_key(bytes)).copied(),
            _ => self.long.get(bytes).copied(),
        }
    }
}

impl Tables {
    fn pair(&self, a: u32, b: u32) -> (u32, u32) {
        *self.merges.get(&(a, b)).unwrap_or(&(NO_RANK, 0))
    }

    /// Under tiktoken's rule with whole pre-tokens taken as they are: the id of `piece` when it is an
    /// ordinary token of at most SHORT bytes (what `bpe` gives it, found in the rank table's small parts
    /// without going through the cache). A longer piece is looked up in the cache first: hashing a long
    /// slice twice, for the rank table and then the cache, made o200k on Chinese a third slower.
    #[inline]
    fn whole_rank(&self, piece: &[u8]) -> Option<u32> {
        match &self.ranks {
            Some(ranks) if self.whole_by_ranks && piece.len() <= SHORT => ranks.get(piece),
            _ => None,
        }
    }

    /// Appends the ids of one pre-token's bytes to `out`.
    fn bpe(&self, piece: &[u8], out: &mut Vec<u32>) {
        if let Some(whole) = &self.whole {
            if let Some(&id) = whole.get(piece) {
                out.push(id);
                return;
            }
        }
        if let Some(ranks) = &self.ranks {
            if self.whole_by_ranks {
                if let Some(id) = ranks.get(piece) {
                    out.push(id);
                    return;
                }
            }
            self.bpe_ranks(ranks, piece, NO_RANK, out);
            return;
        }
        let mut word: Vec<u32> = piece.iter().map(|&b| self.byte_ids[b as usize]).collect();
        if word.len() < 2 {
            out.extend_from_slice(&word);
            return;
        }
        if word.len() > LONG_WORD {
            self.bpe_long(&word, out);
            return;
        }
        // pairs[i] = (rank, merged id) of word[i], word[i + 1].
        let mut pairs: Vec<(u32, u32)> = word.windows(2).map(|w| self.pair(w[0], w[1])).collect();
        loop {
            let mut best = NO_RANK;
            let mut at = 0;
            for (i, &(rank, _)) in pairs.iter().enumerate() {
                if rank < best {
                    best = rank; // strict: the leftmost of the lowest rank
                    at = i;
                }
            }
            if best == NO_RANK {
                break;
            }
            word[at] = pairs[at].1;
            word.remove(at + 1);
            pairs.remove(at);
            // The pair at `at` is gone; the pairs on either side of the new token change.
            if at > 0 {
                pairs[at - 1] = self.pair(word[at - 1], word[at]);
            }
            if at < pairs.len() {
                pairs[at] = self.pair(word[at], word[at + 1]);
            }
        }
        out.extend_from_slice(&word);
    }

    /// The same merges for a long pre-token: a linked list of positions and a queue of (rank, position).
    /// Positions never move, so the smallest position among the lowest-rank entries is the leftmost pair.
    /// An entry is stale (skipped) when its pair no longer has that rank (a rank belongs to one pair).
    ///
    /// The queue is first a [`Buckets`] (linear, and it walks the word in order, which the caches like);
    /// a merge list in which a merge makes a pair that ranks before it (no trained BPE does) sends the word
    /// to a heap instead, which takes any order.
    fn bpe_long(&self, word: &[u32], out: &mut Vec<u32>) {
        let tokens = self
            .bpe_long_with(word, Buckets::default())
            .or_else(|| self.bpe_long_with(word, MinHeap::default()))
            .expect("a heap takes every order");
        out.extend(tokens.into_iter().filter(|&t| t != GONE));
    }

    /// [`Tables::bpe_long`] with a given queue: the tokens (merged-away positions GONE), or None when the
    /// queue refused an entry.
    fn bpe_long_with(&self, word: &[u32], mut queue: impl MergeQueue) -> Option<Vec<u32>> {
        let n = word.len();
        let mut tokens = word.to_vec();
        let mut next: Vec<usize> = (1..=n).collect();
        let mut prev: Vec<usize> = (0..n).map(|i| i.wrapping_sub(1)).collect();
        for i in 0..n - 1 {
            let (rank, _) = self.pair(word[i], word[i + 1]);
            if rank != NO_RANK && !queue.push(rank, i) {
                return None;
            }
        }
        while let Some((rank, i)) = queue.pop() {
            let j = next[i];
            if j >= n || tokens[i] == GONE {
                continue;
            }
            let (now, merged) = self.pair(tokens[i], tokens[j]);
            if now != rank {
                continue;
            }
            tokens[i] = merged;
            tokens[j] = GONE;
            let k = next[j];
            next[i] = k;
            if k < n {
                prev[k] = i;
                let (r, _) = self.pair(tokens[i], tokens[k]);
                if r != NO_RANK && !queue.push(r, i) {
                    return None;
                }
            }
            let h = prev[i];
            if h < n {
                let (r, _) = self.pair(tokens[h], tokens[i]);
                if r != NO_RANK && !queue.push(r, h) {
                    return None;
                }
            }
        }
        Some(tokens)
    }

    /// tiktoken's `byte_pair_merge`: the parts start as single bytes, and repeatedly the two adjacent parts
    /// whose concatenation is the token of lowest rank below `limit` merge (leftmost first); appends the
    /// parts' ids to `out`. `limit` is `NO_RANK` to encode, a token's own rank to derive its merge.
    fn bpe_ranks(&self, ranks: &Ranks, piece: &[u8], limit: u32, out: &mut Vec<u32>) {
        let n = piece.len();
        if n < 2 {
            out.extend(piece.iter().map(|&b| self.byte_ids[b as usize]));
            return;
        }
        let rank = |start: usize, end: usize| match ranks.get(&piece[start..end]) {
            Some(r) if r < limit => r,
            _ => NO_RANK,
        };
        let mut starts: Vec<usize> = if n > LONG_WORD {
            self.parts_long(piece, &rank)
        } else {
            // starts[i] is where part i begins (starts[len - 1] == n); pairs[i] ranks parts i and i + 1.
            let mut starts: Vec<usize> = (0..=n).collect();
            let mut pairs: Vec<u32> = (0..n - 1).map(|i| rank(i, i + 2)).collect();
            loop {
                let mut best = NO_RANK;
                let mut at = 0;
                for (i, &r) in pairs.iter().enumerate() {
                    if r < best {
                        best = r; // strict: the leftmost of the lowest rank
                        at = i;
                    }
                }
                if best == NO_RANK {
                    break;
                }
                starts.remove(at + 1);
                pairs.remove(at);
                if at > 0 {
                    pairs[at - 1] = rank(starts[at - 1], starts[at + 1]);
                }
                if at < pairs.len() {
                    pairs[at] = rank(starts[at], starts[at + 2]);
                }
            }
            starts
        };
        let end = starts.pop();
        debug_assert_eq!(end, Some(n));
        starts.push(n);
        out.extend(starts.windows(2).map(|w| match w[1] - w[0] {
            1 => self.byte_ids[piece[w[0]] as usize],
            _ => ranks.get(&piece[w[0]..w[1]]).expect("a merged part is a token"),
        }));
    }

    /// The merge that makes the token `piece` of rank `limit` (see `Encoder::derive_merges`): the two parts
    /// `bpe_ranks(ranks, piece, limit, ..)` ends with, as (left id, right id); None when it ends with more.
    /// The same loop as `bpe_ranks`'s, in buffers kept from one token to the next (three allocations per
    /// token were a third of deriving a 128k-token file's merges, issue 20).
    fn last_merge(
        &self,
        ranks: &Ranks,
        piece: &[u8],
        limit: u32,
        scratch: &mut Scratch,
    ) -> Option<(u32, u32)> {
        let n = piece.len();
        let id = |start: usize, end: usize| match end - start {
            1 => self.byte_ids[piece[start] as usize],
            _ => ranks.get(&piece[start..end]).expect("a merged part is a token"),
        };
        if n == 2 {
            // The one pair is the token itself, which does not rank below its own rank: two bytes.
            return Some((id(0, 1), id(1, 2)));
        }
        if !(3..=LONG_WORD).contains(&n) {
            let parts = &mut scratch.parts;
            parts.clear();
            self.bpe_ranks(ranks, piece, limit, parts);
            return (parts.len() == 2).then(|| (parts[0], parts[1]));
        }
        let rank = |start: usize, end: usize| match ranks.get(&piece[start..end]) {
            Some(r) if r < limit => r,
            _ => NO_RANK,
        };
        let (starts, pairs) = (&mut scratch.starts, &mut scratch.pairs);
        starts.clear();
        starts.extend(0..=n);
        pairs.clear();
        pairs.extend((0..n - 1).map(|i| rank(i, i + 2)));
        // (n >= 3: at least one merge.) The part a merge makes is the token of the merged pair's rank.
        loop {
            let mut best = NO_RANK;
            let mut at = 0;
            for (i, &r) in pairs.iter().enumerate() {
                if r < best {
                    best = r; // strict: the leftmost of the lowest rank
                    at = i;
                }
            }
            if best == NO_RANK {
                return None;
            }
            starts.remove(at + 1);
            pairs.remove(at);
            if starts.len() == 3 {
                // Two parts: their one pair is the token itself, not below `limit`, so BPE stops here. Their
                // pair is not looked up, and the part just made is `best` (two lookups of the rank table
                // fewer per token, one of them the whole token's bytes).
                return Some(if at == 0 { (best, id(starts[1], n)) } else { (id(0, starts[1]), best) });
            }
            if at > 0 {
                pairs[at - 1] = rank(starts[at - 1], starts[at + 1]);
            }
            if at < pairs.len() {
                pairs[at] = rank(starts[at], starts[at + 2]);
            }
        }
    }

    /// `bpe_ranks`'s merges for a long pre-token: a linked list of part starts and a queue of (rank, start).
    /// An entry is stale (skipped) unless the pair at its start still has its rank; a rank is one token's,
    /// so such a pair spans the same bytes, and merging it is the merge the entry stood for. Returns the
    /// part starts followed by `n`. The queue is as in [`Tables::bpe_long`]: buckets, or a heap for the
    /// words of a vocabulary in which a longer token ranks before a part of it.
    fn parts_long(&self, piece: &[u8], rank: &dyn Fn(usize, usize) -> u32) -> Vec<usize> {
        self.parts_long_with(piece, rank, Buckets::default())
            .or_else(|| self.parts_long_with(piece, rank, MinHeap::default()))
            .expect("a heap takes every order")
    }

    fn parts_long_with(
        &self,
        piece: &[u8],
        rank: &dyn Fn(usize, usize) -> u32,
        mut queue: impl MergeQueue,
    ) -> Option<Vec<usize>> {
        let n = piece.len();
        // next[i]: the start of the part after the one at i (n at the end); prev[i]: the one before.
        let mut next: Vec<usize> = (1..=n).collect();
        let mut prev: Vec<usize> = (0..n).map(|i| i.wrapping_sub(1)).collect();
        let mut alive = vec![true; n];
        for i in 0..n - 1 {
            let r = rank(i, i + 2);
            if r != NO_RANK && !queue.push(r, i) {
                return None;
            }
        }
        while let Some((r, i)) = queue.pop() {
            if !alive[i] || next[i] >= n || rank(i, next[next[i]]) != r {
                continue;
            }
            let j = next[i];
            alive[j] = false;
            let k = next[j];
            next[i] = k;
            if k < n {
                prev[k] = i;
                let r = rank(i, next[k]);
                if r != NO_RANK && !queue.push(r, i) {
                    return None;
                }
            }
            let h = prev[i];
            if h < n {
                let r = rank(h, k);
                if r != NO_RANK && !queue.push(r, h) {
                    return None;
                }
            }
        }
        let mut starts: Vec<usize> = (0..n).filter(|&i| alive[i]).collect();
        starts.push(n);
        Some(starts)
    }
}

/// The queue of a long word's merge loop: entries (rank, position), taken lowest rank first and, among
/// equal ranks, leftmost first.
trait MergeQueue {
    /// Adds an entry; false when this queue cannot take it (the caller starts again with another).
    fn push(&mut self, rank: u32, position: usize) -> bool;
    /// The next entry, or None when none is left.
    fn pop(&mut self) -> Option<(u32, usize)>;
}

/// A binary heap: any order of pushes, O(log n) each, and random access over the whole word.
#[derive(Default)]
struct MinHeap(BinaryHeap<Reverse<(u32, usize)>>);

impl MergeQueue for MinHeap {
    fn push(&mut self, rank: u32, position: usize) -> bool {
        self.0.push(Reverse((rank, position)));
        true
    }

    fn pop(&mut self) -> Option<(u32, usize)> {
        self.0.pop().map(|Reverse(entry)| entry)
    }
}

/// One bucket of positions per rank, taken rank by rank, each sorted once: linear in the word (plus the
/// sorts of its buckets) and in order along it. It holds while every merge makes only pairs that rank
/// after it, which is what BPE training gives (a pair holding a new token is merged later, if ever); a
/// push at or before the rank being taken is refused.
#[derive(Default)]
struct Buckets {
    /// Ranks still to take -> their positions (unsorted).
    waiting: BTreeMap<u32, Vec<usize>>,
    /// The rank being taken and its positions, sorted, and how many were taken.
    current: Option<(u32, Vec<usize>, usize)>,
}

impl MergeQueue for Buckets {
    fn push(&mut self, rank: u32, position: usize) -> bool {
        if matches!(&self.current, Some((taking, _, _)) if rank <= *taking) {
            return false;
        }
        self.waiting.entry(rank).or_default().push(position);
        true
    }

    fn pop(&mut self) -> Option<(u32, usize)> {
        loop {
            if let Some((rank, positions, taken)) = &mut self.current {
                if let Some(&position) = positions.get(*taken) {
                    *taken += 1;
                    return Some((*rank, position));
                }
            }
            let (rank, mut positions) = self.waiting.pop_first()?;
            positions.sort(); // stable: it finds the sorted runs the pushes come in (linear for one run)
            self.current = Some((rank, positions, 0));
        }
    }
}

/// Pre-token bytes -> ids, at most `limit` of them and `BYTES_PER_ENTRY` bytes of records each on average
/// (which bounds memory whatever the input), packed (see `piece_map`). When full,
/// the entries not used since the cache was last full go (the pre-tokens seen once, and those of a text
/// encoded before this one), and if that frees less than a quarter, one entry in four of the others too
/// (in the table's order, which has nothing to do with how often a pre-token comes). Emptying the whole
/// cache (as Python's does) made a text with a few more distinct pre-tokens than the limit a cold encode
/// on every pass: cl100k on the mixed corpus ran BPE again for all its pre-tokens each time, at half the
/// speed of gpt2 on the same text (issue 22); dropping a fixed part instead kept the pre-tokens of a text
/// encoded before for several rounds. What the cache holds never changes an id.
struct Cache {
    map: PieceMap,
    limit: usize,
    /// Times the cache was full: which entry of each four goes turns with it.
    evictions: usize,
}

/// Bytes of records a cache holds on average per entry before it makes room (besides its `limit` of
/// entries): memory stays bounded when the pre-tokens are long (a pre-token is kept up to 64 kB).
const BYTES_PER_ENTRY: usize = 256;

impl Cache {
    /// An empty cache of at most `limit` pre-tokens.
    pub(crate) fn new(limit: usize) -> Cache {
        Cache { map: PieceMap::default(), limit, evictions: 0 }
    }

    /// Whether the cache must make room before it takes another pre-token.
    fn full(&self) -> bool {
        self.full_after(0, 0)
    }

    /// Whether the cache would be full after taking `entries` more pre-tokens of `bytes` of records.
    fn full_after(&self, entries: usize, bytes: usize) -> bool {
        self.map.len() + entries >= self.limit
            || self.map.bytes() + bytes >= self.limit.saturating_mul(BYTES_PER_ENTRY)
    }

    /// Drops the entries not used since the last time, and if fewer than a quarter went, one in four of
    /// the others (any 4 entries in a row lose one); marks the rest unused.
    fn make_room(&mut self) {
        if self.limit < 4 {
            self.map.clear();
            return;
        }
        let before = self.map.len();
        if self.map.used() > before - before / 4 {
            let mut at = self.evictions;
            self.map.retain(|used| {
                at += usize::from(used);
                used && !at.is_multiple_of(4)
            });
        } else {
            self.map.retain(|used| used);
        }
        self.evictions += 1;
    }
}

/// A pre-token on its way through a cache (see `PieceCache::look_ahead`): the id of a short whole token
/// (`Tables::whole_rank`, which takes no room in a cache), or the hash it is looked up by.
#[derive(Clone, Copy)]
enum Ahead {
    Whole(u32),
    Hashed(u32),
}

impl Ahead {
    #[inline]
    fn of(tables: &Tables, piece: &[u8]) -> Ahead {
        match tables.whole_rank(piece) {
            Some(id) => Ahead::Whole(id),
            None => Ahead::Hashed(piece_map::hash(piece)),
        }
    }
}

/// What gives a pre-token's ids through a cache: a cache of one's own, or a batch thread's `SharedCache`.
///
/// A lookup waits on memory twice (its slot, then its record), and nothing else a cached pre-token costs
/// comes near that: `scan_into` starts the lookups of the next pre-tokens (`look_ahead` fetches the slot,
/// `fetch_record` the record it points at) before it ends the present one's (`encode_ahead`).
trait PieceCache {
    /// Appends the ids of `piece` to `out`; returns how many.
    ///
    /// A short pre-token that is a whole token (cl100k, o200k: most of them) is looked up in the rank
    /// table, as fast as in the cache, and takes no room there: cl100k on the mixed corpus (100.5k distinct
    /// pre-tokens in 4 MB, more than the 100k the cache holds) then keeps all its others (issue 22).
    #[inline]
    fn encode(&mut self, tables: &Tables, piece: &[u8], out: &mut Vec<u32>) -> usize {
        // (`Ahead::of` then `encode_ahead` spelled out: through the enum, o200k on English documents,
        // nearly all whole tokens, ran 2-3% slower.)
        if let Some(id) = tables.whole_rank(piece) {
            out.push(id);
            return 1;
        }
        self.encode_hashed(tables, piece, piece_map::hash(piece), out)
    }

    /// `encode` of a pre-token that is no short whole token (`Tables::whole_rank`), whose hash is `hash`.
    fn encode_hashed(&mut self, tables: &Tables, piece: &[u8], hash: u32, out: &mut Vec<u32>) -> usize;
    /// Fetches the slot where the lookup of `hash` begins (a hint).
    fn fetch_slot(&self, hash: u32);
    /// Fetches the record that the slot of `hash` points at (the slot in cache by now; a hint).
    fn fetch_record(&self, hash: u32);

    /// Starts `piece`'s lookup: its `Ahead`, with its slot on its way into the processor's cache.
    #[inline]
    fn look_ahead(&self, tables: &Tables, piece: &[u8]) -> Ahead {
        let ahead = Ahead::of(tables, piece);
        if let Ahead::Hashed(hash) = ahead {
            self.fetch_slot(hash);
        }
        ahead
    }

    /// `encode` of `piece`, whose lookup `look_ahead` began.
    #[inline]
    fn encode_ahead(&mut self, tables: &Tables, piece: &[u8], ahead: Ahead, out: &mut Vec<u32>) -> usize {
        match ahead {
            Ahead::Whole(id) => {
                out.push(id);
                1
            }
            Ahead::Hashed(hash) => self.encode_hashed(tables, piece, hash, out),
        }
    }
}

impl PieceCache for Cache {
    #[inline]
    fn encode_hashed(&mut self, tables: &Tables, piece: &[u8], hash: u32, out: &mut Vec<u32>) -> usize {
        if let Some(i) = self.map.find(hash, piece) {
            self.map.mark(i);
            return self.map.ids_into(i, out);
        }
        let start = out.len();
        tables.bpe(piece, out);
        if self.full() {
            self.make_room();
        }
        self.map.insert(hash, piece, &out[start..]);
        out.len() - start
    }

    #[inline]
    fn fetch_slot(&self, hash: u32) {
        self.map.fetch_slot(hash);
    }

    #[inline]
    fn fetch_record(&self, hash: u32) {
        self.map.fetch_record(hash);
    }
}

/// A batch thread's view of the batch's cache: one cache for all the threads, only read while they
/// encode (each marks the entries it uses), and the pre-tokens the thread merged itself, kept aside
/// (`fresh`) and put in the cache once no thread reads it (`settle`).
///
/// With a cache per thread, a chunk that changed threads from one call to the next found its pre-tokens
/// in the other thread's cache only (a second lookup, missing in the processor's caches, for one
/// pre-token in eight on mixed text), and the two caches held most pre-tokens twice, twice the memory
/// that one thread's lookups read: on 2 threads a batch of mixed text took about 13% more CPU than on
/// one (issue 22). One cache read by all is what one thread reads. What a cache holds never changes an
/// id.
struct SharedCache<'c> {
    cache: &'c Cache,
    fresh: PieceMap,
}

impl<'c> SharedCache<'c> {
    /// A thread's view of `cache`, with nothing merged yet.
    fn new(cache: &'c Cache) -> SharedCache<'c> {
        SharedCache { cache, fresh: PieceMap::default() }
    }

    /// Puts the pre-tokens the threads merged during the batch (`merged`, a map per thread) in `cache`
    /// (no longer read by any thread); a pre-token two threads merged is kept once.
    ///
    /// Room is made once, before, if they would not all fit: the entries used in the batch (marked) then
    /// stay with them, as when one thread encodes. Making room as they came, each new entry unmarked, the
    /// next one dropped those before it: on 2 threads, GPT-2 on Chinese after English and mixed documents
    /// (a full cache) merged again most of its pre-tokens in the next call, at 4 times the time.
    fn settle(merged: &[PieceMap], cache: &mut Cache) {
        let entries = merged.iter().map(PieceMap::len).sum();
        if cache.full_after(entries, merged.iter().map(PieceMap::bytes).sum()) {
            cache.make_room();
        }
        for fresh in merged {
            for at in fresh.records() {
                if cache.map.holds_record(fresh, at) {
                    continue;
                }
                if cache.full() {
                    cache.make_room(); // (more new pre-tokens in a batch than the cache holds)
                }
                cache.map.copy_record(fresh, at);
            }
        }
    }
}

impl PieceCache for SharedCache<'_> {
    fn encode_hashed(&mut self, tables: &Tables, piece: &[u8], hash: u32, out: &mut Vec<u32>) -> usize {
        if let Some(i) = self.cache.map.find(hash, piece) {
            self.cache.map.mark(i);
            return self.cache.map.ids_into(i, out);
        }
        if let Some(i) = self.fresh.find(hash, piece) {
            return self.fresh.ids_into(i, out);
        }
        let start = out.len();
        tables.bpe(piece, out);
        if self.fresh.len() >= self.cache.limit {
            self.fresh.clear(); // (a batch of more new pre-tokens than a cache holds: as if dropped)
        }
        self.fresh.insert(hash, piece, &out[start..]);
        out.len() - start
    }

    #[inline]
    fn fetch_slot(&self, hash: u32) {
        self.cache.map.fetch_slot(hash);
    }

    #[inline]
    fn fetch_record(&self, hash: u32) {
        self.cache.map.fetch_record(hash);
    }
}

/// Whether at most an eighth of the first 256 bytes of `text` are beyond ASCII (its pre-tokens then mostly
/// short words). A sample: counting all of a text's bytes cost o200k 1-2% on English documents.
#[inline]
fn mostly_ascii(text: &str) -> bool {
    let sample = &text.as_bytes()[..text.len().min(256)];
    let words = sample.chunks_exact(8);
    let tail = words.remainder().iter().filter(|&&b| b >= 0x80).count();
    let high: u32 = words
        .map(|w| (u64::from_le_bytes(w.try_into().expect("8 bytes")) & 0x8080_8080_8080_8080).count_ones())
        .sum();
    (high as usize + tail) * 8 <= sample.len()
}

/// How many pre-tokens ahead of the one it ends `scan_into` starts a lookup (`PieceCache::look_ahead`), and
/// how many ahead it fetches a record (`PieceCache::fetch_record`).
const SLOTS_AHEAD: usize = 8;
const RECORDS_AHEAD: usize = 4;

/// Zero bytes after the last token's bytes (see `Encoder::append_token`).
const PAD: usize = 16;

/// A batch is cut into about this many chunks per thread (the lists of one are made while the threads
/// encode others; at the end a thread waits for at most one chunk of another's: with 8 a thread, a
/// 2-thread batch idled a thread for up to a sixteenth of its time)...
const CHUNKS_PER_THREAD: usize = 128;
/// ... of at least this many bytes each (16 kB: about 0.1 ms of Chinese, which the threads ended up
/// waiting for 0.1-0.4 ms on at 64 kB; a chunk costs a few microseconds of its own).
const MIN_CHUNK: usize = 16 << 10;

/// A chunk of a batch's texts encoded (see `Encoder::encode_batch_chunks`): the ids of its texts one
/// after the other, and where each text's ids end in them.
#[derive(Debug, PartialEq, Eq)]
pub struct Chunk {
    /// The index of the chunk's first text in the batch.
    pub first: usize,
    pub ids: Vec<u32>,
    pub ends: Vec<usize>,
}

impl Chunk {
    /// Each text's ids, in order.
    pub fn texts(&self) -> impl Iterator<Item = &[u32]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts.zip(&self.ends).map(|(start, &end)| &self.ids[start..end])
    }
}

/// Copies the chunks' ids, in order, into `buf` (4 bytes each, native order), on up to `threads` threads
/// when there are `alone_below` or more: tens of MB of fresh pages, which one thread wrote alone while the
/// others had ended (`encode_batch_flat`'s layout, issue 22).
pub fn lay_out(buf: &mut [u8], chunks: &[Chunk], threads: usize, alone_below: usize) {
    fn copy(buf: &mut [u8], chunks: &[Chunk]) {
        let mut at = 0;
        for chunk in chunks {
            let part = &mut buf[at..at + chunk.ids.len() * 4];
            for (bytes, id) in part.chunks_exact_mut(4).zip(&chunk.ids) {
                bytes.copy_from_slice(&id.to_ne_bytes());
            }
            at += part.len();
        }
    }
    let total = buf.len() / 4;
    if threads <= 1 || total < alone_below || chunks.len() < 2 {
        return copy(buf, chunks);
    }
    // Runs of whole chunks of about total / threads ids each, and the part of `buf` each run fills.
    let share = total.div_ceil(threads);
    let mut runs: Vec<(&mut [u8], &[Chunk])> = Vec::with_capacity(threads);
    let (mut rest, mut start, mut ids) = (buf, 0, 0);
    for (k, chunk) in chunks.iter().enumerate() {
        ids += chunk.ids.len();
        if ids >= share || k + 1 == chunks.len() {
            let (part, tail) = std::mem::take(&mut rest).split_at_mut(ids * 4);
            runs.push((part, &chunks[start..=k]));
            (rest, start, ids) = (tail, k + 1, 0);
        }
    }
    std::thread::scope(|scope| {
        let mut runs = runs.into_iter();
        let own = runs.next();
        for (part, run) in runs {
            scope.spawn(move || copy(part, run));
        }
        if let Some((part, run)) = own {
            copy(part, run); // (this thread's share, while the others copy theirs)
        }
    });
}

/// How a batch's chunks are dealt out to its threads: each thread has a run of chunks in a row, which it
/// takes from the front; once its run is empty, it takes from the back of the run with the most chunks
/// left. So each thread meets about the same texts, with the same cache, call after call (when chunks
/// went to whichever thread was free, each cache met all the texts, and a text with nearly as many
/// distinct pre-tokens as a cache holds overflowed both), and none waits while another has chunks left
/// (with the chunks fixed in advance, the thread that ended first waited for the other).
struct Deal {
    /// Each thread's run: the front in the high 32 bits, the end in the low 32 bits.
    runs: Vec<AtomicU64>,
}

impl Deal {
    /// `chunks` chunks dealt out to `threads` threads in runs of about equal length.
    fn new(chunks: usize, threads: usize) -> Deal {
        let at = |w: usize| (w * chunks / threads) as u64;
        Deal { runs: (0..threads).map(|w| AtomicU64::new((at(w) << 32) | at(w + 1))).collect() }
    }

    /// The next chunk for thread `w`, or None when every run is empty.
    fn next(&self, w: usize) -> Option<usize> {
        if let Some(i) = Deal::claim(&self.runs[w], true) {
            return Some(i);
        }
        loop {
            let left = |run: &AtomicU64| {
                let both = run.load(Ordering::Relaxed);
                (both & 0xffff_ffff).saturating_sub(both >> 32)
            };
            let fullest = self.runs.iter().max_by_key(|run| left(run))?;
            if left(fullest) == 0 {
                return None;
            }
            if let Some(i) = Deal::claim(fullest, false) {
                return Some(i);
            }
            // Emptied by its own thread meanwhile: look again.
        }
    }

    /// Takes the front (or the back) chunk of `run`, None when it is empty.
    fn claim(run: &AtomicU64, front: bool) -> Option<usize> {
        let mut both = run.load(Ordering::Relaxed);
        loop {
            let (start, end) = (both >> 32, both & 0xffff_ffff);
            if start >= end {
                return None;
            }
            let (taken, i) =
                if front { (((start + 1) << 32) | end, start) } else { ((start << 32) | (end - 1), end - 1) };
            // Relaxed: the chunks' ids go to the calling thread through a channel or a join, which order
            // them; this only shares out indices.
            match run.compare_exchange_weak(both, taken, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return Some(i as usize),
                Err(now) => both = now,
            }
        }
    }
}

/// Why `Encoder::encode_batch_chunks` stopped early.
#[derive(Debug, PartialEq, Eq)]
pub enum BatchStop<E> {
    /// The first code point beyond the class table, in the texts' order.
    CodePoint(u32),
    /// The error `take` returned.
    Taken(E),
}

/// Below this many ids `derive_merges` runs on one thread (starting threads costs more).
const DERIVE_PARALLEL_MIN: usize = 20_000;

/// The tokens' bytes by id, one after the other: token i is `bytes[starts[i]..starts[i + 1]]` when
/// `present[i]` (an unused id has no bytes). What `Encoder::with_ranks_arena` is built from.
pub struct TokenArena {
    bytes: Vec<u8>,
    starts: Vec<usize>,
    present: Vec<bool>,
}

impl TokenArena {
    /// An empty arena with room for `tokens` tokens of `bytes` bytes in all.
    pub fn with_capacity(tokens: usize, bytes: usize) -> TokenArena {
        let mut starts = Vec::with_capacity(tokens + 1);
        starts.push(0);
        TokenArena { bytes: Vec::with_capacity(bytes + PAD), starts, present: Vec::with_capacity(tokens) }
    }

    /// Adds the next id's bytes (None for an unused id).
    pub fn push(&mut self, token: Option<&[u8]>) {
        self.present.push(token.is_some());
        if let Some(token) = token {
            self.bytes.extend_from_slice(token);
        }
        self.starts.push(self.bytes.len());
    }
}

/// The buffers `Tables::last_merge` reuses from one token to the next.
#[derive(Default)]
struct Scratch {
    starts: Vec<usize>,
    pairs: Vec<u32>,
    parts: Vec<u32>,
}

/// Native BPE encoder and decoder of one `Tokenizer`, built once from its tables.
pub struct Encoder {
    tables: Tables,
    // A pool of caches: a call takes one (or makes a new one when all are in use) and puts it back, so
    // that Python threads encoding with one tokenizer at the same time neither fail nor wait for each
    // other (encode-corpus runs its tasks on threads), and each keeps a warm cache.
    caches: Mutex<Vec<Cache>>,
    cache_size: usize,
    /// All tokens' bytes one after the other; token i is bytes[starts[i]..starts[i + 1]]. PAD zero bytes
    /// follow the last one, so that `append_token` copies any short token as PAD bytes at once.
    bytes: Vec<u8>,
    starts: Vec<usize>,
    present: Vec<bool>,
}

impl Encoder {
    /// Builds the tables.
    ///
    /// Args:
    ///     byte_ids: the token id of each byte 0-255.
    ///     merges: (left id, right id, merged id) in rank order.
    ///     whole: for `ignore_merges`, ordinary token bytes -> id; None otherwise.
    ///     decoder: each id's token bytes, None for an unused id.
    ///     cache_size: how many pre-tokens' ids to remember.
    pub fn new(
        byte_ids: [u32; 256],
        merges: &[(u32, u32, u32)],
        whole: Option<FxHashMap<Vec<u8>, u32>>,
        decoder: &[Option<Vec<u8>>],
        cache_size: usize,
    ) -> Encoder {
        let mut table = FxHashMap::default();
        for (rank, &(a, b, merged)) in merges.iter().enumerate() {
            table.entry((a, b)).or_insert((rank as u32, merged));
        }
        let mut bytes = Vec::new();
        let mut starts = vec![0];
        let mut present = Vec::with_capacity(decoder.len());
        for token in decoder {
            present.push(token.is_some());
            bytes.extend_from_slice(token.as_deref().unwrap_or(b""));
            starts.push(bytes.len());
        }
        bytes.extend_from_slice(&[0; PAD]);
        Encoder {
            tables: Tables { byte_ids, merges: table, whole, ranks: None, whole_by_ranks: false },
            caches: Mutex::new(Vec::new()),
            cache_size: cache_size.max(1),
            bytes,
            starts,
            present,
        }
    }

    /// Builds the tables for tiktoken's rule (see the module's doc): a pair's rank is its concatenation's id
    /// among the ordinary tokens (`decoder`'s entries but `special_ids`; of repeated bytes the smallest id).
    ///
    /// Args:
    ///     byte_ids: the token id of each byte 0-255.
    ///     decoder: each id's token bytes, None for an unused id.
    ///     special_ids: the ids of the special tokens, which never come out of a merge.
    ///     ignore_merges: a pre-token whose bytes are an ordinary token is taken whole (as tiktoken does).
    ///     cache_size: how many pre-tokens' ids to remember.
    pub fn with_ranks(
        byte_ids: [u32; 256],
        decoder: Vec<Option<Vec<u8>>>,
        special_ids: &[u32],
        ignore_merges: bool,
        cache_size: usize,
    ) -> Encoder {
        let mut arena =
            TokenArena::with_capacity(decoder.len(), decoder.iter().flatten().map(Vec::len).sum());
        for token in &decoder {
            arena.push(token.as_deref());
        }
        Encoder::with_ranks_arena(byte_ids, arena, special_ids, ignore_merges, cache_size)
    }

    /// [`Encoder::with_ranks`] from the tokens' bytes already in one arena (the bindings copy each bytes
    /// object of the decoder list straight into it: no buffer per token).
    pub fn with_ranks_arena(
        byte_ids: [u32; 256],
        arena: TokenArena,
        special_ids: &[u32],
        ignore_merges: bool,
        cache_size: usize,
    ) -> Encoder {
        let TokenArena { mut bytes, starts, present } = arena;
        let mut special = vec![false; present.len()];
        for &i in special_ids {
            if let Some(s) = special.get_mut(i as usize) {
                *s = true;
            }
        }
        let ranks = Ranks::from_arena(&bytes, &starts, &present, &special);
        bytes.extend_from_slice(&[0; PAD]);
        Encoder {
            tables: Tables {
                byte_ids,
                merges: FxHashMap::default(),
                whole: None,
                ranks: Some(ranks),
                // With ignore_merges the whole-token lookup is the rank table itself.
                whole_by_ranks: ignore_merges,
            },
            caches: Mutex::new(Vec::new()),
            cache_size: cache_size.max(1),
            bytes,
            starts,
            present,
        }
    }

    /// Under tiktoken's rule, each multi-byte ordinary token's merge: tiktoken's BPE on the token's bytes
    /// with only the tokens of lower rank ends with two parts, which make it (`(left id, right id, id)` by
    /// rank); a token it ends with more parts for has none (it comes only from a pre-token that is exactly
    /// that token). Empty under the `merges` rule, whose merges the caller has.
    pub fn derive_merges(&self) -> Vec<(u32, u32, u32)> {
        let Some(ranks) = &self.tables.ranks else {
            return Vec::new();
        };
        // The tokens by rank are the ids in order whose bytes rank as themselves (not a special token's,
        // nor the larger id of repeated bytes): read from the arena in place, with no list of the tokens'
        // bytes to build and sort, and with one pair of buffers per thread for all of its tokens.
        let derive = |ids: std::ops::Range<u32>| -> Vec<(u32, u32, u32)> {
            let mut scratch = Scratch::default();
            ids.filter_map(|id| {
                let token = self.token_bytes(id)?;
                if token.len() < 2 || ranks.get(token) != Some(id) {
                    return None;
                }
                self.tables.last_merge(ranks, token, id, &mut scratch).map(|(left, right)| (left, right, id))
            })
            .collect()
        };
        // Each token's merge depends on the ranks alone: contiguous runs of ids on the cores (a rank file
        // of 100k-200k tokens, which `bpe-studio inspect` and the app's views open), in rank order.
        let total = self.present.len() as u32;
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        if cores < 2 || (total as usize) < DERIVE_PARALLEL_MIN {
            return derive(0..total);
        }
        let size = total.div_ceil(cores as u32);
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..total)
                .step_by(size as usize)
                .map(|start| {
                    let run = start..(start + size).min(total);
                    let spawned =
                        std::thread::Builder::new().name("bpe-studio-derive".into()).spawn_scoped(scope, {
                            let run = run.clone();
                            move || derive(run)
                        });
                    (run, spawned) // a thread the system refuses: its run is derived here instead
                })
                .collect();
            let mut all = Vec::with_capacity(total as usize);
            for (run, handle) in handles {
                match handle {
                    Ok(h) => all.extend(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))),
                    Err(_) => all.extend(derive(run)),
                }
            }
            all
        })
    }

    /// Token `id`'s bytes, or None for an id not in the vocabulary.
    fn token_bytes(&self, id: u32) -> Option<&[u8]> {
        let i = id as usize;
        (*self.present.get(i)?).then(|| &self.bytes[self.starts[i]..self.starts[i + 1]])
    }

    /// Under tiktoken's rule, what `bpe-studio inspect` says of the merges `derive_merges` finds, without
    /// handing them over: `(merges, deepest id, its height)`, the height of a token's merge tree being 1
    /// more than its taller part's (0 for a single byte), the smallest id among the tallest. `None` under
    /// the `merges` rule, or with no merge.
    pub fn merge_summary(&self) -> Option<(usize, u32, u32)> {
        self.tables.ranks.as_ref()?;
        let merges = self.derive_merges();
        let size = merges.iter().map(|&(a, b, m)| a.max(b).max(m)).max()? as usize + 1;
        let mut height = vec![0u32; size];
        let (mut best, mut best_id) = (0u32, 0u32);
        // In rank order: a merge's parts have lower ranks, so their heights are known. Each token has one
        // merge (its own rank) and ranks ascend, so the first of the tallest is the smallest id.
        for &(left, right, made) in &merges {
            let h = 1 + height[left as usize].max(height[right as usize]);
            height[made as usize] = h;
            if h > best {
                (best, best_id) = (h, made);
            }
        }
        Some((merges.len(), best_id, best))
    }

    /// The cache pool, also after a panic in another thread (a cache is always in a usable state).
    fn pool(&self) -> std::sync::MutexGuard<'_, Vec<Cache>> {
        self.caches.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` with a cache of the pool to itself, then puts the cache back.
    fn with_cache<R>(&self, f: impl FnOnce(&mut Cache) -> R) -> R {
        let taken = self.pool().pop();
        let mut cache = taken.unwrap_or_else(|| Cache::new(self.cache_size));
        let result = f(&mut cache);
        self.pool().push(cache);
        result
    }

    /// Appends the ids of `text`'s pre-tokens to `out`; returns the first code point beyond the class
    /// table (then `out` is left as it was).
    ///
    /// A long text is scanned in blocks of about `BLOCK` bytes cut where no preset's pre-token can span
    /// (see `safe_cut`): the scanners hold about 13 bytes per character, so this bounds their memory and
    /// keeps it in cache.
    fn scan_into(
        &self,
        cache: &mut impl PieceCache,
        scan: Scanner,
        text: &str,
        classes: &[u8],
        out: &mut Vec<u32>,
    ) -> Option<u32> {
        let before = out.len();
        let mut rest = text;
        while !rest.is_empty() {
            let cut = safe_cut(rest.as_bytes(), BLOCK);
            let (block, after) = rest.split_at(cut);
            let missing = if self.tables.whole_by_ranks && mostly_ascii(block) {
                // Mostly whole tokens looked up in the rank table (cl100k, o200k on English): starting
                // lookups ahead only cost them time (8-12% on o200k's English documents).
                scan(block, classes, &mut |piece: &str| {
                    cache.encode(&self.tables, piece.as_bytes(), out);
                })
            } else {
                self.scan_ahead(cache, scan, block, classes, out)
            };
            if missing.is_some() {
                out.truncate(before);
                return missing;
            }
            rest = after;
        }
        None
    }

    /// `scan` of `block` into `out` through `cache`, each pre-token's lookup begun `SLOTS_AHEAD` pre-tokens
    /// before it ends (see `PieceCache`): GPT-2 on Chinese, where a lookup reads a long record, a tenth to
    /// a fifth faster on one thread and on two.
    fn scan_ahead<'b>(
        &self,
        cache: &mut impl PieceCache,
        scan: Scanner,
        block: &'b str,
        classes: &[u8],
        out: &mut Vec<u32>,
    ) -> Option<u32> {
        // The pre-tokens whose lookups have begun, oldest first: the n-th is at ring[n % SLOTS_AHEAD].
        let mut ring: [(&'b str, Ahead); SLOTS_AHEAD] = [("", Ahead::Whole(0)); SLOTS_AHEAD];
        let mut n = 0;
        let missing = scan(block, classes, &mut |piece: &'b str| {
            let ahead = cache.look_ahead(&self.tables, piece.as_bytes());
            let at = n % SLOTS_AHEAD;
            if n >= SLOTS_AHEAD {
                let (oldest, its) = ring[at];
                cache.encode_ahead(&self.tables, oldest.as_bytes(), its, out);
            }
            ring[at] = (piece, ahead);
            if n >= RECORDS_AHEAD {
                if let Ahead::Hashed(hash) = ring[(n - RECORDS_AHEAD) % SLOTS_AHEAD].1 {
                    cache.fetch_record(hash);
                }
            }
            n += 1;
        });
        for k in n.saturating_sub(SLOTS_AHEAD)..n {
            let (piece, ahead) = ring[k % SLOTS_AHEAD];
            cache.encode_ahead(&self.tables, piece.as_bytes(), ahead, out);
        }
        missing
    }

    /// The ids of the pre-tokens, one after the other.
    pub fn encode(&self, pieces: &[&str]) -> Vec<u32> {
        self.with_cache(|cache| {
            let mut out = Vec::with_capacity(pieces.iter().map(|s| s.len()).sum::<usize>() / 3 + 1);
            for s in pieces {
                cache.encode(&self.tables, s.as_bytes(), &mut out);
            }
            out
        })
    }

    /// The ids of the pre-tokens and how many ids each pre-token has: (ids, counts).
    pub fn encode_counts(&self, pieces: &[&str]) -> (Vec<u32>, Vec<usize>) {
        self.with_cache(|cache| {
            let mut out = Vec::new();
            let counts = pieces.iter().map(|s| cache.encode(&self.tables, s.as_bytes(), &mut out)).collect();
            (out, counts)
        })
    }

    /// The ids of a whole text split by a preset's scanner (`classes`: the class table of
    /// bpe_studio/engine/native.py), or Err with the first code point beyond the table.
    pub fn encode_text(&self, scan: Scanner, text: &str, classes: &[u8]) -> Result<Vec<u32>, u32> {
        self.with_cache(|cache| {
            let mut out = Vec::with_capacity(text.len() / 4 + 1);
            match self.scan_into(cache, scan, text, classes, &mut out) {
                Some(code_point) => Err(code_point),
                None => Ok(out),
            }
        })
    }

    /// The ids of each text (as `encode_text`), the texts shared out among up to `threads` native threads
    /// (all reading one cache), in the texts' order, or Err with the first code point beyond the table.
    pub fn encode_batch(
        &self,
        scan: Scanner,
        texts: &[&str],
        classes: &[u8],
        threads: usize,
    ) -> Result<Vec<Vec<u32>>, u32> {
        let mut all = Vec::with_capacity(texts.len());
        for chunk in self.encode_batch_all(scan, texts, classes, threads)? {
            all.extend(chunk.texts().map(<[u32]>::to_vec));
        }
        Ok(all)
    }

    /// The chunk of texts `run`, the first of them text `first` of its batch (see `encode_batch_chunks`), or
    /// Err with the first code point beyond the class table.
    fn encode_run(
        &self,
        cache: &mut impl PieceCache,
        scan: Scanner,
        classes: &[u8],
        first: usize,
        run: &[&str],
    ) -> Result<Chunk, u32> {
        let size: usize = run.iter().map(|t| t.len()).sum();
        let mut chunk =
            Chunk { first, ids: Vec::with_capacity(size / 4 + 1), ends: Vec::with_capacity(run.len()) };
        for text in run {
            if let Some(code_point) = self.scan_into(cache, scan, text, classes, &mut chunk.ids) {
                return Err(code_point);
            }
            chunk.ends.push(chunk.ids.len());
        }
        Ok(chunk)
    }

    /// `encode_batch`, handing each chunk of texts' ids to `take` on the calling thread, in any order
    /// (each chunk once; `Chunk::first` says where it belongs). Up to `threads` threads encode, the
    /// calling thread among them: between two chunks of its own it hands over those the others have
    /// finished, so it never waits while chunks are left and is never woken while it encodes. (Before, it
    /// only took the chunks, in order, as they came: a third thread on 2 cores, woken about 100 times a
    /// batch, that preempted an encoder; with lists 2 threads gave 1.04-2.01x one, issue 22.) The Python
    /// bindings make the lists of a chunk there, so that this overlaps the encoding. The chunks are dealt as
    /// `Deal` says. A code point beyond the table stops the batch with the first one in the texts' order
    /// (every chunk before it is handed over; none after it need be); an error of `take` stops it too.
    pub fn encode_batch_chunks<E>(
        &self,
        scan: Scanner,
        texts: &[&str],
        classes: &[u8],
        threads: usize,
        take: &mut dyn FnMut(Chunk) -> Result<(), E>,
    ) -> Result<(), BatchStop<E>> {
        // No more threads than cores (the work is all CPU) or chunks: num_threads=20000 started 20,000 OS
        // threads, and the one that could not start panicked.
        let (chunks, workers) = batch_chunks(texts, threads);
        let n = workers.min(chunks.len()).max(1);
        if n == 1 {
            return self.with_cache(|cache| {
                for &(first, run) in &chunks {
                    let chunk =
                        self.encode_run(cache, scan, classes, first, run).map_err(BatchStop::CodePoint)?;
                    take(chunk).map_err(BatchStop::Taken)?;
                }
                Ok(())
            });
        }
        let deal = Deal::new(chunks.len(), n);
        // The first chunk that met a code point beyond the table (none after it is begun), and whether
        // `take` failed (none is begun at all).
        let first_bad = AtomicUsize::new(usize::MAX);
        let stop = AtomicBool::new(false);
        // Thread w's next chunk and what encoding it found; None once no chunk is left or the batch stopped.
        let encode_next = |w: usize, cache: &mut SharedCache| -> Option<(usize, Result<Chunk, u32>)> {
            while let Some(i) = deal.next(w) {
                if stop.load(Ordering::Relaxed) {
                    return None;
                }
                if i > first_bad.load(Ordering::Relaxed) {
                    continue;
                }
                let (first, run) = chunks[i];
                let found = self.encode_run(cache, scan, classes, first, run);
                if found.is_err() {
                    first_bad.fetch_min(i, Ordering::Relaxed);
                }
                return Some((i, found));
            }
            None
        };
        // On the calling thread: hands a chunk over, or keeps the first code point beyond the table.
        let mut bad: Option<(usize, u32)> = None;
        let mut failed: Option<E> = None;
        let mut hand = |i: usize, found: Result<Chunk, u32>| match found {
            Ok(chunk) => {
                if failed.is_none() && i < first_bad.load(Ordering::Relaxed) {
                    if let Err(err) = take(chunk) {
                        failed = Some(err);
                        stop.store(true, Ordering::Relaxed);
                    }
                }
            }
            Err(code_point) => {
                if bad.is_none_or(|(b, _)| i < b) {
                    bad = Some((i, code_point));
                }
            }
        };
        // One cache for all the threads (see `SharedCache`), read while they encode, then given what each
        // merged.
        self.with_cache(|cache| {
            let shared: &Cache = cache;
            // Thread w encodes chunks, handing each to `found` (false: stop); returns the pre-tokens
            // it merged.
            let encode_all = |w: usize, found: &mut dyn FnMut(usize, Result<Chunk, u32>) -> bool| {
                let mut view = SharedCache::new(shared);
                while let Some((i, chunk)) = encode_next(w, &mut view) {
                    if !found(i, chunk) {
                        break;
                    }
                }
                view.fresh
            };
            let merged: Vec<PieceMap> = std::thread::scope(|scope| {
                let (sender, receiver) = mpsc::channel::<(usize, Result<Chunk, u32>)>();
                let mut handles = Vec::with_capacity(n - 1);
                for w in 1..n {
                    let theirs = sender.clone();
                    let encode_all = &encode_all;
                    let spawned = std::thread::Builder::new()
                        .name("bpe-studio-encode".into())
                        .spawn_scoped(scope, move || {
                            encode_all(w, &mut |i, found| theirs.send((i, found)).is_ok())
                        });
                    // A thread the system refuses (out of threads or memory): the others take its chunks.
                    if let Ok(handle) = spawned {
                        handles.push(handle);
                    }
                }
                drop(sender);
                let mut merged = vec![encode_all(0, &mut |i, found| {
                    hand(i, found);
                    for (i, found) in receiver.try_iter() {
                        hand(i, found);
                    }
                    true
                })];
                // Nothing left to begin: the chunks still being encoded, until every thread has ended them.
                for (i, found) in receiver.iter() {
                    hand(i, found);
                }
                // A panic in a thread (a bug) is raised again here, and the bindings' guard (src/guard.rs)
                // makes it a RuntimeError.
                for handle in handles {
                    merged.push(handle.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
                }
                merged
            });
            SharedCache::settle(&merged, cache);
        });
        if let Some(err) = failed {
            return Err(BatchStop::Taken(err));
        }
        match bad {
            Some((_, code_point)) => Err(BatchStop::CodePoint(code_point)),
            None => Ok(()),
        }
    }

    /// The chunks of `encode_batch_chunks`, all of them, in the texts' order, or Err with the first code
    /// point beyond the class table in the texts' order.
    pub fn encode_batch_all(
        &self,
        scan: Scanner,
        texts: &[&str],
        classes: &[u8],
        threads: usize,
    ) -> Result<Vec<Chunk>, u32> {
        let mut all = Vec::new();
        let done = self.encode_batch_chunks(scan, texts, classes, threads, &mut |chunk| {
            all.push(chunk);
            Ok::<(), ()>(())
        });
        match done {
            Ok(()) => {
                all.sort_unstable_by_key(|chunk| chunk.first);
                Ok(all)
            }
            Err(BatchStop::CodePoint(code_point)) => Err(code_point),
            Err(BatchStop::Taken(())) => unreachable!("the closure above never fails"),
        }
    }

    /// The ids of all the texts one after the other and where each text's ids end in them (`ends`), on up
    /// to `threads` threads, or Err with the first code point beyond the class table in the texts' order.
    pub fn encode_batch_flat(
        &self,
        scan: Scanner,
        texts: &[&str],
        classes: &[u8],
        threads: usize,
    ) -> Result<(Vec<u32>, Vec<usize>), u32> {
        let all = self.encode_batch_all(scan, texts, classes, threads)?;
        let mut ids: Vec<u32> = Vec::with_capacity(all.iter().map(|c| c.ids.len()).sum());
        let mut ends: Vec<usize> = Vec::with_capacity(texts.len());
        for chunk in all {
            let base = ids.len();
            ids.extend_from_slice(&chunk.ids);
            ends.extend(chunk.ends.into_iter().map(|end| base + end));
        }
        debug_assert_eq!(ends.len(), texts.len());
        Ok((ids, ends))
    }

    /// The ids of the texts one after the other, `separator` (an id, if given) between two texts, as
    /// little-endian integers of `width` bytes (2 or 4, which the caller checks) — the `.npy`/`.bin` rows
    /// of encode-corpus — or Err with the first code point beyond the table. One thread.
    pub fn encode_join(
        &self,
        scan: Scanner,
        texts: &[&str],
        classes: &[u8],
        separator: Option<u32>,
        width: usize,
    ) -> Result<Vec<u8>, u32> {
        let ids = self.with_cache(|cache| {
            let total: usize = texts.iter().map(|s| s.len()).sum();
            let mut out = Vec::with_capacity(total / 4 + texts.len());
            for (i, text) in texts.iter().enumerate() {
                if i > 0 {
                    out.extend(separator);
                }
                if let Some(code_point) = self.scan_into(cache, scan, text, classes, &mut out) {
                    return Err(code_point);
                }
            }
            Ok(out)
        })?;
        let mut raw = Vec::with_capacity(ids.len() * width);
        if width == 2 {
            // choose_dtype (corpus_encoding.py) picks uint16 only when every id fits.
            raw.extend(ids.iter().flat_map(|&id| (id as u16).to_le_bytes()));
        } else {
            raw.extend(ids.iter().flat_map(|&id| id.to_le_bytes()));
        }
        Ok(raw)
    }

    /// The number of token ids (used or not) the encoder knows: every id it returns is below it.
    pub fn vocab_len(&self) -> usize {
        self.present.len()
    }

    /// The number of pre-tokens in the fullest of the encoder's caches (one unless threads encoded at
    /// the same time).
    pub fn cache_len(&self) -> usize {
        self.pool().iter().map(|c| c.map.len()).max().unwrap_or(0)
    }

    /// Forgets the cached pre-token encodings.
    pub fn clear_cache(&self) {
        // Dropping the caches (not only emptying them) also gives their memory back.
        self.pool().clear();
    }

    /// Writes token `id`'s bytes into `out` at `*len` and moves `*len` past them (`out` grows as needed;
    /// the caller truncates it to `*len` at the end); false when the id is not in the vocabulary.
    ///
    /// Most tokens are a few bytes: copying them with `extend_from_slice` was a call to memmove each, half
    /// of decoding's time (issue 22). A token of at most PAD bytes is copied as a fixed PAD bytes instead
    /// (the bytes after it are overwritten by the next token, or cut off by the truncation).
    #[inline]
    pub fn append_token(&self, id: i64, out: &mut Vec<u8>, len: &mut usize) -> bool {
        if id < 0 || id as u64 >= self.present.len() as u64 || !self.present[id as usize] {
            return false;
        }
        let (start, end) = (self.starts[id as usize], self.starts[id as usize + 1]);
        let n = end - start;
        let room = n.max(PAD);
        if *len + room > out.len() {
            out.resize((2 * out.len()).max(*len + room), 0);
        }
        if n <= PAD {
            out[*len..*len + PAD].copy_from_slice(&self.bytes[start..start + PAD]);
        } else {
            out[*len..*len + n].copy_from_slice(&self.bytes[start..end]);
        }
        *len += n;
        true
    }

    /// How many bytes the tokens `ids` decode to, or Err with the first id not in the vocabulary.
    pub fn decoded_len(&self, ids: &[i64]) -> Result<usize, i64> {
        let valid = |i: i64| i >= 0 && (i as u64) < self.present.len() as u64 && self.present[i as usize];
        let mut total = 0usize;
        for &i in ids {
            if !valid(i) {
                return Err(i);
            }
            total += self.starts[i as usize + 1] - self.starts[i as usize];
        }
        Ok(total)
    }

    /// Writes the tokens' bytes one after the other into `buf`, of the length `decoded_len` gave.
    pub fn decode_into(&self, ids: &[i64], buf: &mut [u8]) {
        let mut at = 0;
        for &i in ids {
            let token = &self.bytes[self.starts[i as usize]..self.starts[i as usize + 1]];
            buf[at..at + token.len()].copy_from_slice(token);
            at += token.len();
        }
    }
}

/// Long texts are scanned in blocks of about this many bytes.
pub const BLOCK: usize = 1 << 20;

/// The first position at or after `at` where the text may be cut without changing any pre-token of the
/// presets, or the text's length: after a printable ASCII character and a newline, before an ASCII letter
/// (the boundary that training cuts chunks at, written once for Python in bpe_studio/engine/pretokenize/boundary.py). Such
/// a position is a character boundary, so the pieces are valid str.
///
/// Example: `safe_cut(b"ab.\ncd", 0)` is 4 (between "\n" and "c").
pub fn safe_cut(text: &[u8], at: usize) -> usize {
    if text.len() <= at {
        return text.len();
    }
    (at.max(2)..text.len())
        .find(|&i| {
            (0x21..=0x7e).contains(&text[i - 2]) && text[i - 1] == b'\n' && text[i].is_ascii_alphabetic()
        })
        .unwrap_or(text.len())
}

/// A batch's chunks (`split_runs`: `CHUNKS_PER_THREAD` per thread, fewer when they would hold under
/// `MIN_CHUNK` bytes) and how many threads may encode them: no more than `threads` or the cores.
/// Each chunk comes with the index of its first text.
fn batch_chunks<'s, 'a>(texts: &'s [&'a str], threads: usize) -> (Vec<(usize, &'s [&'a str])>, usize) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let workers = threads.min(cores).max(1);
    let total: usize = texts.iter().map(|t| t.len()).sum();
    let runs = split_runs(texts, (workers * CHUNKS_PER_THREAD).min(total / MIN_CHUNK + 1));
    let mut first = 0;
    let chunks = runs
        .into_iter()
        .map(|run| {
            first += run.len();
            (first - run.len(), run)
        })
        .collect();
    (chunks, workers)
}

/// Cuts `texts` into at most `parts` contiguous runs of about equal byte size (no empty run).
///
/// Example: sizes [5, 1, 1, 5] in 2 parts -> [5, 1, 1] and [5] (a run closes once it holds half and
/// a byte of the total).
fn split_runs<'s, 'a>(texts: &'s [&'a str], parts: usize) -> Vec<&'s [&'a str]> {
    let total: usize = texts.iter().map(|t| t.len()).sum();
    let share = total / parts.max(1) + 1;
    let mut runs = Vec::new();
    let (mut start, mut size) = (0, 0);
    for (i, text) in texts.iter().enumerate() {
        size += text.len();
        if size >= share && runs.len() + 1 < parts {
            runs.push(&texts[start..=i]);
            start = i + 1;
            size = 0;
        }
    }
    if start < texts.len() {
        runs.push(&texts[start..]);
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn laying_out_chunks_on_threads_gives_the_ids_in_order() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        for _ in 0..200 {
            let chunks: Vec<Chunk> = (0..1 + next(12))
                .map(|k| {
                    let ids: Vec<u32> = (0..next(40)).map(|_| next(1 << 20) as u32).collect();
                    Chunk { first: k as usize, ends: vec![ids.len()], ids }
                })
                .collect();
            let expected: Vec<u8> =
                chunks.iter().flat_map(|c| c.ids.iter().flat_map(|id| id.to_ne_bytes())).collect();
            for threads in 1..=4 {
                for alone_below in [0, 1, 30, usize::MAX] {
                    let mut buf = vec![0xAAu8; expected.len()];
                    lay_out(&mut buf, &chunks, threads, alone_below);
                    assert_eq!(buf, expected, "{threads} threads, alone below {alone_below}");
                }
            }
        }
    }
    use crate::pretok;
    use crate::testing::{classes, encoder};

    /// `len` bytes of "a" and "b" (about one "a" in three), from a small linear congruential generator.
    pub(super) fn ab_word(state: &mut u64, len: usize) -> Vec<u8> {
        (0..len)
            .map(|_| {
                *state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                if (*state >> 40).is_multiple_of(3) {
                    b'a'
                } else {
                    b'b'
                }
            })
            .collect()
    }

    /// The reference: merge the adjacent pair of lowest rank, leftmost first, until none is left.
    pub(super) fn naive(encoder: &Encoder, piece: &[u8]) -> Vec<u32> {
        let mut word: Vec<u32> = piece.iter().map(|&b| encoder.tables.byte_ids[b as usize]).collect();
        loop {
            let ranks = word.windows(2).map(|w| encoder.tables.pair(w[0], w[1]));
            let Some((at, (rank, merged))) = ranks.enumerate().min_by_key(|&(i, (rank, _))| (rank, i)) else {
                return word;
            };
            if rank == NO_RANK {
                return word;
            }
            word[at] = merged;
            word.remove(at + 1);
        }
    }

    fn bpe(encoder: &Encoder, piece: &str) -> Vec<u32> {
        let mut out = Vec::new();
        encoder.tables.bpe(piece.as_bytes(), &mut out);
        out
    }

    #[test]
    fn the_pair_of_lowest_rank_merges_first_wherever_it_is() {
        let e = encoder(&[("b", "c"), ("a", "b"), ("a", "bc")], None);
        // bc (rank 0) before ab (rank 1), though ab is further left; then a|bc (rank 2) = 258.
        assert_eq!(bpe(&e, "abc"), [258]);
        assert_eq!(bpe(&e, "abx"), [257, b'x' as u32]);
        assert_eq!(bpe(&e, "x"), [b'x' as u32]);
        assert!(bpe(&e, "").is_empty());
    }

    #[test]
    fn among_equal_ranks_the_leftmost_pair_merges_first() {
        let e = encoder(&[("a", "a"), ("aa", "aa")], None);
        assert_eq!(bpe(&e, "aaa"), [256, b'a' as u32]); // [aa, a], not [a, aa]
        assert_eq!(bpe(&e, "aaaa"), [257]);
        assert_eq!(bpe(&e, "aaaaa"), [257, b'a' as u32]);
    }

    #[test]
    fn a_pair_listed_twice_keeps_its_first_rank() {
        // (a, b) again at rank 2 makes no new rank: b|c (rank 1) does not overtake it.
        let mut e = encoder(&[("a", "b"), ("b", "c")], None);
        let merges = [(97, 98, 256), (98, 99, 257), (97, 98, 999)];
        e.tables.merges.clear();
        for (rank, &(a, b, m)) in merges.iter().enumerate() {
            e.tables.merges.entry((a, b)).or_insert((rank as u32, m));
        }
        assert_eq!(bpe(&e, "abc"), [256, b'c' as u32]);
        let built = Encoder::new(std::array::from_fn(|b| b as u32), &merges, None, &[], 10);
        assert_eq!(built.tables.pair(97, 98), (0, 256));
    }

    /// An encoder under tiktoken's rule: the 256 bytes, then `tokens` with ids from 256 in order.
    fn rank_encoder(tokens: &[&str], ignore_merges: bool) -> Encoder {
        let mut decoder: Vec<Option<Vec<u8>>> = (0..=255u8).map(|b| Some(vec![b])).collect();
        decoder.extend(tokens.iter().map(|t| Some(t.as_bytes().to_vec())));
        Encoder::with_ranks(std::array::from_fn(|b| b as u32), decoder, &[], ignore_merges, 10)
    }

    #[test]
    fn a_short_whole_token_is_found_in_the_rank_table_and_takes_no_room_in_the_cache() {
        let tokens = ["ab", "abc", "abcdefgh", "cd"];
        for ignore_merges in [true, false] {
            let e = rank_encoder(&tokens, ignore_merges);
            let mut cache = Cache::new(100);
            for piece in ["ab", "abc", "abcdefgh", "abcd", "x", "ab", "abcdefgh"] {
                let mut out = Vec::new();
                cache.encode(&e.tables, piece.as_bytes(), &mut out);
                let mut expected = Vec::new();
                e.tables.bpe(piece.as_bytes(), &mut expected);
                assert_eq!(out, expected, "{piece}");
            }
            // Taken whole: "ab", "abc" and "x" are not cached; "abcdefgh" (8 bytes) and "abcd" (ab|cd) are.
            let cached: usize = if ignore_merges { 2 } else { 5 };
            assert_eq!(cache.map.len(), cached, "ignore_merges={ignore_merges}");
        }
    }

    #[test]
    fn the_rank_table_by_length_finds_what_one_map_finds() {
        let tokens: Vec<&[u8]> = vec![
            b"\0",
            b"a",
            b"a\0",
            b"a\0\0",
            b"\0\0\0",
            b"ab",
            b"\xff\xff",
            b"abc",
            b"abcdefg",
            b"abcdefg\0",
            b"abcdefgh",
            b"abcdefghijklmnop",
            b"\0abc",
        ];
        let all: FxHashMap<Vec<u8>, u32> =
            tokens.iter().enumerate().map(|(i, t)| (t.to_vec(), i as u32)).collect();
        let ranks = Ranks::new(all.clone());
        let mut probes: Vec<Vec<u8>> = tokens.iter().map(|t| t.to_vec()).collect();
        probes.extend(
            [&b""[..], b"b", b"\0a", b"ab\0", b"abcdef", b"abcdefg\0\0", b"abcdefgi", b"\0\0"]
                .map(<[u8]>::to_vec),
        );
        for probe in &probes {
            assert_eq!(ranks.get(probe), all.get(probe).copied(), "{probe:?}");
        }
        // From an arena: the same ranks, with a special token's bytes skipped and, of repeated bytes, the
        // smallest id kept (short and long ones, and the two-byte table).
        let mut arena = TokenArena::with_capacity(0, 0);
        for token in &tokens {
            arena.push(Some(token));
        }
        let n = tokens.len() as u32;
        for again in [&b"abcdefghijklmnop"[..], b"abc", b"ab", b"special!"] {
            arena.push(Some(again));
        }
        arena.push(None);
        let mut special = vec![false; arena.present.len()];
        special[n as usize + 3] = true;
        let built = Ranks::from_arena(&arena.bytes, &arena.starts, &arena.present, &special);
        for probe in &probes {
            assert_eq!(built.get(probe), all.get(probe).copied(), "{probe:?}");
        }
        assert_eq!(built.get(b"special!"), None);
    }

    /// tiktoken's `byte_pair_merge`, as plainly as it can be written: parts as byte strings.
    fn naive_ranks(encoder: &Encoder, piece: &[u8]) -> Vec<u32> {
        let ranks = encoder.tables.ranks.as_ref().unwrap();
        let mut parts: Vec<Vec<u8>> = piece.iter().map(|&b| vec![b]).collect();
        loop {
            let best = (0..parts.len().saturating_sub(1))
                .filter_map(|i| ranks.get(&[parts[i].clone(), parts[i + 1].clone()].concat()).map(|r| (r, i)))
                .min();
            let Some((_, at)) = best else {
                return parts.iter().map(|p| ranks.get(p).expect("a token")).collect();
            };
            let right = parts.remove(at + 1);
            parts[at].extend(right);
        }
    }

    #[test]
    fn ranks_merge_any_two_parts_whose_concatenation_is_a_token() {
        // No pair is listed: "xyz" forms as y|z (259), then x|yz (260), because "yz" and "xyz" are tokens.
        let e = rank_encoder(&["ab", "bc", "abc", "yz", "xyz"], false);
        assert_eq!(bpe(&e, "abc"), [258]);
        assert_eq!(bpe(&e, "xyz"), [260]);
        assert_eq!(bpe(&e, "abcd"), [258, b'd' as u32]);
        assert_eq!(bpe(&e, "a"), [b'a' as u32]);
        assert!(bpe(&e, "").is_empty());
    }

    #[test]
    fn derive_merges_on_several_threads_keeps_rank_order() {
        // 30,000 two-byte tokens (more than DERIVE_PARALLEL_MIN: runs on the cores), then "abc" = ab|c.
        let pairs: Vec<[u8; 2]> = (0..30_000u32).map(|i| [(i / 256) as u8, (i % 256) as u8]).collect();
        let mut decoder: Vec<Option<Vec<u8>>> = (0..=255u8).map(|b| Some(vec![b])).collect();
        decoder.extend(pairs.iter().map(|p| Some(p.to_vec())));
        decoder.push(Some(b"abc".to_vec()));
        let e = Encoder::with_ranks(std::array::from_fn(|b| b as u32), decoder, &[], false, 10);
        let found = e.derive_merges();
        let mut expected: Vec<(u32, u32, u32)> =
            pairs.iter().zip(256u32..).map(|(p, id)| (u32::from(p[0]), u32::from(p[1]), id)).collect();
        let ab = 256 + u32::from(b'a') * 256 + u32::from(b'b');
        expected.push((ab, u32::from(b'c'), 256 + 30_000));
        assert_eq!(found, expected);
    }

    #[test]
    fn merge_summary_counts_the_derived_merges_and_finds_the_tallest_tree() {
        // ab (256), bc (257), abc = ab|c (258), yz (259), xyz = x|yz (260): 258 and 260 are 2 high.
        let e = rank_encoder(&["ab", "bc", "abc", "yz", "xyz"], false);
        assert_eq!(e.derive_merges().len(), 5);
        assert_eq!(e.merge_summary(), Some((5, 258, 2)));
        assert_eq!(rank_encoder(&[], false).merge_summary(), None);
    }

    #[test]
    fn ranks_take_a_pre_token_that_is_a_token_whole_with_ignore_merges() {
        // a|b (256), then neither ab|c nor c|d is a token: BPE stops at ab|c|d and never reaches "abcd".
        assert_eq!(
            bpe(&rank_encoder(&["ab", "bcd", "abcd"], false), "abcd"),
            [256, b'c' as u32, b'd' as u32]
        );
        assert_eq!(bpe(&rank_encoder(&["ab", "bcd", "abcd"], true), "abcd"), [258]);
    }

    #[test]
    fn ranks_long_words_take_the_heap_and_agree_with_the_reference() {
        let e = rank_encoder(&["ab", "ba", "aab", "bab", "abab", "bb", "abba", "aa", "baab", "bbb"], false);
        let mut state = 99u64;
        for len in [2, 3, 17, 255, 256, 257, 300, 1000] {
            for _ in 0..20 {
                let piece = ab_word(&mut state, len);
                let mut out = Vec::new();
                e.tables.bpe(&piece, &mut out);
                assert_eq!(out, naive_ranks(&e, &piece), "{}", String::from_utf8_lossy(&piece));
            }
        }
    }

    #[test]
    fn derived_merges_are_the_last_step_of_bpe_below_each_tokens_rank() {
        // abcd: with ab, bc, cd below it BPE ends ab|cd (ab first, then cd): its merge. bcd: bc|d (bc is
        // lower than cd). xyz: no lower token but its bytes: three parts, no merge.
        let e = rank_encoder(&["ab", "bc", "cd", "abcd", "bcd", "xyz"], false);
        let merges = [(97, 98, 256), (98, 99, 257), (99, 100, 258), (256, 258, 259), (257, 100, 260)];
        assert_eq!(e.derive_merges(), merges);
        assert!(encoder(&[("a", "b")], None).derive_merges().is_empty());
        assert_eq!(encoder(&[("a", "b")], None).merge_summary(), None);
    }

    #[test]
    fn long_words_take_the_heap_and_agree_with_the_reference() {
        let e =
            encoder(&[("a", "b"), ("b", "a"), ("ab", "ab"), ("a", "a"), ("ba", "b"), ("abab", "abab")], None);
        let mut state = 12345u64;
        for len in [2, 3, 17, 255, 256, 257, 300, 1000] {
            for _ in 0..20 {
                let piece = ab_word(&mut state, len);
                let mut out = Vec::new();
                e.tables.bpe(&piece, &mut out);
                assert_eq!(out, naive(&e, &piece), "{}", String::from_utf8_lossy(&piece));
            }
        }
    }

    /// A merge list that BPE training never makes: ("c", "ab") ranks before ("a", "b"), which makes "ab".
    /// The buckets refuse the pair as it appears, and the word goes through the heap, as the reference.
    #[test]
    fn a_merge_that_ranks_before_its_part_sends_a_long_word_to_the_heap() {
        let mut decoder: Vec<Option<Vec<u8>>> = (0..=255u8).map(|b| Some(vec![b])).collect();
        decoder.push(Some(b"ab".to_vec())); // 256
        decoder.push(Some(b"cab".to_vec())); // 257
        let table = [(u32::from(b'c'), 256, 257), (u32::from(b'a'), u32::from(b'b'), 256)];
        let e = Encoder::new(std::array::from_fn(|b| b as u32), &table, None, &decoder, 1000);
        let piece = b"cab".repeat(200);
        assert!(piece.len() > LONG_WORD);
        assert!(e
            .tables
            .bpe_long_with(&piece.iter().map(|&b| u32::from(b)).collect::<Vec<_>>(), Buckets::default())
            .is_none());
        let mut out = Vec::new();
        e.tables.bpe(&piece, &mut out);
        assert_eq!(out, naive(&e, &piece));
        assert_eq!(out, vec![257; 200]);
    }

    /// Buckets and the heap give the same tokens on long random words of a trained-like merge list.
    #[test]
    fn buckets_and_the_heap_agree_on_long_words() {
        let e =
            encoder(&[("a", "b"), ("b", "a"), ("ab", "ab"), ("a", "a"), ("ba", "b"), ("abab", "abab")], None);
        let mut state = 99u64;
        for len in [257, 1000, 5000] {
            let word: Vec<u32> = ab_word(&mut state, len).into_iter().map(u32::from).collect();
            let buckets = e.tables.bpe_long_with(&word, Buckets::default()).expect("a trained-like list");
            assert_eq!(Some(buckets), e.tables.bpe_long_with(&word, MinHeap::default()));
        }
    }

    #[test]
    fn ignore_merges_takes_a_whole_token_as_it_is() {
        // "abc" by merges is [ab, c]; as a whole token it is 300, whatever the merges say.
        let e = encoder(&[("a", "b")], Some(&[("abc", 300)]));
        assert_eq!(bpe(&e, "abc"), [300]);
        assert_eq!(bpe(&e, "abd"), [256, b'd' as u32]);
    }

    #[test]
    fn a_text_is_split_by_the_preset_then_each_pre_token_merged() {
        let e = encoder(&[("h", "i"), (" ", "hi")], None);
        let gpt2 = pretok::scanner("gpt2").unwrap();
        let (hi, space_hi) = (256, 257);
        assert_eq!(e.encode_text(gpt2, "hi hi!", classes()), Ok(vec![hi, space_hi, b'!' as u32]));
        assert_eq!(e.encode(&["hi", " hi", "hi"]), [hi, space_hi, hi]);
        assert_eq!(e.encode_counts(&["hi", " hix"]), (vec![hi, space_hi, b'x' as u32], vec![1, 2]));
        assert_eq!(e.encode_text(gpt2, "hi é", &classes()[..128]), Err(0xe9));
    }

    #[test]
    fn lookups_begun_ahead_give_the_pre_tokens_ids_in_order() {
        // `scan_ahead` (for texts of mostly non-ASCII bytes, or without whole-token ranks) ends each
        // lookup up to SLOTS_AHEAD pre-tokens after it began it: the same ids in the same order as one
        // pre-token at a time, for texts of 0 to 40 pre-tokens (fewer than the ring, and many times it)
        // and a cache small enough to make room between a lookup's beginning and its end.
        let e = encoder(&[("a", "b"), ("ab", "c"), (" ", "ab")], None);
        let gpt2 = pretok::scanner("gpt2").unwrap();
        let mut next = crate::testing::xorshift(7);
        let words = ["abc", " ab", " 中文", "中", " c", "!", " abcab", "\n", " 12"];
        for n in 0..40 {
            let text: String = (0..n).map(|_| words[next(words.len() as u64) as usize]).collect();
            let pieces = crate::testing::pieces("gpt2", &text);
            for limit in [2, 5, 1000] {
                let mut expected = Vec::new();
                let mut one_by_one = Cache::new(limit);
                for piece in &pieces {
                    one_by_one.encode(&e.tables, piece.as_bytes(), &mut expected);
                }
                let (mut cache, mut out) = (Cache::new(limit), Vec::new());
                for _ in 0..2 {
                    out.clear();
                    assert_eq!(e.scan_ahead(&mut cache, gpt2, &text, classes(), &mut out), None);
                    assert_eq!(out, expected, "{text:?}, limit {limit}");
                }
            }
        }
    }

    #[test]
    fn a_batch_on_many_threads_gives_each_texts_ids_in_order() {
        let e = encoder(&[("a", "b"), ("ab", "c")], None);
        let gpt2 = pretok::scanner("gpt2").unwrap();
        let texts: Vec<String> = (0..200).map(|i| format!("abc {} ab{}", "c".repeat(i % 7), i)).collect();
        let texts: Vec<&str> = texts.iter().map(|t| t.as_str()).collect();
        let one_by_one: Vec<Vec<u32>> =
            texts.iter().map(|t| e.encode_text(gpt2, t, classes()).unwrap()).collect();
        assert_eq!(e.encode_batch(gpt2, &texts, classes(), 4), Ok(one_by_one.clone()));
        assert_eq!(e.encode_batch(gpt2, &texts, classes(), 1), Ok(one_by_one));
        assert_eq!(e.encode_batch(gpt2, &["a", "é"], &classes()[..128], 2), Err(0xe9));
    }

    #[test]
    fn a_batch_in_chunks_hands_each_chunk_over_once_and_stops_at_the_first_problem() {
        let e = encoder(&[("a", "b"), ("ab", "c")], None);
        let gpt2 = pretok::scanner("gpt2").unwrap();
        // About 600 kB: several chunks per thread.
        let texts: Vec<String> = (0..6000).map(|i| format!("abc {} ab{i} ", "c".repeat(i % 90))).collect();
        let texts: Vec<&str> = texts.iter().map(|t| t.as_str()).collect();
        let one_by_one: Vec<Vec<u32>> =
            texts.iter().map(|t| e.encode_text(gpt2, t, classes()).unwrap()).collect();
        for threads in [1, 2, 4] {
            let mut chunks = Vec::new();
            let done = e.encode_batch_chunks(gpt2, &texts, classes(), threads, &mut |chunk| {
                chunks.push(chunk);
                Ok::<(), ()>(())
            });
            assert_eq!(done, Ok(()));
            assert!(chunks.len() >= 4 && chunks.iter().all(|c| !c.ends.is_empty()), "{}", chunks.len());
            // In any order, each once: in the order of their first texts they follow each other.
            chunks.sort_by_key(|c| c.first);
            let mut next = 0;
            for chunk in &chunks {
                assert_eq!(chunk.first, next);
                next += chunk.ends.len();
            }
            let each: Vec<Vec<u32>> = chunks.iter().flat_map(|c| c.texts().map(<[u32]>::to_vec)).collect();
            assert_eq!(each, one_by_one);
            // An error of `take` stops the batch: no chunk is handed over after it.
            let mut seen = 0;
            let done = e.encode_batch_chunks(gpt2, &texts, classes(), threads, &mut |_| {
                seen += 1;
                if seen == 2 {
                    Err("full")
                } else {
                    Ok(())
                }
            });
            assert_eq!((done, seen), (Err(BatchStop::Taken("full")), 2));
            // Code points beyond the table: the first one in the texts' order, whatever thread finds it;
            // every text of the chunks before its chunk was handed over.
            let mut late = texts.clone();
            late[5000] = "x\u{e9}";
            late[5990] = "\u{3b1}";
            let mut handed = vec![false; texts.len()];
            let done = e.encode_batch_chunks(gpt2, &late, &classes()[..128], threads, &mut |chunk| {
                handed[chunk.first..chunk.first + chunk.ends.len()].fill(true);
                Ok::<(), ()>(())
            });
            assert_eq!(done, Err(BatchStop::CodePoint(0xe9)));
            assert!(!handed[5000]);
            let prefix = handed.iter().position(|&h| !h).unwrap();
            assert!(prefix > 4000 && prefix <= 5000, "{prefix}");
        }
    }

    #[test]
    fn each_thread_takes_its_own_run_first_then_the_back_of_the_fullest() {
        // 10 chunks, 3 threads: runs 0..3, 3..6, 6..10.
        let deal = Deal::new(10, 3);
        assert_eq!((deal.next(0), deal.next(1), deal.next(2)), (Some(0), Some(3), Some(6)));
        assert_eq!((deal.next(0), deal.next(0)), (Some(1), Some(2)));
        // Thread 0's run is empty: the back of thread 2's (3 left), then of the last of the fullest.
        assert_eq!(deal.next(0), Some(9));
        assert_eq!(deal.next(0), Some(8));
        assert_eq!(deal.next(2), Some(7));
        assert_eq!(deal.next(2), Some(5));
        assert_eq!(deal.next(2), Some(4));
        assert_eq!((deal.next(0), deal.next(1), deal.next(2)), (None, None, None));
        // Taken on several threads at once, every chunk is taken once.
        let deal = Deal::new(100_000, 4);
        let taken: Vec<Vec<usize>> = std::thread::scope(|scope| {
            let deal = &deal;
            let handles: Vec<_> = (0..4)
                .map(|w| scope.spawn(move || std::iter::from_fn(|| deal.next(w)).collect::<Vec<_>>()))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut all = taken.concat();
        all.sort_unstable();
        assert_eq!(all, (0..100_000).collect::<Vec<_>>());
        assert_eq!(Deal::new(0, 2).next(1), None);
    }

    #[test]
    fn a_flat_batch_lays_out_each_texts_ids_in_order_and_finds_the_first_problem() {
        let e = encoder(&[("a", "b"), ("ab", "c")], None);
        let gpt2 = pretok::scanner("gpt2").unwrap();
        // About 600 kB: several chunks, taken by whichever thread is free.
        let texts: Vec<String> = (0..6000).map(|i| format!("abc {} ab{i} ", "c".repeat(i % 90))).collect();
        let mut texts: Vec<&str> = texts.iter().map(|t| t.as_str()).collect();
        texts[17] = "";
        let one_by_one: Vec<Vec<u32>> =
            texts.iter().map(|t| e.encode_text(gpt2, t, classes()).unwrap()).collect();
        let ends: Vec<usize> = one_by_one
            .iter()
            .scan(0, |end, ids| {
                *end += ids.len();
                Some(*end)
            })
            .collect();
        for threads in [1, 2, 4] {
            assert_eq!(
                e.encode_batch_flat(gpt2, &texts, classes(), threads),
                Ok((one_by_one.concat(), ends.clone()))
            );
            // Code points beyond the table: the first one in the texts' order, whatever thread finds it.
            let mut late = texts.clone();
            late[5990] = "\u{3b1}";
            late[5000] = "x\u{e9}";
            assert_eq!(e.encode_batch_flat(gpt2, &late, &classes()[..128], threads), Err(0xe9));
            late[3] = "\u{3b2}";
            assert_eq!(e.encode_batch_flat(gpt2, &late, &classes()[..128], threads), Err(0x3b2));
        }
        assert_eq!(e.encode_batch_flat(gpt2, &[], classes(), 2), Ok((vec![], vec![])));
    }

    #[test]
    fn joined_ids_are_little_endian_rows_with_the_separator_between_texts() {
        let e = encoder(&[("a", "b")], None);
        let gpt2 = pretok::scanner("gpt2").unwrap();
        let two = e.encode_join(gpt2, &["ab", "a"], classes(), Some(0x1234), 2).unwrap();
        assert_eq!(two, [0, 1, 0x34, 0x12, 97, 0]);
        let four = e.encode_join(gpt2, &["ab", "a"], classes(), None, 4).unwrap();
        assert_eq!(four, [0, 1, 0, 0, 97, 0, 0, 0]);
        assert_eq!(e.encode_join(gpt2, &["a", "é"], &classes()[..128], None, 4), Err(0xe9));
    }

    #[test]
    fn decoding_joins_token_bytes_and_names_the_first_unknown_id() {
        let mut decoder: Vec<Option<Vec<u8>>> = (0..=255u8).map(|b| Some(vec![b])).collect();
        decoder.push(None); // 256: an unused id
        decoder.push(Some(b"xyz".to_vec()));
        let e = Encoder::new(std::array::from_fn(|b| b as u32), &[], None, &decoder, 10);
        let ids = [104, 257, 105];
        let size = e.decoded_len(&ids).unwrap();
        let mut buf = vec![0u8; size];
        e.decode_into(&ids, &mut buf);
        assert_eq!(buf, b"hxyzi");
        assert_eq!(e.decoded_len(&[104, 256, 999]), Err(256));
        assert_eq!(e.decoded_len(&[-1]), Err(-1));
        assert_eq!(e.decoded_len(&[258]), Err(258));
        assert_eq!(e.decoded_len(&[]), Ok(0));
    }

    #[test]
    fn appended_tokens_are_their_bytes_whatever_their_length() {
        // Short tokens (copied PAD bytes at a time), one longer than PAD, an empty one, the last token
        // (whose copy reads the padding), an unused id; the output starts too small and grows.
        let mut decoder: Vec<Option<Vec<u8>>> = (0..=255u8).map(|b| Some(vec![b])).collect();
        decoder.push(None); // 256
        decoder.push(Some(b"0123456789abcdefXYZ".to_vec())); // 257: longer than PAD
        decoder.push(Some(Vec::new())); // 258: empty
        decoder.push(Some(b"tail".to_vec())); // 259: the last token
        let e = Encoder::new(std::array::from_fn(|b| b as u32), &[], None, &decoder, 10);
        let ids = [104, 257, 105, 258, 259, 259, 257, 0, 259];
        let (mut out, mut len) = (vec![0u8; 1], 0usize);
        for &id in &ids {
            assert!(e.append_token(id, &mut out, &mut len));
        }
        out.truncate(len);
        let size = e.decoded_len(&ids).unwrap();
        let mut expected = vec![0u8; size];
        e.decode_into(&ids, &mut expected);
        assert_eq!(out, expected);
        assert_eq!(out, b"h0123456789abcdefXYZitailtail0123456789abcdefXYZ\0tail");
        for bad in [256, 260, -1, i64::MAX] {
            assert!(!e.append_token(bad, &mut out, &mut len));
        }
    }

    #[test]
    fn the_cache_drops_a_part_when_full_and_all_on_demand() {
        let mut decoder: Vec<Option<Vec<u8>>> = (0..=255u8).map(|b| Some(vec![b])).collect();
        decoder.truncate(256);
        let e = Encoder::new(std::array::from_fn(|b| b as u32), &[], None, &decoder, 3);
        e.encode(&["a", "b", "c"]);
        assert_eq!(e.cache_len(), 3);
        assert_eq!(e.encode(&["d"]), [100]); // full (and small): emptied, then "d"
        assert_eq!(e.cache_len(), 1);
        e.clear_cache();
        assert_eq!(e.cache_len(), 0);
        let one = Encoder::new(std::array::from_fn(|b| b as u32), &[], None, &decoder, 1);
        assert_eq!(one.encode(&["a", "b", "a"]), [97, 98, 97]);
        assert_eq!(one.cache_len(), 1);
    }

    #[test]
    fn batch_threads_read_one_cache_and_it_takes_what_they_merged_once() {
        let e = encoder(&[("a", "b"), ("ab", "c")], None);
        let mut cache = Cache::new(100);
        let (mut out, mut expected) = (Vec::new(), Vec::new());
        cache.encode(&e.tables, b"abcab", &mut expected);
        let merged = {
            let (mut first, mut second) = (SharedCache::new(&cache), SharedCache::new(&cache));
            // A thread finds what the cache holds (merged by whichever thread, whenever).
            assert_eq!(second.encode(&e.tables, b"abcab", &mut out), expected.len());
            assert_eq!(out, expected);
            assert!(second.fresh.is_empty(), "found, not merged again");
            // One nobody merged is merged, kept aside, and found there the next time.
            let (mut new, mut again) = (Vec::new(), Vec::new());
            second.encode(&e.tables, b"cabab", &mut new);
            second.encode(&e.tables, b"cabab", &mut again);
            assert_eq!((second.fresh.len(), &new), (1, &again));
            assert_eq!(new, naive(&e, b"cabab"));
            // The other thread merged it too, and one more.
            first.encode(&e.tables, b"cabab", &mut Vec::new());
            first.encode(&e.tables, b"ccc", &mut Vec::new());
            [first.fresh, second.fresh]
        };
        SharedCache::settle(&merged, &mut cache);
        assert_eq!(cache.map.len(), 3, "each pre-token once");
        assert!(["abcab", "cabab", "ccc"].iter().all(|p| cache.map.contains(p.as_bytes())));
        // A cache too full for them all makes room once, before: what the batch used stays, and all of
        // what it merged comes in.
        let mut small = Cache::new(8);
        let x = |i: u8| [b'x', i];
        for i in 0..6 {
            small.encode(&e.tables, &x(i), &mut out);
        }
        small.encode(&e.tables, &x(0), &mut out);
        small.encode(&e.tables, &x(1), &mut out);
        let mut fresh = PieceMap::default();
        for i in 0..4u8 {
            fresh.insert(piece_map::hash(&[b'y', i]), &[b'y', i], &[u32::from(i)]);
        }
        SharedCache::settle(std::slice::from_ref(&fresh), &mut small);
        assert_eq!(small.map.len(), 6);
        assert!(small.map.contains(&x(0)) && small.map.contains(&x(1)) && !small.map.contains(&x(2)));
        assert!((0..4u8).all(|i| small.map.contains(&[b'y', i])));
        // More than a cache holds: it stays within its limit.
        let mut tiny = Cache::new(4);
        let mut fresh = PieceMap::default();
        for i in 0..10u8 {
            fresh.insert(piece_map::hash(&[b'z', i]), &[b'z', i], &[u32::from(i)]);
        }
        SharedCache::settle(&[fresh], &mut tiny);
        assert!((1..=4).contains(&tiny.map.len()), "{}", tiny.map.len());
    }

    #[test]
    fn a_full_cache_drops_what_was_not_used_since_it_was_last_full_and_a_quarter_at_least() {
        // Emptying the whole cache when full made every pass over a text with a few more distinct
        // pre-tokens than the limit a cold encode (issue 22).
        let e = encoder(&[("h", "o"), ("ho", "t")], None);
        let mut cache = Cache::new(1000);
        let mut out = Vec::new();
        let word = |i: usize| format!("w{i}");
        for i in 0..1000 {
            cache.encode(&e.tables, word(i).as_bytes(), &mut out);
        }
        for i in 0..300 {
            cache.encode(&e.tables, word(i).as_bytes(), &mut out); // used again
        }
        assert_eq!(cache.map.len(), 1000);
        cache.encode(&e.tables, b"hot", &mut out);
        // The 700 words not used again went; the 300 stay, and "hot" came in.
        assert_eq!(cache.map.len(), 301);
        assert!((0..300).all(|i| cache.map.contains(word(i).as_bytes())));
        let mut expected = Vec::new();
        e.tables.bpe(b"hot", &mut expected);
        assert_eq!(cache.map.get(b"hot"), Some(expected));
        // All used since: a quarter goes all the same.
        for i in 1000..1699 {
            cache.encode(&e.tables, word(i).as_bytes(), &mut out);
        }
        for i in (0..300).chain(1000..1699) {
            cache.encode(&e.tables, word(i).as_bytes(), &mut out);
        }
        cache.encode(&e.tables, b"hot", &mut out);
        assert_eq!(cache.map.len(), 1000);
        cache.encode(&e.tables, b"new", &mut out);
        assert_eq!(cache.map.len(), 751);
        for i in 0..5000 {
            cache.encode(&e.tables, word(5000 + i).as_bytes(), &mut out);
            assert!(cache.map.len() <= 1000);
        }
    }

    #[test]
    fn safe_cut_agrees_with_the_python_rule_on_the_shared_case_table() {
        let table: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/data/newline_boundaries.json")).unwrap();
        let cases = table["cases"].as_array().unwrap();
        assert!(cases.len() >= 20, "the shared table lost its cases");
        for case in cases {
            let text = case["text"].as_str().unwrap();
            let at = case["at"].as_u64().unwrap() as usize;
            let cut = case["cut"].as_u64().unwrap() as usize;
            assert_eq!(safe_cut(text.as_bytes(), at), cut, "{text:?} from {at}");
        }
    }

    #[test]
    fn safe_cut_is_after_a_printable_ascii_character_and_a_newline_before_an_ascii_letter() {
        assert_eq!(safe_cut(b"ab.\ncd", 0), 4);
        assert_eq!(safe_cut(b"ab.\ncd", 4), 4);
        assert_eq!(safe_cut(b"ab.\ncd", 5), 6, "none after: the end");
        assert_eq!(safe_cut(b"ab.\ncd", 9), 6, "beyond the end: the end");
        assert_eq!(safe_cut(b"a\nb", 0), 2);
        assert_eq!(safe_cut(b"\nb", 0), 2, "no character before the newline: no cut");
        assert_eq!(safe_cut(b"a \nb", 0), 4, "a space before the newline: a run of whitespace");
        assert_eq!(safe_cut(b"a\n\nb", 0), 4, "two newlines: one pre-token in cl100k");
        assert_eq!(safe_cut(b"a\n1", 0), 3, "a digit after: no cut");
        assert_eq!(safe_cut(b"a\n b", 0), 4, "a space after: no cut");
        assert_eq!(safe_cut("é\nb".as_bytes(), 0), "é\nb".len(), "not after a non-ASCII character");
        assert_eq!(safe_cut(b"a\nb\nc", 3), 4);
    }

    #[test]
    fn a_cut_at_the_safe_boundary_changes_no_pre_token_of_any_preset() {
        // Texts around the boundary: each side scanned alone gives the whole text's pre-tokens.
        let texts = ["word.\nNext", "x!\n\ny\nz", "it's\nok", "12\nab 3", "a/\nb//", "A\nBc\nd"];
        for preset in ["gpt2", "cl100k", "o200k"] {
            for text in texts {
                let whole = crate::testing::pieces(preset, text);
                let mut at = 0;
                let mut joined = Vec::new();
                while at < text.len() {
                    let cut = safe_cut(&text.as_bytes()[at..], 1) + at;
                    joined.extend(crate::testing::pieces(preset, &text[at..cut]));
                    at = cut;
                }
                assert_eq!(joined, whole, "{preset} {text:?}");
            }
        }
    }

    #[test]
    fn a_text_longer_than_a_block_encodes_as_its_pieces_do() {
        let e = encoder(&[("a", "b"), ("\n", "ab")], None);
        let gpt2 = pretok::scanner("gpt2").unwrap();
        let line = "ab cd, ab.\nab 1234\n";
        let text = line.repeat(BLOCK / line.len() + 10);
        // The text is cut between lines (".\nab"), where no pre-token spans: every line encodes alike.
        let expected = e.encode_text(gpt2, line, classes()).unwrap();
        let ids = e.encode_text(gpt2, &text, classes()).unwrap();
        assert_eq!(ids.len(), expected.len() * (BLOCK / line.len() + 10));
        assert!(ids.chunks(expected.len()).all(|c| c == expected));
    }

    #[test]
    fn runs_share_the_texts_out_by_size_in_order() {
        let texts = ["aaaaa", "a", "a", "aaaaa"];
        assert_eq!(split_runs(&texts, 2), [&texts[..3], &texts[3..]]);
        assert_eq!(split_runs(&texts, 1), [&texts[..]]);
        let runs = split_runs(&texts, 10);
        assert!(runs.len() <= 4 && runs.iter().all(|r| !r.is_empty()));
        assert_eq!(runs.concat(), texts);
        assert!(split_runs(&[], 3).is_empty());
    }
}
