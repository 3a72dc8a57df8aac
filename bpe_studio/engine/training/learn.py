"""Watch BPE learn: the tokens of a sample text under the first ``k`` merges of a run, kept up to date
merge by merge as a run makes them (or as a replay steps through them). Pure Python, Qt-free.

A text is cut into pre-tokens once (with the run's pattern and special tokens); each distinct pre-token is a
"word", a list of tokens (bytes) that starts as its single bytes. Applying a merge ``(a, b)`` rewrites
only the words that hold that pair, found through an index from pair to words, and lowers the token count
by how often the pair occurred: a merge that does not touch the text costs one dictionary look-up. So a
run's tens of thousands of merges follow along at no noticeable cost, and :meth:`MergeReplay.tokens`
gives the text's tokens at any point.

Applying a run's merges one after the other, each to every occurrence left to right, gives the same tokens
as encoding with the tokenizer of those merges (lowest rank first): ``tests/engine/training/test_learn.py``
checks
it against :func:`~bpe_studio.engine.encoding.analysis.cut_to_merges`.

Example:
    >>> replay = MergeReplay("abab ab", pattern="gpt2")
    >>> replay.token_count
    7
    >>> replay.apply([(b"a", b"b")])
    >>> replay.token_count, replay.tokens()
    (4, [b'ab', b'ab', b' ', b'ab'])
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from ..pretokenize.patterns import SUPERWORD_PATTERN
from ..pretokenize.split import Pretokenizer

T = TypeVar("T")

Pair = tuple[bytes, bytes]



def join_pair(word: Sequence[T], left: T, right: T, joined: T) -> list[T]:
    """``word`` with each occurrence of ``left`` then ``right`` replaced by ``joined``, left to right (a
    merge applied to one word: tokens as bytes here, ids when a tokenizer is extended).

    Example:
        >>> join_pair([b"a", b"a", b"a"], b"a", b"a", b"aa")
        [b'aa', b'a']
    """
    merged: list[T] = []
    i, n = 0, len(word)
    while i < n:
        if i + 1 < n and word[i] == left and word[i + 1] == right:
            merged.append(joined)
            i += 2
        else:
            merged.append(word[i])
            i += 1
    return merged

class MergeReplay:
    """The tokens of one text under a growing list of merges.

    Args:
        text: The sample text.
        pattern: The run's pre-tokenization pattern (a preset name or a regex).
        special_tokens: The run's special tokens: each is one token, never merged.

    Attributes:
        merges_applied: How many merges were applied (in the order given).
        token_count: How many tokens the text has now.
        history: ``(merges_applied, token_count)`` at the start and after every merge that changed the
            count (a step curve: the count stays the same between two entries).
    """

    def __init__(
        self,
        text: str,
        *,
        pattern: str,
        special_tokens: Sequence[str] = (),
        superword_after: int | None = None,
    ) -> None:
        self.text = text
        self._specials = tuple(special_tokens)
        #: Of a superword run, the merges made before its transition: once that many are applied, the text
        #: is cut again into superword chunks (``SUPERWORD_PATTERN``) and the merges so far applied to them.
        self.superword_after = superword_after
        self._applied: list[Pair] = []
        self._cut(Pretokenizer(pattern).findall)
        self.merges_applied = 0
        self.token_count = self._count()
        self.history: list[tuple[int, int]] = [(0, self.token_count)]
        if superword_after == 0:
            self._to_superwords()

    def _cut(self, pretokenize: Callable[[str], list[str]]) -> None:
        """Cut the text into words (one byte per token) with ``pretokenize``, special tokens kept whole."""
        text = self.text
        specials = sorted((s for s in self._specials if s), key=len, reverse=True)
        pieces = re.split(f"({'|'.join(map(re.escape, specials))})", text) if specials else [text]
        self._words: list[list[bytes]] = []
        self._weights: list[int] = []  # how often each word occurs in the text
        word_index: dict[str, int] = {}
        #: The text as word indexes, or special tokens (as bytes) where they stand.
        self._order: list[int | bytes] = []
        for number, piece in enumerate(pieces):
            if number % 2:  # a special token (re.split puts the separators at the odd places)
                self._order.append(piece.encode("utf-8"))
                continue
            for pretoken in pretokenize(piece):
                index = word_index.get(pretoken)
                if index is None:
                    index = word_index[pretoken] = len(self._words)
                    data = pretoken.encode("utf-8", "replace")
                    self._words.append([data[i : i + 1] for i in range(len(data))])
                    self._weights.append(0)
                self._weights[index] += 1
                self._order.append(index)
        #: pair -> the words that hold it (a word may be listed after it lost the pair: checked on use).
        self._where: dict[Pair, set[int]] = {}
        for index, word in enumerate(self._words):
            self._index_word(index, word)

    def _count(self) -> int:
        return sum(len(w) * n for w, n in zip(self._words, self._weights, strict=True)) + sum(
            1 for item in self._order if isinstance(item, bytes)
        )

    def _to_superwords(self) -> None:
        """The transition of a superword run: cut the text into superword chunks and apply the merges so
        far to each whole chunk, one after the other (as stage 2 of training encodes its chunks)."""
        self._cut(Pretokenizer(SUPERWORD_PATTERN).findall)
        applied, self._applied = self._applied, []
        self._apply_all(applied)
        self._applied = applied
        count = self._count()
        if count != self.token_count:  # a stage-1 merge may join tokens across the old pre-tokens
            self.token_count = count
            self.history.append((self.merges_applied, count))

    def _index_word(self, index: int, word: list[bytes]) -> None:
        where = self._where
        for pair in itertools.pairwise(word):
            holders = where.get(pair)
            if holders is None:
                where[pair] = {index}
            else:
                holders.add(index)

    def apply(self, pairs: Iterable[Pair]) -> None:
        """Apply merges, in order, after those applied so far."""
        for pair in pairs:
            if self.merges_applied == self.superword_after and self.merges_applied:
                self._to_superwords()
            self.merges_applied += 1
            self._applied.append(pair)
            removed = self._apply_all([pair])
            if removed:
                self.token_count -= removed
                self.history.append((self.merges_applied, self.token_count))

    def _apply_all(self, pairs: Iterable[Pair]) -> int:
        """Apply ``pairs`` to the words, in order; returns how many tokens fewer the text has."""
        where, words, weights = self._where, self._words, self._weights
        total = 0
        for pair in pairs:
            holders = where.pop(pair, None)
            if not holders:
                continue
            left, right = pair
            joined = left + right
            removed = 0
            for index in holders:
                word = words[index]
                merged = join_pair(word, left, right, joined)
                n = len(word)
                if len(merged) == n:  # listed, but the pair had gone from this word
                    continue
                removed += (n - len(merged)) * weights[index]
                words[index] = merged
                self._index_word(index, merged)
            total += removed
        return total

    def tokens(self) -> list[bytes]:
        """The text's tokens now, in order (special tokens as their UTF-8 bytes)."""
        words = self._words
        out: list[bytes] = []
        for item in self._order:
            if isinstance(item, bytes):
                out.append(item)
            else:
                out.extend(words[item])
        return out


def replay_to(
    text: str,
    merges: Sequence[Pair],
    k: int,
    *,
    pattern: str,
    special_tokens: Sequence[str] = (),
    superword_after: int | None = None,
) -> MergeReplay:
    """A :class:`MergeReplay` of ``text`` with the first ``k`` of ``merges`` applied (e.g. to step back).

    Example:
        >>> replay_to("abab", [(b"a", b"b"), (b"ab", b"ab")], 1, pattern="gpt2").tokens()
        [b'ab', b'ab']
    """
    replay = MergeReplay(
        text, pattern=pattern, special_tokens=special_tokens, superword_after=superword_after
    )
    replay.apply(merges[: max(0, k)])
    return replay


def is_superword(token: bytes) -> bool:
    r"""Whether a token holds whitespace after something else: it spans a space (or line end) between
    words, as a superword run's merges after the transition make (the ordinary patterns never let a
    pre-token go on after its whitespace).

    Example:
        >>> is_superword(b" of the"), is_superword(b" the"), is_superword(b"  "), is_superword(b"a\n")
        (True, False, False, True)
    """
    body = token.lstrip(_WHITESPACE)
    return any(byte in _WHITESPACE for byte in body)


_WHITESPACE = b" \t\n\r\x0b\x0c"


def sample_passage(
    data: str, *, special_tokens: Sequence[str] = (), length: int = 1200, pick: int = 0
) -> str:
    """A passage of a corpus to watch: one of its documents (the parts between special tokens) that has at
    least a few lines, cut to about ``length`` characters at a line end. ``pick`` chooses among them.

    Example:
        >>> sample_passage("tiny<s>" + "A line of text.\\n" * 40, special_tokens=["<s>"], length=40)
        'A line of text.\\nA line of text.\\n'
    """
    specials = [s for s in special_tokens if s]
    documents = re.split("|".join(map(re.escape, specials)), data) if specials else [data]
    documents = [d.strip("\n") for d in documents if d.strip()]
    if not documents:
        return ""
    long_enough = [d for d in documents if len(d) >= min(length // 2, 400)] or documents
    document = long_enough[pick % len(long_enough)]
    if len(document) <= length:
        return document
    cut = document.rfind("\n", 0, length)
    return document[: cut + 1] if cut > length // 3 else document[:length]


__all__ = ["MergeReplay", "Pair", "is_superword", "replay_to", "sample_passage"]
