"""The queue of the merge loop for one long pre-token: entries ``(rank, position)`` taken lowest rank first
and, among equal ranks, leftmost first (``Tokenizer._bpe_long``, ``rank_rule._merge_parts_long``; the same
two queues as ``MergeQueue`` in rust/src/encode.rs).

:class:`Buckets` keeps one list of positions per rank and takes the ranks in order, each list sorted once:
linear in the word (but for those sorts) and in order along it. That holds while every merge makes only
pairs that rank after it, which BPE training gives (a pair holding a new token is merged later, if ever);
:meth:`Buckets.push` refuses an entry at or before the rank being taken, and the caller starts the word
again with a :class:`Heap`, which takes any order in O(log n) a step.

Example:
    >>> queue = Buckets()
    >>> queue.push(2, 7), queue.push(1, 9), queue.push(1, 3)
    (True, True, True)
    >>> queue.pop(), queue.pop()
    ((1, 3), (1, 9))
    >>> queue.push(1, 0)  # rank 1 is being taken: refused
    False
"""

from __future__ import annotations

import heapq

TYPE_CHECKING = False  # (typing is for type checkers only: see bpe_studio/__init__.py)
if TYPE_CHECKING:
    from typing import Protocol

    class MergeQueue(Protocol):
        """Entries ``(rank, position)``, lowest rank first and leftmost among equals."""

        def push(self, rank: int, position: int) -> bool:
            """Add an entry; False when this queue cannot take it (start again with a :class:`Heap`)."""
            ...

        def pop(self) -> tuple[int, int] | None:
            """The next entry, or None when none is left."""
            ...


class Heap:
    """A binary heap: any order of pushes.

    Example:
        >>> queue = Heap()
        >>> queue.push(3, 1), queue.push(1, 2), queue.pop()
        (True, True, (1, 2))
    """

    def __init__(self) -> None:
        self._heap: list[tuple[int, int]] = []

    def push(self, rank: int, position: int) -> bool:
        heapq.heappush(self._heap, (rank, position))
        return True

    def pop(self) -> tuple[int, int] | None:
        return heapq.heappop(self._heap) if self._heap else None


class Buckets:
    """One list of positions per rank, taken rank by rank (see the module docstring)."""

    def __init__(self) -> None:
        self._waiting: dict[int, list[int]] = {}
        self._ranks: list[int] = []  # a heap of the ranks in _waiting
        self._rank = -1  # the rank being taken
        self._positions: list[int] = []  # its positions, sorted
        self._taken = 0

    def push(self, rank: int, position: int) -> bool:
        if rank <= self._rank:
            return False
        bucket = self._waiting.get(rank)
        if bucket is None:
            self._waiting[rank] = [position]
            heapq.heappush(self._ranks, rank)
        else:
            bucket.append(position)
        return True

    def pop(self) -> tuple[int, int] | None:
        while self._taken == len(self._positions):
            if not self._ranks:
                return None
            self._rank = heapq.heappop(self._ranks)
            self._positions = sorted(self._waiting.pop(self._rank))
            self._taken = 0
        self._taken += 1
        return self._rank, self._positions[self._taken - 1]
