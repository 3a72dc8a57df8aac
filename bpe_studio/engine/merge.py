"""The incremental BPE merge loop.

Representation (why it is fast in CPython): each unique pre-token is a ``str`` whose code points are token
ids, so a pair of tokens is a 2-character string, ``word.find(pair)`` locates it and ``word.replace(pair,
new)`` applies a merge left to right without overlaps -- both in C. The loop keeps

* ``counts``: pair -> how often it occurs in the corpus (frequency-weighted over unique pre-tokens);
* ``where``: pair -> indices of the words that contained it when it was counted (may hold stale or repeated
  indices; each is checked with ``find`` when used, which is cheaper than keeping the index exact);
* a heap of ``(-count, key, pair)`` whose key sorts byte strings in *descending* order, so the smallest
  entry is the most frequent pair with ties going to the greatest ``(left bytes, right bytes)``. The heap is
  lazy: a count that drops leaves a stale entry that is corrected when it reaches the top, and only pairs
  whose count grew are pushed again.

A merge touches only the words that hold the pair, and in each only the positions next to a match.

Tokens are identified by their bytes: when a merge yields bytes that are already a token (possible, if
rare, as in ``("a", "bc")`` after ``("ab", "c")``), the existing id is reused. The merge is still recorded,
but the vocabulary does not grow, so training goes on until it has the asked-for number of new tokens.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .events import StopReason

# key(s) inverts each byte (b -> 255 - b) and ends with a code point above every inverted byte, so that
# key(s1) < key(s2) exactly when s1 > s2; the terminator also makes key(l1) + key(r1) < key(l2) + key(r2)
# exactly when (l1, r1) > (l2, r2), since no key is a proper prefix of another.
_TERMINATOR = "\u0100"
_INVERT = {i: 255 - i for i in range(256)}


def descending_key(token: bytes) -> str:
    """A string that sorts in the opposite order of ``token``.

    Example:
        >>> descending_key(b"b") < descending_key(b"a") < descending_key(b"")
        True
    """
    return token.decode("latin-1").translate(_INVERT) + _TERMINATOR


@dataclass(frozen=True, slots=True)
class Merge:
    """One merge made by the loop: the two token ids, the new (or reused) id, and the pair's count."""

    left: int
    right: int
    token_id: int
    count: int


class MergeLoop:
    """Runs merges over a table of unique pre-tokens.

    Args:
        counts: Pre-token (bytes spelled as latin-1 code points) -> occurrences.
        token_bytes: Bytes of each existing token id; ids 0-255 must be the single bytes.
        max_token_length: Pairs whose merged token would be longer (in bytes) are never merged.

    Example:
        >>> loop = MergeLoop({"hello": 2, "hell": 1}, [bytes([i]) for i in range(256)])
        >>> m = next(loop.run(new_tokens=1))
        >>> (loop.token_bytes[m.left], loop.token_bytes[m.right], m.count)
        (b'l', b'l', 3)
    """

    def __init__(
        self,
        counts: dict[str, int],
        token_bytes: list[bytes],
        *,
        max_token_length: int | None = None,
    ) -> None:
        self.token_bytes = list(token_bytes)
        self._ids_by_bytes = {b: i for i, b in enumerate(self.token_bytes)}
        self._keys = [descending_key(b) for b in self.token_bytes]
        self._max_len = max_token_length
        self.stop_reason: StopReason | None = None
        # Single-token words have no pairs: they never change, so they are left out.
        self._words = [w for w in counts if len(w) > 1]
        self._freqs = [counts[w] for w in self._words]
        self._counts: dict[str, int] = {}
        self._where: dict[str, list[int]] = {}
        self._heap: list[tuple[int, str, str]] = []
        self._index_words()

    def _index_words(self) -> None:
        counts, where = self._counts, self._where
        get = counts.get
        for j, (w, f) in enumerate(zip(self._words, self._freqs)):
            for k in range(len(w) - 1):
                p = w[k : k + 2]
                n = get(p)
                if n is None:
                    counts[p] = f
                    where[p] = [j]
                else:
                    counts[p] = n + f
                    where[p].append(j)
        keys = self._keys
        self._heap = [
            (-n, keys[ord(p[0])] + keys[ord(p[1])], p) for p, n in counts.items() if self._allowed(p)
        ]
        heapq.heapify(self._heap)

    def _allowed(self, pair: str) -> bool:
        if self._max_len is None:
            return True
        tb = self.token_bytes
        return len(tb[ord(pair[0])]) + len(tb[ord(pair[1])]) <= self._max_len

    def _best(self) -> tuple[str, int] | None:
        """Pop stale heap entries until the top is current; return (pair, count) without popping it."""
        heap, counts = self._heap, self._counts
        while heap:
            neg, key, pair = heap[0]
            n = counts.get(pair, 0)
            if n == -neg:
                return pair, n
            if n > 0:
                heapq.heapreplace(heap, (-n, key, pair))
            else:
                heapq.heappop(heap)
        return None

    def run(
        self,
        *,
        new_tokens: int,
        min_frequency: int = 1,
        cancelled: Callable[[], bool] | None = None,
    ) -> Iterator[Merge]:
        """Merge until ``new_tokens`` new token ids exist (or no pair qualifies), yielding each merge.

        ``stop_reason`` tells why it stopped once the iterator is exhausted.
        """
        created = 0
        while created < new_tokens:
            if cancelled is not None and cancelled():
                self.stop_reason = StopReason.CANCELLED
                return
            best = self._best()
            if best is None:
                self.stop_reason = StopReason.NO_PAIRS
                return
            pair, n = best
            if n < min_frequency:
                self.stop_reason = StopReason.MIN_FREQUENCY
                return
            heapq.heappop(self._heap)
            left, right = ord(pair[0]), ord(pair[1])
            merged = self.token_bytes[left] + self.token_bytes[right]
            token_id = self._ids_by_bytes.get(merged)
            if token_id is None:
                token_id = len(self.token_bytes)
                self.token_bytes.append(merged)
                self._ids_by_bytes[merged] = token_id
                self._keys.append(self._keys[left][:-1] + self._keys[right])
                created += 1
            self._apply(pair, chr(token_id))
            yield Merge(left, right, token_id, n)
        self.stop_reason = StopReason.VOCAB_SIZE

    def _apply(self, pair: str, c: str) -> None:
        """Replace ``pair`` by token ``c`` in every word holding it, updating counts next to each match."""
        counts, where, words, freqs = self._counts, self._where, self._words, self._freqs
        get = counts.get
        a, b = pair
        grown: set[str] = set()
        for j in where.pop(pair):
            w = words[j]
            i = w.find(pair)
            if i < 0:
                continue  # stale or repeated index entry
            f = freqs[j]
            words[j] = w.replace(pair, c)
            last = len(w) - 2
            nxt = w.find(pair, i + 2)
            if nxt < 0:
                # The common case: one match. Pairs (x, a) and (b, y) around it become (x, c) and (c, y).
                if i:
                    x = w[i - 1]
                    counts[x + a] -= f
                    q = x + c
                    counts[q] = get(q, 0) + f
                    where.setdefault(q, []).append(j)
                    grown.add(q)
                if i < last:
                    y = w[i + 2]
                    counts[b + y] -= f
                    q = c + y
                    counts[q] = get(q, 0) + f
                    where.setdefault(q, []).append(j)
                    grown.add(q)
                continue
            # Several matches: walk them in order. Two adjacent matches (… a b a b …) turn the pair (b, a)
            # between them into (c, c), counted once, from the second match's left side.
            prev_end = -1
            while i >= 0:
                if i:
                    if i == prev_end:
                        counts[b + a] -= f
                        q = c + c
                    else:
                        x = w[i - 1]
                        counts[x + a] -= f
                        q = x + c
                    counts[q] = get(q, 0) + f
                    where.setdefault(q, []).append(j)
                    grown.add(q)
                nxt = w.find(pair, i + 2)
                if i < last and nxt != i + 2:
                    y = w[i + 2]
                    counts[b + y] -= f
                    q = c + y
                    counts[q] = get(q, 0) + f
                    where.setdefault(q, []).append(j)
                    grown.add(q)
                prev_end = i + 2
                i = nxt
        # No occurrence of the pair is left: str.replace leaves none of a 2-character pattern.
        del counts[pair]
        keys, heap = self._keys, self._heap
        for q in grown:
            if self._allowed(q):
                heapq.heappush(heap, (-counts[q], keys[ord(q[0])] + keys[ord(q[1])], q))
