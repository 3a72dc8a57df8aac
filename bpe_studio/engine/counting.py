"""Pre-tokenize a corpus and count its unique pre-tokens, in this process or in worker processes.

Counts are keyed by the pre-token's UTF-8 bytes spelled as a latin-1 ``str`` (one code point per byte),
which is exactly the form the merge loop starts from: ``"café"`` is counted as ``"cafÃ©"``.

Each worker process takes chunks from a shared queue, keeps one table of its own and sends it once at the
end, so the parent merges as many tables as there are workers, not as many as there are chunks.
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import signal
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .config import InvalidUtf8Policy, compile_pattern
from .corpus import Chunk, CorpusDecodeError, decode, read_chunk, special_token_regex

# How often the parent wakes up to check for cancellation while workers count.
_POLL_SECONDS = 0.05


class WorkerCrashedError(RuntimeError):
    """A counting worker process died without reporting its result."""


@dataclass(slots=True)
class CountTotals:
    """Statistics gathered while counting (summed over chunks)."""

    documents: int = 0
    special_tokens: int = 0
    pretokens: int = 0

    def add(self, other: CountTotals) -> None:
        """Add another set of totals to this one."""
        self.documents += other.documents
        self.special_tokens += other.special_tokens
        self.pretokens += other.pretokens


class ChunkCounter:
    """Pre-tokenizes chunks and accumulates the counts of their pre-tokens (as ``str``).

    Example:
        >>> cc = ChunkCounter(pattern="gpt2", special_tokens=["<|endoftext|>"], policy=InvalidUtf8Policy.ERROR)
        >>> cc.count_text("a b<|endoftext|>a", continues_document=False)
        >>> sorted(cc.counts.items())
        [(' b', 1), ('a', 2)]
    """

    def __init__(self, *, pattern: str, special_tokens: Sequence[str], policy: InvalidUtf8Policy) -> None:
        self._findall = compile_pattern(pattern).findall
        self._special_re = special_token_regex(special_tokens)
        self._policy = policy
        self.counts: Counter[str] = Counter()
        self.totals = CountTotals()

    def count_text(self, text: str, *, continues_document: bool) -> None:
        """Count the pre-tokens of ``text``, a piece of the corpus that starts at a certain boundary."""
        parts = self._special_re.split(text) if self._special_re is not None else [text]
        self.totals.special_tokens += len(parts) - 1
        findall, update = self._findall, self.counts.update
        documents = 0
        for part in parts:
            if part:
                documents += 1
                tokens = findall(part)
                self.totals.pretokens += len(tokens)
                update(tokens)
        # The first document of a chunk that continues one was already counted with the previous chunk.
        self.totals.documents += documents - (1 if continues_document else 0)

    def count_chunk(self, chunk: Chunk) -> None:
        """Read, decode and count one chunk."""
        text = decode(read_chunk(chunk), self._policy, path=chunk.path, offset=chunk.start)
        self.count_text(text, continues_document=chunk.continues_document)

    def byte_counts(self) -> dict[str, int]:
        """The counts keyed by each pre-token's UTF-8 bytes spelled as latin-1 code points."""
        return {token.encode("utf-8").decode("latin-1"): n for token, n in self.counts.items()}


@dataclass(frozen=True, slots=True)
class CountUpdate:
    """Progress of the counting phase (bytes done, and unique pre-tokens in the workers' tables)."""

    bytes_done: int
    unique_pretokens: int


@dataclass(frozen=True, slots=True)
class CountOutcome:
    """The result of counting: byte-keyed counts and totals."""

    counts: dict[str, int]
    totals: CountTotals


def count_serial(
    chunks: Sequence[Chunk],
    *,
    pattern: str,
    special_tokens: Sequence[str],
    policy: InvalidUtf8Policy,
    cancelled: Callable[[], bool],
) -> Iterator[CountUpdate | CountOutcome]:
    """Count chunks in this process, yielding progress after each; the last item is the outcome.

    Stops early (without an outcome) when ``cancelled()`` becomes true.
    """
    counter = ChunkCounter(pattern=pattern, special_tokens=special_tokens, policy=policy)
    done = 0
    for chunk in chunks:
        if cancelled():
            return
        counter.count_chunk(chunk)
        done += chunk.size
        yield CountUpdate(done, len(counter.counts))
    yield CountOutcome(counter.byte_counts(), counter.totals)


def _worker_main(
    index: int, tasks: Any, results: Any, pattern: str, special_tokens: list[str], policy: str
) -> None:
    """Body of counting worker ``index``: count chunks from ``tasks`` until a ``None`` arrives."""
    # Ctrl-C reaches the whole process group; the parent decides what happens and stops the workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    counter = ChunkCounter(pattern=pattern, special_tokens=special_tokens, policy=InvalidUtf8Policy(policy))
    try:
        while (chunk := tasks.get()) is not None:
            counter.count_chunk(chunk)
            results.put(("progress", index, chunk.size, len(counter.counts)))
        results.put(("done", counter.byte_counts(), counter.totals))
    except CorpusDecodeError as exc:
        results.put(("decode_error", exc.path, exc.offset, exc.reason))
    except BaseException as exc:  # noqa: BLE001 - anything else is reported to the parent, not lost
        results.put(("error", f"{type(exc).__name__}: {exc}"))


def count_parallel(
    chunks: Sequence[Chunk],
    *,
    workers: int,
    pattern: str,
    special_tokens: Sequence[str],
    policy: InvalidUtf8Policy,
    cancelled: Callable[[], bool],
) -> Iterator[CountUpdate | CountOutcome]:
    """Count chunks in ``workers`` spawned processes; yields progress, then the outcome.

    The processes are always stopped when this generator ends, however it ends (outcome, error,
    cancellation, or the consumer closing it).
    """
    # "spawn" rather than "fork": the GUI runs training on a thread, and forking a threaded process can
    # deadlock; spawn also behaves the same on every platform.
    ctx = mp.get_context("spawn")
    tasks = ctx.Queue()
    results = ctx.Queue()
    for chunk in chunks:
        tasks.put(chunk)
    for _ in range(workers):
        tasks.put(None)
    procs = [
        ctx.Process(
            target=_worker_main,
            args=(i, tasks, results, pattern, list(special_tokens), policy.value),
            name=f"bpe-studio-count-{i}",
            daemon=True,
        )
        for i in range(workers)
    ]
    for proc in procs:
        proc.start()
    try:
        done_bytes = 0
        unique_by_worker: dict[int, int] = {}
        tables: list[dict[str, int]] = []
        totals = CountTotals()
        while len(tables) < workers:
            if cancelled():
                return
            try:
                message = results.get(timeout=_POLL_SECONDS)
            except queue.Empty:
                dead = [p for p in procs if p.exitcode not in (None, 0)]
                if dead:
                    raise WorkerCrashedError(
                        f"a counting worker process died (exit code {dead[0].exitcode}); this is often a lack "
                        "of memory: try fewer workers or a smaller chunk_size"
                    ) from None
                continue
            kind = message[0]
            if kind == "progress":
                _, worker, size, unique = message
                done_bytes += size
                unique_by_worker[worker] = unique
                yield CountUpdate(done_bytes, sum(unique_by_worker.values()))
            elif kind == "done":
                tables.append(message[1])
                totals.add(message[2])
            elif kind == "decode_error":
                raise CorpusDecodeError(message[1], message[2], message[3])
            else:
                raise WorkerCrashedError(f"a counting worker failed: {message[1]}")
        yield CountOutcome(merge_tables(tables), totals)
    finally:
        _stop(procs, tasks, results)


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


def _stop(procs: list[Any], tasks: Any, results: Any) -> None:
    """Terminate and reap worker processes and release the queues' feeder threads."""
    for proc in procs:
        if proc.is_alive():
            proc.terminate()
    for proc in procs:
        proc.join(timeout=5)
        if proc.is_alive():
            proc.kill()
            proc.join()
    for q in (tasks, results):
        q.cancel_join_thread()
        q.close()
