"""Counting pre-tokens on a Dask cluster: a running scheduler (``tcp://HOST:8786``) or a ``LocalCluster``.

Only the counting phase is distributed: it grows with the corpus, while the merge loop works on the table
of unique pre-tokens, which fits in one machine's memory.

How a run goes:

1. The client (this process) plans *task ranges*: byte ranges of about ``task_bytes`` that start and end
   at certain chunk boundaries (:func:`~bpe_studio.engine.corpus.plan.plan_chunks` with a large chunk size;
   a few small reads per range, also on object storage).
2. Each range is one Dask task (:func:`count_range`). The worker opens the file (local path or fsspec
   URL), cuts its range into chunks of ``chunk_size`` at certain boundaries, exactly as the local planner
   would, counts them with :class:`~bpe_studio.engine.training.counter.ChunkCounter` and returns one table.
3. The client merges the tables as the tasks complete (``as_completed``) and reports progress in bytes.

Every cut is a certain boundary, so the counts are exactly those of the whole corpus, whatever the
workers, the task sizes or the retries. What travels: task descriptions (a path and two offsets) to the
workers, one table per task back to the client; the corpus itself is read by the workers from storage.

A worker that dies mid-task is replaced by Dask, which runs its tasks again elsewhere (up to
``distributed.scheduler.allowed-failures`` times); tasks are pure functions of their range, so a retried
task returns the same table. Cancelling cancels the futures; a ``LocalCluster`` started here is always
closed, with its processes, when counting ends however it ends.

Dask is optional: ``pip install "bpe-studio[distributed]"``. This module imports it only when used.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import math
import os
import re
import signal
import socket
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

from ..config import InvalidUtf8Policy, env_seconds
from ..training.counter import ChunkCounter, CountTotals
from ..training.counting import CountOutcome, CountUpdate
from .plan import Chunk, CorpusChangedError, CorpusDecodeError, _BoundaryFinder
from .remote import INSTALL_HINT, open_binary, read_range

#: Aim for this many tasks per worker: enough to balance uneven ranges and to report progress often.
TASKS_PER_WORKER = 4
#: The largest task range: a retried task redoes at most this much, and a worker holds one range's table.
MAX_TASK_BYTES = 128 * 1024 * 1024
#: The smallest task range (unless ``chunk_size`` is smaller).
MIN_TASK_BYTES = 64 * 1024
#: Seconds to wait for a running scheduler to answer (connect, Dask's handshake and its identity), unless
#: the environment variable ``BPE_STUDIO_CLUSTER_TIMEOUT`` gives another number of seconds.
CONNECT_TIMEOUT = 10.0
#: The environment variable that overrides :data:`CONNECT_TIMEOUT`.
TIMEOUT_ENV = "BPE_STUDIO_CLUSTER_TIMEOUT"
# How often the client wakes up to check for cancellation while tasks run.
_POLL_SECONDS = 0.05
_LOCAL = re.compile(r"^local:(\d+)$")
_ADDRESS = re.compile(
    r"^(?P<scheme>tcp|tls)://(?:\[(?P<ipv6>[0-9A-Fa-f:.]+)\]|(?P<host>[A-Za-z0-9.\-_]+)):(?P<port>\d+)$"
)
_GUARD_HINT = (
    "if this is a script, put the training call under `if __name__ == '__main__':` (a LocalCluster starts "
    "its worker processes with multiprocessing, which imports the script again in each of them)"
)


class ClusterError(RuntimeError):
    """The cluster could not be started or reached, or its tasks failed."""


@dataclass(frozen=True, slots=True)
class ClusterSpec:
    """A parsed ``cluster`` option: ``local_workers`` for ``local:N``, else ``address`` of a scheduler."""

    local_workers: int | None = None
    address: str | None = None


def parse_cluster(spec: str) -> ClusterSpec:
    """Parse ``local:N`` or a scheduler address; ``ValueError`` says what is accepted.

    Example:
        >>> parse_cluster("local:2")
        ClusterSpec(local_workers=2, address=None)
        >>> parse_cluster("tcp://10.0.0.5:8786").address
        'tcp://10.0.0.5:8786'
    """
    if not isinstance(spec, str):
        raise ValueError(f"{spec!r} is not a string; give 'local:N' or 'tcp://HOST:PORT'")
    local = _LOCAL.match(spec.strip())
    if local is not None:
        workers = int(local.group(1))
        if workers < 1:
            raise ValueError(f"{spec!r} asks for no workers; use local:N with N of at least 1")
        return ClusterSpec(local_workers=workers)
    address = _ADDRESS.match(spec.strip())
    if address is not None:
        port = int(address.group("port"))
        if not 1 <= port <= 65535:
            raise ValueError(
                f"{spec!r} has port {port}; a port is a number from 1 to 65535 (a Dask scheduler listens "
                "on 8786 unless told otherwise)"
            )
        return ClusterSpec(address=spec.strip())
    raise ValueError(
        f"{spec!r} is not a cluster; give 'local:N' for a LocalCluster of N worker processes on this "
        "machine, or the address of a running Dask scheduler such as 'tcp://HOST:8786'"
    )


def dask_missing() -> str | None:
    """None when Dask's ``distributed`` can be imported, else a message saying how to install it."""
    if importlib.util.find_spec("distributed") is None:
        return f"Dask is not installed; install it with {INSTALL_HINT}"
    return None


def task_bytes(total_bytes: int, workers: int, chunk_size: int) -> int:
    """The size of the ranges handed to the cluster: about ``TASKS_PER_WORKER`` per worker, bounded.

    At most ``MAX_TASK_BYTES``; at least ``MIN_TASK_BYTES`` (or ``chunk_size`` if smaller), as a task costs
    a few milliseconds of scheduling. A worker cuts its range into chunks of ``chunk_size``.

    Example:
        >>> task_bytes(100_000_000, 2, 4 << 20)
        12500000
    """
    wanted = math.ceil(total_bytes / max(1, workers * TASKS_PER_WORKER))
    return max(min(chunk_size, MIN_TASK_BYTES), min(MAX_TASK_BYTES, wanted), 1)


# --------------------------------------------------------------------------------------------------
# The task (runs on the workers)


def subchunks(
    handle: BinaryIO, rng: Chunk, *, chunk_size: int, special_tokens: Sequence[str], newline_cuts: bool
) -> Iterator[Chunk]:
    """Cut a range into chunks of about ``chunk_size`` at certain boundaries, as the local planner does.

    The boundary search reads the bytes around each candidate from the open file, also past the range's
    ends, so it decides each position exactly as a search over the whole file would.
    """
    finder = _BoundaryFinder(handle, rng.end, special_tokens, newline_cuts)
    start, continues = rng.start, rng.continues_document
    while start < rng.end:
        found = finder.find(start + chunk_size) if start + chunk_size < rng.end else None
        if found is None or found[0] >= rng.end:
            yield Chunk(rng.path, start, rng.end, continues)
            return
        end, at_special = found
        yield Chunk(rng.path, start, end, continues)
        start, continues = end, not at_special


def count_range(
    rng: Chunk,
    *,
    chunk_size: int,
    pattern: str,
    special_tokens: Sequence[str],
    policy: str,
    newline_cuts: bool,
) -> tuple[Any, ...]:
    """Count one range (a Dask task): ``("ok", table, totals)``, ``("decode_error", path, offset, reason)``
    or ``("changed", path, detail)``.

    A decode error (or a file that shrank) is returned rather than raised: it is a property of the corpus, so
    retrying cannot help, and the client raises it as the
    :class:`~bpe_studio.engine.corpus.plan.CorpusDecodeError`
    (or :class:`~bpe_studio.engine.corpus.plan.CorpusChangedError`) it is.
    """
    policy_ = InvalidUtf8Policy(policy)
    counter = ChunkCounter(pattern=pattern, special_tokens=special_tokens, policy=policy_)
    try:
        with open_binary(rng.path) as handle:
            pieces = list(
                subchunks(
                    handle,
                    rng,
                    chunk_size=chunk_size,
                    special_tokens=special_tokens,
                    newline_cuts=newline_cuts,
                )
            )
            for piece in pieces:
                counter.count_chunk(piece, read_range(handle, piece.start, piece.end))
    except CorpusDecodeError as exc:
        return ("decode_error", exc.path, exc.offset, exc.reason)
    except CorpusChangedError as exc:  # a short read: the file shrank since planning
        return ("changed", exc.path, exc.detail)
    return ("ok", counter.byte_counts(), counter.totals)


# --------------------------------------------------------------------------------------------------
# The client


def _distributed() -> Any:
    """The ``distributed`` module (imported on first use: it is optional and slow to import)."""
    return importlib.import_module("distributed")


def _stop_resource_tracker(was_running: bool) -> None:
    """Stop multiprocessing's resource tracker process if the LocalCluster started it.

    Spawning worker processes starts it; it would otherwise outlive the cluster as a child of this process
    until the interpreter exits. It is started again by the next process that needs it.
    """
    if was_running:
        return
    from multiprocessing import resource_tracker

    tracker = resource_tracker._resource_tracker
    stop = getattr(tracker, "_stop", None)  # private, present since Python 3.8
    with contextlib.suppress(Exception):
        if stop is not None and getattr(tracker, "_pid", None) is not None:
            stop()


def dask_setup(worker: Any) -> None:
    """Preload hook of the LocalCluster's worker processes: ignore Ctrl-C.

    Ctrl-C in a terminal reaches the whole process group; this process decides what happens and closes the
    cluster, as it does with its own counting workers, so the workers need not print a traceback each.
    """
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextlib.contextmanager
def _isolated_spawn() -> Iterator[None]:
    """Start multiprocessing's children (the LocalCluster's nannies, workers, resource tracker) with ``-I``.

    They run ``python -c "from multiprocessing.spawn import ..."`` in this process's working folder, so
    without ``-I`` a ``multiprocessing.py`` (or any module the start-up imports) next to the corpus would run
    in every one of them; our own children use :mod:`~bpe_studio.engine.workers.launch` for the same reason.
    Each
    child still gets this process's ``sys.path`` from multiprocessing once it has started, so it imports
    what we import. The flags come from one private helper that spawn, forkserver and the resource tracker
    all call; it is replaced only while a LocalCluster started here lives, then put back.
    """
    from multiprocessing import util

    original = util._args_from_interpreter_flags  # type: ignore[attr-defined]

    def with_isolation() -> list[str]:
        flags: list[str] = list(original())
        return flags if "-I" in flags else ["-I", *flags]

    util._args_from_interpreter_flags = with_isolation  # type: ignore[attr-defined]
    try:
        yield
    finally:
        util._args_from_interpreter_flags = original  # type: ignore[attr-defined]


@contextlib.contextmanager
def local_cluster(workers: int) -> Iterator[Any]:
    """A ``distributed.LocalCluster`` of ``workers`` single-threaded worker processes on 127.0.0.1.

    Closed, with every process it started, when the block ends however it ends; its processes start
    isolated from the working folder (:func:`_isolated_spawn`).
    """
    with _isolated_spawn(), _local_cluster(workers) as cluster:
        yield cluster


@contextlib.contextmanager
def _local_cluster(workers: int) -> Iterator[Any]:
    """The LocalCluster itself (see :func:`local_cluster`)."""
    import logging  # here, as multiprocessing: imported only when a cluster is started
    import multiprocessing
    from multiprocessing import resource_tracker

    distributed = _distributed()
    if getattr(multiprocessing.current_process(), "_inheriting", False):
        raise ClusterError(f"cannot start a LocalCluster while a worker process starts; {_GUARD_HINT}")
    tracker_running = getattr(resource_tracker._resource_tracker, "_pid", None) is not None
    try:
        cluster = distributed.LocalCluster(
            n_workers=workers,
            threads_per_worker=1,  # counting is pure Python: one thread per process
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            # No dashboard; the scheduler's small HTTP server on a free local port (its default, 8787,
            # may be taken, which only earns a warning).
            scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
            silence_logs=logging.CRITICAL,
            preload=[__name__],  # runs dask_setup() below in each worker process
        )
    except Exception as exc:
        _stop_resource_tracker(tracker_running)
        # "Nanny failed to start" is what an unguarded script gets: its worker processes failed to import it.
        hint = f"; {_GUARD_HINT}" if isinstance(exc, RuntimeError) else ""
        raise ClusterError(f"could not start a LocalCluster of {workers} workers ({exc}){hint}") from None
    try:
        yield cluster
    finally:
        try:
            cluster.close()
        finally:
            _stop_resource_tracker(tracker_running)


def connect_timeout() -> float:
    """Seconds to wait for a scheduler: ``$BPE_STUDIO_CLUSTER_TIMEOUT`` if set, else :data:`CONNECT_TIMEOUT`.

    Example:
        >>> connect_timeout()
        10.0
    """
    try:
        return env_seconds(TIMEOUT_ENV, CONNECT_TIMEOUT, example=30)
    except ValueError as error:
        raise ClusterError(str(error)) from None


def _address_parts(address: str) -> tuple[str, str, int]:
    """The scheme, host and port of a ``tcp://`` or ``tls://`` address that :func:`parse_cluster` accepted."""
    match = _ADDRESS.match(address)
    if match is None:
        raise ValueError(f"{address!r} is not a scheduler address; give one such as 'tcp://HOST:8786'")
    return match.group("scheme"), match.group("ipv6") or match.group("host"), int(match.group("port"))


# Sent once the connection is open, so that a server that waits for its client to speak first answers:
# an HTTP server reads blank lines and then bytes no request may hold, and answers with an error (or
# closes); a Dask scheduler reads the 8 bytes as the length of a message that never comes, and sees a
# client that left during the handshake (nothing it acts on).
_PROBE = b"\r\n" + bytes(6)
# A scheduler's greeting (its handshake message) is a few hundred bytes; a larger declared length is not Dask.
_MAX_GREETING = 1 << 20


def _connect(host: str, port: int, deadline: float) -> socket.socket:
    """A TCP connection to ``host:port`` made by ``deadline``, the name lookup included.

    ``getaddrinfo`` has no timeout of its own (a DNS server that never answers holds it for as long as the
    resolver's retries last), so it runs in a daemon thread that is waited for only until the deadline; and
    each address is tried with the time left, not a fresh timeout each (``socket.create_connection``).

    Raises:
        TimeoutError: The deadline passed.
        OSError: The name is unknown, or every address refused or failed.
    """
    found: dict[str, Any] = {}

    def lookup() -> None:
        try:
            found["addresses"] = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            found["error"] = exc

    thread = threading.Thread(target=lookup, name="bpe-studio-dns", daemon=True)
    thread.start()
    thread.join(max(0.0, deadline - time.monotonic()))
    if thread.is_alive():
        raise TimeoutError
    if "error" in found:
        raise found["error"]
    error: OSError = OSError(f"{host} has no address")
    for family, kind, proto, _, where in found["addresses"]:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        sock = socket.socket(family, kind, proto)
        try:
            sock.settimeout(left)
            sock.connect(where)
            return sock
        except TimeoutError:
            sock.close()
            raise
        except OSError as exc:
            sock.close()
            error = exc
    raise error


def probe_address(address: str, timeout: float) -> float:
    """Check, with a plain socket, that something at ``address`` speaks first like a Dask scheduler.

    Needs no Dask. A Dask scheduler sends its handshake as soon as it accepts a connection; every Dask
    message starts with its length as 8 bytes. So: connect (a refused connection fails at once), then read
    the first 8 bytes, all within ``timeout`` seconds. For ``tls://`` only the connect is checked here.

    Returns:
        The seconds left of ``timeout``, for the rest of the handshake.

    Raises:
        ClusterError: Nothing listens there, nothing answered in time, or what answered is not Dask.

    Example (with a scheduler started by ``dask scheduler`` listening there)::

        probe_address("tcp://127.0.0.1:8786", 10.0)  # 9.998
    """
    scheme, host, port = _address_parts(address)
    deadline = time.monotonic() + timeout
    hint = f"start one with `dask scheduler` and workers with `dask worker {address}`, or use local:N"
    try:
        sock = _connect(host, port, deadline)
    except ConnectionRefusedError:
        raise ClusterError(f"nothing listens at {address} (connection refused); {hint}") from None
    except TimeoutError:
        raise _no_answer(address, timeout) from None
    except OSError as exc:
        raise ClusterError(f"cannot reach {address} ({exc.strerror or exc}); check the address") from None
    with sock:
        if scheme == "tls":
            return max(0.0, deadline - time.monotonic())
        head = b""
        try:
            sock.sendall(_PROBE)
            while len(head) < 8:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                sock.settimeout(left)
                data = sock.recv(8 - len(head))
                if not data:
                    break
                head += data
        except TimeoutError:
            raise _no_answer(address, timeout) from None
        except OSError as exc:
            raise _not_dask(address, f"the connection failed: {exc.strerror or exc}") from None
    if len(head) < 8:
        said = f"it answered {head!r} and closed the connection" if head else "it closed the connection"
        raise _not_dask(address, said)
    # Dask writes the length in the machine's byte order; accept either.
    length = min(int.from_bytes(head, "little"), int.from_bytes(head, "big"))
    if not 0 < length <= _MAX_GREETING:
        raise _not_dask(address, f"it answered {head!r}")
    return max(0.0, deadline - time.monotonic())


async def _scheduler_identity(address: str, timeout: float) -> Any:
    """Dask's handshake with ``address`` and its answer to an ``identity`` request (no timeout of its own)."""
    distributed = _distributed()
    security = distributed.Security()  # as Client() does: TLS settings come from Dask's configuration
    comm = await distributed.comm.connect(address, timeout=timeout, **security.get_connection_args("client"))
    try:
        await comm.write({"op": "identity", "reply": True})
        return await comm.read()
    finally:
        comm.abort()


def probe_scheduler(address: str, timeout: float) -> float:
    """Check that a Dask scheduler answers at ``address`` within ``timeout`` seconds, or raise ClusterError.

    Dask's own connect retries a refused connection until its timeout, and waits for the peer's handshake
    without one; so a port where nothing listens would cost the whole timeout, and a listener that accepts
    and stays silent would hang the run. Here :func:`probe_address` comes first (a plain socket: refused
    fails at once, silence ends with the deadline), then Dask's handshake and an ``identity`` request, all
    within one deadline. A peer that is not a Dask scheduler (an HTTP server, a Dask worker) is named so.

    Returns:
        The seconds left of ``timeout``, for the client's own connection.

    Example (with a scheduler started by ``dask scheduler`` listening there)::

        probe_scheduler("tcp://127.0.0.1:8786", 10.0)  # 9.97
    """
    import asyncio  # here: ~13 ms at start-up that a run without a cluster never needs

    deadline = time.monotonic() + timeout
    probe_address(address, timeout)
    # The handshake runs on an event loop of its own, in a thread of its own (the caller may be running
    # an event loop, e.g. in a notebook); wait_for ends it with the deadline whatever the peer does.
    outcome: dict[str, Any] = {}

    def handshake() -> None:
        remaining = max(0.001, deadline - time.monotonic())
        try:
            identity = _scheduler_identity(address, remaining)
            outcome["reply"] = asyncio.run(asyncio.wait_for(identity, remaining))
        except BaseException as exc:  # reported to the caller below
            outcome["error"] = exc

    thread = threading.Thread(target=handshake, name="bpe-studio-cluster-probe", daemon=True)
    thread.start()
    thread.join(max(0.0, deadline - time.monotonic()) + 1.0)
    error = outcome.get("error")
    if thread.is_alive() or isinstance(error, (TimeoutError, asyncio.TimeoutError)):
        raise _no_answer(address, timeout)
    if error is not None:
        # A peer that is not Dask makes Dask's reader fail in many ways: the connection closed, a frame
        # length read from other text (an HTTP reply declares 3 EiB), a message that does not decode.
        raise _not_dask(address, f"it did not complete Dask's handshake: {type(error).__name__}")
    reply = outcome.get("reply")
    kind = reply.get("type") if isinstance(reply, dict) else None
    if kind != "Scheduler":
        raise _not_dask(address, f"it is a Dask {kind}" if isinstance(kind, str) and kind else "")
    return max(0.0, deadline - time.monotonic())


def _no_answer(address: str, timeout: float) -> ClusterError:
    return ClusterError(
        f"no Dask scheduler answered at {address} within {timeout:g} s; check that the address is the "
        f"scheduler's and that it runs, or wait longer with {TIMEOUT_ENV}=SECONDS"
    )


def _not_dask(address: str, detail: str) -> ClusterError:
    said = f" ({detail})" if detail else ""
    return ClusterError(
        f"{address} is not a Dask scheduler{said}; give the address that `dask scheduler` prints when it "
        "starts (port 8786 by default)"
    )


class ClusterSession:
    """A connection to a cluster for one counting run: started (``local:N``) or reached (an address).

    Use as a context manager; leaving it closes the client and any LocalCluster it started.

    Example (starts a local cluster of two worker processes, which takes a few seconds)::

        with ClusterSession("local:2") as session:
            for item in session.count(ranges, chunk_size=1 << 22, ...):
                ...
    """

    def __init__(self, spec: str) -> None:
        self.spec = parse_cluster(spec)
        self.client: Any = None
        self._stack = contextlib.ExitStack()

    def __enter__(self) -> ClusterSession:
        missing = dask_missing()
        if missing is not None:
            raise ClusterError(f"cluster: {missing}")
        distributed = _distributed()
        try:
            if self.spec.local_workers is not None:
                cluster = self._stack.enter_context(local_cluster(self.spec.local_workers))
                self.client = distributed.Client(cluster, set_as_default=False)
            else:
                timeout = connect_timeout()
                assert self.spec.address is not None  # not local:N, so an address
                left = probe_scheduler(self.spec.address, timeout)
                try:
                    self.client = distributed.Client(
                        self.spec.address, timeout=f"{max(left, 1.0)}s", set_as_default=False
                    )
                except (OSError, TimeoutError) as exc:
                    raise ClusterError(
                        f"cannot reach the Dask scheduler at {self.spec.address} ({exc}); start one with "
                        f"`dask scheduler` and workers with `dask worker {self.spec.address}`, or use local:N"
                    ) from None
            self._stack.callback(self.client.close)
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stack.close()

    @property
    def workers(self) -> int:
        """How many workers the scheduler knows now (at least 1, as tasks wait for workers to join)."""
        return max(1, len(self.client.nthreads()))

    def count(
        self,
        ranges: Sequence[Chunk],
        *,
        chunk_size: int,
        pattern: str,
        special_tokens: Sequence[str],
        policy: InvalidUtf8Policy,
        newline_cuts: bool,
        cancelled: Callable[[], bool],
    ) -> Generator[CountUpdate | CountOutcome, None, None]:
        """Count the ranges on the cluster; yields progress as tasks complete, then the outcome.

        Stops early (without an outcome) when ``cancelled()`` becomes true, cancelling the futures.

        Raises:
            CorpusDecodeError: A file is not valid UTF-8 and the policy is ``error``.
            ClusterError: A task failed (its workers kept dying, or it could not read its file).
        """
        as_completed = _distributed().as_completed
        client = self.client
        run_id = os.urandom(6).hex()
        options = {
            "chunk_size": chunk_size,
            "pattern": pattern,
            "special_tokens": list(special_tokens),
            "policy": policy.value,
            "newline_cuts": newline_cuts,
        }
        futures = {
            client.submit(count_range, rng, key=f"bpe-count-{run_id}-{i}", pure=False, **options): rng
            for i, rng in enumerate(ranges)
        }
        pending = set(futures)
        try:
            done_bytes = 0
            total: dict[str, int] = {}
            totals = CountTotals()
            completed = as_completed(list(futures), loop=client.loop)
            while pending:
                if cancelled():
                    return
                batch = completed.next_batch(block=False)
                if not batch:
                    time.sleep(_POLL_SECONDS)
                    continue
                for future in batch:
                    pending.discard(future)
                    result = self._result(future, futures[future])
                    if result[0] == "decode_error":
                        raise CorpusDecodeError(result[1], result[2], result[3])
                    if result[0] == "changed":
                        raise CorpusChangedError(result[1], result[2])
                    table, part = result[1], result[2]
                    future.release()
                    # Add the smaller table into the larger one.
                    if len(table) > len(total):
                        total, table = table, total
                    get = total.get
                    for token, n in table.items():
                        total[token] = get(token, 0) + n
                    del table
                    totals.add(part)
                    done_bytes += futures[future].size
                    yield CountUpdate(done_bytes, len(total))
            yield CountOutcome(total, totals)
        finally:
            if pending:
                with contextlib.suppress(Exception):
                    client.cancel(list(pending), force=True)

    @staticmethod
    def _result(future: Any, rng: Chunk) -> tuple[Any, ...]:
        if future.status != "error":
            result: tuple[Any, ...] = future.result()
            return result
        exc = future.exception()
        name = type(exc).__name__
        if name == "KilledWorker":
            raise ClusterError(
                f"the task counting {rng.path} [{rng.start:,}, {rng.end:,}) was lost with every worker that "
                "ran it; this is often a lack of memory: use smaller chunks or workers with more memory"
            )
        if isinstance(exc, ImportError):
            raise ClusterError(
                f"a cluster worker cannot import bpe_studio ({exc}); install bpe-studio on every worker"
            )
        if isinstance(exc, OSError):
            raise ClusterError(
                f"a cluster worker cannot read {rng.path} ({exc}); every worker must see the corpus at the "
                "same path (a shared file system), or give the corpus as a URL (s3://, gs://, ...)"
            )
        raise ClusterError(f"a counting task failed on the cluster ({name}: {exc})")
