"""Entry point of an evaluation worker process, started by :func:`bpe_studio.engine.launch.start_child`.

The parent (see :mod:`bpe_studio.engine.evaluation`) sends length-prefixed pickles: first
``(tokenizer_names, invalid_utf8, text_field, skip_bad_records)``, then one task at a time and finally
``None``. Each task is answered with ``("figures", *TaskFigures fields)``; a decode error, a bad record
or any other failure is sent as a message, not a traceback.

Tasks are read from stdin by a thread of their own, as in :mod:`~bpe_studio.engine._encode_worker`: a
block of a compressed file can be megabytes, and the parent writes the next task while this worker
answers the previous one, so reading only between tasks could leave both writing forever.
"""

from __future__ import annotations

import dataclasses
import queue
import signal
import sys
import threading
import warnings
from typing import Any

from .config import InvalidUtf8Policy
from .corpus_encoding import TaskEncoder
from .counting import failure_message, read_message, write_message
from .evaluation import task_figures
from .formats import load


def main() -> None:
    """Serve evaluation tasks from stdin until ``None`` arrives."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides, and stops the workers
    inbox, outbox = sys.stdin.buffer, sys.stdout.buffer
    names, invalid_utf8, text_field, skip_bad = read_message(inbox)
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
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the parent loaded the same files and showed their warnings
            tokenizers = [load(name) for name in names]
        reader = TaskEncoder(
            tokenizers[0],
            separator=None,
            dtype="uint32",
            policy=InvalidUtf8Policy(invalid_utf8),
            text_field=text_field,
            skip_bad_records=skip_bad,
        )
        encoders = [t.encode_ordinary for t in tokenizers]
        while (task := inbound.get()) is not None:
            if task is ended:
                raise EOFError("the parent closed the pipe")
            documents, starts = reader.documents(task)
            figures = task_figures(encoders, documents, starts)
            write_message(outbox, ("figures", *dataclasses.astuple(figures)))
    except (EOFError, BrokenPipeError):
        raise  # the parent is gone: nobody to tell (child_main leaves quietly)
    except Exception as exc:  # told to the parent, which raises it again (counting.raise_failure)
        write_message(outbox, failure_message(exc))
