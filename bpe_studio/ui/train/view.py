"""The "Train" tab: corpus and settings on the left; progress, charts, merges and the result on the right.

The tab is three parts, each in its own module, put together and driven here:

* :class:`~bpe_studio.ui.train.form.TrainForm`: what to train on and how (checked as it is edited);
* :class:`~bpe_studio.ui.train.progress.TrainProgress`: the live status line, charts and merges table;
* :class:`~bpe_studio.ui.train.result.TrainResultBox`: the result's summary, and saving it.

A run is a :class:`~bpe_studio.ui.app.tasks.TaskRunner` running
:func:`~bpe_studio.ui.train.worker.training_task` (the engine runs in a child process); its batches of
events go to the progress part, its end to all three.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QHBoxLayout, QMessageBox, QSplitter, QVBoxLayout, QWidget

from ...engine import StopReason, TrainConfig, TrainResult
from ...engine.humanize import app_hints, app_message, error_message, human_bytes, human_seconds
from ...engine.training.preflight import preflight
from ..app.settings import Settings, TrainSettings
from ..app.tasks import TaskRunner
from ..present.replay_scale import LOG_PACE
from ..widgets.common import open_error_box
from .form import TrainForm
from .learn_view import LearnView
from .progress import REFRESH_MS, TrainProgress
from .result import SAVE_FILTERS, TrainResultBox, ask_save_path, save_result
from .worker import training_task

log = logging.getLogger(__name__)


def describe_error(exc: BaseException) -> str:
    """The message shown for a failed run: the engine's own message where there is one (its fixes naming
    the app's controls, not the command line's options)."""
    return app_hints(error_message(exc))


#: How the demo's run is replayed in Watch BPE learn once training is done: along the log scale, the whole
#: run in 30 s (at 100 merges per second its 65,279 merges took 11 minutes).
DEMO_REPLAY_SPEED = LOG_PACE


class TrainView(QWidget):
    """The training tab.

    The parts' widgets are attributes of the view too (``view.vocab_spin``, ``view.merges_table``,
    ``view.save_button``...), under the names the main window, the tests and the benchmarks use.

    Signals:
        training_started(): A run began.
        training_ended(str): A run ended: ``"finished"``, ``"cancelled"`` or ``"failed"``.
        result_ready(object): A finished run's :class:`TrainResult` (None when a new run starts).
        tokenizer_saved(object): The path a tokenizer was saved to.
        open_requested(object): The user asked to open the trained tokenizer (the ``TrainResult``).
        corpora_chosen(object): Corpus files were added (a list of paths).
        demo_ready(): The demo corpus and settings are in the form (File ▸ Open demo corpus).
        status_message(str): A short message for the status bar.
        error_shown(str, str): An error dialog was opened (title, message).
    """

    training_started = Signal()
    training_ended = Signal(str)
    result_ready = Signal(object)
    tokenizer_saved = Signal(object)
    open_requested = Signal(object)
    corpora_chosen = Signal(object)
    demo_ready = Signal()
    status_message = Signal(str)
    error_shown = Signal(str, str)

    def __init__(self, settings: Settings | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("train_view")
        self.setAcceptDrops(True)
        self.result: TrainResult | None = None
        self.result_config: TrainConfig | None = None
        self.error_box: QMessageBox | None = None
        self._replay_when_done = False  # the demo's run: replay it in Watch BPE learn once it is done
        self._start_demo = False  # the demo corpus is being built: start training on it once it is there
        self._shut_down = False  # the window closed: a demo corpus built since starts nothing

        self.runner = TaskRunner("bpe-studio-train", self)
        # The first demo builds a 33 MB corpus from the interpreter's sources (seconds): off the GUI thread.
        self.demo_runner = TaskRunner("bpe-studio-demo", self)
        self.form = TrainForm(self)
        self.progress = TrainProgress(self)
        self.result_box = TrainResultBox(self)
        self._build()
        self._connect()
        self._name_parts()
        self.apply_settings((settings or Settings()).train)
        self.form.set_running(False)

    # ==============================================================================================
    # Layout and wiring
    # ==============================================================================================

    def _build(self) -> None:
        """Left: the form. Right: the status line above a splitter of the charts and, below them, the
        merges table beside the result."""
        progress = self.progress
        right = QWidget(self)
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(4, 0, 0, 0)
        right_layout.addWidget(progress.status)
        bottom = QWidget(self)
        bottom_layout = QHBoxLayout(bottom)
        bottom_layout.setContentsMargins(0, 0, 0, 0)
        # The merges table the wider: at 3:2 its header was cut off in a 1024-px window (issue 21).
        bottom_layout.addWidget(progress.merges_box, 2)
        bottom_layout.addWidget(self.result_box, 1)
        vertical = QSplitter(Qt.Orientation.Vertical, right)
        vertical.setChildrenCollapsible(False)
        vertical.addWidget(progress.charts)
        vertical.addWidget(bottom)
        vertical.setStretchFactor(0, 5)
        vertical.setStretchFactor(1, 6)
        self.learn_view = LearnView(self, vertical)  # watch BPE learn: follows this view's runs
        self.learn_view.advanced.connect(self._on_learn_view_advanced)
        vertical.insertWidget(1, self.learn_view)
        right_layout.addWidget(vertical, 1)

        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.setChildrenCollapsible(False)
        # The form scrolls its settings itself when the window is short (a 1366×768 laptop, More options
        # open), with Start and Cancel always in view (issue 21).
        self.form.setMaximumWidth(480)
        splitter.addWidget(self.form)
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([360, 1000])
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(splitter)
        self._set_result(None)

    def _connect(self) -> None:
        self.runner.progress.connect(self.progress.add_events)
        self.runner.finished.connect(self._on_runner_finished)
        self.runner.cancelled.connect(self._on_runner_cancelled)
        self.runner.errored.connect(self._on_runner_errored)
        self.runner.idle.connect(self._on_runner_idle)
        self.form.corpora_chosen.connect(self.corpora_chosen)
        self.form.corpus_changed.connect(self._on_form_corpus_changed)
        self.form.message.connect(self.status_message)
        self.demo_runner.finished.connect(self._on_demo_runner_finished)
        self.demo_runner.errored.connect(self._on_demo_runner_errored)
        self.form.start_button.clicked.connect(self.start_training)
        self.form.cancel_button.clicked.connect(self.cancel_training)
        self.result_box.save_button.clicked.connect(self.ask_and_save_tokenizer)
        self.result_box.open_button.clicked.connect(self._on_open_button_clicked)

    def _name_parts(self) -> None:
        """The parts' widgets under the view's own names (see the class docstring)."""
        form, progress, result_box = self.form, self.progress, self.result_box
        self.scanner = form.scanner
        self.files_model, self.files_view = form.files_model, form.files_view
        self.preview_label, self.preview_text = form.preview_label, form.preview_text
        self.vocab_spin, self.workers_spin, self.min_freq_spin = (
            form.vocab_spin,
            form.workers_spin,
            form.min_freq_spin,
        )
        self.specials_model, self.specials_view = form.specials_model, form.specials_view
        self.add_special_button, self.remove_special_button = (
            form.add_special_button,
            form.remove_special_button,
        )
        self.pattern_combo, self.pattern_edit, self.pattern_error = (
            form.pattern_combo,
            form.pattern_edit,
            form.pattern_error,
        )
        self.cluster_edit, self.cluster_error = form.cluster_edit, form.cluster_error
        self.start_button, self.cancel_button = form.start_button, form.cancel_button
        self.phase_label, self.progress_bar = progress.phase_label, progress.progress_bar
        self.stat_labels = progress.stat_labels
        self.charts = progress.charts
        self.search_edit, self.match_label, self.follow_check = (
            progress.search_edit,
            progress.match_label,
            progress.follow_check,
        )
        self.merges_model, self.merges_filter, self.merges_table = (
            progress.merges_model,
            progress.merges_filter,
            progress.merges_table,
        )
        self.summary_labels = result_box.summary_labels
        self.save_button, self.open_button = result_box.save_button, result_box.open_button

    # ==============================================================================================
    # The form (see TrainForm)
    # ==============================================================================================

    def corpus_files(self) -> list[Path]:
        """The corpus files in the list."""
        return self.form.corpus_files()

    def special_tokens(self) -> list[str]:
        """The special tokens in the list."""
        return self.form.special_tokens()

    def set_corpus_files(self, paths: Sequence[Path]) -> None:
        """Replace the corpus files."""
        self.form.set_corpus_files(paths)

    def add_corpus_files(self, paths: Sequence[Path]) -> None:
        """Add corpus files (ones already listed are not repeated)."""
        self.form.add_corpus_files(paths)

    @Slot()
    def choose_corpus_files(self) -> None:
        """Ask for corpus files with a file dialog."""
        self.form.choose_corpus_files()

    def pattern(self) -> str:
        """The pattern to train with: a preset's name, or the custom regex."""
        return self.form.pattern()

    def set_pattern(self, pattern: str) -> None:
        """Show a preset (by name or regex) or a custom regex."""
        self.form.set_pattern(pattern)

    @property
    def pattern_problem(self) -> str:
        """The inline pattern error shown, or empty when the pattern is valid."""
        return self.form.pattern_problem

    def cluster(self) -> str | None:
        """The Dask cluster address typed in the advanced setting, or None for this machine."""
        return self.form.cluster()

    def form_settings(self) -> TrainSettings:
        """The form's values, for the settings file."""
        return self.form.form_settings()

    def apply_settings(self, train: TrainSettings) -> None:
        """Fill the form (corpus files that no longer exist are left out)."""
        self.form.apply_settings(train)

    def build_config(self) -> TrainConfig:
        """The training configuration of the form; raises ``ValueError`` (naming the field) when invalid."""
        return self.form.build_config()

    # ---- drag and drop ----------------------------------------------------------------------------

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 - Qt's name
        """Accept local files."""
        urls = event.mimeData().urls() if event.mimeData().hasUrls() else []
        if urls and all(url.isLocalFile() for url in urls) and not self.runner.is_busy():
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 - Qt's name
        """Add dropped files; a folder adds the corpus files under it (as ``bpe-studio train`` does)."""
        paths = [Path(url.toLocalFile()) for url in event.mimeData().urls() if url.isLocalFile()]
        if paths:
            self.add_corpus_files(paths)
            event.acceptProposedAction()

    # ==============================================================================================
    # Running
    # ==============================================================================================

    def is_running(self) -> bool:
        """Whether a training run is in progress."""
        return self.runner.is_busy()

    def load_demo(self, *, start: bool = False) -> None:
        """Fill the form with the demo corpus and settings (and start training when asked)."""
        from ...demo import demo_corpus

        if self.is_running() or self.demo_runner.is_busy():
            return
        # The first time, the corpus is built from the interpreter's sources (a few seconds): in a thread,
        # the window painting and answering meanwhile.
        self._start_demo = start
        self.status_message.emit("Preparing the demo corpus…")
        self.demo_runner.start(lambda _ctx: demo_corpus())

    @Slot(object)
    def _on_demo_runner_finished(self, path: Path) -> None:
        from ...demo import DEMO_SPECIAL_TOKEN, DEMO_VOCAB_SIZE

        start, self._start_demo = self._start_demo, False
        if self.is_running() or self._shut_down:
            return
        self.apply_settings(
            TrainSettings(
                inputs=[os.fspath(path)], vocab_size=DEMO_VOCAB_SIZE, special_tokens=[DEMO_SPECIAL_TOKEN]
            )
        )
        self.status_message.emit("The demo corpus is ready.")
        self.demo_ready.emit()
        if start:
            # The native kernel trains the demo in seconds: once it is done, the run replays merge by merge at
            # a pace a person can follow, so that the demo shows BPE learning rather than only its result.
            self._replay_when_done = self.start_training()

    @Slot(object)
    def _on_demo_runner_errored(self, exc: BaseException) -> None:
        self._start_demo = False
        self.show_error("Cannot write the demo corpus", describe_error(exc))

    def is_preparing_demo(self) -> bool:
        """Whether the demo corpus is being built."""
        return self.demo_runner.is_busy()

    @Slot()
    def start_training(self) -> bool:
        """Validate the form and start a run; shows an error dialog and returns False when it cannot."""
        self._replay_when_done = False
        if self.is_running():
            return False
        if self.form.start_problem:  # (Start is disabled then; this is for callers other than it)
            self.show_error("Cannot start training", self.form.start_problem)
            return False
        try:
            config = self.build_config()
            preflight(config)  # the checks that read files (TrainConfig itself reads none)
        except ValueError as exc:
            self.show_error("Cannot start training", app_message(str(exc)))
            return False
        # Measured before the run starts: a file removed once it runs is the run's error to report.
        try:
            size = sum(p.stat().st_size for p in config.inputs)
        except OSError as exc:
            self.show_error("Cannot start training", describe_error(exc))
            return False
        self._set_result(None)
        self.result_config = config
        self.corpora_chosen.emit(list(config.inputs))
        self.progress.begin(config)
        self.runner.start(training_task(config))
        self.form.set_running(True)
        self.training_started.emit()
        source = (
            human_bytes(size)
            if config.inputs
            else next(p.name for p in (config.counts_in, config.resume) if p)
        )
        self.status_message.emit(f"Training on {source} to {config.vocab_size:,} tokens…")
        return True

    @Slot()
    def cancel_training(self) -> None:
        """Ask the run to stop; the view updates when the worker reports it stopped."""
        if self.is_running() and not self.progress.ended:
            self.runner.cancel()
            self.cancel_button.setEnabled(False)
            self.progress.set_cancelling()

    def shutdown(self, timeout_ms: int = 10_000) -> None:
        """Cancel a run and wait for its thread (when the window closes); a demo corpus being built is
        waited for too, and starts nothing."""
        self._shut_down = True
        self.progress.stop()
        self.scanner.stop()
        if self.is_running():
            self.runner.shutdown(timeout_ms)  # (it logs a thread that does not stop in time)
        if self.demo_runner.is_busy():
            self.demo_runner.shutdown(timeout_ms)
        if self.form.base_runner.is_busy():  # ("Start from"'s tokenizer, being opened)
            self.form.base_runner.shutdown(timeout_ms)

    @Slot(object)
    def _on_runner_finished(self, result: TrainResult) -> None:
        self.progress.show_finished(result)
        self._set_result(result)
        self.status_message.emit(
            f"Trained {len(result.vocab):,} tokens in {human_seconds(result.timings.get('total', 0.0))}."
        )

    @Slot(object)
    def _on_runner_cancelled(self, result: TrainResult | None) -> None:
        if result is not None and result.stop_reason is not StopReason.CANCELLED:
            # Cancel came as the run ended by itself: the result is whole, and shown as finished.
            self._on_runner_finished(result)
            return
        self.progress.show_cancelled(result)
        if result is not None and len(result.merges) > result.base_merges:
            # The merges made until then are a tokenizer like any other (a smaller vocabulary): it can be
            # saved and opened. (Cancelled while counting, it would be the 256 bytes alone, or the tokenizer
            # it extends unchanged: shown only.)
            self._set_result(result)
        elif result is not None:
            self.result_box.show_summary(result, self.result_config)
        self.status_message.emit("Training cancelled.")

    @Slot(object)
    def _on_runner_errored(self, exc: BaseException) -> None:
        self.progress.show_failed()
        self.show_error("Training failed", describe_error(exc))

    @Slot()
    def _on_form_corpus_changed(self) -> None:
        # A failed run's "Failed" belongs to the corpus it failed on: a new corpus starts afresh.
        if self.progress.ended == "failed" and not self.is_running():
            self.progress.reset_display()
            self.learn_view.clear_run()  # (its sample was the failed corpus's text)

    @Slot(int)
    def _on_learn_view_advanced(self, merges: int) -> None:
        # After a run, the charts and the merges table show where the replay (or the slider) is; while
        # training, or with no run's merges (a theme change redraws the view), nothing.
        if self.is_running() or not self.progress.charts.merge_count:
            self.progress.charts.show_replay_position(None)
            return
        self.progress.charts.show_replay_position(merges)
        self.progress.show_merge(merges - 1 - self.progress.merges_model.first_merge)

    @Slot()
    def _on_runner_idle(self) -> None:
        self.form.set_running(False)
        ended = self.progress.ended or "failed"
        self.training_ended.emit(ended)
        if self._replay_when_done and ended == "finished":
            self.learn_view.replay(speed=DEMO_REPLAY_SPEED)
        self._replay_when_done = False

    # ==============================================================================================
    # Result
    # ==============================================================================================

    def _set_result(self, result: TrainResult | None) -> None:
        self.result = result
        self.result_box.set_result(result, self.result_config)
        self.result_ready.emit(result)

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
            chosen = ask_save_path(self, config)
            if chosen is None:
                return None
            path, fmt = chosen
        try:
            written = save_result(result, config, path, fmt)
        except (OSError, ValueError) as exc:
            self.show_error("Cannot save the tokenizer", describe_error(exc))
            return None
        self.tokenizer_saved.emit(written)
        return written

    @Slot()
    def _on_open_button_clicked(self) -> None:
        if self.result is not None:
            self.open_requested.emit(self.result)

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


__all__ = ["REFRESH_MS", "SAVE_FILTERS", "TrainView", "describe_error", "save_result"]
