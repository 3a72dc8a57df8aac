"""Training: the phases of a run as an iterator of progress events, and the functions built on it.

Example:
    >>> result = train(TrainConfig(inputs=["corpus.txt"], vocab_size=500))  # doctest: +SKIP
    >>> len(result.vocab)  # doctest: +SKIP
    500
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from .config import TrainConfig, preset_name
from .corpus import plan_chunks
from .counting import CountOutcome, CountUpdate, count_parallel, count_serial
from .events import (
    CorpusStats,
    CountProgress,
    Finished,
    MergeMade,
    Phase,
    PhaseStarted,
    StopReason,
    TrainEvent,
    TrainResult,
)
from .merge import MergeLoop

#: With ``workers=None``, corpora smaller than this are counted in this process: starting worker
#: processes costs more than it saves on them.
PARALLEL_MIN_BYTES = 8 * 1024 * 1024

Cancel = Callable[[], bool]
"""A cancellation flag: a callable that returns True once the run should stop (e.g. ``event.is_set``)."""


def _never() -> bool:
    return False


def _worker_count(config: TrainConfig, total_bytes: int, chunks: int) -> int:
    if config.workers is None:
        wanted = 1 if total_bytes < PARALLEL_MIN_BYTES else config.effective_workers
    else:
        wanted = config.workers
    return max(1, min(wanted, chunks))


def iter_train(config: TrainConfig, *, cancel: Cancel | None = None) -> Iterator[TrainEvent]:
    """Train a BPE tokenizer, yielding progress events; the last event is :class:`Finished`.

    Args:
        config: What to train.
        cancel: Checked between steps; once it returns True the run stops early and the
            :class:`Finished` event carries a result whose ``stop_reason`` is ``CANCELLED``.

    Raises:
        CorpusDecodeError: A file is not valid UTF-8 and ``config.invalid_utf8`` is ``error``.
        WorkerCrashedError: A counting worker process died.
        OSError: A file could not be read.
    """
    cancelled = cancel or _never
    start = time.perf_counter()
    timings: dict[str, float] = {}

    def now() -> float:
        return time.perf_counter() - start

    yield PhaseStarted(Phase.PLANNING, now())
    chunks = plan_chunks(
        config.inputs,
        chunk_size=config.chunk_size,
        special_tokens=config.special_tokens,
        newline_cuts=preset_name(config.pattern) is not None,
    )
    total_bytes = sum(path.stat().st_size for path in config.inputs)
    timings[Phase.PLANNING.value] = now()

    yield PhaseStarted(Phase.COUNTING, now())
    workers = _worker_count(config, total_bytes, len(chunks))
    options: dict[str, Any] = {
        "pattern": config.pattern_regex,
        "special_tokens": config.special_tokens,
        "policy": config.invalid_utf8,
        "cancelled": cancelled,
    }
    counting = (
        count_serial(chunks, **options)
        if workers == 1
        else count_parallel(chunks, workers=workers, **options)
    )
    outcome: CountOutcome | None = None
    # closing(): if our consumer stops iterating, the worker processes are stopped at once.
    with contextlib.closing(counting):
        for item in counting:
            if isinstance(item, CountUpdate):
                yield CountProgress(item.bytes_done, total_bytes, item.unique_pretokens, now())
            else:
                outcome = item
    timings[Phase.COUNTING.value] = now() - timings[Phase.PLANNING.value]
    stats = CorpusStats(files=len(config.inputs), bytes=total_bytes)
    if outcome is not None:
        stats = CorpusStats(
            files=len(config.inputs),
            bytes=total_bytes,
            documents=outcome.totals.documents,
            special_tokens=outcome.totals.special_tokens,
            pretokens=outcome.totals.pretokens,
            unique_pretokens=len(outcome.counts),
        )
        yield CountProgress(total_bytes, total_bytes, len(outcome.counts), now())

    base = [bytes([i]) for i in range(256)]
    merges: list[tuple[bytes, bytes]] = []
    merge_counts: list[int] = []
    if outcome is None or cancelled():
        reason = StopReason.CANCELLED
        token_bytes = base
    else:
        yield PhaseStarted(Phase.MERGING, now())
        merge_start = now()
        loop = MergeLoop(outcome.counts, base, max_token_length=config.max_token_length)
        del outcome  # the loop keeps what it needs; let the table go
        wanted = config.vocab_size - 256 - len(config.special_tokens)
        tb = loop.token_bytes
        for m in loop.run(new_tokens=wanted, min_frequency=config.min_frequency, cancelled=cancelled):
            pair = (tb[m.left], tb[m.right])
            merges.append(pair)
            merge_counts.append(m.count)
            yield MergeMade(len(merges) - 1, pair, m.count, m.token_id, tb[m.token_id], wanted, now())
        assert loop.stop_reason is not None
        reason = loop.stop_reason
        token_bytes = loop.token_bytes
        timings[Phase.MERGING.value] = now() - merge_start

    vocab = dict(enumerate(token_bytes))
    for token in config.special_tokens:
        vocab[len(vocab)] = token.encode("utf-8")
    timings["total"] = now()
    result = TrainResult(
        vocab=vocab,
        merges=merges,
        merge_counts=merge_counts,
        special_tokens=config.special_tokens,
        pattern=config.pattern_regex,
        stop_reason=reason,
        stats=stats,
        timings=timings,
    )
    yield Finished(result, now())


def train(
    config: TrainConfig,
    *,
    on_progress: Callable[[TrainEvent], None] | None = None,
    cancel: Cancel | None = None,
) -> TrainResult:
    """Train a BPE tokenizer and return the result.

    Args:
        config: What to train.
        on_progress: Called with every progress event, in order.
        cancel: Checked between steps; see :func:`iter_train`.

    Example:
        >>> train(TrainConfig(inputs=["corpus.txt"], vocab_size=300)).stop_reason  # doctest: +SKIP
        <StopReason.VOCAB_SIZE: 'vocab_size'>
    """
    for event in iter_train(config, cancel=cancel):
        if on_progress is not None:
            on_progress(event)
        if isinstance(event, Finished):
            return event.result
    raise AssertionError("iter_train ended without a Finished event")  # pragma: no cover


def train_bpe(
    input_path: str | os.PathLike[str],
    vocab_size: int,
    special_tokens: Sequence[str],
    **kwargs: Any,
) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    """Train on one file and return ``(vocab, merges)``, as the Stanford CS336 assignment-1 tests expect.

    Extra keyword arguments are :class:`TrainConfig` fields (``workers``, ``pattern``, ...).

    Example:
        >>> vocab, merges = train_bpe("corpus.en", 500, ["<|endoftext|>"])  # doctest: +SKIP
    """
    config = TrainConfig(
        inputs=(Path(input_path),), vocab_size=vocab_size, special_tokens=tuple(special_tokens), **kwargs
    )
    result = train(config)
    return result.vocab, result.merges
