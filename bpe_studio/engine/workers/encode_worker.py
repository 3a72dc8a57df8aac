"""Entry point of an encoding worker process, started by :func:`bpe_studio.engine.workers.launch.start_child`.

The parent (see :mod:`bpe_studio.engine.encoding.corpus_encoding`) sends length-prefixed pickles: first
``(tokenizer_source, separator, dtype, policy, text_field, skip_bad_records)``, then one task at a time and
finally ``None``. Each task is answered with ``("answer", data, documents, starts_document, bad_records)``;
a decode error, a changed file, a bad record or any other failure is sent as a message, not a traceback
(:func:`~bpe_studio.engine.workers.task_pool.serve_tasks` does the serving).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..config import InvalidUtf8Policy
from ..encoding.corpus_encoding import TaskEncoder
from .task_pool import serve_tasks


def main() -> None:
    """Serve encoding tasks from stdin until ``None`` arrives."""
    serve_tasks(_prepare)


def _prepare(setup: Any) -> Callable[[Any], tuple[Any, ...]]:
    source, separator, dtype, policy, text_field, skip_bad = setup
    encoder = TaskEncoder(
        source.load(),  # a TokenizerSource: the file and the pattern and special tokens given with it
        separator=separator,
        dtype=dtype,
        policy=InvalidUtf8Policy(policy),
        text_field=text_field,
        skip_bad_records=skip_bad,
    )

    def handle(task: Any) -> tuple[Any, ...]:
        before = encoder.records.bad_records
        data, documents, starts = encoder.encode(task)
        return data, documents, starts, encoder.records.bad_records - before

    return handle
