"""The app's training child process (bpe_studio.ui.train.process), without the GUI."""

from __future__ import annotations

from pathlib import Path

import pytest

from bpe_studio.engine import TrainConfig
from bpe_studio.ui.train.process import TrainingProcess


def test_the_child_exits_cleanly_after_each_run(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """The child used to abort at exit most times ("Fatal Python error: _enter_buffered_busy ... <stdin>"):
    its cancel watcher sat in sys.stdin's buffered reader, whose lock the interpreter's shutdown needs."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("hello world " * 200, encoding="utf-8")
    for _ in range(5):  # the race was lost about three times in four
        with TrainingProcess(TrainConfig(inputs=(corpus,), vocab_size=270)) as child:
            kinds = [kind for kind, *_payload in child.messages()]
        assert kinds[-1] == "finished"
        assert child.proc.returncode == 0
    assert "Fatal Python error" not in capfd.readouterr().err
