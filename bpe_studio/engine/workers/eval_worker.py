"""Entry point of an evaluation worker process, started by
:func:`bpe_studio.engine.workers.launch.start_child`.

The parent (see :mod:`bpe_studio.engine.encoding.evaluation`) sends length-prefixed pickles: first
``(tokenizer_sources, invalid_utf8, text_field, skip_bad_records)`` (each a
:class:`~bpe_studio.engine.formats.TokenizerSource`), then one task at a time and finally
``None``. Each task is answered with ``("answer", *TaskFigures fields)``; a decode error, a bad record
or any other failure is sent as a message, not a traceback
(:func:`~bpe_studio.engine.workers.task_pool.serve_tasks` does the serving).
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable
from typing import Any

from ..config import InvalidUtf8Policy
from ..encoding.corpus_encoding import TaskEncoder
from ..encoding.evaluation import task_figures
from .task_pool import serve_tasks


def main() -> None:
    """Serve evaluation tasks from stdin until ``None`` arrives."""
    serve_tasks(_prepare)


def _prepare(setup: Any) -> Callable[[Any], tuple[Any, ...]]:
    names, invalid_utf8, text_field, skip_bad = setup
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the parent loaded the same files and showed their warnings
        tokenizers = [source.load() for source in names]
    reader = TaskEncoder(
        tokenizers[0],
        separator=None,
        dtype="uint32",
        policy=InvalidUtf8Policy(invalid_utf8),
        text_field=text_field,
        skip_bad_records=skip_bad,
    )
    encoders = [t.encode_ordinary for t in tokenizers]

    def handle(task: Any) -> tuple[Any, ...]:
        documents, starts = reader.documents(task)
        return dataclasses.astuple(task_figures(encoders, documents, starts))

    return handle
