"""Entry point of an encoding worker process, started by :func:`bpe_studio.engine.launch.start_child`.

The parent (see :mod:`bpe_studio.engine.corpus_encoding`) sends length-prefixed pickles: first
``(tokenizer_path, separator, dtype, policy, text_field, skip_bad_records)``, then one task at a time and
finally ``None``. Each task is answered with ``("ids", data, documents, starts_document, bad_records)``;
a decode error, a changed file, a bad record or any other failure is sent as a message, not a traceback.

Tasks are read from stdin by a thread of their own. Both directions carry megabytes (a block of a
compressed file in, its ids out), so a worker that read only between tasks could block writing its ids
while the parent blocks writing the next task to it: each would wait for the other forever. The parent
never has more than two tasks in flight per worker, which bounds what the thread holds.
"""

from __future__ import annotations

import queue
import signal
import sys
import threading
from typing import Any

from .config import InvalidUtf8Policy
from .corpus_encoding import TaskEncoder
from .counting import failure_message, read_message, write_message
from .formats import load


def main() -> None:
    """Serve encoding tasks from stdin until ``None`` arrives."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides, and stops the workers
    inbox, outbox = sys.stdin.buffer, sys.stdout.buffer
    path, separator, dtype, policy, text_field, skip_bad = read_message(inbox)
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
        encoder = TaskEncoder(
            load(path),
            separator=separator,
            dtype=dtype,
            policy=InvalidUtf8Policy(policy),
            text_field=text_field,
            skip_bad_records=skip_bad,
        )
        while (task := inbound.get()) is not None:
            if task is ended:
                raise EOFError("the parent closed the pipe")
            before = encoder.records.bad_records
            data, documents, starts = encoder.encode(task)
            write_message(outbox, ("ids", data, documents, starts, encoder.records.bad_records - before))
    except (EOFError, BrokenPipeError):
        raise  # the parent is gone: nobody to tell (child_main leaves quietly)
    except Exception as exc:  # told to the parent, which raises it again (counting.raise_failure)
        write_message(outbox, failure_message(exc))
