"""Run a function over items on a few threads of this process, results in the items' order.

For work whose heavy part releases the GIL (the native encoder): no worker processes to start, nothing to
send between processes. Used by ``encode-corpus`` and ``eval``.

Example:
    >>> list(ordered_map(lambda n: n * n, iter(range(5)), workers=2, cancelled=lambda: False, name="squares"))
    [0, 1, 4, 9, 16]
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Generator, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

#: Seconds between two looks at the cancel flag while the next result is not ready.
POLL_SECONDS = 0.05


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


__all__ = ["ordered_map"]
