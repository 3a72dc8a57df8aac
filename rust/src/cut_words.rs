//! Words cut where a pair is too rare to be merged, equal pieces added up (`cut_rare_pairs`): how a
//! superword run's stage 2 gives its merge loop a few million positions instead of twenty million.
//!
//! Why it is exact (bpe_studio/engine/training/trainer.py checks the conditions as the loop runs and goes
//! back to the whole words when one fails): a pair of tokens `(u, v)` made by merges, each token made
//! once (no merge remade an existing token), always meets at the boundary between the same two original
//! ids `x` (u's last) and `y` (v's first); so its count never exceeds the count of `(x, y)` in the words.
//! When the boundaries cut are all those of some pairs `(x, y)`, each counted fewer than `below` times (all
//! of them, or some: `cut_rare_pairs` may leave a rare one uncut), a pair that spans a cut counts fewer
//! than `below`, while every merge the loop makes counts at least `below`: the loop over the
//! pieces makes exactly the merges (and counts) of the loop over the whole words. A piece of one id holds
//! no pair and is left out.

use crate::merge::prefetch;

/// Words as flat ids: the ids one word after the other, each word's number of ids, each word's count.
#[derive(Default)]
pub struct Words {
    pub ids: Vec<u32>,
    pub lengths: Vec<u32>,
    pub freqs: Vec<i64>,
}

#[inline]
fn key(a: u32, b: u32) -> u64 {
    ((a as u64) << 32) | b as u64
}

/// Bounds of the number of counters of `cut_rare_pairs`' sketch (1 to 4 bytes each: `Counter`): 2**16 to 2**26.
const SKETCH_BITS: (u32, u32) = (16, 26);

/// The counter of the pair `(a, b)` among `1 << bits` (a multiplicative hash of the two ids).
#[inline]
fn counter(a: u32, b: u32, bits: u32) -> usize {
    (key(a, b).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
}

/// The words cut between adjacent ids whose pair counts fewer than `below` in all the words (each
/// occurrence weighted by its word's count), the equal pieces added up (in order of first appearance),
/// the pieces of one id left out. Err when the lengths do not add up to the ids or the counts are not one
/// per word. Time and memory linear in the ids.
///
/// The pairs are counted in a sketch: counters indexed by a hash of the pair, each the sum of the counts
/// of the pairs that fall on it (a bound of each one's count from above, exact but for collisions), so
/// that a position costs one increment with no probing and no key to compare (a hash table of the
/// pairs, a slot per position to read them back, was the cut's time and most of its memory). A place is
/// cut only where its pair's counter is below `below`: then the pair counts fewer than `below`. Where a
/// rare pair shares its counter with frequent ones it is not cut, which the module's argument allows
/// (it holds for any set of places cut whose pairs all count fewer than `below`, the same for every
/// occurrence of a pair): the pieces are only a little longer. With a counter per two to four positions
/// (far more than there are distinct pairs), a rare pair meets a frequent one on a few percent of them.
/// `threads` share the work (each a run of whole words): the result is the same for any number of them.
pub fn cut_rare_pairs(
    ids: &[u32],
    lengths: &[u32],
    freqs: &[i64],
    below: i64,
    threads: usize,
) -> Result<Words, String> {
    let bits =
        (usize::BITS - ids.len().leading_zeros()).saturating_sub(2).clamp(SKETCH_BITS.0, SKETCH_BITS.1);
    // A thread costs a sketch of its own while the pairs are counted: worth it only on many ids.
    let threads = if ids.len() < THREADED_MIN { 1 } else { threads.max(1) };
    cut_with_sketch(ids, lengths, freqs, below, bits, threads)
}

/// Fewer ids than this are cut on one thread.
const THREADED_MIN: usize = 1 << 20;

/// `cut_rare_pairs` with a sketch of `1 << bits` counters (the tests take tiny ones: many collisions), on
/// `threads` threads.
///
/// Each thread takes a run of whole words (about as many ids each). It counts its words' pairs in a
/// sketch of its own, the sketches are added up (saturating, as one sketch would count), and each thread
/// cuts its words with the sum, equal pieces added up in a table of its own. Then each later thread's
/// pieces, in their order, are added to an equal piece of the earlier ones or appended: the pieces come
/// out in order of first appearance over all the words, exactly as one thread gives them.
fn cut_with_sketch(
    ids: &[u32],
    lengths: &[u32],
    freqs: &[i64],
    below: i64,
    bits: u32,
    threads: usize,
) -> Result<Words, String> {
    // The narrowest counters that still tell every count below `below` from the others: the cut's
    // threshold is a stage-1 merge's count (a few hundred on 100 MB of natural text), so one byte each
    // most often, and the two threads' sketches (8 MB each at 100 MB, 32 MB in u32) stay in the L3
    // cache, where most of the cut's time was misses on them (see `Counter`).
    if below <= u8::MAX as i64 {
        cut_with_counters::<u8>(ids, lengths, freqs, below, bits, threads)
    } else if below <= u16::MAX as i64 {
        cut_with_counters::<u16>(ids, lengths, freqs, below, bits, threads)
    } else {
        cut_with_counters::<u32>(ids, lengths, freqs, below, bits, threads)
    }
}

/// A sketch's counter: an unsigned integer that saturates at `MAX`.
///
/// Why any width gives the same cut, for `below <= MAX`: the counts added are never negative, so a
/// saturating counter holds `min(total, MAX)`; a counter at `MAX` is never rare (`MAX >= below`), and one
/// below `MAX` holds its exact total, compared with `below` as a wider one would be.
trait Counter: Copy + Default + Send + Sync + 'static {
    const MAX: u32;
    /// `self + f`, saturating at `MAX`.
    fn plus(self, f: u32) -> Self;
    fn get(self) -> u32;
}

macro_rules! counter_impl {
    ($t:ty) => {
        impl Counter for $t {
            const MAX: u32 = <$t>::MAX as u32;
            #[inline]
            fn plus(self, f: u32) -> Self {
                self.saturating_add(f.min(<Self as Counter>::MAX) as $t)
            }
            #[inline]
            fn get(self) -> u32 {
                self as u32
            }
        }
    };
}
counter_impl!(u8);
counter_impl!(u16);
counter_impl!(u32);

/// `cut_with_sketch` with counters of type `C` (see `Counter`: the same cut for any `C` whose `MAX` is at
/// least `below`).
fn cut_with_counters<C: Counter>(
    ids: &[u32],
    lengths: &[u32],
    freqs: &[i64],
    below: i64,
    bits: u32,
    threads: usize,
) -> Result<Words, String> {
    if lengths.len() != freqs.len() {
        return Err("lengths and freqs differ in length".into());
    }
    if lengths.iter().map(|&n| n as u64).sum::<u64>() != ids.len() as u64 {
        return Err("the lengths do not add up to the number of ids".into());
    }
    // The runs of words: word i starts at id starts[i]; run t is words bounds[t]..bounds[t + 1].
    let mut bounds = vec![0usize];
    let mut at = 0usize;
    for (w, &len) in lengths.iter().enumerate() {
        if at >= ids.len() * bounds.len() / threads.max(1) && bounds.len() < threads {
            bounds.push(w);
        }
        at += len as usize;
    }
    bounds.push(lengths.len());
    let mut firsts = Vec::with_capacity(bounds.len());
    let mut id_at = 0usize;
    let mut w = 0usize;
    for &b in &bounds {
        id_at += lengths[w..b].iter().map(|&n| n as usize).sum::<usize>();
        w = b;
        firsts.push(id_at);
    }
    let runs: Vec<(usize, usize, usize)> =
        bounds.windows(2).zip(&firsts).map(|(b, &first)| (b[0], b[1], first)).collect();
    let sketch = if runs.len() == 1 {
        count_pairs::<C>(ids, lengths, freqs, runs[0], bits)
    } else {
        let mut sketches = std::thread::scope(|scope| {
            let running: Vec<_> = runs
                .iter()
                .map(|&run| scope.spawn(move || count_pairs::<C>(ids, lengths, freqs, run, bits)))
                .collect();
            joined(running)
        })
        .into_iter();
        let mut sum = sketches.next().unwrap_or_default();
        for more in sketches {
            for (c, n) in sum.iter_mut().zip(more) {
                *c = c.plus(n.get());
            }
        }
        sum
    };
    let sketch = &sketch;
    let mut parts = if runs.len() == 1 {
        vec![cut_run(ids, lengths, freqs, runs[0], sketch, below, bits)]
    } else {
        std::thread::scope(|scope| {
            let running: Vec<_> = runs
                .iter()
                .map(|&run| scope.spawn(move || cut_run(ids, lengths, freqs, run, sketch, below, bits)))
                .collect();
            joined(running)
        })
    }
    .into_iter();
    let (mut out, mut slot) = parts.next().unwrap_or_else(|| (Words::default(), Pieces::new(0)));
    let later: Vec<Words> = parts.map(|(more, _)| more).collect();
    // On one thread, the others idle: each piece's slot is fetched QUEUE pieces before it is added (as in
    // `cut_run`), so that several cache misses are under way at once; still added in order.
    for more in &later {
        let mut queue = [(0usize, 0usize, 0i64, 0u64); QUEUE];
        let mut at = 0usize;
        for (k, (&len, &f)) in more.lengths.iter().zip(&more.freqs).enumerate() {
            let (start, end) = (at, at + len as usize);
            at = end;
            let h = hash(&more.ids[start..end]);
            slot.prefetch(h);
            let place = &mut queue[k % QUEUE];
            if k >= QUEUE {
                let (s, e, f, h) = *place;
                slot.add(&mut out, &more.ids[s..e], h, f);
            }
            *place = (start, end, f, h);
        }
        let n = more.lengths.len();
        for k in n.saturating_sub(QUEUE)..n {
            let (s, e, f, h) = queue[k % QUEUE];
            slot.add(&mut out, &more.ids[s..e], h, f);
        }
    }
    drop(slot);
    drop(later);
    Ok(out)
}

/// The threads' answers in order; a panic in one is passed on as it is (the bindings turn it into a
/// Python exception).
fn joined<T>(running: Vec<std::thread::ScopedJoinHandle<'_, T>>) -> Vec<T> {
    running.into_iter().map(|t| t.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
}

/// The sketch of the pairs of words `run.0..run.1` (their first id at `run.2`).
fn count_pairs<C: Counter>(
    ids: &[u32],
    lengths: &[u32],
    freqs: &[i64],
    run: (usize, usize, usize),
    bits: u32,
) -> Vec<C> {
    let (first, end, mut at) = run;
    // Saturating: a counter at its MAX may stand for more, and is never taken as rare.
    // Written through once, not `vec![0; n]`: that block comes from the system unmapped, each page's
    // first touch (a read, `saturating_add`) maps the shared zero page and the write right after faults
    // again to copy it, which on two threads also sends the other CPU a TLB flush (a tenth of the cut's
    // time in a profile at 100 MB).
    #[allow(clippy::slow_vector_initialization)] // (on purpose: see above)
    let sketch = {
        let mut sketch = Vec::with_capacity(1 << bits);
        sketch.resize(1 << bits, C::default());
        sketch
    };
    let mut sketch = sketch;
    for (&len, &f) in lengths[first..end].iter().zip(&freqs[first..end]) {
        // A count that does not fit a counter fills it; a negative one (never from counting) adds nothing,
        // so the counter still bounds the pair's count from above.
        let f = f.clamp(0, u32::MAX as i64) as u32;
        for p in at..(at + len as usize).saturating_sub(1) {
            // The counter a few positions on is fetched meanwhile (whatever word they are in: a wrong
            // guess costs nothing), so that several cache misses are under way at once.
            if let Some(ahead) = ids.get(p + AHEAD..p + AHEAD + 2) {
                prefetch(&sketch[counter(ahead[0], ahead[1], bits)]);
            }
            let c = &mut sketch[counter(ids[p], ids[p + 1], bits)];
            *c = c.plus(f);
        }
        at += len as usize;
    }
    sketch
}

/// Words `run.0..run.1` (their first id at `run.2`) cut where `sketch` says a pair is rare: their pieces,
/// equal ones added up, and the table of where each piece is in them.
fn cut_run<C: Counter>(
    ids: &[u32],
    lengths: &[u32],
    freqs: &[i64],
    run: (usize, usize, usize),
    sketch: &[C],
    below: i64,
    bits: u32,
) -> (Words, Pieces) {
    let (first, last, mut at) = run;
    let rare = |a: u32, b: u32| {
        let n = sketch[counter(a, b, bits)].get();
        n != C::MAX && (n as i64) < below
    };
    let mut out = Words { ids: Vec::new(), lengths: Vec::new(), freqs: Vec::new() };
    // About as many distinct pieces as words on natural text.
    let mut slot = Pieces::new((last - first) / 2);
    // The pieces wait a few places in `queue` before they are added, their slots fetched meanwhile:
    // several cache misses under way at once instead of one per piece (the table was most of the cut's
    // time). They are added in the order they came: the pieces come out in order of first appearance.
    let mut queue = [(0usize, 0usize, 0i64, 0u64); QUEUE];
    let mut queued = 0usize; // pieces queued so far; piece k waits in queue[k % QUEUE]
    let mut emit = |start: usize, end: usize, f: i64, out: &mut Words, slot: &mut Pieces| {
        if end - start < 2 {
            return; // a piece of one id holds no pair
        }
        let h = hash(&ids[start..end]);
        slot.prefetch(h);
        let place = &mut queue[queued % QUEUE];
        if queued >= QUEUE {
            let (s, e, f, h) = *place;
            slot.add(out, &ids[s..e], h, f);
        }
        *place = (start, end, f, h);
        queued += 1;
    };
    for (&len, &f) in lengths[first..last].iter().zip(&freqs[first..last]) {
        let end = at + len as usize;
        let mut start = at;
        for p in at + 1..end {
            if let Some(ahead) = ids.get(p - 1 + AHEAD..p + 1 + AHEAD) {
                prefetch(&sketch[counter(ahead[0], ahead[1], bits)]);
            }
            if rare(ids[p - 1], ids[p]) {
                emit(start, p, f, &mut out, &mut slot);
                start = p;
            }
        }
        emit(start, end, f, &mut out, &mut slot);
        at = end;
    }
    for k in queued.saturating_sub(QUEUE)..queued {
        let (s, e, f, h) = queue[k % QUEUE];
        slot.add(&mut out, &ids[s..e], h, f);
    }
    (out, slot)
}

/// How many pieces wait for their slot to be fetched (`cut_run`).
const QUEUE: usize = 8;

/// How many positions ahead the sketch's counters are fetched.
const AHEAD: usize = 16;

/// The hash of a piece: of its ids, one multiply each (as FxHash), then mixed so that its low bits
/// (a slot) and its high ones (the tag a slot keeps) are both good.
#[inline]
fn hash(piece: &[u32]) -> u64 {
    let mut h = piece.len() as u64;
    for &id in piece {
        h = (h.rotate_left(5) ^ id as u64).wrapping_mul(0x517C_C1B7_2722_0A95);
    }
    h ^= h >> 29;
    h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h ^ (h >> 32)
}

/// Bits of a slot that hold its piece's index + 1 (the others hold a tag of its hash).
const INDEX_BITS: u32 = 40;

/// The distinct pieces of a `Words`, each found by its ids (a table of open addressing, linear probing):
/// a slot holds the top bits of its piece's hash (a tag) and the piece's index + 1 (0: empty), so that a
/// probe reads one slot and compares ids only on an equal tag, and a slot can be fetched ahead
/// (`prefetch`) from the hash alone; where each piece's ids start in the `Words`' ids beside.
struct Pieces {
    slots: Vec<u64>,
    starts: Vec<usize>,
}

impl Pieces {
    /// A table for about `n` pieces before it grows.
    fn new(n: usize) -> Self {
        Pieces { slots: vec![0; (2 * n).next_power_of_two().max(16)], starts: Vec::with_capacity(n) }
    }

    #[inline]
    fn prefetch(&self, h: u64) {
        prefetch(&self.slots[h as usize & (self.slots.len() - 1)]);
    }

    /// Adds `piece` (of hash `h`) counted `f` times: to an equal piece of `out`, or appended to `out`.
    #[inline]
    fn add(&mut self, out: &mut Words, piece: &[u32], h: u64, f: i64) {
        let mask = self.slots.len() - 1;
        let tag = h >> INDEX_BITS;
        let mut at = h as usize & mask;
        loop {
            let slot = self.slots[at];
            if slot == 0 {
                break;
            }
            if slot >> INDEX_BITS == tag {
                let i = (slot & ((1 << INDEX_BITS) - 1)) as usize - 1;
                let start = self.starts[i];
                let len = out.lengths[i] as usize;
                // Id by id: pieces are a few ids long, and memcmp for each was a fifth of the cut's time.
                let same = |(a, b): (&u32, &u32)| a == b;
                if len == piece.len() && out.ids[start..start + len].iter().zip(piece).all(same) {
                    out.freqs[i] = out.freqs[i].saturating_add(f);
                    return;
                }
            }
            at = (at + 1) & mask;
        }
        let i = out.freqs.len();
        // (Under 2**40 pieces: each holds two ids or more, and there are fewer than 2**41 ids.)
        self.slots[at] = tag << INDEX_BITS | (i as u64 + 1);
        self.starts.push(out.ids.len());
        out.ids.extend_from_slice(piece);
        out.lengths.push(piece.len() as u32);
        out.freqs.push(f);
        if 2 * (i + 1) > self.slots.len() {
            self.grow(out);
        }
    }

    /// Twice the slots, each piece put back by its hash (its ids read in order, once).
    fn grow(&mut self, out: &Words) {
        self.slots = vec![0; 2 * self.slots.len()];
        let mask = self.slots.len() - 1;
        for (i, (&start, &len)) in self.starts.iter().zip(&out.lengths).enumerate() {
            let h = hash(&out.ids[start..start + len as usize]);
            let mut at = h as usize & mask;
            while self.slots[at] != 0 {
                at = (at + 1) & mask;
            }
            self.slots[at] = (h >> INDEX_BITS) << INDEX_BITS | (i as u64 + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustc_hash::FxHashMap;

    #[test]
    fn words_are_cut_at_rare_pairs_and_equal_pieces_add_up() {
        // Pairs: (1,2) x5, (2,3) x1, (3,1) x1, (2,9) x2, (7,8) x1.
        let ids = [1, 2, 3, 1, 2, /* */ 1, 2, /* */ 1, 2, 9, /* */ 7, 8];
        let lengths = [5, 2, 3, 2];
        let freqs = [1, 2, 2, 1];
        let cut = cut_rare_pairs(&ids, &lengths, &freqs, 2, 1).expect("valid");
        // Word 1 -> [1,2] [3] [1,2]; word 2 -> [1,2]; word 3 -> [1,2,9]; word 4 -> [7] [8].
        assert_eq!(cut.ids, [1, 2, 1, 2, 9]);
        assert_eq!(cut.lengths, [2, 3]);
        assert_eq!(cut.freqs, [1 + 1 + 2, 2]);
        let whole = cut_rare_pairs(&ids, &lengths, &freqs, 1, 1).expect("valid");
        // Nothing is cut below 1, and every word is new.
        assert_eq!(whole.ids, ids);
        assert_eq!(whole.lengths, lengths);
        assert_eq!(whole.freqs, freqs);
    }

    /// Each adjacent pair's count in the words (weighted by their counts).
    fn pair_counts(ids: &[u32], lengths: &[u32], freqs: &[i64]) -> FxHashMap<(u32, u32), i64> {
        let mut counts = FxHashMap::default();
        let mut at = 0;
        for (&len, &f) in lengths.iter().zip(freqs) {
            for w in ids[at..at + len as usize].windows(2) {
                *counts.entry((w[0], w[1])).or_insert(0) += f;
            }
            at += len as usize;
        }
        counts
    }

    #[test]
    fn a_pair_is_cut_everywhere_or_nowhere_and_never_when_it_counts_below_or_more() {
        // The condition of the module's argument, with sketches of 2 to 16 counters (collisions all
        // over) and the default one, on random words of few distinct ids.
        let mut next = crate::testing::xorshift(0x2545_F491_4F6C_DD1Du64);
        let mut cuts = 0;
        for round in 0..200 {
            let words = 1 + next(30) as usize;
            let lengths: Vec<u32> = (0..words).map(|_| next(12) as u32).collect();
            let freqs: Vec<i64> = (0..words).map(|_| 1 + next(5) as i64).collect();
            let ids: Vec<u32> = (0..lengths.iter().sum::<u32>()).map(|_| next(6) as u32).collect();
            let below = 1 + next(12) as i64;
            let whole = pair_counts(&ids, &lengths, &freqs);
            for bits in [1, 2, 4, 0] {
                let cut = if bits == 0 {
                    cut_rare_pairs(&ids, &lengths, &freqs, below, 1)
                } else {
                    cut_with_sketch(&ids, &lengths, &freqs, below, bits, 1)
                }
                .expect("valid");
                // Shared among threads (runs of words, some empty): the very same pieces, in the same order.
                for threads in [2, 3, 7] {
                    let shared = cut_with_sketch(&ids, &lengths, &freqs, below, bits.max(1), threads);
                    let alone = cut_with_sketch(&ids, &lengths, &freqs, below, bits.max(1), 1);
                    let (shared, alone) = (shared.expect("valid"), alone.expect("valid"));
                    assert_eq!(
                        (shared.ids, shared.lengths, shared.freqs),
                        (alone.ids, alone.lengths, alone.freqs)
                    );
                }
                let pieces = pair_counts(&cut.ids, &cut.lengths, &cut.freqs);
                for (pair, &n) in &whole {
                    let left = pieces.get(pair).copied().unwrap_or(0);
                    assert!(left == n || left == 0 && n < below, "round {round}, bits {bits}: {pair:?}");
                    cuts += usize::from(left == 0);
                }
                assert!(pieces.keys().all(|pair| whole.contains_key(pair)));
            }
        }
        assert!(cuts > 0);
    }

    #[test]
    fn narrow_counters_cut_as_wide_ones() {
        // Counts around each width's MAX (saturation all over), thresholds on either side of it: u8 and
        // u16 counters, where cut_with_sketch picks them, give exactly the cut of u32 ones.
        let mut next = crate::testing::xorshift(0x9E37_79B9_7F4A_7C15u64);
        for round in 0..300 {
            let words = 1 + next(40) as usize;
            let lengths: Vec<u32> = (0..words).map(|_| next(10) as u32).collect();
            let scale = [1, 60, 250, 20_000, 70_000, 1 << 40][next(6) as usize];
            let freqs: Vec<i64> = (0..words).map(|_| 1 + next(scale) as i64).collect();
            let ids: Vec<u32> = (0..lengths.iter().sum::<u32>()).map(|_| next(5) as u32).collect();
            let below = [0, 1, 200, 255, 256, 60_000, 65_535, 65_536, 1 << 33][next(9) as usize];
            for (bits, threads) in [(2, 1), (3, 2), (16, 1), (16, 3)] {
                let narrow = cut_with_sketch(&ids, &lengths, &freqs, below, bits, threads).expect("valid");
                let wide = cut_with_counters::<u32>(&ids, &lengths, &freqs, below, bits, threads);
                let wide = wide.expect("valid");
                let at = format!("round {round}, below {below}, bits {bits}");
                assert_eq!(
                    (narrow.ids, narrow.lengths, narrow.freqs),
                    (wide.ids, wide.lengths, wide.freqs),
                    "{at}"
                );
            }
        }
    }

    #[test]
    fn uncut_words_come_out_distinct_in_order_of_first_appearance_as_the_table_grows() {
        // Nothing rare (below 0): the pieces are the words of two ids or more, equal ones added up; many
        // distinct ones, so that each thread's table grows several times, and few ids, so that many repeat.
        let mut next = crate::testing::xorshift(0x1234_5678_9ABC_DEF1u64);
        for (words, ids_of) in [(5_000, 40), (20_000, 3), (3, 2)] {
            let lengths: Vec<u32> = (0..words).map(|_| next(6) as u32).collect();
            let freqs: Vec<i64> = (0..words).map(|_| 1 + next(9) as i64).collect();
            let ids: Vec<u32> = (0..lengths.iter().sum::<u32>()).map(|_| next(ids_of) as u32).collect();
            let mut order: Vec<&[u32]> = Vec::new();
            let mut count: FxHashMap<&[u32], i64> = FxHashMap::default();
            let mut at = 0;
            for (&len, &f) in lengths.iter().zip(&freqs) {
                let word = &ids[at..at + len as usize];
                at += len as usize;
                if word.len() >= 2 {
                    let n = count.entry(word).or_insert(0);
                    if *n == 0 {
                        order.push(word);
                    }
                    *n += f;
                }
            }
            for threads in [1, 3] {
                let cut = cut_with_sketch(&ids, &lengths, &freqs, 0, 4, threads).expect("valid");
                assert_eq!(cut.ids, order.concat());
                assert_eq!(cut.lengths, order.iter().map(|w| w.len() as u32).collect::<Vec<_>>());
                assert_eq!(cut.freqs, order.iter().map(|w| count[w]).collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn lengths_that_do_not_add_up_are_refused() {
        for threads in [1, 2] {
            assert!(cut_with_sketch(&[1, 2], &[3], &[1], 1, 4, threads).is_err());
            assert!(cut_with_sketch(&[1, 2], &[2], &[1, 1], 1, 4, threads).is_err());
            assert!(cut_with_sketch(&[], &[], &[], 5, 4, threads).expect("valid").ids.is_empty());
        }
        assert!(cut_rare_pairs(&[], &[], &[], 5, 2).expect("valid").ids.is_empty());
    }
}
