"""The Python encoder's pair -> rank table is built when the Python encoder first merges, not when a
tokenizer is made: the native encoder never needs it, and building it cost more than reading a
``tokenizer.json``. Built late, it encodes as before (a pair listed twice keeps its first rank)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_studio.engine import native
from bpe_studio.engine.encoding.tokenizer import Tokenizer
from tests.engine.backends import BACKENDS, needs_native, use_backend

_BYTES = {i: bytes([i]) for i in range(256)}


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_rank_table_is_built_on_the_first_python_merge(backend: str) -> None:
    vocab = _BYTES | {256: b"ab", 257: b"bc"}
    with use_backend(backend):
        # (a, b) is listed twice: its first rank (0) wins over (b, c)'s rank 1.
        tok = Tokenizer(vocab, [(b"a", b"b"), (b"b", b"c"), (b"a", b"b")])
        assert tok._rank_table is None
        assert tok.encode("abc") == [256, 99]
        assert (tok._rank_table is None) == (backend == "native")


_TOKEN = st.binary(min_size=1, max_size=3)


@settings(deadline=None)
@given(
    extra=st.lists(_TOKEN, max_size=10),
    stray=st.lists(st.tuples(_TOKEN, _TOKEN), max_size=3),
    with_stray=st.booleans(),
)
def test_merges_by_id_are_the_same_natively_and_in_python(
    extra: list[bytes], stray: list[tuple[bytes, bytes]], with_stray: bool
) -> None:
    # Duplicate bytes (the smallest id wins), a pair listed twice, and now and then merges whose tokens
    # are missing (the message names the first).
    vocab = _BYTES | {256 + n: token for n, token in enumerate(extra)}
    merges = [(token[:1], token[1:]) for token in extra if len(token) == 2] * 2
    merges += stray if with_stray else []
    found: list[object] = []
    for backend in ("native", "python"):
        with use_backend(backend):
            try:
                found.append(Tokenizer(vocab, merges).merge_ids())
            except ValueError as exc:
                found.append(str(exc))
    assert found[0] == found[1]


@needs_native
def test_the_kernel_looks_merges_up_or_leaves_them_to_python() -> None:
    with use_backend("native"):
        ids_of = {b"a": 0, b"b": 1, b"ab": 2}
        assert native.merge_ids(((b"a", b"b"),), ids_of) == [(0, 1, 2)]
        assert native.merge_ids(((b"a", b"a"),), ids_of) is None
        assert native.merge_ids(((b"a", "b"),), ids_of) is None  # type: ignore[arg-type]
