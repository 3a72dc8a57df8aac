"""tiktoken's rule for merging a pre-token's bytes, in Python: the reference of rust/src/encode.rs's ranks.

A rank file (``.tiktoken``, Llama 3's ``tokenizer.model``) has no merges: tiktoken's ``byte_pair_merge``
starts from single bytes and repeatedly merges the two adjacent parts whose *concatenation* is the token of
lowest rank (leftmost on ties), whatever parts they are. A merges list (Hugging Face ``tokenizers``, GPT-2's
``merges.txt``) ranks only the pairs it lists. The two give the same ids on a vocabulary closed under BPE
(every token is made by a merge of two tokens BPE reaches first), which our own training gives, and can
differ on one that is not: Llama 3's file gives ``している日`` as ``[103792, 9080]`` by tiktoken's rule but
``[39926, 107991, 9080]`` by one merge per token.

Parts are ``str`` of one code point per byte (latin-1), so a concatenation is a ``str`` addition and a rank
is one dict lookup (``rank_of``: the token's latin-1 string -> its rank, the token id).

Example:
    >>> rank_of = {chr(b): b for b in range(256)} | {"ab": 256, "bcd": 257, "abcd": 258}
    >>> merge_parts(rank_of, "abcd")  # a|b, then neither ab|c nor c|d is a token: "abcd" is never reached
    ['ab', 'c', 'd']
"""

from __future__ import annotations

from collections.abc import Mapping

from ..limits import MAX_VOCAB_SIZE
from .merge_queue import Buckets, Heap

TYPE_CHECKING = False  # (typing is for type checkers only: see bpe_studio/__init__.py)
if TYPE_CHECKING:
    from .merge_queue import MergeQueue

#: "No such token": larger than any rank.
NO_RANK = MAX_VOCAB_SIZE * 64

# Above this many bytes a word is merged with a heap (O(n log n)) instead of rescanning its pair ranks after
# each merge (O(n^2) in C, faster for the short words of ordinary text); as the merges rule does.
_LONG_WORD = 256


def merge_parts(rank_of: Mapping[str, int], word: str, below: int = NO_RANK) -> list[str]:
    """tiktoken's ``byte_pair_merge`` on ``word`` (one character per byte) with the ranks below ``below``.

    Args:
        rank_of: Token (latin-1 string) -> rank.
        word: The bytes to merge, as a latin-1 string.
        below: Only tokens of a lower rank are made (a token's own rank, to derive its merge).

    Returns:
        The parts it ends with, in order.

    Example:
        >>> ranks = {"ab": 3, "bc": 1, "abc": 4}
        >>> merge_parts(ranks, "abc"), merge_parts(ranks, "abc", 4)
        (['abc'], ['a', 'bc'])
    """
    n = len(word)
    if n > _LONG_WORD:
        return _merge_parts_long(rank_of, word, below)
    get = rank_of.get
    parts = list(word)
    ranks = [get(word[i : i + 2], below) for i in range(n - 1)]
    while ranks:
        best = min(ranks)
        if best >= below:
            break
        i = ranks.index(best)  # the leftmost of the lowest rank
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
        # The pair at i is gone; the pairs on either side of the new part change.
        del ranks[i]
        if i:
            ranks[i - 1] = get(parts[i - 1] + parts[i], below)
        if i < len(ranks):
            ranks[i] = get(parts[i] + parts[i + 1], below)
    return parts


def _merge_parts_long(rank_of: Mapping[str, int], word: str, below: int) -> list[str]:
    """:func:`merge_parts` for a long word: a linked list of parts and a queue of (rank, position), by rank
    in buckets (linear), or by a heap for a vocabulary in which a longer token ranks before a part of it
    (:mod:`~bpe_studio.engine.encoding.merge_queue`).

    Positions never move, so the smallest position among the lowest-rank entries is the leftmost pair. An
    entry is used only if the pair at its position still has its rank: a rank is one token's, so that pair
    spans the same bytes, and merging it is the merge the entry stood for.

    Example:
        >>> _merge_parts_long({"aa": 0, "aaaa": 1}, "a" * 5, 9)
        ['aaaa', 'a']
    """
    parts = _merge_parts_long_with(rank_of, word, below, Buckets())
    if parts is None:
        parts = _merge_parts_long_with(rank_of, word, below, Heap())
        assert parts is not None  # a heap takes every order
    return [part for part in parts if part]


def _merge_parts_long_with(
    rank_of: Mapping[str, int], word: str, below: int, queue: MergeQueue
) -> list[str] | None:
    """:func:`_merge_parts_long`'s loop with a given queue: the parts ("" where merged away), or None when
    the queue refused an entry."""
    get = rank_of.get
    parts = list(word)
    n = len(parts)
    following = list(range(1, n + 1))
    following[-1] = -1
    previous = list(range(-1, n - 1))
    for i in range(n - 1):
        r = get(word[i : i + 2], below)
        if r < below and not queue.push(r, i):
            return None
    while (entry := queue.pop()) is not None:
        rank, i = entry
        j = following[i]
        if j < 0 or not parts[i] or get(parts[i] + parts[j], below) != rank:
            continue
        parts[i] += parts[j]
        parts[j] = ""
        k = following[j]
        following[i] = k
        if k >= 0:
            previous[k] = i
            r = get(parts[i] + parts[k], below)
            if r < below and not queue.push(r, i):
                return None
        h = previous[i]
        if h >= 0:
            r = get(parts[h] + parts[i], below)
            if r < below and not queue.push(r, h):
                return None
    return parts


def derive_merges(ranks: Mapping[int, bytes]) -> list[tuple[bytes, bytes]]:
    """One merge per token of a rank file: for each token by rank, the two parts tiktoken joins to make it.

    tiktoken's BPE on a token's own bytes, with only the lower-ranked tokens, ends with two parts: those
    are its merge. A token it cannot make (not two parts) gets no merge; tiktoken produces it only for a
    pre-token that is exactly that token. So GPT-2's 50,256 ranks give its 50,000 merges. The list is what
    the app and ``inspect`` show; encoding a rank file needs none of it (see the module's doc).

    Example:
        >>> derive_merges({0: b"a", 1: b"b", 2: b"c", 3: b"ab", 4: b"abc", 5: b"bc"})
        [(b'a', b'b'), (b'ab', b'c'), (b'b', b'c')]
    """
    rank_of = {token.decode("latin-1"): rank for rank, token in ranks.items()}
    merges: list[tuple[bytes, bytes]] = []
    for rank, token in sorted(ranks.items()):
        if len(token) > 1:
            parts = merge_parts(rank_of, token.decode("latin-1"), rank)
            if len(parts) == 2:
                merges.append((parts[0].encode("latin-1"), parts[1].encode("latin-1")))
    return merges
