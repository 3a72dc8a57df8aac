"""Running a training from a ``QThread``: one worker relays the engine's progress events as signals.

:class:`TrainWorker` lives on its own thread. By default it runs the engine's event iterator in a child
process (:mod:`bpe_studio.ui.train_process`), so that the GUI never waits for the merge loop's GIL, and
relays the events it streams; given an ``iter_train_fn`` it drives that iterator in its own thread instead
(tests use it to inject failures). Either way it emits batched ``progress`` signals (one list of events at
most every ``batch_interval`` seconds: per-merge events come thousands of times a second), and every
exception becomes an ``errored`` signal. Cancellation is a :class:`threading.Event`; in a child process
it is forwarded as a message, and the child passes it to the engine as ``cancel``.

:class:`TrainRunner` owns the thread and the worker of one run at a time, relays their signals, and tears
both down when the run ends.

Example:
    >>> runner = TrainRunner()  # doctest: +SKIP
    >>> runner.finished.connect(print)  # doctest: +SKIP
    >>> runner.start(TrainConfig(inputs=["corpus.txt"], vocab_size=1000))  # doctest: +SKIP
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

from PySide6.QtCore import QCoreApplication, QObject, QThread, Signal, Slot

from ..engine import CorpusDecodeError, Finished, MergeMade, StopReason, TrainConfig, TrainEvent, TrainResult
from .common import start_in_thread
from .train_process import BATCH_INTERVAL, TrainingProcess, TrainingProcessError

IterTrain = Callable[..., Iterator[TrainEvent]]


class TrainWorker(QObject):
    """Runs a training (in a child process, or ``iter_train_fn`` in this thread) and reports by signals.

    Signals:
        progress(list): A batch of progress events (every event but ``Finished``), in order.
        finished(TrainResult): The run completed.
        cancelled(TrainResult): The run was cancelled; the result holds the merges made until then.
        errored(BaseException): The run failed; the exception carries the engine's message.
    """

    progress = Signal(object)
    finished = Signal(object)
    cancelled = Signal(object)
    errored = Signal(object)

    def __init__(
        self,
        config: TrainConfig,
        *,
        batch_interval: float = BATCH_INTERVAL,
        iter_train_fn: IterTrain | None = None,
    ) -> None:
        super().__init__()
        self.config = config
        self.batch_interval = batch_interval
        self._iter_train = iter_train_fn
        self._cancel = threading.Event()
        self._child: TrainingProcess | None = None
        self._child_lock = threading.Lock()

    def request_cancel(self) -> None:
        """Ask the run to stop; safe to call from any thread."""
        self._cancel.set()
        with self._child_lock:
            if self._child is not None:
                self._child.cancel()

    @property
    def cancel_requested(self) -> bool:
        """Whether :meth:`request_cancel` was called."""
        return self._cancel.is_set()

    @Slot()
    def run(self) -> None:
        """Run the training to its end, emitting signals; never raises."""
        try:
            if self._iter_train is None:
                self._run_child()
            else:
                self._run_here(self._iter_train)
        except BaseException as exc:
            self.errored.emit(exc)
        finally:
            # Hand the object back to the GUI thread, so that it can be deleted there after the thread ends.
            app = QCoreApplication.instance()
            if app is not None:
                self.moveToThread(app.thread())

    def _end(self, result: TrainResult) -> None:
        if result.stop_reason is StopReason.CANCELLED:
            self.cancelled.emit(result)
        else:
            self.finished.emit(result)

    def _run_child(self) -> None:
        """Start the child process and relay its messages (it batches the events itself)."""
        child = TrainingProcess(self.config)
        with self._child_lock:
            self._child = child
        if self._cancel.is_set():
            child.cancel()
        try:
            for kind, *payload in child.messages():
                if kind == "events":
                    self.progress.emit(payload[0])
                elif kind == "finished":
                    self._end(payload[0])
                    return
                elif kind == "decode_error":
                    raise CorpusDecodeError(*payload)
                else:
                    error = payload[0]
                    raise error if isinstance(error, BaseException) else TrainingProcessError(str(error))
        finally:
            with self._child_lock:
                self._child = None
            child.stop()

    def _run_here(self, iter_train_fn: IterTrain) -> None:
        """Drive an event iterator in this thread."""
        events = iter_train_fn(self.config, cancel=self._cancel.is_set)
        batch: list[TrainEvent] = []
        interval = self.batch_interval
        clock = time.perf_counter
        last_emit = clock()
        merge_type = MergeMade
        try:
            for event in events:
                if type(event) is merge_type:
                    batch.append(event)
                    now = clock()
                    if now - last_emit < interval:
                        continue
                elif isinstance(event, Finished):
                    if batch:
                        self.progress.emit(batch)
                        batch = []
                    self._end(event.result)
                    return
                else:
                    batch.append(event)
                    now = clock()
                self.progress.emit(batch)
                batch = []
                last_emit = now
        finally:
            # Closing the generator stops the counting processes at once, however the loop ended.
            close = getattr(events, "close", None)
            if close is not None:
                close()
        raise TrainingProcessError("the training ended without a result")


class TrainRunner(QObject):
    """Runs one :class:`TrainWorker` at a time on a fresh ``QThread`` and relays its signals.

    Signals:
        progress(list), finished(TrainResult), cancelled(TrainResult), errored(BaseException): As
            :class:`TrainWorker`'s, delivered in the GUI thread.
        stopped(): The run's thread has ended (after one of finished, cancelled or errored).
    """

    progress = Signal(object)
    finished = Signal(object)
    cancelled = Signal(object)
    errored = Signal(object)
    stopped = Signal()

    def __init__(self, parent: QObject | None = None, *, iter_train_fn: IterTrain | None = None) -> None:
        super().__init__(parent)
        self._iter_train = iter_train_fn
        self._thread: QThread | None = None
        self._worker: TrainWorker | None = None

    @property
    def thread_(self) -> QThread | None:
        """The running run's thread, or None."""
        return self._thread

    def is_running(self) -> bool:
        """Whether a run's thread exists (it may be finishing)."""
        return self._thread is not None

    def start(self, config: TrainConfig) -> None:
        """Start a run; raises ``RuntimeError`` if one is still running."""
        if self._thread is not None:
            raise RuntimeError("a training is already running; cancel it first")
        worker = TrainWorker(config, iter_train_fn=self._iter_train)
        thread = start_in_thread(worker, "bpe-studio-train")
        worker.progress.connect(self.progress)
        worker.finished.connect(self.finished)
        worker.cancelled.connect(self.cancelled)
        worker.errored.connect(self.errored)
        thread.finished.connect(self._on_thread_finished)
        self._thread, self._worker = thread, worker
        thread.start()

    def cancel(self) -> None:
        """Ask the running run to stop (no-op when none runs); the engine stops within its next step."""
        if self._worker is not None:
            self._worker.request_cancel()

    def wait(self, timeout_ms: int = 10_000) -> bool:
        """Block until the run's thread ends; returns False on timeout. Used when the app closes."""
        thread = self._thread
        if thread is None:
            return True
        if not thread.wait(timeout_ms):
            return False
        # Deliver the queued end-of-run signals now, so nothing refers to the thread afterwards.
        QCoreApplication.sendPostedEvents(self)
        self._on_thread_finished()
        return True

    @Slot()
    def _on_thread_finished(self) -> None:
        thread = self._thread
        if thread is None:
            return
        thread.wait()  # `finished` is emitted just before the thread really ends
        self._thread, self._worker = None, None
        self.stopped.emit()


__all__ = ["BATCH_INTERVAL", "TrainRunner", "TrainWorker"]
