"""A corpus file that changes between planning and the end of counting stops the run with an error.

The change is made deterministically: ``plan_chunks`` is wrapped so that the file is truncated, grown or
rewritten right after the plan is made, before any chunk is counted.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest

from bpe_studio.cli import main
from bpe_studio.engine import CorpusChangedError, TrainConfig, train
from bpe_studio.engine.corpus.distributed import count_range
from bpe_studio.engine.corpus.plan import Chunk, plan_chunks
from bpe_studio.engine.training import trainer as trainer_module

ENDOFTEXT = "<|endoftext|>"


def _corpus(path: Path) -> Path:
    path.write_text(ENDOFTEXT.join(f"doc {i}: the cat sat on the mat.\n" for i in range(300)), "utf-8")
    return path


def _truncate(path: Path) -> None:
    os.truncate(path, path.stat().st_size // 2)


def _grow(path: Path) -> None:
    with open(path, "ab") as handle:
        handle.write(b"one more document at the end\n")


def _rewrite_same_size(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data.upper())
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))  # a clock that moved on


CHANGES = {"truncated": _truncate, "grown": _grow, "rewritten": _rewrite_same_size}


def _change_after_planning(monkeypatch: pytest.MonkeyPatch, change: Callable[[Path], None]) -> list[int]:
    calls: list[int] = []

    def plan_then_change(paths: Any, **options: Any) -> list[Chunk]:
        chunks = plan_chunks(paths, **options)
        for path in paths:
            change(Path(path))
        calls.append(len(chunks))
        return chunks

    monkeypatch.setattr(trainer_module, "plan_chunks", plan_then_change)
    return calls


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("kind", sorted(CHANGES))
def test_a_file_changed_after_planning_stops_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, workers: int
) -> None:
    corpus = _corpus(tmp_path / "corpus.txt")
    calls = _change_after_planning(monkeypatch, CHANGES[kind])
    config = TrainConfig(
        inputs=[corpus], vocab_size=300, special_tokens=(ENDOFTEXT,), workers=workers, chunk_size=500
    )
    with pytest.raises(CorpusChangedError) as caught:
        train(config)
    assert calls and calls[0] > 1  # several chunks were planned
    assert caught.value.path == str(corpus)
    assert "corpus.txt changed while it was being read" in str(caught.value)
    assert str(pickle.loads(pickle.dumps(caught.value))) == str(caught.value)  # crosses processes
    assert psutil.Process().children(recursive=True) == []


def test_an_unchanged_corpus_still_trains(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = _corpus(tmp_path / "corpus.txt")
    _change_after_planning(monkeypatch, lambda path: None)
    result = train(TrainConfig(inputs=[corpus], vocab_size=300, special_tokens=(ENDOFTEXT,), chunk_size=500))
    assert result.stats.documents == 300


def test_the_cli_exits_1_naming_the_file_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = _corpus(tmp_path / "corpus.txt")
    _change_after_planning(monkeypatch, _truncate)
    out, counts = tmp_path / "out", tmp_path / "c.counts"
    code = main(
        [
            "train",
            str(corpus),
            "--vocab-size",
            "300",
            "--special-token",
            ENDOFTEXT,
            "--workers",
            "2",
            "--counts-out",
            str(counts),
            "--out",
            str(out),
            "--progress",
            "none",
        ]
    )
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("bpe-studio: error: ") and err.count("\n") == 1
    assert f"{corpus} changed while it was being read" in err
    assert "Traceback" not in err
    assert not counts.exists()
    assert not (out / "tokenizer.json").exists()
    assert psutil.Process().children(recursive=True) == []


def test_a_cluster_task_reports_a_file_that_shrank(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus.txt")
    planned = Chunk(str(corpus), 0, corpus.stat().st_size, False)
    _truncate(corpus)
    result = count_range(
        planned,
        chunk_size=300,
        pattern="gpt2",
        special_tokens=(ENDOFTEXT,),
        policy="error",
        newline_cuts=True,
    )
    assert result[0] == "changed" and result[1] == str(corpus)
