"""Reading compressed inputs is linear: the planner scans each decompressed byte a bounded number of times,
and the "no cut place" limit applies as the bytes arrive (structure, not timing: bench/scaling_readers.py
times it)."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from bpe_studio.engine.corpus import plan as corpus
from bpe_studio.engine.corpus import sources
from bpe_studio.engine.corpus.plan import UncuttableTextError
from bpe_studio.engine.corpus.sources import BadRecordError, plan_blocks


def _count_scans(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record, for every boundary search, how many bytes it may scan (``until - pos``)."""
    spans: list[int] = []
    real = corpus._BoundaryFinder.find

    def find(self: corpus._BoundaryFinder, pos: int, *, until: int | None = None) -> tuple[int, bool] | None:
        end = self.size if until is None else until
        spans.append(max(0, end - pos))
        return real(self, pos, until=until)

    monkeypatch.setattr(corpus._BoundaryFinder, "find", find)
    return spans


@pytest.mark.parametrize("shape", [b" ", b"7", "中".encode()])
def test_a_long_stretch_without_a_cut_place_is_scanned_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shape: bytes
) -> None:
    monkeypatch.setattr(sources, "_READ", 1 << 12)  # many small decompressed pieces
    size = 1 << 20
    path = tmp_path / "c.txt.gz"
    path.write_bytes(gzip.compress(shape * (size // len(shape)) + b" end"))
    spans = _count_scans(monkeypatch)
    blocks = list(
        plan_blocks(str(path), "text", "gzip", chunk_size=1 << 10, special_tokens=[], newline_cuts=True)
    )
    assert b"".join(b.data for b in blocks) == gzip.decompress(path.read_bytes())
    # Re-scanning from the target after every 4 kB piece would scan about size**2 / 8 kB bytes.
    assert sum(spans) <= 2 * size


def test_the_uncut_limit_is_checked_while_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    limit = 1 << 20
    monkeypatch.setattr(sources, "MAX_UNCUT_BYTES", limit)
    path = tmp_path / "spaces.txt.gz"
    path.write_bytes(gzip.compress(b" " * (32 << 20)))
    read = 0
    real = sources.read_decompressed

    def counting(name: str, compression: str) -> Iterator[tuple[bytes, int]]:
        nonlocal read
        for data, consumed in real(name, compression):
            read += len(data)
            yield data, consumed

    monkeypatch.setattr(sources, "read_decompressed", counting)
    with pytest.raises(UncuttableTextError, match=r"spaces\.txt\.gz"):
        list(plan_blocks(str(path), "text", "gzip", chunk_size=1 << 16, special_tokens=[], newline_cuts=True))
    assert read <= (1 << 16) + limit + 2 * sources._READ  # refused about the limit in, not 32 MiB in


def test_a_huge_json_record_is_refused_while_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sources, "MAX_RECORD_BYTES", 1 << 20)
    monkeypatch.setattr(sources, "_READ", 1 << 12)
    path = tmp_path / "big.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"text": "a"}\n' * 3 + json.dumps({"text": "x" * (8 << 20)}).encode()))
    with pytest.raises(BadRecordError, match=r"big.jsonl.gz, line 4: the line is longer than 1 MiB"):
        list(plan_blocks(str(path), "jsonl", "gzip", chunk_size=16, special_tokens=[], newline_cuts=True))


@pytest.mark.parametrize("fmt", ["text", "jsonl"])
def test_blocks_join_to_the_file_whatever_the_piece_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    monkeypatch.setattr(sources, "_READ", 7)
    raw = "".join(json.dumps({"text": f"doc {i} 中文 x{i}y"}) + "\n" for i in range(300)).encode()
    path = tmp_path / "c.gz"
    path.write_bytes(gzip.compress(raw))
    blocks = list(
        plan_blocks(str(path), fmt, "gzip", chunk_size=50, special_tokens=["<|e|>"], newline_cuts=True)
    )
    assert b"".join(b.data for b in blocks) == raw
    assert [b.offset for b in blocks] == [sum(len(x.data) for x in blocks[:i]) for i in range(len(blocks))]
    if fmt == "jsonl":
        assert all(b.data.endswith(b"\n") for b in blocks)
        assert [b.line for b in blocks] == [1 + raw[: b.offset].count(b"\n") for b in blocks]
