"""Background work: one worker abstraction that runs every long job of the app on a ``QThread``.

Loading a tokenizer file, encoding the playground's text, computing the vocab-size curve, exporting and
training all run here, so the GUI thread only applies results. A :class:`TaskRunner` runs one task at a
time on a fresh ``QThread``; :meth:`TaskRunner.start` while a task runs asks that task to stop and queues
the new one, whose result is the only one reported: a stale result never reaches the views.

A task is a function of a :class:`TaskContext` (napari/superqt's ``GeneratorWorker`` model):

* a plain function reports progress with :meth:`TaskContext.progress`, calls :meth:`TaskContext.check`
  now and then (it raises :class:`TaskCancelledError` once the task should stop) and returns its result;
* a generator function yields its progress steps and returns its result. Cancellation is a flag checked
  between steps: once it is set, :class:`TaskCancelledError` is raised at the generator's ``yield`` (as
  asyncio raises ``CancelledError`` at an ``await``). A generator that can wind down on its own (a training
  child reporting the merges made so far) catches it, goes on yielding and returns what it has.

Either way a task's exception becomes an ``errored`` signal, and a task asked to stop ends with
``cancelled`` (carrying what it returned, or None). :class:`MainThreadGarbageCollector` is installed once,
by the application (:func:`bpe_studio.ui.app.app.create_application`).

Why not superqt's ``GeneratorWorker`` itself: it would be a new dependency for a hundred lines, and the
app needs two things it lacks: a stopped generator that can still return what it has (its ``quit``
abandons the generator at its next yield), and a runner that keeps one task at a time and drops superseded
results.

Example (in a running Qt application)::

    runner = TaskRunner()
    runner.finished.connect(print)
    runner.start(lambda ctx: sum(range(10)))
"""

from __future__ import annotations

import gc
import inspect
import logging
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, Qt, QThread, QTimer, Signal, Slot

log = logging.getLogger(__name__)


#: Milliseconds between two checks of the main-thread garbage collector.
GC_INTERVAL_MS = 1000

#: Seconds the main-thread garbage collector may put off collecting while ``defer_gc`` tasks run without a
#: break. Only a safety valve for a task that never ends: it collects as soon as the last one ends (see
#: :meth:`MainThreadGarbageCollector.on_deferral_ended`), which while a user types is at every keystroke.
GC_MAX_DEFER_S = 120.0

# How many ``defer_gc`` tasks run now (changed on the GUI thread only, by their runners).
_gc_deferring = 0


class MainThreadGarbageCollector(QObject):
    """Runs Python's cyclic garbage collector on the GUI thread only.

    Python collects cycles in whichever thread happens to allocate when a threshold is crossed, so a worker
    thread can end up destroying Qt objects that live in the GUI thread: with PySide6 that gives Qt warnings
    ("Timers cannot be stopped from another thread"), or a deadlock when the GUI thread destroys connected
    objects at the same time. So automatic collection is switched off and this timer collects on the GUI
    thread instead, with the interpreter's usual thresholds (the approach of calibre's GarbageCollector).
    Reference counting still frees everything that is not in a cycle at once, as before.

    On its first check (the event loop is running, so start-up is over) it also freezes the objects made
    so far — modules, Qt wrappers, the window — which live as long as the app: a full collection then
    scans only what came later. Without that, each full collection scanned ~80,000 start-up objects and
    stalled the GUI thread for ~55 ms, the longest stall while training (``bench/gui.py``).
    """

    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self.thresholds = gc.get_threshold()
        self.frozen = False
        self.deferred_since: float | None = None
        gc.disable()
        self.timer = QTimer(self)
        self.timer.setInterval(GC_INTERVAL_MS)
        self.timer.timeout.connect(self.check)
        self.timer.start()

    @Slot()
    def check(self) -> None:
        """Collect the generations whose allocation counts passed their thresholds."""
        if not self.frozen:
            self.frozen = True
            # No collection first: that would be the very stall this avoids (start-up leaves little garbage).
            gc.freeze()
            return
        if _gc_deferring:
            # A task that builds a large result runs (the playground encoding a pasted megabyte): its
            # temporaries, alive until it ends (400,000 token objects for 400,000 Chinese characters), would
            # make this collection take 150 ms to a second on the GUI thread; once it ended they are freed,
            # and collecting is cheap again: `on_deferral_ended` collects then. An earlier 10 s limit here
            # stalled typing into a large text, where one task follows another for longer than that.
            now = time.monotonic()
            if self.deferred_since is None:
                self.deferred_since = now
            if now - self.deferred_since < GC_MAX_DEFER_S:
                return
        self.collect_due()

    def on_deferral_ended(self) -> None:
        """The last ``defer_gc`` task ended (called by its runner): collect what is due now, while cheap."""
        if not _gc_deferring and self.frozen:
            self.collect_due()

    def collect_due(self) -> None:
        """Collect the generations whose allocation counts passed their thresholds, now."""
        self.deferred_since = None
        first, second, third = gc.get_count()
        if first > self.thresholds[0]:
            gc.collect(0)
            if second > self.thresholds[1]:
                gc.collect(1)
                if third > self.thresholds[2]:
                    gc.collect(2)


def install_main_thread_gc() -> MainThreadGarbageCollector | None:
    """Collect garbage on the GUI thread only (see the class above); idempotent.

    Called once, by the application at start-up (:func:`bpe_studio.ui.app.app.create_application`): the one
    place in the app that changes how Python collects garbage.
    """
    app = QCoreApplication.instance()
    if app is None:
        return None
    found = app.findChild(MainThreadGarbageCollector)
    if isinstance(found, MainThreadGarbageCollector):
        return found
    collector = MainThreadGarbageCollector(app)
    collector.setObjectName("bpe-studio-gc")
    return collector


#: Seconds a thread runs Python before another thread that waits may take over (Python's default: 0.005).
GUI_SWITCH_INTERVAL = 0.0005


def install_gui_switch_interval() -> None:
    """Let the GUI thread wait less for Python's lock while a worker thread runs Python.

    The GUI thread gives up the lock at each call into Qt and must take it back afterwards; with a worker
    busy in Python (the playground encoding a pasted megabyte), each taking-back waited up to the switch
    interval, 5 ms by default, and a repaint of a few dozen calls stalled the window for 200 ms. A tenth
    of that costs the workers little (training runs in a child process of its own). Called once, by the
    application at start-up (:func:`bpe_studio.ui.app.app.create_application`).
    """
    sys.setswitchinterval(GUI_SWITCH_INTERVAL)


class TaskCancelledError(Exception):
    """Raised inside a task that should stop: by :meth:`TaskContext.check`, or at a generator's ``yield``."""


class TaskContext:
    """What a running task sees: a cancellation flag and a way to report progress."""

    def __init__(self, worker: TaskWorker) -> None:
        self._worker = worker

    @property
    def cancelled(self) -> bool:
        """Whether the task was asked to stop."""
        return self._worker.cancel_requested

    def check(self) -> None:
        """Raise :class:`TaskCancelledError` if the task was asked to stop."""
        if self._worker.cancel_requested:
            raise TaskCancelledError

    def progress(self, value: object) -> None:
        """Report progress (delivered to the GUI thread as ``TaskRunner.progress``)."""
        self._worker.progress.emit(value)

    def on_cancel(self, callback: Callable[[], object]) -> None:
        """Call ``callback`` when the task is asked to stop (at once if it already was).

        For a task that waits on something outside Python (a child process's pipe), which checks no flag
        while it waits. The callback runs in the thread that cancels, so it must be thread-safe.

        Example (in a task, ``ctx`` its :class:`TaskContext`)::

            ctx.on_cancel(child.cancel)
        """
        self._worker.add_cancel_callback(callback)


Task = Callable[[TaskContext], Any]
"""A function run on the worker thread: its return value is the result, or it is a generator function whose
yields are progress and whose return value is the result."""


class TaskWorker(QObject):
    """Runs one task on the thread it was moved to; reports by signals and never raises.

    Signals:
        progress(object): A value the task yielded or passed to :meth:`TaskContext.progress`.
        finished(object): The task returned (its return value).
        errored(object): The task raised (the exception).
        cancelled(object): The task was asked to stop and ended (what it returned, or None).
    """

    progress = Signal(object)
    finished = Signal(object)
    errored = Signal(object)
    cancelled = Signal(object)

    def __init__(self, task: Task) -> None:
        super().__init__()
        self.task = task
        self._cancel = threading.Event()
        self._cancel_lock = threading.Lock()
        self._cancel_callbacks: list[Callable[[], object]] = []

    @property
    def cancel_requested(self) -> bool:
        """Whether :meth:`cancel` was called."""
        return self._cancel.is_set()

    def cancel(self) -> None:
        """Ask the task to stop; safe to call from any thread."""
        with self._cancel_lock:
            self._cancel.set()
            callbacks, self._cancel_callbacks = self._cancel_callbacks, []
        for callback in callbacks:
            self._call_quietly(callback)

    def add_cancel_callback(self, callback: Callable[[], object]) -> None:
        """See :meth:`TaskContext.on_cancel`."""
        with self._cancel_lock:
            if not self._cancel.is_set():
                self._cancel_callbacks.append(callback)
                return
        self._call_quietly(callback)

    @staticmethod
    def _call_quietly(callback: Callable[[], object]) -> None:
        try:
            callback()
        except Exception:  # a cancel that fails must not take the caller (the GUI) down
            log.exception("a task's cancel callback failed")

    @Slot()
    def run(self) -> None:
        """Run the task to its end and emit one of ``finished``, ``errored`` or ``cancelled``."""
        try:
            result = self._drive()
        except TaskCancelledError:
            self.cancelled.emit(None)
        except BaseException as exc:
            self.errored.emit(exc)
        else:
            (self.cancelled if self._cancel.is_set() else self.finished).emit(result)
        # The worker stays with its thread (it is deleted on the GUI thread once that thread has ended, when
        # nothing in it can touch the worker any more). Handing it back with moveToThread from here deadlocked
        # the app: moveToThread holds the GIL while it waits for Qt's signal-slot lock, and the GUI thread
        # may hold that lock in a disconnect (a slot's owner collected) while PySide takes the GIL back to
        # call the sender's Python disconnectNotify.

    def _drive(self) -> Any:
        """Call the task; if it is a generator, drive it step by step (see the module's docstring)."""
        steps = self.task(TaskContext(self))
        if not inspect.isgenerator(steps):
            return steps
        thrown = False
        try:
            value = next(steps)
            while True:
                self.progress.emit(value)
                if self._cancel.is_set() and not thrown:
                    thrown = True  # once: a task that winds down on its own goes on undisturbed
                    value = steps.throw(TaskCancelledError())
                else:
                    value = next(steps)
        except StopIteration as stop:
            return stop.value
        finally:
            steps.close()  # however this ended, the task's `finally` blocks run now, in this thread


def start_in_thread(worker: TaskWorker, name: str) -> QThread:
    """Move ``worker`` to a new thread named ``name``, run it there, and end the thread with it.

    Connect the worker's signals (and the thread's ``finished``) before the thread starts, i.e. before
    returning to the event loop.

    Example (in a running Qt application)::

        thread = start_in_thread(TaskWorker(task), "bpe-studio-load")
    """
    thread = QThread()
    thread.setObjectName(name)
    worker.moveToThread(thread)
    thread.started.connect(worker.run)
    # Directly (in the worker's thread): QThread.quit is thread-safe, and a queued call would wait for the
    # GUI thread, which may itself be waiting for this thread to end (when the window closes).
    for signal in (worker.finished, worker.errored, worker.cancelled):
        signal.connect(thread.quit, Qt.ConnectionType.DirectConnection)
    return thread


class TaskRunner(QObject):
    """Runs one task at a time on a fresh ``QThread``; a new request supersedes the running one.

    Args:
        name: The thread's name (shown by debuggers).
        defer_gc: The tasks build large results (a million small objects): the main-thread garbage
            collector puts off collecting while one runs, rather than visit all those live objects on the GUI
            thread, and collects when it ended (before the next one starts).

    Signals:
        progress(object): The latest task's progress (also after it was asked to stop, until it ends).
        finished(object): The latest task returned (its return value).
        errored(object): The latest task raised (the exception).
        cancelled(object): The latest task was cancelled with :meth:`cancel` (what it returned, or None).
        idle(): No task runs or waits any more, and the thread has ended (after one of the three above).
    """

    progress = Signal(object)
    finished = Signal(object)
    errored = Signal(object)
    cancelled = Signal(object)
    idle = Signal()

    def __init__(
        self, name: str = "bpe-studio-task", parent: QObject | None = None, *, defer_gc: bool = False
    ) -> None:
        super().__init__(parent)
        self._name = name
        self._defer_gc = defer_gc
        self._deferring = False
        self._thread: QThread | None = None
        self._worker: TaskWorker | None = None
        self._pending: Task | None = None

    def is_busy(self) -> bool:
        """Whether a task runs or waits (its thread may be finishing)."""
        return self._thread is not None or self._pending is not None

    def start(self, task: Task) -> None:
        """Run ``task``; if one is running, ask it to stop and run ``task`` after it."""
        self._pending = task
        if self._thread is None:
            self._launch()
        elif self._worker is not None:
            self._worker.cancel()

    def cancel(self) -> None:
        """Ask the running task to stop and drop a waiting one; ``cancelled`` follows."""
        self._pending = None
        if self._worker is not None:
            self._worker.cancel()

    def wait(self, timeout_ms: int = 10_000) -> bool:
        """Block until the running task's thread ends, and report its end now; False on timeout."""
        thread = self._thread
        if thread is None:
            return True
        if not thread.wait(timeout_ms):
            log.warning("the %s thread did not stop within %d ms", self._name, timeout_ms)
            return False
        # Deliver the queued signals of the ended task now, so nothing refers to the thread afterwards.
        QCoreApplication.sendPostedEvents(self)
        self._on_thread_finished()
        return True

    def shutdown(self, timeout_ms: int = 10_000) -> bool:
        """Cancel everything and wait for the thread to end (when the window closes); False on timeout."""
        self.cancel()
        return self.wait(timeout_ms)

    def _launch(self) -> None:
        task, self._pending = self._pending, None
        assert task is not None
        worker = TaskWorker(task)
        thread = start_in_thread(worker, self._name)
        worker.progress.connect(self._on_worker_progress)
        worker.finished.connect(self._on_worker_finished)
        worker.errored.connect(self._on_worker_errored)
        worker.cancelled.connect(self._on_worker_cancelled)
        thread.finished.connect(self._on_thread_finished)
        self._thread, self._worker = thread, worker
        self._set_deferring(self._defer_gc)
        thread.start()

    def _set_deferring(self, deferring: bool) -> None:
        global _gc_deferring  # noqa: PLW0603 - one count for the app's one collector, on the GUI thread
        if deferring != self._deferring:
            self._deferring = deferring
            _gc_deferring += 1 if deferring else -1
            if not _gc_deferring:
                app = QCoreApplication.instance()
                collector = app.findChild(MainThreadGarbageCollector) if app is not None else None
                if isinstance(collector, MainThreadGarbageCollector):
                    collector.on_deferral_ended()

    def _is_current(self) -> bool:
        # A signal counts only if it comes from the running worker and nothing newer waits.
        return self._pending is None and self.sender() is self._worker

    @Slot(object)
    def _on_worker_progress(self, value: object) -> None:
        if self._is_current():
            self.progress.emit(value)

    @Slot(object)
    def _on_worker_finished(self, result: object) -> None:
        if self._is_current():
            self.finished.emit(result)

    @Slot(object)
    def _on_worker_errored(self, exc: object) -> None:
        if self._is_current():
            self.errored.emit(exc)

    @Slot(object)
    def _on_worker_cancelled(self, result: object) -> None:
        if self._is_current():
            self.cancelled.emit(result)

    @Slot()
    def _on_thread_finished(self) -> None:
        thread = self._thread
        if thread is None:
            return
        thread.wait()  # `finished` is emitted just before the thread really ends
        self._thread, self._worker = None, None
        self._set_deferring(False)
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
    "TaskWorker",
    "install_gui_switch_interval",
    "install_main_thread_gc",
    "start_in_thread",
]
