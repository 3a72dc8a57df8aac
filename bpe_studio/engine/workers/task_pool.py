"""Tasks in worker processes, answers in task order: both ends of encode-corpus's and eval's pools.

The parent (:func:`ordered_worker_map`) starts the workers through
:func:`~bpe_studio.engine.workers.launch.start_child`, sends each a setup message and then one task at a time
over
length-prefixed messages (see :mod:`~bpe_studio.engine.training.counting`), and yields the answers in the
order of
the tasks. A worker (:func:`serve_tasks`) answers each task with one message, and a failure with a
message, not a traceback.

Both directions can carry megabytes (a block of a compressed file in, its ids out), so the worker reads its
tasks on a thread of its own: one that read only between tasks could block writing an answer while the
parent blocks writing the next task to it, each waiting for the other forever. The parent never has more
than two tasks in flight per worker, which bounds what that thread holds, and no new task is handed out
while more than a few answers wait for an earlier one, so memory stays bounded at both ends.

Example (``setup`` and ``tasks`` as :mod:`~bpe_studio.engine.encoding.evaluation` builds them)::

    answers = ordered_worker_map(
        "bpe_studio.engine.workers.eval_worker:main", setup, tasks, workers=2, cancelled=lambda: False,
        send=lambda item: item[1], receive=lambda item, answer: (item[0], answer), role="evaluation")
"""

from __future__ import annotations

import contextlib
import queue
import selectors
import signal
import sys
import threading
from collections.abc import Callable, Generator, Iterator
from typing import Any, TypeVar

from .launch import death_message, start_child, stop_process
from .protocol import WorkerCrashedError, failure_message, raise_failure, read_message, write_message
from .threaded import pool_size

T = TypeVar("T")
R = TypeVar("R")

#: Seconds between two looks at the cancel flag while no answer arrives.
POLL_SECONDS = 0.05


def ordered_worker_map(
    entry_point: str,
    setup: object,
    items: Iterator[T],
    *,
    workers: int,
    cancelled: Callable[[], bool],
    send: Callable[[T], object],
    receive: Callable[[T, tuple[Any, ...]], R],
    role: str,
) -> Generator[R, None, None]:
    """Run ``items`` in ``workers`` worker processes started at ``entry_point`` (which calls
    :func:`serve_tasks`), yielding ``receive(item, answer)`` in the items' order.

    Args:
        setup: The first message to every worker.
        send: The message that gives a worker an item.
        receive: The result of an item from the worker's answer (the answer's fields after its kind).
        role: Names the workers in errors ("encoding", "evaluation").

    When ``cancelled()`` turns True the generator just ends (the caller says what a cancel means). Leaving
    in any way (done, cancelled, failed, or closed by the consumer after Ctrl-C) stops every worker.

    Raises:
        WorkerCrashedError: A worker died (killed, out of memory): the message says how.
        Exception: What a worker's task raised, rebuilt by
            :func:`~bpe_studio.engine.workers.protocol.raise_failure`.
    """
    workers = pool_size(workers)
    pool: list[tuple[Any, list[int]]] = []  # (process, indexes of its tasks in flight)
    selector = selectors.DefaultSelector()
    ready: dict[int, R] = {}
    given: dict[int, T] = {}
    next_task, next_out = 0, 0
    exhausted = False
    article = "an" if role[:1] in "aeiou" else "a"

    def died(proc: Any) -> WorkerCrashedError:
        return WorkerCrashedError(death_message(proc).replace("a counting", f"{article} {role}"))

    def tell(proc: Any, message: Any) -> None:
        # A worker killed from outside may be found dead by a write before its pipe's end is read: that is
        # the same death, said the same way (not "Broken pipe").
        try:
            write_message(proc.stdin, message)
        except BrokenPipeError:
            raise died(proc) from None

    def feed(proc: Any, pending: list[int]) -> None:
        nonlocal next_task, exhausted
        while not exhausted and len(pending) < 2 and len(ready) < 4 * workers:
            item = next(items, None)
            if item is None:
                exhausted = True
                return
            tell(proc, send(item))
            pending.append(next_task)
            given[next_task] = item
            next_task += 1

    try:
        for _ in range(workers):
            proc = start_child(
                entry_point, die_with_thread=threading.current_thread() is threading.main_thread()
            )
            pending: list[int] = []
            pool.append((proc, pending))
            tell(proc, setup)
            selector.register(proc.stdout, selectors.EVENT_READ, (proc, pending))  # type: ignore[arg-type]
            feed(proc, pending)
        while not (exhausted and next_out == next_task):
            if cancelled():
                return
            for key, _ in selector.select(timeout=POLL_SECONDS):
                proc, pending = key.data
                try:
                    message = read_message(proc.stdout)
                except EOFError:
                    raise died(proc) from None
                if message[0] != "answer":
                    raise_failure(message, role=role)
                index = pending.pop(0)
                ready[index] = receive(given.pop(index), message[1:])
            while next_out in ready:
                yield ready.pop(next_out)
                next_out += 1
            for proc, pending in pool:
                feed(proc, pending)
    finally:
        selector.close()
        for proc, _ in pool:
            with contextlib.suppress(OSError, ValueError):
                write_message(proc.stdin, None)
            stop_process(proc)


def serve_tasks(prepare: Callable[[Any], Callable[[Any], tuple[Any, ...]]]) -> None:
    """A worker's whole life: read the setup, ``handle = prepare(setup)``, then answer each task with
    ``("answer", *handle(task))`` until ``None`` arrives (see the module docstring).

    A failure in ``prepare`` or a task is sent as a message (the parent raises it again); when the parent is
    gone the reads end with ``EOFError`` and the writes with ``BrokenPipeError``, raised for
    :func:`~bpe_studio.engine.workers.launch.child_main` to leave quietly.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides, and stops the workers
    inbox, outbox = sys.stdin.buffer, sys.stdout.buffer
    setup = read_message(inbox)
    inbound: queue.Queue[Any] = queue.Queue()
    ended = object()  # the parent closed the pipe

    def read_tasks() -> None:
        try:
            while (task := read_message(inbox)) is not None:
                inbound.put(task)
            inbound.put(None)
        except (EOFError, OSError):
            inbound.put(ended)

    threading.Thread(target=read_tasks, name="tasks", daemon=True).start()
    try:
        handle = prepare(setup)
        while (task := inbound.get()) is not None:
            if task is ended:
                raise EOFError("the parent closed the pipe")
            write_message(outbox, ("answer", *handle(task)))
    except (EOFError, BrokenPipeError):
        raise  # the parent is gone: nobody to tell (child_main leaves quietly)
    except Exception as exc:  # told to the parent, which raises it again (protocol.raise_failure)
        write_message(outbox, failure_message(exc))


__all__ = ["ordered_worker_map", "serve_tasks"]
