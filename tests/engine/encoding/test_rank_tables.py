"""The Python encoder's pair -> rank table is built when the Python encoder first merges, not when a
tokenizer is made: the native encoder never needs it, and building it cost more than reading a
``tokenizer.json``. Built late, it encodes as before (a pair listed twice keeps its first rank)."""

from __future__ import annotations

import pytest

from bpe_studio.engine.encoding.tokenizer import Tokenizer
from tests.engine.backends import BACKENDS, use_backend

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
