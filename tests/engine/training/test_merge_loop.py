"""The merge loop's two start-up index builds (Python and numpy) agree, and its helpers behave."""

from __future__ import annotations

from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_studio.engine.training import merge
from bpe_studio.engine.training.merge import MergeLoop, descending_key

from ..backends import BACKENDS, use_backend

BYTES = [bytes([i]) for i in range(256)]

words = st.dictionaries(
    st.text(alphabet=st.sampled_from("aabbc \n\u00e9\u00ff\x00"), min_size=1, max_size=12).map(
        lambda s: s.encode("utf-8").decode("latin-1")
    ),
    st.integers(1, 50),
    max_size=40,
)


def _run(counts: dict[str, int], threshold: int, backend: str = "python") -> list[tuple[int, int, int, int]]:
    with mock.patch.object(merge, "_NUMPY_MIN_CHARS", threshold), use_backend(backend):
        loop = MergeLoop(dict(counts), BYTES)
        return [(m.left, m.right, m.token_id, m.count) for m in loop.run(new_tokens=30)]


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=150, deadline=None)
@given(words)
def test_numpy_and_python_index_give_the_same_merges(backend: str, counts: dict[str, int]) -> None:
    # The Python loop's two index builds, and (backend "native") the native loop, make the same merges.
    assert _run(counts, threshold=0) == _run(counts, threshold=10**12, backend=backend)


@given(st.binary(max_size=6), st.binary(max_size=6), st.binary(max_size=6), st.binary(max_size=6))
def test_descending_key_orders_pairs_in_reverse(a: bytes, b: bytes, c: bytes, d: bytes) -> None:
    forward = (a, b) < (c, d)
    backward = descending_key(a) + descending_key(b) > descending_key(c) + descending_key(d)
    assert forward == backward or (a, b) == (c, d)


@pytest.mark.parametrize("backend", BACKENDS)
def test_cancel_while_the_index_is_built_makes_no_merge(backend: str) -> None:
    calls = 0

    def cancelled() -> bool:
        nonlocal calls
        calls += 1
        return True

    counts = {"hello": 3, " world": 2, "hell": 1}
    with mock.patch.object(merge, "_NUMPY_MIN_CHARS", 0):
        loop = MergeLoop(counts, BYTES, cancelled=cancelled, backend=backend)
    assert calls == 1 and loop.stop_reason is merge.StopReason.CANCELLED
    assert list(loop.run(new_tokens=5)) == []
    assert list(loop.replay([(b"l", b"l")], [3], new_tokens=5)) == []
