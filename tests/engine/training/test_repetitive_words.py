"""Long repetitive pre-tokens (issue 9, item 5): exact against the reference, and indexed once per word.

A run like ``"=" * 200_000`` is a single pre-token holding the same pair 100 000 times; the merge loop must
list such a word once per pair (not once per occurrence, which made training quadratic) and still merge
overlapping occurrences left to right exactly as the reference does (``aaa`` -> ``[aa, a]``).
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_studio.engine import TrainConfig, train
from bpe_studio.engine.training import merge
from bpe_studio.engine.training.merge import MergeLoop

from ..backends import BACKENDS, use_backend
from ..reference import merge_word, reference_train

BYTES = [bytes([i]) for i in range(256)]
ENDOFTEXT = "<|endoftext|>"


@st.composite
def repetitive_word(draw: st.DrawFn) -> str:
    """One long word: x * n, (ab) * n, or random letters over a 1-4 letter alphabet."""
    kind = draw(st.sampled_from(["run", "period", "random"]))
    # Letters form one pre-token under every pattern used here; "=" and "-" runs one under GPT-2's.
    letters = draw(st.sampled_from(["abcd", "xyz", "=-", "é日"]))
    if kind == "run":
        return draw(st.sampled_from(letters)) * draw(st.integers(2, 3000))
    if kind == "period":
        unit = "".join(draw(st.lists(st.sampled_from(letters), min_size=2, max_size=3)))
        return unit * draw(st.integers(1, 1000))
    alphabet = letters[: draw(st.integers(1, len(letters)))]
    seed = draw(st.integers(0, 2**32 - 1))
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(draw(st.integers(2, 2000))))


@st.composite
def corpus(draw: st.DrawFn) -> tuple[str, tuple[str, ...]]:
    """Long repetitive words mixed with ordinary words, separated by spaces, newlines or a special token."""
    specials = draw(st.sampled_from([(), (ENDOFTEXT,), ("aa",)]))
    piece = st.one_of(
        repetitive_word(),
        st.sampled_from(["the", "cat", "aab", "abab", "==", "日本", "a", "b"]),
    )
    separators = st.sampled_from([" ", "\n", " ", *specials])
    parts = draw(st.lists(st.tuples(piece, separators), min_size=1, max_size=6))
    return "".join(word + sep for word, sep in parts), specials


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpus(), st.sampled_from([0, 5, 40, 120]), st.sampled_from([None, None, 3, 8]))
def test_long_repetitive_words_match_the_reference(
    backend: str, sample: tuple[str, tuple[str, ...]], extra: int, max_len: int | None
) -> None:
    text, specials = sample
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "c.txt"
        path.write_text(text, encoding="utf-8")
        size = 256 + len(specials) + extra
        ref = reference_train([path], size, specials, max_token_length=max_len)
        config = TrainConfig(
            inputs=(path,), vocab_size=size, special_tokens=specials, workers=1, max_token_length=max_len
        )
        with use_backend(backend):
            result = train(config)
    assert result.merges == ref.merges
    assert result.merge_counts == ref.merge_counts
    assert result.vocab == ref.vocab
    assert result.stop_reason.value == ref.stop_reason


def _merges(
    counts: dict[str, int], *, numpy_index: bool, new_tokens: int, backend: str = "python"
) -> list[tuple[int, int, int, int]]:
    threshold = 0 if numpy_index else 10**12
    with mock.patch.object(merge, "_NUMPY_MIN_CHARS", threshold), use_backend(backend):
        loop = MergeLoop(dict(counts), BYTES)
        return [(m.left, m.right, m.token_id, m.count) for m in loop.run(new_tokens=new_tokens)]


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(repetitive_word(), st.integers(1, 9)), min_size=1, max_size=4))
def test_numpy_and_python_index_agree_on_repetitive_words(backend: str, words: list[tuple[str, int]]) -> None:
    # The Python loop's two index builds, and (backend "native") the native loop, make the same merges.
    counts: dict[str, int] = {}
    for word, n in words:
        latin = word.encode("utf-8").decode("latin-1")
        counts[latin] = counts.get(latin, 0) + n
    with_numpy = _merges(counts, numpy_index=True, new_tokens=40)
    assert with_numpy == _merges(counts, numpy_index=False, new_tokens=40, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_overlapping_matches_merge_left_to_right(backend: str) -> None:
    # "aaaaa": (a, a) merges at 0 and 2, leaving [aa, aa, a], as the reference's merge_word does.
    assert merge_word((b"a",) * 5, (b"a", b"a")) == (b"aa", b"aa", b"a")
    with use_backend(backend):
        loop = MergeLoop({"aaaaa": 1}, BYTES)
    made = [(loop.token_bytes[m.left], loop.token_bytes[m.right], m.count) for m in loop.run(new_tokens=3)]
    assert made == [(b"a", b"a", 4), (b"aa", b"aa", 1), (b"aaaa", b"a", 1)]


def _index_sizes(loop: MergeLoop) -> dict[str, int]:
    engine = loop._engine
    assert isinstance(engine, merge.PythonMerges)
    return {pair: len(words) for pair, words in engine._where.items()}


def test_a_word_is_listed_once_per_pair_however_often_the_pair_occurs() -> None:
    # The property that makes a merge linear in the occurrences: each stale or repeated entry would cost a
    # search through the whole word, so 10 000 entries for one word made training quadratic.
    for numpy_index in (False, True):
        with mock.patch.object(merge, "_NUMPY_MIN_CHARS", 0 if numpy_index else 10**12):
            loop = MergeLoop({"a" * 10_000: 1, "ab" * 5_000: 2, "ba": 1}, BYTES, backend="python")
        assert _index_sizes(loop) == {"aa": 1, "ab": 1, "ba": 2}, numpy_index
        steps = loop.run(new_tokens=3)
        next(steps)  # (a, b) in "abab..." (count 10 000) -> c; "cccc..." now holds (c, c) 4 999 times
        assert max(_index_sizes(loop).values()) <= 2
        next(steps)
        next(steps)
        assert max(_index_sizes(loop).values()) <= 2
