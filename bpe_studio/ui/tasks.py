"""Background work for the tokenizer views: one function at a time on a ``QThread``, the newest request wins.

Loading a tokenizer file, encoding the playground's text, computing the vocab-size curve and exporting all
run here, so the GUI thread only applies results. A :class:`TaskRunner` runs one task at a time on a fresh
``QThread`` (like the Train tab's runner); :meth:`TaskRunner.start` while a task runs asks that task to stop
and queues the new one, whose result is the only one reported: a stale result never reaches the views.

A task is a function of a :class:`TaskContext`: it can report progress and should call
:meth:`TaskContext.check` now and then, which raises :class:`TaskCancelledError` once it should stop.

Example:
    >>> runner = TaskRunner()  # doctest: +SKIP
    >>> runner.finished.connect(print)  # doctest: +SKIP
    >>> runner.start(lambda ctx: sum(range(10)))  # doctest: +SKIP
"""

from __future__ import annotations

import gc
import logging
import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, QThread, QTimer, Signal, Slot

from .common import start_in_thread

log = logging.getLogger(__name__)


#: Milliseconds between two checks of the main-thread garbage collector.
GC_INTERVAL_MS = 1000


class MainThreadGarbageCollector(QObject):
    """Runs Python's cyclic garbage collector on the GUI thread only.

    Python collects cycles in whichever thread happens to allocate when a threshold is crossed, so a worker
    thread can end up destroying Qt objects that live in the GUI thread: with PySide6 that gives Qt warnings
    ("Timers cannot be stopped from another thread"), or a deadlock when the GUI thread destroys connected
    objects at the same time. So automatic collection is switched off and this timer collects on the GUI
    thread instead, with the interpreter's usual thresholds (the approach of calibre's GarbageCollector).
    Reference counting still frees everything that is not in a cycle at once, as before.
    """

    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self.thresholds = gc.get_threshold()
        gc.disable()
        self.timer = QTimer(self)
        self.timer.setInterval(GC_INTERVAL_MS)
        self.timer.timeout.connect(self.check)
        self.timer.start()

    @Slot()
    def check(self) -> None:
        """Collect the generations whose allocation counts passed their thresholds."""
        first, second, third = gc.get_count()
        if first > self.thresholds[0]:
            gc.collect(0)
            if second > self.thresholds[1]:
                gc.collect(1)
                if third > self.thresholds[2]:
                    gc.collect(2)


def install_main_thread_gc() -> MainThreadGarbageCollector | None:
    """Collect garbage on the GUI thread only; installed once per application (see the class above)."""
    app = QCoreApplication.instance()
    if app is None:
        return None
    found = app.findChild(MainThreadGarbageCollector)
    if isinstance(found, MainThreadGarbageCollector):
        return found
    collector = MainThreadGarbageCollector(app)
    collector.setObjectName("bpe-studio-gc")
    return collector


class TaskCancelledError(Exception):
    """Raised by :meth:`TaskContext.check` inside a task that should stop."""


class TaskContext:
    """What a running task sees: a cancellation flag and a way to report progress."""

    def __init__(self, worker: _TaskWorker) -> None:
        self._worker = worker

    @property
    def cancelled(self) -> bool:
        """Whether the task was asked to stop."""
        return self._worker.cancel_event.is_set()

    def check(self) -> None:
        """Raise :class:`TaskCancelledError` if the task was asked to stop."""
        if self._worker.cancel_event.is_set():
            raise TaskCancelledError

    def progress(self, value: object) -> None:
        """Report progress (delivered to the GUI thread as ``TaskRunner.progress``)."""
        self._worker.progress.emit(value)


Task = Callable[[TaskContext], Any]
"""A function run on the worker thread; its return value is reported by ``finished``."""


class _TaskWorker(QObject):
    progress = Signal(object)
    finished = Signal(object)
    errored = Signal(object)
    cancelled = Signal()

    def __init__(self, task: Task) -> None:
        super().__init__()
        self.task = task
        self.cancel_event = threading.Event()

    @Slot()
    def run(self) -> None:
        try:
            result = self.task(TaskContext(self))
        except TaskCancelledError:
            self.cancelled.emit()
        except BaseException as exc:
            self.errored.emit(exc)
        else:
            if self.cancel_event.is_set():
                self.cancelled.emit()
            else:
                self.finished.emit(result)
        finally:
            # Hand the object back to the GUI thread, so that it can be deleted there after the thread ends.
            app = QCoreApplication.instance()
            if app is not None:
                self.moveToThread(app.thread())


class TaskRunner(QObject):
    """Runs one task at a time on a fresh ``QThread``; a new request supersedes the running one.

    Args:
        name: The thread's name (shown by debuggers).

    Signals:
        progress(object): A running task's progress report.
        finished(object): The latest task returned (its return value).
        errored(object): The latest task raised (the exception).
        cancelled(): The latest task was cancelled with :meth:`cancel`.
        idle(): No task runs or waits any more (after one of the three above).
    """

    progress = Signal(object)
    finished = Signal(object)
    errored = Signal(object)
    cancelled = Signal()
    idle = Signal()

    def __init__(self, name: str = "bpe-studio-task", parent: QObject | None = None) -> None:
        super().__init__(parent)
        install_main_thread_gc()
        self._name = name
        self._thread: QThread | None = None
        self._worker: _TaskWorker | None = None
        self._pending: Task | None = None

    def is_busy(self) -> bool:
        """Whether a task runs or waits."""
        return self._thread is not None or self._pending is not None

    def start(self, task: Task) -> None:
        """Run ``task``; if one is running, ask it to stop and run ``task`` after it."""
        self._pending = task
        if self._thread is None:
            self._launch()
        elif self._worker is not None:
            self._worker.cancel_event.set()

    def cancel(self) -> None:
        """Ask the running task to stop and drop a waiting one; ``cancelled`` follows."""
        self._pending = None
        if self._worker is not None:
            self._worker.cancel_event.set()

    def shutdown(self, timeout_ms: int = 10_000) -> bool:
        """Cancel everything and wait for the thread to end (when the window closes); False on timeout."""
        self.cancel()
        thread = self._thread
        if thread is None:
            return True
        if not thread.wait(timeout_ms):
            log.warning("the %s thread did not stop within %d ms", self._name, timeout_ms)
            return False
        # Deliver the queued signals of the ended task now, so nothing refers to the thread afterwards.
        QCoreApplication.sendPostedEvents(self)
        if self._worker is not None:
            QCoreApplication.sendPostedEvents(self._worker)
        self._on_thread_finished()
        return True

    def _launch(self) -> None:
        task, self._pending = self._pending, None
        assert task is not None
        worker = _TaskWorker(task)
        thread = start_in_thread(worker, self._name)
        worker.progress.connect(self._on_worker_progress)
        worker.finished.connect(self._on_worker_finished)
        worker.errored.connect(self._on_worker_errored)
        worker.cancelled.connect(self._on_worker_cancelled)
        thread.finished.connect(self._on_thread_finished)
        self._thread, self._worker = thread, worker
        thread.start()

    def _is_current(self) -> bool:
        # A result counts only if it comes from the running worker and nothing newer waits.
        return self._pending is None and self.sender() is self._worker

    @Slot(object)
    def _on_worker_progress(self, value: object) -> None:
        if self._is_current() and self._worker is not None and not self._worker.cancel_event.is_set():
            self.progress.emit(value)

    @Slot(object)
    def _on_worker_finished(self, result: object) -> None:
        if self._is_current():
            self.finished.emit(result)

    @Slot(object)
    def _on_worker_errored(self, exc: object) -> None:
        if self._is_current():
            self.errored.emit(exc)

    @Slot()
    def _on_worker_cancelled(self) -> None:
        if self._is_current():
            self.cancelled.emit()

    @Slot()
    def _on_thread_finished(self) -> None:
        thread = self._thread
        if thread is None:
            return
        thread.wait()  # `finished` is emitted just before the thread really ends
        self._thread, self._worker = None, None
        if self._pending is not None:
            self._launch()
        else:
            self.idle.emit()


__all__ = [
    "MainThreadGarbageCollector",
    "Task",
    "TaskCancelledError",
    "TaskContext",
    "TaskRunner",
    "install_main_thread_gc",
]
