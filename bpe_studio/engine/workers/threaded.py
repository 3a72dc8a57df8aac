"""Run a function over items on a few threads of this process, results in the items' order.

For work whose heavy part releases the GIL (the native encoder): no worker processes to start, nothing to
send between processes. Used by ``encode-corpus`` and ``eval``.

Example:
    >>> list(ordered_map(lambda n: n * n, iter(range(5)), workers=2, cancelled=lambda: False, name="squares"))
    [0, 1, 4, 9, 16]
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Generator, Iterator
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from concurrent.futures import Future

T = TypeVar("T")
R = TypeVar("R")

#: Seconds between two looks at the cancel flag while the next result is not ready.
POLL_SECONDS = 0.05

#: Workers (threads or processes) per core at most: the work is CPU-bound native code (threads release
#: the GIL) plus some reading and decoding (a second worker per core keeps the core busy while the first
#: waits for the disk).
WORKERS_PER_CORE = 2


def pool_size(requested: int) -> int:
    """How many threads or worker processes to start for ``requested`` workers: no more than
    :data:`WORKERS_PER_CORE` per core this process may run on, and at least one. Every pool of the engine
    (threads: :func:`ordered_map`, counting threads; processes: counting and task workers) is sized here,
    so that ``--workers 20000`` starts neither 20,000 threads nor 20,000 processes; the results never
    depend on the number of workers.

    Example:
        >>> pool_size(1), pool_size(10**6) <= WORKERS_PER_CORE * (os.cpu_count() or 1)
        (1, True)
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(requested, WORKERS_PER_CORE * cores))


def ordered_map(
    run: Callable[[T], R],
    items: Iterator[T],
    *,
    workers: int,
    cancelled: Callable[[], bool],
    name: str,
) -> Generator[R, None, None]:
    """``run(item)`` for each item on ``workers`` threads, yielding the results in the items' order.

    At most two items per thread are in flight, so memory stays bounded. When ``cancelled()`` turns True
    the generator just ends (the caller says what a cancel means); on cancel, Ctrl-C, an error or an early
    ``close()`` the items not started are dropped and the running ones are waited for, so no thread
    outlives the call. An exception of ``run`` is raised here, in the item's turn.
    """
    # Imported here: concurrent.futures brings logging, which training never needs (counting imports
    # pool_size from this module; test_startup_imports).
    from concurrent.futures import ThreadPoolExecutor, wait

    workers = pool_size(workers)
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name)
    pending: deque[Future[R]] = deque()
    exhausted = False
    try:
        while True:
            while not exhausted and len(pending) < 2 * workers:
                item = next(items, None)
                if item is None:
                    exhausted = True
                else:
                    pending.append(pool.submit(run, item))
            if not pending:
                return
            # A timed wait, so that cancel is seen and Ctrl-C reaches this (the main) thread promptly.
            while not wait([pending[0]], timeout=POLL_SECONDS).done:
                if cancelled():
                    return
            yield pending.popleft().result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


__all__ = ["ordered_map", "pool_size"]
