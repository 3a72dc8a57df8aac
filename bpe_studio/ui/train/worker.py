"""The app's training as a task of :mod:`bpe_studio.ui.app.tasks`: a generator that relays a child's events.

The engine runs in a child process (:mod:`bpe_studio.ui.train.process`), so that the GUI never waits for
the merge loop's GIL; the child batches its events itself (one list at most every
:data:`~bpe_studio.ui.train.process.BATCH_INTERVAL` seconds: per-merge events come thousands of times a
second). :func:`train_in_child` yields each batch as a progress step and returns the
:class:`~bpe_studio.engine.TrainResult`; a :class:`~bpe_studio.ui.app.tasks.TaskRunner` drives it on a
``QThread`` like any other task, so its exceptions become ``errored`` signals. Cancelling is forwarded to
the child at once, which stops within its next step and reports the merges made so far: the run then
ends with ``cancelled(TrainResult)``.

Example (in a running Qt application)::

    runner = TaskRunner("bpe-studio-train")
    runner.finished.connect(print)
    runner.start(training_task(TrainConfig(inputs=["corpus.txt"], vocab_size=1000)))
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator
from functools import partial

from ...engine import CorpusDecodeError, TrainConfig, TrainEvent, TrainResult
from ..app.tasks import Task, TaskCancelledError, TaskContext
from .process import BATCH_INTERVAL, TrainingProcess, TrainingProcessError


def train_in_child(ctx: TaskContext, config: TrainConfig) -> Generator[list[TrainEvent], None, TrainResult]:
    """Train ``config`` in a child process: yield its batches of progress events, return its result.

    Raises:
        CorpusDecodeError: A corpus file is not valid UTF-8.
        TrainingProcessError: The child died without reporting (e.g. killed for lack of memory).
        Exception: Whatever the engine raised in the child (its message is the engine's).
    """
    with TrainingProcess(config) as child:
        ctx.on_cancel(child.cancel)
        for kind, *payload in child.messages():
            if kind == "events":
                # Cancelled: the child was told (on_cancel) and ends on its own; relay its events until then.
                with contextlib.suppress(TaskCancelledError):
                    yield payload[0]
            elif kind == "finished":
                result: TrainResult = payload[0]
                return result
            elif kind == "decode_error":
                raise CorpusDecodeError(*payload)
            else:
                error = payload[0]
                raise error if isinstance(error, BaseException) else TrainingProcessError(str(error))
    raise TrainingProcessError("the training ended without a result")


def training_task(config: TrainConfig) -> Task:
    """The task that trains ``config`` in a child process, for :meth:`TaskRunner.start`.

    Example (``runner`` a :class:`~bpe_studio.ui.app.tasks.TaskRunner`)::

        runner.start(training_task(config))
    """
    return partial(train_in_child, config=config)


__all__ = ["BATCH_INTERVAL", "train_in_child", "training_task"]
