"""SentencePiece-style BPE: characters merged into pieces, unknown characters as ``<0xNN>`` byte tokens.

Llama 2, Mistral 7B, Gemma, TinyLlama, Yi... tokenize this way, in a SentencePiece ``.model`` file or a
``tokenizer.json`` (a ``BPE`` model with ``byte_fallback``). The text is normalized first (spaces written
``▁``, one ``▁`` put before the text), then:

1. it is cut into characters (a user-defined piece of a ``.model``, longest first, is one symbol that never
   merges);
2. repeatedly the adjacent pair of symbols with the lowest *rank* is merged, leftmost first. In a
   ``tokenizer.json`` a pair's rank is its place in ``merges`` (as ``tokenizers`` does); in a ``.model``
   every pair whose concatenation is a piece has that piece's rank in the order of the scores, highest
   first, so that pairs making pieces of equal score go leftmost first (as ``sentencepiece`` does);
3. each symbol that is a piece is its id; any other (a character the vocabulary lacks) is the byte tokens
   ``<0xNN>`` of its UTF-8 bytes (``byte_fallback``).

This is not byte-level BPE, so the byte-level encoder does not run it: the text is normalized and split
in Python (:attr:`~bpe_studio.engine.encoding.tokenizer.Tokenizer.backend` says ``"python"``), and each
piece's merge loop runs natively for a ``.model`` (``native_encode``: ``rust/src/spmodel.rs``'s
``PieceEncoder``), in Python otherwise and under ``BPE_STUDIO_PURE=1`` (the reference). The
:class:`~bpe_studio.engine.encoding.tokenizer.Tokenizer` still holds bytes: a piece's token is its text
with ``▁`` read as a space, a byte token its byte.

Example:
    >>> model = PieceModel({"▁": 3, "h": 4, "i": 5, "▁h": 6, "▁hi": 7}, [("▁", "h"), ("▁h", "i")],
    ...                    byte_ids=list(range(100, 356)))
    >>> model.encode("▁hi")
    (7,)
    >>> model.encode("▁hé")
    (6, 295, 269)
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from itertools import repeat

TYPE_CHECKING = False  # (typing is for type checkers only: see bpe_studio/__init__.py)

if TYPE_CHECKING:
    from ..pretokenize.hf import Pipeline

#: The character SentencePiece writes for a space.
SPACE = "▁"


def byte_piece(byte: int) -> str:
    """The name of a byte token.

    Example:
        >>> byte_piece(10)
        '<0x0A>'
    """
    return f"<0x{byte:02X}>"


def piece_bytes(piece: str) -> bytes:
    """The bytes a piece stands for in text: its UTF-8 with ``▁`` read as a space.

    Example:
        >>> piece_bytes("▁the")
        b' the'
    """
    return piece.replace(SPACE, " ").encode("utf-8", errors="surrogatepass")


def pieces_bytes(pieces: Iterable[str]) -> list[bytes]:
    """:func:`piece_bytes` of each piece, in C-speed passes (a model has 32k-256k pieces).

    Example:
        >>> pieces_bytes(["▁the", "a"])
        [b' the', b'a']
    """
    spaced = map(str.replace, pieces, repeat(SPACE), repeat(" "))
    return list(map(str.encode, spaced, repeat("utf-8"), repeat("surrogatepass")))


class PieceModel:
    """The pieces and ranked pairs of a SentencePiece-style BPE, and how text becomes its symbols.

    Args:
        pieces: Piece text -> id, for every piece that text can become (normal and user-defined pieces), or
            a function that makes it when first used (a ``.model`` read natively: encoding needs none).
        merges: The pairs that merge, in rank order (a ``tokenizer.json``'s ``merges``); a pair listed
            twice keeps its last rank, as ``tokenizers`` reads it.
        byte_ids: The ids of ``<0x00>`` .. ``<0xFF>``, by byte.
        ranks: Instead of ``merges``: pair -> rank, several pairs sharing a rank (a ``.model``'s pairs that
            make pieces of equal score), or a function that makes that table, called when the ranks are
            first used (the native reader of a ``.model`` derives them then: opening it needs none); its
            pairs are trusted to make pieces (they are splits of pieces), not checked again.
        frozen: User-defined pieces: matched whole before merging (longest first), never merged further.
        ignore_merges: A piece that is a token is taken whole (``tokenizers``' ``ignore_merges``).
        pipeline: The normalizer and pre-tokenizer that cut text into pieces (without ``ByteLevel``).
        prefix: Whether the normalizer writes a ``▁`` before the text (then :meth:`decode_text` drops one
            space at the start, as ``sentencepiece`` and the ``Strip`` decoder do).
        piece_merges: What :meth:`piece_merges` finds, when the caller has it already, or a function that
            makes it when first asked for (the native reader of a ``.model`` derives it with the ranks);
            found on first use otherwise.
        native_encode: A function making :meth:`encode` done natively with these pieces and ranks (a
            ``.model``'s: ``native.sentencepiece_encoder``), called at the first encode, so that encoding
            needs no table of ranks (None from it: the Python BPE); the Python BPE below stays the
            reference (``BPE_STUDIO_PURE=1``). :meth:`cut` and :meth:`truncated` models encode in Python.

    Raises:
        ValueError: A merge makes a text that is not a piece.
    """

    def __init__(
        self,
        pieces: Mapping[str, int] | Callable[[], Mapping[str, int]],
        merges: Iterable[tuple[str, str]] = (),
        *,
        byte_ids: Sequence[int],
        ranks: Mapping[tuple[str, str], int] | Callable[[], Mapping[tuple[str, str], int]] | None = None,
        frozen: Collection[str] = (),
        ignore_merges: bool = False,
        pipeline: Pipeline | None = None,
        prefix: bool = True,
        piece_merges: list[tuple[str, str]] | Callable[[], list[tuple[str, str]]] | None = None,
        native_encode: Callable[[], Callable[[str], tuple[int, ...]] | None] | None = None,
    ) -> None:
        if len(byte_ids) != 256:
            raise ValueError(f"byte_ids: expected 256 ids, got {len(byte_ids)}")
        # (A function: the table is made when first used, see the pieces property.)
        self._pieces: dict[str, int] | None = None if callable(pieces) else dict(pieces)
        self._make_pieces: Callable[[], Mapping[str, int]] | None = pieces if callable(pieces) else None
        self.byte_ids = tuple(byte_ids)
        self.pipeline = pipeline
        self.prefix = prefix
        self.ignore_merges = ignore_merges
        self.frozen = frozenset(frozen)
        self._longest_frozen = max(map(len, self.frozen), default=0)
        self._ranks: dict[tuple[str, str], int] | None = None
        self._make_ranks: Callable[[], Mapping[tuple[str, str], int]] | None = None
        if callable(ranks):
            self._make_ranks = ranks
        else:
            table: dict[tuple[str, str], int] = {}
            if ranks is not None:
                table.update(ranks)
            else:
                for rank, pair in enumerate(merges):
                    table.pop(pair, None)
                    table[pair] = rank  # the last one wins, as tokenizers builds its map
            self._ranks = self._checked(table)
        self._names: dict[int, str] | None = None
        self._piece_merges: list[tuple[str, str]] | None = None
        self._make_piece_merges: Callable[[], list[tuple[str, str]]] | None = None
        if callable(piece_merges):
            self._make_piece_merges = piece_merges
        else:
            self._piece_merges = piece_merges
        self._byte_of: dict[int, int] | None = None
        self._native_encode: Callable[[str], tuple[int, ...]] | None = None
        self._make_native_encode = native_encode

    @property
    def pieces(self) -> dict[str, int]:
        """Text -> id of the normal and user-defined pieces (made on first use when given as a function: a
        ``.model`` opened natively encodes without them)."""
        found = self._pieces
        if found is None:
            assert self._make_pieces is not None  # (kept: two threads that find none each make it)
            found = self._pieces = dict(self._make_pieces())
        return found

    def _checked(self, table: dict[tuple[str, str], int]) -> dict[tuple[str, str], int]:
        for (left, right), rank in table.items():
            if left + right not in self.pieces:
                raise ValueError(
                    f"merges: pair {rank} ({left!r}, {right!r}) makes {left + right!r}, which is not a piece"
                )
        return table

    @property
    def ranks(self) -> dict[tuple[str, str], int]:
        """Pair -> rank (several pairs may share a rank), made on first use when given as a function."""
        table = self._ranks
        if table is None:
            assert self._make_ranks is not None
            made = self._make_ranks()
            table = self._ranks = made if type(made) is dict else dict(made)
        return table

    def merges(self) -> list[tuple[str, str]]:
        """The pairs in rank order, one pair for each piece made (the first listed of its rank)."""
        seen: set[str] = set()
        out: list[tuple[str, str]] = []
        for pair, _ in sorted(self.ranks.items(), key=lambda item: item[1]):
            if pair[0] + pair[1] not in seen:
                seen.add(pair[0] + pair[1])
                out.append(pair)
        return out

    def piece_merges(self) -> list[tuple[str, str]]:
        """The pairs of two pieces in rank order, one for each piece made: the merges the views show and a
        cut keeps (:meth:`cut`).

        Example:
            >>> PieceModel({"a": 1, "b": 2, "ab": 3}, [("a", "b")], byte_ids=range(256)).piece_merges()
            [('a', 'b')]
        """
        if self._piece_merges is None:
            make = self._make_piece_merges
            self._piece_merges = make() if make is not None else self._find_piece_merges()
        return list(self._piece_merges)

    def _find_piece_merges(self) -> list[tuple[str, str]]:
        # A piece's pair: the first of its rank whose two pieces exist by then (a .model ranks every split
        # of a piece, some with a part made later), else the first of two pieces. (A stable sort by rank:
        # pairs of one rank stay in the table's order.)
        pieces, ranks = self.pieces, self.ranks
        by_piece: dict[str, list[tuple[str, str]]] = {}
        for pair in sorted(ranks, key=ranks.__getitem__):
            left, right = pair
            if left in pieces and right in pieces:
                by_piece.setdefault(left + right, []).append(pair)
        made: set[str] = set()
        kept = self.frozen  # with single characters: what always_kept keeps
        out: list[tuple[str, str]] = []
        for piece, pairs in by_piece.items():
            chosen = pairs[0]
            for left, right in pairs:
                if (left in made or len(left) == 1 or left in kept) and (
                    right in made or len(right) == 1 or right in kept
                ):
                    chosen = (left, right)
                    break
            out.append(chosen)
            made.add(piece)
        return out

    def cut(self, merges: int) -> PieceModel:
        """The model of its first ``merges`` :meth:`piece_merges`: the pieces they make, and every piece no
        merge makes that text can hold without merging (single characters, user-defined pieces).

        Example:
            >>> model = PieceModel({"a": 1, "b": 2, "ab": 3}, [("a", "b")], byte_ids=range(256))
            >>> sorted(model.cut(0).pieces), model.cut(0).encode("ab")
            (['a', 'b'], (1, 2))
        """
        made = {left + right for left, right in self.piece_merges()[: max(merges, 0)]}
        keep = {i for piece, i in self.pieces.items() if piece in made or self.always_kept(piece)}
        return self.truncated(keep)

    def names(self) -> dict[int, str]:
        """Id -> the token as the model spells it: a piece as its text (``▁the``), a byte token as
        ``<0xNN>`` (byte fallback, for characters no piece covers). Built on first use.

        Example:
            >>> PieceModel({"▁a": 1}, byte_ids=range(100, 356)).names()[1], PieceModel(
            ...     {"▁a": 1}, byte_ids=range(100, 356)).names()[197]
            ('▁a', '<0x61>')
        """
        if self._names is None:
            found = {i: byte_piece(b) for b, i in enumerate(self.byte_ids)}
            for piece, i in self.pieces.items():
                found.setdefault(i, piece)
            self._names = found
        return self._names

    def byte_of(self, token_id: int) -> int | None:
        """The byte of a byte-fallback token (``<0x61>``: 0x61), or None for any other id.

        Example:
            >>> PieceModel({"▁a": 1}, byte_ids=range(100, 356)).byte_of(197)
            97
        """
        if self._byte_of is None:
            self._byte_of = {i: b for b, i in enumerate(self.byte_ids)}
        return self._byte_of.get(token_id)

    def always_kept(self, piece: str) -> bool:
        """Whether every :meth:`cut` keeps a piece: a single character or a user-defined piece (text holds
        them without merging)."""
        return len(piece) == 1 or piece in self.frozen

    def steps(self, piece: str) -> tuple[list[str], list[tuple[str, str]]]:
        """The symbols BPE starts ``piece`` with, and the pairs it merges, in order (as :meth:`encode`)."""
        done: list[tuple[str, str]] = []
        symbols = self._merge(piece, done)[0]
        return symbols, done

    def _symbols(self, text: str) -> tuple[list[str], list[bool]]:
        """The characters of ``text``, a user-defined piece as one frozen symbol."""
        if not self.frozen:
            return list(text), [False] * len(text)
        symbols: list[str] = []
        frozen: list[bool] = []
        i = 0
        while i < len(text):
            for size in range(min(self._longest_frozen, len(text) - i), 0, -1):
                if text[i : i + size] in self.frozen:
                    symbols.append(text[i : i + size])
                    frozen.append(True)
                    i += size
                    break
            else:
                symbols.append(text[i])
                frozen.append(False)
                i += 1
        return symbols, frozen

    def encode(self, piece: str) -> tuple[int, ...]:
        """The ids of one normalized piece (``"▁Hello▁world"``).

        A linked list of symbols and a heap of (rank, position): positions never change, so the smallest
        among the lowest-rank pairs is the leftmost; a stale entry is skipped (its pair no longer has that
        rank there).
        """
        native_encode = self._native_encode
        if native_encode is None and self._make_native_encode is not None:
            native_encode = self._native_encode = self._make_native_encode()
            self._make_native_encode = None
        if native_encode is not None:
            try:
                return native_encode(piece)
            except UnicodeEncodeError:  # (a lone surrogate, which a Rust str cannot hold: encoded below)
                pass
        if self.ignore_merges and piece in self.pieces:
            return (self.pieces[piece],)
        tokens = self._merge(piece, None)[1]
        ids: list[int] = []
        pieces, byte_ids = self.pieces, self.byte_ids
        for token in tokens:
            if not token:
                continue
            found = pieces.get(token)
            if found is not None:
                ids.append(found)
            else:
                ids.extend(byte_ids[b] for b in token.encode("utf-8", errors="surrogatepass"))
        return tuple(ids)

    def _merge(self, piece: str, done: list[tuple[str, str]] | None) -> tuple[list[str], list[str]]:
        """The symbols of ``piece`` before and after BPE (merged ones left empty); each pair merged is
        appended to ``done`` when given."""
        tokens, frozen = self._symbols(piece)
        start = list(tokens)
        n = len(tokens)
        get = self.ranks.get
        following = list(range(1, n + 1))
        if n:
            following[-1] = -1
        previous = list(range(-1, n - 1))

        def rank_at(i: int, j: int) -> int | None:
            return None if frozen[i] or frozen[j] else get((tokens[i], tokens[j]))

        heap = [(r, i) for i in range(n - 1) if (r := rank_at(i, i + 1)) is not None]
        heapq.heapify(heap)
        while heap:
            rank, i = heapq.heappop(heap)
            j = following[i] if tokens[i] else -1
            if j < 0 or rank_at(i, j) != rank:
                continue
            if done is not None:
                done.append((tokens[i], tokens[j]))
            tokens[i] += tokens[j]
            tokens[j] = ""
            k = following[j]
            following[i] = k
            if k >= 0:
                previous[k] = i
                if (r := rank_at(i, k)) is not None:
                    heapq.heappush(heap, (r, i))
            h = previous[i]
            if h >= 0 and (r := rank_at(h, i)) is not None:
                heapq.heappush(heap, (r, h))
        return start, tokens

    def decode_text(self, data: bytes) -> str:
        """The text of the tokens' bytes: UTF-8 (U+FFFD for invalid bytes), less the space the normalizer
        put before the text."""
        text = data.decode("utf-8", errors="replace")
        return text[1:] if self.prefix and text.startswith(" ") else text

    def truncated(self, keep: Collection[int]) -> PieceModel:
        """The model with only the pieces of ids ``keep`` and the pairs that make them (a smaller vocabulary).

        Example:
            >>> model = PieceModel({"a": 1, "b": 2, "ab": 3}, [("a", "b")], byte_ids=range(256))
            >>> model.truncated({1, 2}).encode("ab")
            (1, 2)
        """
        kept = {piece: i for piece, i in self.pieces.items() if i in keep}
        return PieceModel(
            kept,
            byte_ids=self.byte_ids,
            ranks={pair: r for pair, r in self.ranks.items() if pair[0] + pair[1] in kept},
            frozen=self.frozen & kept.keys(),
            ignore_merges=self.ignore_merges,
            pipeline=self.pipeline,
            prefix=self.prefix,
        )
