"""A chunk's bytes are checked, split on the special tokens and counted natively (``CountTable.add_bytes``,
issue 22: decoding and splitting in Python held the GIL, one counting thread at a time). The counts and
totals equal those of the text decoded and counted as before, for any bytes, specials and policy."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_studio.engine.config import InvalidUtf8Policy
from bpe_studio.engine.corpus.plan import Chunk, CorpusDecodeError
from bpe_studio.engine.training.counter import ChunkCounter

from ..backends import needs_native

pytestmark = needs_native

_PIECES = [b"<|e|>", b"<|e|><|e|>", b"<|e", b"|>", b"<a>", b"<a><a>", b"aa", b" ", b"\n", b"x y", b"'s",
           "é中🙃".encode(), b"\xff", b"\xc3", b"\xed\xa0\x80", b"123"]  # fmt: skip
chunks = st.lists(st.one_of(st.sampled_from(_PIECES), st.binary(max_size=4)), max_size=25).map(b"".join)
specials_sets = st.sampled_from(
    [[], ["<|e|>"], ["<a>", "<a><a>"], ["aa", "aaa", "<|e|>"], ["é中"], ["", "aa"]]
)


def _both(specials: list[str], policy: InvalidUtf8Policy) -> tuple[ChunkCounter, ChunkCounter]:
    return tuple(  # type: ignore[return-value]
        ChunkCounter(pattern=p, special_tokens=specials, policy=policy) for p in ("gpt2", "gpt2")
    )


def _state(counter: ChunkCounter) -> tuple[Any, ...]:
    t = counter.totals
    return counter.counts, t.documents, t.special_tokens, t.pretokens


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=chunks, specials=specials_sets, continues=st.booleans(), replace=st.booleans())
def test_bytes_count_as_the_decoded_text(
    raw: bytes, specials: list[str], continues: bool, replace: bool
) -> None:
    policy = InvalidUtf8Policy.REPLACE if replace else InvalidUtf8Policy.ERROR
    native, reference = _both(specials, policy)
    assert native.table is not None
    chunk = Chunk("c.txt", 10, 10 + len(raw), continues)
    try:
        text = raw.decode("utf-8", errors="replace" if replace else "strict")
    except UnicodeDecodeError as exc:
        with pytest.raises(CorpusDecodeError) as raised:
            native.count_chunk(chunk, raw)
        assert raised.value.offset == 10 + exc.start
        return
    native.count_chunk(chunk, raw)
    reference.count_text(text, continues_document=continues)
    assert _state(native) == _state(reference)


def test_a_utf8_chunk_is_split_natively(monkeypatch: pytest.MonkeyPatch) -> None:
    counter = ChunkCounter(pattern="gpt2", special_tokens=["<|e|>"], policy=InvalidUtf8Policy.ERROR)

    class Refuse:
        def split(self, text: str) -> list[str]:
            raise AssertionError("split in Python")

    monkeypatch.setattr(counter, "_special_re", Refuse())
    raw = "a b<|e|>é 中<|e|>".encode()
    counter.count_chunk(Chunk("c.txt", 0, len(raw), False), raw)
    assert counter.counts == {"a": 1, " b": 1, "é": 1, " 中": 1}
    assert (counter.totals.documents, counter.totals.special_tokens, counter.totals.pretokens) == (2, 2, 4)
