"""Counts files from anyone (issue 9, items 6 and 14): no decompression bomb, no impossible values.

The checksums of a counts file are unkeyed, so a crafted file carries valid ones: every file here is forged
with correct CRC and BLAKE2b digests, and must still be refused by what it declares, with bounded memory.
"""

from __future__ import annotations

import hashlib
import json
import tracemalloc
import zlib
from array import array
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from bpe_studio.engine import CountsFileError, TrainConfig, train
from bpe_studio.engine.training import checkpoint as ck
from bpe_studio.engine.training.counter import CountTotals

HUGE = 256 * 1024 * 1024  # what the bombs inflate to: far more than the test lets the loader allocate
PEAK_LIMIT = 32 * 1024 * 1024


def _genuine(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the cat sat on the mat, the cat ate. " * 20, encoding="utf-8")
    out = tmp_path / "genuine.counts"
    train(TrainConfig(inputs=(corpus,), vocab_size=260, counts_out=out))
    return out


def _header_of(path: Path) -> dict[str, Any]:
    data = path.read_bytes()
    length, _ = ck._LENGTH.unpack_from(data, len(ck.MAGIC))
    start = len(ck.MAGIC) + ck._LENGTH.size
    head: dict[str, Any] = json.loads(data[start : start + length])
    return head


def _forge(path: Path, head: dict[str, Any], sections: list[tuple[str, int, bytes]]) -> Path:
    """Write a file in the counts layout with correct checksums, as anyone can."""
    head = {**head, "sections": [{"name": n, "raw_size": r, "size": len(d)} for n, r, d in sections]}
    text = json.dumps(head).encode("utf-8")
    body = b"".join(
        [ck.MAGIC, ck._LENGTH.pack(len(text), zlib.crc32(text)), text, *(d for _, _, d in sections)]
    )
    path.write_bytes(body + hashlib.blake2b(body, digest_size=ck._DIGEST_SIZE).digest())
    return path


def _zeros_stream(size: int) -> bytes:
    """A zlib stream of ``size`` zero bytes, made without holding them (deflate packs ~1000:1)."""
    packer = zlib.compressobj(9)
    block = bytes(1 << 20)
    parts = [packer.compress(block) for _ in range(size // len(block))]
    return b"".join([*parts, packer.flush()])


def _table(counts: dict[bytes, int]) -> list[tuple[str, int, bytes]]:
    lengths = array("I", map(len, counts)).tobytes()
    data = b"".join(counts)
    values = array("q", counts.values()).tobytes()
    return [
        (n, len(raw), zlib.compress(raw))
        for n, raw in (("lengths", lengths), ("bytes", data), ("counts", values))
    ]


def _peak_while_loading(path: Path) -> tuple[int, CountsFileError]:
    tracemalloc.start()
    try:
        with pytest.raises(CountsFileError) as caught:
            ck.load(path)
        return tracemalloc.get_traced_memory()[1], caught.value
    finally:
        tracemalloc.stop()


def test_forged_file_is_accepted_when_honest(tmp_path: Path) -> None:
    # The forging helper itself makes loadable files: the refusals below are for what the files declare.
    head = _header_of(_genuine(tmp_path))
    head["unique_pretokens"] = 2
    head["totals"] = {**head["totals"], "documents": 1, "pretokens": 4}  # what the table holds
    path = _forge(tmp_path / "honest.counts", head, _table({b"ab": 3, b" cd": 1}))
    assert ck.load(path).counts == {"ab": 3, " cd": 1}


def test_section_inflating_past_its_declared_size_is_refused_with_bounded_memory(tmp_path: Path) -> None:
    head = _header_of(_genuine(tmp_path))
    head["unique_pretokens"] = 2
    table = _table({b"ab": 3, b" cd": 1})
    # The counts section declares its honest 16 bytes but holds a stream of 256 MB of zeros.
    bomb = [*table[:2], ("counts", 16, _zeros_stream(HUGE))]
    path = _forge(tmp_path / "bomb.counts", head, bomb)
    assert path.stat().st_size < HUGE // 500
    peak, error = _peak_while_loading(path)
    assert "section counts inflates past the 16 bytes its header declares" in str(error)
    assert str(path) in str(error)
    assert peak < PEAK_LIMIT


def test_declaring_far_more_than_the_file_can_hold_is_refused_before_inflating(tmp_path: Path) -> None:
    head = _header_of(_genuine(tmp_path))
    head["unique_pretokens"] = HUGE // 8
    stream = _zeros_stream(HUGE)  # every declared size is honest: 256 MB of counts, all zero
    bomb = [("lengths", 0, zlib.compress(b"")), ("bytes", 0, zlib.compress(b"")), ("counts", HUGE, stream)]
    path = _forge(tmp_path / "declared.counts", head, bomb)
    peak, error = _peak_while_loading(path)
    assert f"declares {HUGE:,} bytes of data in {path.stat().st_size:,} bytes" in str(error)
    assert "not written by BPE Studio" in str(error)
    assert peak < PEAK_LIMIT


def test_writer_never_writes_a_file_the_reader_refuses_for_its_ratio(tmp_path: Path) -> None:
    # Runs of one letter of every length compress ~150:1, past the reader's limit: stored uncompressed.
    counts = {"a" * k: 1 for k in range(1, 2000)}
    header = ck.CountsHeader(
        kind="counts",
        pattern="x",
        special_tokens=(),
        invalid_utf8="error",
        corpus=(),
        totals=CountTotals(1, 0, len(counts)),
        unique_pretokens=len(counts),
    )
    path = tmp_path / "runs.counts"
    ck.save_counts(path, counts, header)
    declared = sum(raw for _, raw, _ in ck.read_header(path).sections)
    assert declared <= ck.MAX_RATIO * path.stat().st_size
    assert ck.load(path).counts == counts


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({b"ab": 3, b"cd": -5}, "pre-token b'cd' has count -5; a count is at least 1"),
        ({b"ab": 0}, "pre-token b'ab' has count 0"),
        ({b"": 2, b"cd": 1}, "the table holds an empty pre-token"),
    ],
)
def test_impossible_counts_are_refused(tmp_path: Path, table: dict[bytes, int], message: str) -> None:
    head = _header_of(_genuine(tmp_path))
    head["unique_pretokens"] = len(table)
    path = _forge(tmp_path / "bad.counts", head, _table(table))
    with pytest.raises(CountsFileError, match="is corrupt") as caught:
        ck.load(path)
    assert message in str(caught.value) and str(path) in str(caught.value)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"totals": {"documents": -1, "special_tokens": 0, "pretokens": 3}}, "documents is negative (-1)"),
        ({"unique_pretokens": -2}, "unique_pretokens is negative (-2)"),
    ],
)
def test_impossible_header_values_are_refused(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    head = {**_header_of(_genuine(tmp_path)), **change}
    path = _forge(tmp_path / "bad.counts", head, _table({b"ab": 3}))
    with pytest.raises(CountsFileError, match="corrupt header") as caught:
        ck.read_header(path)
    assert message in str(caught.value)


def test_negative_section_size_is_refused(tmp_path: Path) -> None:
    path = _forge(tmp_path / "neg.counts", _header_of(_genuine(tmp_path)), _table({b"ab": 3}))
    head = _header_of(path)
    head["sections"][0]["raw_size"] = -1
    text = json.dumps(head).encode("utf-8")
    data = path.read_bytes()
    start = len(ck.MAGIC) + ck._LENGTH.size
    old_length, _ = ck._LENGTH.unpack_from(data, len(ck.MAGIC))
    body = (
        data[: len(ck.MAGIC)]
        + ck._LENGTH.pack(len(text), zlib.crc32(text))
        + text
        + data[start + old_length : -32]
    )
    path.write_bytes(body + hashlib.blake2b(body, digest_size=32).digest())
    with pytest.raises(CountsFileError, match="raw_size of section lengths is negative"):
        ck.load(path)


def test_cli_refuses_a_bomb_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bpe_studio.cli import main

    head = _header_of(_genuine(tmp_path))
    head["unique_pretokens"] = 2
    table = _table({b"ab": 3, b" cd": 1})
    path = _forge(tmp_path / "bomb.counts", head, [*table[:2], ("counts", 16, _zeros_stream(64 << 20))])
    out = tmp_path / "tok.json"
    assert main(["train", "--counts-in", str(path), "--vocab-size", "300", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bpe-studio: error:") and "inflates past" in err and "Traceback" not in err
    assert not out.exists()


def test_section_sizes_must_follow_from_the_header_before_anything_is_inflated(tmp_path: Path) -> None:
    head = _header_of(_genuine(tmp_path))
    head["unique_pretokens"] = 2
    table = _table({b"ab": 3, b" cd": 1})
    # Within the size ratio, but 2 pre-tokens have 16 bytes of counts, not 60 000.
    sections = [*table[:2], ("counts", 60_000, zlib.compress(bytes(60_000)))]
    path = _forge(tmp_path / "sizes.counts", head, sections)
    message = "section counts declares 60,000 bytes; the header's counts make it 16"
    with (
        mock.patch.object(ck, "_inflate", side_effect=AssertionError("inflated")),
        pytest.raises(CountsFileError, match=message),
    ):
        ck.load(path)
    path = _forge(tmp_path / "missing.counts", head, table[:2])
    with pytest.raises(CountsFileError, match="section counts is missing"):
        ck.load(path)


def test_a_deeply_nested_header_is_a_counts_file_error(tmp_path: Path) -> None:
    # The header's CRC is no protection: a forged `[[[[...]]]]` must not escape as RecursionError.
    text = b"[" * 100_000 + b"]" * 100_000
    path = tmp_path / "nested.counts"
    path.write_bytes(ck.MAGIC + ck._LENGTH.pack(len(text), zlib.crc32(text)) + text)
    with pytest.raises(CountsFileError, match="nested too deeply"):
        ck.read_header(path)
