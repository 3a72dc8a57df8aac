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

use rustc_hash::FxHashMap;

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
    let (mut out, mut slot) = parts.next().unwrap_or_default();
    let later: Vec<Words> = parts.map(|(more, _)| more).collect();
    for more in &later {
        let mut at = 0usize;
        for (&len, &f) in more.lengths.iter().zip(&more.freqs) {
            let piece = &more.ids[at..at + len as usize];
            at += len as usize;
            match slot.entry(Piece(piece)) {
                std::collections::hash_map::Entry::Occupied(i) => {
                    let i = *i.get();
                    out.freqs[i] = out.freqs[i].saturating_add(f);
                }
                std::collections::hash_map::Entry::Vacant(place) => {
                    place.insert(out.freqs.len());
                    out.ids.extend_from_slice(piece);
                    out.lengths.push(len);
                    out.freqs.push(f);
                }
            }
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
fn cut_run<'a, C: Counter>(
    ids: &'a [u32],
    lengths: &[u32],
    freqs: &[i64],
    run: (usize, usize, usize),
    sketch: &[C],
    below: i64,
    bits: u32,
) -> (Words, FxHashMap<Piece<'a>, usize>) {
    let (first, last, mut at) = run;
    let rare = |a: u32, b: u32| {
        let n = sketch[counter(a, b, bits)].get();
        n != C::MAX && (n as i64) < below
    };
    let mut out = Words { ids: Vec::new(), lengths: Vec::new(), freqs: Vec::new() };
    let mut slot: FxHashMap<Piece, usize> = FxHashMap::default();
    slot.reserve((last - first) / 2); // about as many distinct pieces as words on natural text
    for (&len, &f) in lengths[first..last].iter().zip(&freqs[first..last]) {
        let end = at + len as usize;
        let mut start = at;
        for p in at + 1..end {
            if let Some(ahead) = ids.get(p - 1 + AHEAD..p + 1 + AHEAD) {
                prefetch(&sketch[counter(ahead[0], ahead[1], bits)]);
            }
            if rare(ids[p - 1], ids[p]) {
                emit(&ids[start..p], f, &mut out, &mut slot);
                start = p;
            }
        }
        emit(&ids[start..end], f, &mut out, &mut slot);
        at = end;
    }
    (out, slot)
}

/// How many positions ahead the sketch's counters are fetched.
const AHEAD: usize = 16;

/// A piece as a key: hashed as its ids, compared id by id (pieces are a few ids long: a call to memcmp
/// for each was a sixth of the cut's time).
#[derive(Clone, Copy)]
struct Piece<'a>(&'a [u32]);

impl std::hash::Hash for Piece<'_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_usize(self.0.len());
        for &id in self.0 {
            state.write_u32(id);
        }
    }
}

impl PartialEq for Piece<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len() && self.0.iter().zip(other.0).all(|(a, b)| a == b)
    }
}

impl Eq for Piece<'_> {}

/// Adds one piece to `out` (its count to an equal piece's, if any); a piece of one id holds no pair.
fn emit<'a>(piece: &'a [u32], f: i64, out: &mut Words, slot: &mut FxHashMap<Piece<'a>, usize>) {
    if piece.len() < 2 {
        return;
    }
    match slot.entry(Piece(piece)) {
        std::collections::hash_map::Entry::Occupied(i) => {
            let i = *i.get();
            out.freqs[i] = out.freqs[i].saturating_add(f);
        }
        std::collections::hash_map::Entry::Vacant(place) => {
            place.insert(out.freqs.len());
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
    fn lengths_that_do_not_add_up_are_refused() {
        for threads in [1, 2] {
            assert!(cut_with_sketch(&[1, 2], &[3], &[1], 1, 4, threads).is_err());
            assert!(cut_with_sketch(&[1, 2], &[2], &[1, 1], 1, 4, threads).is_err());
            assert!(cut_with_sketch(&[], &[], &[], 5, 4, threads).expect("valid").ids.is_empty());
        }
        assert!(cut_rare_pairs(&[], &[], &[], 5, 2).expect("valid").ids.is_empty());
    }
}
