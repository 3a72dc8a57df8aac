"""``inspect``'s figures, computed in passes that keep it about as fast as the reference library's load
(bench/load.py), equal the plain computation: lengths, median, the longest tokens, the deepest merge tree
(:meth:`MergeIndex.deepest`) and the merges by id (:meth:`Tokenizer.merge_ids`)."""

from __future__ import annotations

import heapq
import statistics
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_studio.cli.inspect_cmd import _LENGTH_CAP, _median, _top_length, describe
from bpe_studio.engine import Tokenizer
from bpe_studio.engine.encoding.analysis import (
    MergeIndex,
    MergeSummary,
    length_counts,
    merge_summary,
    positions_at_least,
)

from ..engine.backends import BACKENDS, needs_native, use_backend
from ..engine.reference_encoder import trained_tokenizer


def _plain(tok: Tokenizer, top: int) -> dict[str, object]:
    """The figures as inspect computed them before: sorts and a dict of heights."""
    special_ids = set(tok.special_tokens.values())
    ordinary = [(i, b) for i, b in tok.vocab.items() if i not in special_ids]
    lengths = [len(b) for _, b in ordinary]
    longest = sorted(ordinary, key=lambda item: (-len(item[1]), item[0]))[:top]
    index = MergeIndex(tok)
    depths = {token: index.merge_tree(token).height() for token in index.rank_of}
    deepest = max(depths, key=lambda i: (depths[i], -i), default=None)
    return {
        "merges": len(tok.merges),
        "learned": index.new_before[-1],
        "longest": [i for i, _ in longest],
        "median": statistics.median(lengths),
        "mean": round(statistics.fmean(lengths), 3),
        "histogram": Counter(min(n, _LENGTH_CAP) for n in lengths),
        "max": max(lengths),
        "deepest": None if deepest is None else (deepest, depths[deepest]),
    }


@pytest.fixture(scope="module", params=["merges", "ranks"])
def tokenizer(request: pytest.FixtureRequest, cs336_data: Path) -> Tokenizer:
    tok = trained_tokenizer(cs336_data, "cl100k")
    if request.param == "merges":
        return tok
    specials = set(tok.special_tokens.values())
    vocab = {i: t for i, t in tok.vocab.items() if i not in specials}
    return Tokenizer(vocab, None, pattern="cl100k")  # tiktoken's rule: merges derived


@pytest.mark.parametrize("top", [0, 1, 10, 100_000])
def test_describe_equals_the_plain_computation(tokenizer: Tokenizer, top: int) -> None:
    info = describe(tokenizer, top=top)
    plain = _plain(tokenizer, top)
    assert info["merges"] == plain["merges"] and info["learned_tokens"] == plain["learned"]
    assert [t["id"] for t in info["longest_tokens"]] == plain["longest"]
    assert info["token_lengths"]["median"] == plain["median"]
    assert info["token_lengths"]["mean"] == plain["mean"]
    assert info["token_lengths"]["histogram"] == {
        (f"{n}+" if n == _LENGTH_CAP else str(n)): count for n, count in sorted(plain["histogram"].items())
    }
    assert info["token_lengths"]["max"] == plain["max"]
    deepest = info["deepest_token"]
    assert (deepest["id"], deepest["depth"]) == plain["deepest"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("top", [0, 1, 3])
def test_a_special_tokens_length_counts_nowhere(top: int, backend: str) -> None:
    """Inspect counts the lengths of all the tokens and takes the special tokens' off (issue 20): a length
    only a special token has (the longest here) is in no figure."""
    base = {i: bytes([i]) for i in range(256)}
    with use_backend(backend):
        tok = Tokenizer(base | {256: b"ab", 257: b"abc"}, [(b"a", b"b"), (b"ab", b"c")], ["<|endoftext|>"])
        info = describe(tok, top=top)
    plain = _plain(tok, top)
    assert [t["id"] for t in info["longest_tokens"]] == plain["longest"]
    lengths = info["token_lengths"]
    assert (lengths["mean"], lengths["median"], lengths["max"]) == (plain["mean"], plain["median"], 3)
    assert lengths["histogram"] == {"1": 256, "2": 1, "3": 1}


@needs_native
@settings(deadline=None)
@given(tokens=st.lists(st.binary(max_size=12), max_size=40), shortest=st.integers(0, 13))
def test_the_native_length_counts_and_positions_are_the_python_ones(
    tokens: list[bytes], shortest: int
) -> None:
    found = []
    for backend in ("native", "python"):
        with use_backend(backend):
            found.append((length_counts(tokens), positions_at_least(tokens, shortest)))
    assert found[0] == found[1]
    assert found[1] == (Counter(map(len, tokens)), [i for i, t in enumerate(tokens) if len(t) >= shortest])


def test_merge_ids_are_the_ids_of_the_merges(tokenizer: Tokenizer) -> None:
    token_id = tokenizer.token_id
    assert list(tokenizer.merge_ids()) == [
        (token_id(a), token_id(b), token_id(a + b)) for a, b in tokenizer.merges
    ]


def test_duplicate_merges_and_bytes_keep_the_first_rank() -> None:
    base = {i: bytes([i]) for i in range(256)}
    # b"ab" under two ids (the smaller is the one merges name), a merge listed twice, one of a byte.
    tok = Tokenizer(base | {256: b"ab", 257: b"ab", 258: b"abc"}, [(b"a", b"b"), (b"ab", b"c"), (b"a", b"b")])
    index = MergeIndex(tok)
    assert tok.merge_ids() == [(97, 98, 256), (256, 99, 258), (97, 98, 256)]
    assert index.rank_of == {256: 0, 258: 1} and index.creates == [True, True, False]
    assert index.heights() == {256: 1, 258: 2} and index.deepest() == (258, 2)
    assert index.new_before == [0, 1, 2, 2]
    assert merge_summary(tok) == MergeSummary(3, 2, (258, 2))


@settings(deadline=None)
@given(lengths=st.lists(st.integers(1, 20), max_size=40), top=st.integers(1, 50))
def test_the_top_length_is_the_top_th_largest(lengths: list[int], top: int) -> None:
    assert _top_length(Counter(lengths), top) == min(heapq.nlargest(top, lengths), default=0)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 40), min_size=1, max_size=60))
def test_median_of_counts_is_statistics_median(lengths: list[int]) -> None:
    assert _median(Counter(lengths)) == statistics.median(lengths)


def test_inspect_parses_a_tokenizer_json_once(
    cs336_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Telling the format, loading and naming the format in the output share one parse of the JSON."""
    from bpe_studio.cli import main
    from bpe_studio.engine import save
    from bpe_studio.engine.formats import detect, hf, studio

    tokenizer = trained_tokenizer(cs336_data, "cl100k")
    path = save(tokenizer, tmp_path / "tokenizer.json", format="hf")
    parsed: list[Path] = []

    def counting(real: Callable[[Path], object]) -> Callable[[Path], object]:
        def count(source: Path) -> object:
            parsed.append(Path(source))
            return real(source)

        return count

    # (A tokenizer.json is read by read_tokenizer_json, which itself calls json or the native reader;
    # detect imports it from hf when it meets a JSON file, so hf's is the one to count.)
    monkeypatch.setattr(hf, "read_tokenizer_json", counting(hf.read_tokenizer_json))
    monkeypatch.setattr(studio, "read_json", counting(studio.read_json))
    assert main(["inspect", str(path), "--json"]) == 0
    assert '"format": "hf"' in capsys.readouterr().out
    assert parsed == [path]
    # Another file at that path (another size): told apart again, not taken from what was seen.
    save(tokenizer, path, format="studio")
    assert detect.detect_format(path) == "studio"


def _rank_tokenizers(cs336_data: Path) -> list[Tokenizer]:
    """A trained tokenizer's ranks (tiktoken's rule), and Llama 3's rank file when the zoo has it."""
    from bpe_studio.engine import load

    from ..zoo import zoo_file

    tok = trained_tokenizer(cs336_data, "cl100k")
    specials = set(tok.special_tokens.values())
    found = [Tokenizer({i: t for i, t in tok.vocab.items() if i not in specials}, None, pattern="cl100k")]
    llama3 = zoo_file("llama-models", "llama_models/llama3/tokenizer.model")
    if llama3 is not None:
        found.append(load(llama3, pattern="cl100k"))
    return found


def test_the_native_merge_summary_equals_the_python_one(cs336_data: Path) -> None:
    """Under tiktoken's rule the kernel sums the merges up without handing them over; the same figures as
    the Python pass over the merges by id (and as a MergeIndex)."""
    for tok in _rank_tokenizers(cs336_data):
        native = tok._native_merge_summary()
        if tok.backend == "native":
            assert native is not None
        first = merge_summary(tok)
        tok.merge_ids()  # derived now: the Python pass is taken
        assert tok._native_merge_summary() is None
        assert merge_summary(tok) == first
        index = MergeIndex(tok)
        assert first == MergeSummary(index.merge_count, index.new_before[-1], index.deepest())


@settings(max_examples=60, deadline=None)
@given(
    lengths=st.lists(st.sampled_from([2, 3, 3, 4, 4, 4, 7]), min_size=0, max_size=40),
    specials=st.lists(st.sampled_from(["<|a|>", "<|bb|>", "<|long special token|>"]), unique=True),
    top=st.integers(0, 12),
    seed=st.randoms(use_true_random=False),
)
def test_the_longest_tokens_are_sorted_as_plainly(
    lengths: list[int], specials: list[str], top: int, seed: Any
) -> None:
    # Many tokens of each length (ties broken by id), ids not in the dict's order, special tokens among
    # the longest: the same list as sorting every token by (-length, id).
    extra = [(300 + 7 * k, bytes([97 + k % 26]) * n + k.to_bytes(2, "big")) for k, n in enumerate(lengths)]
    seed.shuffle(extra)
    vocab = {i: bytes([i]) for i in range(256)} | dict(extra)
    tok = Tokenizer(vocab, None, {s: 1000 + k for k, s in enumerate(specials)}, pattern="gpt2")
    special_ids = set(tok.special_tokens.values())
    plain = sorted(
        ((i, t) for i, t in tok.vocab.items() if i not in special_ids), key=lambda it: (-len(it[1]), it[0])
    )[:top]
    assert [t["id"] for t in describe(tok, top=top)["longest_tokens"]] == [i for i, _ in plain]
