"""engine/analysis against simple, slow recomputations: cuts, merge trees, the token count curve, comparing
two tokenizers (every token shared when they are the same, including tokens that split a character) and the
compression figures."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate, pairwise
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_studio.engine import DisallowedSpecialTokenError, Tokenizer, TrainConfig, train
from bpe_studio.engine.encoding.analysis import (
    MergeIndex,
    compare,
    compare_merges,
    compression,
    cut_difference,
    cut_difference_of_sizes,
    cut_to_merges,
    merge_tree,
    shared_tokens,
    shared_vocab,
    token_byte_spans,
    token_count_curve,
)

from ..reference_encoder import reference_encode

SPECIAL = "<|endoftext|>"
# Text whose characters take 1 to 4 UTF-8 bytes; a small vocabulary splits the longer ones across tokens.
MIXED = "Hello, world! The café's naïve owner: “日本語 🙃”.\n\tdef f(x): return x\n" + SPECIAL + "end 🙃🙃 "
_DOCS = [
    "the cat sat on the mat. the café is naïve. 日本語 日本 語 🙃🙃 emoji 😀 here",
    "a quick brown fox; the other fox ran off. ünïcödé ΑΒΓ абв",
    "x" * 300 + " long run, then ordinary words and the end",
]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("analysis") / "corpus.txt"
    path.write_text(SPECIAL.join(_DOCS[i % 3] + f" doc {i}" for i in range(90)), encoding="utf-8")
    return path


def _train(corpus: Path, vocab_size: int) -> Tokenizer:
    config = TrainConfig(inputs=(corpus,), vocab_size=vocab_size, special_tokens=(SPECIAL,), workers=1)
    return Tokenizer.from_result(train(config))


@pytest.fixture(scope="module")
def trained(corpus: Path) -> Tokenizer:
    return _train(corpus, 420)


def _with_repeat() -> Tokenizer:
    """A hand-made tokenizer whose last merge makes bytes an earlier merge already made (no new token)."""
    base = {i: bytes([i]) for i in range(256)}
    vocab = base | {256: b"bc", 257: b"ab", 258: b"abc", 259: SPECIAL.encode()}
    merges = [(b"b", b"c"), (b"a", b"b"), (b"ab", b"c"), (b"a", b"bc")]
    return Tokenizer(vocab, merges, {SPECIAL: 259})


def _id(tok: Tokenizer, data: bytes) -> int:
    found = tok.token_id(data)
    assert found is not None
    return found


texts = st.one_of(
    st.lists(st.sampled_from([*"abcxé日🙃 \n", "the", " cat", "abc", SPECIAL, "語"]), max_size=30).map(
        "".join
    ),
    st.text(max_size=30),
)
some = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


# ----------------------------------------------------------------------------------- merge index and trees


def test_the_merge_index_matches_the_merge_list(trained: Tokenizer) -> None:
    index = MergeIndex(trained)
    made_so_far = {bytes([b]) for b in range(256)}
    for rank, (a, b) in enumerate(trained.merges):
        made = _id(trained, a + b)
        assert (index.left[rank], index.right[rank], index.result[rank]) == (
            _id(trained, a),
            _id(trained, b),
            made,
        )
        assert index.creates[rank] == (a + b not in made_so_far)
        made_so_far.add(a + b)
        first = min(r for r, (x, y) in enumerate(trained.merges) if x + y == a + b)
        assert index.rank_of[made] == first
        assert index.parents(made) == (first, index.left[first], index.right[first])
    for byte in range(256):
        assert index.parents(_id(trained, bytes([byte]))) is None
    assert index.parents(trained.special_tokens[SPECIAL]) is None


def test_every_merge_tree_spells_its_token(trained: Tokenizer) -> None:
    index = MergeIndex(trained)
    specials = set(trained.special_tokens.values())
    for token_id, data in trained.vocab.items():
        tree = index.merge_tree(token_id)
        assert b"".join(trained.token_bytes(i) for i in tree.leaves()) == data
        assert all(len(trained.token_bytes(i)) == 1 for i in tree.leaves()) or token_id in specials
        assert tree.rank == index.rank_of.get(token_id)
        # A merge is made of tokens earlier merges made: ranks fall going down the tree.
        stack = [tree]
        while stack:
            node = stack.pop()
            for child in (node.left, node.right):
                if child is not None and child.rank is not None:
                    assert node.rank is not None and child.rank < node.rank
                    stack.append(child)
    assert index.heights() == {i: index.merge_tree(i).height() for i in index.rank_of}
    deepest = max(trained.vocab, key=lambda i: index.merge_tree(i).height())
    assert merge_tree(trained, deepest) == index.merge_tree(deepest)


# ----------------------------------------------------------------------------------------------- cuts


def _slow_cut_sizes(tok: Tokenizer) -> list[int]:
    """Vocab size after each cut, counted from the merge list: bytes, distinct merged tokens, specials."""
    sizes = []
    for k in range(len(tok.merges) + 1):
        made = {a + b for a, b in tok.merges[:k]} - {bytes([b]) for b in range(256)}
        sizes.append(256 + len(made) + len(tok.special_tokens))
    return sizes


@pytest.mark.parametrize("which", ["trained", "repeat"])
def test_cuts_keep_the_first_merges_and_their_tokens(which: str, trained: Tokenizer) -> None:
    tok = trained if which == "trained" else _with_repeat()
    index = MergeIndex(tok)
    assert index.vocab_sizes() == _slow_cut_sizes(tok)
    for k in [0, 1, 2, 3, len(tok.merges) // 2, len(tok.merges) - 1, len(tok.merges)]:
        cut = cut_to_merges(tok, k, index=index)
        assert list(cut.merges) == list(tok.merges[:k])
        assert cut.vocab_size == index.vocab_size_at(k) == _slow_cut_sizes(tok)[k]
        ordinary = {i: b for i, b in cut.vocab.items() if i not in cut.special_tokens.values()}
        assert all(tok.vocab[i] == b for i, b in ordinary.items())  # a kept token keeps its id
        assert set(cut.special_tokens) == set(tok.special_tokens)
        assert cut.encode(MIXED, allowed_special="all") == reference_encode(
            MIXED, cut.vocab, cut.merges, cut.special_tokens, cut.pattern
        )
    assert cut_to_merges(tok, len(tok.merges) + 5) is tok
    assert not cut_to_merges(tok, -3).merges


def test_a_cut_equals_training_to_that_size(corpus: Path, trained: Tokenizer) -> None:
    index = MergeIndex(trained)
    for k in (1, 40, 100):
        assert index.creates[k - 1]
        smaller = _train(corpus, index.vocab_size_at(k))
        cut = cut_to_merges(trained, k, index=index)
        assert (cut.merges, cut.vocab, dict(cut.special_tokens)) == (
            smaller.merges,
            smaller.vocab,
            dict(smaller.special_tokens),
        )
        assert index.merges_for_vocab_size(smaller.vocab_size) == k


# ----------------------------------------------------------------------------------- token count curve


def _slow_curve(tok: Tokenizer, text: str, **options: object) -> list[int]:
    return [len(cut_to_merges(tok, k).encode(text, **options)) for k in range(len(tok.merges) + 1)]  # type: ignore[arg-type]


def test_the_curve_counts_what_each_cut_encodes(trained: Tokenizer) -> None:
    text = MIXED + "x" * 400 + " " + MIXED  # a pre-token longer than 256 bytes takes the heap path
    curve = token_count_curve(trained, text)
    assert curve.counts == _slow_curve(trained, text, allowed_special="all")
    assert curve.vocab_sizes == MergeIndex(trained).vocab_sizes()
    plain = token_count_curve(trained, text, allowed_special=(), disallowed_special=())
    assert plain.counts == _slow_curve(trained, text, allowed_special=(), disallowed_special=())
    with pytest.raises(DisallowedSpecialTokenError):
        token_count_curve(trained, text, allowed_special=())


@some
@given(text=texts)
def test_the_curve_matches_slow_cuts_on_any_text(text: str) -> None:
    tok = _with_repeat()
    assert token_count_curve(tok, text).counts == _slow_curve(tok, text, allowed_special="all")


def _llm_style() -> Tokenizer:
    """ignore_merges and NFC (Llama 3 / Qwen files): "abc" is a token BPE never reaches ((a,b) comes first and
    (ab,c) is no merge), "xyz" is a token made by no merge, "é" (c3 a9) is made while "e" + U+0301 is not."""
    base = {i: bytes([i]) for i in range(256)}
    vocab = base | {
        256: b"ab",
        257: b"bc",
        258: b"abc",
        259: b"xyz",
        260: "é".encode(),
        261: SPECIAL.encode(),
    }
    merges = [(b"a", b"b"), (b"b", b"c"), (b"a", b"bc"), (b"\xc3", b"\xa9")]
    return Tokenizer(vocab, merges, {SPECIAL: 261}, ignore_merges=True, normalizer="NFC")


@some
@given(
    text=st.lists(
        st.sampled_from(["abc", " abc", "xyz", "ab", "bc", "e\u0301", "é", " ", "a", SPECIAL, "\u0301"]),
        max_size=12,
    ).map("".join)
)
def test_the_curve_follows_ignore_merges_and_nfc(text: str) -> None:
    tok = _llm_style()
    assert token_count_curve(tok, text).counts == _slow_curve(tok, text, allowed_special="all")


def test_a_cut_keeps_ignore_merges_and_the_normalizer() -> None:
    cut = cut_to_merges(_llm_style(), 3)
    assert cut.ignore_merges and cut.normalizer == "NFC"
    assert cut.encode_ordinary("abc") == [258]  # whole, though BPE alone gives ab + c


def test_the_curve_calls_its_check_and_stops_when_it_raises(trained: Tokenizer) -> None:
    class StopError(Exception):
        pass

    def check() -> None:
        raise StopError

    with pytest.raises(StopError):
        token_count_curve(trained, MIXED, check=check)


# ------------------------------------------------------------------------------------ comparing two


def _slow_shared(a: Tokenizer, a_ids: Sequence[int], b: Tokenizer, b_ids: Sequence[int]) -> int:
    """A's tokens whose bytes start and end at B's token boundaries with no B boundary inside."""
    b_cuts = {len(b.decode_bytes(b_ids[:n])) for n in range(len(b_ids) + 1)}
    shared = 0
    for n in range(len(a_ids)):
        start = len(a.decode_bytes(a_ids[:n]))
        end = start + len(a.token_bytes(a_ids[n]))
        inside = {c for c in b_cuts if start < c < end}
        shared += start in b_cuts and end in b_cuts and not inside
    return shared


def test_the_same_tokenizer_shares_every_token_even_split_characters(trained: Tokenizer) -> None:
    ids = trained.encode(MIXED, allowed_special="all")
    spans = trained.encode_with_offsets(MIXED, allowed_special="all")
    assert sum(s.partial for s in spans) >= 3  # 🙃 and 日本語 are split into byte tokens
    assert shared_tokens(trained, ids, trained, ids) == len(ids)
    found = compare(trained, trained, MIXED)
    assert found.agree and found.shared == found.a.tokens == found.b.tokens == len(ids)
    assert found.merges.first is None and found.merges.shared == len(trained.merges)
    assert f"{len(ids):,} of A's {len(ids):,} tokens" in found.describe_counts()
    assert "(all: the same split)" in found.describe_counts()
    assert found.merges.describe() == f"The merge lists are identical ({len(trained.merges):,} merges)."


@some
@given(text=texts, k=st.integers(0, 60))
def test_shared_tokens_match_a_slow_count(trained: Tokenizer, text: str, k: int) -> None:
    cut = cut_to_merges(trained, k)
    a_ids = trained.encode(text, allowed_special="all")
    b_ids = cut.encode(text, allowed_special="all")
    assert shared_tokens(trained, a_ids, cut, b_ids) == _slow_shared(trained, a_ids, cut, b_ids)
    assert shared_tokens(cut, b_ids, trained, a_ids) == _slow_shared(cut, b_ids, trained, a_ids)
    assert shared_tokens(trained, a_ids, trained, a_ids) == len(a_ids)
    spans = token_byte_spans(trained, a_ids)
    assert b"".join(text.encode("utf-8", "replace")[s:e] for s, e in spans) == trained.decode_bytes(a_ids)


def _slow_cut_difference(
    a_sizes: Sequence[int], b_sizes: Sequence[int]
) -> tuple[list[tuple[int, int]], int, int]:
    """From the boundary sets: between two consecutive shared boundaries, a span when either has another."""
    a_cuts = {0, *accumulate(a_sizes)}
    b_cuts = {0, *accumulate(b_sizes)}
    shared = sorted(a_cuts & b_cuts)
    spans, a_inside, b_inside = [], 0, 0
    for start, end in pairwise(shared):
        a_here = len([c for c in a_cuts if start < c <= end])
        b_here = len([c for c in b_cuts if start < c <= end])
        if a_here > 1 or b_here > 1:
            spans.append((start, end))
            a_inside += a_here
            b_inside += b_here
    return spans, a_inside, b_inside


@given(data=st.data(), total=st.integers(0, 40))
def test_cut_difference_matches_the_boundary_sets(data: st.DataObject, total: int) -> None:
    def split(n: int) -> list[int]:
        cuts = sorted(data.draw(st.sets(st.integers(1, n - 1), max_size=n)) if n > 1 else set())
        return [end - start for start, end in pairwise([0, *cuts, n])] if n else []

    a_sizes, b_sizes = split(total), split(total)
    found = cut_difference_of_sizes(a_sizes, b_sizes)
    spans, a_inside, b_inside = _slow_cut_difference(a_sizes, b_sizes)
    assert (list(found.spans), found.a_tokens, found.b_tokens) == (spans, a_inside, b_inside)
    swapped = cut_difference_of_sizes(b_sizes, a_sizes)
    assert (swapped.spans, swapped.a_tokens) == (found.spans, found.b_tokens)
    assert swapped.b_tokens == found.a_tokens
    assert cut_difference_of_sizes(a_sizes, a_sizes).spans == ()


def test_cut_difference_refuses_two_texts() -> None:
    with pytest.raises(ValueError, match="not of the same text: 3 bytes against 4"):
        cut_difference_of_sizes([1, 2], [4])


@some
@given(text=texts, k=st.integers(0, 60))
def test_cut_difference_leaves_out_exactly_the_shared_tokens(trained: Tokenizer, text: str, k: int) -> None:
    cut = cut_to_merges(trained, k)
    a_ids = trained.encode(text, allowed_special="all")
    b_ids = cut.encode(text, allowed_special="all")
    found = cut_difference(trained, a_ids, cut, b_ids)
    shared = shared_tokens(trained, a_ids, cut, b_ids)
    assert found.a_tokens == len(a_ids) - shared
    assert found.b_tokens == len(b_ids) - shared
    data = text.encode("utf-8")
    # Each span is cut differently: its bytes are the same text, made of different tokens.
    a_spans, b_spans = token_byte_spans(trained, a_ids), token_byte_spans(cut, b_ids)
    for start, end in found.spans:
        a_here = [data[s:e] for s, e in a_spans if start <= s and e <= end]
        b_here = [data[s:e] for s, e in b_spans if start <= s and e <= end]
        assert b"".join(a_here) == b"".join(b_here) == data[start:end]
        assert a_here != b_here


def test_comparing_merge_lists(trained: Tokenizer, corpus: Path) -> None:
    smaller = cut_to_merges(trained, 50)
    prefix = compare_merges(smaller, trained)
    assert (prefix.shared, prefix.first, prefix.a_merge, prefix.b_merge) == (
        50,
        None,
        None,
        trained.merges[50],
    )
    assert "A's 50 merges are the first 50 of B's; B has" in prefix.describe()
    other_corpus = corpus.parent / "upper.txt"
    other_corpus.write_text(corpus.read_text(encoding="utf-8").upper(), encoding="utf-8")
    other = Tokenizer.from_result(
        train(TrainConfig(inputs=(other_corpus,), vocab_size=420, special_tokens=(SPECIAL,), workers=1))
    )
    diff = compare_merges(trained, other)
    first = next(i for i, (x, y) in enumerate(zip(trained.merges, other.merges, strict=False)) if x != y)
    assert (diff.first, diff.shared) == (first, first)
    assert (diff.a_merge, diff.b_merge) == (trained.merges[first], other.merges[first])
    assert f"First difference at merge {first + 1:,}" in diff.describe()  # merges are numbered from 1
    found = compare(trained, other, MIXED)
    assert not found.agree
    assert found.shared == _slow_shared(
        trained,
        trained.encode(MIXED, allowed_special="all"),
        other,
        other.encode(MIXED, allowed_special="all"),
    )
    na, nb = found.a.tokens, found.b.tokens
    fewer = "A" if na < nb else "B"
    assert na != nb and f"{fewer} uses {abs(na - nb):,} fewer tokens" in found.describe_counts()


def test_shared_vocab_counts_ordinary_tokens_by_bytes(trained: Tokenizer) -> None:
    cut = cut_to_merges(trained, 30)
    ordinary = {b for i, b in cut.vocab.items() if i not in cut.special_tokens.values()}
    assert shared_vocab(cut, trained) == len(ordinary) == 256 + MergeIndex(trained).new_before[30]
    assert shared_vocab(trained, trained) == trained.vocab_size - len(trained.special_tokens)


# ------------------------------------------------------------------------------------------- compression


@given(text=st.text(max_size=40), tokens=st.integers(0, 50))
def test_compression_figures(text: str, tokens: int) -> None:
    found = compression(text, tokens)
    size = len(text.encode("utf-8", "replace"))
    words = len(text.split())
    assert (found.characters, found.bytes, found.words, found.tokens) == (len(text), size, words, tokens)
    assert found.bytes_per_token == (size / tokens if tokens else None)
    assert found.chars_per_token == (len(text) / tokens if tokens else None)
    assert found.tokens_per_word == (tokens / words if words else None)
