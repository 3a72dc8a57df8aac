"""The corpus preview shows the first record's text for JSON Lines, Parquet and compressed files."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from bpe_studio.ui.train.preview import CORPUS_FILTER, read_head

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


def test_the_first_record_is_shown(tmp_path: Path) -> None:
    lines = [json.dumps({"id": 0}), json.dumps({"text": "  "}), json.dumps({"text": "first words"})]
    jsonl = tmp_path / "a.jsonl.gz"
    jsonl.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    assert read_head([jsonl], []) == ("first words", False, "")
    parquet = tmp_path / "b.parquet"
    pq.write_table(pa.table({"text": ["x" * 700, "y"]}), parquet)
    head, more, problem = read_head([parquet], [])
    assert head == "x" * 600 and more and problem == ""
    text = tmp_path / "c.txt.gz"
    text.write_bytes(gzip.compress(b"plain words<|endoftext|>more"))
    assert read_head([text], ["<|endoftext|>"])[0] == "plain words<|endoftext|>more"


def test_a_damaged_file_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    bad = tmp_path / "a.jsonl.gz"
    bad.write_bytes(gzip.compress(b'{"text": "x"}\n' * 100)[:30])
    head, _, problem = read_head([bad], [])
    assert head == "" and "a.jsonl.gz" in problem


def test_the_picker_offers_the_new_suffixes() -> None:
    for suffix in ("*.jsonl", "*.ndjson", "*.parquet", "*.gz", "*.bz2", "*.xz", "*.zst", "*.txt"):
        assert suffix in CORPUS_FILTER
