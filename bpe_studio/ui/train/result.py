"""The Train tab's result: a trained tokenizer's summary, and saving it in one of the engine's formats.

:class:`TrainResultBox` shows what a run made (vocabulary, merges, why it stopped, time, corpus) and holds
the "Save tokenizer…" and "Open in Playground" buttons; :func:`ask_save_path` is the save dialog and
:func:`save_result` writes the file.

Example (in a running Qt application)::

    box = TrainResultBox()
    box.show_summary(result, min_frequency=2)
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ...engine import TrainConfig, TrainResult
from ...engine.humanize import human_bytes, human_seconds, stop_reason_text
from ...engine.write_plan import WritePlan
from ..widgets.common import Caption, VerticalScroll
from .form import base_label

#: The save dialog's filters and the engine format each one writes.
SAVE_FILTERS = {
    "BPE Studio tokenizer (*.json)": "studio",
    "Hugging Face tokenizer.json (*.json)": "hf",
    "tiktoken ranks (*.tiktoken)": "tiktoken",
    "GPT-2 vocab.json + merges.txt (a folder)": "gpt2",
}


class TrainResultBox(QGroupBox):
    """The "Result" box: a run's summary, and the buttons to save or open the trained tokenizer."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Result", parent)
        result_layout = QVBoxLayout(self)
        # The summary scrolls in a short window, the buttons below it stay in view (issue 21).
        summary = QWidget(self)
        self.summary_form = QFormLayout(summary)
        self.summary_form.setContentsMargins(0, 0, 0, 0)
        self.summary_form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)
        self.summary_labels: dict[str, QLabel] = {}
        for key, caption in (
            ("tokens", "Vocabulary"),
            ("merges", "Merges made"),
            ("stopped", "Stopped because"),
            ("time", "Time"),
            ("corpus", "Corpus"),
            ("documents", "Documents"),
            ("pretokens", "Pre-tokens"),
        ):
            value = QLabel("–", self)
            value.setWordWrap(True)
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            value.setObjectName(f"summary_{key}")
            self.summary_form.addRow(Caption(caption, self), value)
            self.summary_labels[key] = value
        result_layout.addWidget(VerticalScroll(summary, parent=self), 1)
        result_layout.addSpacing(6)
        # One above the other: side by side they made the box 285 px wide, which at 1024 px cut off the
        # merges table's header beside it (issue 21).
        result_buttons = QVBoxLayout()
        self.save_button = QPushButton("Save tokenizer…", self)
        self.open_button = QPushButton("Open in Playground", self)
        self.open_button.setToolTip("Show the trained tokenizer in the tokenizer views")
        result_buttons.addWidget(self.save_button)
        result_buttons.addWidget(self.open_button)
        result_layout.addLayout(result_buttons)
        # No fixed minimum width: its lines wrap, and its buttons set it (a fixed 300 px left the merges table
        # too narrow at 1024 px, a smaller one squeezed the buttons' text).

    def set_result(self, result: TrainResult | None, config: TrainConfig | None) -> None:
        """Show a finished run's result (saving and opening it become possible), or nothing (None)."""
        self.save_button.setEnabled(result is not None)
        self.open_button.setEnabled(result is not None)
        if result is None:
            for label in self.summary_labels.values():
                label.setText("–")
        else:
            self.show_summary(result, config)

    def show_summary(self, result: TrainResult, config: TrainConfig | None) -> None:
        """Show what a run made (also a cancelled run's, which cannot be saved)."""
        s = result.stats
        labels = self.summary_labels
        learned = len(result.vocab) - 256 - len(result.special_tokens)
        specials = len(result.special_tokens)
        labels["tokens"].setText(
            f"{len(result.vocab):,} tokens (256 bytes, {learned:,} learned, {specials} special)"
        )
        merges = f"{len(result.merges):,}"
        if result.base_merges:  # an extend run: what it added to the tokenizer it started from
            base = config.extend if config is not None else None
            name = base_label(base.source) if base is not None else "the tokenizer"
            base_tokens = len(base.vocab) if base is not None else len(result.vocab)
            labels["tokens"].setText(
                f"{len(result.vocab):,} tokens ({base_tokens:,} of {name}, "
                f"{len(result.vocab) - base_tokens:,} new)"
            )
            merges = f"{len(result.merges) - result.base_merges:,} new after {name}'s {result.base_merges:,}"
        elif result.superword_transition is not None:
            after = len(result.merges) - result.superword_transition
            merges += f" ({after:,} superword ✦)"
        labels["merges"].setText(merges)
        labels["stopped"].setText(
            stop_reason_text(result.stop_reason, min_frequency=config.min_frequency if config else None)
        )
        phases = [f"{name} {human_seconds(sec)}" for name, sec in result.timings.items() if name != "total"]
        total = result.timings.get("total")
        labels["time"].setText(
            (f"{human_seconds(total)} in all: " if total is not None else "") + ", ".join(phases)
        )
        labels["corpus"].setText(
            f"{human_bytes(s.bytes)} in {s.files} file{'s' if s.files != 1 else ''}"
            + (f", {s.special_tokens:,} special tokens" if s.special_tokens else "")
        )
        labels["documents"].setText(f"{s.documents:,}")
        labels["pretokens"].setText(f"{s.pretokens:,} ({s.unique_pretokens:,} unique)")


def ask_save_path(parent: QWidget, config: TrainConfig) -> tuple[Path, str] | None:
    """Ask where, and in which format (one filter per format), to save a tokenizer trained on ``config``.

    Returns the path and the engine's format name, or None when the dialog was cancelled.
    """
    from ..export.job import default_folder  # not the demo's hidden cache folder (a visible one instead)

    # Named after the corpus, or after the counts file or checkpoint a run without corpus files trained from.
    first = next(iter((*config.inputs, config.counts_in, config.resume)), None) or Path("tokenizer")
    start = default_folder(near=[first.parent]) / f"{first.stem}-bpe{config.vocab_size}.json"
    chosen, chosen_filter = QFileDialog.getSaveFileName(
        parent, "Save tokenizer", os.fspath(start), ";;".join(SAVE_FILTERS)
    )
    if not chosen:
        return None
    return Path(chosen), SAVE_FILTERS.get(chosen_filter, "studio")


def save_result_plan(config: TrainConfig, path: Path, fmt: str = "studio") -> WritePlan:
    """What :func:`save_result` writes for ``path`` and ``fmt`` (the format's files and their temporary
    files) and what the run read and keeps (its corpus files, counts file, the checkpoint it resumed, the
    counts and checkpoint it wrote), for :meth:`WritePlan.check` before anything is written."""
    from ...engine.formats import save_plan
    from ...engine.training.preflight import train_plan

    plan = WritePlan()
    save_plan(plan, "Save", _save_path(path, fmt), format=fmt, verify=False)
    if fmt == "gpt2":
        plan.allow_new_folder("Save")  # the format's folder, made by the save
    for what, read in train_plan(config).reads:
        plan.read(what, read)
    for name in ("counts_out", "checkpoint"):
        if (kept := getattr(config, name)) is not None:
            plan.read(f"the run's {name}", kept)
    return plan


def _save_path(path: Path, fmt: str) -> Path:
    # gpt2 writes a folder: a file name's suffix is dropped, as the save dialog offers file names.
    return path.with_suffix("") if fmt == "gpt2" and path.suffix else path


def save_result(result: TrainResult, config: TrainConfig, path: Path, fmt: str = "studio") -> Path:
    """Write a trained tokenizer in one of the engine's formats and return what to load it from.

    ``studio`` files also keep how the tokenizer was trained. ``gpt2`` writes a folder (a file name's
    suffix is dropped, as the save dialog offers file names). Every file is written atomically.

    Raises:
        ValueError: A file to write is one the run read (its corpus) or cannot be written, checked before
            any is written (:func:`save_result_plan`); or the save itself failed.
        OSError: The save failed.
    """
    from ...engine.formats import save_result as save_trained

    save_result_plan(config, path, fmt).check()
    return save_trained(result, _save_path(path, fmt), format=fmt, config=config)


__all__ = ["SAVE_FILTERS", "TrainResultBox", "ask_save_path", "save_result", "save_result_plan"]
