"""The long-word merge loop's queue (engine/encoding/merge_queue.py, MergeQueue in rust/src/encode.rs):
buckets by rank, linear, give exactly the heap's merges; a merge list or rank file whose merges come out of
order sends the word to the heap, in both engines, and the ids stay the reference library's."""

from __future__ import annotations

from itertools import pairwise

import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_studio.engine import Tokenizer
from bpe_studio.engine.encoding.merge_queue import Buckets, Heap

from ..backends import BACKENDS, use_backend

BYTES = {i: bytes([i]) for i in range(256)}


@settings(max_examples=200, deadline=None)
@given(
    entries=st.lists(st.tuples(st.integers(0, 6), st.integers(0, 50)), max_size=40), cut=st.integers(0, 40)
)
def test_buckets_take_entries_in_the_heaps_order(entries: list[tuple[int, int]], cut: int) -> None:
    # Push some, take some, push more: whatever the buckets accept comes out as the heap's order would.
    buckets, heap = Buckets(), Heap()
    for rank, position in entries[:cut]:
        assert buckets.push(rank, position) and heap.push(rank, position)
    taken = []
    while (entry := heap.pop()) is not None:
        assert buckets.pop() == entry
        taken.append(entry)
        later = [(r, p) for r, p in entries[cut:] if r > entry[0]]
        if later:  # pushed while this rank is taken: ranks after it only, as BPE training makes them
            rank, position = later.pop(0)
            entries = [e for e in entries if e != (rank, position)]
            assert buckets.push(rank, position) and heap.push(rank, position)
    assert buckets.pop() is None


def test_buckets_refuse_a_rank_that_is_being_taken_or_past() -> None:
    queue = Buckets()
    queue.push(3, 0)
    assert queue.pop() == (3, 0)
    assert not queue.push(3, 5) and not queue.push(1, 5) and queue.push(4, 5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_merge_that_ranks_before_its_part_takes_the_heap(backend: str) -> None:
    # ("c", "ab") ranks before ("a", "b"), which makes "ab": no BPE training makes such a list, but a file
    # may hold one. A long word ("cab" * 200, over 256 bytes) merges as the short-word loop does.
    vocab = {**BYTES, 256: b"ab", 257: b"cab"}
    with use_backend(backend):
        tok = Tokenizer(vocab, [(b"c", b"ab"), (b"a", b"b")], pattern=r"\S+")
        assert tok.encode_ordinary("cab" * 200) == [257] * 200
        assert tok.encode_ordinary("cab" * 2) == [257] * 2  # the short-word loop agrees


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_rank_file_whose_longer_token_ranks_first_equals_tiktoken_on_long_words(backend: str) -> None:
    ranks = {**{bytes([i]): i for i in range(256)}, b"cab": 256, b"ab": 257, b"abab": 258}
    reference = tiktoken.Encoding("t", pat_str=r"\S+", mergeable_ranks=ranks, special_tokens={})
    vocab = {i: token for token, i in ranks.items()}
    with use_backend(backend):
        tok = Tokenizer(vocab, None, pattern=r"\S+")
        for text in ("cab" * 200, "ab" * 300 + "c", "c" + "ab" * 300, "abcab" * 100):
            assert tok.encode_ordinary(text) == reference.encode_ordinary(text)


def _merged(word: bytes, merges: list[tuple[bytes, bytes]]) -> list[bytes]:
    """The reference: merge the adjacent pair of lowest rank, leftmost first, until none is left."""
    rank = {pair: i for i, pair in reversed(list(enumerate(merges)))}
    parts = [bytes([b]) for b in word]
    while True:
        found = [(rank[pair], i) for i, pair in enumerate(pairwise(parts)) if pair in rank]
        if not found:
            return parts
        _, i = min(found)
        parts[i : i + 2] = [parts[i] + parts[i + 1]]


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=30, deadline=None)
@given(word=st.text(alphabet="ab", min_size=257, max_size=700))
def test_long_words_merge_as_the_reference_loop(backend: str, word: str) -> None:
    # A trained-like list (each merge's parts made before it): buckets all the way.
    merges = [(b"a", b"b"), (b"b", b"a"), (b"ab", b"ab"), (b"a", b"a"), (b"ba", b"b"), (b"abab", b"abab")]
    vocab = dict(BYTES)
    for left, right in merges:
        vocab[len(vocab)] = left + right
    ids = {token: i for i, token in vocab.items()}
    with use_backend(backend):
        tok = Tokenizer(vocab, merges, pattern=r"\S+")
        assert tok.encode_ordinary(word) == [ids[p] for p in _merged(word.encode(), merges)]
