"""Questions about trained tokenizers, answered once for the app and the CLI. Pure Python, Qt-free.

* :class:`MergeIndex`: a tokenizer's merges by token id (which merge made a token, from which two tokens,
  how many new tokens the first ``k`` merges make), and :meth:`MergeIndex.merge_tree` of a token.
* :func:`cut_to_merges`: the tokenizer of the first ``k`` merges: what a training run stopped after ``k``
  merges gives.
* :func:`token_count_curve`: how many tokens a text has with *every* cut at once, in one pass of BPE.
* :func:`compare_merges`: where two merge lists first differ; :func:`shared_tokens`: how many tokens of A
  are also tokens of B at the same place in a text; :func:`compare`: both, with each side's counts;
  :func:`cut_difference`: the stretches of a text that two tokenizers cut differently.
* :func:`compression`: bytes per token, characters per token and tokens per word of an encoded text.

Example:
    >>> from bpe_studio.engine import Tokenizer
    >>> tok = Tokenizer({i: bytes([i]) for i in range(256)} | {256: b"ab"}, [(b"a", b"b")])
    >>> cut_to_merges(tok, 0).encode("ab"), tok.encode("ab")
    ([97, 98], [256])
"""

from __future__ import annotations

import bisect
import heapq
import re
import threading
import unicodedata
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from operator import itemgetter

from ..pretokenize.split import Pretokenizer
from .pieces import PieceModel
from .summary import (  # (re-exported: their own module, for inspect)
    MergeSummary,
    length_counts,
    merge_summary,
    positions_at_least,
)
from .tokenizer import AllowedSpecial, DisallowedSpecial, Tokenizer

Check = Callable[[], None]
"""Called now and then by long computations; raises to stop them (e.g. a worker's cancel check)."""


def _no_check() -> None:
    return None


def _plain(text: str) -> str:
    return text


def plain_token(token: bytes) -> str:
    """A token spelled for plain text: its bytes as a Python string literal, undecodable bytes escaped.

    Example:
        >>> print(plain_token(b" the"), plain_token(b"\\xe2\\x80"))
        ' the' '\\\\xe2\\\\x80'
    """
    return repr(token.decode("utf-8", errors="backslashreplace"))


# ----------------------------------------------------------------------------------------------------------
# Merges by token id, merge trees and cuts
# ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MergeNode:
    """A node of a merge tree: a token, and the merge (rank and two tokens) that made it, if any.

    Example:
        >>> MergeNode(256, 0, MergeNode(97, None, None, None), MergeNode(98, None, None, None)).leaves()
        [97, 98]
    """

    token_id: int
    rank: int | None
    left: MergeNode | None
    right: MergeNode | None

    def leaves(self) -> list[int]:
        """The ids at the bottom of the tree, left to right."""
        if self.left is None or self.right is None:
            return [self.token_id]
        return self.left.leaves() + self.right.leaves()

    def height(self) -> int:
        """0 for a leaf, else one more than the taller child."""
        if self.left is None or self.right is None:
            return 0
        return 1 + max(self.left.height(), self.right.height())


class MergeIndex:
    """A tokenizer's merges indexed by token id.

    Attributes:
        byte_ids: Id of each single byte 0-255; -1 for a byte the vocabulary lacks (only bytes UTF-8 never
            uses may be missing, see :attr:`Tokenizer.missing_bytes`).
        left, right, result: Per merge rank, the ids of its two tokens and of the token it makes.
        creates: Per merge rank, whether it makes a new token (False for the rare merge whose bytes some
            earlier merge already made).
        rank_of: Token id -> rank of the first merge that made it.
        counts: Per merge rank, how often its pair occurred when it was merged, when known.
        special_ids: The special tokens' ids.
        new_before: ``new_before[k]`` is how many new tokens the first ``k`` merges make (k = 0..merges).

    Example:
        >>> tok = Tokenizer({i: bytes([i]) for i in range(256)} | {256: b"ab"}, [(b"a", b"b")])
        >>> MergeIndex(tok).parents(256)
        (0, 97, 98)
    """

    def __init__(self, tokenizer: Tokenizer, counts: Sequence[int] | None = None) -> None:
        token_id = tokenizer.token_id
        missing = set(tokenizer.missing_bytes)
        self.byte_ids = [-1 if b in missing else _required_id(token_id(bytes([b]))) for b in range(256)]
        self._byte_count = 256 - len(missing)
        model = tokenizer.piece_model
        if model is not None:
            # Every cut of a SentencePiece-style model keeps all but the pieces merges make (cut_to_merges).
            dropped = {i for piece, i in model.pieces.items() if not model.always_kept(piece)}
            specials = set(tokenizer.special_tokens.values())
            self._byte_count = tokenizer.vocab_size - len(specials) - len(dropped - specials)
        # The merges by id, as the tokenizer holds them (a rank file's derived natively): no bytes looked up.
        triples = tokenizer.merge_ids()
        self.left: list[int] = list(map(itemgetter(0), triples))
        self.right: list[int] = list(map(itemgetter(1), triples))
        self.result: list[int] = list(map(itemgetter(2), triples))
        # The first rank that made each token: later ranks written first, so the first one is written last.
        n = len(triples)
        self.rank_of: dict[int, int] = dict(zip(reversed(self.result), range(n - 1, -1, -1), strict=True))
        bytes_made = {i for i in self.byte_ids if i >= 0}
        rank_of = self.rank_of
        self.creates: list[bool] = [
            rank_of[m] == r and m not in bytes_made for r, m in enumerate(self.result)
        ]
        self.counts = list(counts) if counts is not None and len(counts) == n else None
        self.special_ids = frozenset(tokenizer.special_tokens.values())
        self._vocab_size = tokenizer.vocab_size
        self.new_before: list[int] = (
            list(range(n + 1))  # every merge makes a new token (a rank file's always do)
            if len(rank_of) == n and not bytes_made.intersection(rank_of)
            else list(accumulate(map(int, self.creates), initial=0))
        )
        self._pair_ranks: dict[tuple[int, int], int] | None = None
        self._lock = threading.Lock()

    @property
    def merge_count(self) -> int:
        """The number of merges."""
        return len(self.result)

    def vocab_size_at(self, merges: int) -> int:
        """The vocab size of the tokenizer cut to its first ``merges`` merges (special tokens included)."""
        if merges >= self.merge_count:
            return self._vocab_size
        return self._byte_count + self.new_before[max(merges, 0)] + len(self.special_ids)

    def vocab_sizes(self) -> list[int]:
        """The vocab size at every cut 0..merge_count."""
        sizes = [self._byte_count + n + len(self.special_ids) for n in self.new_before]
        sizes[-1] = self._vocab_size
        return sizes

    def merges_for_vocab_size(self, vocab_size: int) -> int:
        """The fewest merges whose cut has at least ``vocab_size`` tokens (all merges if none has)."""
        return min(bisect.bisect_left(self.vocab_sizes(), vocab_size), self.merge_count)

    def pair_ranks(self) -> dict[tuple[int, int], int]:
        """(left id, right id) -> rank; a pair listed twice keeps its first rank, as in the engine."""
        with self._lock:
            if self._pair_ranks is None:
                ranks: dict[tuple[int, int], int] = {}
                for rank, pair in enumerate(zip(self.left, self.right, strict=True)):
                    ranks.setdefault(pair, rank)
                self._pair_ranks = ranks
            return self._pair_ranks

    def parents(self, token_id: int) -> tuple[int, int, int] | None:
        """(rank, left id, right id) of the merge that made a token; None for single bytes and specials."""
        rank = self.rank_of.get(token_id)
        if rank is None:
            return None
        return rank, self.left[rank], self.right[rank]

    def count_of(self, token_id: int) -> int | None:
        """How often the pair that made a token occurred when it was merged, when known."""
        rank = self.rank_of.get(token_id)
        if rank is None or self.counts is None:
            return None
        return self.counts[rank]

    def merge_tree(self, token_id: int) -> MergeNode:
        """The merges that build a token, down to single bytes (its leaves spell the token's bytes)."""
        found = self.parents(token_id)
        if found is None:
            return MergeNode(token_id, None, None, None)
        rank, left, right = found
        return MergeNode(token_id, rank, self.merge_tree(left), self.merge_tree(right))

    def heights(self) -> dict[int, int]:
        """Token id -> height of its merge tree, for every token a merge made, in one pass over the merges.

        Example:
            >>> tok = Tokenizer({i: bytes([i]) for i in range(256)} | {256: b"ab"}, [(b"a", b"b")])
            >>> MergeIndex(tok).heights()
            {256: 1}
        """
        height = self._height_list()
        return {made: height[made] for made in self.rank_of}

    def deepest(self) -> tuple[int, int] | None:
        """``(id, height)`` of the token with the tallest merge tree (the smallest id of those), or None
        when there are no merges; what :meth:`heights` would give, without building its dict.

        Example:
            >>> tok = Tokenizer({i: bytes([i]) for i in range(256)} | {256: b"ab"}, [(b"a", b"b")])
            >>> MergeIndex(tok).deepest()
            (256, 1)
        """
        if not self.rank_of:
            return None
        height = self._height_list()
        top = max(height[made] for made in self.rank_of)
        return min(made for made in self.rank_of if height[made] == top), top

    def _height_list(self) -> list[int]:
        """Height by id (0 for tokens no merge made), in one pass over the merges in rank order, each token
        at the first merge that made it: its two tokens were made by earlier merges or are bytes."""
        height = [0] * (max(self.result, default=0) + 1)
        # Ids of tokens no merge makes (a byte, say) may be larger than every merged id: height 0.
        size = len(height)
        rank_of = self.rank_of
        for rank, (made, left, right) in enumerate(zip(self.result, self.left, self.right, strict=True)):
            if rank_of[made] == rank:
                a = height[left] if left < size else 0
                b = height[right] if right < size else 0
                height[made] = 1 + (a if a > b else b)
        return height


def _required_id(token_id: int | None) -> int:
    if token_id is None:  # pragma: no cover - the Tokenizer checks that every merge's tokens exist
        raise ValueError("a merge uses a token that is not in the vocabulary")
    return token_id


def merge_tree(tokenizer: Tokenizer, token_id: int) -> MergeNode:
    """The merge tree of one token (build a :class:`MergeIndex` once instead when asking for many).

    Example:
        >>> tok = Tokenizer({i: bytes([i]) for i in range(256)} | {256: b"ab"}, [(b"a", b"b")])
        >>> merge_tree(tok, 256).leaves()
        [97, 98]
    """
    return MergeIndex(tokenizer).merge_tree(token_id)


def cut_to_merges(tokenizer: Tokenizer, merges: int, *, index: MergeIndex | None = None) -> Tokenizer:
    """The tokenizer of the first ``merges`` merges (``tokenizer`` itself for all of them or more).

    The vocabulary is the single bytes and the tokens those merges make, with their ids, then the
    special tokens numbered right after the largest of those ids. Merges form a sequence, so for a
    tokenizer trained by the engine this equals training the same corpus to
    ``index.vocab_size_at(merges)`` tokens whenever the last kept merge made a new token.

    Example:
        >>> tok = Tokenizer({i: bytes([i]) for i in range(256)} | {256: b"ab"}, [(b"a", b"b")], ["<s>"])
        >>> cut = cut_to_merges(tok, 0)
        >>> cut.vocab_size, dict(cut.special_tokens)
        (257, {'<s>': 256})
    """
    index = index if index is not None else MergeIndex(tokenizer)
    if merges >= index.merge_count:
        return tokenizer
    merges = max(merges, 0)
    if tokenizer.piece_model is not None:
        return _cut_pieces(tokenizer, merges)
    vocab = {i: tokenizer.token_bytes(i) for i in index.byte_ids if i >= 0}
    for rank in range(merges):
        made = index.result[rank]
        vocab[made] = tokenizer.token_bytes(made)
    first = max(vocab) + 1
    ordered = sorted(tokenizer.special_tokens.items(), key=lambda item: item[1])
    specials = {token: first + n for n, (token, _) in enumerate(ordered)}
    return Tokenizer(
        vocab,
        tokenizer.merges[:merges],
        specials,
        pattern=tokenizer.pattern,
        ignore_merges=tokenizer.ignore_merges,
        normalizer=tokenizer.normalizer,
        pipeline=tokenizer.pipeline,
        decoder=tokenizer.hf_decoder,
    )


def _cut_pieces(tokenizer: Tokenizer, merges: int) -> Tokenizer:
    """:func:`cut_to_merges` of a SentencePiece-style tokenizer: its model's :meth:`PieceModel.cut`, the
    pieces it drops left out of the vocabulary, every other id (bytes, control pieces, specials) kept."""
    model = tokenizer.piece_model
    assert model is not None  # (the caller asks)
    cut = model.cut(merges)
    dropped = set(model.pieces.values()) - set(cut.pieces.values()) - set(tokenizer.special_tokens.values())
    vocab = {i: data for i, data in tokenizer.vocab.items() if i not in dropped}
    present = set(vocab.values())
    return Tokenizer(
        vocab,
        # (A merge whose part only a later merge makes, which a .model allows, shows in no cut's views.)
        [pair for pair in tokenizer.merges[:merges] if pair[0] in present and pair[1] in present],
        dict(tokenizer.special_tokens),
        pattern=tokenizer.pattern,
        template=tokenizer.template,
        piece_model=cut,
    )


# ----------------------------------------------------------------------------------------------------------
# Token count at every vocab size
# ----------------------------------------------------------------------------------------------------------

_NO_RANK = 1 << 62
# (``re``: a class of code points matches alike, and importing ``regex`` is 7 ms of ``bpe-studio inspect``.)
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class Curve:
    """The number of tokens of a text at every cut of a tokenizer.

    Attributes:
        vocab_sizes: The vocab size of the cut after ``k`` merges, for ``k`` = 0..merge count.
        counts: The number of tokens of the text with that cut.
    """

    vocab_sizes: list[int]
    counts: list[int]


def _applied_maxima_short(
    ids: list[int], ranks: Mapping[tuple[int, int], int], made: Sequence[int]
) -> list[int]:
    """BPE on one pre-token (as the engine does it); the running maximum of the ranks applied, per step."""
    get = ranks.get
    pair_ranks = [get((ids[i], ids[i + 1]), _NO_RANK) for i in range(len(ids) - 1)]
    out: list[int] = []
    top = -1
    while pair_ranks:
        best = min(pair_ranks)
        if best == _NO_RANK:
            break
        i = pair_ranks.index(best)
        ids[i : i + 2] = [made[best]]
        del pair_ranks[i]
        if i:
            pair_ranks[i - 1] = get((ids[i - 1], ids[i]), _NO_RANK)
        if i < len(pair_ranks):
            pair_ranks[i] = get((ids[i], ids[i + 1]), _NO_RANK)
        top = max(top, best)
        out.append(top)
    return out


def _applied_maxima_long(
    ids: list[int], ranks: Mapping[tuple[int, int], int], made: Sequence[int]
) -> list[int]:
    """The same as :func:`_applied_maxima_short` with a heap, for long pre-tokens (as the engine does)."""
    get = ranks.get
    n = len(ids)
    tokens: list[int | None] = list(ids)
    following = list(range(1, n + 1))
    following[-1] = -1
    previous = list(range(-1, n - 1))
    heap = [(r, i) for i in range(n - 1) if (r := get((ids[i], ids[i + 1]))) is not None]
    heapq.heapify(heap)
    out: list[int] = []
    top = -1
    while heap:
        rank, i = heapq.heappop(heap)
        j = following[i]
        left = tokens[i]
        if j < 0 or left is None:
            continue
        right = tokens[j]
        if right is None or get((left, right)) != rank:
            continue
        tokens[i] = made[rank]
        tokens[j] = None
        top = max(top, rank)
        out.append(top)
        k = following[j]
        following[i] = k
        if k >= 0:
            previous[k] = i
            after = tokens[k]
            if after is not None and (r := get((made[rank], after))) is not None:
                heapq.heappush(heap, (r, i))
        h = previous[i]
        if h >= 0:
            before = tokens[h]
            if before is not None and (r := get((before, made[rank]))) is not None:
                heapq.heappush(heap, (r, h))
    return out


def token_count_curve(
    tokenizer: Tokenizer,
    text: str,
    *,
    allowed_special: AllowedSpecial = "all",
    disallowed_special: DisallowedSpecial = "all",
    index: MergeIndex | None = None,
    check: Check = _no_check,
) -> Curve:
    """How many tokens ``text`` has with each cut of the tokenizer (0 merges to all of them), in one pass.

    BPE on a pre-token applies, at each step, the present pair of lowest rank. With only the first ``k``
    merges, the same steps happen until the first step whose rank is ``k`` or more, and then it stops. So
    if ``m_j`` is the largest rank among the first ``j`` steps of the full run, the cut applies exactly the
    steps with ``m_j < k``, and the token count at cut ``k`` is the byte count minus the number of steps
    with ``m_j < k``: a histogram of ``m_j`` over all pre-tokens gives every cut at once. This holds for any
    merge list; special tokens count one token each at every cut. ``allowed_special`` and
    ``disallowed_special`` mean (and default to) what they do for :meth:`Tokenizer.encode`. The tokenizer's
    NFC normalizer applies as in ``encode``; with ``ignore_merges``, a pre-token that is a token of the cut
    is one token. A tokenizer with a Hugging Face :attr:`~Tokenizer.pipeline` cuts the text with it.

    Raises:
        DisallowedSpecialTokenError: The text holds a disallowed special token.

    Example:
        >>> tok = Tokenizer({i: bytes([i]) for i in range(256)} | {256: b"ab"}, [(b"a", b"b")])
        >>> token_count_curve(tok, "abab").counts
        [4, 2]
    """
    index = index if index is not None else MergeIndex(tokenizer)
    sizes = index.vocab_sizes()
    n = index.merge_count
    # The tokenizer's own rules for which special tokens count, so the curve always matches encode().
    allowed, disallowed = tokenizer._resolve_specials(allowed_special, disallowed_special)
    tokenizer._check_disallowed(text, disallowed)
    text = _SURROGATE.sub("\ufffd", text)
    pieces: list[str] = [text]
    matcher, _ = tokenizer._special_matcher(allowed)
    if matcher is not None:
        pieces = matcher.split(text)
    special_count = len(pieces) - 1
    if tokenizer.piece_model is not None:
        return Curve(sizes, _piece_counts(tokenizer, index, pieces, check))
    found_pieces: Counter[bytes] = Counter()
    pipeline = tokenizer.pipeline
    if pipeline is not None:
        # The tokenizer's own normalizer and pre-tokenizer (its pattern is only a placeholder then), each
        # text between special tokens as encode() cuts it: only the first starts the whole text.
        for i, piece in enumerate(pieces):
            found_pieces.update(p.data for p in pipeline.pieces(piece, first=i == 0))
    else:
        if tokenizer.normalizer is not None:  # as encode() does: the text between special tokens
            pieces = [unicodedata.normalize("NFC", piece) for piece in pieces]
        split = Pretokenizer(tokenizer.pattern).findall
        for piece in pieces:
            found_pieces.update(pre.encode("utf-8") for pre in split(piece))
    check()
    ranks = index.pair_ranks()
    made = index.result
    byte_ids = index.byte_ids
    hist = [0] * (n + 1)
    total = special_count
    whole_at_full = 0  # steps saved, with every merge, by pre-tokens that are tokens made by no merge
    for done, (data, times) in enumerate(found_pieces.items()):
        total += len(data) * times
        ids = [byte_ids[b] for b in data]
        if len(ids) < 2:
            continue
        maxima = (
            _applied_maxima_long(ids, ranks, made)
            if len(ids) > 256
            else _applied_maxima_short(ids, ranks, made)
        )
        whole = _whole_token(tokenizer, index, data)
        if whole is None:
            for top in maxima:
                hist[top] += times
            continue
        # ignore_merges: from the cut that holds the token (rank r made it: every cut k > r), the pre-token
        # is that one token, i.e. len - 1 steps; below it, BPE as usual (only steps of rank < r can count).
        rank = index.rank_of.get(whole)
        steps = len(data) - 1  # (``ids`` was merged in place above)
        kept = [top for top in maxima if rank is None or top < rank]
        for top in kept:
            hist[top] += times
        if rank is None:  # in the vocabulary but made by no merge: whole only in the full tokenizer
            whole_at_full += (steps - len(kept)) * times
        else:
            hist[rank] += (steps - len(kept)) * times
        if done % 512 == 511:
            check()
    counts = [total - below for below in accumulate(hist[:n], initial=0)]
    counts[-1] -= whole_at_full
    return Curve(sizes, counts)


def _piece_counts(tokenizer: Tokenizer, index: MergeIndex, texts: list[str], check: Check) -> list[int]:
    """:func:`token_count_curve`'s counts for a SentencePiece-style tokenizer (``texts``: the text between
    special tokens, each counted one token).

    The same argument as for bytes, on the model's symbols: cut ``k`` keeps the pieces of the first ``k``
    :meth:`PieceModel.piece_merges` and every pair that makes one, so when those pairs come first in rank
    order (as in a ``.model`` with distinct scores, and a ``tokenizer.json`` that lists a piece's pairs
    together), its BPE is the full run's steps up to the first that makes a later piece. A step saves the
    tokens its two symbols cost (a character no piece has costs its UTF-8 bytes) less one. Other models
    (pairs out of that order, pieces of equal score that a cut separates) are counted cut by cut.
    """
    model = tokenizer.piece_model
    assert model is not None  # (the caller asks)
    n = index.merge_count
    order = {left + right: k for k, (left, right) in enumerate(model.piece_merges())}
    found: Counter[str] = Counter()
    for i, text in enumerate(texts):
        if not text:
            continue
        if model.pipeline is None:
            found[text] += 1
        else:
            found.update(p.text for p in model.pipeline.pieces(text, first=i == 0))
    found.pop("", None)
    check()
    specials = len(texts) - 1
    if not _in_rank_order(model, order, n):
        counts = []
        for k in range(n):
            cut = model.cut(k)
            counts.append(specials + sum(len(cut.encode(p)) * times for p, times in found.items()))
            check()
        counts.append(specials + sum(len(model.encode(p)) * times for p, times in found.items()))
        return counts

    def cost(symbol: str) -> int:
        return 1 if symbol in model.pieces else len(symbol.encode("utf-8", errors="surrogatepass"))

    hist = [0] * (n + 1)
    total = specials
    for done, (piece, times) in enumerate(found.items()):
        # With ignore_merges, a piece that is a token is one token from the cut that holds it on.
        whole = model.ignore_merges and piece in model.pieces
        if whole and model.always_kept(piece):
            total += times
            continue
        start, steps = model.steps(piece)
        tokens = sum(map(cost, start))
        total += tokens * times
        limit = order.get(piece, n) if whole else n + 1
        top = -1
        for left, right in steps:
            top = max(top, order.get(left + right, n))
            if top >= limit:
                break
            saved = cost(left) + cost(right) - 1
            hist[top] += saved * times
            tokens -= saved
        if whole:
            hist[limit] += (tokens - 1) * times
        if done % 512 == 511:
            check()
    counts = [total - below for below in accumulate(hist[:n], initial=0)]
    counts[-1] -= hist[n]
    return counts


def _in_rank_order(model: PieceModel, order: Mapping[str, int], n: int) -> bool:
    """Whether each cut of ``model`` keeps exactly the pairs of lowest rank (see :func:`_piece_counts`)."""
    last, made_at = -1, dict[int, int]()
    for (left, right), rank in sorted(model.ranks.items(), key=lambda item: item[1]):
        at = order.get(left + right, n)
        if at < last or made_at.setdefault(rank, at) != at:
            return False
        last = at
    return True


def _whole_token(tokenizer: Tokenizer, index: MergeIndex, data: bytes) -> int | None:
    """With ``ignore_merges``: the ordinary token whose bytes are ``data`` (None without the option).

    Example:
        >>> vocab = {i: bytes([i]) for i in range(256)} | {256: b"ab"}
        >>> tok = Tokenizer(vocab, [(b"a", b"b")], ignore_merges=True)
        >>> _whole_token(tok, MergeIndex(tok), b"ab")
        256
    """
    if not tokenizer.ignore_merges:
        return None
    found = tokenizer.token_id(data)
    return None if found is None or found in index.special_ids else found


# ----------------------------------------------------------------------------------------------------------
# Comparing two tokenizers
# ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MergeDifference:
    """How two merge lists compare.

    Attributes:
        shared: How many merges the two lists start with in common.
        first: Rank of the first merge where they differ (None when one list is a prefix of the other).
        a_merge, b_merge: The two merges at that rank (None past the end of a list).
        a_total, b_total: The lengths of the lists.
    """

    shared: int
    first: int | None
    a_merge: tuple[bytes, bytes] | None
    b_merge: tuple[bytes, bytes] | None
    a_total: int
    b_total: int

    def describe(
        self, *, token: Callable[[bytes], str] = plain_token, strong: Callable[[str], str] = _plain
    ) -> str:
        """A sentence saying how the lists compare; ``token`` spells a token, ``strong`` marks a number.

        Example:
            >>> MergeDifference(3, None, None, None, 3, 3).describe()
            'The merge lists are identical (3 merges).'
            >>> first = MergeDifference(0, 0, (b"a", b"b"), (b"b", b"c"), 3, 3)
            >>> print(first.describe())  # doctest: +ELLIPSIS
            The merge lists differ from the start. First difference at merge 1: A merges 'a' + 'b', ...
        """

        from ..humanize import merge_number  # (only for this sentence: it imports the events, 3 ms)

        def merge(pair: tuple[bytes, bytes] | None) -> str:
            if pair is None:
                return "nothing (its list has ended)"
            return f"{token(pair[0])} + {token(pair[1])}"

        # No "agree on the first 0 merges" (issue 21): lists that share nothing, or one merge, say so.
        if self.first is not None and self.shared == 0:
            return (
                f"The merge lists differ from the start. First difference at merge "
                f"{strong(f'{merge_number(self.first):,}')}: A merges {merge(self.a_merge)}, "
                f"B merges {merge(self.b_merge)}."
            )
        if self.first is not None and self.shared == 1:
            return (
                f"The merge lists agree on the first merge only. First difference at merge "
                f"{strong(f'{merge_number(self.first):,}')}: A merges {merge(self.a_merge)}, "
                f"B merges {merge(self.b_merge)}."
            )
        if self.first is not None:
            return (
                f"The merge lists agree on the first {self.shared:,} merges. First difference at merge "
                f"{strong(f'{merge_number(self.first):,}')}: A merges {merge(self.a_merge)}, "
                f"B merges {merge(self.b_merge)}."
            )
        if self.a_total == self.b_total:
            return f"The merge lists are identical ({self.a_total:,} merges)."
        longer, shorter = ("A", "B") if self.a_total > self.b_total else ("B", "A")
        extra = abs(self.a_total - self.b_total)
        if self.shared == 0:  # not "A's 0 merges are the first 0 of B's"
            return (
                f"{shorter} has no merges; {longer} has {extra:,} "
                f"(first: {merge(self.a_merge if longer == 'A' else self.b_merge)})."
            )
        if self.shared == 1:
            return (
                f"{shorter}'s one merge is {longer}'s first; {longer} has {extra:,} more "
                f"(first: {merge(self.a_merge if longer == 'A' else self.b_merge)})."
            )
        return (
            f"{shorter}'s {self.shared:,} merges are the first {self.shared:,} of {longer}'s; {longer} has "
            f"{extra:,} more (first: {merge(self.a_merge if longer == 'A' else self.b_merge)})."
        )


def compare_merges(a: Tokenizer, b: Tokenizer) -> MergeDifference:
    """Where two tokenizers' merge lists first differ.

    Example:
        >>> base = {i: bytes([i]) for i in range(256)}
        >>> one = Tokenizer(base | {256: b"ab"}, [(b"a", b"b")])
        >>> two = Tokenizer(base | {256: b"bc"}, [(b"b", b"c")])
        >>> compare_merges(one, two).first
        0
    """
    ma, mb = a.merges, b.merges
    shared = 0
    for left, right in zip(ma, mb, strict=False):
        if left != right:
            break
        shared += 1
    first: int | None = shared if shared < min(len(ma), len(mb)) else None
    return MergeDifference(
        shared=shared,
        first=first,
        a_merge=ma[shared] if shared < len(ma) else None,
        b_merge=mb[shared] if shared < len(mb) else None,
        a_total=len(ma),
        b_total=len(mb),
    )


def token_byte_spans(tokenizer: Tokenizer, ids: Sequence[int]) -> list[tuple[int, int]]:
    """Where each token's bytes lie in the UTF-8 bytes of the encoded text: (start, end) per token.

    Bytes, not characters: a token that holds part of a character (one of the three tokens of an emoji
    in a small vocabulary) still has a span of its own.

    Example:
        >>> tok = Tokenizer({i: bytes([i]) for i in range(256)} | {256: b"ab"}, [(b"a", b"b")])
        >>> token_byte_spans(tok, tok.encode("abc")), token_byte_spans(tok, [])
        ([(0, 2), (2, 3)], [])
    """
    token_bytes = tokenizer.token_bytes
    ends = list(accumulate(len(token_bytes(i)) for i in ids))
    return list(zip([0, *ends], ends, strict=False))  # each token starts where the one before ends


def shared_tokens(a: Tokenizer, a_ids: Sequence[int], b: Tokenizer, b_ids: Sequence[int]) -> int:
    """How many tokens of A's encoding of a text cover exactly the same bytes as a token of B's.

    Both id lists must encode the same text. Identical tokenizers share every token, including those that
    hold only part of a character.

    Example:
        >>> tok = Tokenizer({i: bytes([i]) for i in range(256)} | {256: b"ab"}, [(b"a", b"b")])
        >>> shared_tokens(tok, tok.encode("ab🙃"), tok, tok.encode("ab🙃"))
        5
    """
    # One walk along both encodings (no set of spans: a text of many megabytes has millions of tokens).
    a_size = {i: len(data) for i, data in a.vocab.items()}
    b_size = {i: len(data) for i, data in b.vocab.items()}
    shared = 0
    a_start = b_start = j = 0  # b_start: where B's token j starts
    for token in a_ids:
        a_end = a_start + a_size[token]
        while j < len(b_ids) and b_start < a_start:
            b_start += b_size[b_ids[j]]
            j += 1
        if b_start == a_start and j < len(b_ids) and b_start + b_size[b_ids[j]] == a_end:
            shared += 1
        a_start = a_end
    return shared


@dataclass(frozen=True)
class CutDifference:
    """Where two encodings of one text cut it differently.

    Attributes:
        spans: Byte ranges ``(start, end)`` of the text's UTF-8, in order: each runs from a boundary both
            encodings have to the next one, and at least one encoding has a token boundary inside it (the
            other may have one token there). Stretches that both cut alike are not listed.
        a_tokens: A's tokens inside the spans: those that are not also a token of B
            (``len(a_ids) - shared_tokens(...)``).
        b_tokens: B's tokens inside the spans.
    """

    spans: tuple[tuple[int, int], ...]
    a_tokens: int
    b_tokens: int


def cut_difference_of_sizes(a_sizes: Sequence[int], b_sizes: Sequence[int]) -> CutDifference:
    """:func:`cut_difference` for two encodings given as their tokens' byte lengths.

    One walk along both: from a boundary both have, take a token of each, then more of whichever side
    ends first, until both end at the same byte; more than one token on either side there is a span.

    Example:
        >>> cut_difference_of_sizes([2, 1, 3], [2, 2, 1, 1])  # "ab|c|def" and "ab|cd|e|f"
        CutDifference(spans=((2, 6),), a_tokens=2, b_tokens=3)

    Raises:
        ValueError: The two do not cover the same number of bytes.
    """
    spans: list[tuple[int, int]] = []
    a_inside = b_inside = 0
    i = j = 0
    start = 0  # a boundary of both
    while i < len(a_sizes) and j < len(b_sizes):
        a_end, b_end = start + a_sizes[i], start + b_sizes[j]
        i, j = i + 1, j + 1
        a_count = b_count = 1
        while a_end != b_end:
            if a_end < b_end and i < len(a_sizes):
                a_end += a_sizes[i]
                i, a_count = i + 1, a_count + 1
            elif b_end < a_end and j < len(b_sizes):
                b_end += b_sizes[j]
                j, b_count = j + 1, b_count + 1
            else:
                break  # one side ran out: reported below
        if a_end != b_end:
            break
        if a_count > 1 or b_count > 1:
            spans.append((start, a_end))
            a_inside += a_count
            b_inside += b_count
        start = a_end
    if sum(a_sizes) != sum(b_sizes):
        raise ValueError(
            f"the two encodings are not of the same text: {sum(a_sizes):,} bytes against {sum(b_sizes):,}"
        )
    return CutDifference(tuple(spans), a_inside, b_inside)


def cut_difference(a: Tokenizer, a_ids: Sequence[int], b: Tokenizer, b_ids: Sequence[int]) -> CutDifference:
    """Where A's and B's encodings of the same text cut it differently (byte ranges), and their tokens there.

    Example:
        >>> tok = Tokenizer({i: bytes([i]) for i in range(256)} | {256: b"ab"}, [(b"a", b"b")])
        >>> cut_difference(tok, tok.encode("abc ab"), cut_to_merges(tok, 0), list(b"abc ab"))
        CutDifference(spans=((0, 2), (4, 6)), a_tokens=2, b_tokens=4)
    """
    token_bytes_a, token_bytes_b = a.token_bytes, b.token_bytes
    return cut_difference_of_sizes(
        [len(token_bytes_a(i)) for i in a_ids], [len(token_bytes_b(i)) for i in b_ids]
    )


def same_tokenizer(a: Tokenizer, b: Tokenizer) -> bool:
    """Whether two tokenizers are the same: vocabulary (ids and bytes), merges, special tokens, pattern.

    Example:
        >>> tok = Tokenizer({i: bytes([i]) for i in range(256)} | {256: b"ab"}, [(b"a", b"b")])
        >>> same_tokenizer(tok, tok), same_tokenizer(tok, cut_to_merges(tok, 0))
        (True, False)
    """
    return (
        a.merges == b.merges
        and a.pattern == b.pattern
        and dict(a.special_tokens) == dict(b.special_tokens)
        and dict(a.vocab) == dict(b.vocab)
    )


def shared_vocab(a: Tokenizer, b: Tokenizer) -> int:
    """How many of A's tokens (by their bytes; special tokens left out) are also tokens of B.

    Example:
        >>> tok = Tokenizer({i: bytes([i]) for i in range(256)} | {256: b"ab"}, [(b"a", b"b")])
        >>> shared_vocab(tok, tok)
        257
    """
    a_specials, b_specials = set(a.special_tokens.values()), set(b.special_tokens.values())
    theirs = {data for i, data in b.vocab.items() if i not in b_specials}
    return sum(1 for i, data in a.vocab.items() if i not in a_specials and data in theirs)


@dataclass(frozen=True)
class Compression:
    """How much an encoding compresses a text.

    Attributes:
        characters, bytes, words, tokens: Sizes of the text (words: runs of non-space characters) and
            the number of tokens.

    Example:
        >>> c = Compression(characters=11, bytes=11, words=2, tokens=4)
        >>> c.bytes_per_token, c.tokens_per_word
        (2.75, 2.0)
    """

    characters: int
    bytes: int
    words: int
    tokens: int

    @property
    def bytes_per_token(self) -> float | None:
        """UTF-8 bytes per token (None without tokens)."""
        return self.bytes / self.tokens if self.tokens else None

    @property
    def chars_per_token(self) -> float | None:
        """Characters per token (None without tokens)."""
        return self.characters / self.tokens if self.tokens else None

    @property
    def tokens_per_word(self) -> float | None:
        """Tokens per word (None without words)."""
        return self.tokens / self.words if self.words else None


def compression(text: str, tokens: int) -> Compression:
    """The compression figures of a text encoded as ``tokens`` tokens.

    Example:
        >>> compression("hello world", 4).chars_per_token
        2.75
    """
    return Compression(
        characters=len(text),
        bytes=len(text.encode("utf-8", "replace")),
        words=len(text.split()),
        tokens=tokens,
    )


@dataclass(frozen=True)
class Comparison:
    """Two tokenizers on the same text: each side's figures, the tokens they share and their merges.

    Attributes:
        a, b: Each side's compression figures (``tokens`` is its token count).
        shared: How many of A's tokens cover exactly the same bytes as one of B's (see
            :func:`shared_tokens`).
        merges: Where the merge lists first differ.
        same_pattern: Whether the two pre-tokenization patterns are the same.
    """

    a: Compression
    b: Compression
    shared: int
    merges: MergeDifference
    same_pattern: bool

    @property
    def agree(self) -> bool:
        """Whether the two split the text the same way (every token of each is a token of the other)."""
        return self.shared == self.a.tokens == self.b.tokens

    def describe_counts(self, *, strong: Callable[[str], str] = _plain) -> str:
        """The token counts and shared tokens in a sentence; ``strong`` marks the key numbers.

        Example:
            >>> same = Compression(characters=5, bytes=5, words=1, tokens=3)
            >>> Comparison(same, same, 3, MergeDifference(0, None, None, None, 0, 0), True).describe_counts()
            "Both use 3 tokens. 3 of A's 3 tokens cover the same bytes as one of B's (all: the same split)."
        """
        na, nb = self.a.tokens, self.b.tokens
        if na == nb:
            text = f"Both use {strong(f'{na:,}')} tokens."
        else:
            fewer, more = ("A", "B") if na < nb else ("B", "A")
            change = abs(na - nb) / max(na, nb)
            fewer_tokens = strong(f"{abs(na - nb):,} fewer")
            text = f"{fewer} uses {fewer_tokens} tokens than {more} ({change:.1%} fewer)."
        text += f" {self.shared:,} of A's {na:,} tokens cover the same bytes as one of B's"
        return text + (" (all: the same split)." if self.agree else ".")


def compare_encoded(
    a: Tokenizer, a_ids: Sequence[int], b: Tokenizer, b_ids: Sequence[int], text: str
) -> Comparison:
    """A :class:`Comparison` from the two encodings of ``text`` (when they are at hand already)."""
    return Comparison(
        a=compression(text, len(a_ids)),
        b=compression(text, len(b_ids)),
        shared=shared_tokens(a, a_ids, b, b_ids),
        merges=compare_merges(a, b),
        same_pattern=a.pattern == b.pattern,
    )


def compare(a: Tokenizer, b: Tokenizer, text: str, *, allowed_special: AllowedSpecial = "all") -> Comparison:
    """Encode ``text`` with both tokenizers and compare them (special tokens recognised by default).

    Example:
        >>> tok = Tokenizer({i: bytes([i]) for i in range(256)} | {256: b"ab"}, [(b"a", b"b")])
        >>> compare(tok, tok, "ab 日本🙃").agree
        True
    """
    a_ids = a.encode(text, allowed_special=allowed_special, disallowed_special=())
    b_ids = b.encode(text, allowed_special=allowed_special, disallowed_special=())
    return compare_encoded(a, a_ids, b, b_ids, text)


__all__ = [
    "Check",
    "Comparison",
    "Compression",
    "Curve",
    "CutDifference",
    "MergeDifference",
    "MergeIndex",
    "MergeNode",
    "MergeSummary",
    "compare",
    "compare_encoded",
    "compare_merges",
    "compression",
    "cut_difference",
    "cut_difference_of_sizes",
    "cut_to_merges",
    "length_counts",
    "merge_summary",
    "merge_tree",
    "plain_token",
    "positions_at_least",
    "same_tokenizer",
    "shared_tokens",
    "shared_vocab",
    "token_byte_spans",
    "token_count_curve",
]
