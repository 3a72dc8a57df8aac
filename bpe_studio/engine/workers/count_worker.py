"""Entry point of a counting worker process, started by :func:`bpe_studio.engine.workers.launch.start_child`.

The parent (see :mod:`bpe_studio.engine.training.counting`) talks to it over stdin/stdout with length-prefixed
pickles: first ``(pattern, special_tokens, policy, text_field, skip_bad_records)``, then one task (a
:class:`Chunk` or a piece of another format, see :mod:`~bpe_studio.engine.corpus.sources`) at a time and
finally
``None``. The worker answers each chunk with ``("progress", size, unique)`` and ``None`` with
``("done", totals, size)`` followed by its table as one frame of ``size`` raw bytes
(:func:`~bpe_studio.engine.workers.protocol.encode_table`: numbers and text, no pickle); a decode error, a
file
that changed or any other failure is sent as a message, not a traceback.

A plain subprocess rather than :mod:`multiprocessing`: spawn-style workers re-import the parent's
``__main__``, which re-runs a user's script that lacks an ``if __name__ == "__main__"`` guard.

When the parent goes away (killed, or it stopped the worker by closing the pipes), the reads end with
``EOFError`` and the writes with ``BrokenPipeError``: the worker then just leaves, without a traceback
(:func:`~bpe_studio.engine.workers.launch.child_main` also watches the parent's pid).
"""

from __future__ import annotations

import signal
import sys

from ..config import InvalidUtf8Policy
from ..training.counter import ChunkCounter
from .protocol import failure_message, read_message, write_frame, write_message


def main() -> None:
    """Serve counting tasks from stdin until ``None`` arrives."""
    # Ctrl-C reaches the whole process group; the parent decides what happens and stops the workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    inbox, outbox = sys.stdin.buffer, sys.stdout.buffer
    setup = read_message(inbox)
    pattern, special_tokens, policy = setup[:3]
    # The record options came later; a parent that sends only the first three gets the defaults.
    text_field, skip_bad = setup[3:] if len(setup) == 5 else ("text", False)
    counter = ChunkCounter(
        pattern=pattern,
        special_tokens=special_tokens,
        policy=InvalidUtf8Policy(policy),
        text_field=text_field,
        skip_bad_records=skip_bad,
    )
    try:
        while (chunk := read_message(inbox)) is not None:
            counter.count_task(chunk)
            write_message(outbox, ("progress", chunk.size, counter.unique))
        table = counter.frame()
        write_message(outbox, ("done", counter.totals, len(table)))
        write_frame(outbox, table)
    except (EOFError, BrokenPipeError):
        raise  # the parent is gone: nobody to tell (child_main leaves quietly)
    except Exception as exc:  # told to the parent, which raises it again (protocol.raise_failure)
        write_message(outbox, failure_message(exc))
