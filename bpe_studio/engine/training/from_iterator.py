"""Train from documents in memory: any iterable of ``str`` (a list, a generator, a ``datasets`` column).

The documents are gathered into batches of about :data:`BATCH_BYTES` and counted in the worker processes
like the chunks of a file (each document is one document, as if the texts were written to a file joined by
a special token; special tokens inside a text still split it). The iterable is read once, lazily, while
the workers count, so memory holds a few batches, not the corpus.

Example:
    >>> from bpe_studio.engine import train_from_iterator
    >>> result = train_from_iterator(["the cat", "the hat"] * 100, vocab_size=260)
    >>> result.merges[0]
    (b't', b'h')
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import Any

from ..config import InvalidUtf8Policy, TrainConfig
from ..corpus.sources import Documents, replace_lone_surrogates
from ..events import CountProgress, Finished, Phase, PhaseStarted, TrainEvent, TrainResult
from .counting import CountOutcome, CountUpdate, count_parallel, count_serial
from .trainer import PARALLEL_MIN_BYTES, Cancel, iter_train

#: About how many UTF-8 bytes of documents go to a worker at a time.
BATCH_BYTES = 1 << 20
# Options of TrainConfig that name files or clusters, which have no meaning for documents in memory.
_FILE_OPTIONS = (
    "inputs",
    "urls",
    "cluster",
    "counts_in",
    "counts_out",
    "checkpoint",
    "resume",
    "text_field",
    "skip_bad_records",
)
# TrainConfig needs a corpus; this stands for the iterable (it is never opened).
_PLACEHOLDER = "<iterator>"


def _batches(texts: Iterable[str], batch_bytes: int, policy: InvalidUtf8Policy) -> Iterator[Documents]:
    """Group documents into :class:`Documents` batches of about ``batch_bytes`` UTF-8 bytes.

    A document with a lone surrogate (not text UTF-8 can hold) follows ``policy`` as a file's invalid byte
    does: an error naming the item, or U+FFFD in its place.
    """
    batch: list[str] = []
    size = 0
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(
                f"texts: item {index} is {type(text).__name__}, not str; give the documents as strings "
                "(decode bytes first)"
            )
        try:
            size += len(text.encode("utf-8"))
        except UnicodeEncodeError as exc:
            if policy is not InvalidUtf8Policy.REPLACE:
                raise ValueError(
                    f"texts: item {index} holds a lone surrogate \\u{ord(text[exc.start]):04x} at character "
                    f"{exc.start:,}, which is not text (UTF-8 cannot hold it); fix the document, or train "
                    "with invalid_utf8='replace' to read it as U+FFFD"
                ) from None
            text = replace_lone_surrogates(text)
            size += len(text.encode("utf-8"))
        batch.append(text)
        if size >= batch_bytes:
            yield Documents(batch, size)
            batch, size = [], 0
    if batch:
        yield Documents(batch, size)


def _count_step(
    texts: Iterable[str], batch_bytes: int
) -> Callable[..., Generator[TrainEvent, None, tuple[CountOutcome | None, int]]]:
    """The counting phase of :func:`~bpe_studio.engine.training.trainer.iter_train` for documents in
    memory."""

    def step(
        config: TrainConfig, cancelled: Cancel, now: Callable[[], float], timings: dict[str, float]
    ) -> Generator[TrainEvent, None, tuple[CountOutcome | None, int]]:
        yield PhaseStarted(Phase.PLANNING, now())
        timings[Phase.PLANNING.value] = now()
        yield PhaseStarted(Phase.COUNTING, now())
        batches = _batches(texts, batch_bytes, config.invalid_utf8)
        # The size is unknown in advance: with workers=None, read up to PARALLEL_MIN_BYTES first, and
        # count in this process if that was all (starting workers costs more than it saves).
        head: list[Documents] = []
        if config.workers is None:
            seen = 0
            for batch in batches:
                head.append(batch)
                seen += batch.size
                if seen >= PARALLEL_MIN_BYTES:
                    break
            workers = config.effective_workers if seen >= PARALLEL_MIN_BYTES else 1
        else:
            workers = config.workers
        read = 0

        def counted() -> Iterator[Documents]:
            nonlocal read
            for batch in itertools.chain(head, batches):
                read += batch.size
                yield batch

        options: dict[str, Any] = {
            "pattern": config.pattern_regex,
            "special_tokens": config.special_tokens,
            "policy": config.invalid_utf8,
            "cancelled": cancelled,
        }
        counting = (
            count_serial(counted(), **options)
            if workers == 1
            else count_parallel(counted(), workers=workers, **options)
        )
        outcome: CountOutcome | None = None
        try:
            for item in counting:
                if isinstance(item, CountUpdate):
                    # The total is not known before the iterable ends: what has been read so far.
                    yield CountProgress(
                        item.bytes_done, max(read, item.bytes_done), item.unique_pretokens, now()
                    )
                else:
                    outcome = item
        finally:
            counting.close()  # stops the worker processes, however this ends
        timings[Phase.COUNTING.value] = now() - timings[Phase.PLANNING.value]
        return outcome, read

    return step


def iter_train_from_iterator(
    texts: Iterable[str],
    *,
    vocab_size: int,
    special_tokens: Iterable[str] = (),
    cancel: Cancel | None = None,
    batch_bytes: int = BATCH_BYTES,
    **options: Any,
) -> Iterator[TrainEvent]:
    """Train on documents given as strings, yielding the events of
    :func:`~bpe_studio.engine.training.trainer.iter_train` (the last is :class:`Finished`).

    Args:
        texts: The documents, read once (a generator is fine). Each is one document.
        vocab_size: Size of the final vocabulary (256 bytes + merges + special tokens).
        special_tokens: The special tokens, in id order.
        cancel: Checked between steps; see :func:`~bpe_studio.engine.training.trainer.iter_train`.
        batch_bytes: About how many bytes of documents a worker counts at a time.
        **options: Other :class:`TrainConfig` fields (``pattern``, ``workers``, ``min_frequency``,
            ``max_token_length``, ``invalid_utf8``, ``extend``, ``superword_transition``: then ``texts``
            must be a collection, read twice); the ones naming files or clusters are refused.

    Raises:
        ValueError: A refused option or a bad value (raised at once, before the iterable is read).
        TypeError: An item of ``texts`` is not a ``str`` (raised while counting).

    Example:
        >>> events = list(iter_train_from_iterator(["ab ab ab"], vocab_size=257))
        >>> events[-1].result.merges
        [(b'a', b'b')]
    """
    config = _config(texts, vocab_size, special_tokens, batch_bytes, options)
    if config.superword_transition is not None and iter(texts) is texts:
        # Stage 2 counts the documents again: a generator would be empty the second time.
        raise ValueError(
            "superword_transition: a superword run reads the documents twice; give a list or another "
            "collection, not an iterator or generator"
        )
    return iter_train(config, cancel=cancel, _count=_count_step(texts, batch_bytes))


def train_from_iterator(
    texts: Iterable[str],
    *,
    vocab_size: int,
    special_tokens: Iterable[str] = (),
    on_progress: Callable[[TrainEvent], None] | None = None,
    cancel: Cancel | None = None,
    batch_bytes: int = BATCH_BYTES,
    **options: Any,
) -> TrainResult:
    """Train on documents given as strings and return the result (as Hugging Face ``tokenizers`` does).

    See :func:`iter_train_from_iterator` for the arguments; ``on_progress`` is called with every event.

    Example:
        >>> train_from_iterator(["low lower lowest"] * 10, vocab_size=260).merges[:2]
        [(b'o', b'w'), (b'l', b'ow')]
    """
    events = iter_train_from_iterator(
        texts,
        vocab_size=vocab_size,
        special_tokens=special_tokens,
        cancel=cancel,
        batch_bytes=batch_bytes,
        **options,
    )
    for event in events:
        if on_progress is not None:
            on_progress(event)
        if isinstance(event, Finished):
            return event.result
    raise AssertionError("iter_train ended without a Finished event")  # pragma: no cover


def _config(
    texts: Iterable[str],
    vocab_size: int,
    special_tokens: Iterable[str],
    batch_bytes: int,
    options: dict[str, Any],
) -> TrainConfig:
    if isinstance(texts, (str, bytes)):
        raise ValueError(
            "texts: a single string would make one document per character; pass a list of documents, "
            "e.g. [text]"
        )
    if not isinstance(texts, Iterable):
        raise ValueError(f"texts: {type(texts).__name__} is not iterable; pass a list or generator of str")
    refused = [name for name in _FILE_OPTIONS if name in options]
    if refused:
        raise ValueError(
            f"{refused[0]}: not available when training from an iterator (it reads no files); use "
            "train(TrainConfig(inputs=...)) for files"
        )
    if not isinstance(batch_bytes, int) or batch_bytes < 1:
        raise ValueError(f"batch_bytes: {batch_bytes!r} must be a positive number of bytes")
    specials = special_tokens if isinstance(special_tokens, str) else tuple(special_tokens)
    return TrainConfig(
        inputs=(_PLACEHOLDER,),  # type: ignore[arg-type]
        vocab_size=vocab_size,
        special_tokens=specials,  # type: ignore[arg-type]
        **options,
    )
