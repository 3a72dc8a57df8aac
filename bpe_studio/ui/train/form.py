"""The Train tab's form: what to train on and how (corpus, what to start from, vocab size, special tokens,
pattern, and under "More options" every other option of ``bpe-studio train``).

"Start from" is the single bytes or a tokenizer to extend (``train --extend``: GPT-2, a recent tokenizer or a
file). The tokenizer is opened on a :class:`~bpe_studio.ui.app.tasks.TaskRunner` thread (GPT-2 takes over
half a second); the configuration then carries it (``TrainConfig(extend=...)``, sent to the training process
as its source and opened there again), the form shows its pattern and special tokens, locked, and asks for
a vocab size above its own.

:class:`TrainForm` holds the corpus list with its preview, the tokenizer settings and the Start / Cancel
buttons. It checks itself as it is edited, with the engine's own checks: the pattern and the cluster
address as they are typed, and, a moment after any change, the whole configuration
(:class:`~bpe_studio.engine.TrainConfig`) and what a run needs from the files
(:func:`~bpe_studio.engine.training.preflight.preflight`,
:func:`~bpe_studio.engine.training.preflight.check_text_starts`, and the text field against the records
of JSON Lines and Parquet files, :func:`~bpe_studio.engine.corpus.sources.record_fields`). A problem is
shown beside its control and keeps Start disabled, its tooltip saying why.

Example (in a running Qt application)::

    form = TrainForm()
    form.set_corpus_files([Path("corpus.txt")])
    form.build_config().vocab_size  # 1000
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import QStringListModel, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QFont, QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGridLayout,
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

from ...engine import PATTERNS, TrainConfig, extend_base
from ...engine.config import InvalidUtf8Policy
from ...engine.corpus.sources import expand_inputs, is_plain_text, record_fields
from ...engine.humanize import FIELD_LABELS, app_message, human_bytes, pattern_problem
from ...engine.pretokenize.patterns import preset_name
from ...engine.training.extend import ExtendBase, with_base
from ...engine.training.preflight import check_text_starts, preflight
from ..app.settings import TrainSettings
from ..app.tasks import TaskContext, TaskRunner
from ..app.tokenizer_views import TOKENIZER_FILTER
from ..widgets.common import VerticalScroll, delay_timer
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
#: Milliseconds between an edit and the checks that read files (a burst of edits is checked once).
CHECK_DELAY_MS = 150
#: The counts-file filter of the file dialogs.
COUNTS_FILTER = "Counts and checkpoints (*.counts *.ckpt *.bin);;All files (*)"
#: The invalid-UTF-8 choices: the engine's policy and what the combo says.
_UTF8_CHOICES = (("error", "Stop with an error"), ("replace", "Read as U+FFFD (�)"))

#: "Start from": the built-in tokenizers offered (their name for ``extend_base``, and the combo's text).
_BUILT_IN_BASES = (("gpt2", "GPT-2 (built in)"),)
#: The "Start from" combo's entry that asks for a file.
_CHOOSE_BASE = "\x00choose"
#: New tokens proposed when a base raises the vocab size (it counts the base's tokens too).
_NEW_TOKENS = 1000
#: Why a control shows the base's value and cannot be edited.
_FROM_BASE_TIP = "From the tokenizer this run starts from ({name}): an extended tokenizer keeps its {what}"

#: The record files whose fields are read for the text field's list (the first ones of the corpus).
_FIELD_FILES = 8
#: A file's identity for the caches: path, size and modification time.
_Key = tuple[str, int, int]


def _file_key(path: Path) -> _Key | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (os.fspath(path), info.st_size, info.st_mtime_ns)


def _error_label(parent: QWidget) -> QLabel:
    """A hidden label for the problem of the control above it (styled by its object name, ``error``)."""
    label = QLabel(parent)
    label.setObjectName("error")
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setVisible(False)
    return label


def _stacked(parent: QWidget, *widgets: QWidget) -> QWidget:
    """The widgets one above the other, with no margins (a control and its problem label)."""
    box = QWidget(parent)
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(2)
    for widget in widgets:
        layout.addWidget(widget)
    return box


def _inline(message: str) -> str:
    """An engine message (``field: problem; fix``) as said beside its control: without the field's name."""
    field, sep, rest = message.partition(": ")
    return app_message(rest) if sep and field in FIELD_LABELS else app_message(message)


def base_label(source: str) -> str:
    """A tokenizer to extend as the app names it: a built-in one by its name, a file by its file name.

    Example:
        >>> base_label("gpt2"), base_label("/models/mine.tiktoken")
        ('GPT-2', 'mine.tiktoken')
    """
    return dict(_BUILT_IN_BASES).get(source, Path(source).name).replace(" (built in)", "")


def _open_base(_ctx: TaskContext, source: str) -> ExtendBase:
    """The task that opens "Start from"'s tokenizer (off the GUI thread)."""
    return extend_base(source)


def whitespace_specials(tokens: Sequence[str]) -> list[str]:
    """The special tokens that are only whitespace: legal, but every such run of the corpus becomes one.

    Example:
        >>> whitespace_specials(["<|endoftext|>", " ", "\\n\\n"])
        [' ', '\\n\\n']
    """
    return [token for token in tokens if token and token.isspace()]


class TrainForm(QWidget):
    """The corpus, the tokenizer settings and the Start / Cancel buttons (the Train tab's left side).

    Start training stays disabled while there is nothing it could run (no corpus, or a setting shown in
    error); its tooltip and :attr:`start_problem` say why.

    Signals:
        corpora_chosen(object): Corpus files were added (a list of paths).
        corpus_changed(): The corpus list changed (files added, removed or cleared).
        start_problem_changed(str): Why Start cannot run changed (empty: it can).
        start_enabled_changed(bool): The Start button was enabled or disabled.
        message(str): A short message for the status bar (e.g. folders without corpus files).
    """

    corpora_chosen = Signal(object)
    corpus_changed = Signal()
    start_problem_changed = Signal(str)
    start_enabled_changed = Signal(bool)
    message = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._pattern_error = ""
        self._cluster_error = ""
        self._running = False
        self._problem = ""  # the checks' first problem in the app's words (empty: none)
        self._start_problem: str | None = None  # None until first computed, so the first update signals
        self._fields_cache: dict[_Key, list[tuple[str, bool]] | None] = {}
        self._text_cache: dict[tuple[_Key, str], str] = {}
        self._record_fields: list[tuple[str, bool]] = []
        self._text_field_problem = ""
        # "Start from": the source chosen (None: the single bytes), the opened base once it is, or why not.
        self._base_source: str | None = None
        self._base: ExtendBase | None = None
        self._base_problem = ""
        self._vocab_note = ""  # why the vocab size was raised for the base
        self._own_settings: tuple[str, list[str]] | None = None  # pattern, special tokens before a base
        self._own_tips: dict[QWidget, str] | None = None  # the tooltips of the controls a base locks
        self.base_runner = TaskRunner("bpe-studio-extend-base", self)
        self.base_runner.finished.connect(self._on_base_runner_finished)
        self.base_runner.errored.connect(self._on_base_runner_errored)
        self.scanner = CorpusScanner(self)
        self.scanner.updated.connect(self._on_scanner_updated)
        self._check_timer = delay_timer(self, CHECK_DELAY_MS, self._on_check_timer_timeout)
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        # The settings scroll when "More options" is open in a small window; Start and Cancel stay in view.
        content = QWidget(self)
        content_layout = QVBoxLayout(content)
        content_layout.setContentsMargins(0, 0, 4, 0)
        content_layout.addWidget(self._build_corpus_box(content, mono), 1)  # the preview takes what is left
        content_layout.addWidget(self._build_settings_box(content, mono))
        content_layout.addWidget(self._build_more_options(content))
        self.scroll_area = VerticalScroll(content, parent=self)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.scroll_area, 1)
        layout.addLayout(self._build_run_buttons())
        self.error_labels: dict[str, QLabel] = {
            "inputs": self.files_error,
            "text_field": self.text_field_error,
            "vocab_size": self.vocab_error,
            "special_tokens": self.specials_error,
            "max_token_length": self.max_length_error,
            "counts_in": self.counts_in_error,
            "counts_out": self.counts_out_error,
            "checkpoint": self.checkpoint_error,
            "resume": self.resume_error,
            "extend": self.base_error,
            "superword_transition": self.superword_error,
        }
        for edit in (self.counts_in_edit, self.counts_out_edit, self.checkpoint_edit, self.resume_edit):
            edit.textChanged.connect(self._schedule_check)
        for spin in (self.vocab_spin, self.max_length_spin, self.chunk_spin, self.checkpoint_every_spin):
            spin.valueChanged.connect(self._schedule_check)
        self.utf8_combo.currentIndexChanged.connect(self._on_utf8_combo_changed)
        self.vocab_spin.valueChanged.connect(self._on_vocab_spin_changed)
        self.superword_spin.valueChanged.connect(self._schedule_check)
        self.skip_bad_check.toggled.connect(self._schedule_check)
        self.text_field_combo.currentTextChanged.connect(self._on_text_field_combo_changed)

    # ==============================================================================================
    # Layout
    # ==============================================================================================

    def _build_corpus_box(self, parent: QWidget, mono: QFont) -> QGroupBox:
        corpus_box = QGroupBox("Corpus", parent)
        corpus_layout = QVBoxLayout(corpus_box)
        self.files_model = QStringListModel(self)
        self.files_view = QListView(corpus_box)
        self.files_view.setModel(self.files_model)
        self.files_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.files_view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.files_view.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.files_view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.files_view.setMaximumHeight(72)
        self.files_view.setToolTip(
            "Corpus files: UTF-8 text, JSON Lines, Parquet, or these compressed. Drop files or folders "
            "anywhere on this tab to add them."
        )
        corpus_layout.addWidget(self.files_view)
        self.files_error = _error_label(corpus_box)
        corpus_layout.addWidget(self.files_error)
        file_buttons = QGridLayout()
        self.add_files_button = QPushButton("Add files…", corpus_box)
        self.add_files_button.clicked.connect(self.choose_corpus_files)
        self.add_folder_button = QPushButton("Add folder…", corpus_box)
        self.add_folder_button.setToolTip("Add every corpus file in a folder and its subfolders")
        self.add_folder_button.clicked.connect(self.choose_corpus_folder)
        self.remove_files_button = QPushButton("Remove", corpus_box)
        self.remove_files_button.clicked.connect(self._on_remove_files_button_clicked)
        self.clear_files_button = QPushButton("Clear", corpus_box)
        self.clear_files_button.clicked.connect(lambda: self.set_corpus_files([]))
        # Two by two: four buttons in a row would set the form's (and the window's) minimum width (issue 21).
        for i, button in enumerate(
            (self.add_files_button, self.add_folder_button, self.remove_files_button, self.clear_files_button)
        ):
            file_buttons.addWidget(button, i // 2, i % 2)
        file_buttons.setSpacing(4)
        file_buttons.setColumnStretch(2, 1)
        corpus_layout.addLayout(file_buttons)
        # JSON Lines and Parquet: which field holds the text, chosen from the preview's records.
        self.text_field_row = QWidget(corpus_box)
        row = QHBoxLayout(self.text_field_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("Text field", self.text_field_row))
        self.text_field_combo = QComboBox(self.text_field_row)
        self.text_field_combo.setEditable(True)
        self.text_field_combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.text_field_combo.addItem("text")
        self.text_field_combo.setToolTip(
            "JSON Lines / Parquet: the field (column) holding each record's text; a dotted path such as "
            "meta.body enters nested objects. The list holds the fields of the first records."
        )
        row.addWidget(self.text_field_combo, 1)
        self.text_field_error = _error_label(corpus_box)
        corpus_layout.addWidget(self.text_field_row)
        corpus_layout.addWidget(self.text_field_error)
        self.text_field_row.setVisible(False)
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
        corpus_layout.addWidget(self.preview_text, 1)
        return corpus_box

    def _build_settings_box(self, parent: QWidget, mono: QFont) -> QGroupBox:
        settings_box = QGroupBox("Tokenizer", parent)
        form = QFormLayout(settings_box)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("Start from", self._build_base(settings_box))
        self.vocab_spin = QSpinBox(settings_box)
        self.vocab_spin.setRange(257, 0x110000)
        self.vocab_spin.setSingleStep(1000)
        self.vocab_spin.setGroupSeparatorShown(True)
        self.vocab_spin.setToolTip(
            "Final vocabulary size, counting the 256 single bytes and the special tokens"
        )
        self.vocab_error = _error_label(settings_box)
        form.addRow("Vocab size", _stacked(settings_box, self.vocab_spin, self.vocab_error))
        form.addRow("Special tokens", self._build_specials(settings_box, mono))
        form.addRow("Pattern", self._build_pattern(settings_box, mono))
        return settings_box

    def _build_base(self, parent: QWidget) -> QWidget:
        """The "Start from" row: the single bytes, or a tokenizer to extend (GPT-2, a recent tokenizer, a
        file), with a line on the tokenizer once it is opened and its problem if it cannot be."""
        self.base_combo = QComboBox(parent)
        self.base_combo.setObjectName("base_combo")
        self.base_combo.setToolTip(
            "Train from the single bytes, or extend a byte-level BPE tokenizer: keep every id, merge and "
            "special token of it and learn more merges from the corpus"
        )
        self.set_recent_tokenizers([])
        self.base_combo.activated.connect(self._on_base_combo_activated)
        self.base_note = QLabel(parent)
        self.base_note.setWordWrap(True)
        self.base_note.setTextFormat(Qt.TextFormat.PlainText)
        self.base_note.setVisible(False)
        self.base_error = _error_label(parent)
        return _stacked(parent, self.base_combo, self.base_note, self.base_error)

    def _build_more_options(self, parent: QWidget) -> QWidget:
        """The advanced options of ``bpe-studio train``, folded away under a "More options" toggle."""
        more = QWidget(parent)
        more_layout = QVBoxLayout(more)
        more_layout.setContentsMargins(0, 0, 0, 0)
        self.more_button = QToolButton(more)
        self.more_button.setText("More options")
        self.more_button.setCheckable(True)
        self.more_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.more_button.setArrowType(Qt.ArrowType.RightArrow)
        self.more_button.setAutoRaise(True)
        self.more_button.setToolTip(
            "Workers, min frequency, max token length, invalid UTF-8, bad records, chunk size, counts "
            "files, checkpoints and a Dask cluster"
        )
        self.more_button.toggled.connect(self._on_more_button_toggled)
        more_layout.addWidget(self.more_button)
        self.more_box = QGroupBox("More options", more)
        form = QFormLayout(self.more_box)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        box = self.more_box
        self.workers_spin = QSpinBox(box)
        self.workers_spin.setRange(0, max(64, os.cpu_count() or 1))
        self.workers_spin.setSpecialValueText("Auto")
        self.workers_spin.setToolTip(
            "Worker processes for counting; Auto uses one per core for corpora over 8 MB"
        )
        form.addRow("Workers", self.workers_spin)
        self.min_freq_spin = QSpinBox(box)
        self.min_freq_spin.setRange(1, 2_000_000_000)
        self.min_freq_spin.setGroupSeparatorShown(True)
        self.min_freq_spin.setToolTip("Stop early when the most frequent pair occurs fewer times than this")
        form.addRow("Min frequency", self.min_freq_spin)
        self.max_length_spin = QSpinBox(box)
        self.max_length_spin.setRange(1, 1_000_000)  # 1 shows "No limit": a token has at least 2 bytes
        self.max_length_spin.setSpecialValueText("No limit")
        self.max_length_spin.setSuffix(" bytes")
        self.max_length_spin.setToolTip("Never make a token longer than this many bytes")
        self.max_length_error = _error_label(box)
        form.addRow("Max token length", _stacked(box, self.max_length_spin, self.max_length_error))
        self.utf8_combo = QComboBox(box)
        for policy, label in _UTF8_CHOICES:
            self.utf8_combo.addItem(label, policy)
        self.utf8_combo.setToolTip("Bytes that are not UTF-8: stop with an error, or read them as U+FFFD")
        form.addRow("Invalid UTF-8", self.utf8_combo)
        self.skip_bad_check = QCheckBox("Skip them", box)
        self.skip_bad_check.setToolTip(
            "JSON Lines / Parquet: skip (and count) records without a usable text instead of stopping"
        )
        form.addRow("Bad records", self.skip_bad_check)
        self.chunk_spin = QSpinBox(box)
        self.chunk_spin.setRange(1, 1 << 20)
        self.chunk_spin.setSingleStep(1024)
        self.chunk_spin.setGroupSeparatorShown(True)
        self.chunk_spin.setSuffix(" KiB")
        self.chunk_spin.setToolTip("Bytes per counting chunk (default 4 MiB)")
        form.addRow("Chunk size", self.chunk_spin)
        self.counts_in_edit, self.counts_in_error, row = self._path_row(
            box, "a counts file saved by an earlier run", self._choose_counts_in
        )
        self.counts_in_edit.setToolTip(
            "Train from a table of counts saved with Save counts (same pattern, special tokens and corpus), "
            "without reading the corpus again"
        )
        form.addRow("Counts from", row)
        self.counts_out_edit, self.counts_out_error, row = self._path_row(
            box, "not saved", self._choose_counts_out
        )
        self.counts_out_edit.setToolTip("Also save the counted pre-tokens, to train again without counting")
        form.addRow("Save counts", row)
        self.checkpoint_edit, self.checkpoint_error, row = self._path_row(
            box, "no checkpoints", self._choose_checkpoint
        )
        self.checkpoint_edit.setToolTip("Save a checkpoint (counts and merges so far) as training goes")
        form.addRow("Checkpoint", row)
        self.checkpoint_every_spin = QSpinBox(box)
        self.checkpoint_every_spin.setRange(1, 2_000_000_000)
        self.checkpoint_every_spin.setGroupSeparatorShown(True)
        self.checkpoint_every_spin.setSuffix(" merges")
        self.checkpoint_every_spin.setToolTip("Merges between two checkpoints")
        form.addRow("Checkpoint every", self.checkpoint_every_spin)
        self.resume_edit, self.resume_error, row = self._path_row(
            box, "start from the first merge", self._choose_resume
        )
        self.resume_edit.setToolTip(
            "Continue from a checkpoint (after a crash, or to a larger vocab size); the result equals an "
            "uninterrupted run"
        )
        form.addRow("Resume from", row)
        self.superword_spin = QSpinBox(box)
        self.superword_spin.setObjectName("superword_spin")
        self.superword_spin.setRange(0, 0x110000)
        self.superword_spin.setSingleStep(1000)
        self.superword_spin.setGroupSeparatorShown(True)
        self.superword_spin.setSpecialValueText("Off")
        self.superword_spin.setToolTip(
            "SuperBPE: train ordinary tokens up to this vocabulary size, then superword tokens that span "
            "the spaces between words up to the vocab size (Off: ordinary BPE only)"
        )
        self.superword_error = _error_label(box)
        form.addRow("Superwords after", _stacked(box, self.superword_spin, self.superword_error))
        form.addRow("Dask cluster", self._build_cluster(box))
        self.more_box.setVisible(False)
        more_layout.addWidget(self.more_box)
        return more

    def _path_row(
        self, parent: QWidget, placeholder: str, choose: Callable[[], None]
    ) -> tuple[QLineEdit, QLabel, QWidget]:
        """A file path's line edit with a "…" button that asks for it, and its problem label."""
        row = QWidget(parent)
        layout = QHBoxLayout(row)
        layout.setContentsMargins(0, 0, 0, 0)
        edit = QLineEdit(row)
        edit.setPlaceholderText(placeholder)
        edit.setClearButtonEnabled(True)
        button = QToolButton(row)
        button.setText("…")
        button.setToolTip("Choose the file")
        button.clicked.connect(lambda _checked=False: choose())
        layout.addWidget(edit, 1)
        layout.addWidget(button)
        error = _error_label(parent)
        return edit, error, _stacked(parent, row, error)

    def _build_specials(self, parent: QWidget, mono: QFont) -> QWidget:
        specials = QWidget(parent)
        outer = QVBoxLayout(specials)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(2)
        specials_layout = QHBoxLayout()
        outer.addLayout(specials_layout)
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
        self.specials_error = _error_label(specials)
        outer.addWidget(self.specials_error)
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
        self.pattern_error = _error_label(pattern)
        pattern_layout.addWidget(self.pattern_combo)
        pattern_layout.addWidget(self.pattern_edit)
        pattern_layout.addWidget(self.pattern_error)
        self.pattern_combo.currentIndexChanged.connect(self._on_pattern_combo_changed)
        self.pattern_edit.textEdited.connect(self._on_pattern_edit_edited)
        self.pattern_edit.textChanged.connect(self._on_pattern_edit_changed)
        return pattern

    def _build_cluster(self, parent: QWidget) -> QWidget:
        # Advanced: count on a Dask cluster (issue: corpora too big for one machine). Validated as typed.
        self.cluster_edit = QLineEdit(parent)
        self.cluster_edit.setPlaceholderText("this machine (or local:N, tcp://host:8786)")
        self.cluster_edit.setToolTip(
            "Advanced: count pre-tokens on a Dask cluster. local:N starts N worker processes here; "
            'tcp://HOST:PORT uses a running scheduler. Needs pip install "bpe-studio[distributed]".'
        )
        self.cluster_error = _error_label(parent)
        self.cluster_edit.textChanged.connect(self._on_cluster_edit_changed)
        return _stacked(parent, self.cluster_edit, self.cluster_error)

    def _build_run_buttons(self) -> QHBoxLayout:
        run_buttons = QHBoxLayout()
        run_buttons.setContentsMargins(0, 4, 4, 0)
        self.start_button = QPushButton("Start training", self)
        self.start_button.setObjectName("start")
        self.start_button.setDefault(True)
        self.cancel_button = QPushButton("Cancel", self)
        run_buttons.addWidget(self.start_button, 2)
        run_buttons.addWidget(self.cancel_button, 1)
        return run_buttons

    @Slot(bool)
    def _on_more_button_toggled(self, checked: bool) -> None:
        self.more_box.setVisible(checked)
        self.more_button.setArrowType(Qt.ArrowType.DownArrow if checked else Qt.ArrowType.RightArrow)
        if checked:  # scrolled into view (downwards only: the form never scrolls sideways)
            QTimer.singleShot(0, self._scroll_to_more_options)

    def _scroll_to_more_options(self) -> None:
        bar = self.scroll_area.verticalScrollBar()
        content = self.scroll_area.widget()
        if content is not None:
            top = self.more_button.mapTo(content, self.more_button.rect().topLeft()).y()
            bar.setValue(min(bar.maximum(), top))

    def set_more_options_shown(self, shown: bool) -> None:
        """Open or fold the "More options" section."""
        self.more_button.setChecked(shown)

    def _editors(self) -> tuple[QWidget, ...]:
        """Every control that changes the run (locked while one goes on)."""
        return (
            self.add_files_button,
            self.add_folder_button,
            self.remove_files_button,
            self.clear_files_button,
            self.text_field_combo,
            self.base_combo,
            self.vocab_spin,
            self.specials_view,
            self.add_special_button,
            self.remove_special_button,
            self.pattern_combo,
            self.pattern_edit,
            self.more_box,
        )

    def set_running(self, running: bool) -> None:
        """Lock the form while a run goes on (only Cancel stays enabled); the preview's scan waits too."""
        for widget in self._editors():
            widget.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        if running != self._running:
            self._running = running
            if running:
                self.scanner.pause()
            else:
                self.scanner.resume()
                self._schedule_check()  # the run may have written files the form names (counts, checkpoints)
            self._on_scanner_updated(self.scanner.preview)  # the special tokens' count pauses, or goes on
        self._apply_base_locks()
        self._update_start()

    @property
    def running(self) -> bool:
        """Whether the form is locked for a run."""
        return self._running

    # ==============================================================================================
    # Start: enabled only when it can run
    # ==============================================================================================

    def has_corpus(self) -> bool:
        """Whether there is something to train from: corpus files, a counts file or a checkpoint."""
        reused = self._path(self.counts_in_edit) or self._path(self.resume_edit)
        return bool(self.files_model.rowCount() or reused)

    @property
    def start_problem(self) -> str:
        """Why Start training cannot run yet, in the app's words (empty when it can).

        The checks that read files run a moment after an edit; asked before that, they run now.
        """
        if self._check_timer.isActive():
            self._check_timer.stop()
            self._check()
        return self._current_problem()

    def _current_problem(self) -> str:
        if not self.has_corpus():
            return NO_CORPUS
        if self._pattern_error:
            return f"Start needs a working pattern. {self._pattern_error}"
        if self._cluster_error:
            return f"Start needs a usable Dask cluster, or none. {self._cluster_error}"
        return self._problem

    def _update_start(self, *, running: bool | None = None) -> None:
        """Enable Start when it can run and nothing runs; its tooltip says why it cannot."""
        problem = self._current_problem()
        enabled = not problem and not (self._running if running is None else running)
        was_enabled = self.start_button.isEnabled()
        self.start_button.setEnabled(enabled)
        self.start_button.setToolTip(problem or START_TIP)
        if enabled != was_enabled:
            self.start_enabled_changed.emit(enabled)
        if problem != self._start_problem:
            self._start_problem = problem
            self.start_problem_changed.emit(problem)

    @Slot()
    def _schedule_check(self, *_args: Any) -> None:
        self._check_timer.start()

    @Slot()
    def _on_check_timer_timeout(self) -> None:
        self._check()

    def check_now(self) -> None:
        """Run the checks now (they otherwise run a moment after the last edit)."""
        self._check_timer.stop()
        self._check()

    def _check(self) -> None:
        """Check the form as a run would (the engine's checks), show each problem beside its control and
        keep the first one as Start's reason."""
        shown: dict[str, str] = {}
        first, first_field = "", ""
        try:
            config: TrainConfig | None = self.build_config()
        except ValueError as exc:
            config = None
            first_field = str(exc).partition(": ")[0]
            if self.has_corpus() or first_field != "inputs":
                shown[first_field], first = _inline(str(exc)), app_message(str(exc))
        if config is not None and config.extend is not None:
            try:  # the run's own first step: the base's pattern and special tokens, a larger vocab size
                config = with_base(config, config.extend)
            except ValueError as exc:
                first_field = str(exc).partition(": ")[0]
                shown[first_field], first = _inline(str(exc)), app_message(str(exc))
                config = None
        if config is not None:
            for check in (preflight, self._check_text_starts):
                try:
                    check(config)
                except ValueError as exc:
                    first_field = str(exc).partition(": ")[0]
                    shown[first_field], first = _inline(str(exc)), app_message(str(exc))
                    break
        self._check_text_field()
        if self._text_field_problem and not first:
            first_field = "text_field"
            shown["text_field"] = self._text_field_problem
            first = f"Text field: {self._text_field_problem}"
        spaces = whitespace_specials(self.special_tokens())
        if spaces and "special_tokens" not in shown:
            names = ", ".join(repr(token) for token in spaces)
            shown["special_tokens"] = (
                f"Note: {names} is only whitespace, so every {names} in the corpus becomes that special "
                "token, splits documents there and is never merged."
            )
        if self._base_source is not None and self._base is None and not self._base_problem:
            shown.pop("extend", None)  # still opening: said by the line under the combo, not as an error
        if self._vocab_note and "vocab_size" not in shown:
            shown["vocab_size"] = self._vocab_note
        for field, label in self.error_labels.items():
            text = shown.get(field, "")
            label.setText(text)
            label.setVisible(bool(text))
        if first and first_field not in self.error_labels and first_field not in ("pattern", "cluster"):
            # A field without a label of its own (workers, chunk size...): said under the file list.
            self.files_error.setText(shown[first_field])
            self.files_error.setVisible(True)
        self._problem = first
        self._update_start()
        self._show_preview_problem()

    def _check_text_starts(self, config: TrainConfig) -> None:
        """:func:`check_text_starts`, file by file, remembering each file's answer until it changes."""
        policy = config.invalid_utf8.value
        for path in config.inputs:
            key = _file_key(path)
            if key is None or not is_plain_text(path):
                continue
            problem = self._text_cache.get((key, policy))
            if problem is None:
                try:
                    check_text_starts(replace(config, inputs=(path,), counts_in=None, resume=None))
                    problem = ""
                except ValueError as exc:
                    problem = str(exc)
                self._text_cache[(key, policy)] = problem
            if problem:
                raise ValueError(problem)

    def _check_text_field(self) -> None:
        """Read the fields of the first record files (once per file), fill the text field's list, and say
        when the chosen field is not in their records or holds no text."""
        records = [p for p in self.corpus_files() if not is_plain_text(p)]
        self.text_field_row.setVisible(bool(records))
        fields: dict[str, bool] = {}
        problem = ""
        field = self.text_field()
        skip = self.skip_bad_check.isChecked()
        for path in records[:_FIELD_FILES]:
            key = _file_key(path)
            if key is None:
                continue
            if key not in self._fields_cache:
                try:
                    self._fields_cache[key] = record_fields(path)
                except (OSError, ValueError, EOFError):
                    self._fields_cache[key] = None  # the preview says why it cannot be read
            found = self._fields_cache[key]
            if found is None:
                continue
            for name, is_text in found:
                fields[name] = fields.get(name, True) and is_text
            here = dict(found)
            if not problem and found:
                if field not in here:
                    texts = [name for name, is_text in found if is_text]
                    hint = (
                        f"choose one that holds text: {', '.join(texts[:6])}" if texts else "none holds text"
                    )
                    problem = f"No field “{field}” in the records of {path.name}; {hint}."
                elif not here[field] and not skip:
                    problem = (
                        f"“{field}” in {path.name} is not text in every record; choose the field that holds "
                        "the text, or skip bad records (More options)."
                    )
        self._text_field_problem = problem
        self._fill_text_fields(fields)

    def _fill_text_fields(self, fields: dict[str, bool]) -> None:
        """The text field's list: the fields holding text first, then the others (marked)."""
        found = [(name, is_text) for name, is_text in fields.items()]
        found.sort(key=lambda item: not item[1])  # stable: the records' order within each group
        names = [name for name, _ in found]
        combo = self.text_field_combo
        current = [combo.itemText(i) for i in range(combo.count())]
        if names == current or not names:
            return
        text = combo.currentText()
        combo.blockSignals(True)
        combo.clear()
        for name, is_text in found:
            combo.addItem(name)
            if not is_text:
                combo.setItemData(combo.count() - 1, "not text in every record", Qt.ItemDataRole.ToolTipRole)
        combo.setEditText(text)
        combo.blockSignals(False)

    # ==============================================================================================
    # Corpus
    # ==============================================================================================

    def corpus_files(self) -> list[Path]:
        """The corpus files in the list."""
        return [Path(p) for p in self.files_model.stringList()]

    def set_corpus_files(self, paths: Sequence[Path]) -> None:
        """Replace the corpus files (folders become the corpus files they hold, as on the command line)."""
        self.files_model.setStringList([os.fspath(p) for p in self._expand(paths)])
        self._update_preview()

    def add_corpus_files(self, paths: Sequence[Path]) -> list[Path]:
        """Add corpus files (ones already listed are not repeated; a folder adds the corpus files under it,
        as ``bpe-studio train`` does). Returns the files added; nothing is added while a run goes on."""
        if self._running:
            self.message.emit("The corpus cannot change while training; cancel the run first.")
            return []
        current = self.files_model.stringList()
        known = set(current)
        added: list[str] = []
        for path in self._expand(paths):
            name = os.fspath(path)
            if name not in known:
                known.add(name)
                added.append(name)
        if added:
            self.files_model.setStringList(current + added)
            self._update_preview()
            self.corpora_chosen.emit([Path(p) for p in added])
        return [Path(p) for p in added]

    def _expand(self, paths: Sequence[Path]) -> list[Path]:
        """Folders as their corpus files (:func:`expand_inputs`); one without any is said and left out."""
        out: list[Path] = []
        for path in paths:
            if not Path(path).is_dir():
                out.append(Path(path))
                continue
            try:
                out += expand_inputs([path])
            except ValueError as exc:
                self.message.emit(_inline(str(exc)))
        return out

    @Slot()
    def choose_corpus_files(self) -> None:
        """Ask for corpus files with a file dialog (not while a run goes on: the corpus is the run's)."""
        if self._running:
            return
        start = os.path.dirname(self.files_model.stringList()[-1]) if self.files_model.rowCount() else ""
        paths, _ = QFileDialog.getOpenFileNames(self, "Add corpus files", start, CORPUS_FILTER)
        if paths:
            self.add_corpus_files([Path(p) for p in paths])

    @Slot()
    def choose_corpus_folder(self) -> None:
        """Ask for a folder whose corpus files (by suffix, in subfolders too) are added."""
        if self._running:
            return
        start = os.path.dirname(self.files_model.stringList()[-1]) if self.files_model.rowCount() else ""
        folder = QFileDialog.getExistingDirectory(self, "Add a corpus folder", start)
        if folder:
            self.add_corpus_files([Path(folder)])

    @Slot()
    def _on_remove_files_button_clicked(self) -> None:
        rows = sorted({index.row() for index in self.files_view.selectedIndexes()}, reverse=True)
        for row in rows:
            self.files_model.removeRow(row)
        if rows:
            self._update_preview()

    def _update_preview(self) -> None:
        self._check_timer.stop()
        self._check()
        self.scanner.start(self.corpus_files(), self.special_tokens(), text_field=self.text_field())
        if self._running:
            self.scanner.pause()
        self.corpus_changed.emit()

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
            if self._running:
                parts.append("special tokens counted after the run")  # the scan waits while training
            else:
                share = preview.scanned_bytes / max(preview.total_bytes, 1)
                parts.append(f"counting special tokens… {share:.0%}")
        else:
            n = preview.special_tokens
            parts.append(f"{n:,} special token{'s' if n != 1 else ''}")
        self.preview_label.setText(" · ".join(parts))
        self._show_preview_problem()

    def _show_preview_problem(self) -> None:
        """The preview's text: the start of the first document, or why there is none to show."""
        preview = self.scanner.preview
        if not preview.files:
            return
        if self._text_field_problem:
            self.preview_text.setPlainText(f"⚠ {self._text_field_problem}")
        elif preview.head_problem:
            self.preview_text.setPlainText(f"⚠ {preview.head_problem}")
        else:
            self.preview_text.setPlainText(preview.head + (" …" if preview.head_truncated else ""))

    def text_field(self) -> str:
        """The JSON Lines / Parquet field holding the text (``text`` when left empty)."""
        return self.text_field_combo.currentText().strip() or "text"

    @Slot(str)
    def _on_text_field_combo_changed(self, _text: str) -> None:
        self._update_preview()

    @Slot(int)
    def _on_utf8_combo_changed(self, _index: int) -> None:
        self._check()

    # ---- the files of a run: counts and checkpoints --------------------------------------------------

    @staticmethod
    def _path(edit: QLineEdit) -> Path | None:
        text = edit.text().strip()
        return Path(text) if text else None

    def _ask_open(self, edit: QLineEdit, title: str) -> None:
        chosen, _ = QFileDialog.getOpenFileName(self, title, edit.text(), COUNTS_FILTER)
        if chosen:
            edit.setText(chosen)

    def _ask_save(self, edit: QLineEdit, title: str) -> None:
        chosen, _ = QFileDialog.getSaveFileName(self, title, edit.text(), COUNTS_FILTER)
        if chosen:
            edit.setText(chosen)

    @Slot()
    def _choose_counts_in(self) -> None:
        self._ask_open(self.counts_in_edit, "Train from a counts file")

    @Slot()
    def _choose_counts_out(self) -> None:
        self._ask_save(self.counts_out_edit, "Save the counts to")

    @Slot()
    def _choose_checkpoint(self) -> None:
        self._ask_save(self.checkpoint_edit, "Save checkpoints to")

    @Slot()
    def _choose_resume(self) -> None:
        self._ask_open(self.resume_edit, "Resume from a checkpoint")

    # ==============================================================================================
    # Start from: a tokenizer to extend
    # ==============================================================================================

    def set_recent_tokenizers(self, paths: Sequence[str]) -> None:
        """Offer these tokenizer files (the recent ones, most recent first) under "Start from"."""
        combo = self.base_combo
        combo.blockSignals(True)
        combo.clear()
        combo.addItem("Nothing (bytes)", "")
        for name, label in _BUILT_IN_BASES:
            combo.addItem(label, name)
        for path in paths:
            combo.addItem(Path(path).name, os.fspath(path))
            combo.setItemData(combo.count() - 1, os.fspath(path), Qt.ItemDataRole.ToolTipRole)
        if self._base_source and combo.findData(self._base_source) < 0:
            self._add_base_item(self._base_source)
        combo.addItem("Choose file…", _CHOOSE_BASE)
        combo.setCurrentIndex(max(0, combo.findData(self._base_source or "")))
        combo.blockSignals(False)

    def _add_base_item(self, source: str) -> int:
        """The combo's row of a source, added before "Choose file…" when it is not listed."""
        combo = self.base_combo
        found = combo.findData(source)
        if found >= 0:
            return found
        row = combo.findData(_CHOOSE_BASE)
        row = combo.count() if row < 0 else row
        combo.insertItem(row, Path(source).name, source)
        combo.setItemData(row, source, Qt.ItemDataRole.ToolTipRole)
        return row

    def base_source(self) -> str | None:
        """What the run starts from: a tokenizer's path or name (``gpt2``), or None for the single bytes."""
        return self._base_source

    @property
    def base(self) -> ExtendBase | None:
        """The opened tokenizer the run extends (None: none chosen, or still opening)."""
        return self._base

    def _base_name(self) -> str:
        return base_label(self._base_source or "")

    @Slot(int)
    def _on_base_combo_activated(self, index: int) -> None:
        data = self.base_combo.itemData(index)
        if data == _CHOOSE_BASE:
            start = self._base_source if self._base_source and os.path.exists(self._base_source) else ""
            chosen, _ = QFileDialog.getOpenFileName(self, "Start from a tokenizer", start, TOKENIZER_FILTER)
            if not chosen:  # back to what it was
                self.base_combo.setCurrentIndex(max(0, self.base_combo.findData(self._base_source or "")))
                return
            data = chosen
        self.set_base(str(data) or None)

    def set_base(self, source: str | None) -> None:
        """Start from this tokenizer (a path or a name such as ``gpt2``; None: the single bytes). It is
        opened off the GUI thread (GPT-2 takes over half a second); Start waits for it."""
        if source == self._base_source and (self._base is not None or self.base_runner.is_busy()):
            return
        self._base_source = source
        self._base = None
        self._base_problem = ""
        self._vocab_note = ""
        self.base_combo.blockSignals(True)
        self.base_combo.setCurrentIndex(self._add_base_item(source) if source else 0)
        self.base_combo.blockSignals(False)
        if source is None:
            self.base_runner.cancel()
            self._release_base()
        else:  # (Start's tooltip says it waits; the line under the combo says it is opening, not in error)
            self.base_note.setText(f"Opening {self._base_name()}…")
            self.base_note.setVisible(True)
            self.base_runner.start(partial(_open_base, source=source))
        self._apply_base_locks()
        self.check_now()

    @Slot(object)
    def _on_base_runner_finished(self, base: ExtendBase) -> None:
        if self._base_source is None:  # (back to the bytes meanwhile; a superseded base is never reported)
            return
        self._base = base
        if self._own_settings is None:
            self._own_settings = (self.pattern(), self.special_tokens())
        specials = sorted(base.special_ids, key=base.special_ids.__getitem__)
        self.specials_model.blockSignals(True)
        self.specials_model.setStringList(specials)
        self.specials_model.blockSignals(False)
        self.specials_view.reset()
        self.set_pattern(base.pattern)
        size = len(base.vocab)
        self.vocab_spin.setMinimum(size + 1)
        if self.vocab_spin.value() <= size + 1 and self.vocab_spin.value() < size + _NEW_TOKENS:
            self.vocab_spin.setValue(size + _NEW_TOKENS)
            self._vocab_note = (
                f"Raised to {size + _NEW_TOKENS:,}: it counts the {size:,} tokens of {self._base_name()} too."
            )
        self.base_note.setText(
            f"{size:,} tokens, {len(base.merges):,} merges; new tokens get ids from {base.next_id:,}"
        )
        self.base_note.setVisible(True)
        self._apply_base_locks()
        self._update_preview()  # the special tokens changed

    @Slot(int)
    def _on_vocab_spin_changed(self, _value: int) -> None:
        self._vocab_note = ""  # (the user chose a size of their own)

    @Slot(object)
    def _on_base_runner_errored(self, exc: BaseException) -> None:
        if self._base_source is None:
            return
        self._base_problem = str(exc) if str(exc).startswith("extend: ") else f"extend: {exc}"
        self.base_note.setVisible(False)
        self.check_now()

    def _release_base(self) -> None:
        """Back to the single bytes: the user's own pattern and special tokens, the usual vocab minimum."""
        self.vocab_spin.setMinimum(257)
        self.base_note.setVisible(False)
        if self._own_settings is not None:
            pattern, specials = self._own_settings
            self._own_settings = None
            self.specials_model.blockSignals(True)
            self.specials_model.setStringList(specials)
            self.specials_model.blockSignals(False)
            self.specials_view.reset()
            self.set_pattern(pattern)
            self._update_preview()

    def _apply_base_locks(self) -> None:
        """With a base: its pattern and special tokens are shown and locked, superwords are off (an extend
        run cannot train them); each locked control's tooltip says why."""
        tips = self._own_tips
        if tips is None:
            locked = (
                self.pattern_combo,
                self.pattern_edit,
                self.specials_view,
                self.add_special_button,
                self.remove_special_button,
                self.superword_spin,
            )
            tips = self._own_tips = {widget: widget.toolTip() for widget in locked}
        extending = self._base_source is not None
        name = self._base_name()
        reasons = {
            self.pattern_combo: _FROM_BASE_TIP.format(name=name, what="pattern"),
            self.pattern_edit: _FROM_BASE_TIP.format(name=name, what="pattern"),
            self.specials_view: _FROM_BASE_TIP.format(name=name, what="special tokens and their ids"),
            self.add_special_button: _FROM_BASE_TIP.format(name=name, what="special tokens"),
            self.remove_special_button: _FROM_BASE_TIP.format(name=name, what="special tokens"),
            self.superword_spin: (
                f"Off when starting from a tokenizer ({name}): a superword run trains its own words first"
            ),
        }
        for widget, tip in tips.items():
            widget.setEnabled(not extending and not self._running)
            widget.setToolTip(reasons[widget] if extending else tip)
        if extending and self.superword_spin.value():
            self.superword_spin.setValue(0)

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
        self.check_now()  # (the configuration's own check of the pattern must not lag behind this one)

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
        self.check_now()

    # ==============================================================================================
    # Values
    # ==============================================================================================

    def form_settings(self) -> TrainSettings:
        """The form's values, for the settings file (the files of one run, counts and checkpoints, are not
        kept)."""
        workers = self.workers_spin.value()
        return TrainSettings(
            inputs=[os.fspath(p) for p in self.corpus_files()],
            vocab_size=self.vocab_spin.value(),
            special_tokens=self.special_tokens(),
            pattern=self.pattern(),
            workers=workers or None,
            min_frequency=self.min_freq_spin.value(),
            cluster=self.cluster() or "",
            max_token_length=self.max_token_length(),
            chunk_size=self.chunk_spin.value() * 1024,
            invalid_utf8=str(self.utf8_combo.currentData()),
            text_field=self.text_field(),
            skip_bad_records=self.skip_bad_check.isChecked(),
            checkpoint_every=self.checkpoint_every_spin.value(),
            extend=self._base_source or "",
            superword_transition=self.superword_spin.value(),
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
        self.max_length_spin.setValue(train.max_token_length or self.max_length_spin.minimum())
        self.chunk_spin.setValue(max(1, min(train.chunk_size // 1024, self.chunk_spin.maximum())))
        self.utf8_combo.setCurrentIndex(max(0, self.utf8_combo.findData(train.invalid_utf8)))
        self.skip_bad_check.setChecked(train.skip_bad_records)
        self.checkpoint_every_spin.setValue(train.checkpoint_every)
        self.superword_spin.setValue(min(train.superword_transition, self.superword_spin.maximum()))
        # A tokenizer file that no longer exists is left out, as corpus files are.
        extend = train.extend
        if extend and extend not in dict(_BUILT_IN_BASES) and not Path(extend).exists():
            extend = ""
        self.set_base(extend or None)
        self.text_field_combo.blockSignals(True)
        self.text_field_combo.setEditText(train.text_field)
        self.text_field_combo.blockSignals(False)
        self.set_corpus_files([Path(p) for p in train.inputs if Path(p).is_file()])

    def max_token_length(self) -> int | None:
        """The longest token to make, in bytes, or None (no limit)."""
        value = self.max_length_spin.value()
        return None if value == self.max_length_spin.minimum() else value

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
            max_token_length=self.max_token_length(),
            chunk_size=self.chunk_spin.value() * 1024,
            invalid_utf8=InvalidUtf8Policy(str(self.utf8_combo.currentData())),
            cluster=self.cluster(),
            counts_in=self._path(self.counts_in_edit),
            counts_out=self._path(self.counts_out_edit),
            checkpoint=self._path(self.checkpoint_edit),
            checkpoint_every=self.checkpoint_every_spin.value(),
            resume=self._path(self.resume_edit),
            text_field=self.text_field(),
            skip_bad_records=self.skip_bad_check.isChecked(),
            superword_transition=self.superword_spin.value() or None,
            extend=self._extend_base(),
        )

    def _extend_base(self) -> ExtendBase | None:
        """The opened base, or None without one; raises ``ValueError`` (``extend: ...``) while it opens or
        when it could not be opened."""
        if self._base_source is None:
            return None
        if self._base_problem:
            raise ValueError(self._base_problem)
        if self._base is None:
            raise ValueError(f"extend: {self._base_name()} is still opening; Start waits for it")
        return self._base


__all__ = ["NO_CORPUS", "START_TIP", "TrainForm", "base_label", "whitespace_specials"]
