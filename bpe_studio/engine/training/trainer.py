"""Training: the phases of a run as an iterator of progress events, and the functions built on it.

Example:
    >>> result = train(TrainConfig(inputs=["corpus.txt"], vocab_size=300))
    >>> len(result.vocab)
    300
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import gc
import os
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from pathlib import Path
from typing import Any, cast

from .. import native
from ..config import TrainConfig
from ..corpus.plan import (
    Chunk,
    CorpusDecodeError,
    FileState,
    check_unchanged,
    local_file_state,
    plan_chunks,
    snapshot,
)
from ..corpus.remote import file_size, file_stamp, open_binary
from ..corpus.sources import plan_sources, source_kind
from ..events import (
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
from ..pretokenize.patterns import newline_cuts_certain, scanner_name
from ..workers.protocol import decode_table
from .checkpoint import (
    CorpusFile,
    CountsData,
    CountsFileError,
    CountsHeader,
    EncodedSections,
    corpus_identity,
    encode_counts,
    mismatch,
    save_checkpoint,
    save_counts,
)
from .checkpoint import load as load_counts_file
from .counting import (
    CountOutcome,
    CountUpdate,
    count_parallel,
    count_serial,
    count_threads,
    counting_path,
    merged_tables,
)
from .extend import SUPERWORD_PATTERN, ExtendBase, encode_sequentially, with_base
from .merge import Merge, MergeLoop, ReplayError
from .preflight import preflight

#: With ``workers=None``, corpora smaller than this are counted in this process: starting worker
#: processes costs more than it saves on them.
PARALLEL_MIN_BYTES = 8 * 1024 * 1024

Cancel = Callable[[], bool]
"""A cancellation flag: a callable that returns True once the run should stop (e.g. ``event.is_set``)."""


class _GcPause:
    """Automatic garbage collection off while the engine runs, and as the consumer had it at every yield.

    ``iter_train`` is a generator: between two events its consumer's code runs, maybe for hours if it
    pauses, and must find collection as it left it. So collection is handed back around each ``yield``
    and taken off again when the engine resumes; leaving the block (end, error or ``close()``) restores
    the consumer's setting.

    Example:
        >>> consumer = gc.isenabled()
        >>> with _GcPause() as pause:
        ...     paused = gc.isenabled()
        ...     with pause.handing_over():
        ...         handed_back = gc.isenabled()  # at a yield: the consumer's setting
        >>> (paused, handed_back == consumer, gc.isenabled() == consumer)
        (False, True, True)
    """

    def __init__(self) -> None:
        self._consumer_enabled = gc.isenabled()
        self._hand_over = _HandOver(self)

    def __enter__(self) -> _GcPause:
        self._consumer_enabled = gc.isenabled()
        gc.disable()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._consumer_enabled:
            gc.enable()

    def handing_over(self) -> _HandOver:
        """Give the consumer its setting for the ``yield`` in the block; collection is off again after it."""
        return self._hand_over


class _HandOver:
    """:meth:`_GcPause.handing_over`'s context manager, one per pause: a ``contextlib.contextmanager``
    made a generator per merge event, 2 µs of each (60 ms of a 32k run, issue 22)."""

    __slots__ = ("_pause",)

    def __init__(self, pause: _GcPause) -> None:
        self._pause = pause

    def __enter__(self) -> None:
        if self._pause._consumer_enabled:
            gc.enable()

    def __exit__(self, *exc_info: object) -> None:
        # The consumer may have changed the setting meanwhile: it is theirs, kept for the next yield.
        self._pause._consumer_enabled = gc.isenabled()
        gc.disable()


def _never() -> bool:
    return False


def _remote_file_state(name: str) -> FileState:
    return FileState(file_size(name), file_stamp(name))


#: A corpus is cut into at least this many chunks per worker when ``chunk_size`` allows it...
CHUNKS_PER_WORKER = 4
#: ... and chunks no smaller than this (each costs a read, a split and a table of its own).
MIN_BALANCED_CHUNK = 256 * 1024


def _balanced_chunk_size(config: TrainConfig, total_bytes: int) -> int:
    """``config.chunk_size``, or less for a corpus of few chunks, so that every worker gets several.

    With 4 MiB chunks a 2.3 MB corpus was one chunk (one of two threads counted it all) and 12.5 MB was
    three (the second round ran one thread): counting took 1.5-2x the time it takes in balanced chunks (issue
    22). Chunks stay at most ``chunk_size`` (the memory bound) and at least ``MIN_BALANCED_CHUNK``; the counts
    do not depend on where a corpus is cut.

    Example:
        >>> _balanced_chunk_size(TrainConfig(inputs=["c.txt"], vocab_size=300, workers=2), 12_000_000)
        1500000
    """
    workers = _worker_count(config, total_bytes, chunks=total_bytes)
    if workers <= 1:
        return config.chunk_size
    balanced = max(MIN_BALANCED_CHUNK, -(-total_bytes // (CHUNKS_PER_WORKER * workers)))
    return min(config.chunk_size, balanced)


def _worker_count(config: TrainConfig, total_bytes: int, chunks: int) -> int:
    if config.workers is None:
        wanted = 1 if total_bytes < PARALLEL_MIN_BYTES else config.effective_workers
    else:
        wanted = config.workers
    return max(1, min(wanted, chunks))


Pair = tuple[bytes, bytes]


@dataclasses.dataclass
class _Run:
    """What every phase of one run needs: its configuration, its cancel flag, its clock and timings."""

    config: TrainConfig
    cancelled: Cancel
    timings: dict[str, float] = dataclasses.field(default_factory=dict)
    start: float = dataclasses.field(default_factory=time.perf_counter)
    #: False when no one reads the merges' events (:func:`train` without ``on_progress``): the merging
    #: phase then yields none, only records the merges (a MergeMade, its yields and the collector's hand-
    #: over were 1-2 µs a merge, 30-60 ms of a 32k run, issue 22).
    merge_events: bool = True

    def now(self) -> float:
        """Seconds since the run started (the events' ``elapsed``)."""
        return time.perf_counter() - self.start


@dataclasses.dataclass
class _Counts:
    """What the counting phase hands on to the merging phase."""

    outcome: CountOutcome | None  # None when cancelled; dropped as soon as the merge loop holds the table
    corpus: tuple[CorpusFile, ...]  # the corpus's identity, for the counts file and checkpoints
    total_bytes: int
    files: int
    source: Path | None = None  # the counts file or checkpoint the counts came from, if any
    replay: tuple[list[Pair], list[int]] | None = None  # a checkpoint's merges, replayed on resume
    training: dict[str, Any] = dataclasses.field(default_factory=dict)  # a checkpoint's training record
    encoded: EncodedSections | None = None  # the table as written to a counts file or checkpoint

    def header(self, config: TrainConfig, kind: str, training: dict[str, Any] | None = None) -> CountsHeader:
        """The header of a counts file (``kind="counts"``) or checkpoint of these counts."""
        assert self.outcome is not None
        return CountsHeader(
            kind=kind,
            pattern=config.pattern_regex,
            special_tokens=config.special_tokens,
            invalid_utf8=config.invalid_utf8.value,
            corpus=self.corpus,
            totals=self.outcome.totals,
            unique_pretokens=self.outcome.unique,
            training=training or {},
            text_field=config.text_field,
        )


@dataclasses.dataclass
class _Merged:
    """What the merging phase made."""

    token_bytes: list[bytes]
    merges: list[Pair]
    merge_counts: list[int]
    stop_reason: StopReason


def _count_corpus(
    config: TrainConfig,
    cancelled: Cancel,
    now: Callable[[], float],
    timings: dict[str, float],
    *,
    keep_table: bool = False,
    merged_table: bool = False,
    superwords: bool = False,
) -> Generator[TrainEvent, None, tuple[CountOutcome | None, int]]:
    """Plan and count the corpus (in this process, worker processes or a cluster); returns the outcome
    (None when cancelled) and the corpus size. With ``keep_table`` (or ``merged_table``: merged into one),
    counting in threads gives its native tables, not a dict (see :class:`~.counting.CountOutcome`).

    With ``superwords`` (a superword run's stage 1), when the corpus is local plain text and the pattern has
    a native scanner (the kernel on), the stage-2 chunks are counted in the same pass (the outcome's
    ``superwords``, see :func:`~.counting.count_threads`): the corpus is then planned at the boundaries
    certain for both splits, the special tokens (the superword split runs on across newlines), which gives
    stage 1 the same counts."""
    yield PhaseStarted(Phase.PLANNING, now())
    one_pass = superwords and _one_pass_superwords(config)
    newline_cuts = newline_cuts_certain(config.pattern) and not one_pass
    options: dict[str, Any] = {
        "pattern": config.pattern_regex,
        "special_tokens": config.special_tokens,
        "policy": config.invalid_utf8,
        "cancelled": cancelled,
    }
    counting: Generator[CountUpdate | CountOutcome, None, None]
    # What each file is before planning; checked again once counting ends, as a file that changes
    # meanwhile (a download still running, a rewrite) would give counts of no version of it.
    remote = config.cluster is not None or bool(config.urls)
    state = _remote_file_state if remote else local_file_state
    states = snapshot(config.sources, state=state)
    with contextlib.ExitStack() as scope:
        if remote:
            sources = config.sources
            total_bytes = sum(file_size(name) for name in sources)

            def plan(chunk_size: int) -> list[Chunk]:
                return plan_chunks(
                    sources,
                    chunk_size=chunk_size,
                    special_tokens=config.special_tokens,
                    newline_cuts=newline_cuts,
                    open_file=open_binary,
                    file_size=file_size,
                )

            if config.cluster is not None:
                from ..corpus.distributed import ClusterSession, task_bytes

                # Leaving the scope closes the client and any LocalCluster started for this run.
                session = scope.enter_context(ClusterSession(config.cluster))
                size = task_bytes(total_bytes, session.workers, config.chunk_size)
                ranges = plan(size)
                counting = session.count(
                    ranges, chunk_size=config.chunk_size, newline_cuts=newline_cuts, **options
                )
            else:
                chunks = plan(config.chunk_size)
                counting = count_serial(chunks, open_file=open_binary, **options)
            timings[Phase.PLANNING.value] = now()
            yield PhaseStarted(Phase.COUNTING, now())
        else:
            # Plain text is cut into chunks; JSON Lines, Parquet and compressed files into the tasks of
            # sources.py (a compressed file is decompressed lazily, as the counting takes its blocks).
            total_bytes = sum(path.stat().st_size for path in config.inputs)
            chunk_size = _balanced_chunk_size(config, total_bytes)
            tasks, known = plan_sources(
                config.inputs,
                chunk_size=chunk_size,
                special_tokens=config.special_tokens,
                newline_cuts=newline_cuts,
                plan_text=lambda names: plan_chunks(
                    names,
                    chunk_size=chunk_size,
                    special_tokens=config.special_tokens,
                    newline_cuts=newline_cuts,
                ),
            )
            timings[Phase.PLANNING.value] = now()

            yield PhaseStarted(Phase.COUNTING, now())
            workers = _worker_count(config, total_bytes, known)
            options.update(text_field=config.text_field, skip_bad_records=config.skip_bad_records)
            how = counting_path(
                workers=workers,
                pattern=config.pattern_regex,
                plain_text_files=all(source_kind(path).format == "text" for path in config.inputs),
            )
            counting = (
                count_serial(tasks, superwords=one_pass, **options)
                if how == "serial"
                else count_threads(
                    tasks,
                    workers=workers,
                    keep_table=keep_table,
                    merged_table=merged_table,
                    superwords=one_pass,
                    **options,
                )
                if how == "threads"
                else count_parallel(tasks, workers=workers, **options)
            )
        outcome: CountOutcome | None = None
        # closing(): if our consumer stops iterating, the worker processes are stopped at once.
        with contextlib.closing(counting):
            try:
                for item in counting:
                    if isinstance(item, CountUpdate):
                        yield CountProgress(item.bytes_done, total_bytes, item.unique_pretokens, now())
                    else:
                        outcome = item
            except CorpusDecodeError:
                check_unchanged(states, state=state)  # a change mid-read is the better explanation
                raise
        if outcome is not None:
            check_unchanged(states, state=state)
    timings[Phase.COUNTING.value] = now() - timings[Phase.PLANNING.value]
    return outcome, total_bytes


def _one_pass_superwords(config: TrainConfig) -> bool:
    """Whether a superword run's stage 1 counts the stage-2 chunks in the same pass: local plain-text files
    (a cluster, URLs and records count the corpus again in stage 2), the native kernel on, a pattern with a
    native scanner, and no checkpoint (which needs stage 2's counts as a dict)."""
    return (
        config.cluster is None
        and not config.urls
        and config.checkpoint is None
        and native.backend() == "native"
        and scanner_name(config.pattern_regex) in native.NATIVE_SCANNERS
        and all(source_kind(path).format == "text" for path in config.inputs)
    )


def _load_counts(config: TrainConfig, source: Path) -> CountsData:
    """Load a counts file or checkpoint and check it against the run's settings once more."""
    loaded = load_counts_file(source, want_checkpoint=config.resume is not None)
    corpus = corpus_identity(config.sources) if config.sources else None
    problem = mismatch(
        loaded.header,
        pattern=config.pattern_regex,
        special_tokens=config.special_tokens,
        invalid_utf8=config.invalid_utf8.value,
        corpus=corpus,
        text_field=config.text_field,
        skip_bad_records=config.skip_bad_records,
    )
    if problem is not None:
        raise CountsFileError(source, f"cannot be used for this run: {problem}")
    return loaded


CountStep = Callable[
    [TrainConfig, Cancel, Callable[[], float], dict[str, float]],
    Generator[TrainEvent, None, tuple[CountOutcome | None, int]],
]
"""The counting of a corpus: events, then ``(outcome or None if cancelled, corpus bytes)``."""


def _count_phase(
    run: _Run,
    count: CountStep | None = None,
    *,
    keep_table: bool = False,
    merged_table: bool = False,
    superwords: bool = False,
) -> Generator[TrainEvent, None, _Counts]:
    """Counting: load the counts from a file (``counts_in`` or ``resume``), or plan and count the corpus
    (with ``count``: documents in memory, see from_iterator.py); then report the totals and write the
    counts file if asked. ``keep_table``, ``merged_table``, ``superwords``: see :func:`_count_corpus` (not
    with a counts file or checkpoint to write)."""
    config, now = run.config, run.now
    source = config.resume if config.resume is not None else config.counts_in
    if source is not None:
        yield PhaseStarted(Phase.COUNTING, now())
        loaded = _load_counts(config, source)
        counts = _Counts(
            CountOutcome(loaded.counts, loaded.header.totals),
            loaded.header.corpus,
            loaded.header.corpus_bytes,
            len(loaded.header.corpus),
            source=source,
            replay=(loaded.merges, loaded.merge_counts) if config.resume is not None else None,
            training=dict(loaded.header.training),
        )
        del loaded
        run.timings[Phase.COUNTING.value] = now()
    else:
        # The corpus's identity is taken before reading it: a file changed meanwhile then fails the check.
        wanted_identity = config.counts_out is not None or config.checkpoint is not None
        corpus = corpus_identity(config.sources) if wanted_identity else ()
        if count is None:
            step = _count_corpus(
                config,
                run.cancelled,
                now,
                run.timings,
                keep_table=keep_table,
                merged_table=merged_table,
                superwords=superwords,
            )
        else:
            step = count(config, run.cancelled, now, run.timings)
        outcome, total_bytes = yield from step
        counts = _Counts(outcome, corpus, total_bytes, len(config.sources) if count is None else 0)
    if counts.outcome is not None:
        yield CountProgress(counts.total_bytes, counts.total_bytes, counts.outcome.unique, now())
        if config.counts_out is not None or config.checkpoint is not None:
            assert not counts.outcome.tables  # kept only for a run that writes neither
            counts.encoded = encode_counts(counts.outcome.counts)
        if config.counts_out is not None:
            assert counts.encoded is not None
            save_counts(config.counts_out, counts.encoded, counts.header(config, "counts"))
    return counts


def _corpus_stats(counts: _Counts) -> CorpusStats:
    """The corpus's statistics (only its size and files when counting was cancelled)."""
    if counts.outcome is None:
        return CorpusStats(files=counts.files, bytes=counts.total_bytes)
    totals = counts.outcome.totals
    return CorpusStats(
        files=counts.files,
        bytes=counts.total_bytes,
        documents=totals.documents,
        special_tokens=totals.special_tokens,
        pretokens=totals.pretokens,
        unique_pretokens=counts.outcome.unique,
        bad_records=totals.bad_records,
    )


def _merge_phase(
    run: _Run,
    counts: _Counts,
    base: ExtendBase | None = None,
    *,
    wanted: int | None = None,
    first_index: int = 0,
    total: int | None = None,
    cut_below: int | None = None,
) -> Generator[TrainEvent, None, _Merged]:
    """Merging: replay a checkpoint's merges (on resume), then merge until the vocabulary is full, pairs
    are too rare, or the run is cancelled; save checkpoints as asked.

    With ``base`` (an extend run, or a superword run's stage 2) the words are the counted pre-tokens encoded
    with that tokenizer and the loop continues from its tokens (:mod:`.extend`); ``wanted`` is then the
    number of new tokens to make, ``first_index`` the number of the first merge's event and ``total`` the
    run's whole number of merges that the events announce (default ``wanted``: a superword run's two stages
    announce both together).

    ``cut_below`` (a superword run's stage 2, native loop): the loop runs over the words cut where a pair
    counts fewer than a threshold (equal pieces added up: a fifth of the positions on natural text), which
    makes the same merges as the whole words as long as each merge counts at least that threshold and
    makes a new token (rust/src/cut_words.rs). The threshold is first 1.5 ``cut_below`` (a guess that cuts
    more), then ``cut_below``: the first merge that breaks the condition, or an early stop, sends the run
    to the next cut, then back to the whole words; each new loop replays the merges so far (checking each)
    and goes on."""
    config, now, cancelled = run.config, run.now, run.cancelled
    start_tokens = list(base.tokens) if base is not None else [bytes([i]) for i in range(256)]
    merges: list[Pair] = []
    merge_counts: list[int] = []
    if counts.outcome is None or cancelled():
        return _Merged(start_tokens, merges, merge_counts, StopReason.CANCELLED)
    if wanted is None:
        wanted = config.vocab_size - 256 - len(config.special_tokens)
    announced = wanted if total is None else total
    # The merge loop makes millions of objects but no reference cycles; the collector's passes over
    # them cost 15-25% of its time, so automatic collection pauses while the loop runs (not while our
    # consumer's code runs between events: see _GcPause).
    with _GcPause() as gc_pause:
        with gc_pause.handing_over():
            yield PhaseStarted(Phase.MERGING, now())
        merge_start = now()
        training: dict[str, Any] = {
            "vocab_size": config.vocab_size,
            "min_frequency": config.min_frequency,
            "max_token_length": config.max_token_length,
        }
        if base is not None:
            training["extend"] = base.fingerprint
        checkpoint_header = (
            counts.header(config, "checkpoint", training) if config.checkpoint is not None else None
        )
        encoded = None
        threads = 1  # for the cut (below)
        if base is None:
            words = counts.outcome.counts
            if counts.outcome.tables:
                # The counting threads' table, merged natively: its keys as byte words, no str per key.
                (merged,) = counts.outcome.tables
                counts.outcome = None
                encoded = merged.byte_words()
                del merged
        else:
            # The pre-tokens as words of the tokenizer's ids; the table is emptied as they are encoded (it
            # is not needed after: a checkpoint stores the counts encoded before this phase). For the native
            # loop, as flat ids, not a str per word.
            table = counts.outcome.counts
            kept = counts.outcome.tables  # a superword run's stage 2: the native count tables, no dict
            parted = counts.outcome.parted  # or those tables split into parts while stage 1 merged
            counts.outcome = None
            encoded = None
            # The cut shares its work among as many threads as counted the chunks (see _worker_count).
            threads = max(1, len(kept or ()), parted.threads if parted is not None else 0)
            if parted is not None:
                encoded = base.encode_native_tables(parted)
                if encoded is None:  # (stage 1 remade a token: the chunks are encoded merge by merge)
                    kept = tuple(parted.tables())
                else:
                    native.release_free_memory()  # (as below)
                del parted
            if kept:
                encoded = base.encode_native_tables(kept)
                # The tables were freed in the counting threads' heaps (arenas), which this thread does not
                # reuse: given back, they are not part of the peak that the merge loop's index makes.
                native.release_free_memory()
                if encoded is None:
                    table = decode_table(merged_tables(list(kept)).to_frame())
                del kept
            if encoded is None and native.backend() == "native":
                encoded = base.encode_arrays(table)
            words = {} if encoded is not None else base.encode_words(table, consume=True)
            del table
        whole: native.PackedWords | None = None  # the words, while the loop runs over their pieces
        # The cuts to try, the first one first: a guess, half as high again as the safe threshold (stage
        # 2's merges count more than stage 1's last one on natural text: 1.6-2.3x, 25-100 MB), which cuts
        # a quarter of the positions the safe one keeps; if a merge counts less, the run cuts again at
        # the safe one, and only below that goes back to the whole words.
        cuts: list[int] = []
        if cut_below is not None:
            cut_below = max(cut_below, config.min_frequency)  # rarer pairs never merge anyway
            cuts = [cut_below * 3 // 2, cut_below] if cut_below > 1 else [cut_below]
        cut = cut_below is not None and counts.replay is None and checkpoint_header is None
        if cut and cuts and encoded is not None:
            cut_below = cuts.pop(0)
            pieces = native.cut_rare_pairs(encoded, below=cut_below, threads=threads)
            if pieces is not None:
                # Kept aside packed (ids in 16 bits, most often): the loop rarely goes back to them.
                whole, encoded = encoded.packed(), pieces
                native.release_free_memory()  # the cut's tables, freed

        loop = MergeLoop(
            words,
            start_tokens,
            max_token_length=config.max_token_length,
            cancelled=cancelled,
            encoded=encoded,
            heap_min=cut_below if whole is not None and cut_below is not None else 0,
        )
        del words, encoded
        counts.outcome = None  # the loop keeps what it needs; let the table go
        tb = loop.token_bytes
        final_id = base.final_id if base is not None else int

        quiet = not run.merge_events

        def made(m: Merge) -> MergeMade:
            pair = (tb[m.left], tb[m.right])
            merges.append(pair)
            merge_counts.append(m.count)
            index = first_index + len(merges) - 1
            return MergeMade(index, pair, m.count, final_id(m.token_id), tb[m.token_id], announced, now())

        def record(m: Merge) -> None:
            """``made`` without its event (``quiet``)."""
            merges.append((tb[m.left], tb[m.right]))
            merge_counts.append(m.count)

        def save(stop: StopReason | None) -> None:
            assert config.checkpoint is not None and checkpoint_header is not None
            assert counts.encoded is not None
            stamp = dataclasses.replace(
                checkpoint_header,
                training={**training, "stop_reason": stop.value if stop is not None else None},
            )
            save_checkpoint(config.checkpoint, counts.encoded, stamp, merges, merge_counts)

        if counts.replay is not None:
            recorded, recorded_counts = counts.replay
            counts.replay = None
            then = counts.training.get("extend")
            if then != training.get("extend"):
                problem = (
                    "was trained from another tokenizer, or from none; resume with the --extend tokenizer "
                    "it was made with"
                    if then is not None or base is not None
                    else "does not match"
                )
                raise CountsFileError(counts.source or "", f"cannot be used for this run: it {problem}")
            try:
                for m in loop.replay(
                    recorded,
                    recorded_counts,
                    new_tokens=wanted,
                    min_frequency=config.min_frequency,
                    cancelled=cancelled,
                ):
                    if quiet:
                        record(m)
                        continue
                    with gc_pause.handing_over():
                        yield made(m)
            except ReplayError as exc:
                problem = f"does not hold a consistent run ({exc})"
                raise CountsFileError(counts.source or "", problem) from None
            del recorded, recorded_counts
        saved = len(merges)
        while loop.stop_reason is None:
            every = config.checkpoint_every
            created = len(tb) - len(start_tokens)
            exact = True
            if quiet and whole is None and checkpoint_header is None:
                # Every merge only recorded: the loop appends them itself (see MergeLoop.run_recorded).
                loop.run_recorded(
                    merges,
                    merge_counts,
                    new_tokens=wanted - created,
                    min_frequency=config.min_frequency,
                    cancelled=cancelled,
                )
                break
            # Batched: this loop either takes every merge or drops the loop (a cut-words run's fallback
            # below makes a new one; a cancelled or closed run ends).
            for m in loop.run(
                new_tokens=wanted - created,
                min_frequency=config.min_frequency,
                cancelled=cancelled,
                batched=True,
            ):
                if whole is not None and (m.count < (cut_below or 0) or m.token_id != len(tb) - 1):
                    exact = False  # this merge may not be the whole words' one: not reported
                    break
                if quiet:
                    record(m)
                else:
                    with gc_pause.handing_over():
                        yield made(m)
                if checkpoint_header is not None and len(merges) % every == 0:
                    save(None)
                    saved = len(merges)
            else:
                stopped = loop.stop_reason
                exact = whole is None or stopped in (StopReason.VOCAB_SIZE, StopReason.CANCELLED)
            if exact:
                break
            assert whole is not None
            del loop  # its index goes before the next one is built
            words_again = whole.unpacked()
            pieces = None
            if cuts:  # cut again, lower
                cut_below = cuts.pop(0)
                pieces = native.cut_rare_pairs(words_again, below=cut_below, threads=threads)
            if pieces is None:
                whole = None  # the whole words, from now on
            else:
                words_again = pieces
            loop = MergeLoop(
                {},
                start_tokens,
                max_token_length=config.max_token_length,
                cancelled=cancelled,
                encoded=words_again,
                heap_min=cut_below if whole is not None and cut_below is not None else 0,
            )
            del words_again
            tb = loop.token_bytes
            least = config.min_frequency
            replayed = loop.replay(
                merges, merge_counts, new_tokens=wanted, min_frequency=least, cancelled=cancelled
            )
            collections.deque(replayed, maxlen=0)
        assert loop.stop_reason is not None
        if checkpoint_header is not None and len(merges) > saved:
            save(loop.stop_reason)
        run.timings[Phase.MERGING.value] = now() - merge_start
        return _Merged(loop.token_bytes, merges, merge_counts, loop.stop_reason)


def _finish(run: _Run, stats: CorpusStats, merged: _Merged, base: ExtendBase | None = None) -> Finished:
    """The run's result: the vocabulary (bytes, merged tokens, then the special tokens) and its record; for an
    extend run, the tokenizer's vocabulary and merges with the new ones after them."""
    config = run.config
    extra: dict[str, Any] = {}
    if base is None:
        vocab = dict(enumerate(merged.token_bytes))
        for token in config.special_tokens:
            vocab[len(vocab)] = token.encode("utf-8")
        merges, merge_counts = merged.merges, merged.merge_counts
    else:
        vocab = dict(base.vocab)
        for loop_id in range(len(base.tokens), len(merged.token_bytes)):
            vocab[base.final_id(loop_id)] = merged.token_bytes[loop_id]
        merges = [*base.merges, *merged.merges]
        merge_counts = [0] * len(base.merges) + merged.merge_counts
        extra = {
            "special_ids": dict(base.special_ids),
            "rule": base.rule,
            "ignore_merges": base.ignore_merges,
            "base_merges": len(base.merges),
        }
    run.timings["total"] = run.now()
    result = TrainResult(
        vocab=vocab,
        merges=merges,
        merge_counts=merge_counts,
        special_tokens=config.special_tokens,
        pattern=config.pattern_regex,
        stop_reason=merged.stop_reason,
        stats=stats,
        timings=run.timings,
        **extra,
    )
    return Finished(result, run.now())


def _stage1_base(stage1: _Merged) -> ExtendBase:
    """The stage-1 tokenizer of a superword run, laid out to encode stage 2's chunks whole.

    A chunk's tokens are the stage-1 merges applied one after the other (the merge loop's own rule). When no
    merge remade an existing token, BPE by rank gives the same tokens, and the native encoder does it fast
    (``encode_words``: each chunk cut where no stage-1 token spans, its parts -- mostly its words, which recur
    across chunks -- through a large cache); otherwise (or without the native kernel)
    :func:`~.extend.encode_sequentially` does.
    """
    tokens, merges = stage1.token_bytes, stage1.merges
    ids = {token: i for i, token in enumerate(tokens)}
    remade = len({left + right for left, right in merges}) < len(merges)
    encoder = None
    if not remade:
        triples = [(ids[left], ids[right], ids[left + right]) for left, right in merges]
        encoder = native.encoder(
            range(256), triples, None, list(tokens), cache_size=1 << 17, preset=None, split=lambda s: [s]
        )

    def one_by_one(pieces: list[str]) -> list[list[int]]:
        keys = [piece.encode("utf-8").decode("latin-1") for piece in pieces]
        return encode_sequentially(keys, tokens, merges)

    return ExtendBase.make(
        "stage 1",
        dict(enumerate(tokens)),
        merges,
        {},
        pattern="",
        rule="merges",
        ignore_merges=False,
        encode_pieces=one_by_one if encoder is None else encoder.encode_each,
        encode_raw=lambda raw: encode_sequentially([raw], tokens, merges)[0],
        sequential=encoder is None,
        encode_flat=None if encoder is None else encoder.encode_flat,
        encode_keys=None if encoder is None else encoder.encode_words,
        encode_tables=None if encoder is None else encoder.encode_tables,
    )


class _Splitting:
    """``native.split_chunks`` on a thread of its own (the GIL released while it splits), started at once."""

    def __init__(self, tables: Sequence[native.NativeCountTable], held: bytes) -> None:
        self._parted: native.PartedChunks | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._split, args=(tables, held), name="bpe-split-chunks")
        self._thread.start()

    def _split(self, tables: Sequence[native.NativeCountTable], held: bytes) -> None:
        try:
            self._parted = native.split_chunks(tables, held)
        except BaseException as error:  # passed on to the thread that joins
            self._error = error

    def join(self) -> native.PartedChunks:
        """The split chunks, once the thread has ended (its work is linear in the chunks' bytes, with no
        wait on anything outside this process); its error raised here."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._parted is not None
        return self._parted


def _superword_run(run: _Run, count: CountStep | None) -> Generator[TrainEvent, None, Finished]:
    """Stage 1: ordinary BPE to ``superword_transition``; stage 2: the corpus's chunks under
    :data:`~.extend.SUPERWORD_PATTERN`, each encoded with the stage-1 merges, merged on to ``vocab_size``.
    The special tokens take the last ids, as in every run from scratch.

    Stage 2's chunks are counted with stage 1's pre-tokens, in the same pass over the corpus, when it can
    (:func:`_one_pass_superwords`: local plain text, the native kernel, no checkpoint; not from a counts file
    nor documents in memory); otherwise stage 2 counts the corpus again, after stage 1."""
    config = run.config
    transition = config.superword_transition
    assert transition is not None
    specials = len(config.special_tokens)
    one_pass = count is None and config.resume is None and config.counts_in is None
    one_pass = one_pass and _one_pass_superwords(config)
    if one_pass:
        # Stage 2's tables are counted with stage 1's, in the counting threads' heaps: mapped apart (see
        # below), they go back to the system once encoded, instead of staying resident in those heaps.
        native.map_large_allocations()
    # As a plain run from scratch: with nothing to write from the counts, the counting threads' native table
    # goes straight to stage 1's merge loop (no dict of a str per pre-token: a fifth of counting's time, and
    # most of stage 1's peak memory, which stage 2's tables now add to).
    direct = config.counts_out is None and config.checkpoint is None
    counts = yield from _count_phase(run, count, merged_table=direct, superwords=one_pass)
    # The stage-2 chunks counted in the same pass, if they were: held apart while stage 1 merges.
    counted2 = counts.outcome.superwords if counts.outcome is not None else None
    if counts.outcome is not None and counted2 is not None:
        counts.outcome = dataclasses.replace(counts.outcome, superwords=None)
    stats = _corpus_stats(counts)
    total = config.vocab_size - 256 - specials
    # Stage 1's merge loop runs on one thread: meanwhile another splits stage 2's chunks into their
    # distinct parts, each encoded once when stage 1's merges are known (native.split_chunks).
    splitting = None
    if (
        counted2 is not None
        and counted2.tables
        and counts.outcome is not None
        and len(counts.outcome.tables) == 1
    ):
        splitting = _Splitting(counted2.tables, native.held_pairs(counts.outcome.tables[0]))
    try:
        stage1 = yield from _merge_phase(run, counts, wanted=transition - 256 - specials, total=total)
    finally:
        parted = splitting.join() if splitting is not None else None
    if counted2 is not None and parted is not None:
        counted2 = dataclasses.replace(counted2, tables=(), parted=parted)
    total_bytes, files = counts.total_bytes, counts.files
    del counts
    if stage1.stop_reason is StopReason.CANCELLED or run.cancelled():
        return _finish(run, stats, stage1)
    base = _stage1_base(stage1)
    # Stage 1's counts and merge kernel are freed but stay in the main thread's heap, which stage 2's
    # counting threads (each allocating from an arena of its own) would not reuse: given back now, they
    # are not part of stage 2's peak (80 MB on 100 MB of text).
    native.release_free_memory()
    # Stage 2's large buffers (the counting threads' tables, the encoded ids, the cut's) each mapped apart
    # and unmapped when freed: from glibc's heaps they stayed resident once freed, 70-90 MB of the run's
    # peak on 50-100 MB of text (rust/src/py/mod.rs, map_large_allocations).
    native.map_large_allocations()
    # Stage 2 on a clock of its own (its phases' timestamps start at 0), reported as superword_* timings.
    stage2_config = config.replace(pattern=SUPERWORD_PATTERN, counts_out=None)
    stage2_run = dataclasses.replace(run, config=stage2_config, timings={}, start=time.perf_counter())
    # Stage 2's chunks stay in the native count table until they are encoded from it (no dict of a million
    # long str: that was most of the run's peak memory), unless a checkpoint needs them as counts.
    if counted2 is None:
        counts2 = yield from _count_phase(stage2_run, count, keep_table=config.checkpoint is None)
    else:
        # Counted with stage 1: the phase reports its totals at once, as when counts come from a file.
        yield PhaseStarted(Phase.COUNTING, stage2_run.now())
        counts2 = _Counts(counted2, (), total_bytes, files)
        del counted2
        yield CountProgress(
            total_bytes, total_bytes, counts2.outcome.unique if counts2.outcome else 0, stage2_run.now()
        )
        stage2_run.timings[Phase.COUNTING.value] = stage2_run.now()
    stage2 = yield from _merge_phase(
        stage2_run,
        counts2,
        base,
        wanted=config.vocab_size - len(base.tokens) - specials,
        first_index=len(stage1.merges),
        total=total,
        # Stage 2's merges count about as much as stage 1's last or more (on natural text): cut below that.
        cut_below=stage1.merge_counts[-1] if stage1.merge_counts else None,
    )
    merged = _Merged(
        stage2.token_bytes,
        stage1.merges + stage2.merges,
        stage1.merge_counts + stage2.merge_counts,
        stage2.stop_reason,
    )
    for phase, seconds in stage2_run.timings.items():
        run.timings[f"superword_{phase}"] = seconds
    finished = _finish(dataclasses.replace(run, config=stage2_config), stats, merged)
    result = dataclasses.replace(finished.result, superword_transition=len(stage1.merges))
    return Finished(result, finished.elapsed)


def iter_train(
    config: TrainConfig,
    *,
    cancel: Cancel | None = None,
    merge_events: bool = True,
    _count: CountStep | None = None,
) -> Iterator[TrainEvent]:
    """Train a BPE tokenizer, yielding progress events; the last event is :class:`Finished`.

    The phases are planning, counting and merging. With a ``cluster``, planning includes starting or
    reaching it. With counts from a file (``counts_in`` or ``resume``) there is no planning: the counting
    phase loads the file and reports the totals it records in one :class:`CountProgress` (the bytes of the
    corpus it was counted from), and ``timings["counting"]`` is the time the loading took. On ``resume``,
    the merges replayed from the checkpoint are reported as :class:`MergeMade` events like new ones, so the
    events, the result and its statistics are those of an uninterrupted run.

    Args:
        config: What to train.
        cancel: Checked between steps; once it returns True the run stops early and the
            :class:`Finished` event carries a result whose ``stop_reason`` is ``CANCELLED``.
        merge_events: False for a consumer that shows no merge: no :class:`MergeMade` is made (1-2 µs
            each); the other events and the result are the same.

    Raises:
        CorpusDecodeError: A file is not valid UTF-8 and ``config.invalid_utf8`` is ``error``.
        CorpusChangedError: A corpus file changed (size or modification time) while it was being read.
        WorkerCrashedError: A counting worker process died.
        ClusterError: The cluster could not be started or reached, or its tasks failed.
        CountsFileError: A counts file or checkpoint is unreadable, truncated, corrupt or does not match.
        OSError: A file could not be read or written.
        ValueError: :func:`~bpe_studio.engine.training.preflight.preflight` refused the run (raised when the
            iteration starts).
    """
    return _iter_train(config, cancel=cancel, count=_count, merge_events=merge_events)


def _iter_train(
    config: TrainConfig, *, cancel: Cancel | None, count: CountStep | None, merge_events: bool
) -> Iterator[TrainEvent]:
    """:func:`iter_train`; without ``merge_events``, no :class:`MergeMade` (see ``_Run.merge_events``)."""
    _count = count
    # Every check that needs the file system comes first: a missing file or an output that would overwrite
    # an input is reported before any work, not after counting. (``_count``, from train_from_iterator,
    # counts documents in memory: no file to check.)
    base: ExtendBase | None = config.extend
    if base is not None:
        config = with_base(config, base)
    if _count is None:
        preflight(config)
    run = _Run(config, cancel or _never, merge_events=merge_events)
    if config.superword_transition is not None:
        yield (yield from _superword_run(run, _count))
        return
    # With nothing to write from the counts (a counts file, a checkpoint), the counting threads' native
    # table goes straight into the merge loop (see _merge_phase): as byte words for a run from scratch, and
    # encoded with the tokenizer's rule for an extension (no dict of a str per pre-token: a third of
    # extending GPT-2 on 100 MB went to making, emptying and re-encoding that dict).
    direct = config.counts_out is None and config.checkpoint is None
    # (An extension keeps the threads' tables apart: each is encoded on a thread of its own.)
    apart = direct and base is not None
    counts = yield from _count_phase(run, _count, merged_table=direct and not apart, keep_table=apart)
    stats = _corpus_stats(counts)
    if base is not None:
        wanted = config.vocab_size - len(base.vocab)
        merged = yield from _merge_phase(run, counts, base, wanted=wanted)
    else:
        merged = yield from _merge_phase(run, counts)
    yield _finish(run, stats, merged, base)


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
        >>> train(TrainConfig(inputs=["corpus.txt"], vocab_size=300)).stop_reason
        <StopReason.VOCAB_SIZE: 'vocab_size'>
    """
    # No one reads the merges' events without on_progress: the run makes none (see _Run.merge_events).
    events = _iter_train(config, cancel=cancel, count=None, merge_events=on_progress is not None)
    for event in events:
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

    Extra keyword arguments are :class:`TrainConfig` fields (``workers``, ``pattern``, ``cluster``, ...).
    ``input_path`` may be an fsspec URL (``"s3://bucket/corpus.txt"``).

    Example:
        >>> vocab, merges = train_bpe("corpus.txt", 300, ["<|endoftext|>"])
        >>> merges[:3]
        [(b' ', b't'), (b'h', b'e'), (b'a', b't')]

        On a Dask cluster of two local workers (starting it takes a few seconds)::

            vocab, merges = train_bpe("big.txt", 500, ["<|endoftext|>"], cluster="local:2")
    """
    if not isinstance(cast(object, input_path), (str, os.PathLike)):
        raise ValueError(f"input_path: {input_path!r} is not a path; give one file path (str or Path)")
    # A URL stays a string: TrainConfig reads it through fsspec (a Path would fold its "//").
    path: str | Path = input_path if isinstance(input_path, str) else Path(input_path)
    # special_tokens goes to TrainConfig as given: tuple("<s>") would make three tokens, and a set's order
    # changes with PYTHONHASHSEED; TrainConfig refuses both with the fix in the message.
    config = TrainConfig(
        inputs=cast(Any, (path,)), vocab_size=vocab_size, special_tokens=cast(Any, special_tokens), **kwargs
    )
    result = train(config)
    return result.vocab, result.merges
