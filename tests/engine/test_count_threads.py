"""Counting into the native table (rust/src/count.rs) and counting in threads of one process: the same
counts, totals, progress and errors as the Python reference and as worker processes."""

from __future__ import annotations

from collections import Counter
from typing import Any
from unittest import mock

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_studio.engine import _native
from bpe_studio.engine import counting as counting_module
from bpe_studio.engine.config import InvalidUtf8Policy, resolve_pattern
from bpe_studio.engine.counting import (
    ChunkCounter,
    decode_table,
    encode_table,
)

from .backends import BACKENDS, needs_native, use_backend

PRESETS = ["gpt2", "cl100k", "o200k"]
ENDOFTEXT = "<|endoftext|>"
# Any decodable text: every plane, NUL, no lone surrogates.
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
keys = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
tables = st.dictionaries(keys, st.integers(min_value=-(2**63), max_value=2**63 - 1), max_size=30)


def _reference(preset: str, parts: list[str]) -> Counter[str]:
    """The Python reference: the preset's regex, counted in order of first appearance."""
    return Counter(token for part in parts for token in regex.findall(resolve_pattern(preset), part))


def _table() -> Any:
    table = _native.new_count_table()
    assert table is not None, "the native kernel is not built or is switched off"
    return table


# --- The native table -------------------------------------------------------------------------------


@needs_native
@pytest.mark.parametrize("preset", PRESETS)
@settings(max_examples=150, deadline=None)
@given(batches=st.lists(st.lists(texts, max_size=4), max_size=4))
def test_the_table_gives_the_frame_of_the_reference_counts(preset: str, batches: list[list[str]]) -> None:
    # Counted in several calls, as chunks are: the frame is byte for byte encode_table's of the reference
    # dict (same keys, counts and order), so every reader of frames reads it as before.
    with use_backend("native"):
        table = _table()
        for batch in batches:
            assert _native.count_into(table, preset, batch)
    reference = _reference(preset, [text for batch in batches for text in batch])
    assert table.to_frame() == encode_table(reference)
    assert len(table) == len(reference) and table.total == sum(reference.values())


@needs_native
@settings(max_examples=100, deadline=None)
@given(first=st.lists(texts, max_size=4), second=st.lists(texts, max_size=4))
def test_merging_tables_equals_counting_both(first: list[str], second: list[str]) -> None:
    with use_backend("native"):
        a, b = _table(), _table()
        assert _native.count_into(a, "cl100k", first) and _native.count_into(b, "cl100k", second)
        a.merge(b)
    reference = _reference("cl100k", first)
    reference.update(_reference("cl100k", second))
    assert a.to_frame() == encode_table(reference)
    assert b.to_frame() == encode_table(_reference("cl100k", second))  # the other is left as it was


@needs_native
@settings(max_examples=200, deadline=None)
@given(first=tables, second=tables)
def test_frames_are_merged_natively_as_decode_table_reads_them(
    first: dict[str, int], second: dict[str, int]
) -> None:
    # Keys with NUL (the frame's other layout), empty keys, any counts a worker could declare.
    with use_backend("native"):
        table = _table()
        table.add_frame(encode_table(first))
        table.add_frame(encode_table(second))
    expected = Counter(decode_table(encode_table(first)))
    expected.update(decode_table(encode_table(second)))
    got = decode_table(table.to_frame())
    assert got.keys() == expected.keys()
    assert all(got[k] == (expected[k] + 2**63) % 2**64 - 2**63 for k in got)  # int64, as the frame holds


@needs_native
@pytest.mark.parametrize("table", [{"a": 1, "bc": 2}, {"a\0": 1, "bc": 2}, {"bc": 1, "a": 2}])
def test_a_frame_that_is_not_what_it_declares_is_refused_and_nothing_added(table: dict[str, int]) -> None:
    frame = encode_table(table)
    header = counting_module._TABLE_HEADER
    n, size, separated = header.unpack(frame[: header.size])
    forged = [
        frame[:-1],
        frame + b"\0",
        frame[:5],
        header.pack(2**61, size, separated) + frame[header.size :],  # a huge count of keys: no allocation
        header.pack(n, 2**64 - 1, separated) + frame[header.size :],  # sizes that would wrap around
    ]
    if separated:  # one NUL more in the text: a key more than declared
        forged.append(header.pack(n, size, separated) + frame[header.size :].replace(b"bc", b"b\0", 1))
    else:  # key lengths that do not add up to the text
        lengths = header.size + size
        forged.append(frame[:lengths] + (99).to_bytes(8, "little") + frame[lengths + 8 :])
    duplicate = encode_table({"x": 1, "y": 2}).replace(b"y", b"x")
    with use_backend("native"):
        target = _table()
        assert _native.count_into(target, "gpt2", ["keep me"])
        before = target.to_frame()
        for broken in [*forged, duplicate]:
            with pytest.raises(ValueError, match="count table frame"):
                decode_table(broken)
            with pytest.raises(ValueError, match="count table frame"):
                target.add_frame(broken)
            assert target.to_frame() == before
        # Stricter than decode_table (which reads any non-zero byte as True): the flag is 0 or 1.
        with pytest.raises(ValueError, match="separator flag is 2"):
            target.add_frame(frame[:16] + b"\x02" + frame[17:])
        assert target.to_frame() == before


@needs_native
def test_a_class_table_too_small_is_grown_and_nothing_counted_twice() -> None:
    parts = ["ab 12", "x é", "𝐀𝐁 𝟏 ab"]
    with use_backend("native"), mock.patch.object(_native, "_classes", [b""]):
        table = _table()
        assert _native.count_into(table, "o200k", parts)
        assert len(_native._classes[0]) == 0x110000
    assert table.to_frame() == encode_table(_reference("o200k", parts))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("preset", PRESETS)
def test_chunk_counter_falls_back_to_python_for_a_lone_surrogate(backend: str, preset: str) -> None:
    parts = ["it's 12 ab", "a\ud800b ab", "ab!"]
    with use_backend(backend):
        counter = ChunkCounter(pattern=preset, special_tokens=["<s>"], policy=InvalidUtf8Policy.ERROR)
        counter.count_text("<s>".join(parts[:1]), continues_document=False)
        counter.count_text("<s>".join(parts[1:]), continues_document=False)
        assert counter.native_only is False
    assert counter.counts == _reference(preset, parts)
    assert counter.unique == len(_reference(preset, parts))
    assert counter.totals.pretokens == sum(_reference(preset, parts).values())


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=60, deadline=None)
@given(parts=st.lists(texts, max_size=5))
def test_chunk_counter_gives_the_same_on_both_backends(backend: str, parts: list[str]) -> None:
    with use_backend(backend):
        counter = ChunkCounter(pattern="gpt2", special_tokens=["<s>"], policy=InvalidUtf8Policy.ERROR)
        for part in parts:
            counter.count_text(part, continues_document=False)
        assert (counter.table is not None) == (backend == "native")
    reference = _reference("gpt2", [p for part in parts for p in part.split("<s>")])
    assert counter.counts == reference
    assert counter.unique == len(reference)
    assert decode_table(counter.frame()) == counter.byte_counts()
    assert counter.byte_counts() == {k.encode().decode("latin-1"): n for k, n in reference.items()}
