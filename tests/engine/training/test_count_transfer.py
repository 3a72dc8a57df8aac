"""How a counting worker hands its table back: one frame of numbers and text (no pickle), read back into the
merge loop's latin-1 keys exactly, and refused when it is not what it declares."""

from __future__ import annotations

import io
from pathlib import Path

import psutil
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpe_studio.engine.config import InvalidUtf8Policy
from bpe_studio.engine.corpus.plan import plan_chunks
from bpe_studio.engine.training.counting import CountOutcome, count_parallel, count_serial
from bpe_studio.engine.workers.protocol import decode_table, encode_table, read_frame, write_frame

# Any text a pre-token can hold once decoded: every plane, NUL, and no lone surrogates (UTF-8 has none).
keys = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
tables = st.dictionaries(keys, st.integers(min_value=0, max_value=2**63 - 1), max_size=30)


def byte_keyed(table: dict[str, int]) -> dict[str, int]:
    """The form the merge loop starts from, spelled the slow way (see ChunkCounter.byte_counts)."""
    return {token.encode("utf-8").decode("latin-1"): n for token, n in table.items()}


@given(tables)
def test_a_table_comes_back_keyed_by_its_bytes(table: dict[str, int]) -> None:
    assert decode_table(encode_table(table)) == byte_keyed(table)


@pytest.mark.parametrize(
    "table", [{}, {"": 3}, {"\0": 1}, {"a\0b": 2, "c": 5}, {"\0": 1, "": 2}, {"日本": 7, " the": 1}]
)
def test_edge_tables_come_back(table: dict[str, int]) -> None:
    assert decode_table(encode_table(table)) == byte_keyed(table)


@pytest.mark.parametrize("table", [{"a": 1, "bc": 2}, {"a\0": 1, "bc": 2}])
def test_a_frame_that_is_not_what_it_declares_is_refused(table: dict[str, int]) -> None:
    frame = encode_table(table)
    for broken in (frame[:-1], frame + b"\0", frame[:5]):
        with pytest.raises(ValueError, match="count table frame"):
            decode_table(broken)


def test_a_frame_longer_than_announced_is_refused() -> None:
    stream = io.BytesIO()
    write_frame(stream, b"x" * 100)
    stream.seek(0)
    with pytest.raises(ValueError, match="more than the 10 announced"):
        read_frame(stream, 10)
    stream.seek(0)
    assert read_frame(stream, 100) == b"x" * 100


def test_two_workers_count_what_one_process_counts(tmp_path: Path) -> None:
    # NUL, non-ASCII and CJK pre-tokens cross the pipe; small chunks give each worker several.
    corpus = tmp_path / "c.txt"
    corpus.write_text(("a\0b café 日本語 it's 12 \0\0 x<|endoftext|>" * 400), encoding="utf-8")
    options = {
        "pattern": "gpt2",
        "special_tokens": ["<|endoftext|>"],
        "policy": InvalidUtf8Policy.ERROR,
        "cancelled": lambda: False,
    }
    chunks = plan_chunks([corpus], chunk_size=1000, special_tokens=["<|endoftext|>"], newline_cuts=True)
    assert len(chunks) > 4
    serial = list(count_serial(chunks, **options))[-1]
    parallel = list(count_parallel(chunks, workers=2, **options))[-1]
    assert isinstance(serial, CountOutcome) and isinstance(parallel, CountOutcome)
    assert psutil.Process().children(recursive=True) == []  # the workers are stopped
    assert parallel.counts == serial.counts
    assert parallel.totals == serial.totals
    assert "\0" in serial.counts and " 日本語".encode().decode("latin-1") in serial.counts
