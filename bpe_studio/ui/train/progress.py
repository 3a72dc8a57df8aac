"""The Train tab's live progress: the status line (phase, progress bar, rates, ETA), the charts and the
merges table, fed from a run's batches of events.

Batches are only buffered by :meth:`TrainProgress.add_events`. A 50 ms timer updates the labels a few
times a second and redraws the charts or the table, each as often as its cost allows
(:data:`GUI_CPU_BUDGET`); redraws paint at once, from Python, so that pyqtgraph's and the table model's
many Python callbacks run without handing the GIL back and forth. Nothing is done per merge.

Example (``view`` the app's Train view, ``runner`` the task runner training ``config``)::

    progress = TrainProgress(view)
    progress.begin(config)
    runner.progress.connect(progress.add_events)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QModelIndex, QObject, Qt, QTimer, Slot
from PySide6.QtGui import QFont, QFontDatabase, QFontMetrics
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ...engine import CountProgress, MergeMade, Phase, PhaseStarted, TrainConfig, TrainEvent, TrainResult
from ...engine.humanize import RunMeter, bytes_rate, clock, human_bytes, merge_rate, time_left
from ..app.style import STATUS_BACKGROUND, opaque
from ..widgets.common import Caption
from .charts import StepRate, TrainCharts
from .merges_model import MergesFilterModel, MergesTableModel

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
#: Seconds a throughput sample spans (shorter gaps are merged into the next sample).
RATE_WINDOW = 0.25
#: The same for counting, whose progress arrives a chunk at a time (a few per second), often in bursts.
BYTES_RATE_WINDOW = 1.0

_PHASE_TEXT = {
    Phase.PLANNING: "Planning chunks",
    Phase.COUNTING: "Counting pre-tokens",
    Phase.MERGING: "Merging",
}


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
    cancelling: bool = False


class TrainProgress(QObject):
    """The live view of a run: builds the status line (:attr:`status`), the charts (:attr:`charts`) and
    the merges box (:attr:`merges_box`) as children of ``parent``, which lays them out."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self._config: TrainConfig | None = None
        self._reset_state()
        self.refresh_timer = QTimer(self)
        self.refresh_timer.setInterval(REFRESH_MS)
        # Precise: a coarse timer may be moved to fire with the Watch-BPE-learn view's (same interval), and
        # the two redraws in one turn of the event loop are the GUI's longest stall (see LearnView).
        self.refresh_timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.refresh_timer.timeout.connect(self._on_refresh_timer_timeout)
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.status = self._build_status(parent)
        self.charts = TrainCharts(parent)
        self.charts.setMinimumHeight(140)  # lower, the window would not fit 1024×640 (issue 21)
        self.merges_box = self._build_merges_box(parent, mono)

    # ==============================================================================================
    # Layout
    # ==============================================================================================

    def _build_status(self, parent: QWidget) -> QFrame:
        status = QFrame(parent)
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
        # Each as wide as its longest text, not more: four of 130 px kept the window from 1024 px (issue 21).
        captions = (
            ("bytes", "Counting", "999.9 MB/s"),
            ("merges", "Merging", "999,999 merges/s"),
            ("elapsed", "Elapsed", "99:59:59"),
            ("eta", "ETA", "99:59:59 (counting)"),
        )
        for key, caption, longest in captions:
            stats_row.addWidget(Caption(caption, status))
            value = QLabel("–", status)
            value.setObjectName(f"stat_{key}")
            value.setFixedSize(value.fontMetrics().horizontalAdvance(longest) + 8, value.sizeHint().height())
            opaque(value, STATUS_BACKGROUND)
            stats_row.addWidget(value)
            self.stat_labels[key] = value
        self.stat_labels["bytes"].setToolTip("Corpus bytes pre-tokenized per second")
        self.stat_labels["merges"].setToolTip("Merges made per second since the first merge")
        self.stat_labels["eta"].setToolTip("Estimated time to the end of the current phase")
        stats_row.addStretch(1)
        return status

    def _build_merges_box(self, parent: QWidget, mono: QFont) -> QGroupBox:
        merges_box = QGroupBox("Merges", parent)
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
        self.merges_table.verticalHeader().setDefaultSectionSize(parent.fontMetrics().height() + 6)
        header = self.merges_table.horizontalHeader()
        header.setStretchLastSection(False)
        # The numbers as wide as their figures, the tokens sharing the rest: fixed widths summed to 570 px,
        # wider than the table in a 1024 px window, and the header was cut off (issue 21).
        figures = QFontMetrics(mono)
        for column, widest in ((MergesTableModel.RANK, "999,999"), (MergesTableModel.COUNT, "9,999,999")):
            title = MergesTableModel.COLUMNS[column]
            width = max(
                figures.horizontalAdvance(widest) + 12, header.fontMetrics().horizontalAdvance(title) + 16
            )
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
            self.merges_table.setColumnWidth(column, width)
        for column in (MergesTableModel.LEFT, MergesTableModel.RIGHT, MergesTableModel.TOKEN):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Stretch)
        merges_layout.addWidget(self.merges_table)
        return merges_box

    # ==============================================================================================
    # A run's life
    # ==============================================================================================

    def _reset_state(self) -> None:
        self._state = _RunState()
        self._pending_merges: list[MergeMade] = []
        self._table_backlog: list[MergeMade] = []
        # When the table, the status labels and the charts are next due (perf_counter seconds).
        self._due: dict[str, float] = dict.fromkeys(("table", "status", "charts"), 0.0)
        self._bytes_meter = StepRate(BYTES_RATE_WINDOW)
        self._merge_meter = StepRate(RATE_WINDOW)
        self._run_meter = RunMeter()  # the rates and time left shown (the CLI's numbers)

    def begin(self, config: TrainConfig) -> None:
        """Clear what the previous run showed and follow a new run of ``config``."""
        self._config = config
        self._reset_state()
        self.merges_model.clear()
        transition = config.superword_transition
        superword_from = None if transition is None else transition - 256 - len(config.special_tokens)
        self.merges_model.superword_from = superword_from
        # An extend run's merges follow the tokenizer's own: its first is merge number base + 1.
        first = len(config.extend.merges) if config.extend is not None else 0
        self.merges_model.first_merge = first
        self.charts.reset(first_merge=first)
        self.charts.set_transition(superword_from)
        self.progress_bar.setRange(0, 1000)
        self.progress_bar.setValue(0)
        self.progress_bar.setFormat("")
        for label in self.stat_labels.values():
            label.setText("–")
        self._state.started = time.perf_counter()
        self.phase_label.setText("Starting")
        self.refresh_timer.start()

    def reset_display(self) -> None:
        """Show no run (after a failed run, when the corpus changes): "Ready", an empty bar and charts."""
        self._reset_state()
        self.refresh_timer.stop()
        self.merges_model.clear()
        self.merges_model.first_merge = 0
        self.merges_model.superword_from = None
        self.charts.reset()
        self.progress_bar.setRange(0, 1000)
        self.progress_bar.setValue(0)
        self.progress_bar.setFormat("")
        for label in self.stat_labels.values():
            label.setText("–")
        self.phase_label.setText("Ready")

    def set_cancelling(self) -> None:
        """Show that the run was asked to stop."""
        self._state.cancelling = True
        self.phase_label.setText("Cancelling…")

    def stop(self) -> None:
        """Stop refreshing (the window closes)."""
        self.refresh_timer.stop()

    @Slot(object)
    def add_events(self, events: list[TrainEvent]) -> None:
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
            if event.phase is Phase.MERGING and self._config is not None:
                config = self._config
                if config.extend is not None:  # (the vocab size counts the tokenizer's tokens)
                    state.merges_total = config.vocab_size - len(config.extend.vocab)
                else:
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

    # ==============================================================================================
    # Refreshing
    # ==============================================================================================

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
        if state.phase is Phase.COUNTING and not state.bytes_total:
            # Before the first chunk is counted there are no figures: "0 B of 0 B" would be one.
            self.phase_label.setText(_PHASE_TEXT[Phase.COUNTING])
            bar.setRange(0, 0)
            bar.setFormat("")
        elif state.phase is Phase.COUNTING:
            share = state.bytes_done / max(state.bytes_total, 1)
            self.phase_label.setText(_PHASE_TEXT[Phase.COUNTING])
            bar.setRange(0, 1000)
            bar.setValue(int(share * 1000))
            text = f"{human_bytes(state.bytes_done)} of {human_bytes(state.bytes_total)}"
            if state.unique:  # workers' tables overlap: a lower bound
                text += f" · at least {state.unique:,} unique pre-tokens"
            bar.setFormat(text)
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
                new = " new" if self._config is not None and self._config.extend is not None else ""
                bar.setFormat(f"{state.merges_done:,} of {state.merges_total:,}{new} merges")
                left = self._run_meter.time_left()  # merges speed up: see RunMeter
                if left is not None:
                    labels["eta"].setText(clock(left))
        elif state.phase is Phase.PLANNING:
            self.phase_label.setText(_PHASE_TEXT[Phase.PLANNING])
            bar.setRange(0, 0)
        if state.cancelling:
            self.phase_label.setText("Cancelling…")

    # ==============================================================================================
    # The end of a run
    # ==============================================================================================

    def _finish_display(self, ended: str, phase_text: str) -> None:
        self._take_merges(final=True)
        self._flush_table()
        self._state.ended = ended
        self.refresh_timer.stop()
        self._update_status()
        self.charts.refresh()
        self.phase_label.setText(phase_text)

    def show_finished(self, result: TrainResult) -> None:
        """The run completed: show its last figures."""
        self._state.last_event_time = result.timings.get("total", self._state.last_event_time)
        self._finish_display("finished", "Finished")
        self.progress_bar.setRange(0, 1)
        self.progress_bar.setValue(1)
        self.progress_bar.setFormat(f"{len(result.merges):,} merges · {len(result.vocab):,} tokens")
        self.stat_labels["eta"].setText("done")

    def show_cancelled(self, result: TrainResult | None) -> None:
        """The run was cancelled (``result`` holds the merges made until then)."""
        self._finish_display("cancelled", "Cancelled")
        self.progress_bar.setRange(0, 1)
        self.progress_bar.setValue(0)
        if result is None:
            self.progress_bar.setFormat("")
        else:  # (an extend run: its merges after the tokenizer's own)
            new = len(result.merges) - result.base_merges
            self.progress_bar.setFormat(
                f"cancelled after {new:,}{' new' if result.base_merges else ''} merges"
            )
        self.stat_labels["eta"].setText("–")

    def show_failed(self) -> None:
        """The run failed (the view shows why)."""
        self._finish_display("failed", "Failed")
        self.progress_bar.setRange(0, 1)
        self.progress_bar.setValue(0)
        self.progress_bar.setFormat("")
        self.stat_labels["eta"].setText("–")

    @property
    def ended(self) -> str:
        """How the run shown ended: ``""`` (not yet), ``"finished"``, ``"cancelled"`` or ``"failed"``."""
        return self._state.ended

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

    def show_merge(self, row: int) -> None:
        """Select the merge at ``row`` (0-based; -1: none) in the table and scroll to it (the replay's)."""
        table = self.merges_table
        if row < 0 or row >= self.merges_model.rowCount():
            table.clearSelection()
            return
        index = self.merges_model.index(row, 0)
        if table.model() is self.merges_filter:
            index = self.merges_filter.mapFromSource(index)
            if not index.isValid():  # not among the search's matches
                table.clearSelection()
                return
        table.selectRow(index.row())
        table.scrollTo(index)

    def _update_match_label(self) -> None:
        shown = self.merges_filter.rowCount(QModelIndex())
        self.match_label.setText(f"{shown:,} match{'es' if shown != 1 else ''}")


__all__ = ["REFRESH_MS", "TrainProgress"]
