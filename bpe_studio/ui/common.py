"""Small Qt helpers shared by the views: a worker on its own thread, and a non-blocking error box."""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, QThread
from PySide6.QtWidgets import QMessageBox, QWidget


def start_in_thread(worker: QObject, name: str) -> QThread:
    """Move ``worker`` to a new thread named ``name``, run ``worker.run`` there, and end the thread with it.

    The worker must have ``run()`` and the signals ``finished``, ``errored`` and ``cancelled``; connect its
    signals (and the thread's ``finished``) before the thread starts, i.e. before returning to the event loop.

    Example:
        >>> thread = start_in_thread(worker, "bpe-studio-train")  # doctest: +SKIP
    """
    thread = QThread()
    thread.setObjectName(name)
    worker.moveToThread(thread)
    thread.started.connect(worker.run)  # type: ignore[attr-defined]
    # Directly (in the worker's thread): QThread.quit is thread-safe, and a queued call would wait for the
    # GUI thread, which may itself be waiting for this thread to end (when the window closes).
    for signal in (worker.finished, worker.errored, worker.cancelled):  # type: ignore[attr-defined]
        signal.connect(thread.quit, Qt.ConnectionType.DirectConnection)
    return thread


def open_error_box(parent: QWidget, title: str, message: str, *, name: str) -> QMessageBox:
    """Open a window-modal error box without blocking; it deletes itself when closed.

    Example:
        >>> box = open_error_box(window, "Training failed", str(exc), name="error_box")  # doctest: +SKIP
    """
    box = QMessageBox(QMessageBox.Icon.Critical, title, message, QMessageBox.StandardButton.Ok, parent)
    box.setObjectName(name)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()
    return box
