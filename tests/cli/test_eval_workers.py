"""``bpe-studio eval --workers N``: the same figures, in the same order, with 1 or 2 workers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bpe_studio.cli import main
from bpe_studio.engine import TrainConfig, train
from bpe_studio.engine.formats import save_result

from ..engine.corpus.test_corpus_formats import write_as
from ..processes import live_children

pytest.importorskip("pyarrow")


def _documents(count: int, salt: str) -> list[str]:
    return [f"{salt} record {i} of the cat, naïve café\nline {i % 17} 😀" for i in range(count)]


def test_one_and_two_workers_print_the_same_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    train_text = tmp_path / "train.txt"
    train_text.write_text(" ".join(f"the cat sat{i} naïve" for i in range(400)), encoding="utf-8")
    save_result(train(TrainConfig(inputs=[train_text], vocab_size=300)), tmp_path / "mine.json")
    monkeypatch.chdir(tmp_path)  # "mine.json" is relative: the workers must find it all the same
    corpora = [
        write_as(tmp_path, _documents(300, "a"), "a.jsonl"),
        write_as(tmp_path, _documents(200, "b"), "b.txt"),
        write_as(tmp_path, _documents(250, "c"), "c.jsonl.gz"),
        write_as(tmp_path, _documents(90, "d"), "d.parquet", row_group=11),
    ]
    args = ["eval", "-t", "mine.json", "-t", "gpt2", "--json", *map(str, corpora)]
    outputs = []
    for workers in ("1", "2"):
        assert main([*args, "--workers", workers]) == 0
        outputs.append(json.loads(capsys.readouterr().out))
    assert outputs[0] == outputs[1]
    assert [(row["corpus"], row["tokenizer"]) for row in outputs[1]] == [
        (str(c), t) for c in corpora for t in ("mine.json", "gpt2")
    ]
    assert all(row["tokens"] > 0 for row in outputs[0])
    assert live_children() == []


def test_workers_must_be_at_least_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = write_as(tmp_path, _documents(3, "a"), "a.txt")
    assert main(["eval", "-t", "gpt2", "--workers", "0", str(corpus)]) == 2
    assert capsys.readouterr().err == "bpe-studio: error: --workers: 0 must be at least 1\n"
