"""The "Train" tab: corpus and settings on the left; progress, charts, merges and the result on the right.

Progress events arrive from :class:`~bpe_studio.ui.train_worker.TrainRunner` (the engine runs in a child
process) in batches and are only buffered by the slot that receives them. A 50 ms timer updates the labels
a few times a second and redraws the charts or the table, each as often as its cost allows
(:data:`GUI_CPU_BUDGET`); redraws paint at once, from Python, so that pyqtgraph's and the table model's
many Python callbacks run without handing the GIL back and forth. Nothing is done per merge.
"""

from __future__ import annotations

import gc
import logging
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QModelIndex, QStringListModel, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QFont, QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListView,
    QMessageBox,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..engine import (
    PATTERNS,
    CountProgress,
    MergeMade,
    Phase,
    PhaseStarted,
    TrainConfig,
    TrainEvent,
    TrainResult,
    compile_pattern,
)
from ..engine.config import preset_name
from ..engine.humanize import (
    RunMeter,
    bytes_rate,
    clock,
    error_message,
    human_bytes,
    human_seconds,
    merge_rate,
    stop_reason_text,
    time_left,
)
from ..engine.preflight import preflight
from .charts import StepRate, TrainCharts
from .common import open_error_box
from .learn_view import LearnView
from .models import MergesFilterModel, MergesTableModel
from .preview import CorpusPreview, CorpusScanner
from .settings import Settings, TrainSettings
from .style import STATUS_BACKGROUND, opaque
from .train_worker import TrainRunner

log = logging.getLogger(__name__)

#: Milliseconds between two ticks of the refresh timer while training (the charts' shortest frame time).
REFRESH_MS = 50
#: Seconds between two updates of the status labels, and at least between two of the merges table.
STATUS_INTERVAL = 0.2
TABLE_INTERVAL = 0.25
#: Share of the time the GUI thread may spend redrawing the charts, and as much the table, while training
#: (measured with its CPU clock): on a small machine the GUI's CPU is taken from the counting processes.
GUI_CPU_BUDGET = 0.03
#: ... but they are redrawn at least this often (seconds), whatever it costs.
MAX_FRAME_INTERVAL = 1.0
#: GIL switch interval while training (seconds; CPython's default is 0.005). It matters when the engine
#: runs in a thread of this process (an ``iter_train_fn`` given to the runner): the GUI thread must take
#: the GIL for each Python callback of a paint, and with the default each take can wait 5 ms.
GIL_SWITCH_INTERVAL = 0.0005
#: Seconds a throughput sample spans (shorter gaps are merged into the next sample).
RATE_WINDOW = 0.25
#: The same for counting, whose progress arrives a chunk at a time (a few per second), often in bursts.
BYTES_RATE_WINDOW = 1.0

_PRESET_LABELS = {
    "gpt2": "GPT-2",
    "cl100k": "cl100k (GPT-4)",
    "o200k": "o200k (GPT-4o)",
}
_CUSTOM = "custom"

_PHASE_TEXT = {
    Phase.PLANNING: "Planning chunks",
    Phase.COUNTING: "Counting pre-tokens",
    Phase.MERGING: "Merging",
}


def describe_error(exc: BaseException) -> str:
    """The message shown for a failed run: the engine's own message where there is one."""
    return error_message(exc)


@dataclass
class _RunState:
    """What the labels show about the run in progress."""

    started: float = 0.0
    phase: Phase | None = None
    phase_started: float = 0.0  # engine time
    bytes_done: int = 0
    bytes_total: int = 0
    unique: int = 0
    merges_done: int = 0
    merges_total: int = 0
    last_event_time: float = 0.0  # engine time of the latest event
    bytes_rate: float = 0.0
    merge_rate: float = 0.0
    ended: str = ""  # "", "finished", "cancelled", "failed"


class _Caption(QLabel):
    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setObjectName("caption")


class TrainView(QWidget):
    """The training tab.

    Signals:
        training_started(): A run began.
        training_ended(str): A run ended: ``"finished"``, ``"cancelled"`` or ``"failed"``.
        result_ready(object): A finished run's :class:`TrainResult` (None when a new run starts).
        tokenizer_saved(object): The path a tokenizer was saved to.
        open_requested(object): The user asked to open the trained tokenizer (the ``TrainResult``).
        corpora_chosen(object): Corpus files were added (a list of paths).
        status_message(str): A short message for the status bar.
        error_shown(str, str): An error dialog was opened (title, message).
    """

    training_started = Signal()
    training_ended = Signal(str)
    result_ready = Signal(object)
    tokenizer_saved = Signal(object)
    open_requested = Signal(object)
    corpora_chosen = Signal(object)
    status_message = Signal(str)
    error_shown = Signal(str, str)

    def __init__(self, settings: Settings | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("train_view")
        self.setAcceptDrops(True)
        self.result: TrainResult | None = None
        self.result_config: TrainConfig | None = None
        self.error_box: QMessageBox | None = None
        self._state = _RunState()
        self._pending_merges: list[MergeMade] = []
        self._table_backlog: list[MergeMade] = []
        # When the table, the status labels and the charts are next due (perf_counter seconds).
        self._due: dict[str, float] = dict.fromkeys(("table", "status", "charts"), 0.0)
        self._saved_interpreter: tuple[float, bool] | None = None  # switch interval, gc enabled
        self._bytes_meter = StepRate(BYTES_RATE_WINDOW)
        self._merge_meter = StepRate(RATE_WINDOW)
        self._run_meter = RunMeter()  # the rates and time left shown (the CLI's numbers)
        self._pattern_error = ""

        self.runner = TrainRunner(self)
        self.runner.progress.connect(self._on_runner_progress)
        self.runner.finished.connect(self._on_runner_finished)
        self.runner.cancelled.connect(self._on_runner_cancelled)
        self.runner.errored.connect(self._on_runner_errored)
        self.runner.stopped.connect(self._on_runner_stopped)

        self.scanner = CorpusScanner(self)
        self.scanner.updated.connect(self._on_scanner_updated)

        self.refresh_timer = QTimer(self)
        self.refresh_timer.setInterval(REFRESH_MS)
        self.refresh_timer.timeout.connect(self._on_refresh_timer_timeout)

        self._build()
        self.apply_settings((settings or Settings()).train)
        self._set_running(False)

    # ==============================================================================================
    # Layout
    # ==============================================================================================

    def _build(self) -> None:
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.setChildrenCollapsible(False)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(splitter)

        # ---- left: corpus, settings, start/cancel --------------------------------------------------
        left = QWidget(splitter)
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 4, 0)

        corpus_box = QGroupBox("Corpus", left)
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
        left_layout.addWidget(corpus_box, 1)  # the preview takes the height left over

        settings_box = QGroupBox("Tokenizer", left)
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

        specials = QWidget(settings_box)
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
        form.addRow("Special tokens", specials)

        pattern = QWidget(settings_box)
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
        form.addRow("Pattern", pattern)

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

        # Advanced: count on a Dask cluster (issue: corpora too big for one machine). Validated as typed.
        cluster = QWidget(settings_box)
        cluster_layout = QVBoxLayout(cluster)
        cluster_layout.setContentsMargins(0, 0, 0, 0)
        cluster_layout.setSpacing(2)
        self.cluster_edit = QLineEdit(cluster)
        self.cluster_edit.setPlaceholderText("this machine (or local:N, tcp://host:8786)")
        self.cluster_edit.setToolTip(
            "Advanced: count pre-tokens on a Dask cluster. local:N starts N worker processes here; "
            "tcp://HOST:PORT uses a running scheduler. Needs pip install \"bpe-studio[distributed]\"."
        )
        self.cluster_error = QLabel(cluster)
        self.cluster_error.setObjectName("error")
        self.cluster_error.setWordWrap(True)
        self.cluster_error.setVisible(False)
        cluster_layout.addWidget(self.cluster_edit)
        cluster_layout.addWidget(self.cluster_error)
        self.cluster_edit.textChanged.connect(self._on_cluster_edit_changed)
        form.addRow("Dask cluster", cluster)
        left_layout.addWidget(settings_box)

        run_buttons = QHBoxLayout()
        self.start_button = QPushButton("Start training", left)
        self.start_button.setObjectName("start")
        self.start_button.setDefault(True)
        self.start_button.clicked.connect(self.start_training)
        self.cancel_button = QPushButton("Cancel", left)
        self.cancel_button.clicked.connect(self.cancel_training)
        run_buttons.addWidget(self.start_button, 2)
        run_buttons.addWidget(self.cancel_button, 1)
        left_layout.addLayout(run_buttons)

        # ---- right: status, charts, merges table and result ----------------------------------------
        right = QWidget(splitter)
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(4, 0, 0, 0)

        status = QFrame(right)
        status.setObjectName("status")
        status_layout = QVBoxLayout(status)
        status_layout.setContentsMargins(8, 6, 8, 6)
        status_layout.setSpacing(4)
        top_row, stats_row = QHBoxLayout(), QHBoxLayout()
        status_layout.addLayout(top_row)
        status_layout.addLayout(stats_row)
        self.phase_label = QLabel("Ready", status)
        self.phase_label.setObjectName("phase")
        phase_font = QFont(self.phase_label.font())
        phase_font.setBold(True)
        phase_font.setPointSizeF(phase_font.pointSizeF() * 1.15)
        self.phase_label.setFont(phase_font)
        # Labels that change while training have a fixed size: a label whose size may change makes every
        # text change invalidate the layouts up to the window, which then repaints whole.
        self.phase_label.setFixedSize(170, self.phase_label.sizeHint().height())
        self.progress_bar = QProgressBar(status)
        self.progress_bar.setRange(0, 1000)
        self.progress_bar.setValue(0)
        self.progress_bar.setTextVisible(True)
        self.progress_bar.setFormat("")
        for widget in (self.phase_label, self.progress_bar):
            opaque(widget, STATUS_BACKGROUND)
        top_row.addWidget(self.phase_label)
        top_row.addWidget(self.progress_bar, 1)
        self.stat_labels: dict[str, QLabel] = {}
        captions = (("bytes", "Counting"), ("merges", "Merging"), ("elapsed", "Elapsed"), ("eta", "ETA"))
        for key, caption in captions:
            stats_row.addWidget(_Caption(caption, status))
            value = QLabel("–", status)
            value.setObjectName(f"stat_{key}")
            value.setFixedSize(130, value.sizeHint().height())
            opaque(value, STATUS_BACKGROUND)
            stats_row.addWidget(value)
            self.stat_labels[key] = value
        self.stat_labels["bytes"].setToolTip("Corpus bytes pre-tokenized per second")
        self.stat_labels["merges"].setToolTip("Merges made per second since the first merge")
        self.stat_labels["eta"].setToolTip("Estimated time to the end of the current phase")
        stats_row.addStretch(1)
        right_layout.addWidget(status)

        vertical = QSplitter(Qt.Orientation.Vertical, right)
        vertical.setChildrenCollapsible(False)
        self.charts = TrainCharts(vertical)
        self.charts.setMinimumHeight(220)

        bottom = QWidget(vertical)
        bottom_layout = QHBoxLayout(bottom)
        bottom_layout.setContentsMargins(0, 0, 0, 0)

        merges_box = QGroupBox("Merges", bottom)
        merges_layout = QVBoxLayout(merges_box)
        search_row = QHBoxLayout()
        self.search_edit = QLineEdit(merges_box)
        self.search_edit.setPlaceholderText("Search tokens (a space matches ·)")
        self.search_edit.setClearButtonEnabled(True)
        self.search_edit.textChanged.connect(self._on_search_edit_changed)
        self.follow_check = QCheckBox("Follow newest", merges_box)
        self.follow_check.setChecked(True)
        self.follow_check.setToolTip("Keep the newest merge in view while training")
        self.match_label = QLabel("", merges_box)
        search_row.addWidget(self.search_edit, 1)
        search_row.addWidget(self.match_label)
        search_row.addWidget(self.follow_check)
        merges_layout.addLayout(search_row)
        self.merges_model = MergesTableModel(self)
        self.merges_filter = MergesFilterModel(self.merges_model, self)
        self.merges_table = QTableView(merges_box)
        self.merges_table.setModel(self.merges_model)
        self.merges_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.merges_table.setAlternatingRowColors(True)
        self.merges_table.setWordWrap(False)
        self.merges_table.setFont(mono)  # tokens in a fixed-width font (and numbers line up)
        self.merges_table.verticalHeader().setVisible(False)
        self.merges_table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.merges_table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        header = self.merges_table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(False)
        widths = (70, 120, 120, 170, 90)
        for column, width in enumerate(widths):
            self.merges_table.setColumnWidth(column, width)
        header.setSectionResizeMode(MergesTableModel.TOKEN, QHeaderView.ResizeMode.Stretch)
        merges_layout.addWidget(self.merges_table)
        bottom_layout.addWidget(merges_box, 3)

        result_box = QGroupBox("Result", bottom)
        result_layout = QVBoxLayout(result_box)
        self.summary_form = QFormLayout()
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
            value = QLabel("–", result_box)
            value.setWordWrap(True)
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            value.setObjectName(f"summary_{key}")
            self.summary_form.addRow(_Caption(caption, result_box), value)
            self.summary_labels[key] = value
        result_layout.addLayout(self.summary_form)
        result_layout.addSpacing(6)
        result_buttons = QHBoxLayout()
        self.save_button = QPushButton("Save tokenizer…", result_box)
        self.save_button.clicked.connect(self.ask_and_save_tokenizer)
        self.open_button = QPushButton("Open in Playground", result_box)
        self.open_button.setToolTip("Show the trained tokenizer in the tokenizer views")
        self.open_button.clicked.connect(self._on_open_button_clicked)
        result_buttons.addWidget(self.save_button)
        result_buttons.addWidget(self.open_button)
        result_layout.addLayout(result_buttons)
        result_layout.addStretch(1)
        result_box.setMinimumWidth(300)
        bottom_layout.addWidget(result_box, 2)

        vertical.addWidget(self.charts)
        vertical.addWidget(bottom)
        vertical.setStretchFactor(0, 5)
        vertical.setStretchFactor(1, 6)
        vertical.insertWidget(1, LearnView(self, vertical))  # watch BPE learn: follows this view's runs
        right_layout.addWidget(vertical, 1)

        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        left.setMinimumWidth(330)
        left.setMaximumWidth(480)
        splitter.setSizes([360, 1000])
        self._set_result(None)

    # ==============================================================================================
    # Form
    # ==============================================================================================

    def corpus_files(self) -> list[Path]:
        """The corpus files in the list."""
        return [Path(p) for p in self.files_model.stringList()]

    def special_tokens(self) -> list[str]:
        """The special tokens in the list."""
        return list(self.specials_model.stringList())

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
        paths, _ = QFileDialog.getOpenFileNames(
            self, "Add corpus files", start, "Text files (*.txt *.text *.md *.jsonl *.csv);;All files (*)"
        )
        if paths:
            self.add_corpus_files([Path(p) for p in paths])

    @Slot()
    def _on_remove_files_button_clicked(self) -> None:
        rows = sorted({index.row() for index in self.files_view.selectedIndexes()}, reverse=True)
        for row in rows:
            self.files_model.removeRow(row)
        if rows:
            self._update_preview()

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
        """Validate the pattern as it is typed and show the engine's message under it."""
        message = ""
        if not text:
            message = "Enter a regex, or choose a preset."
        else:
            try:
                compile_pattern(text)
            except ValueError as exc:
                message = str(exc).removeprefix("pattern: ")
        self._pattern_error = message
        self.pattern_error.setText(message)
        self.pattern_error.setVisible(bool(message))
        self.pattern_edit.setProperty("invalid", bool(message))
        self.pattern_edit.style().unpolish(self.pattern_edit)
        self.pattern_edit.style().polish(self.pattern_edit)

    @Slot(str)
    def _on_cluster_edit_changed(self, text: str) -> None:
        """Check the cluster address as it is typed; show what is accepted, or how to install Dask."""
        from ..engine.distributed import dask_missing, parse_cluster

        message = ""
        if text.strip():
            try:
                parse_cluster(text)
            except ValueError as exc:
                message = str(exc)
            else:
                message = dask_missing() or ""
        self.cluster_error.setText(message)
        self.cluster_error.setVisible(bool(message))

    def cluster(self) -> str | None:
        """The Dask cluster address typed in the advanced setting, or None for this machine."""
        return self.cluster_edit.text().strip() or None

    @property
    def pattern_problem(self) -> str:
        """The inline pattern error shown, or empty when the pattern is valid."""
        return self._pattern_error

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
        )

    # ---- corpus preview ---------------------------------------------------------------------------

    def _update_preview(self) -> None:
        self.scanner.start(self.corpus_files(), self.special_tokens())
        if self.runner.is_running():
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

    # ---- drag and drop ----------------------------------------------------------------------------

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 - Qt's name
        """Accept local files."""
        urls = event.mimeData().urls() if event.mimeData().hasUrls() else []
        if urls and all(url.isLocalFile() for url in urls) and not self.runner.is_running():
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 - Qt's name
        """Add dropped files (folders are skipped)."""
        paths = [Path(url.toLocalFile()) for url in event.mimeData().urls() if url.isLocalFile()]
        files = [p for p in paths if p.is_file()]
        if files:
            self.add_corpus_files(files)
            event.acceptProposedAction()
        if len(files) < len(paths):
            self.status_message.emit("Only files can be added to the corpus; folders were skipped.")

    # ==============================================================================================
    # Running
    # ==============================================================================================

    def is_running(self) -> bool:
        """Whether a training run is in progress."""
        return self.runner.is_running()

    def load_demo(self, *, start: bool = False) -> None:
        """Fill the form with the demo corpus and settings (and start training when asked)."""
        from ..demo import DEMO_SPECIAL_TOKEN, DEMO_VOCAB_SIZE, demo_corpus

        if self.is_running():
            return
        # The first time, the corpus is built from the interpreter's sources (a few seconds).
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            path = demo_corpus()
        except OSError as exc:
            self.show_error("Cannot write the demo corpus", describe_error(exc))
            return
        finally:
            QApplication.restoreOverrideCursor()
        self.apply_settings(
            TrainSettings(
                inputs=[os.fspath(path)], vocab_size=DEMO_VOCAB_SIZE, special_tokens=[DEMO_SPECIAL_TOKEN]
            )
        )
        if start:
            self.start_training()

    @Slot()
    def start_training(self) -> bool:
        """Validate the form and start a run; shows an error dialog and returns False when it cannot."""
        if self.is_running():
            return False
        try:
            config = self.build_config()
            preflight(config)  # the checks that read files (TrainConfig itself reads none)
        except ValueError as exc:
            self.show_error("Cannot start training", str(exc))
            return False
        # Measured before the run starts: a file removed once it runs is the run's error to report.
        try:
            size = sum(p.stat().st_size for p in config.inputs)
        except OSError as exc:
            self.show_error("Cannot start training", describe_error(exc))
            return False
        self._reset_run()
        self.result_config = config
        self.corpora_chosen.emit(list(config.inputs))
        self._state.started = time.perf_counter()
        self._enter_training_mode()
        self.runner.start(config)
        self.scanner.pause()
        self._set_running(True)
        self.phase_label.setText("Starting")
        self.refresh_timer.start()
        self.training_started.emit()
        self.status_message.emit(f"Training on {human_bytes(size)} to {config.vocab_size:,} tokens…")
        return True

    @Slot()
    def cancel_training(self) -> None:
        """Ask the run to stop; the view updates when the worker reports it stopped."""
        if self.is_running() and not self._state.ended:
            self.runner.cancel()
            self.cancel_button.setEnabled(False)
            self.phase_label.setText("Cancelling…")

    def shutdown(self, timeout_ms: int = 10_000) -> None:
        """Cancel a run and wait for its thread (when the window closes)."""
        self.refresh_timer.stop()
        self.scanner.stop()
        if self.is_running():
            self.runner.cancel()
            if not self.runner.wait(timeout_ms):
                log.warning("the training thread did not stop within %d ms", timeout_ms)
        self._leave_training_mode()

    def _reset_run(self) -> None:
        self._state = _RunState()
        self._pending_merges = []
        self._table_backlog = []
        self._due = dict.fromkeys(("table", "status", "charts"), 0.0)
        self._bytes_meter = StepRate(BYTES_RATE_WINDOW)
        self._merge_meter = StepRate(RATE_WINDOW)
        self._run_meter = RunMeter()
        self.merges_model.clear()
        self.charts.reset()
        self._set_result(None)
        self.progress_bar.setRange(0, 1000)
        self.progress_bar.setValue(0)
        self.progress_bar.setFormat("")
        for label in self.stat_labels.values():
            label.setText("–")

    def _set_running(self, running: bool) -> None:
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
            self.start_button,
        ):
            widget.setEnabled(not running)
        self.cancel_button.setEnabled(running)

    # ---- progress ---------------------------------------------------------------------------------

    @Slot(object)
    def _on_runner_progress(self, events: list[TrainEvent]) -> None:
        """Buffer a batch of events; merges wait for the refresh timer, other events update the state."""
        pending = self._pending_merges
        for event in events:
            if type(event) is MergeMade:
                pending.append(event)
            else:
                self._handle_event(event)

    def _handle_event(self, event: TrainEvent) -> None:
        state = self._state
        self._run_meter.update(event)
        if isinstance(event, PhaseStarted):
            state.phase = event.phase
            state.phase_started = event.elapsed
            state.last_event_time = event.elapsed
            if event.phase is Phase.COUNTING:
                self._bytes_meter.start(event.elapsed, 0)
            if event.phase is Phase.MERGING and self.result_config is not None:
                config = self.result_config
                state.merges_total = config.vocab_size - 256 - len(config.special_tokens)
                self.charts.set_total_merges(state.merges_total)
        elif isinstance(event, CountProgress):
            state.bytes_done, state.bytes_total = event.bytes_done, event.bytes_total
            state.unique = event.unique_pretokens
            state.last_event_time = event.elapsed
            state.bytes_rate = self._run_meter.bytes_rate
            step = self._bytes_meter.update(
                event.elapsed, event.bytes_done, force=event.bytes_done == event.bytes_total
            )
            if step is not None:
                self.charts.add_bytes_rate(step[0], step[1], step[2] / 1e6)

    def _take_merges(self, *, final: bool = False) -> None:
        """Move buffered merges to the charts' buffers and the table's backlog (``final``: the run ended)."""
        merges = self._pending_merges
        state = self._state
        if merges:
            self._pending_merges = []
            self._table_backlog.extend(merges)
            self.charts.add_merges([m.count for m in merges], [len(m.token) for m in merges])
            last = merges[-1]
            if not self._merge_meter.started:
                first = merges[0]
                self._merge_meter.start(first.elapsed, first.index)
            state.merges_done = last.index + 1
            state.merges_total = last.total
            state.last_event_time = last.elapsed
            self._run_meter.update(merges[0])
            self._run_meter.update(last)
        elif not final:
            return
        if final:
            self._run_meter.finish()
        state.merge_rate = self._run_meter.merge_rate
        if self._merge_meter.started:
            step = self._merge_meter.update(state.last_event_time, state.merges_done, force=final)
            if step is not None:
                self.charts.add_merge_rate(*step)

    def _flush_table(self) -> None:
        """Append the backlog of merges to the table (one row insertion) and follow the newest."""
        if not self._table_backlog:
            return
        self.merges_model.append_merges(self._table_backlog)
        self._table_backlog = []
        if self.follow_check.isChecked():
            self.merges_table.scrollToBottom()
        if self.merges_table.model() is self.merges_filter:
            self._update_match_label()
        # Paint now, from this Python slot: the view calls the model (in Python) about a thousand times per
        # paint, and here the GUI thread holds the GIL throughout; painted later from the event loop, each
        # call would first wait for the worker thread to hand the GIL over (a tenth of a second in all).
        self.merges_table.updateGeometries()
        self.merges_table.viewport().repaint()

    @Slot()
    def _on_refresh_timer_timeout(self) -> None:
        """Update what is due: the labels a few times a second; the charts or the table (one of them per
        tick, so that no tick keeps the window busy for long) as often as their cost allows."""
        now = time.perf_counter()
        self._take_merges()
        due = self._due
        if now >= due["status"]:
            self._update_status()
            due["status"] = now + STATUS_INTERVAL
        if now >= due["charts"]:
            due["charts"] = now + self._timed(self._redraw_charts, REFRESH_MS / 1000)
        elif now >= due["table"]:
            due["table"] = now + self._timed(self._flush_table, TABLE_INTERVAL)

    @staticmethod
    def _timed(job: Callable[[], None], shortest: float) -> float:
        """Run a redraw; return how long to wait before the next one, in proportion to what this one cost
        the GUI thread's CPU (so that it uses about :data:`GUI_CPU_BUDGET` of it)."""
        cpu = time.thread_time()
        job()
        cost = time.thread_time() - cpu
        return min(MAX_FRAME_INTERVAL, max(shortest, cost / GUI_CPU_BUDGET))

    def _redraw_charts(self) -> None:
        """Hand the new data to the charts and paint them at once."""
        self.charts.refresh()
        self.charts.repaint_now()

    def _update_status(self) -> None:
        state = self._state
        now = time.perf_counter() - state.started
        if state.ended:
            now = state.last_event_time
        labels = self.stat_labels
        labels["elapsed"].setText(clock(now))
        if state.bytes_rate:
            labels["bytes"].setText(bytes_rate(state.bytes_rate))
        if state.merge_rate:
            labels["merges"].setText(merge_rate(state.merge_rate))
        if state.ended:
            return
        bar = self.progress_bar
        if state.phase is Phase.COUNTING:
            share = state.bytes_done / max(state.bytes_total, 1)
            self.phase_label.setText(_PHASE_TEXT[Phase.COUNTING])
            bar.setRange(0, 1000)
            bar.setValue(int(share * 1000))
            bar.setFormat(
                f"{human_bytes(state.bytes_done)} of {human_bytes(state.bytes_total)} · "
                f"at least {state.unique:,} unique pre-tokens"  # workers' tables overlap: a lower bound
            )
            left = time_left(state.bytes_done, state.bytes_total, state.bytes_rate)
            if left is not None and state.bytes_done < state.bytes_total:
                labels["eta"].setText(f"{clock(left)} (counting)")
        elif state.phase is Phase.MERGING:
            if state.merges_done == 0:
                self.phase_label.setText("Preparing merges")
                bar.setRange(0, 0)  # busy: the merge loop indexes the pairs
                bar.setFormat("")
                labels["eta"].setText("–")
            else:
                self.phase_label.setText(_PHASE_TEXT[Phase.MERGING])
                bar.setRange(0, max(state.merges_total, 1))
                bar.setValue(state.merges_done)
                bar.setFormat(f"{state.merges_done:,} of {state.merges_total:,} merges")
                left = self._run_meter.time_left()  # merges speed up: see RunMeter
                if left is not None:
                    labels["eta"].setText(clock(left))
        elif state.phase is Phase.PLANNING:
            self.phase_label.setText(_PHASE_TEXT[Phase.PLANNING])
            bar.setRange(0, 0)
        if self.runner.is_running() and not self.cancel_button.isEnabled():
            self.phase_label.setText("Cancelling…")

    # ---- end of a run -----------------------------------------------------------------------------

    def _finish_display(self, ended: str, phase_text: str) -> None:
        self._take_merges(final=True)
        self._flush_table()
        self._state.ended = ended
        self.refresh_timer.stop()
        self._update_status()
        self.charts.refresh()
        self.phase_label.setText(phase_text)

    @Slot(object)
    def _on_runner_finished(self, result: TrainResult) -> None:
        self._state.last_event_time = result.timings.get("total", self._state.last_event_time)
        self._finish_display("finished", "Finished")
        self.progress_bar.setRange(0, 1)
        self.progress_bar.setValue(1)
        self.progress_bar.setFormat(f"{len(result.merges):,} merges · {len(result.vocab):,} tokens")
        self.stat_labels["eta"].setText("done")
        self._set_result(result)
        self.status_message.emit(
            f"Trained {len(result.vocab):,} tokens in {human_seconds(result.timings.get('total', 0.0))}."
        )

    @Slot(object)
    def _on_runner_cancelled(self, result: TrainResult) -> None:
        self._finish_display("cancelled", "Cancelled")
        self.progress_bar.setRange(0, 1)
        self.progress_bar.setValue(0)
        self.progress_bar.setFormat(f"cancelled after {len(result.merges):,} merges")
        self.stat_labels["eta"].setText("–")
        self._show_summary(result)
        self.status_message.emit("Training cancelled.")

    @Slot(object)
    def _on_runner_errored(self, exc: BaseException) -> None:
        self._finish_display("failed", "Failed")
        self.progress_bar.setRange(0, 1)
        self.progress_bar.setValue(0)
        self.progress_bar.setFormat("")
        self.stat_labels["eta"].setText("–")
        self.show_error("Training failed", describe_error(exc))

    def _enter_training_mode(self) -> None:
        """Tune the interpreter for a GUI thread beside a worker thread (undone when the run ends).

        * A short GIL switch interval (:data:`GIL_SWITCH_INTERVAL`), so that the GUI thread gets the GIL
          back quickly for each Python callback of a paint.
        * No automatic garbage collection: it would run in whichever thread allocates, often the worker
          (which unpickles every event), and a collection there may destroy Qt objects of the GUI thread
          (Qt warns "Timers cannot be started from another thread", or worse). Events make no reference
          cycles, so little accumulates, and it is collected as usual once the run is over.
        """
        if self._saved_interpreter is None:
            self._saved_interpreter = (sys.getswitchinterval(), gc.isenabled())
            gc.disable()
            sys.setswitchinterval(min(self._saved_interpreter[0], GIL_SWITCH_INTERVAL))

    def _leave_training_mode(self) -> None:
        if self._saved_interpreter is not None:
            interval, gc_enabled = self._saved_interpreter
            self._saved_interpreter = None
            sys.setswitchinterval(interval)
            if gc_enabled:
                gc.enable()

    @Slot()
    def _on_runner_stopped(self) -> None:
        self._leave_training_mode()
        self._set_running(False)
        self.scanner.resume()
        ended = self._state.ended or "failed"
        self.training_ended.emit(ended)

    # ==============================================================================================
    # Result
    # ==============================================================================================

    def _set_result(self, result: TrainResult | None) -> None:
        self.result = result
        self.save_button.setEnabled(result is not None)
        self.open_button.setEnabled(result is not None)
        if result is None:
            for label in self.summary_labels.values():
                label.setText("–")
        else:
            self._show_summary(result)
        self.result_ready.emit(result)

    def _show_summary(self, result: TrainResult) -> None:
        s = result.stats
        labels = self.summary_labels
        learned = len(result.vocab) - 256 - len(result.special_tokens)
        specials = len(result.special_tokens)
        labels["tokens"].setText(
            f"{len(result.vocab):,} tokens (256 bytes, {learned:,} learned, {specials} special)"
        )
        labels["merges"].setText(f"{len(result.merges):,}")
        config = self.result_config
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

    @Slot()
    def ask_and_save_tokenizer(self) -> None:
        """Ask where and in which format to save the trained tokenizer, and save it."""
        self.save_tokenizer()

    def save_tokenizer(self, path: Path | None = None, fmt: str = "studio") -> Path | None:
        """Save the trained tokenizer in one of the engine's formats; returns the path written.

        With ``path`` None, a file dialog asks where, and in which format (one filter per format).
        """
        result, config = self.result, self.result_config
        if result is None or config is None:
            return None
        if path is None:
            start = self._default_save_path(config)
            chosen, chosen_filter = QFileDialog.getSaveFileName(
                self, "Save tokenizer", os.fspath(start), ";;".join(SAVE_FILTERS)
            )
            if not chosen:
                return None
            path, fmt = Path(chosen), SAVE_FILTERS.get(chosen_filter, "studio")
        try:
            written = save_result(result, config, path, fmt)
        except (OSError, ValueError) as exc:
            self.show_error("Cannot save the tokenizer", describe_error(exc))
            return None
        self.tokenizer_saved.emit(written)
        return written

    @staticmethod
    def _default_save_path(config: TrainConfig) -> Path:
        from .export_job import default_folder  # not the demo's hidden cache folder (a visible one instead)

        first = config.inputs[0]
        return default_folder(near=[first.parent]) / f"{first.stem}-bpe{config.vocab_size}.json"

    @Slot()
    def _on_open_button_clicked(self) -> None:
        if self.result is not None:
            self.open_requested.emit(self.result)

    # ==============================================================================================
    # Search
    # ==============================================================================================

    @Slot(str)
    def _on_search_edit_changed(self, text: str) -> None:
        # The filter proxy is used only while searching: without a search, rows go straight to the view.
        if text:
            self.merges_filter.set_search_text(text)
            if self.merges_table.model() is not self.merges_filter:
                self.merges_table.setModel(self.merges_filter)
            self._update_match_label()
        else:
            if self.merges_table.model() is not self.merges_model:
                self.merges_table.setModel(self.merges_model)
            self.merges_filter.set_search_text("")
            self.match_label.setText("")

    def _update_match_label(self) -> None:
        shown = self.merges_filter.rowCount(QModelIndex())
        self.match_label.setText(f"{shown:,} match{'es' if shown != 1 else ''}")

    # ==============================================================================================
    # Errors
    # ==============================================================================================

    def show_error(self, title: str, message: str) -> None:
        """Show an error in a window-modal message box (without blocking) and emit :attr:`error_shown`."""
        box = open_error_box(self.window(), title, message, name="error_box")
        box.finished.connect(self._on_error_box_finished)
        self.error_box = box
        self.error_shown.emit(title, message)

    @Slot()
    def _on_error_box_finished(self) -> None:
        self.error_box = None


#: The save dialog's filters and the engine format each one writes.
SAVE_FILTERS = {
    "BPE Studio tokenizer (*.json)": "studio",
    "Hugging Face tokenizer.json (*.json)": "hf",
    "tiktoken ranks (*.tiktoken)": "tiktoken",
    "GPT-2 vocab.json + merges.txt (a folder)": "gpt2",
}


def save_result(result: TrainResult, config: TrainConfig, path: Path, fmt: str = "studio") -> Path:
    """Write a trained tokenizer in one of the engine's formats and return what to load it from.

    ``studio`` files also keep how the tokenizer was trained. ``gpt2`` writes a folder (a file name's
    suffix is dropped, as the save dialog offers file names). Every file is written atomically.
    """
    from ..engine.formats import save_result as save_trained

    if fmt == "gpt2" and path.suffix:
        path = path.with_suffix("")
    return save_trained(result, path, format=fmt, config=config)


__all__ = ["REFRESH_MS", "SAVE_FILTERS", "TrainView", "describe_error", "save_result"]
