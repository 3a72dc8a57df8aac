"""Pre-tokenize a corpus and count its unique pre-tokens, in this process or in worker processes.

Counts are keyed by the pre-token's UTF-8 bytes spelled as a latin-1 ``str`` (one code point per byte),
which is exactly the form the merge loop starts from: ``"café"`` is counted as ``"cafÃ©"``.

Each worker process is handed chunks as it finishes them, keeps one table of its own and sends it once at
the end, so the parent merges as many tables as there are workers, not as many as there are chunks.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, BinaryIO, Literal

from .. import native
from ..config import InvalidUtf8Policy
from ..corpus.plan import Chunk
from ..corpus.sources import Task
from ..pretokenize.patterns import scanner_name
from ..workers.protocol import (
    WorkerCrashedError,
    decode_table,
    failure_message,
    raise_failure,
    read_frame,
    read_message,
    write_message,
)
from ..workers.threaded import pool_size
from .counter import ChunkCounter, CountTotals, merge_tables

# How often the parent wakes up to check for cancellation while workers count.
_POLL_SECONDS = 0.05
# How long a run that ends early (cancelled, failed) waits for each counting thread to finish its chunk.
_JOIN_SECONDS = 30.0


@dataclass(frozen=True, slots=True)
class CountUpdate:
    """Progress of the counting phase: bytes done, and unique pre-tokens seen (with several workers, the
    largest worker's table: a lower bound until their tables are merged)."""

    bytes_done: int
    unique_pretokens: int


@dataclass(frozen=True, slots=True)
class CountOutcome:
    """The result of counting: byte-keyed counts and totals; or, when the counting was asked to keep its
    native tables (a superword run's stage 2: a million long chunks), those tables and no dict."""

    counts: dict[str, int]
    totals: CountTotals
    #: The counts still in the counting threads' native tables, not merged (``counts`` is then empty), for
    #: the caller to encode natively; a key may be in several (one table when they were merged).
    tables: tuple[native.NativeCountTable, ...] = ()
    #: The number of distinct keys of ``tables`` together.
    tables_unique: int = 0
    #: A superword run's stage-2 counts made in the same pass (``count_threads(superwords=True)``): the
    #: threads' native tables of ``SUPERWORD_PATTERN``'s pieces, as ``keep_table`` keeps them; None when
    #: not asked for, or when a text could not be counted that way (stage 2 then counts the corpus again).
    superwords: CountOutcome | None = None
    #: A superword run's stage-2 tables split into their distinct parts while stage 1 merged (``tables``
    #: is then empty; ``tables_unique`` still counts their keys): see ``native.split_chunks``.
    parted: native.PartedChunks | None = None

    @property
    def unique(self) -> int:
        """The number of unique pre-tokens."""
        return self.tables_unique if self.tables or self.parted is not None else len(self.counts)


def _open_local(path: str) -> BinaryIO:
    return open(path, "rb")


def count_serial(
    chunks: Iterable[Task],
    *,
    pattern: str,
    special_tokens: Sequence[str],
    policy: InvalidUtf8Policy,
    cancelled: Callable[[], bool],
    open_file: Callable[[str], AbstractContextManager[BinaryIO]] = _open_local,
    text_field: str = "text",
    skip_bad_records: bool = False,
    superwords: bool = False,
) -> Generator[CountUpdate | CountOutcome, None, None]:
    """Count chunks in this process, yielding progress after each; the last item is the outcome (with
    ``superwords``, the stage-2 chunks counted in the same pass too: see :func:`count_threads`).

    ``open_file`` opens a chunk's path for binary reading (``remote.open_binary`` also takes fsspec URLs);
    a file stays open while its chunks are read. Stops early (without an outcome) when ``cancelled()``
    becomes true.
    """
    counter = ChunkCounter(
        pattern=pattern,
        special_tokens=special_tokens,
        policy=policy,
        text_field=text_field,
        skip_bad_records=skip_bad_records,
        superwords=superwords,
    )
    done = 0
    with contextlib.ExitStack() as stack:
        handle: BinaryIO | None = None
        current = ""
        for chunk in chunks:
            if cancelled():
                return
            if not isinstance(chunk, Chunk):
                counter.count_task(chunk)
                done += chunk.size
                yield CountUpdate(done, counter.unique)
                continue
            if handle is None or chunk.path != current:
                stack.close()  # the previous file
                handle, current = stack.enter_context(open_file(chunk.path)), chunk.path
            handle.seek(chunk.start)
            counter.count_chunk(chunk, handle.read(chunk.size))
            done += chunk.size
            yield CountUpdate(done, counter.unique)
    words = _superword_outcome([counter]) if superwords else None
    yield CountOutcome(counter.byte_counts(), counter.totals, superwords=words)


class _Worker:
    """A counting worker process and what the parent knows of it."""

    def __init__(self, index: int, setup: tuple[str, list[str], str, str, bool]) -> None:
        # Isolated (never importing from the working folder), running this process's copy of bpe_studio.
        # The kernel may kill it with the thread that starts it only if that thread outlives it: the main
        # thread does; a thread of the caller's might end while this generator waits to be resumed.
        from ..workers.launch import start_child  # here: 4 ms (subprocess, ctypes) a small run never needs

        self.proc = start_child(
            "bpe_studio.engine.workers.count_worker:main",
            die_with_thread=threading.current_thread() is threading.main_thread(),
        )
        self.index = index
        self.pending = 0
        self.closed = False
        self._tell(setup)

    def _tell(self, message: object) -> None:
        # A worker killed from outside may be found dead by a write before its pipe's end is read: that is
        # the same death, said the same way (not "Broken pipe").
        try:
            write_message(self.proc.stdin, message)
        except BrokenPipeError:
            from ..workers.launch import death_message

            raise WorkerCrashedError(death_message(self.proc)) from None

    def give(self, chunk: Task | None) -> None:
        """Send a chunk to count, or ``None`` to ask for the table."""
        self._tell(chunk)
        if chunk is None:
            self.closed = True
        else:
            self.pending += 1

    def stop(self) -> None:
        """Stop the process (if still running) and close its pipes."""
        from ..workers.launch import stop_process

        stop_process(self.proc)


def count_parallel(
    chunks: Iterable[Task],
    *,
    workers: int,
    pattern: str,
    special_tokens: Sequence[str],
    policy: InvalidUtf8Policy,
    cancelled: Callable[[], bool],
    text_field: str = "text",
    skip_bad_records: bool = False,
) -> Generator[CountUpdate | CountOutcome, None, None]:
    """Count chunks in ``workers`` worker processes; yields progress, then the outcome.

    Chunks are handed out as workers finish them (two in flight per worker, so none waits for the
    parent). The processes are always stopped when this generator ends, however it ends (outcome, error,
    cancellation, or the consumer closing it). ``chunks`` is taken lazily, as workers need work: a
    compressed file is decompressed while the workers count what came before.
    """
    import selectors

    from ..workers.launch import death_message

    workers = pool_size(workers)
    todo = iter(chunks)
    setup = (pattern, list(special_tokens), policy.value, text_field, skip_bad_records)
    pool: list[_Worker] = []
    selector = selectors.DefaultSelector()
    try:
        for i in range(workers):
            worker = _Worker(i, setup)
            pool.append(worker)
            selector.register(worker.proc.stdout, selectors.EVENT_READ, worker)  # type: ignore[arg-type]
            for _ in range(2):
                _feed(worker, todo)
        done_bytes = 0
        unique_by_worker = [0] * workers
        table = _MergedTables()  # the tables merged so far, as each worker hands its own in
        finished = 0
        totals = CountTotals()
        while finished < workers:
            if cancelled():
                return
            for key, _ in selector.select(timeout=_POLL_SECONDS):
                worker = key.data
                try:
                    message = read_message(worker.proc.stdout)
                except EOFError:
                    raise WorkerCrashedError(death_message(worker.proc)) from None
                kind = message[0]
                if kind == "progress":
                    worker.pending -= 1
                    _feed(worker, todo)
                    done_bytes += message[1]
                    unique_by_worker[worker.index] = message[2]
                    # The workers' tables overlap (most pre-tokens occur in every part of a corpus), so
                    # their sum would claim about `workers` times too many; the largest is a lower bound
                    # of the union: the true count so far is at least this, and the total at the end.
                    yield CountUpdate(done_bytes, max(unique_by_worker))
                elif kind == "done":
                    selector.unregister(worker.proc.stdout)
                    finished += 1
                    totals.add(message[1])
                    try:
                        # Merged now, while the other workers still count their last chunks.
                        table.add_frame(read_frame(worker.proc.stdout, message[2]))
                    except EOFError:
                        raise WorkerCrashedError(death_message(worker.proc)) from None
                    except ValueError as exc:
                        raise WorkerCrashedError(f"a counting worker sent a broken table: {exc}") from None
                else:
                    raise_failure(message, role="counting")
        yield CountOutcome(table.result(), totals)
    finally:
        selector.close()
        for worker in pool:
            worker.stop()


class _MergedTables:
    """The workers' tables merged as their frames arrive: natively (``CountTable.add_frame``, checked against
    the frame's declared sizes) when the kernel is on, else as dicts (:func:`decode_table`)."""

    def __init__(self) -> None:
        self._native_table = native.count_table()
        self._table: dict[str, int] = {}

    def add_frame(self, frame: bytes | bytearray) -> None:
        """Add one worker's frame.

        Raises:
            ValueError: The frame is not what its header declares (nothing of it is added).
        """
        if self._native_table is not None:
            self._native_table.add_frame(bytes(frame))
        else:
            received = decode_table(frame)
            self._table = merge_tables([self._table, received]) if self._table else received

    def result(self) -> dict[str, int]:
        """The merged table, keyed by UTF-8 bytes spelled as latin-1 (the merge loop's form)."""
        return decode_table(self._native_table.to_frame()) if self._native_table is not None else self._table


CountingPath = Literal["serial", "threads", "processes"]


def counting_path(*, workers: int, pattern: str, plain_text_files: bool) -> CountingPath:
    r"""How to count with ``workers``: in this process (one worker), in threads of this process (the
    native kernel on, a pattern with a native scanner (a preset's or a model's: ``scanner_name``), local
    plain-text files: its native table counts with the GIL released, so threads need no start-up and send no
    tables), or else in worker processes (another pattern, the Python backend, records to parse in Python, or
    ``workers`` of a cluster elsewhere).

    Example:
        >>> counting_path(workers=1, pattern="gpt2", plain_text_files=True)
        'serial'
        >>> counting_path(workers=2, pattern=r"\w+", plain_text_files=True)
        'processes'
    """
    if workers <= 1:
        return "serial"
    native_scan = native.backend() == "native" and scanner_name(pattern) in native.NATIVE_SCANNERS
    return "threads" if native_scan and plain_text_files else "processes"


def count_threads(
    chunks: Iterable[Task],
    *,
    workers: int,
    pattern: str,
    special_tokens: Sequence[str],
    policy: InvalidUtf8Policy,
    cancelled: Callable[[], bool],
    text_field: str = "text",
    skip_bad_records: bool = False,
    keep_table: bool = False,
    merged_table: bool = False,
    superwords: bool = False,
) -> Generator[CountUpdate | CountOutcome, None, None]:
    """Count chunks in ``workers`` threads of this process; yields progress, then the outcome (with
    ``keep_table``, the threads' native tables themselves when every thread kept one, not merged: merging
    them made a third table about as large as both, a superword run's peak memory; with ``merged_table``,
    those tables merged natively into one, the outcome's one table: turning it into a dict of a ``str``
    per key took a fifth of the counting phase on 100 MB, on one thread; otherwise a dict).

    With ``superwords`` (a superword run's stage 1, the chunks planned at certain boundaries of both splits:
    no newline cuts), each thread also counts the chunks' ``SUPERWORD_PATTERN`` pieces in the same pass,
    given as the outcome's ``superwords`` (the threads' tables, as ``keep_table`` gives them), or None when
    some text could not be counted that way.

    Each thread takes the next chunk, reads and decodes it and splits it on the special tokens (Python,
    holding the GIL), then counts it into its own native table with the GIL released; the tables are
    merged natively at the end. Made for :func:`counting_path`'s ``"threads"`` case; with the Python
    backend it is correct but no faster than :func:`count_serial`. Errors are those of
    :func:`count_parallel` (a decode error names the file and offset). When the generator ends early
    (cancelled, an error, closed by its consumer) the threads stop after their current chunk and are
    joined (each for at most ``_JOIN_SECONDS``).
    """
    workers = pool_size(workers)
    todo = iter(chunks)
    take = threading.Lock()  # one thread at a time draws from `todo` (maybe a generator decompressing)
    stop = threading.Event()
    reports: queue.SimpleQueue[tuple[Any, ...]] = queue.SimpleQueue()
    counters = [
        ChunkCounter(
            pattern=pattern,
            special_tokens=special_tokens,
            policy=policy,
            text_field=text_field,
            skip_bad_records=skip_bad_records,
            superwords=superwords,
        )
        for _ in range(workers)
    ]

    def run(index: int) -> None:
        counter = counters[index]
        try:
            while not stop.is_set():
                with take:
                    task = next(todo, None)
                if task is None:
                    break
                counter.count_task(task)
                reports.put(("progress", index, task.size, counter.unique))
        except BaseException as exc:  # raised again in the consumer's thread
            reports.put(("failed", index, exc))
            return
        reports.put(("done", index))

    threads = [
        threading.Thread(target=run, args=(i,), name=f"bpe-studio-count-{i}", daemon=True)
        for i in range(workers)
    ]
    try:
        for thread in threads:
            thread.start()
        done_bytes = 0
        unique_by_thread = [0] * workers
        finished = 0
        while finished < workers:
            if cancelled():
                return
            try:
                report = reports.get(timeout=_POLL_SECONDS)
            except queue.Empty:
                continue
            if report[0] == "progress":
                done_bytes += report[2]
                unique_by_thread[report[1]] = report[3]
                # As in count_parallel: the largest table is a lower bound of the union.
                yield CountUpdate(done_bytes, max(unique_by_thread))
            elif report[0] == "done":
                finished += 1
            else:
                exc = report[2]
                if isinstance(exc, Exception):
                    # The errors a worker process would report (the same types and messages).
                    raise_failure(failure_message(exc), role="counting")
                raise exc
        totals = CountTotals()
        for counter in counters:
            totals.add(counter.totals)
        words = _superword_outcome(counters) if superwords else None
        tables = _native_tables(counters) if keep_table or merged_table else None
        if tables and merged_table and not keep_table:
            merged = merged_tables(tables)
            yield CountOutcome({}, totals, (merged,), len(merged), superwords=words)
        elif tables:
            yield CountOutcome({}, totals, tuple(tables), _unique(tables), superwords=words)
        else:
            yield CountOutcome(_merge_counters(counters), totals, superwords=words)
    finally:
        stop.set()
        for thread in threads:
            if thread.ident is not None:
                thread.join(timeout=_JOIN_SECONDS)


def _unique(tables: Sequence[native.NativeCountTable]) -> int:
    """The number of distinct keys of native tables together, without merging them."""
    return sum(table.count_new(tables[:i]) for i, table in enumerate(tables))


def _superword_outcome(counters: list[ChunkCounter]) -> CountOutcome | None:
    """The counters' superword tables (taken from them) as an outcome that keeps them, or None unless every
    counter still has one (a text it could not count that way: stage 2 counts again)."""
    tables = [counter.superword_table for counter in counters]
    if any(table is None for table in tables):
        return None
    kept = tuple(table for table in tables if table is not None)
    totals = CountTotals()
    for counter in counters:
        totals.add(counter.superword_totals)
        counter.superword_table = None
    # They wait while stage 1 merges: flat, in less than half the memory (before stage 1's tables are merged,
    # which is counting's peak); their distinct keys are counted in the same pass (as _unique counts them).
    unique = native.compact_tables(kept)
    return CountOutcome({}, totals, kept, unique)


def _merge_counters(counters: list[ChunkCounter]) -> dict[str, int]:
    """The counters' tables summed, keyed by UTF-8 bytes spelled as latin-1: natively when every counter
    kept a native table alone, else through dicts."""
    tables = _native_tables(counters)
    if tables is None:
        return merge_tables([counter.byte_counts() for counter in counters])
    return decode_table(merged_tables(tables).to_frame())


def _native_tables(counters: list[ChunkCounter]) -> list[native.NativeCountTable] | None:
    """The counters' native tables, or None unless every counter kept a native table alone."""
    tables = [counter.table for counter in counters if counter.table is not None and not counter._counts]
    if len(tables) < len(counters) or not tables:
        return None
    return tables


def merged_tables(tables: list[native.NativeCountTable]) -> native.NativeCountTable:
    """Native tables summed into the largest (which is returned)."""
    tables = sorted(tables, key=len, reverse=True)
    total = tables[0]  # the largest table takes the others in
    for table in tables[1:]:
        total.merge(table)
    return total


def _feed(worker: _Worker, todo: Iterator[Task]) -> None:
    """Give the worker its next chunk, or once none is left, ask it for its table."""
    if worker.closed:
        return
    # The worker reads its pipe in order, so a None sent now is served after the chunks it still holds.
    worker.give(next(todo, None))
