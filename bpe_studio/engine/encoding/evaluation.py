"""Evaluation: several tokenizers' compression on corpus files, cancellable and in parallel.

The figures are those of :func:`~bpe_studio.engine.encoding.corpus_encoding.corpus_compression` (``bpe-studio
eval`` and the app's Compare ▸ Corpus): every document encoded with ``encode_ordinary``, characters, UTF-8
bytes, words (runs of non-space characters) and tokens summed over the file. Here each file is cut into
the tasks of :mod:`~bpe_studio.engine.corpus.sources` once for all the tokenizers; a task is read once and its
documents are encoded with every tokenizer. The tasks are done in this process (checking ``cancelled``
before every document, so a cancel stops inside a large file) or by worker processes, and their figures are
added up in task order. A word cut by a task boundary is counted once (:func:`combine`), so the figures do
not depend on how the file was cut or on the number of workers.

Worker processes, not threads: the native encoder releases the GIL, but pre-tokenization (the pattern's
regex), JSON parsing and word counting hold it, and they take about two thirds of the time (gpt2 on 6 MB
of Python sources: split 0.95 s, encode 0.44 s, word and byte counts 0.16 s), so threads would barely
overlap. Each worker loads the tokenizers by their names (files or ``gpt2``, ``cl100k``...).

Example:
    >>> save(small, "out/tokenizer.json")
    PosixPath('out/tokenizer.json')
    >>> figures = evaluate_files(["gpt2", "out/tokenizer.json"], ["corpus.jsonl"])
    >>> [round(figure.bytes_per_token, 2) for figure in figures[0]]
    [4.03, 1.91]
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..config import InvalidUtf8Policy
from ..corpus.plan import plan_chunks
from ..corpus.sources import Task, plan_sources
from ..pretokenize.patterns import newline_cuts_certain, scanner_name
from ..workers.task_pool import ordered_worker_map
from ..workers.threaded import ordered_map
from .analysis import Compression, compression
from .corpus_encoding import TaskEncoder
from .tokenizer import Tokenizer

if TYPE_CHECKING:
    from ..formats import TokenizerSource

#: Files smaller than this together are evaluated in this process unless workers are asked for (starting
#: workers and loading the tokenizers in each costs more than they save). As for training.
PARALLEL_MIN_BYTES = 8 << 20
# How often the parent wakes up to check for cancellation while workers evaluate.
_POLL_SECONDS = 0.05

Cancel = Callable[[], bool]


class EvaluationCancelledError(Exception):
    """``cancelled()`` returned True: the evaluation stopped (inside a file if it was in one)."""


@dataclass(frozen=True, slots=True)
class TaskFigures:
    """The figures of one task (a piece of a file) with each tokenizer.

    Attributes:
        characters, bytes, words: Sizes of its text (the same for every tokenizer).
        tokens: Token count with each tokenizer, in order.
        joins: Its first piece continues a document of the previous task and starts with a non-space
            character: if the previous task ended inside a word, the two halves are one word.
        ends_in_word: Whether it ends inside a word; None when it holds no text and starts no document (the
            state of the previous task goes on).
    """

    characters: int
    bytes: int
    words: int
    tokens: tuple[int, ...]
    joins: bool
    ends_in_word: bool | None


def task_figures(
    encoders: Sequence[Callable[[str], list[int]]],
    documents: Sequence[str],
    starts_document: bool,
    cancelled: Cancel | None = None,
) -> TaskFigures:
    """The figures of a task's documents (or pieces of one) with each encoder.

    Raises:
        EvaluationCancelledError: ``cancelled()`` was True before a document.

    Example:
        >>> task_figures([str.split], ["ab cd", "e"], False)
        TaskFigures(characters=6, bytes=6, words=3, tokens=(3,), joins=True, ends_in_word=True)
    """
    characters = size = words = 0
    tokens = [0] * len(encoders)
    joins = False
    ends_in_word: bool | None = None
    for i, piece in enumerate(documents):
        if cancelled is not None and cancelled():
            raise EvaluationCancelledError
        for k, encode in enumerate(encoders):
            tokens[k] += len(encode(piece))
        figures = compression(piece, 0)
        characters += figures.characters
        size += figures.bytes
        words += figures.words
        continues = i == 0 and not starts_document
        if continues and piece[:1] and not piece[:1].isspace():
            joins = True
        if piece:
            ends_in_word = not piece[-1].isspace()
        elif not continues:
            ends_in_word = False
    return TaskFigures(characters, size, words, tuple(tokens), joins, ends_in_word)


def combine(parts: Iterable[TaskFigures], tokenizers: int) -> list[Compression]:
    """Add up a file's task figures, in order, into one :class:`Compression` per tokenizer; a word cut
    between two tasks is counted once (tokens are the encoders' counts of each piece, as encoded).

    Example:
        >>> a = task_figures([str.split], ["ab c"], True)
        >>> b = task_figures([str.split], ["d e"], False)  # "c" + "d": one word, two tokens here
        >>> combine([a, b], 1) == [compression("ab cd e", 4)]
        True
    """
    characters = size = words = 0
    tokens = [0] * tokenizers
    previous_ends_in_word = False
    for part in parts:
        characters += part.characters
        size += part.bytes
        words += part.words
        if part.joins and previous_ends_in_word:
            words -= 1  # one word cut in two by the task boundary
        if part.ends_in_word is not None:
            previous_ends_in_word = part.ends_in_word
        tokens = [t + n for t, n in zip(tokens, part.tokens, strict=True)]
    return [Compression(characters=characters, bytes=size, words=words, tokens=t) for t in tokens]


def file_tasks(
    paths: Sequence[str | os.PathLike[str]], *, chunk_size: int, newline_cuts: bool
) -> Iterator[tuple[int, Task]]:
    """``(file index, task)`` of every file in order, planned as ``corpus_compression`` plans them."""
    for index, path in enumerate(paths):
        tasks, _ = plan_sources(
            [path],
            chunk_size=chunk_size,
            special_tokens=[],
            newline_cuts=newline_cuts,
            plan_text=lambda names: plan_chunks(
                names, chunk_size=chunk_size, special_tokens=[], newline_cuts=newline_cuts
            ),
        )
        for task in tasks:
            yield index, task


def evaluate_files(
    tokenizers: Sequence[str | os.PathLike[str] | Tokenizer],
    paths: Sequence[str | os.PathLike[str]],
    *,
    names: Sequence[str | os.PathLike[str] | TokenizerSource] | None = None,
    workers: int | None = None,
    chunk_size: int = 4 << 20,
    text_field: str = "text",
    skip_bad_records: bool = False,
    invalid_utf8: str = "error",
    cancelled: Cancel | None = None,
) -> list[list[Compression]]:
    """The compression figures of every file (outer list, in order) with every tokenizer (inner list).

    Args:
        tokenizers: Tokenizers, or names :func:`~bpe_studio.engine.formats.load` takes.
        names: The names the tokenizers were loaded from, when ``tokenizers`` holds objects: worker
            processes load them by name themselves (a :class:`~bpe_studio.engine.formats.TokenizerSource`
            when a pattern or special tokens were given with the file).
        paths: The corpus files, in any format of :mod:`~bpe_studio.engine.corpus.sources`.
        workers: Threads when every tokenizer runs on the native kernel with a pattern it scans (a preset's
            or a model's: ``patterns.scanner_name``), else worker processes; None: every core when the files
            hold at least :data:`PARALLEL_MIN_BYTES`, else 1. With 1 everything runs in this process.
        cancelled: Checked before every document (and while waiting for workers).

    Raises:
        EvaluationCancelledError: ``cancelled()`` returned True.
        ValueError: More than one worker asked for with a tokenizer given as an object, not a name.
        BadRecordError, CorruptStreamError, CorpusDecodeError, UncuttableTextError, WorkerCrashedError:
            As in :func:`~bpe_studio.engine.encoding.corpus_encoding.corpus_compression` and training.
    """
    from ..formats import TokenizerSource, load

    loaded = [t if isinstance(t, Tokenizer) else load(t) for t in tokenizers]
    newline_cuts = all(newline_cuts_certain(t.pattern) for t in loaded)
    tasks = file_tasks(paths, chunk_size=chunk_size, newline_cuts=newline_cuts)
    options = {"text_field": text_field, "skip_bad_records": skip_bad_records, "invalid_utf8": invalid_utf8}
    if workers is None:
        total = sum(os.path.getsize(p) for p in paths)
        workers = (os.cpu_count() or 1) if total >= PARALLEL_MIN_BYTES else 1
    if workers < 1:
        raise ValueError(f"workers: {workers} must be at least 1")
    results: Generator[tuple[int, TaskFigures], None, None]
    if workers > 1 and all(t.backend == "native" and scanner_name(t.pattern) is not None for t in loaded):
        # The native encoder splits and merges without the GIL: threads of this process share the loaded
        # tokenizers (worker processes would each load them again, ~0.6 s for GPT-2).
        results = _evaluate_threaded(loaded, tasks, workers, options, cancelled or (lambda: False))
    elif workers > 1:
        given = names if names is not None else tokenizers
        if len(given) != len(tokenizers) or any(isinstance(t, Tokenizer) for t in given):
            raise ValueError("workers: worker processes load tokenizers by name; give names, or workers=1")
        # A file by its absolute path (the workers may not share our folder's meaning); "gpt2" as it is.
        sources = [
            (t if isinstance(t, TokenizerSource) else TokenizerSource(os.fspath(t))).absolute()  # type: ignore[arg-type]
            for t in given
        ]
        results = _evaluate_parallel(sources, tasks, workers, options, cancelled or (lambda: False))
    else:
        results = _evaluate_serial(loaded, tasks, options, cancelled)
    parts: list[list[TaskFigures]] = [[] for _ in paths]
    with contextlib.closing(results):
        for index, part in results:
            parts[index].append(part)
    return [combine(file_parts, len(loaded)) for file_parts in parts]


def _task_encoder(tokenizer: Tokenizer, options: dict[str, Any]) -> TaskEncoder:
    """Reads the documents of tasks (``tokenizer`` only fills a slot: the figures encode them)."""
    return TaskEncoder(
        tokenizer,
        separator=None,
        dtype="uint32",
        policy=InvalidUtf8Policy(options["invalid_utf8"]),
        text_field=options["text_field"],
        skip_bad_records=options["skip_bad_records"],
    )


def _evaluate_threaded(
    tokenizers: Sequence[Tokenizer],
    tasks: Iterator[tuple[int, Task]],
    workers: int,
    options: dict[str, Any],
    cancelled: Cancel,
) -> Generator[tuple[int, TaskFigures], None, None]:
    """:func:`_evaluate_serial` on ``workers`` threads, results in task order."""
    local = threading.local()
    encoders = [t.encode_ordinary for t in tokenizers]

    def run(item: tuple[int, Task]) -> tuple[int, TaskFigures]:
        reader: TaskEncoder | None = getattr(local, "reader", None)
        if reader is None:  # one per thread: each reads its own tasks
            reader = local.reader = _task_encoder(tokenizers[0], options)
        index, task = item
        documents, starts = reader.documents(task)
        return index, task_figures(encoders, documents, starts, cancelled)

    yield from ordered_map(run, tasks, workers=workers, cancelled=cancelled, name="eval")
    if cancelled():
        raise EvaluationCancelledError


def _evaluate_serial(
    tokenizers: Sequence[Tokenizer],
    tasks: Iterator[tuple[int, Task]],
    options: dict[str, Any],
    cancelled: Cancel | None,
) -> Generator[tuple[int, TaskFigures], None, None]:
    reader = _task_encoder(tokenizers[0], options)
    encoders = [t.encode_ordinary for t in tokenizers]
    for index, task in tasks:
        if cancelled is not None and cancelled():
            raise EvaluationCancelledError
        documents, starts = reader.documents(task)
        yield index, task_figures(encoders, documents, starts, cancelled)


def _evaluate_parallel(
    names: list[TokenizerSource],
    tasks: Iterator[tuple[int, Task]],
    workers: int,
    options: dict[str, Any],
    cancelled: Cancel,
) -> Generator[tuple[int, TaskFigures], None, None]:
    """Evaluate tasks in worker processes (:mod:`~bpe_studio.engine.workers.eval_worker`), yielding their
    figures
    in task order (see :func:`~bpe_studio.engine.workers.task_pool.ordered_worker_map`: bounded, and every
    worker
    stopped on leaving, also after Ctrl-C).
    """
    setup = (names, options["invalid_utf8"], options["text_field"], options["skip_bad_records"])
    yield from ordered_worker_map(
        "bpe_studio.engine.workers.eval_worker:main",
        setup,
        tasks,
        workers=workers,
        cancelled=cancelled,
        send=lambda item: item[1],
        receive=lambda item, answer: (item[0], TaskFigures(*answer)),
        role="evaluation",
    )
    if cancelled():
        raise EvaluationCancelledError
