"""The Train tab's progress for a run that extends a tokenizer (issue 23): the bar counts the new merges of
the new total, the table and the charts number them after the tokenizer's own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QWidget

from bpe_studio.engine import MergeMade, Phase, PhaseStarted, Tokenizer, TrainConfig, extend_base
from bpe_studio.ui.train.progress import TrainProgress


def test_an_extend_runs_bar_counts_its_new_merges(qtbot: Any, tmp_path: Path) -> None:
    base = extend_base(Tokenizer({i: bytes([i]) for i in range(256)} | {256: b"ab"}, [(b"a", b"b")]))
    parent = QWidget()
    qtbot.addWidget(parent)
    progress = TrainProgress(parent)
    config = TrainConfig(inputs=(tmp_path / "c.txt",), vocab_size=260, extend=base)
    progress.begin(config)
    progress.add_events([PhaseStarted(Phase.MERGING, 0.1)])
    progress.add_events([MergeMade(0, (b"ab", b"c"), 5, 257, b"abc", 3, 0.2)])
    progress._on_refresh_timer_timeout()  # (the refresh timer's tick)
    progress._flush_table()
    assert progress.progress_bar.text() == "1 of 3 new merges"
    model = progress.merges_model
    assert model.data(model.index(0, 0)) == "2"  # after the tokenizer's one merge
    assert progress.charts.first_merge == 1
    progress.stop()
