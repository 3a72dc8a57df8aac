"""Pre-tokenize a corpus and count its unique pre-tokens, in this process or in worker processes.

Counts are keyed by the pre-token's UTF-8 bytes spelled as a latin-1 ``str`` (one code point per byte),
which is exactly the form the merge loop starts from: ``"café"`` is counted as ``"cafÃ©"``.

Each worker process is handed chunks as it finishes them, keeps one table of its own and sends it once at
the end, so the parent merges as many tables as there are workers, not as many as there are chunks.
"""

from __future__ import annotations

import contextlib
import itertools
import pickle
import queue
import selectors
import signal
import struct
import subprocess
import threading
from array import array
from collections import Counter
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, BinaryIO, Literal, NoReturn

from .. import native
from ..config import InvalidUtf8Policy
from ..corpus.plan import (
    Chunk,
    CorpusChangedError,
    CorpusDecodeError,
    check_read,
    decode,
    read_chunk,
    special_token_regex,
)
from ..corpus.sources import BadRecordError, Documents, LineRange, RecordReader, RowGroup, Task
from ..pretokenize.patterns import preset_name
from ..pretokenize.split import Pretokenizer
from ..workers.launch import start_child
from ..workers.threaded import pool_size

# How often the parent wakes up to check for cancellation while workers count.
_POLL_SECONDS = 0.05
# How long a run that ends early (cancelled, failed) waits for each counting thread to finish its chunk.
_JOIN_SECONDS = 30.0


class WorkerCrashedError(RuntimeError):
    """A counting worker process died without reporting its result."""


@dataclass(slots=True)
class CountTotals:
    """Statistics gathered while counting (summed over chunks)."""

    documents: int = 0
    special_tokens: int = 0
    pretokens: int = 0
    bad_records: int = 0

    def add(self, other: CountTotals) -> None:
        """Add another set of totals to this one."""
        self.documents += other.documents
        self.special_tokens += other.special_tokens
        self.pretokens += other.pretokens
        self.bad_records += other.bad_records


class ChunkCounter:
    """Pre-tokenizes chunks and accumulates the counts of their pre-tokens (as ``str``).

    Example:
        >>> policy = InvalidUtf8Policy.ERROR
        >>> cc = ChunkCounter(pattern="gpt2", special_tokens=["<|endoftext|>"], policy=policy)
        >>> cc.count_text("a b<|endoftext|>a", continues_document=False)
        >>> sorted(cc.counts.items())
        [(' b', 1), ('a', 2)]
    """

    def __init__(
        self,
        *,
        pattern: str,
        special_tokens: Sequence[str],
        policy: InvalidUtf8Policy,
        text_field: str = "text",
        skip_bad_records: bool = False,
    ) -> None:
        self._findall = Pretokenizer(pattern).findall
        # The presets are pre-tokenized and counted by the native kernel when it is on.
        preset = preset_name(pattern)
        self._preset = preset if preset in native.NATIVE_PRESETS else None
        self._special_re = special_token_regex(special_tokens)
        self._policy = policy
        self._records = RecordReader(text_field=text_field, policy=policy, skip_bad=skip_bad_records)
        # With a native preset the counts live in a native table (rust/src/count.rs): no Python dict is
        # built per chunk. The Counter holds what the Python pre-tokenizer counted: everything without
        # the native table, and with it only texts it cannot take (a lone surrogate).
        self.table: native.NativeCountTable | None = (
            native.count_table() if self._preset is not None else None
        )
        self._counts: Counter[str] = Counter()
        self.totals = CountTotals()

    @property
    def counts(self) -> dict[str, int]:
        """Pre-token (``str``) -> count. Without the native table this is the live table; with it, a copy
        built on each call (use :attr:`unique`, :meth:`frame` or :meth:`byte_counts` on a hot path)."""
        if self.table is None:
            return self._counts
        frame = self.table.to_frame()
        found = {key.encode("latin-1").decode("utf-8"): n for key, n in decode_table(frame).items()}
        return merge_tables([found, dict(self._counts)]) if self._counts else found

    @property
    def native_only(self) -> bool:
        """True when every count is in the native :attr:`table` (the kernel is on, the pattern a preset,
        and no text needed the Python pre-tokenizer)."""
        return self.table is not None and not self._counts

    @property
    def unique(self) -> int:
        """The number of distinct pre-tokens counted so far."""
        if self.table is None:
            return len(self._counts)
        return len(self.table) if not self._counts else len(self.counts)

    def frame(self) -> bytes:
        """The counts as one frame of raw bytes (:func:`encode_table`; built natively when it can be)."""
        if self.table is not None and not self._counts:
            return self.table.to_frame()
        return encode_table(self.counts)

    def count_text(self, text: str, *, continues_document: bool) -> None:
        """Count the pre-tokens of ``text``, a piece of the corpus that starts at a certain boundary."""
        parts = self._special_re.split(text) if self._special_re is not None else [text]
        self.totals.special_tokens += len(parts) - 1
        findall, update = self._findall, self._counts.update
        if self.table is not None and self._preset is not None:
            documents_text = [part for part in parts if part]
            before = self.table.total
            try:
                self.table.add(self._preset, documents_text)
            except UnicodeEncodeError:
                pass  # a lone surrogate, which the native scanner cannot take: counted in Python below
            else:
                self.totals.pretokens += self.table.total - before
                self.totals.documents += len(documents_text) - (1 if continues_document else 0)
                return
        documents = 0
        for part in parts:
            if part:
                documents += 1
                tokens = findall(part)
                self.totals.pretokens += len(tokens)
                update(tokens)
        # The first document of a chunk that continues one was already counted with the previous chunk.
        self.totals.documents += documents - (1 if continues_document else 0)

    def count_chunk(self, chunk: Chunk, data: bytes | None = None) -> None:
        """Decode and count one chunk, given its bytes or reading them from its (local) file.

        Raises:
            CorpusChangedError: There are fewer bytes than the chunk plans (the file shrank).
            CorpusDecodeError: The bytes are not valid UTF-8 and the policy is ``error``.
        """
        raw = read_chunk(chunk) if data is None else data
        check_read(chunk, raw)
        text = decode(raw, self._policy, path=chunk.path, offset=chunk.start)
        self.count_text(text, continues_document=chunk.continues_document)

    def count_task(self, task: Task) -> None:
        """Count one task of any kind (see :mod:`~bpe_studio.engine.corpus.sources`); each record is a
        document.

        Raises:
            BadRecordError: A record holds no text (unless bad records are skipped).
        """
        if isinstance(task, Chunk):
            self.count_chunk(task)
            return
        records = self._records
        texts: Iterable[str]
        if isinstance(task, Documents):
            texts = task.texts
        elif isinstance(task, RowGroup):
            texts = records.row_group(task)
        elif isinstance(task, LineRange):
            with open(task.path, "rb") as handle:
                handle.seek(task.start)
                data = handle.read(task.size)
            check_read(Chunk(task.path, task.start, task.end, False), data)
            texts = records.json_lines(data, path=task.path, offset=task.start, line=None)
        elif task.format == "jsonl":
            texts = records.json_lines(task.data, path=task.path, offset=task.offset, line=task.line)
        else:
            text = decode(task.data, self._policy, path=task.path, offset=task.offset)
            self.count_text(text, continues_document=task.continues_document)
            return
        bad = records.bad_records
        for text in texts:
            self.count_text(text, continues_document=False)
        self.totals.bad_records += records.bad_records - bad

    def byte_counts(self) -> dict[str, int]:
        """The counts keyed by each pre-token's UTF-8 bytes spelled as latin-1 code points."""
        if self.table is not None:
            return decode_table(self.frame())
        return {token.encode("utf-8").decode("latin-1"): n for token, n in self._counts.items()}


@dataclass(frozen=True, slots=True)
class CountUpdate:
    """Progress of the counting phase: bytes done, and unique pre-tokens seen (with several workers, the
    largest worker's table: a lower bound until their tables are merged)."""

    bytes_done: int
    unique_pretokens: int


@dataclass(frozen=True, slots=True)
class CountOutcome:
    """The result of counting: byte-keyed counts and totals."""

    counts: dict[str, int]
    totals: CountTotals


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
) -> Generator[CountUpdate | CountOutcome, None, None]:
    """Count chunks in this process, yielding progress after each; the last item is the outcome.

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
    yield CountOutcome(counter.byte_counts(), counter.totals)


_HEADER = struct.Struct("<Q")


def write_message(stream: Any, obj: object) -> None:
    """Send one length-prefixed pickle over a binary stream (all of it, even on a raw pipe)."""
    payload = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    data = memoryview(_HEADER.pack(len(payload)) + payload)
    while data:
        written = stream.write(data)
        data = data[written if written is not None else len(data) :]
    stream.flush()


def _read_exact(stream: Any, n: int) -> bytearray:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = stream.readinto(view[got:])
        if not k:
            raise EOFError("the other side closed the pipe")
        got += k
    return buf


def read_message(stream: Any) -> Any:
    """Receive one length-prefixed pickle from a binary stream; ``EOFError`` if the stream ended."""
    (size,) = _HEADER.unpack(_read_exact(stream, _HEADER.size))
    return pickle.loads(_read_exact(stream, size))


def failure_message(exc: Exception) -> tuple[Any, ...]:
    """What a worker sends its parent when a task fails (:func:`raise_failure` raises it again there).

    Example:
        >>> failure_message(CorpusChangedError("a.txt", "it grew"))
        ('changed', 'a.txt', 'it grew')
    """
    if isinstance(exc, CorpusDecodeError):
        return ("decode_error", exc.path, exc.offset, exc.reason, exc.where)
    if isinstance(exc, CorpusChangedError):
        return ("changed", exc.path, exc.detail)
    if isinstance(exc, BadRecordError):
        return ("bad_record", exc.path, exc.where, exc.reason, exc.fix)
    return ("error", f"{type(exc).__name__}: {exc}")


def raise_failure(message: Sequence[Any], *, role: str) -> NoReturn:
    """Raise, in the parent, the error a worker reported with :func:`failure_message`.

    ``role`` names the worker in an unexpected error ("counting", "encoding").
    """
    kind = message[0]
    if kind == "decode_error":
        raise CorpusDecodeError(*message[1:])
    if kind == "changed":
        raise CorpusChangedError(message[1], message[2])
    if kind == "bad_record":
        raise BadRecordError(*message[1:])
    raise WorkerCrashedError(f"a{'n' if role[0] in 'aeiou' else ''} {role} worker failed: {message[1]}")


#: Seconds a worker is given to end after SIGTERM, and again after SIGKILL.
STOP_TIMEOUT = 5.0


def stop_process(proc: subprocess.Popen[bytes], *, timeout: float | None = None) -> None:
    """Stop a worker process (if still running: terminate, then kill after ``timeout`` s, default
    :data:`STOP_TIMEOUT`) and close its pipes.

    Every wait has a deadline: a process that even SIGKILL does not end at once (stuck in the kernel, on a
    hung network file system) is left to the kernel after another ``timeout`` s rather than waited for
    forever; the caller goes on.
    """
    timeout = STOP_TIMEOUT if timeout is None else timeout
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=timeout)
    for pipe in (proc.stdin, proc.stdout):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()


class _Worker:
    """A counting worker process and what the parent knows of it."""

    def __init__(self, index: int, setup: tuple[str, list[str], str, str, bool]) -> None:
        # Isolated (never importing from the working folder), running this process's copy of bpe_studio.
        # The kernel may kill it with the thread that starts it only if that thread outlives it: the main
        # thread does; a thread of the caller's might end while this generator waits to be resumed.
        self.proc = start_child(
            "bpe_studio.engine.workers.count_worker:main",
            die_with_thread=threading.current_thread() is threading.main_thread(),
        )
        self.index = index
        self.pending = 0
        self.closed = False
        write_message(self.proc.stdin, setup)

    def give(self, chunk: Task | None) -> None:
        """Send a chunk to count, or ``None`` to ask for the table."""
        write_message(self.proc.stdin, chunk)
        if chunk is None:
            self.closed = True
        else:
            self.pending += 1

    def stop(self) -> None:
        """Stop the process (if still running) and close its pipes."""
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
                    raise WorkerCrashedError(_death_message(worker.proc)) from None
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
                        raise WorkerCrashedError(_death_message(worker.proc)) from None
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
    native kernel on, a preset pattern, local plain-text files: its native table counts with the GIL
    released, so threads need no start-up and send no tables), or else in worker processes (a custom
    pattern, the Python backend, records to parse in Python, or ``workers`` of a cluster elsewhere).

    Example:
        >>> counting_path(workers=1, pattern="gpt2", plain_text_files=True)
        'serial'
        >>> counting_path(workers=2, pattern=r"\w+", plain_text_files=True)
        'processes'
    """
    if workers <= 1:
        return "serial"
    native_scan = native.backend() == "native" and preset_name(pattern) in native.NATIVE_PRESETS
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
) -> Generator[CountUpdate | CountOutcome, None, None]:
    """Count chunks in ``workers`` threads of this process; yields progress, then the outcome.

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
        yield CountOutcome(_merge_counters(counters), totals)
    finally:
        stop.set()
        for thread in threads:
            if thread.ident is not None:
                thread.join(timeout=_JOIN_SECONDS)


def _merge_counters(counters: list[ChunkCounter]) -> dict[str, int]:
    """The counters' tables summed, keyed by UTF-8 bytes spelled as latin-1: natively when every counter
    kept a native table alone, else through dicts."""
    tables = [counter.table for counter in counters if counter.table is not None and not counter._counts]
    if len(tables) < len(counters) or not tables:
        return merge_tables([counter.byte_counts() for counter in counters])
    tables.sort(key=len, reverse=True)
    total = tables[0]  # the largest table takes the others in
    for table in tables[1:]:
        total.merge(table)
    return decode_table(total.to_frame())


def _death_message(proc: subprocess.Popen[bytes]) -> str:
    """Why a worker's pipe ended, in words (it has ended, so the wait is short; bounded all the same)."""
    try:
        code = proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        return "a counting worker process died (it closed its pipe but did not end)"
    if code == -signal.SIGKILL:
        # The kernel's out-of-memory killer sends SIGKILL.
        return (
            "a counting worker process died (killed by SIGKILL); this is often a lack of memory: try fewer "
            "workers or a smaller chunk_size"
        )
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:  # a real-time signal has no name
            name = f"signal {-code}"
        return f"a counting worker process died (stopped by {name}, sent from outside bpe-studio)"
    return (
        f"a counting worker process died (exit code {code}); this is often a lack of memory: try fewer "
        "workers or a smaller chunk_size"
    )


def _feed(worker: _Worker, todo: Iterator[Task]) -> None:
    """Give the worker its next chunk, or once none is left, ask it for its table."""
    if worker.closed:
        return
    # The worker reads its pipe in order, so a None sent now is served after the chunks it still holds.
    worker.give(next(todo, None))


def merge_tables(tables: list[dict[str, int]]) -> dict[str, int]:
    """Sum count tables, reusing the largest as the accumulator.

    Example:
        >>> merge_tables([{"a": 1}, {"a": 2, "b": 1}])
        {'a': 3, 'b': 1}
    """
    if not tables:
        return {}
    tables = sorted(tables, key=len, reverse=True)
    total = tables[0]
    get = total.get
    for table in tables[1:]:
        for token, n in table.items():
            total[token] = get(token, 0) + n
    return total


# A worker hands its table back as one frame of raw bytes rather than a pickle: a pickle of 500,000 small
# strings costs the parent ~0.2 s to load (a serial tail, as it waits for the workers' last chunks), and
# this frame carries only numbers and text, nothing that could run code. Layout, in the machine's byte
# order (the parent and its workers share a machine): a header, the keys' UTF-8 text, then one signed
# 64-bit count per key. The keys are separated by NUL when none holds one (text.split is the fastest way
# back to a list of strings); otherwise the text is followed by one unsigned 64-bit length per key.
_TABLE_HEADER = struct.Struct("<QQ?")  # number of keys, bytes of key text, keys separated by NUL
_ITEM = 8  # bytes of one length and of one count


def encode_table(counts: dict[str, int]) -> bytes:
    """One worker's table of ``str`` pre-tokens as a frame that :func:`decode_table` reads.

    Example:
        >>> decode_table(encode_table({"a": 2, "é": 1}))
        {'a': 2, 'Ã©': 1}
    """
    keys = list(counts)
    values = array("q", counts.values()).tobytes()
    text = "\0".join(keys)
    separated = not keys or text.count("\0") == len(keys) - 1
    if separated:
        data = text.encode("utf-8")
        return b"".join((_TABLE_HEADER.pack(len(keys), len(data), True), data, values))
    lengths = array("Q", (len(k.encode("utf-8")) for k in keys)).tobytes()
    data = "".join(keys).encode("utf-8")
    return b"".join((_TABLE_HEADER.pack(len(keys), len(data), False), data, lengths, values))


def decode_table(frame: bytes | bytearray) -> dict[str, int]:
    """The table of a frame from :func:`encode_table`, keyed by UTF-8 bytes spelled as latin-1 (the merge
    loop's form).

    Raises:
        ValueError: The frame is not what its header declares (a worker sent something else).

    Example:
        >>> decode_table(encode_table({" the": 3, "a\\0b": 1}))
        {' the': 3, 'a\\x00b': 1}
    """
    view = memoryview(frame)
    if len(view) < _TABLE_HEADER.size:
        raise ValueError("a count table frame is shorter than its header")
    n, size, separated = _TABLE_HEADER.unpack(view[: _TABLE_HEADER.size])
    start = _TABLE_HEADER.size
    if len(view) != start + size + (1 if separated else 2) * _ITEM * n:
        raise ValueError(f"a count table frame holds {len(view):,} bytes, not the {n:,} keys it declares")
    text = bytes(view[start : start + size]).decode("latin-1")
    values = array("q")
    values.frombytes(view[len(view) - _ITEM * n :])
    if separated:
        keys = text.split("\0") if n else []
    else:
        lengths = array("Q")
        lengths.frombytes(view[start + size : start + size + _ITEM * n])
        ends = list(itertools.accumulate(lengths))
        if (ends[-1] if ends else 0) != size:
            raise ValueError("a count table frame's key lengths do not add up to its text")
        keys = [text[a:b] for a, b in zip(itertools.chain((0,), ends), ends, strict=False)]
    if len(keys) != n:
        raise ValueError(f"a count table frame holds {len(keys):,} keys, not the {n:,} it declares")
    table = dict(zip(keys, values, strict=True))
    if len(table) != n:
        raise ValueError("a count table frame holds the same key twice")
    return table


def write_frame(stream: Any, data: bytes) -> None:
    """Send one length-prefixed frame of raw bytes (see :func:`write_message`)."""
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        written = stream.write(view)
        view = view[written if written is not None else len(view) :]
    stream.flush()


def read_frame(stream: Any, limit: int) -> bytearray:
    """Receive one length-prefixed frame of raw bytes, refusing one that declares more than ``limit``."""
    (size,) = _HEADER.unpack(_read_exact(stream, _HEADER.size))
    if size > limit:
        raise ValueError(f"a frame declares {size:,} bytes, more than the {limit:,} announced")
    return _read_exact(stream, size)
