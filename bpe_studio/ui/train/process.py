"""Training in a child process, so that the GUI never shares a GIL with the merge loop.

In a thread of the GUI process, the engine's pure-Python merge loop and the GUI take turns on one GIL:
every Python callback of a paint waits for the loop to hand the GIL over, and the engine's long C calls
(unpickling the counting tables, ``heapify``, resizing large dicts) freeze the window for a tenth of a
second or more. So the app runs :func:`~bpe_studio.engine.iter_train` here, in a child process started
isolated by :func:`bpe_studio.engine.workers.launch.start_child`, and a task on a QThread only relays the
events
(:func:`bpe_studio.ui.train.worker.train_in_child`). This module is Qt-free.

Protocol, over stdin/stdout with the engine's length-prefixed pickles
(:func:`bpe_studio.engine.workers.protocol.write_message`):

* parent → child: the :class:`~bpe_studio.engine.TrainConfig`; later, any message (or the pipe closing)
  means "cancel".
* child → parent: ``("events", [event, ...])`` batches (at most every :data:`BATCH_INTERVAL` seconds while
  merges stream in), then one of ``("finished", TrainResult)``,
  ``("decode_error", path, offset, reason, where)`` or ``("error", exception_or_message)``.

A plain subprocess rather than :mod:`multiprocessing`, as for the engine's counting workers: spawn-style
children re-import the parent's ``__main__``. When the GUI process dies, the child is killed with the
thread that started it (Linux), or cancels on the end of its input pipe and leaves quietly.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from ...engine import CorpusDecodeError, Finished, MergeMade, TrainConfig, TrainEvent, iter_train
from ...engine.workers.launch import start_child
from ...engine.workers.protocol import read_message, write_message

#: Seconds between two batches of events while merges stream in.
BATCH_INTERVAL = 0.04


class TrainingProcessError(RuntimeError):
    """The training process failed in a way that left no engine exception to report."""


def child_main() -> None:
    """Entry point of the child: read the configuration, train, stream the events back."""
    # Ctrl-C reaches the whole process group; the GUI decides what happens (it cancels).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Unbuffered: the cancel watcher below stays blocked in a read until the process exits, and a daemon
    # thread blocked inside sys.stdin's buffered reader holds its lock, which the interpreter's shutdown
    # then cannot take ("Fatal Python error: _enter_buffered_busy ... <stdin>", and the child aborts).
    inbox = os.fdopen(os.dup(sys.stdin.fileno()), "rb", buffering=0)
    # The messages own the real stdout; anything printed goes to stderr.
    outbox = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    sys.stdout = sys.stderr
    config: TrainConfig = read_message(inbox)
    cancel = threading.Event()

    def watch_inbox() -> None:
        with contextlib.suppress(Exception):
            read_message(inbox)  # any message, or the end of the pipe (the GUI went away), cancels
        cancel.set()

    threading.Thread(target=watch_inbox, name="cancel-watch", daemon=True).start()
    try:
        stream_events(
            iter_train(config, cancel=cancel.is_set), lambda message: write_message(outbox, message)
        )
    except (BrokenPipeError, EOFError):
        raise  # the GUI is gone: nobody to tell (the launcher's child_main leaves quietly)
    except CorpusDecodeError as exc:
        write_message(outbox, ("decode_error", exc.path, exc.offset, exc.reason, exc.where))
    except BaseException as exc:
        write_message(outbox, ("error", _portable(exc)))


def stream_events(events: Iterator[TrainEvent], send: Callable[[Any], None]) -> None:
    """Send events in batches (every non-merge event at once), then ``("finished", result)``."""
    batch: list[TrainEvent] = []
    clock = time.perf_counter
    last = clock()
    try:
        for event in events:
            if isinstance(event, Finished):
                if batch:
                    send(("events", batch))
                send(("finished", event.result))
                return
            batch.append(event)
            now = clock()
            if type(event) is not MergeMade or now - last >= BATCH_INTERVAL:
                send(("events", batch))
                batch, last = [], now
    finally:
        close = getattr(events, "close", None)
        if close is not None:
            close()  # stops the counting processes at once, however this ended
    raise TrainingProcessError("the training ended without a result")


def _portable(exc: BaseException) -> BaseException | str:
    """The exception itself if it survives pickling, else its type and message."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return f"{type(exc).__name__}: {exc}"
    return exc


class TrainingProcess:
    """The parent's handle on a training child: start it, read its messages, cancel it, stop it.

    Example (starts a training process)::

        with TrainingProcess(config) as child:
            for kind, *payload in child.messages():
                ...
    """

    def __init__(self, config: TrainConfig) -> None:
        self._lock = threading.Lock()
        # The thread that starts the child waits for it to end (messages(), then stop()), so the kernel may
        # kill the child when that thread ends: the child never outlives the GUI process.
        self.proc = start_child("bpe_studio.ui.train.process:child_main", die_with_thread=True)
        write_message(self.proc.stdin, config)

    def messages(self) -> Iterator[tuple[Any, ...]]:
        """The child's messages until its last (``finished``, ``decode_error`` or ``error``).

        Raises:
            TrainingProcessError: The child ended without a last message (it crashed or was killed).
        """
        while True:
            try:
                message = read_message(self.proc.stdout)
            except EOFError:
                code = self.proc.wait()
                raise TrainingProcessError(
                    f"the training process died (exit code {code}); this is often a lack of memory"
                ) from None
            yield message
            if message[0] != "events":
                return

    def cancel(self) -> None:
        """Ask the child to stop (thread-safe; harmless once it ended)."""
        with self._lock, contextlib.suppress(OSError, ValueError):
            if self.proc.stdin is not None and not self.proc.stdin.closed:
                write_message(self.proc.stdin, "cancel")

    def stop(self, timeout: float = 5.0) -> None:
        """Wait for the child to end (asking it to stop first), killing it after ``timeout`` seconds."""
        self.cancel()
        with self._lock:
            for pipe in (self.proc.stdin, self.proc.stdout):
                if pipe is not None:
                    with contextlib.suppress(OSError):
                        pipe.close()
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            # Bounded too: a child that SIGKILL does not end at once (stuck in the kernel) is left to it.
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=timeout)

    def __enter__(self) -> TrainingProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


__all__ = ["BATCH_INTERVAL", "TrainingProcess", "TrainingProcessError", "child_main", "stream_events"]
