"""What ``inspect`` says of a tokenizer's merges (:func:`merge_summary`), in one pass and a module of its own:
``bpe-studio inspect FILE`` needs only this of :mod:`.analysis` (which re-exports both), whose dataclasses
cost 5-8 ms of a fresh process (issue 20: ``inspect`` within the reference library's load time).
"""

from __future__ import annotations

from collections import Counter
from itertools import compress

from .. import native as kernel

TYPE_CHECKING = False  # (typing is for type checkers only: see bpe_studio/__init__.py)
if TYPE_CHECKING:
    from .tokenizer import Tokenizer

__all__ = ["SENTENCEPIECE_STYLE", "MergeSummary", "length_counts", "merge_summary", "positions_at_least"]

#: How ``inspect`` and the app name the pre-tokenization of a SentencePiece-style BPE (a tokenizer with a
#: ``piece_model``): it has no regex (its ``Tokenizer.pattern`` is a placeholder no encode uses).
SENTENCEPIECE_STYLE = "SentencePiece-style BPE, no regex"


class MergeSummary:
    """What ``inspect`` says of a tokenizer's merges (:func:`merge_summary`).

    (A plain class, not a NamedTuple: under ``from __future__ import annotations`` a NamedTuple compiles
    each field's annotation when it is defined, 1 ms of ``inspect``'s fresh process.)

    Attributes:
        merges: How many merges.
        learned_tokens: How many new tokens they make (``MergeIndex.new_before[-1]``).
        deepest: ``(id, height)`` of the token with the tallest merge tree (``MergeIndex.deepest()``).
    """

    __slots__ = ("deepest", "learned_tokens", "merges")

    def __init__(self, merges: int, learned_tokens: int, deepest: tuple[int, int] | None) -> None:
        self.merges = merges
        self.learned_tokens = learned_tokens
        self.deepest = deepest

    def _fields(self) -> tuple[int, int, tuple[int, int] | None]:
        return (self.merges, self.learned_tokens, self.deepest)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MergeSummary) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return (
            f"MergeSummary(merges={self.merges!r}, learned_tokens={self.learned_tokens!r}, "
            f"deepest={self.deepest!r})"
        )


def merge_summary(tokenizer: Tokenizer) -> MergeSummary:
    """The figures of :class:`MergeSummary` in one pass over the merges by id, without a
    :class:`MergeIndex` (whose tables cost more than loading a rank file).

    Example:
        >>> tok = Tokenizer({i: bytes([i]) for i in range(256)} | {256: b"ab"}, [(b"a", b"b")])
        >>> merge_summary(tok)
        MergeSummary(merges=1, learned_tokens=1, deepest=(256, 1))
    """
    native = tokenizer._native_merge_summary()
    if native is not None:
        # A rank file: each merge makes its own token, never a single byte, so every merge learns one.
        count, deepest, height_of = native
        return MergeSummary(count, count, (deepest, height_of))
    table = tokenizer._table_merge_summary()
    if table is not None:  # merges read natively (a tokenizer.json's): the same loop as below, natively
        return MergeSummary(*table)
    triples = tokenizer.merge_ids()
    size = 1 + max(tokenizer.vocab, default=0)  # every id a merge names is a token's
    is_byte = bytearray(size)
    token_id = tokenizer.token_id
    for b in range(256):
        i = token_id(bytes([b]))
        if i is not None and i < size:
            is_byte[i] = 1
    height = [0] * size
    made_before = bytearray(size)
    learned = 0
    best, best_id = 0, -1
    for left, right, made in triples:
        if made_before[made]:
            continue  # only the first merge that made a token counts (MergeIndex.rank_of)
        made_before[made] = 1
        learned += not is_byte[made]
        a, b = height[left], height[right]
        h = height[made] = 1 + (a if a > b else b)
        if h > best or (h == best and made < best_id):
            best, best_id = h, made
    return MergeSummary(len(triples), learned, None if best_id < 0 else (best_id, best))


def length_counts(tokens: list[bytes]) -> Counter[int]:
    """How many of ``tokens`` have each length (natively when the kernel is on: no int per token).

    Example:
        >>> length_counts([b"a", b"bc", b"d"])
        Counter({1: 2, 2: 1})
    """
    found = kernel.length_counts(tokens)
    return Counter(map(len, tokens)) if found is None else Counter(found)


def positions_at_least(tokens: list[bytes], shortest: int) -> list[int]:
    """The positions in ``tokens`` of those at least ``shortest`` bytes long, in order.

    Example:
        >>> positions_at_least([b"a", b"bc", b"d"], 2)
        [1]
    """
    found = kernel.positions_at_least(tokens, shortest)
    if found is None:
        return list(compress(range(len(tokens)), map(shortest.__le__, map(len, tokens))))
    return found
