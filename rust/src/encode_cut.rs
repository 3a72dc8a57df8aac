//! Encoding many long words at once, each cut where no token can span (`Encoder::encode_words`): a
//! superword run's stage 2 encodes a million unique chunks of tens of tokens with the stage-1 merges, and
//! most of each chunk's parts (its words) recur across chunks, so the parts go through the cache.
//!
//! Why a cut is exact: a token made by BPE covers adjacent bytes of the word, so a token that spans the
//! place between bytes `x` and `y` holds the pair `xy`. If no token of the vocabulary holds `xy`, no merge
//! ever joins across that place, every merge acts within one side, and (merges by rank, lowest first,
//! leftmost first) each side is merged exactly as it would be alone. So the word's ids are its parts' ids
//! one after the other. With `ignore_merges` (a part that is a token is taken whole) that would not hold,
//! and words are not cut.

use super::{Cache, Encoder, PieceCache};

/// Adjacent byte pairs, as an index `x * 256 + y`.
const PAIRS: usize = 1 << 16;

/// Words as flat ids: the ids one word after the other, each word's number of ids, each word's count.
pub type FlatWords = (Vec<u32>, Vec<u32>, Vec<i64>);

impl Encoder {
    /// Which adjacent byte pairs some token holds (all of them when words must not be cut).
    fn joinable(&self) -> Vec<bool> {
        if self.tables.whole.is_some() || self.tables.whole_by_ranks {
            return vec![true; PAIRS];
        }
        let mut seen = vec![false; PAIRS];
        for (i, &present) in self.present.iter().enumerate() {
            if present {
                for w in self.bytes[self.starts[i]..self.starts[i + 1]].windows(2) {
                    seen[(w[0] as usize) << 8 | w[1] as usize] = true;
                }
            }
        }
        seen
    }

    /// Each word's ids (the word merged whole, as one pre-token), one word after the other, and how many
    /// ids each word has. Each word is cut between any two bytes that no token holds side by side, and the
    /// parts are encoded through the cache (see the module's doc); time linear in the words' bytes but for
    /// the BPE of the parts.
    pub fn encode_words(&self, words: &[&[u8]]) -> (Vec<u32>, Vec<u32>) {
        let mut ids = Vec::with_capacity(words.iter().map(|w| w.len()).sum::<usize>() / 3 + 1);
        let mut lengths = Vec::with_capacity(words.len());
        self.encode_words_into(words.iter().copied(), &mut ids, &mut lengths);
        (ids, lengths)
    }

    /// `encode_words`, appending to `ids` and `lengths`.
    fn encode_words_into<'w>(
        &self,
        words: impl Iterator<Item = &'w [u8]>,
        ids: &mut Vec<u32>,
        lengths: &mut Vec<u32>,
    ) {
        self.with_cache(|cache| self.encode_words_cached(cache, words, ids, lengths))
    }

    /// `encode_words_into` through `cache`.
    fn encode_words_cached<'w>(
        &self,
        cache: &mut Cache,
        words: impl Iterator<Item = &'w [u8]>,
        ids: &mut Vec<u32>,
        lengths: &mut Vec<u32>,
    ) {
        let joinable = self.joinable();
        {
            for word in words {
                let before = ids.len();
                let mut start = 0;
                for i in 1..word.len() {
                    if !joinable[(word[i - 1] as usize) << 8 | word[i] as usize] {
                        cache.encode(&self.tables, &word[start..i], ids);
                        start = i;
                    }
                }
                if start < word.len() {
                    cache.encode(&self.tables, &word[start..], ids);
                }
                lengths.push((ids.len() - before) as u32);
            }
        }
    }
}

impl Encoder {
    /// `encode_words` over a count table's frame (`count::Table::to_frame`'s layout): each key's ids one
    /// after the other, each key's number of ids and each key's count, in the frame's order; Err names
    /// what is wrong with a frame that is not one. The superword stage 2 goes from its native count table
    /// to the merge loop's flat words this way, without a Python str per chunk.
    pub fn encode_frame(&self, frame: &[u8]) -> Result<FlatWords, String> {
        let entries = crate::count::parse_frame(frame)?;
        let keys: Vec<&[u8]> = entries.iter().map(|&(key, _)| key).collect();
        let (ids, lengths) = self.encode_words(&keys);
        Ok((ids, lengths, entries.iter().map(|&(_, n)| n).collect()))
    }

    /// `encode_words` over the keys of several count tables, one table after the other (each in its order
    /// of first appearance), with each key's count; each table is dropped once its keys are encoded. A key
    /// in two tables is two words (a merge loop counts them as one word of both counts: the same merges),
    /// so the tables of a superword run's counting threads need not be merged first.
    pub fn encode_tables(&self, tables: Vec<crate::count::Table>) -> FlatWords {
        let mut parts = self.encode_tables_apart(tables).into_iter();
        let (mut ids, mut lengths, mut counts) = parts.next().unwrap_or_default();
        for (more_ids, more_lengths, more_counts) in parts {
            ids.extend(more_ids);
            lengths.extend(more_lengths);
            counts.extend(more_counts);
        }
        (ids, lengths, counts)
    }

    /// `encode_tables` in parts laid end to end (the caller copies them into one buffer: no copy of the
    /// first part's ids to make room for the next). Each table's keys are shared among as many threads
    /// as there are tables (the counting threads'), one part each, a cache each; the table is dropped
    /// before the next one is encoded. One table at a time, not one per thread: a table is many times
    /// the size of its ids, and the next table's memory is not taken before the first one's is free.
    pub fn encode_tables_apart(&self, tables: Vec<crate::count::Table>) -> Vec<FlatWords> {
        let threads = tables.len().max(1);
        let mut caches: Vec<Cache> = (0..threads).map(|_| Cache::new(self.cache_size)).collect();
        let mut parts = Vec::with_capacity(tables.len() * threads);
        for table in tables {
            let n = table.len();
            let range = |i: usize| (n * i / threads, n * (i + 1) / threads);
            let one = |cache: &mut Cache, (start, end): (usize, usize)| -> FlatWords {
                let (mut ids, mut lengths) = (Vec::new(), Vec::with_capacity(end - start));
                let words = table.iter_range(start, end).map(|(key, _)| key);
                self.encode_words_cached(cache, words, &mut ids, &mut lengths);
                (ids, lengths, table.iter_range(start, end).map(|(_, n)| n).collect())
            };
            if threads == 1 {
                parts.push(one(&mut caches[0], (0, n)));
                continue;
            }
            let done: Vec<FlatWords> = std::thread::scope(|scope| {
                let running: Vec<_> = caches
                    .iter_mut()
                    .enumerate()
                    .map(|(i, cache)| scope.spawn(move || one(cache, range(i))))
                    .collect();
                // A panic in a thread is passed on as it is (the bindings turn it into a Python exception).
                running
                    .into_iter()
                    .map(|t| t.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                    .collect()
            });
            drop(table);
            parts.extend(done);
        }
        parts
    }
}

impl Encoder {
    /// `encode_tables_apart` of the tables that `parted` holds split (src/chunk_parts.rs): the same
    /// words, ids and counts, in parts laid end to end. Each distinct part is encoded once (cut where no
    /// token spans, as `encode_words` cuts), shared among `threads` threads, then each table's keys get
    /// their parts' ids one after the other, the keys shared among the threads. When some token holds a
    /// pair of bytes that the split cut between (tokens other than stage 1's), the tables are put back
    /// whole and encoded as `encode_tables_apart` does.
    pub fn encode_parted(&self, parted: crate::chunk_parts::Parted, threads: usize) -> Vec<FlatWords> {
        let joinable = self.joinable();
        if joinable.iter().zip(&parted.held).any(|(&joins, &held)| joins && !held) {
            let threads = threads.max(1);
            // (`encode_tables_apart` shares each table among as many threads as there are tables.)
            let mut tables = parted.into_tables();
            tables.resize_with(tables.len().max(threads), Default::default);
            return self.encode_tables_apart(tables);
        }
        let threads = threads.max(1);
        let crate::chunk_parts::Parted { parts, tables, .. } = parted;
        // Each distinct part's ids: part i's are ids[starts[i]..starts[i + 1]].
        let n = parts.len();
        let range = |i: usize, n: usize| (n * i / threads, n * (i + 1) / threads);
        let encoded: Vec<(Vec<u32>, Vec<u32>)> = shared(threads, |i| {
            let (start, end) = range(i, n);
            let (mut ids, mut lengths) = (Vec::new(), Vec::with_capacity(end - start));
            // No cache: each part comes once, and is most often one piece.
            let joinable = &joinable;
            for (part, _) in parts.iter_range(start, end) {
                let before = ids.len();
                let mut from = 0;
                for i in 1..part.len() {
                    if !joinable[(part[i - 1] as usize) << 8 | part[i] as usize] {
                        self.encode_piece(&part[from..i], &mut ids);
                        from = i;
                    }
                }
                if from < part.len() {
                    self.encode_piece(&part[from..], &mut ids);
                }
                lengths.push((ids.len() - before) as u32);
            }
            (ids, lengths)
        });
        drop(parts);
        let mut ids = Vec::with_capacity(encoded.iter().map(|(ids, _)| ids.len()).sum());
        let mut starts = Vec::with_capacity(n + 1);
        starts.push(0u32);
        for (part_ids, lengths) in encoded {
            ids.extend_from_slice(&part_ids);
            for len in lengths {
                starts.push(starts[starts.len() - 1] + len);
            }
        }
        let (ids, starts) = (&ids, &starts);
        let mut out = Vec::with_capacity(tables.len() * threads);
        for table in tables {
            let keys = table.lengths.len();
            // Where each thread's first key's parts start (and, last, where the parts end).
            let mut firsts = Vec::with_capacity(threads + 1);
            let (mut at, mut k) = (0usize, 0usize);
            for t in 0..=threads {
                let until = if t == threads { keys } else { range(t, keys).0 };
                at += table.lengths[k..until].iter().map(|&n| n as usize).sum::<usize>();
                k = until;
                firsts.push(at);
            }
            let table = &table;
            let firsts = &firsts;
            out.extend(shared(threads, |i| {
                let (start, end) = range(i, keys);
                let mut at = firsts[i];
                let mut words = Vec::with_capacity(firsts[i + 1] - at);
                let mut lengths = Vec::with_capacity(end - start);
                for &len in &table.lengths[start..end] {
                    let before = words.len();
                    for &p in &table.parts[at..at + len as usize] {
                        words.extend_from_slice(
                            &ids[starts[p as usize] as usize..starts[p as usize + 1] as usize],
                        );
                    }
                    at += len as usize;
                    lengths.push((words.len() - before) as u32);
                }
                (words, lengths, table.counts[start..end].to_vec())
            }));
        }
        out
    }
}

impl Encoder {
    /// Appends the ids of `piece` (BPE by rank), as `Cache::encode` gives them but with no cache.
    #[inline]
    fn encode_piece(&self, piece: &[u8], out: &mut Vec<u32>) {
        match self.tables.whole_rank(piece) {
            Some(id) => out.push(id),
            None => self.tables.bpe(piece, out),
        }
    }
}

/// `work(0..threads)`, each on a thread of its own (the calling thread for one), the answers in order; a
/// panic in a thread is passed on as it is (the bindings turn it into a Python exception).
fn shared<T: Send>(threads: usize, work: impl Fn(usize) -> T + Sync) -> Vec<T> {
    if threads <= 1 {
        return vec![work(0)];
    }
    let work = &work;
    std::thread::scope(|scope| {
        let running: Vec<_> = (0..threads).map(|i| scope.spawn(move || work(i))).collect();
        running.into_iter().map(|t| t.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::{ab_word, naive};
    use crate::testing::encoder;

    #[test]
    fn a_word_cut_where_no_token_spans_has_the_ids_of_the_whole_word() {
        // No token holds "a " or " b", so "ab ab" is cut in three; "bb" spans nothing either.
        let e = encoder(&[("a", "b"), (" ", "a"), (" a", "b"), ("b", "b")], None);
        let words: Vec<&[u8]> = vec![b"ab ab", b"abbb ab", b"", b"  ab", b"x"];
        let (ids, lengths) = e.encode_words(&words);
        let mut expected = Vec::new();
        let mut sizes = Vec::new();
        for w in &words {
            let one = naive(&e, w);
            sizes.push(one.len() as u32);
            expected.extend(one);
        }
        assert_eq!(ids, expected);
        assert_eq!(lengths, sizes);
    }

    #[test]
    fn random_words_equal_the_naive_merge_of_the_whole_word() {
        let e = encoder(&[("a", "b"), ("b", "b"), ("ab", "a"), ("bb", "b"), ("a", "a"), ("aba", "bb")], None);
        let mut state = 7u64;
        let words: Vec<Vec<u8>> = (0..300)
            .map(|i| {
                let mut w = ab_word(&mut state, i % 40);
                // Some places no token spans ("x"), and a word of "a" and "b" only.
                if i % 3 == 0 {
                    w.insert(w.len() / 2, b'x');
                }
                w
            })
            .collect();
        let refs: Vec<&[u8]> = words.iter().map(|w| w.as_slice()).collect();
        let (ids, lengths) = e.encode_words(&refs);
        let mut at = 0;
        for (w, &n) in refs.iter().zip(&lengths) {
            assert_eq!(ids[at..at + n as usize], naive(&e, w)[..], "word {w:?}");
            at += n as usize;
        }
        assert_eq!(at, ids.len());
    }

    #[test]
    fn a_count_tables_keys_are_encoded_with_their_counts() {
        let e = encoder(&[("a", "b"), (" ", "a"), (" a", "b")], None);
        let mut table = crate::count::Table::default();
        let classes = crate::testing::classes();
        let texts = ["ab ab ab", "x ab"];
        assert!(table.add(&texts, classes, crate::pretok::scanner("gpt2").expect("gpt2")).is_ok());
        let (ids, lengths, counts) = e.encode_frame(&table.to_frame()).expect("a frame");
        // gpt2's pieces in order of first appearance: "ab", " ab" (3 times), "x".
        assert_eq!(counts, [1, 3, 1]);
        // " ab": "ab" (rank 0) first, so " a" never merges.
        assert_eq!(lengths, [1, 2, 1]);
        assert_eq!(ids, [256, u32::from(b' '), 256, u32::from(b'x')]);
        assert!(e.encode_frame(b"short").is_err());
    }

    #[test]
    fn several_tables_are_encoded_one_after_the_other_keys_in_both_twice() {
        let e = encoder(&[("a", "b"), (" ", "a"), (" a", "b")], None);
        let classes = crate::testing::classes();
        let scan = crate::pretok::scanner("gpt2").expect("gpt2");
        let mut first = crate::count::Table::default();
        let mut second = crate::count::Table::default();
        assert!(first.add(&["ab ab ab"], classes, scan).is_ok());
        assert!(second.add(&["x ab x"], classes, scan).is_ok());
        let (ids, lengths, counts) = e.encode_tables(vec![first, second]);
        // "ab", " ab" x2; then "x", " ab", " x".
        assert_eq!(counts, [1, 2, 1, 1, 1]);
        assert_eq!(lengths, [1, 2, 1, 2, 2]);
        let (b, x, ab) = (u32::from(b' '), u32::from(b'x'), 256);
        assert_eq!(ids, [ab, b, ab, x, b, ab, b, x]);
        assert_eq!(e.encode_tables(Vec::new()), (vec![], vec![], vec![]));
    }

    #[test]
    fn tables_shared_among_threads_give_each_tables_words_in_order() {
        let e = encoder(&[("a", "b"), (" ", "a"), (" a", "b")], None);
        let classes = crate::testing::classes();
        let scan = crate::pretok::scanner("gpt2").expect("gpt2");
        let texts = ["ab ab ab", "x ab x", "ab", "abab x x x"];
        let tables = |texts: &[&str]| -> Vec<crate::count::Table> {
            texts
                .iter()
                .map(|t| {
                    let mut table = crate::count::Table::default();
                    assert!(table.add(&[t], classes, scan).is_ok());
                    table
                })
                .collect()
        };
        // Each table on its own (one thread), then all four shared among four threads: the same words.
        let mut alone = (Vec::new(), Vec::new(), Vec::new());
        for text in texts {
            let (ids, lengths, counts) = e.encode_tables(tables(&[text]));
            alone.0.extend(ids);
            alone.1.extend(lengths);
            alone.2.extend(counts);
        }
        let parts = e.encode_tables_apart(tables(&texts));
        assert_eq!(parts.len(), texts.len() * texts.len());
        assert_eq!(alone.0, parts.iter().flat_map(|p| p.0.clone()).collect::<Vec<_>>());
        assert_eq!(alone.1, parts.iter().flat_map(|p| p.1.clone()).collect::<Vec<_>>());
        assert_eq!(alone.2, parts.iter().flat_map(|p| p.2.clone()).collect::<Vec<_>>());
        assert_eq!(e.encode_tables(tables(&texts)), alone);
    }

    #[test]
    fn tables_split_into_parts_first_give_the_same_words() {
        // Chunks of random text, the parts held where the "stage-1 words" (the same text under gpt2) hold
        // their bytes side by side; an encoder of stage-1-like merges (the fast path) and one whose token
        // "b " no word holds (the tables put back whole), on 1 to 3 threads: the very same words.
        let classes = crate::testing::classes();
        let gpt2 = crate::pretok::scanner("gpt2").expect("gpt2");
        let superbpe = crate::pretok::scanner("superbpe").expect("superbpe");
        let mut next = crate::testing::xorshift(0x5851_F42D_4C95_7F2Du64);
        let stage1 = encoder(&[("a", "b"), (" ", "a"), (" a", "b"), ("x", "x"), (" ", "xx")], None);
        let other = encoder(&[("a", "b"), ("b", " "), (" ", "a")], None);
        for round in 0..50 {
            let texts: Vec<String> = (0..1 + next(4))
                .map(|_| {
                    (0..next(200))
                        .map(|_| ["a", "b", " ", "x", "\n", "ab", " ab"][next(7) as usize])
                        .collect()
                })
                .collect();
            let counted = |scan| -> Vec<crate::count::Table> {
                texts
                    .iter()
                    .map(|t| {
                        let mut table = crate::count::Table::default();
                        assert!(table.add(&[t.as_str()], classes, scan).is_ok());
                        table
                    })
                    .collect()
            };
            let mut words = crate::count::Table::default();
            for t in counted(gpt2) {
                words.merge(&t);
            }
            let held = crate::chunk_parts::held_pairs(&words);
            for e in [&stage1, &other] {
                let want = e.encode_tables(counted(superbpe));
                for threads in 1..=3 {
                    let parts =
                        e.encode_parted(crate::chunk_parts::split(counted(superbpe), held.clone()), threads);
                    let got = (
                        parts.iter().flat_map(|p| p.0.clone()).collect::<Vec<_>>(),
                        parts.iter().flat_map(|p| p.1.clone()).collect::<Vec<_>>(),
                        parts.iter().flat_map(|p| p.2.clone()).collect::<Vec<_>>(),
                    );
                    assert_eq!(got, want, "round {round}, {threads} threads");
                }
            }
        }
    }

    #[test]
    fn with_ignore_merges_words_are_not_cut() {
        // "ab" is a whole token: alone it is taken whole, inside "abxab" it is not (x never joins).
        let e = encoder(&[("a", "b")], Some(&[("ab", 256), ("b", 98)]));
        let (ids, lengths) = e.encode_words(&[b"abxb"]);
        let mut whole = Vec::new();
        e.tables.bpe(b"abxb", &mut whole);
        assert_eq!(ids, whole);
        assert_eq!(lengths, [whole.len() as u32]);
    }
}
