"""The Train tab's form: what to train on and how (corpus, vocab size, special tokens, pattern, workers...).

:class:`TrainForm` holds the corpus list with its preview, the tokenizer settings and the Start / Cancel
buttons. It checks the pattern and the cluster address as they are typed (showing the engine's message
under the field) and turns its values into a :class:`~bpe_studio.engine.TrainConfig`; the checks that read
files (:func:`~bpe_studio.engine.training.preflight.preflight`) are the Train view's, when a run starts.

Example (in a running Qt application)::

    form = TrainForm()
    form.set_corpus_files([Path("corpus.txt")])
    form.build_config().vocab_size  # 1000
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import QStringListModel, Qt, Signal, Slot
from PySide6.QtGui import QFont, QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ...engine import PATTERNS, TrainConfig
from ...engine.humanize import human_bytes, pattern_problem
from ...engine.pretokenize.patterns import preset_name
from ..app.settings import TrainSettings
from .preview import CORPUS_FILTER, CorpusPreview, CorpusScanner

_PRESET_LABELS = {
    "gpt2": "GPT-2",
    "cl100k": "cl100k (GPT-4)",
    "o200k": "o200k (GPT-4o)",
}
_CUSTOM = "custom"

#: Why Start is disabled while the corpus list is empty.
NO_CORPUS = "Add a corpus first: Add files…, drop text files on this tab, or File ▸ Open demo corpus."
#: Start's tooltip when it can run.
START_TIP = "Train a tokenizer on the corpus with these settings (Ctrl+Return)"


class TrainForm(QWidget):
    """The corpus, the tokenizer settings and the Start / Cancel buttons (the Train tab's left side).

    Start training stays disabled while there is nothing it could run (no corpus, or a setting shown in
    error); its tooltip and :attr:`start_problem` say why.

    Signals:
        corpora_chosen(object): Corpus files were added (a list of paths).
        start_problem_changed(str): Why Start cannot run changed (empty: it can).
        start_enabled_changed(bool): The Start button was enabled or disabled.
    """

    corpora_chosen = Signal(object)
    start_problem_changed = Signal(str)
    start_enabled_changed = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._pattern_error = ""
        self._cluster_error = ""
        self._running = False
        self._start_problem: str | None = None  # None until first computed, so the first update signals
        self.scanner = CorpusScanner(self)
        self.scanner.updated.connect(self._on_scanner_updated)
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 4, 0)
        layout.addWidget(self._build_corpus_box(mono), 1)  # the preview takes the height left over
        layout.addWidget(self._build_settings_box(mono))
        layout.addLayout(self._build_run_buttons())

    # ==============================================================================================
    # Layout
    # ==============================================================================================

    def _build_corpus_box(self, mono: QFont) -> QGroupBox:
        corpus_box = QGroupBox("Corpus", self)
        corpus_layout = QVBoxLayout(corpus_box)
        self.files_model = QStringListModel(self)
        self.files_view = QListView(corpus_box)
        self.files_view.setModel(self.files_model)
        self.files_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.files_view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.files_view.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.files_view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.files_view.setMaximumHeight(72)
        self.files_view.setToolTip("Corpus files (UTF-8 text). Drop files anywhere on this tab to add them.")
        corpus_layout.addWidget(self.files_view)
        file_buttons = QHBoxLayout()
        self.add_files_button = QPushButton("Add files…", corpus_box)
        self.add_files_button.clicked.connect(self.choose_corpus_files)
        self.remove_files_button = QPushButton("Remove", corpus_box)
        self.remove_files_button.clicked.connect(self._on_remove_files_button_clicked)
        self.clear_files_button = QPushButton("Clear", corpus_box)
        self.clear_files_button.clicked.connect(lambda: self.set_corpus_files([]))
        for button in (self.add_files_button, self.remove_files_button, self.clear_files_button):
            file_buttons.addWidget(button)
        file_buttons.addStretch(1)
        corpus_layout.addLayout(file_buttons)
        self.preview_label = QLabel(corpus_box)
        self.preview_label.setWordWrap(True)
        self.preview_label.setTextFormat(Qt.TextFormat.PlainText)
        corpus_layout.addWidget(self.preview_label)
        self.preview_text = QPlainTextEdit(corpus_box)
        self.preview_text.setReadOnly(True)
        self.preview_text.setFont(mono)
        self.preview_text.setPlaceholderText("The start of the first document appears here.")
        self.preview_text.setMinimumHeight(60)
        self.preview_text.setToolTip("The start of the corpus's first document")
        corpus_layout.addWidget(self.preview_text)
        return corpus_box

    def _build_settings_box(self, mono: QFont) -> QGroupBox:
        settings_box = QGroupBox("Tokenizer", self)
        form = QFormLayout(settings_box)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.vocab_spin = QSpinBox(settings_box)
        self.vocab_spin.setRange(257, 0x110000)
        self.vocab_spin.setSingleStep(1000)
        self.vocab_spin.setGroupSeparatorShown(True)
        self.vocab_spin.setToolTip(
            "Final vocabulary size, counting the 256 single bytes and the special tokens"
        )
        form.addRow("Vocab size", self.vocab_spin)
        form.addRow("Special tokens", self._build_specials(settings_box, mono))
        form.addRow("Pattern", self._build_pattern(settings_box, mono))
        self.workers_spin = QSpinBox(settings_box)
        self.workers_spin.setRange(0, max(64, os.cpu_count() or 1))
        self.workers_spin.setSpecialValueText("Auto")
        self.workers_spin.setToolTip(
            "Worker processes for counting; Auto uses one per core for corpora over 8 MB"
        )
        form.addRow("Workers", self.workers_spin)
        self.min_freq_spin = QSpinBox(settings_box)
        self.min_freq_spin.setRange(1, 2_000_000_000)
        self.min_freq_spin.setGroupSeparatorShown(True)
        self.min_freq_spin.setToolTip("Stop early when the most frequent pair occurs fewer times than this")
        form.addRow("Min frequency", self.min_freq_spin)
        self.superword_spin = QSpinBox(settings_box)
        self.superword_spin.setObjectName("superword_spin")
        self.superword_spin.setRange(0, 0x110000)
        self.superword_spin.setSingleStep(1000)
        self.superword_spin.setGroupSeparatorShown(True)
        self.superword_spin.setSpecialValueText("Off")
        self.superword_spin.setToolTip(
            "SuperBPE: train ordinary tokens up to this vocabulary size, then superword tokens that span "
            "the spaces between words up to the vocab size (Off: ordinary BPE only)"
        )
        form.addRow("Superwords after", self.superword_spin)
        form.addRow("Dask cluster", self._build_cluster(settings_box))
        return settings_box

    def _build_specials(self, parent: QWidget, mono: QFont) -> QWidget:
        specials = QWidget(parent)
        specials_layout = QHBoxLayout(specials)
        specials_layout.setContentsMargins(0, 0, 0, 0)
        self.specials_model = QStringListModel(self)
        self.specials_view = QListView(specials)
        self.specials_view.setModel(self.specials_model)
        self.specials_view.setFont(mono)
        self.specials_view.setMaximumHeight(60)
        self.specials_view.setToolTip(
            "Special tokens split documents and are never merged; double-click one to edit it"
        )
        specials_layout.addWidget(self.specials_view, 1)
        special_buttons = QVBoxLayout()
        self.add_special_button = QToolButton(specials)
        self.add_special_button.setText("+")
        self.add_special_button.setToolTip("Add a special token")
        self.add_special_button.clicked.connect(self._on_add_special_button_clicked)
        self.remove_special_button = QToolButton(specials)
        self.remove_special_button.setText("−")
        self.remove_special_button.setToolTip("Remove the selected special token")
        self.remove_special_button.clicked.connect(self._on_remove_special_button_clicked)
        special_buttons.addWidget(self.add_special_button)
        special_buttons.addWidget(self.remove_special_button)
        special_buttons.addStretch(1)
        specials_layout.addLayout(special_buttons)
        self.specials_model.dataChanged.connect(self._on_specials_model_changed)
        self.specials_model.rowsRemoved.connect(self._on_specials_model_changed)
        return specials

    def _build_pattern(self, parent: QWidget, mono: QFont) -> QWidget:
        pattern = QWidget(parent)
        pattern_layout = QVBoxLayout(pattern)
        pattern_layout.setContentsMargins(0, 0, 0, 0)
        pattern_layout.setSpacing(2)
        self.pattern_combo = QComboBox(pattern)
        for name, label in _PRESET_LABELS.items():
            self.pattern_combo.addItem(label, name)
        self.pattern_combo.addItem("Custom regex", _CUSTOM)
        self.pattern_combo.setToolTip("How text is split into pre-tokens before merging")
        self.pattern_edit = QLineEdit(pattern)
        self.pattern_edit.setFont(mono)
        self.pattern_edit.setPlaceholderText("a regex for the `regex` module")
        self.pattern_edit.setToolTip("The pre-tokenization regex; edit it to use a custom pattern")
        self.pattern_error = QLabel(pattern)
        self.pattern_error.setObjectName("error")
        self.pattern_error.setWordWrap(True)
        self.pattern_error.setVisible(False)
        pattern_layout.addWidget(self.pattern_combo)
        pattern_layout.addWidget(self.pattern_edit)
        pattern_layout.addWidget(self.pattern_error)
        self.pattern_combo.currentIndexChanged.connect(self._on_pattern_combo_changed)
        self.pattern_edit.textEdited.connect(self._on_pattern_edit_edited)
        self.pattern_edit.textChanged.connect(self._on_pattern_edit_changed)
        return pattern

    def _build_cluster(self, parent: QWidget) -> QWidget:
        # Advanced: count on a Dask cluster (issue: corpora too big for one machine). Validated as typed.
        cluster = QWidget(parent)
        cluster_layout = QVBoxLayout(cluster)
        cluster_layout.setContentsMargins(0, 0, 0, 0)
        cluster_layout.setSpacing(2)
        self.cluster_edit = QLineEdit(cluster)
        self.cluster_edit.setPlaceholderText("this machine (or local:N, tcp://host:8786)")
        self.cluster_edit.setToolTip(
            "Advanced: count pre-tokens on a Dask cluster. local:N starts N worker processes here; "
            'tcp://HOST:PORT uses a running scheduler. Needs pip install "bpe-studio[distributed]".'
        )
        self.cluster_error = QLabel(cluster)
        self.cluster_error.setObjectName("error")
        self.cluster_error.setWordWrap(True)
        self.cluster_error.setVisible(False)
        cluster_layout.addWidget(self.cluster_edit)
        cluster_layout.addWidget(self.cluster_error)
        self.cluster_edit.textChanged.connect(self._on_cluster_edit_changed)
        return cluster

    def _build_run_buttons(self) -> QHBoxLayout:
        run_buttons = QHBoxLayout()
        self.start_button = QPushButton("Start training", self)
        self.start_button.setObjectName("start")
        self.start_button.setDefault(True)
        self.cancel_button = QPushButton("Cancel", self)
        run_buttons.addWidget(self.start_button, 2)
        run_buttons.addWidget(self.cancel_button, 1)
        return run_buttons

    def set_running(self, running: bool) -> None:
        """Lock the form while a run goes on (only Cancel stays enabled); the preview's scan waits too."""
        for widget in (
            self.add_files_button,
            self.remove_files_button,
            self.clear_files_button,
            self.vocab_spin,
            self.specials_view,
            self.add_special_button,
            self.remove_special_button,
            self.pattern_combo,
            self.pattern_edit,
            self.workers_spin,
            self.min_freq_spin,
        ):
            widget.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        self._update_start(running=running)
        if running != self._running:
            self._running = running
            if running:
                self.scanner.pause()
            else:
                self.scanner.resume()

    # ==============================================================================================
    # Start: enabled only when it can run
    # ==============================================================================================

    @property
    def start_problem(self) -> str:
        """Why Start training cannot run yet, in the app's words (empty when it can)."""
        if not self.files_model.rowCount():
            return NO_CORPUS
        if self._pattern_error:
            return f"Start needs a working pattern. {self._pattern_error}"
        if self._cluster_error:
            return f"Start needs a usable Dask cluster, or none. {self._cluster_error}"
        return ""

    def _update_start(self, *, running: bool | None = None) -> None:
        """Enable Start when it can run and nothing runs; its tooltip says why it cannot."""
        problem = self.start_problem
        enabled = not problem and not (self._running if running is None else running)
        was_enabled = self.start_button.isEnabled()
        self.start_button.setEnabled(enabled)
        self.start_button.setToolTip(problem or START_TIP)
        if enabled != was_enabled:
            self.start_enabled_changed.emit(enabled)
        if problem != self._start_problem:
            self._start_problem = problem
            self.start_problem_changed.emit(problem)

    # ==============================================================================================
    # Corpus
    # ==============================================================================================

    def corpus_files(self) -> list[Path]:
        """The corpus files in the list."""
        return [Path(p) for p in self.files_model.stringList()]

    def set_corpus_files(self, paths: Sequence[Path]) -> None:
        """Replace the corpus files."""
        self.files_model.setStringList([os.fspath(p) for p in paths])
        self._update_preview()

    def add_corpus_files(self, paths: Sequence[Path]) -> None:
        """Add corpus files (ones already listed are not repeated)."""
        current = self.files_model.stringList()
        added = [os.fspath(p) for p in paths if os.fspath(p) not in current]
        if added:
            self.files_model.setStringList(current + added)
            self._update_preview()
            self.corpora_chosen.emit([Path(p) for p in added])

    @Slot()
    def choose_corpus_files(self) -> None:
        """Ask for corpus files with a file dialog."""
        start = os.path.dirname(self.files_model.stringList()[-1]) if self.files_model.rowCount() else ""
        paths, _ = QFileDialog.getOpenFileNames(self, "Add corpus files", start, CORPUS_FILTER)
        if paths:
            self.add_corpus_files([Path(p) for p in paths])

    @Slot()
    def _on_remove_files_button_clicked(self) -> None:
        rows = sorted({index.row() for index in self.files_view.selectedIndexes()}, reverse=True)
        for row in rows:
            self.files_model.removeRow(row)
        if rows:
            self._update_preview()

    def _update_preview(self) -> None:
        self._update_start()
        self.scanner.start(self.corpus_files(), self.special_tokens())
        if self._running:
            self.scanner.pause()

    @Slot(object)
    def _on_scanner_updated(self, preview: CorpusPreview) -> None:
        files = len(preview.files)
        if not files:
            self.preview_label.setText("No corpus yet: add text files, or drop them here.")
            self.preview_text.setPlainText("")
            return
        parts = [f"{human_bytes(preview.total_bytes)} in {files} file{'s' if files != 1 else ''}"]
        if not self.special_tokens():
            parts.append("no special tokens set")
        elif preview.special_tokens is None:
            share = preview.scanned_bytes / max(preview.total_bytes, 1)
            parts.append(f"counting special tokens… {share:.0%}")
        else:
            n = preview.special_tokens
            parts.append(f"{n:,} special token{'s' if n != 1 else ''}")
        self.preview_label.setText(" · ".join(parts))
        if preview.head_problem:
            self.preview_text.setPlainText(f"⚠ {preview.head_problem}")
        else:
            self.preview_text.setPlainText(preview.head + (" …" if preview.head_truncated else ""))

    # ==============================================================================================
    # Special tokens
    # ==============================================================================================

    def special_tokens(self) -> list[str]:
        """The special tokens in the list."""
        return list(self.specials_model.stringList())

    @Slot()
    def _on_add_special_button_clicked(self) -> None:
        row = self.specials_model.rowCount()
        self.specials_model.insertRow(row)
        index = self.specials_model.index(row, 0)
        self.specials_model.setData(index, "<|special|>")
        self.specials_view.setCurrentIndex(index)
        self.specials_view.edit(index)

    @Slot()
    def _on_remove_special_button_clicked(self) -> None:
        index = self.specials_view.currentIndex()
        if index.isValid():
            self.specials_model.removeRow(index.row())

    @Slot()
    def _on_specials_model_changed(self, *_args: Any) -> None:
        self._update_preview()

    # ==============================================================================================
    # Pattern and cluster, checked as they are typed
    # ==============================================================================================

    def pattern(self) -> str:
        """The pattern to train with: a preset's name, or the custom regex."""
        name = self.pattern_combo.currentData()
        return self.pattern_edit.text() if name == _CUSTOM else str(name)

    def set_pattern(self, pattern: str) -> None:
        """Show a preset (by name or regex) or a custom regex."""
        name = preset_name(pattern) or _CUSTOM
        self.pattern_combo.blockSignals(True)
        self.pattern_combo.setCurrentIndex(self.pattern_combo.findData(name))
        self.pattern_combo.blockSignals(False)
        self.pattern_edit.setText(PATTERNS[name] if name != _CUSTOM else pattern)
        self.pattern_edit.setCursorPosition(0)

    @property
    def pattern_problem(self) -> str:
        """The inline pattern error shown, or empty when the pattern is valid."""
        return self._pattern_error

    @Slot(int)
    def _on_pattern_combo_changed(self, _index: int) -> None:
        name = self.pattern_combo.currentData()
        if name != _CUSTOM:
            self.pattern_edit.setText(PATTERNS[name])
            self.pattern_edit.setCursorPosition(0)
        else:
            self.pattern_edit.setFocus()

    @Slot(str)
    def _on_pattern_edit_edited(self, text: str) -> None:
        # Editing a preset's regex makes it a custom pattern (and typing a preset's regex selects it).
        name = preset_name(text) or _CUSTOM
        if name != self.pattern_combo.currentData():
            self.pattern_combo.blockSignals(True)
            self.pattern_combo.setCurrentIndex(self.pattern_combo.findData(name))
            self.pattern_combo.blockSignals(False)

    @Slot(str)
    def _on_pattern_edit_changed(self, text: str) -> None:
        """Validate the pattern as it is typed (the engine's checks) and say what is wrong under it."""
        message = pattern_problem(text)
        self._pattern_error = message
        self.pattern_error.setText(message)
        self.pattern_error.setVisible(bool(message))
        self.pattern_edit.setProperty("invalid", bool(message))
        self.pattern_edit.style().unpolish(self.pattern_edit)
        self.pattern_edit.style().polish(self.pattern_edit)
        self._update_start()

    def cluster(self) -> str | None:
        """The Dask cluster address typed in the advanced setting, or None for this machine."""
        return self.cluster_edit.text().strip() or None

    @Slot(str)
    def _on_cluster_edit_changed(self, text: str) -> None:
        """Check the cluster address as it is typed; show what is accepted, or how to install Dask."""
        from ...engine.corpus.distributed import dask_missing, parse_cluster

        message = ""
        if text.strip():
            try:
                parse_cluster(text)
            except ValueError as exc:
                message = str(exc)
            else:
                message = dask_missing() or ""
        self._cluster_error = message
        self.cluster_error.setText(message)
        self.cluster_error.setVisible(bool(message))
        self._update_start()

    # ==============================================================================================
    # Values
    # ==============================================================================================

    def form_settings(self) -> TrainSettings:
        """The form's values, for the settings file."""
        workers = self.workers_spin.value()
        return TrainSettings(
            inputs=[os.fspath(p) for p in self.corpus_files()],
            vocab_size=self.vocab_spin.value(),
            special_tokens=self.special_tokens(),
            pattern=self.pattern(),
            workers=workers or None,
            min_frequency=self.min_freq_spin.value(),
            cluster=self.cluster() or "",
        )

    def apply_settings(self, train: TrainSettings) -> None:
        """Fill the form (corpus files that no longer exist are left out)."""
        spin = self.vocab_spin
        spin.setValue(max(spin.minimum(), min(train.vocab_size, spin.maximum())))
        self.specials_model.blockSignals(True)
        self.specials_model.setStringList(list(train.special_tokens))
        self.specials_model.blockSignals(False)
        self.specials_view.reset()
        self.set_pattern(train.pattern)
        self.workers_spin.setValue(min(train.workers or 0, self.workers_spin.maximum()))
        self.min_freq_spin.setValue(train.min_frequency)
        self.cluster_edit.setText(train.cluster)
        self.set_corpus_files([Path(p) for p in train.inputs if Path(p).is_file()])

    def build_config(self) -> TrainConfig:
        """The training configuration of the form; raises ``ValueError`` (naming the field) when invalid."""
        workers = self.workers_spin.value()
        return TrainConfig(
            inputs=tuple(self.corpus_files()),
            vocab_size=self.vocab_spin.value(),
            special_tokens=tuple(self.special_tokens()),
            pattern=self.pattern(),
            workers=workers or None,
            min_frequency=self.min_freq_spin.value(),
            cluster=self.cluster(),
            superword_transition=self.superword_spin.value() or None,
        )


__all__ = ["NO_CORPUS", "START_TIP", "TrainForm"]
