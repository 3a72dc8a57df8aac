"""The incremental BPE merge loop.

Representation (why it is fast in CPython): each unique pre-token is a ``str`` whose code points are token
ids, so a pair of tokens is a 2-character string, ``word.find(pair)`` locates it and ``word.replace(pair,
new)`` applies a merge left to right without overlaps -- both in C. The loop keeps

* ``counts``: pair -> how often it occurs in the corpus (frequency-weighted over unique pre-tokens);
* ``where``: pair -> indices of the words that contained it when it was counted, each word listed once
  however often the pair occurs in it (entries may be stale -- the word lost the pair to another merge --
  and each is checked with ``find`` when used, which is cheaper than keeping the index exact);
* a heap of ``(-count, key, pair)`` whose key sorts byte strings in *descending* order, so the smallest
  entry is the most frequent pair with ties going to the greatest ``(left bytes, right bytes)``. The heap is
  lazy: a count that drops leaves a stale entry that is corrected when it reaches the top, and only pairs
  whose count grew are pushed again.

A merge touches only the words that hold the pair, and in each only the positions next to a match.

Why each word is listed once per pair, not once per occurrence: a long repetitive pre-token
(``"=" * 200_000`` is one pre-token under the GPT-2 pattern) holds the same pair 100 000 times. Listed per
occurrence, the first entry would merge them all and each of the other 99 999 would cost a ``find`` over the
whole (now pair-less) word: quadratic, minutes for a few hundred kB. Listed once, a merge costs one
``replace`` and one walk over the matches of each word that holds the pair: linear in the occurrences.

Tokens are identified by their bytes: when a merge yields bytes that are already a token (possible, if
rare, as in ``("a", "bc")`` after ``("ab", "c")``), the existing id is reused. The merge is still recorded,
but the vocabulary does not grow, so training goes on until it has the asked-for number of new tokens.

:class:`MergeLoop` runs the loop (``run``, ``replay``, events, cancelling) over one of two engines with the
same two methods, chosen once when it is made: :class:`PythonMerges` (the index described above) or, when the
native kernel is built, :class:`NativeMerges` (the index, the choice of the next pair and the merges made in
Rust, rust/src/merge.rs). ``BPE_STUDIO_PURE=1`` or ``backend="python"`` keeps the Python engine.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from .. import native
from ..events import StopReason
from ..native import Backend, EncodedWords

if TYPE_CHECKING:
    from ..native import MergeKernel

# key(s) inverts each byte (b -> 255 - b) and ends with a code point above every inverted byte, so that
# key(s1) < key(s2) exactly when s1 > s2; the terminator also makes key(l1) + key(r1) < key(l2) + key(r2)
# exactly when (l1, r1) > (l2, r2), since no key is a proper prefix of another.
_TERMINATOR = "\u0100"
_INVERT = {i: 255 - i for i in range(256)}
# Below this many characters in all pre-tokens, a Python loop indexes faster than importing numpy.
_NUMPY_MIN_CHARS = 2_000_000

# A batch of the native kernel (MergeLoop.run(batched=True)) ends after this many merges or once they
# visited this many positions (a few milliseconds): merges made ahead of a cancel are work thrown away.
BATCH_MERGES = 512
BATCH_POSITIONS = 1 << 20

#: The largest pair count the merge loop keeps: the native kernel's counts are signed 64-bit integers, and
#: the Python engine keeps the same limit so that both accept exactly the same counts.
MAX_PAIR_COUNT = 2**63 - 1

#: Why counts are refused, word for word the same from both engines (rust/src/merge.rs says it too).
COUNT_LIMIT = (
    "the counts are too large: pre-token counts times their lengths add up to more than 2**63 - 1, so a "
    "pair count could overflow (no corpus comes near that: the counts are damaged or made up)"
)


class CountLimitError(ValueError):
    """Counts whose pair counts could pass :data:`MAX_PAIR_COUNT`, refused alike by both engines."""


def pair_count_bound(counts: dict[str, int]) -> int:
    """A bound of every pair count the merges can reach: a pair count is a sum of some pre-tokens'
    counts times their number of pairs (length - 1), whatever merges move them.

    Example:
        >>> pair_count_bound({"abc": 5, "d": 7})
        10
    """
    return sum(abs(n) * (len(word) - 1) for word, n in counts.items() if len(word) > 1)


def descending_key(token: bytes) -> str:
    """A string that sorts in the opposite order of ``token``.

    Example:
        >>> descending_key(b"b") < descending_key(b"a") < descending_key(b"")
        True
    """
    return token.decode("latin-1").translate(_INVERT) + _TERMINATOR


class ReplayError(ValueError):
    """A recorded merge is not the one the loop makes next: the merges do not belong to these counts."""


@dataclass(frozen=True, slots=True)
class Merge:
    """One merge made by the loop: the two token ids, the new (or reused) id, and the pair's count."""

    left: int
    right: int
    token_id: int
    count: int


class MergeEngine(Protocol):
    """What :class:`MergeLoop` asks of an engine: the next pair, and to merge it."""

    def best(self) -> tuple[str, int] | None:
        """The pair the next merge takes (two token ids as a 2-character string) and its count, or None
        when no pair is left."""
        ...

    def merge_top(self, pair: str) -> tuple[int, bool]:
        """Merge ``pair`` (the answer of :meth:`best`): its token id, and True when the token is new (its
        bytes are then appended to the loop's ``token_bytes``)."""
        ...


class MergeLoop:
    """Runs merges over a table of unique pre-tokens.

    Args:
        counts: Pre-token (bytes spelled as latin-1 code points) -> occurrences.
        token_bytes: Bytes of each existing token id; ids 0-255 must be the single bytes.
        max_token_length: Pairs whose merged token would be longer (in bytes) are never merged.
        cancelled: Checked while the index is built; see ``stop_reason``.
        backend: ``"native"`` or ``"python"``; None takes :func:`bpe_studio.engine.backend`'s answer.
        encoded: The words as flat token ids instead of ``counts`` (give ``{}`` for ``counts``): the native
            loop takes them without a ``str`` per word (an extend run's words, which are many).
        heap_min: For a caller that takes no merge counting fewer than this (a superword run's loop over
            cut words, which goes back to the whole words then): the native engine leaves the pairs that
            count fewer out of its heap (a million rare pairs made by 8,000 superword merges on 100 MB).
            Every merge counting at least ``heap_min`` is the same; where the next merge would count
            fewer, the loop stops (``NO_PAIRS``) or yields a merge counting fewer. 0: every pair.

    Raises:
        CountLimitError: The counts could make a pair count pass :data:`MAX_PAIR_COUNT`.
        ValueError: ``backend="native"`` but the kernel is not built, or an unknown backend.

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
        cancelled: Callable[[], bool] | None = None,
        backend: Backend | None = None,
        encoded: EncodedWords | None = None,
        heap_min: int = 0,
    ) -> None:
        self.token_bytes = list(token_bytes)
        if encoded is not None and native.resolve(backend) == "python":
            counts = encoded.words()  # the Python loop's form; the native one takes the ids as they are
            encoded = None
        # Checked between the steps of building the index (about a second on 100 MB): once it returns
        # True, building stops and ``stop_reason`` is CANCELLED, so run() and replay() make no merge.
        self._cancelled = cancelled
        self.stop_reason: StopReason | None = None
        try:
            kernel = native.merge_kernel(
                counts, self.token_bytes, max_token_length=max_token_length, backend=backend, encoded=encoded
            )
        except ValueError as exc:
            if str(exc) == COUNT_LIMIT:  # the native kernel checks the counts itself, for free
                raise CountLimitError(COUNT_LIMIT) from None
            raise
        self._engine: MergeEngine
        if kernel is None:
            self._engine = PythonMerges(counts, self.token_bytes, max_token_length, self._stop_if_cancelled)
        else:
            if heap_min > 0:
                kernel.set_heap_min(heap_min)
            self._engine = NativeMerges(kernel, self.token_bytes)
            self._stop_if_cancelled()

    @property
    def backend(self) -> Backend:
        """The engine that makes the merges: ``"native"`` or ``"python"``."""
        return "native" if isinstance(self._engine, NativeMerges) else "python"

    def _stop_if_cancelled(self) -> bool:
        if self.stop_reason is None and self._cancelled is not None and self._cancelled():
            self.stop_reason = StopReason.CANCELLED
        return self.stop_reason is StopReason.CANCELLED

    def run(
        self,
        *,
        new_tokens: int,
        min_frequency: int = 1,
        cancelled: Callable[[], bool] | None = None,
        batched: bool = False,
    ) -> Iterator[Merge]:
        """Merge until ``new_tokens`` new token ids exist (or no pair qualifies), yielding each merge.

        ``stop_reason`` tells why it stopped once the iterator is exhausted.

        ``batched`` (the native engine): the kernel makes merges a batch at a time, ahead of the ones
        yielded; the merges yielded, ``cancelled``'s calls (before each merge) and ``stop_reason`` are the
        same. Only for a caller that either takes every merge or, once it stops early (or cancels), uses the
        loop no more: the kernel may then have made merges that were never yielded.
        """
        if self.stop_reason is StopReason.CANCELLED:
            return  # cancelled while the index was built
        if batched and isinstance(self._engine, NativeMerges):
            yield from self._run_batched(new_tokens, min_frequency, cancelled)
            return
        created = 0
        while created < new_tokens:
            if cancelled is not None and cancelled():
                self.stop_reason = StopReason.CANCELLED
                return
            best = self._engine.best()
            if best is None:
                self.stop_reason = StopReason.NO_PAIRS
                return
            pair, n = best
            if n < min_frequency:
                self.stop_reason = StopReason.MIN_FREQUENCY
                return
            merge, new = self._merge_top(pair, n)
            created += new
            yield merge
        self.stop_reason = StopReason.VOCAB_SIZE

    def _run_batched(
        self, new_tokens: int, min_frequency: int, cancelled: Callable[[], bool] | None
    ) -> Iterator[Merge]:
        """:meth:`run` over the kernel's batches (see ``batched``): the same merges, cancel checks and
        ``stop_reason`` as the loop above, which asks the kernel once per merge."""
        assert isinstance(self._engine, NativeMerges)
        engine, tb = self._engine, self.token_bytes
        created = 0
        while created < new_tokens:
            batch, end = engine.merge_batch(new_tokens - created, min_frequency)
            for left, right, token_id, new, count in batch:
                if cancelled is not None and cancelled():
                    self.stop_reason = StopReason.CANCELLED
                    return
                if new:
                    tb.append(tb[left] + tb[right])
                created += new
                yield Merge(left, right, token_id, count)
            if end is not None:
                if cancelled is not None and cancelled():
                    self.stop_reason = StopReason.CANCELLED
                else:
                    self.stop_reason = end
                return
        self.stop_reason = StopReason.VOCAB_SIZE

    def run_recorded(
        self,
        pairs: list[tuple[bytes, bytes]],
        counts: list[int],
        *,
        new_tokens: int,
        min_frequency: int = 1,
        cancelled: Callable[[], bool] | None = None,
    ) -> None:
        """``run(batched=True)`` for a caller that only records each merge: appends its pair of token bytes
        to ``pairs`` and its count to ``counts``, with the same merges, ``cancelled``'s calls (before each
        merge) and ``stop_reason``. No :class:`Merge` and no generator step per merge: those were ~1 µs of
        each, 30 ms of a 32k run on 2 MB of Chinese (issue 22)."""
        if not isinstance(self._engine, NativeMerges):
            tb = self.token_bytes
            for m in self.run(new_tokens=new_tokens, min_frequency=min_frequency, cancelled=cancelled):
                pairs.append((tb[m.left], tb[m.right]))
                counts.append(m.count)
            return
        if self.stop_reason is StopReason.CANCELLED:
            return  # cancelled while the index was built
        engine, tb = self._engine, self.token_bytes
        add_pair, add_count = pairs.append, counts.append
        created = 0
        while created < new_tokens:
            batch, end = engine.merge_batch(new_tokens - created, min_frequency)
            for left, right, _token_id, new, count in batch:
                if cancelled is not None and cancelled():
                    self.stop_reason = StopReason.CANCELLED
                    return
                if new:
                    tb.append(tb[left] + tb[right])
                created += new
                add_pair((tb[left], tb[right]))
                add_count(count)
            if end is not None:
                if cancelled is not None and cancelled():
                    self.stop_reason = StopReason.CANCELLED
                else:
                    self.stop_reason = end
                return
        self.stop_reason = StopReason.VOCAB_SIZE

    def _merge_top(self, pair: str, n: int) -> tuple[Merge, bool]:
        """Make the merge of ``pair`` (the engine's best, occurring ``n`` times); True if its token is new."""
        token_id, new = self._engine.merge_top(pair)
        return Merge(ord(pair[0]), ord(pair[1]), token_id, n), new

    def replay(
        self,
        merges: Sequence[tuple[bytes, bytes]],
        merge_counts: Sequence[int] | None = None,
        *,
        new_tokens: int | None = None,
        min_frequency: int = 1,
        cancelled: Callable[[], bool] | None = None,
    ) -> Iterator[Merge]:
        """Make recorded merges again, in order, checking that each is the merge :meth:`run` makes next.

        Each recorded merge is checked against the loop's own choice (the same pair and, when
        ``merge_counts`` is given, the same count) and then applied exactly as :meth:`run` applies it, so
        afterwards the loop is in the state an uninterrupted :meth:`run` reaches after those merges, and a
        following :meth:`run` continues as that run would.

        Like :meth:`run`, it stops early once ``new_tokens`` new ids exist or the next pair occurs fewer than
        ``min_frequency`` times, setting ``stop_reason`` (so a checkpoint of a longer run can stand for a
        shorter one). When every recorded merge was made, ``stop_reason`` is left as it was (``None`` for a
        new loop), and the caller continues with ``run(new_tokens=...)`` for the tokens still wanted.

        Raises:
            ReplayError: A recorded merge is not the one the loop would make.
        """
        if self.stop_reason is StopReason.CANCELLED:
            return  # cancelled while the index was built
        created = 0
        for index, (left_bytes, right_bytes) in enumerate(merges):
            if new_tokens is not None and created >= new_tokens:
                self.stop_reason = StopReason.VOCAB_SIZE
                return
            if cancelled is not None and cancelled():
                self.stop_reason = StopReason.CANCELLED
                return
            best = self._engine.best()
            if best is None:
                raise ReplayError(
                    f"merge {index} ({left_bytes!r}, {right_bytes!r}) is recorded, but no pair is left"
                )
            pair, n = best
            if n < min_frequency:
                self.stop_reason = StopReason.MIN_FREQUENCY
                return
            left, right = ord(pair[0]), ord(pair[1])
            if (self.token_bytes[left], self.token_bytes[right]) != (left_bytes, right_bytes):
                raise ReplayError(
                    f"merge {index} is recorded as ({left_bytes!r}, {right_bytes!r}), but the counts make "
                    f"({self.token_bytes[left]!r}, {self.token_bytes[right]!r}) the most frequent pair"
                )
            if merge_counts is not None and merge_counts[index] != n:
                raise ReplayError(
                    f"merge {index} ({left_bytes!r}, {right_bytes!r}) is recorded with count "
                    f"{merge_counts[index]}, but the pair occurs {n} times"
                )
            merge, new = self._merge_top(pair, n)  # exactly what run() does for one merge
            created += new
            yield merge


class PythonMerges:
    """The Python engine of :class:`MergeLoop`: the index of pairs described in the module docstring.

    Args:
        counts: As for :class:`MergeLoop`.
        token_bytes: The loop's list of token bytes, which :meth:`merge_top` extends.
        max_token_length: As for :class:`MergeLoop`.
        stop: Says whether to stop building the index (the loop's cancel check).

    Raises:
        CountLimitError: The counts could make a pair count pass :data:`MAX_PAIR_COUNT`.
    """

    def __init__(
        self,
        counts: dict[str, int],
        token_bytes: list[bytes],
        max_token_length: int | None,
        stop: Callable[[], bool],
    ) -> None:
        self.token_bytes = token_bytes
        self._stop = stop
        self._ids_by_bytes = {b: i for i, b in enumerate(token_bytes)}
        self._keys = [descending_key(b) for b in token_bytes]
        self._max_len = max_token_length
        if pair_count_bound(counts) > MAX_PAIR_COUNT:
            raise CountLimitError(COUNT_LIMIT)
        # Single-token words have no pairs and are never visited; keeping them costs less than filtering.
        self._words = list(counts)
        self._freqs = list(counts.values())
        self._counts: dict[str, int] = {}
        self._where: dict[str, list[int]] = {}
        self._heap: list[tuple[int, str, str]] = []
        self._index_words()

    def _index_words(self) -> None:
        """Count every adjacent pair and note the words holding it; then build the heap."""
        total = sum(map(len, self._words))
        # The numpy path reads the words as bytes: only for words of the 256 byte tokens (a run from scratch;
        # an extend run's words hold the ids of a whole vocabulary).
        if total >= _NUMPY_MIN_CHARS and len(self.token_bytes) <= 256:
            self._index_words_numpy()
        elif total >= 2:
            self._index_words_python()
        if self._stop():
            return
        keys = self._keys
        self._heap = [
            (-n, keys[ord(p[0])] + keys[ord(p[1])], p) for p, n in self._counts.items() if self._allowed(p)
        ]
        heapq.heapify(self._heap)

    def _index_words_python(self) -> None:
        counts, where = self._counts, self._where
        get = counts.get
        for j, (w, f) in enumerate(zip(self._words, self._freqs, strict=True)):
            for k in range(len(w) - 1):
                p = w[k : k + 2]
                n = get(p)
                if n is None:
                    counts[p] = f
                    where[p] = [j]
                else:
                    counts[p] = n + f
                    js = where[p]
                    if js[-1] != j:  # words are visited in order: a repeat of this word would be last
                        js.append(j)

    def _index_words_numpy(self) -> None:
        """The same as :meth:`_index_words_python`, vectorised.

        At the start every token is a single byte, so a pair is a number ``256 * left + right``; counts are
        a weighted ``bincount`` and the word lists come from one stable sort of the pair numbers.
        """
        import numpy as np  # imported here: it costs more start-up time than small corpora take to index

        words, freqs = self._words, self._freqs
        # Start-up words are latin-1 strings (code point = byte), as the counting phase produces them.
        data = np.frombuffer("".join(words).encode("latin-1"), dtype=np.uint8).astype(np.uint16)
        lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        codes = (data[:-1] << 8) | data[1:]
        inside = np.ones(len(codes), dtype=bool)
        inside[np.cumsum(lengths)[:-1] - 1] = False  # a pair across two words is no pair
        word_ids = np.repeat(np.arange(len(words), dtype=np.int32), lengths)[:-1][inside]
        codes = codes[inside]
        if len(codes) == 0:
            return  # every word is a single token: nothing to merge
        weights = np.asarray(freqs, dtype=np.int64)[word_ids]
        pair_counts = np.bincount(codes, weights=weights, minlength=1 << 16)
        if self._stop():
            return
        # A stable sort of 16-bit keys is a radix sort in numpy: linear time.
        order = np.argsort(codes, kind="stable")
        if self._stop():
            return
        sorted_codes = codes[order]
        sorted_ids = word_ids[order]
        # One entry per (pair, word): the sort is stable, so a word's repeats of a pair are adjacent.
        first = np.r_[True, (sorted_codes[1:] != sorted_codes[:-1]) | (sorted_ids[1:] != sorted_ids[:-1])]
        sorted_codes, sorted_ids = sorted_codes[first], sorted_ids[first]
        # tolist() would make a new int object per entry (millions); mapping through one list of ints
        # makes every entry of a word share one object, as the Python loop does, and saves ~30 bytes each.
        shared = list(range(len(words)))
        sorted_words = list(map(shared.__getitem__, sorted_ids.tolist()))
        starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]]).tolist()
        ends = [*starts[1:], len(sorted_words)]
        counts, where = self._counts, self._where
        for start, end in zip(starts, ends, strict=True):
            code = int(sorted_codes[start])
            p = chr(code >> 8) + chr(code & 0xFF)
            # float64 weights are exact: a count above 2**53 would need a corpus of petabytes.
            counts[p] = int(pair_counts[code])
            where[p] = sorted_words[start:end]

    def _allowed(self, pair: str) -> bool:
        if self._max_len is None:
            return True
        tb = self.token_bytes
        return len(tb[ord(pair[0])]) + len(tb[ord(pair[1])]) <= self._max_len

    def best(self) -> tuple[str, int] | None:
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

    def merge_top(self, pair: str) -> tuple[int, bool]:
        """Merge ``pair`` (the heap's top, as :meth:`best` left it); True if its token is new."""
        heapq.heappop(self._heap)
        left, right = ord(pair[0]), ord(pair[1])
        merged = self.token_bytes[left] + self.token_bytes[right]
        token_id = self._ids_by_bytes.get(merged)
        new = token_id is None
        if token_id is None:
            token_id = len(self.token_bytes)
            self.token_bytes.append(merged)
            self._ids_by_bytes[merged] = token_id
            self._keys.append(self._keys[left][:-1] + self._keys[right])
        self._apply(pair, chr(token_id))
        return token_id, new

    def _apply(self, pair: str, c: str) -> None:
        """Replace ``pair`` by token ``c`` in every word holding it, updating counts next to each match.

        Updates are grouped by the neighbouring token: every (x, a) that becomes (x, c) is keyed by x, every
        (b, y) that becomes (c, y) by y. A word visit then touches only small local tables, and the large
        ``counts``/``where`` tables are updated once per neighbour at the end.
        """
        words, freqs = self._words, self._freqs
        a, b = pair[0], pair[1]
        # neighbour -> [total frequency, word indices]
        left: dict[str, list[Any]] = {}
        right: dict[str, list[Any]] = {}
        left_get, right_get = left.get, right.get
        # The four "entry" updates below are the same code written out on purpose: this loop runs millions
        # of times, and a helper function call would cost more than the update itself.
        doubles = 0  # frequency of (b, a) pairs between adjacent matches, which become (c, c)
        double_words: list[int] = []
        for j in self._where.pop(pair):
            w = words[j]
            i = w.find(pair)
            if i < 0:
                continue  # stale or repeated index entry
            f = freqs[j]
            nw = w.replace(pair, c)
            words[j] = nw
            last = len(w) - 2
            if len(nw) == last + 1:
                # The common case: one match (the word got one token shorter).
                if i:
                    x = w[i - 1]
                    entry = left_get(x)
                    if entry is None:
                        left[x] = [f, [j]]
                    else:
                        entry[0] += f
                        entry[1].append(j)
                if i < last:
                    y = w[i + 2]
                    entry = right_get(y)
                    if entry is None:
                        right[y] = [f, [j]]
                    else:
                        entry[0] += f
                        entry[1].append(j)
                continue
            # Several matches: walk them once, left to right, as str.replace made them (in "a a a" the
            # pair (a, a) matches at 0 only, leaving [aa, a]). Two adjacent matches (… a b a b …) turn the
            # pair (b, a) between them into (c, c), counted once, from the second match's side. A count grows
            # by f per match, but the word is noted once per neighbour (the `[-1] != j` tests: this word's
            # entries are the last ones appended), so that a later merge visits it once, not once per match.
            prev_end = -1
            while i >= 0:
                if i == prev_end:
                    doubles += f
                    if not double_words or double_words[-1] != j:
                        double_words.append(j)
                elif i:
                    x = w[i - 1]
                    entry = left_get(x)
                    if entry is None:
                        left[x] = [f, [j]]
                    else:
                        entry[0] += f
                        if entry[1][-1] != j:
                            entry[1].append(j)
                nxt = w.find(pair, i + 2)
                if i < last and nxt != i + 2:
                    y = w[i + 2]
                    entry = right_get(y)
                    if entry is None:
                        right[y] = [f, [j]]
                    else:
                        entry[0] += f
                        if entry[1][-1] != j:
                            entry[1].append(j)
                prev_end = i + 2
                i = nxt
        counts = self._counts
        get = counts.get
        # Pairs whose count grew, in order; a dict for its O(1) membership (a merge inside one long word can
        # give hundreds of distinct neighbours, and a list's `in` made that quadratic).
        grown: dict[str, None] = {}
        for x, (f, js) in left.items():
            counts[x + a] -= f
            self._add(x + c, f, js, grown)
        for y, (f, js) in right.items():
            counts[b + y] -= f
            self._add(c + y, f, js, grown)
        if doubles:
            counts[b + a] = get(b + a, 0) - doubles
            self._add(c + c, doubles, double_words, grown)
        # No occurrence of the pair is left: str.replace leaves none of a 2-character pattern.
        del counts[pair]
        keys, heap = self._keys, self._heap
        for q in grown:
            if self._allowed(q):
                heapq.heappush(heap, (-counts[q], keys[ord(q[0])] + keys[ord(q[1])], q))

    def _add(self, q: str, f: int, js: list[int], grown: dict[str, None]) -> None:
        """Add ``f`` to the count of pair ``q`` found in words ``js``."""
        n = self._counts.get(q)
        if n is None:
            self._counts[q] = f
            self._where[q] = js
            grown[q] = None
        else:
            self._counts[q] = n + f
            self._where.setdefault(q, []).extend(js)
            grown[q] = None


class NativeMerges:
    """The native engine of :class:`MergeLoop` (rust/src/merge.rs): the kernel keeps the pre-tokens as linked
    positions with a pair -> positions index, so a merge costs in proportion to the occurrences it touches,
    and it releases the GIL while it builds the index and while it merges.

    Args:
        kernel: From :func:`bpe_studio.engine.native.merge_kernel`.
        token_bytes: The loop's list of token bytes, which :meth:`merge_top` extends.

    Example:
        >>> from bpe_studio.engine.native import backend
        >>> loop = MergeLoop({"hello": 2, "hell": 1}, [bytes([i]) for i in range(256)])
        >>> isinstance(loop._engine, NativeMerges) == (backend() == "native")
        True
    """

    def __init__(self, kernel: MergeKernel, token_bytes: list[bytes]) -> None:
        self._kernel = kernel
        self.token_bytes = token_bytes

    def best(self) -> tuple[str, int] | None:
        best = self._kernel.best()
        if best is None:
            return None
        left, right, n = best
        return chr(left) + chr(right), n

    def merge_top(self, pair: str) -> tuple[int, bool]:
        token_id, new = self._kernel.merge_top()
        if new:
            self.token_bytes.append(self.token_bytes[ord(pair[0])] + self.token_bytes[ord(pair[1])])
        return token_id, new

    def merge_batch(
        self, new_tokens: int, min_frequency: int
    ) -> tuple[list[tuple[int, int, int, bool, int]], StopReason | None]:
        """Merges made by the kernel in one call (see ``MergeKernel.merge_batch``), their token bytes NOT
        appended (the caller appends those it reports), and why the kernel stopped (None: call again)."""
        batch, end = self._kernel.merge_batch(
            new_tokens, min_frequency, max_merges=BATCH_MERGES, budget=BATCH_POSITIONS
        )
        return batch, None if end is None else StopReason(end)
