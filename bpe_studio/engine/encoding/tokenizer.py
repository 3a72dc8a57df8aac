"""Encoding and decoding text with a byte-level BPE tokenizer, exactly as the reference implementations do.

A text is split at the allowed special tokens (longest match first), each piece in between is split into
pre-tokens by the pattern, and each pre-token's UTF-8 bytes are merged: repeatedly the adjacent pair with
the lowest *rank* (its index in the merges list) is merged, leftmost first, until no pair is a merge. This
is the semantics of GPT-2's ``encoder.py``, Hugging Face ``tokenizers`` and the CS336 handout; for GPT-2's
files it gives the ids of tiktoken.

Why it is fast in pure Python:

* A pre-token's result is cached (pre-token -> tuple of ids) in a dict whose ``__missing__`` runs BPE, so a
  warm encode is the pattern's ``findall`` plus one C-level dict lookup per pre-token.
* A cache miss works on a ``str`` whose code points are token ids: a pair of tokens is a 2-character slice,
  looked up in one dict ``pair -> rank``; the list of the pair ranks of the word is updated in place after
  each merge, so a merge costs one C-level ``min`` over it.

The encoding itself goes through one encoder object chosen when the tokenizer is made: :class:`PythonEncoder`
(the cache above, :meth:`Tokenizer._bpe`) or, when the native kernel is on,
:class:`~bpe_studio.engine.native.NativeEncoder` (rust/src/encode.rs: the same BPE and caching, and for a
preset pattern the native scanner too). Both have the same methods, so the Tokenizer's own code is the same
for both.

Example:
    >>> tok = Tokenizer.from_files("vocab.json", "merges.txt", ["<|endoftext|>"])
    >>> tok.encode("Hello world<|endoftext|>")
    [15496, 995, 50256]
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from functools import cache
from itertools import chain, filterfalse, pairwise
from operator import itemgetter
from types import MappingProxyType

from .. import native
from ..bytes_unicode import bytes_to_text
from ..limits import MAX_VOCAB_SIZE
from ..pretokenize.boundary import last_newline_boundary
from ..pretokenize.patterns import compile_pattern, preset_name, resolve_pattern, scanner_name
from ..pretokenize.split import Pretokenizer, pretoken_matches, special_token_regex
from .merge_queue import Buckets, Heap
from .pieces import pieces_bytes
from .rank_rule import derive_merges, merge_parts

TYPE_CHECKING = False  # (typing is for type checkers only: see bpe_studio/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Literal, TypeAlias, cast

    import numpy as np
    from numpy.typing import NDArray

    from ..events import TrainResult
    from ..pretokenize.hf import Pipeline
    from .hf_decode import Decoder
    from .merge_queue import MergeQueue
    from .pieces import PieceModel
else:

    def cast(_kind: object, value: object) -> object:
        """``typing.cast`` at run time (it returns the value), without importing ``typing``."""
        return value

#: Default number of pre-tokens whose ids are cached (per call running at the same time; a batch's threads
#: share one cache). The native cache keeps them packed (about 40-100 bytes each) and drops a part when
#: full; the Python one is emptied. 100,000 was fewer than the distinct pre-tokens of 7.5 MB of mixed
#: languages (163k), which then ran at half speed on one thread.
DEFAULT_CACHE_SIZE = 1 << 18

# Above this many bytes a pre-token is merged with a heap (O(n log n)) instead of rescanning the list of
# pair ranks after each merge (O(n^2), but in C and faster for the short words of ordinary text).
_LONG_WORD = 256

# encode_iterable() works on at least this many characters at a time (or on the held-back tail's length,
# whichever is larger, which keeps the total work linear even for a pre-token that spans many chunks).
_STREAM_BLOCK = 1 << 16

# A streaming cut needs this many characters of the known text after it: the preset patterns decide where
# a pre-token ends by looking at most this far past it (o200k's "'ll" suffix after a word: 3 characters).
_STREAM_MARGIN = 3

# "No such pair": larger than any rank.
_NO_RANK = MAX_VOCAB_SIZE * 64

#: The bytes UTF-8 never uses (0xC0, 0xC1 and 0xF5-0xFF): a vocabulary may lack them (GPT-NeoX-20B's and its
#: family's do), since the UTF-8 bytes of a text never hold them.
UTF8_UNUSED_BYTES = frozenset({0xC0, 0xC1, *range(0xF5, 0x100)})

# The id given to the native encoder for a byte the vocabulary lacks (one of UTF8_UNUSED_BYTES): no text
# reaches it, and were one to, the id would be out of every vocabulary rather than another token's.
_NO_BYTE_ID = 0xFFFF_FFFF


@cache
def _whitespace() -> Any:
    """``\\s`` of the ``regex`` module, imported when first needed (not on opening a file: 7 ms)."""
    import regex

    return regex.compile(r"\s")


AllowedSpecial: TypeAlias = 'Literal["all"] | Collection[str]'
"""Which special tokens to recognise: ``"all"`` or a set of them (tiktoken's ``allowed_special``)."""
DisallowedSpecial: TypeAlias = 'Literal["all"] | Collection[str]'
"""Which special tokens make encoding fail: ``"all"`` (every one not allowed) or a collection."""


class UnknownTokenIdError(KeyError, ValueError):
    """A token id is not in the tokenizer's vocabulary (both a ``KeyError`` and a ``ValueError``)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown token id"


class DisallowedSpecialTokenError(ValueError):
    """The text holds a special token that the call did not allow.

    Attributes:
        token: The special token found.
        position: Its character offset in the text (within the buffered chunk for ``encode_iterable``).
    """

    def __init__(self, token: str, position: int) -> None:
        self.token = token
        self.position = position
        super().__init__(
            f"the text holds the special token {token!r} (at character {position}), which is not "
            f"allowed. To encode it as the special token, pass allowed_special={{{token!r}}} (or "
            "allowed_special='all'); to encode it as ordinary text, pass disallowed_special=() (or leave "
            f"{token!r} out of disallowed_special)"
        )


class _Frozen:
    """A frozen record compared and hashed by its fields, as a ``@dataclass(frozen=True, slots=True)`` is:
    this module is imported by opening any file, and ``dataclasses`` imports ``inspect`` and ``ast`` (5-6 ms
    of a fresh process)."""

    __slots__ = ()
    _FIELDS: tuple[str, ...] = ()

    def _values(self) -> tuple[Any, ...]:
        return tuple([getattr(self, name) for name in self._FIELDS])

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, _Frozen)
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._FIELDS)
        return f"{type(self).__name__}({fields})"

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: a {type(self).__name__} is frozen")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: a {type(self).__name__} is frozen")

    def __reduce__(self) -> tuple[type[_Frozen], tuple[Any, ...]]:
        return (type(self), self._values())


class TokenSpan(_Frozen):
    """One token of :meth:`Tokenizer.encode_with_offsets` and the characters it covers.

    Attributes:
        id: The token id.
        start: Offset of the first character the token's bytes belong to.
        end: One past the last such character.
        partial: True when the token holds only part of a character's UTF-8 bytes (at its start or end):
            e.g. each of the three tokens of ``"🙃"`` in GPT-2 spans the same character and is partial.
    """

    __slots__ = ("end", "id", "partial", "start")
    _FIELDS = ("id", "start", "end", "partial")
    id: int
    start: int
    end: int
    partial: bool

    def __init__(self, id: int, start: int, end: int, partial: bool = False) -> None:
        setter = object.__setattr__
        setter(self, "id", id)
        setter(self, "start", start)
        setter(self, "end", end)
        setter(self, "partial", partial)


class Template(_Frozen):
    """Token ids that :meth:`Tokenizer.encode` adds around every text, e.g. a BOS and an EOS token.

    This is the single-text part of a Hugging Face ``TemplateProcessing`` post-processor (Llama-3 files add
    ``<|begin_of_text|>`` before every text); ``encode(text, add_special_tokens=False)`` leaves them out, as
    in ``tokenizers``.

    Attributes:
        prefix: Ids put before the text's ids.
        suffix: Ids put after them.

    Example:
        >>> Template(prefix=(1,), suffix=(2,))
        Template(prefix=(1,), suffix=(2,))
    """

    __slots__ = ("prefix", "suffix")
    _FIELDS = ("prefix", "suffix")
    prefix: tuple[int, ...]
    suffix: tuple[int, ...]

    def __init__(self, prefix: tuple[int, ...] = (), suffix: tuple[int, ...] = ()) -> None:
        object.__setattr__(self, "prefix", prefix)
        object.__setattr__(self, "suffix", suffix)


class _PieceCache(dict[str, tuple[int, ...]]):
    """Pre-token -> ids; a miss runs BPE. Emptied when full, which bounds memory whatever the input."""

    __slots__ = ("_bpe", "limit")

    def __init__(self, bpe: Any, limit: int) -> None:
        super().__init__()
        self._bpe = bpe
        self.limit = limit

    def __missing__(self, piece: str) -> tuple[int, ...]:
        ids: tuple[int, ...] = self._bpe(piece)
        if len(self) >= self.limit:
            self.clear()
        self[piece] = ids
        return ids


class PythonEncoder:
    """The pure-Python encoder of a :class:`Tokenizer`: its pre-tokenizer, and :meth:`Tokenizer._bpe` through
    the cache. :class:`~bpe_studio.engine.native.NativeEncoder` has the same methods. ``by_id``: each id's
    bytes as a latin-1 str (None for an unused id), or a function making that list when first decoding.

    Example:
        >>> enc = PythonEncoder(_PieceCache(lambda piece: tuple(map(ord, piece)), 10), str.split, ["a", "b"])
        >>> enc.encode_text("ab a"), enc.decode_bytes([1, 0]), enc.decode_bytes([2])
        ([97, 98, 97], b'ba', None)
    """

    __slots__ = ("_by_id", "_cache", "_split")

    #: The engine, as :func:`bpe_studio.engine.backend` names it.
    backend: native.Backend = "python"
    #: No native scanner: :meth:`encode_text` splits with the Tokenizer's pre-tokenizer.
    preset: str | None = None

    def __init__(
        self,
        cache: _PieceCache,
        split: Callable[[str], list[str]],
        by_id: list[Any] | Callable[[], list[Any]],
    ) -> None:
        self._cache = cache
        self._split = split
        self._by_id = by_id

    def encode_pieces(self, pieces: list[str]) -> list[int]:
        """The ids of pre-tokens, one after the other, through the cache."""
        return list(chain.from_iterable(map(self._cache.__getitem__, pieces)))

    def encode_each(self, pieces: list[str]) -> Iterable[Sequence[int]]:
        """Each pre-token's ids, through the cache."""
        return map(self._cache.__getitem__, pieces)

    def encode_text(self, text: str) -> list[int]:
        """The ids of ordinary ``text``.

        Raises:
            UnicodeEncodeError: The text holds a lone surrogate (the caller fixes it and calls again).
        """
        return self.encode_pieces(self._split(text))

    def encode_batch(self, texts: list[str], *, threads: int) -> list[list[int]]:
        """:meth:`encode_text` of each text, one after the other (``threads`` is for the native encoder)."""
        return [self.encode_text(text) for text in texts]

    def encode_join(self, texts: list[str], *, separator: int | None, width: int) -> bytes | None:
        """None: only the native encoder writes joined rows (the caller encodes in Python)."""
        return None

    def encode_batch_flat(self, texts: list[str], *, threads: int) -> tuple[bytearray, bytearray] | None:
        """None: only the native encoder gives flat buffers (the caller makes them from the lists)."""
        return None

    def decode_bytes(self, ids: list[int] | tuple[int, ...]) -> bytes | None:
        """The concatenated bytes of the tokens, or None when an id is not in the vocabulary or not an int
        (the caller names it)."""
        table = self._by_id
        if callable(table):  # made on the first decode: opening and encoding need none of it
            table = self._by_id = table()
        try:
            # A list comprehension over a list indexed by id is the fastest lookup in CPython; negative ids
            # would index from the end, hence the min() check (one C-level pass).
            if ids and min(ids) < 0:
                return None
            return "".join([table[i] for i in ids]).encode("latin-1")
        except (IndexError, TypeError):
            return None

    def clear_cache(self) -> None:
        """Forget the cached pre-token encodings."""
        self._cache.clear()

    def derive_merges(self) -> list[tuple[int, int, int]] | None:
        """None: only the native encoder derives merges (the Tokenizer derives them in Python)."""
        return None

    def merge_summary(self) -> tuple[int, int, int] | None:
        """None: only the native encoder sums its derived merges up."""
        return None

    def __len__(self) -> int:
        """The number of cached pre-tokens."""
        return len(self._cache)


def _merge_tuple(merges: Sequence[tuple[bytes, bytes]]) -> tuple[tuple[bytes, bytes], ...]:
    """``merges`` as a tuple of pairs of ``bytes`` (bytearrays and lists copied), checked in C when they
    are already that (the common case: a loader's list of tuples)."""
    if not isinstance(merges, (list, tuple)):
        merges = list(merges)  # (read once: it may be an iterator)
    if (
        set(map(type, merges)) <= {tuple}
        and set(map(len, merges)) <= {2}
        and set(map(type, chain.from_iterable(merges))) <= {bytes}
    ):
        return tuple(merges)
    return tuple((bytes(a), bytes(b)) for a, b in merges)


def _piece_lookup(model: PieceModel, ids_of: Mapping[bytes, int]) -> dict[bytes, int]:
    """``ids_of`` with each piece's bytes giving that piece's id (see :func:`_piece_merge_ids`)."""
    # In C-speed passes (a model has 32k-256k pieces). Bytes two pieces share: the smaller id, written last.
    by_id = sorted(model.pieces.items(), key=itemgetter(1), reverse=True)
    lookup = dict(ids_of)  # (a merge's tokens are pieces; the other ids only in case)
    lookup.update(zip(pieces_bytes(map(itemgetter(0), by_id)), map(itemgetter(1), by_id), strict=True))
    return lookup


def _piece_merge_ids(
    model: PieceModel,
    merges: Sequence[tuple[bytes, bytes]],
    ids_of: Mapping[bytes, int],
    *,
    lookup: dict[bytes, int] | None = None,
) -> list[tuple[int, int, int]]:
    """A SentencePiece-style model's merges by id: each token a *piece*'s id (the piece ``a``, not the byte
    token ``<0x61>`` that has the same bytes and a smaller id), so that merge trees join pieces.
    ``lookup``: :func:`_piece_lookup`'s, when the caller made it already."""
    if lookup is None:
        lookup = _piece_lookup(model, ids_of)
    found = native.merge_ids(merges, lookup)
    if found is not None:
        return found
    get = lookup.__getitem__
    lefts = [left for left, _ in merges]
    rights = [right for _, right in merges]
    made = map(get, map(bytes.__add__, lefts, rights))
    return list(zip(map(get, lefts), map(get, rights), made, strict=True))


class Tokenizer:
    """A byte-level BPE tokenizer: vocabulary, ranked merges, special tokens and a pre-tokenization pattern.

    Args:
        vocab: Token id -> bytes. It must hold every single byte (under any ids), except that the bytes
            UTF-8 never uses (:data:`UTF8_UNUSED_BYTES`) may be missing: the tokenizer then encodes every
            text (see :attr:`missing_bytes`).
        merges: Pairs of tokens (as bytes) in rank order; a merge's result is the token with the
            concatenated bytes, which must be in ``vocab``. A pair listed twice keeps its first rank. None
            for tiktoken's rule (a rank file's): any two adjacent parts whose concatenation is an ordinary
            token merge, the token of lowest id first (see :mod:`.rank_rule`); :attr:`merges` is then
            derived when first asked for. A loader's :class:`~bpe_studio.engine.native.MergeTable` (merges
            read natively with their ids, for these ``vocab`` and ``special_tokens``) stands for its pairs.
        special_tokens: Strings that are never split: a sequence (each gets the id of a vocab entry with
            its UTF-8 bytes, or a new id after the largest) or a mapping token -> id.
        pattern: A preset name (``gpt2``, ``cl100k``, ``o200k``) or a regex for the ``regex`` module.
        cache_size: How many pre-tokens' ids to remember.
        template: Ids that :meth:`encode` adds around every text (BOS/EOS); each must be a vocab id.
        ignore_merges: A pre-token whose bytes are an ordinary token becomes that token without merging, as
            tiktoken does and as ``tokenizers`` does with ``ignore_merges`` (Llama 3's files).
        normalizer: ``"NFC"`` to encode the text between special tokens in Unicode normalization form C
            (Qwen's files), or None to take it as it is.
        pipeline: A Hugging Face normalizer and pre-tokenizer (:class:`~bpe_studio.engine.pretokenize.hf.
            Pipeline`) that cuts the text between special tokens into pieces instead of ``pattern`` and
            ``normalizer`` (which are then not used for encoding); the BPE merges each piece's bytes.
        decoder: A Hugging Face decoder (:class:`~bpe_studio.engine.encoding.hf_decode.Decoder`) that
            :meth:`decode` applies to the tokens' spellings, or None to join the tokens' bytes.
        piece_model: A SentencePiece-style BPE (:class:`~bpe_studio.engine.encoding.pieces.PieceModel`)
            that encodes the text instead of the byte-level merges (its own pipeline cuts the text;
            ``vocab`` then holds each piece's bytes and ``merges`` its pairs, for the views). It encodes in
            Python: the native kernel merges bytes, not characters.

    Raises:
        ValueError: Something in the arguments is inconsistent; the message says what and how to fix it.

    Example:
        >>> tok = Tokenizer({i: bytes([i]) for i in range(256)} | {256: b"hi"}, [(b"h", b"i")])
        >>> tok.encode("hi!")
        [256, 33]
        >>> ranked = Tokenizer({i: bytes([i]) for i in range(256)} | {256: b"hi", 257: b"hip"}, None)
        >>> ranked.encode("hip"), ranked.rule, ranked.merges
        ([257], 'ranks', ((b'h', b'i'), (b'hi', b'p')))
    """

    def __init__(
        self,
        vocab: Mapping[int, bytes],
        merges: Sequence[tuple[bytes, bytes]] | native.MergeTable | None,
        special_tokens: Iterable[str] | Mapping[str, int] | None = None,
        *,
        pattern: str = "gpt2",
        cache_size: int = DEFAULT_CACHE_SIZE,
        template: Template | None = None,
        ignore_merges: bool = False,
        normalizer: str | None = None,
        pipeline: Pipeline | None = None,
        decoder: Decoder | None = None,
        piece_model: PieceModel | None = None,
        _kernel_vocab: bool = False,
    ) -> None:
        if not isinstance(cache_size, int) or cache_size < 1:
            raise ValueError(f"cache_size: {cache_size!r} must be a positive integer")
        if normalizer not in (None, "NFC"):
            raise ValueError(f"normalizer: {normalizer!r} is not supported; give 'NFC' or None")
        self._normalizer = normalizer
        self._pipeline = pipeline
        self._hf_decoder = decoder
        self._piece_model = piece_model
        self._ignore_merges = bool(ignore_merges)
        self._pattern = resolve_pattern(pattern)
        # Compiled when first needed for a pattern with a native scanner (a preset's or a model's, known to
        # compile: the native encoder splits them itself, and `inspect --pattern llama3` imported `regex`
        # for nothing, issue 20), at once for any other regex (one that does not compile is refused here).
        self._compiled: Any = None if scanner_name(self._pattern) is not None else compile_pattern(pattern)
        # The pre-tokens as training counted them: whole non-empty matches (also with capturing groups).
        self._split: Callable[[str], list[str]] = Pretokenizer(pattern).findall

        # A loader's vocab that the kernel made, and checked as it made it (``_kernel_vocab``, private: a new
        # dict of exact ints 0..n-1 and bytes that no one else holds) is taken as it is: no copy and no
        # second pass over its 32k-256k entries (0.6 ms of a .model's load); only its size is checked.
        kernel_made = _kernel_vocab and type(vocab) is dict and len(vocab) <= MAX_VOCAB_SIZE
        table = cast("dict[int, bytes]", vocab) if kernel_made else self._checked_vocab(vocab)
        specials = self._place_specials(table, special_tokens)
        self._vocab = table
        self._specials = specials
        special_ids = set(specials.values())

        # bytes -> id (_set_byte_tables): a piece model's is made when first used (token_id, merge ids, the
        # Python byte-level encoder), when its byte pieces show that no byte lacks a token: opening and
        # encoding a .model need none of it (2 ms of Mistral 7B's 32k pieces, issue 20).
        self._ids_of_made: dict[bytes, int] | None = None
        self._byte_chars_made: dict[int, str] | None = None
        if piece_model is not None and all(
            table.get(i) == bytes([b]) and i not in special_ids for b, i in enumerate(piece_model.byte_ids)
        ):
            self._missing_bytes: tuple[int, ...] = ()
            byte_ids: list[int] = []  # (the native byte-level encoder's: a piece model has its own)
        else:
            self._set_byte_tables(table, specials)
            byte_ids = [self._ids_of.get(bytes([b]), _NO_BYTE_ID) for b in range(256)]
        # The Python encoder's pair -> rank table and merged tokens, built from the triples when it first
        # merges (_rank_tables): the native encoder needs neither, and they cost more than reading a file.
        self._rank_table: tuple[dict[str, int], list[str]] | None = None
        triples: list[tuple[int, int, int]] | native.MergeTable = []
        self._merges: tuple[tuple[bytes, bytes], ...] | None
        self._rank_by_merges = merges is not None
        # A loader's merges read natively with their ids (native.MergeTable, a tokenizer.json's): the ids go
        # to the native encoder as they are, and the pairs of bytes are made when first asked for (the
        # merges property): 50k-250k pairs and triples of Python objects that opening a file needs none of.
        self._merge_table: native.MergeTable | None = None
        if merges is None:
            # tiktoken's rule: any two parts whose concatenation is an ordinary token merge (rank_rule.py);
            # the merges list is derived only when asked for (the merges property).
            self._merges = None
        elif not native.is_merge_table(merges):
            self._merges = _merge_tuple(cast(Sequence[tuple[bytes, bytes]], merges))
        elif native.backend() == "native":
            self._merge_table = merges
            self._merges = None
        else:
            self._merges = _merge_tuple(merges.pairs())
        piece_ids: list[tuple[int, int, int]] | None = None
        if piece_model is not None and self._merges is not None:
            # A piece model's merges by id are looked up once, not twice (also by _rank_merges: 8-15 ms of
            # Mistral 7B's 60k), when its pieces' bytes add no key to ids_of: the same keys then fail or
            # succeed alike, so a merge without a token fails below in _rank_merges, naming it, as before.
            lookup = _piece_lookup(piece_model, self._ids_of)
            if len(lookup) == len(self._ids_of):
                piece_ids = native.merge_ids(self._merges, lookup)
            if piece_ids is None:
                self._rank_merges(self._merges, self._ids_of)
                piece_ids = _piece_merge_ids(piece_model, self._merges, self._ids_of, lookup=lookup)
            # (Its own encoder merges pieces: the byte-level tables below, _rank_tables, are never built.)
            triples = piece_ids
        elif piece_model is not None and self._merge_table is not None:
            # A .model's merges (native.sentencepiece_pairs): two pieces making a piece, each one's bytes a
            # token, so no lookup fails; their ids (the pieces', found natively) are made when first asked
            # for (merge_ids), for the views: the piece model encodes with its own ranks.
            triples = self._merge_table
        elif self._merge_table is not None:
            if not self._merge_table.has_ids():  # a merge without a token: named by _rank_merges
                self._rank_merges(self.merges, self._ids_of)
            triples = self._merge_table
        elif self._merges is not None:
            triples = self._rank_merges(self._merges, self._ids_of)
        self._rank_triples = triples
        # The merges by id (merge_ids); under tiktoken's rule derived with the merges, when asked; a merge
        # table's made when asked.
        self._merge_ids: list[tuple[int, int, int]] | None = (
            triples if merges is not None and isinstance(triples, list) else None
        )

        # (The same dict as _vocab, not a copy of 50k-200k entries: neither changes after this.)
        self._decoder: dict[int, bytes] = table
        # Each id's bytes (None for an unused id), for the native encoder; the Python one (a piece model's)
        # makes its own from the table when it first decodes.
        token_of_id = list(map(table.get, range(max(table) + 1))) if piece_model is None else []
        self._cache = _PieceCache(self._bpe, cache_size)
        # The encoder, chosen once: the native one (rust/src/encode.rs) does the same BPE and caching as
        # _bpe and _cache, and with a pattern it has a scanner for (a preset's or a model's: scanner_name)
        # also splits the text (rust/src/pretok*.rs, equal to the `regex` pattern on every input): text to
        # ids in one call. The Python one when the kernel is not
        # built or BPE_STUDIO_PURE=1.
        # (A SentencePiece-style model merges characters, not bytes: the Python encoder, with its own BPE.)
        native_encoder = (
            None
            if piece_model is not None
            else native.encoder(
                byte_ids,
                triples if merges is not None else None,
                (
                    {token: i for token, i in self._ids_of.items() if i not in special_ids}
                    if self._ignore_merges and merges is not None
                    else None
                ),
                token_of_id,
                cache_size=cache_size,
                preset=scanner_name(self._pattern),
                split=self._split,
                special_ids=sorted(special_ids),
                ignore_merges=self._ignore_merges,
            )
        )
        # The Python encoder's tables (built only when it encodes): a pre-token (a latin-1 str of its bytes)
        # that is an ordinary token -> its id, for ignore_merges and tiktoken's rule; for decoding, each id's
        # bytes as a latin-1 str (joining strs is about twice as fast as joining bytes objects; None for an
        # unused id makes the join raise TypeError).
        self._whole: dict[str, int] = {}
        if native_encoder is None and (self._ignore_merges or merges is None):
            self._whole = {
                token.decode("latin-1"): i for token, i in self._ids_of.items() if i not in special_ids
            }
        by_id: list[Any] | Callable[[], list[Any]] = (
            []
            if native_encoder is not None
            else lambda: [
                None if t is None else t.decode("latin-1")
                for t in (token_of_id or map(table.get, range(max(table) + 1)))
            ]
        )
        # (Compared with None: an encoder has a length, its cache's, and an empty one is falsy.)
        self._encoder: PythonEncoder | native.NativeEncoder = (
            PythonEncoder(self._cache, self._split, by_id) if native_encoder is None else native_encoder
        )
        if piece_model is not None:
            self._cache = _PieceCache(piece_model.encode, cache_size)
            self._encoder = PythonEncoder(self._cache, self._split, by_id)
        if template is not None:
            if not isinstance(template, Template):
                raise ValueError(f"template: expected a Template, got {type(template).__name__}")
            unknown = [i for i in (*template.prefix, *template.suffix) if i not in table]
            if unknown:
                raise ValueError(f"template: id {unknown[0]!r} is not in the vocabulary; use a token's id")
        self._template = template
        self._special_matchers: dict[frozenset[str], tuple[re.Pattern[str] | None, int]] = {}

    # ------------------------------------------------------------------ construction helpers

    @property
    def _ids_of(self) -> dict[bytes, int]:
        """bytes -> id over the ordinary tokens, then the special tokens' UTF-8 (an ordinary token's id wins);
        made when first used for a piece model (see ``__init__``)."""
        ids_of = self._ids_of_made
        if ids_of is None:
            self._set_byte_tables(self._vocab, self._specials)
            ids_of = cast("dict[bytes, int]", self._ids_of_made)
        return ids_of

    @property
    def _byte_chars(self) -> dict[int, str]:
        """Each byte -> its token's id as a char, for ``str.translate`` (made with :attr:`_ids_of`)."""
        chars = self._byte_chars_made
        if chars is None:
            self._set_byte_tables(self._vocab, self._specials)
            chars = cast("dict[int, str]", self._byte_chars_made)
        return chars

    def _set_byte_tables(self, table: dict[int, bytes], specials: dict[str, int]) -> None:
        """Make :attr:`_ids_of`, :attr:`_byte_chars` and ``_missing_bytes``.

        Raises:
            ValueError: A single byte that UTF-8 uses has no token.
        """
        # With duplicate bytes the smallest id wins (the dict is built from the largest id down, so the
        # smallest is written last). Built in C: a rank file has 200k.
        special_ids = set(specials.values())
        ordinary = sorted(table)
        if special_ids:
            ordinary = list(filterfalse(special_ids.__contains__, ordinary))  # (in C: 50k-200k ids)
        ordinary.reverse()
        ids_of: dict[bytes, int] = dict(zip(map(table.__getitem__, ordinary), ordinary, strict=True))
        del ordinary
        for special, i in specials.items():
            ids_of.setdefault(special.encode("utf-8"), i)
        missing = [b for b in range(256) if bytes([b]) not in ids_of]
        if any(b not in UTF8_UNUSED_BYTES for b in missing):
            first = next(b for b in missing if b not in UTF8_UNUSED_BYTES)
            raise ValueError(
                f"vocab: {len(missing)} single byte(s) have no token (first: 0x{first:02x}); a "
                "byte-level BPE vocabulary needs all 256 single bytes (only 0xc0, 0xc1 and 0xf5-0xff, which "
                "UTF-8 never uses, may be missing)"
            )
        self._missing_bytes = tuple(missing)
        # latin-1 decoding turns bytes into code points 0-255; translate() then maps them to token ids. A
        # missing byte (never in a text's UTF-8) has no entry.
        self._byte_chars_made = {b: chr(ids_of[bytes([b])]) for b in range(256) if b not in missing}
        self._ids_of_made = ids_of

    @staticmethod
    def _checked_vocab(vocab: Mapping[int, bytes]) -> dict[int, bytes]:
        """``vocab`` as a new dict, checked (natively, else in C, when all is well: a rank file has 200k
        tokens; item by item only to name a fault)."""
        table = dict(vocab)
        plain = native.plain_vocab(table, MAX_VOCAB_SIZE)  # one native pass (None: the kernel is off)
        if plain or (
            plain is None
            and set(map(type, table)) <= {int}
            and set(map(type, table.values())) <= {bytes}
            and (not table or (min(table) >= 0 and max(table) < MAX_VOCAB_SIZE))
        ):
            return table
        for i, token in table.items():  # something is wrong, or a subclass of int or bytes: one by one
            if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < MAX_VOCAB_SIZE:
                raise ValueError(f"vocab: id {i!r} must be an integer in 0..{MAX_VOCAB_SIZE - 1}")
            if not isinstance(token, bytes):
                raise ValueError(f"vocab: token {i} is {type(token).__name__}, expected bytes")
        return {int(i): bytes(token) for i, token in table.items()}

    def _rank_merges(
        self, merges: tuple[tuple[bytes, bytes], ...], ids_of: Mapping[bytes, int]
    ) -> list[tuple[int, int, int]]:
        """``(left id, right id, merged id)`` of each merge, by rank (for the native encoder, and
        :meth:`_rank_tables` for the Python one).

        Raises:
            ValueError: A merge uses or makes bytes that are not a token.
        """
        # Natively, else in C-speed passes (a tokenizer.json has 50k-300k merges); the loop below when a
        # lookup fails, for the message naming the merge.
        found = native.merge_ids(merges, ids_of) if isinstance(ids_of, dict) else None
        if found is not None:
            return found
        lefts = [left for left, _ in merges]
        rights = [right for _, right in merges]
        get = ids_of.__getitem__
        try:
            left_ids = list(map(get, lefts))
            right_ids = list(map(get, rights))
            made_ids = list(map(get, map(bytes.__add__, lefts, rights)))
        except KeyError:
            pass
        else:
            return list(zip(left_ids, right_ids, made_ids, strict=True))
        triples: list[tuple[int, int, int]] = []
        for rank, (left, right) in enumerate(merges):
            try:
                key = chr(ids_of[left]) + chr(ids_of[right])
                merged = chr(ids_of[left + right])
            except KeyError:
                absent = next(t for t in (left, right, left + right) if t not in ids_of)
                raise ValueError(
                    f"merges: merge {rank} ({left!r}, {right!r}) uses or makes {absent!r}, which is not in "
                    "the vocabulary; every merge's two tokens and their concatenation must be vocab entries"
                ) from None
            triples.append((ord(key[0]), ord(key[1]), ord(merged)))
        return triples

    def _rank_tables(self) -> tuple[dict[str, int], list[str]]:
        """The Python encoder's tables, built on first use from the merges by id: pair (two chars, the ids)
        -> rank, a pair listed twice keeping its first; and each rank's merged token as a char."""
        tables = self._rank_table
        if tables is None:
            triples = self.merge_ids()
            keys = [chr(left) + chr(right) for left, right, _ in triples]
            ranks: dict[str, int] = {}
            # A pair listed twice keeps its first rank: the later ones are written first, then overwritten.
            ranks.update(zip(reversed(keys), range(len(keys) - 1, -1, -1), strict=True))
            tables = self._rank_table = (ranks, [chr(made) for _, _, made in triples])
        return tables

    @staticmethod
    def _place_specials(
        table: dict[int, bytes], special_tokens: Iterable[str] | Mapping[str, int] | None
    ) -> dict[str, int]:
        """Give each special token its id, adding it to ``table`` when it is not there yet."""
        if special_tokens is None:
            return {}
        if isinstance(special_tokens, str):
            raise ValueError(
                "special_tokens: give a sequence of strings, e.g. ['<|endoftext|>'], not a single string"
            )
        specials: dict[str, int] = {}
        if isinstance(special_tokens, Mapping):
            for token, i in special_tokens.items():
                Tokenizer._check_special(token, specials)
                if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < MAX_VOCAB_SIZE:
                    raise ValueError(f"special_tokens: id {i!r} of {token!r} must be an integer in 0..")
                encoded = token.encode("utf-8")
                if table.setdefault(i, encoded) != encoded:
                    raise ValueError(
                        f"special_tokens: {token!r} has id {i}, which the vocab gives to {table[i]!r}; use a "
                        "free id or that token's own id"
                    )
                specials[token] = i
            return specials
        by_bytes: dict[bytes, int] = {}
        for i in sorted(table, reverse=True):
            by_bytes[table[i]] = i  # descending order, so the smallest id of repeated bytes wins
        for token in special_tokens:
            Tokenizer._check_special(token, specials)
            encoded = token.encode("utf-8")
            i = by_bytes.get(encoded)
            if i is None:
                i = max(table, default=-1) + 1
                table[i] = encoded
                by_bytes[encoded] = i
            specials[token] = i
        return specials

    @staticmethod
    def _check_special(token: object, seen: Mapping[str, int]) -> None:
        if not isinstance(token, str) or not token:
            raise ValueError(f"special_tokens: {token!r} is not a non-empty string")
        if token in seen:
            raise ValueError(f"special_tokens: {token!r} is listed twice; list each special token once")

    @classmethod
    def from_files(
        cls,
        vocab_path: str | os.PathLike[str],
        merges_path: str | os.PathLike[str],
        special_tokens: Iterable[str] | None = None,
        *,
        pattern: str = "gpt2",
    ) -> Tokenizer:
        """Load GPT-2 style ``vocab.json`` + ``merges.txt`` (the ``#version`` header line is optional).

        Raises:
            FormatError: A file is malformed; the message names the file and the line or key.

        Example:
            >>> tok = Tokenizer.from_files("vocab.json", "merges.txt", ["<|endoftext|>"])
        """
        from ..formats.gpt2_read import read_merges_txt, read_vocab_json

        specials = list(special_tokens or ())
        vocab = read_vocab_json(vocab_path, raw_tokens=specials)
        merges = read_merges_txt(merges_path)
        return cls(vocab, merges, specials, pattern=pattern)

    @classmethod
    def from_result(cls, result: TrainResult, *, cache_size: int = DEFAULT_CACHE_SIZE) -> Tokenizer:
        """The tokenizer a training run produced.

        Example:
            >>> tok = Tokenizer.from_result(train(config))
        """
        return cls(
            result.vocab,
            result.merges if result.rule == "merges" else None,
            result.special_token_ids,
            pattern=result.pattern,
            cache_size=cache_size,
            ignore_merges=result.ignore_merges,
        )

    # ------------------------------------------------------------------ properties

    @property
    def _regex(self) -> Any:
        """The compiled pattern (a preset's compiled on first use)."""
        if self._compiled is None:
            self._compiled = compile_pattern(self._pattern)
        return self._compiled

    @property
    def vocab(self) -> Mapping[int, bytes]:
        """Token id -> bytes (read-only), special tokens included."""
        return MappingProxyType(self._vocab)

    @property
    def merges(self) -> tuple[tuple[bytes, bytes], ...]:
        """The merges in rank order; under tiktoken's rule (:attr:`rule` ``"ranks"``), one per token that BPE
        makes from two lower-ranked tokens, derived on first use (natively when the kernel is on)."""
        if self._merges is None:
            if self._merge_table is not None:
                self._merges = tuple(self._merge_table.pairs())
            else:
                token = self._vocab.__getitem__
                self._merges = tuple((token(left), token(right)) for left, right, _ in self.merge_ids())
        return self._merges

    def _native_merge_summary(self) -> tuple[int, int, int] | None:
        """Under tiktoken's rule, before :meth:`merge_ids` was asked for: ``(merges, deepest id, its
        height)`` from the native encoder, which derives the merges without handing them over (see
        ``analysis.merge_summary``); None when it does not apply (merges given or derived already, the
        Python encoder, bytes under two ids)."""
        if self._rank_by_merges or self._merge_ids is not None or len(self._ids_of) < len(self._vocab):
            return None
        return self._encoder.merge_summary()

    def _table_merge_summary(self) -> tuple[int, int, tuple[int, int] | None] | None:
        """With merges read natively (a merge table), before :meth:`merge_ids` was asked for: ``(merges,
        tokens they make that are not single bytes, (deepest id, its height) or None)`` computed natively
        (see ``analysis.merge_summary``); None otherwise."""
        if self._merge_table is None or self._merge_ids is not None:
            return None
        if self._piece_model is not None and self._ids_of_made is None:
            # A piece model's merges make pieces of two characters or more, whose bytes are never a single
            # byte's token: no merge makes a byte id, so none is needed (and bytes -> id stays unmade).
            return self._merge_table.summary([])
        byte_ids = [i for b in range(256) if (i := self._ids_of.get(bytes([b]))) is not None]
        return self._merge_table.summary(byte_ids)

    def merge_ids(self) -> Sequence[tuple[int, int, int]]:
        """The merges in rank order by id, ``(left id, right id, merged id)``: the ids of the tokens
        :attr:`merges` names (for bytes two tokens share, the smallest id, as :meth:`token_id` gives; for a
        SentencePiece-style model, the pieces' ids, not those of byte tokens with the same bytes). What
        :class:`~bpe_studio.engine.encoding.analysis.MergeIndex` indexes, without looking up any bytes; under
        tiktoken's rule derived on first use (natively when the kernel is on), without building
        :attr:`merges`.

        Example:
            >>> Tokenizer({i: bytes([i]) for i in range(256)} | {256: b"ab"}, [(b"a", b"b")]).merge_ids()
            [(97, 98, 256)]
        """
        if self._merge_ids is None and self._merge_table is not None:
            self._merge_ids = self._merge_table.ids()
            if self._merge_ids is None and self._piece_model is not None:
                self._merge_ids = _piece_merge_ids(self._piece_model, self.merges, self._ids_of)
        if self._merge_ids is None:
            found = self._encoder.derive_merges()
            if found is None:
                ordinary = set(self._ids_of.values()) - set(self._specials.values())
                ids_of = self._ids_of
                self._merge_ids = [
                    (ids_of[a], ids_of[b], ids_of[a + b])
                    for a, b in derive_merges({i: self._vocab[i] for i in ordinary})
                ]
            elif len(self._ids_of) < len(self._vocab):
                # Bytes under two ids: the id token_id gives them, as for merges listed as bytes.
                ids_of, token = self._ids_of, self._vocab.__getitem__
                self._merge_ids = [
                    (ids_of[token(a)], ids_of[token(b)], ids_of[token(m)]) for a, b, m in found
                ]
            else:
                self._merge_ids = found
        return self._merge_ids

    @property
    def rule(self) -> Literal["merges", "ranks"]:
        """How pairs are ranked: ``"merges"`` (only the listed merges, by their order: Hugging Face
        ``tokenizers``, GPT-2) or ``"ranks"`` (any two parts whose concatenation is a token, by its id:
        tiktoken, for rank files)."""
        return "merges" if self._rank_by_merges else "ranks"

    @property
    def special_tokens(self) -> Mapping[str, int]:
        """Special token -> id (read-only)."""
        return MappingProxyType(self._specials)

    @property
    def pattern(self) -> str:
        """The pre-tokenization regex (preset names are expanded)."""
        return self._pattern

    @property
    def pattern_name(self) -> str | None:
        """The preset name of the pattern (``gpt2``, ``cl100k``, ``o200k``), or None for a custom regex."""
        return preset_name(self._pattern)

    @property
    def template(self) -> Template | None:
        """The ids :meth:`encode` adds around every text (BOS/EOS), or None."""
        return self._template

    @property
    def ignore_merges(self) -> bool:
        """Whether a pre-token that is an ordinary token is taken whole, without merging (tiktoken's rule)."""
        return self._ignore_merges

    @property
    def normalizer(self) -> str | None:
        """``"NFC"`` when ordinary text is normalized before encoding, else None."""
        return self._normalizer

    @property
    def pipeline(self) -> Pipeline | None:
        """The Hugging Face normalizer and pre-tokenizer that cut ordinary text into pieces, or None when
        :attr:`pattern` (and :attr:`normalizer`) do."""
        return self._pipeline

    @property
    def hf_decoder(self) -> Decoder | None:
        """The Hugging Face decoder :meth:`decode` applies, or None (the tokens' bytes read as UTF-8)."""
        return self._hf_decoder

    @property
    def piece_model(self) -> PieceModel | None:
        """The SentencePiece-style BPE that encodes the text, or None for byte-level BPE."""
        return self._piece_model

    @property
    def missing_bytes(self) -> tuple[int, ...]:
        """The single bytes with no token, in order: empty but for vocabularies like GPT-NeoX-20B's, which
        lack the bytes UTF-8 never uses (:data:`UTF8_UNUSED_BYTES`). Every text still encodes; a format or a
        view that needs all 256 single bytes refuses such a tokenizer.

        Example:
            >>> tok.missing_bytes
            ()
        """
        return self._missing_bytes

    @property
    def vocab_size(self) -> int:
        """The number of tokens, special tokens included."""
        return len(self._vocab)

    @property
    def cache_size(self) -> int:
        """How many pre-tokens the encoding cache holds at most."""
        return self._cache.limit

    def clear_cache(self) -> None:
        """Forget the cached pre-token encodings (e.g. to measure a cold encode)."""
        self._encoder.clear_cache()

    @property
    def backend(self) -> native.Backend:
        """The BPE that encodes pre-tokens: ``"native"`` (rust/src/encode.rs) or ``"python"`` (:meth:`_bpe`),
        chosen when the tokenizer is made (see :func:`bpe_studio.engine.backend`)."""
        return self._encoder.backend

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes of one token.

        Raises:
            UnknownTokenIdError: ``token_id`` is not in the vocabulary (the message says the valid range).

        Example:
            >>> tok.token_bytes(256)
            b' t'
        """
        try:
            return self._decoder[token_id]
        except (KeyError, TypeError):
            raise UnknownTokenIdError(self._unknown_id_message(token_id)) from None

    def token_id(self, token: bytes | str) -> int | None:
        """The id of the token with these bytes (a ``str`` is UTF-8 encoded), or None.

        Example:
            >>> tok.token_id(b"hi")
            5303
        """
        key = token.encode("utf-8") if isinstance(token, str) else bytes(token)
        return self._ids_of.get(key)

    def __repr__(self) -> str:
        name = self.pattern_name or "custom pattern"
        rule = f"{len(self.merges)} merges" if self._rank_by_merges else "tiktoken's rule"
        sizes = f"{self.vocab_size} tokens, {rule}, {len(self._specials)} special"
        return f"<Tokenizer {sizes}, {name}>"

    # ------------------------------------------------------------------ BPE on one pre-token

    def _bpe(self, piece: str) -> tuple[int, ...]:
        """Merge one pre-token's bytes by rank; returns the token ids."""
        return self._bpe_raw(piece.encode("utf-8").decode("latin-1"))

    def _bpe_raw(self, raw: str) -> tuple[int, ...]:
        """Merge bytes (as a latin-1 ``str``, one code point per byte) by rank; returns the token ids."""
        if self._ignore_merges:
            whole = self._whole.get(raw)
            if whole is not None:
                return (whole,)
        if not self._rank_by_merges:
            rank_of, byte_chars = self._whole, self._byte_chars
            parts = merge_parts(rank_of, raw)
            return tuple(rank_of[p] if len(p) > 1 else ord(byte_chars[ord(p)]) for p in parts)
        word = raw.translate(self._byte_chars)
        n = len(word)
        if n < 2:
            return (ord(word),) if n else ()
        if n > _LONG_WORD:
            return self._bpe_long(word)
        rank_of, new_chars = self._rank_tables()
        get = rank_of.get
        ranks = [get(word[i : i + 2], _NO_RANK) for i in range(n - 1)]
        while ranks:
            best = min(ranks)
            if best == _NO_RANK:
                break
            i = ranks.index(best)  # leftmost of the lowest rank
            word = word[:i] + new_chars[best] + word[i + 2 :]
            # The pair at i is gone; the pairs on either side of the new token change.
            del ranks[i]
            if i:
                ranks[i - 1] = get(word[i - 1 : i + 1], _NO_RANK)
            if i < len(ranks):
                ranks[i] = get(word[i : i + 2], _NO_RANK)
        return tuple(map(ord, word))

    def _bpe_long(self, word: str) -> tuple[int, ...]:
        """The same merges as :meth:`_bpe` for a long pre-token: a linked list and a queue of (rank,
        position), by rank in buckets (linear), or by a heap when the merges come out of order
        (:mod:`~bpe_studio.engine.encoding.merge_queue`).

        Node positions never change, so the smallest position among the lowest-rank pairs is the leftmost,
        as in the short-word loop. Queue entries can go stale; an entry is used only if its pair still has
        that rank (a rank belongs to one pair, so that means the pair is still there).
        """
        tokens = self._bpe_long_with(word, Buckets())
        if tokens is None:
            tokens = self._bpe_long_with(word, Heap())
            assert tokens is not None  # a heap takes every order
        return tuple(ord(t) for t in tokens if t)

    def _bpe_long_with(self, word: str, queue: MergeQueue) -> list[str] | None:
        """:meth:`_bpe_long`'s loop with a given queue: the tokens ("" where merged away), or None when the
        queue refused an entry."""
        rank_of, new_chars = self._rank_tables()
        get = rank_of.get
        tokens = list(word)
        n = len(tokens)
        following = list(range(1, n + 1))
        following[-1] = -1
        previous = list(range(-1, n - 1))
        for i in range(n - 1):
            r = get(word[i : i + 2])
            if r is not None and not queue.push(r, i):
                return None
        while (entry := queue.pop()) is not None:
            rank, i = entry
            j = following[i]
            if j < 0 or not tokens[i] or get(tokens[i] + tokens[j]) != rank:
                continue
            tokens[i] = new_chars[rank]
            tokens[j] = ""
            k = following[j]
            following[i] = k
            if k >= 0:
                previous[k] = i
                r = get(tokens[i] + tokens[k])
                if r is not None and not queue.push(r, i):
                    return None
            h = previous[i]
            if h >= 0:
                r = get(tokens[h] + tokens[i])
                if r is not None and not queue.push(r, h):
                    return None
        return tokens

    # ------------------------------------------------------------------ encoding

    def _encode_pieces(self, pieces: list[str]) -> list[int]:
        """The ids of pre-tokens, one after the other, through the cache."""
        return self._encoder.encode_pieces(pieces)

    def _encode_each(self, pieces: list[str]) -> Iterable[Sequence[int]]:
        """Each pre-token's ids, through the cache.

        Example:
            >>> list(tok._encode_each(["hi", "!"]))
            [(5303,), (0,)]
        """
        return self._encoder.encode_each(pieces)

    def _encode_data(self, pieces: list[bytes]) -> list[int]:
        """The ids of pieces of bytes, one after the other (a :attr:`pipeline`'s pieces).

        Pieces are whole characters unless a step after ``ByteLevel`` cut one (a ``Punctuation`` step sees
        ``"¡"`` in GPT-2's spelling of some bytes): those few go through :meth:`_bpe_raw`.
        """
        try:
            return self._encoder.encode_pieces([piece.decode("utf-8") for piece in pieces])
        except UnicodeDecodeError:
            out: list[int] = []
            for piece in pieces:
                try:
                    out += self._encoder.encode_pieces([piece.decode("utf-8")])
                except UnicodeDecodeError:
                    out += self._bpe_raw(piece.decode("latin-1"))
            return out

    def _ordinary(self, text: str, first: bool) -> list[int]:
        """The ids of ordinary ``text``; ``first`` says whether it starts the whole text (a
        :attr:`pipeline`'s ``Metaspace`` with ``prepend_scheme: "first"`` asks)."""
        model = self._piece_model
        if model is not None:
            if not text or model.pipeline is None:
                return self._encoder.encode_pieces([text] if text else [])
            pieces = model.pipeline.pieces(_fix_surrogates(text), first=first)
            return self._encoder.encode_pieces([p.text for p in pieces])
        if self._pipeline is None:
            return self.encode_ordinary(text)
        if not text:
            return []
        return self._encode_data([p.data for p in self._pipeline.pieces(_fix_surrogates(text), first=first)])

    def encode_ordinary(self, text: str) -> list[int]:
        """Encode text, treating special tokens as ordinary text (and adding no :attr:`template` ids).

        Example:
            >>> tok.encode_ordinary("<|endoftext|>")
            [27, 91, 437, 1659, 5239, 91, 29]
        """
        if self._pipeline is not None or self._piece_model is not None:
            return self._ordinary(text, True)
        if self._normalizer is not None:
            text = unicodedata.normalize("NFC", text)
        try:
            return self._encoder.encode_text(text)
        except UnicodeEncodeError:
            # Lone surrogates have no UTF-8 bytes. As tiktoken does, join the ones that form a pair and
            # make the others U+FFFD; checked only on failure so ordinary text pays nothing.
            return self.encode_ordinary(_fix_surrogates(text))

    def encode_ordinary_batch(self, texts: Sequence[str], *, num_threads: int = 8) -> list[list[int]]:
        """:meth:`encode_ordinary` of each text, in order; with the native kernel and a preset pattern the
        texts are encoded on up to ``num_threads`` native threads (the GIL released), as tiktoken's
        ``encode_ordinary_batch`` does. Otherwise they are encoded one after the other.

        Example:
            >>> tok.encode_ordinary_batch(["hello", " world"])
            [[31373], [995]]
        """
        if not isinstance(num_threads, int) or num_threads < 1:
            raise ValueError(f"num_threads: {num_threads!r} must be a positive integer")
        texts = list(texts)
        for text in texts:
            if not isinstance(text, str):
                raise TypeError(f"encode_ordinary_batch: expected str texts, got {type(text).__name__}")
        if self._pipeline is not None or self._piece_model is not None:
            return [self._ordinary(text, True) for text in texts]
        if self._normalizer is not None:
            texts = [unicodedata.normalize("NFC", text) for text in texts]
        try:
            return self._encoder.encode_batch(texts, threads=num_threads)
        except UnicodeEncodeError:
            texts = [_fix_surrogates(text) for text in texts]
            return self._encoder.encode_batch(texts, threads=num_threads)

    def encode_ordinary_batch_arrays(
        self, texts: Sequence[str], *, num_threads: int = 8
    ) -> tuple[NDArray[np.uint32], NDArray[np.int64]]:
        """:meth:`encode_ordinary_batch` as two numpy arrays instead of a list per text: ``ids``, the ids of
        all the texts one after the other (uint32), and ``offsets`` (int64, ``len(texts) + 1`` of them), text
        i's ids being ``ids[offsets[i]:offsets[i + 1]]``. The same ids; with the native kernel and a preset
        pattern no Python int is made per id, so the threads are not held back by the one thread that
        makes the lists (the GIL's): the way to feed a model, or to use many threads.

        Example:
            >>> ids, offsets = tok.encode_ordinary_batch_arrays(["hello", " world"])
            >>> ids.tolist(), offsets.tolist()
            ([31373, 995], [0, 1, 2])
        """
        import numpy as np  # here: importing numpy costs more start-up than most encodes take

        if not isinstance(num_threads, int) or num_threads < 1:
            raise ValueError(f"num_threads: {num_threads!r} must be a positive integer")
        texts = list(texts)
        for text in texts:
            if not isinstance(text, str):
                raise TypeError(
                    f"encode_ordinary_batch_arrays: expected str texts, got {type(text).__name__}"
                )
        flat: tuple[bytearray, bytearray] | None = None
        if self._pipeline is None and self._piece_model is None:
            if self._normalizer is not None:
                texts = [unicodedata.normalize("NFC", text) for text in texts]
            try:
                flat = self._encoder.encode_batch_flat(texts, threads=num_threads)
            except UnicodeEncodeError:
                texts = [_fix_surrogates(text) for text in texts]
                flat = self._encoder.encode_batch_flat(texts, threads=num_threads)
        if flat is not None:
            return np.frombuffer(flat[0], dtype=np.uint32), np.frombuffer(flat[1], dtype=np.int64)
        # No native text encoder: the lists, joined (the same ids by definition).
        lists = self.encode_ordinary_batch(texts, num_threads=num_threads)
        offsets = np.zeros(len(lists) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, lists), dtype=np.int64, count=len(lists)), out=offsets[1:])
        ids = np.fromiter(chain.from_iterable(lists), dtype=np.uint32, count=int(offsets[-1]))
        return ids, offsets

    def _encode_joined(self, texts: list[str], *, separator: int | None, width: int) -> bytes | None:
        """:meth:`encode_ordinary` of each text one after the other, ``separator`` between two, as
        little-endian integers of ``width`` bytes (2 or 4) in one native call (encode-corpus's rows); None
        when this tokenizer has no native text encoder (the caller encodes in Python).

        Example:
            >>> tok._encode_joined(["a", "b"], separator=50256, width=2)
            b'@\\x00P\\xc4A\\x00'
        """
        if self._encoder.preset is None:
            return None
        if self._normalizer is not None:
            texts = [unicodedata.normalize("NFC", text) for text in texts]
        try:
            return self._encoder.encode_join(texts, separator=separator, width=width)
        except UnicodeEncodeError:
            texts = [_fix_surrogates(text) for text in texts]
            return self._encoder.encode_join(texts, separator=separator, width=width)

    def encode_batch(
        self,
        texts: Sequence[str],
        *,
        num_threads: int = 8,
        allowed_special: AllowedSpecial = "all",
        disallowed_special: DisallowedSpecial = "all",
        add_special_tokens: bool = True,
    ) -> list[list[int]]:
        """:meth:`encode` of each text, in order, the ordinary text between special tokens encoded as by
        :meth:`encode_ordinary_batch` (on up to ``num_threads`` native threads).

        Raises:
            DisallowedSpecialTokenError: A text holds a disallowed special token.

        Example:
            >>> tok.encode_batch(["hi<|endoftext|>", "there"])
            [[5303, 50256], [8117]]
        """
        if self._pipeline is not None or self._piece_model is not None:
            # A segment's pieces depend on where it starts (Metaspace's "first"): text by text.
            return [
                self.encode(
                    text,
                    allowed_special=allowed_special,
                    disallowed_special=disallowed_special,
                    add_special_tokens=add_special_tokens,
                )
                for text in texts
            ]
        allowed, disallowed = self._resolve_specials(allowed_special, disallowed_special)
        matcher, _ = self._special_matcher(allowed)
        # Each text as its ordinary pieces (indices into `pieces`) and special ids, in order.
        pieces: list[str] = []
        layouts: list[list[int | str]] = []
        for text in texts:
            if not isinstance(text, str):
                raise TypeError(f"encode_batch: expected str texts, got {type(text).__name__}")
            self._check_disallowed(text, disallowed)
            layout: list[int | str] = []
            pos = 0
            if matcher is not None:
                for m in matcher.finditer(text):
                    layout.append(len(pieces))
                    pieces.append(text[pos : m.start()])
                    layout.append(m.group())
                    pos = m.end()
            layout.append(len(pieces))
            pieces.append(text[pos:])
            layouts.append(layout)
        encoded = self.encode_ordinary_batch(pieces, num_threads=num_threads)
        template = self._template if add_special_tokens else None
        out: list[list[int]] = []
        for layout in layouts:
            ids: list[int] = [*template.prefix] if template is not None else []
            for part in layout:
                if isinstance(part, str):
                    ids.append(self._specials[part])
                else:
                    ids += encoded[part]
            if template is not None:
                ids += template.suffix
            out.append(ids)
        return out

    def _special_matcher(self, allowed: frozenset[str]) -> tuple[re.Pattern[str] | None, int]:
        """A regex for the allowed special tokens (longest first) and the longest one's length; memoised."""
        found = self._special_matchers.get(allowed)
        if found is None:
            tokens = sorted(allowed)
            found = (special_token_regex(tokens), max((len(t) for t in tokens), default=0))
            self._special_matchers[allowed] = found
        return found

    def _resolve_specials(
        self, allowed_special: AllowedSpecial, disallowed_special: DisallowedSpecial
    ) -> tuple[frozenset[str], frozenset[str]]:
        """tiktoken's semantics: ``"all"`` allows every special; disallowed ``"all"``: all not allowed."""
        registered = frozenset(self._specials)
        if allowed_special == "all":
            allowed = registered
        elif isinstance(allowed_special, str):
            raise ValueError("allowed_special: give 'all' or a set of special tokens, e.g. {'<|endoftext|>'}")
        else:
            # As in tiktoken, strings that are not special tokens of this tokenizer are ignored.
            allowed = registered & frozenset(allowed_special)
        if disallowed_special == "all":
            disallowed = registered - allowed
        elif isinstance(disallowed_special, str):
            raise ValueError("disallowed_special: give 'all' or a collection of strings, e.g. ()")
        else:
            disallowed = frozenset(disallowed_special)
        return allowed, disallowed

    def _check_disallowed(self, text: str, disallowed: frozenset[str]) -> None:
        if disallowed:
            matcher, _ = self._special_matcher(disallowed)
            assert matcher is not None
            found = matcher.search(text)
            if found is not None:
                raise DisallowedSpecialTokenError(found.group(), found.start())

    def encode(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = "all",
        disallowed_special: DisallowedSpecial = "all",
        add_special_tokens: bool = True,
    ) -> list[int]:
        """Encode text to token ids.

        Args:
            text: The text.
            allowed_special: Special tokens recognised in the text (longest match first); by default all
                registered ones. Other occurrences are encoded as ordinary text.
            disallowed_special: Strings whose presence raises :class:`DisallowedSpecialTokenError`; ``"all"``
                (the default) means every registered special token that is not allowed.
            add_special_tokens: Add the :attr:`template`'s ids (BOS/EOS) around the text, as ``tokenizers``
                does by default; False leaves them out. Nothing changes for a tokenizer without a template.

        Raises:
            DisallowedSpecialTokenError: The text holds a disallowed special token.

        Example:
            >>> tok.encode("hi<|endoftext|>")
            [5303, 50256]
        """
        if add_special_tokens and self._template is not None:
            ids = self.encode(
                text,
                allowed_special=allowed_special,
                disallowed_special=disallowed_special,
                add_special_tokens=False,
            )
            return [*self._template.prefix, *ids, *self._template.suffix]
        allowed, disallowed = self._resolve_specials(allowed_special, disallowed_special)
        self._check_disallowed(text, disallowed)
        matcher, _ = self._special_matcher(allowed)
        if matcher is None:
            return self.encode_ordinary(text)
        out: list[int] = []
        specials = self._specials
        pos = 0
        for m in matcher.finditer(text):
            out += self._ordinary(text[pos : m.start()], pos == 0)
            out.append(specials[m.group()])
            pos = m.end()
        out += self._ordinary(text[pos:], pos == 0)
        return out

    def encode_iterable(
        self,
        iterable: Iterable[str],
        *,
        allowed_special: AllowedSpecial = "all",
        disallowed_special: DisallowedSpecial = "all",
        add_special_tokens: bool = True,
    ) -> Iterator[int]:
        """Encode a stream of text chunks lazily, with memory bounded whatever the stream's length.

        The ids equal ``encode("".join(chunks))`` however the text is cut into chunks (even inside a
        whitespace run or a special token): only the pre-tokens that later text cannot change are encoded;
        the rest waits for the next chunk. Memory is bounded by the chunk size and the longest pre-token.
        This holds for the preset patterns, and for any pattern that decides where a pre-token ending in a
        non-space character ends by looking at most 3 characters past it.

        Args:
            iterable: Text chunks, e.g. an open text file (its lines) or a list of strings.
            allowed_special: As for :meth:`encode`.
            disallowed_special: As for :meth:`encode`; the error is raised when the token is reached.
            add_special_tokens: As for :meth:`encode`.

        Example:
            >>> with open("corpus.txt", encoding="utf-8", newline="") as f:
            ...     ids = list(tok.encode_iterable(f))
            >>> ids == tok.encode(Path("corpus.txt").read_text(encoding="utf-8"))
            True
        """
        if add_special_tokens and self._template is not None:
            yield from self._template.prefix
            yield from self.encode_iterable(
                iterable,
                allowed_special=allowed_special,
                disallowed_special=disallowed_special,
                add_special_tokens=False,
            )
            yield from self._template.suffix
            return
        allowed, disallowed = self._resolve_specials(allowed_special, disallowed_special)
        if isinstance(iterable, str):
            iterable = (iterable,)
        matcher, longest = self._special_matcher(allowed)
        pending: list[str] = []
        pending_size = 0
        tail = ""
        first = True  # nothing of the text is encoded yet
        for chunk in iterable:
            if not isinstance(chunk, str):
                raise TypeError(f"encode_iterable: expected str chunks, got {type(chunk).__name__}")
            pending.append(chunk)
            pending_size += len(chunk)
            if pending_size >= _STREAM_BLOCK and pending_size >= len(tail):
                buffer = tail + "".join(pending)
                pending.clear()
                pending_size = 0
                carry = ""
                if _SURROGATE.search(buffer) is not None:
                    # A high surrogate at the end may pair with the next chunk's first character.
                    if "\ud800" <= buffer[-1] <= "\udbff":
                        buffer, carry = buffer[:-1], buffer[-1]
                    buffer = _fix_surrogates(buffer)
                self._check_disallowed(buffer, disallowed)
                ids, rest = self._encode_certain(buffer, matcher, longest, first)
                first = first and len(rest) == len(buffer)
                tail = rest + carry
                del buffer
                yield from ids
        buffer = _fix_surrogates(tail + "".join(pending))
        self._check_disallowed(buffer, disallowed)
        yield from self._encode_specials(buffer, matcher, first=first)

    def _encode_specials(
        self, text: str, matcher: re.Pattern[str] | None, *, first: bool = True
    ) -> list[int]:
        if matcher is None:
            return self._ordinary(text, first)
        out: list[int] = []
        pos = 0
        for m in matcher.finditer(text):
            out += self._ordinary(text[pos : m.start()], first and pos == 0)
            out.append(self._specials[m.group()])
            pos = m.end()
        out += self._ordinary(text[pos:], first and pos == 0)
        return out

    def _encode_certain(
        self, buffer: str, matcher: re.Pattern[str] | None, longest: int, first: bool = True
    ) -> tuple[list[int], str]:
        """Encode the start of ``buffer`` that no continuation can change; return the ids and the rest.

        Special tokens: the scan (leftmost, longest first) decides at position ``q`` by reading at most
        ``longest`` characters, so every decision at ``q <= len - longest`` is final: matches starting there
        are certain, and the text before them is certainly ordinary. With a :attr:`pipeline` these are the
        only certain cuts (a normalizer such as ``Strip`` sees the whole text between two special tokens).

        Pre-tokens: a cut at ``c`` is certain when ``c`` is a pre-token boundary of the known ordinary text,
        the character before it is not whitespace, and the text runs at least ``_STREAM_MARGIN`` characters
        past it. The preset patterns end a pre-token whose last character is not whitespace by looking at most
        that far ahead, and every earlier decision looked at most at the whitespace or same-class run it was
        in, which ends before ``c``; so nothing the matcher read before ``c`` depends on later text.
        """
        n = len(buffer)
        decided = n - longest + 1 if longest else n
        out: list[int] = []
        pos = 0
        if matcher is not None:
            for m in matcher.finditer(buffer):
                if m.start() >= decided:
                    break
                out += self._ordinary(buffer[pos : m.start()], first and pos == 0)
                out.append(self._specials[m.group()])
                pos = m.end()
        if self._pipeline is not None or self._piece_model is not None:
            return out, buffer[pos:]
        known = buffer[pos:decided] if decided > pos else ""
        later = buffer[max(pos, decided) :]
        if self._normalizer is not None:
            # The rest is normalized again with the next chunk: NFC(NFC(a) + b) == NFC(a + b).
            known = unicodedata.normalize("NFC", known)
        if self._encoder.preset is not None:
            # Text -> ids natively up to the last safe newline boundary (a printable ASCII character and a
            # newline, then an ASCII letter: no preset's pre-token spans it, and the letter after it is
            # known); without one, the pre-tokens decide the cut below.
            cut = last_newline_boundary(known, len(known) - _STREAM_MARGIN)
            if cut:
                try:
                    out += self._encoder.encode_text(known[:cut])
                except UnicodeEncodeError:
                    pass  # a lone surrogate (encode_iterable fixes them; kept as a guard): the path below
                else:
                    return out, known[cut:] + later
        pieces = self._split(known)
        # Walk back from the end over the pre-tokens to the last certain cut (a few steps). Pre-tokens tile
        # the text for the presets; a custom pattern may skip characters: then finditer gives the ends.
        limit = len(known) - _STREAM_MARGIN
        count = len(pieces)
        if sum(map(len, pieces)) == len(known):
            cut = len(known)
            while count and (cut > limit or _is_space(known[cut - 1])):
                cut -= len(pieces[count - 1])
                count -= 1
        else:
            ends = [m.end() for m in pretoken_matches(self._regex, known)]
            while count and (ends[count - 1] > limit or _is_space(known[ends[count - 1] - 1])):
                count -= 1
            cut = ends[count - 1] if count else 0
        if not count:
            return out, known + later
        out += self._encode_pieces(pieces[:count])
        return out, known[cut:] + later

    def encode_with_offsets(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = "all",
        disallowed_special: DisallowedSpecial = "all",
        add_special_tokens: bool = True,
    ) -> list[TokenSpan]:
        """Encode text and give each token the span of characters its bytes come from.

        The ids are those of :meth:`encode` with the same arguments (a template's ids get empty spans at the
        start and the end). A token that holds only some of a character's bytes spans that whole character and
        is marked ``partial``.

        Example:
            >>> [(s.id, s.start, s.end, s.partial) for s in tok.encode_with_offsets("a🙃")]
            [(64, 0, 1, False), (8582, 1, 2, True), (247, 1, 2, True), (225, 1, 2, True)]
        """
        if add_special_tokens and self._template is not None:
            # The template's tokens cover no text: empty spans at the start and the end.
            inner = self.encode_with_offsets(
                text,
                allowed_special=allowed_special,
                disallowed_special=disallowed_special,
                add_special_tokens=False,
            )
            end = len(text)
            return [
                *(TokenSpan(i, 0, 0) for i in self._template.prefix),
                *inner,
                *(TokenSpan(i, end, end) for i in self._template.suffix),
            ]
        allowed, disallowed = self._resolve_specials(allowed_special, disallowed_special)
        self._check_disallowed(text, disallowed)
        matcher, _ = self._special_matcher(allowed)
        # Each lone surrogate is encoded as U+FFFD here (one character for one, so offsets stay right).
        text = _SURROGATE.sub("\ufffd", text)
        spans: list[TokenSpan] = []
        pos = 0
        if matcher is not None:
            for m in matcher.finditer(text):
                self._offsets_ordinary(text, pos, m.start(), spans)
                spans.append(TokenSpan(self._specials[m.group()], m.start(), m.end()))
                pos = m.end()
        self._offsets_ordinary(text, pos, len(text), spans)
        return spans

    def _offsets_ordinary(self, text: str, start: int, end: int, spans: list[TokenSpan]) -> None:
        if self._piece_model is not None:
            self._offsets_pieces(text, start, end, spans)
            return
        if self._pipeline is not None:
            self._offsets_pipeline(text, start, end, spans)
            return
        if self._normalizer is not None:
            piece = text[start:end]
            normal = unicodedata.normalize("NFC", piece)
            if normal != piece:
                # Encode the normalized text, then give each token the original characters it came from.
                found: list[TokenSpan] = []
                self._offsets_plain(normal, 0, len(normal), found)
                firsts, lasts = _normalized_origins(piece, normal)
                spans.extend(
                    TokenSpan(s.id, start + firsts[s.start], start + lasts[s.end - 1], s.partial)
                    for s in found
                )
                return
        self._offsets_plain(text, start, end, spans)

    def _offsets_pipeline(self, text: str, start: int, end: int, spans: list[TokenSpan]) -> None:
        """Offsets through a :attr:`pipeline`: each byte of a piece knows the original characters it comes
        from (see :mod:`bpe_studio.engine.pretokenize.hf`), and a token spans those of its bytes. It is
        ``partial`` when a neighbouring byte outside it comes from the same character."""
        assert self._pipeline is not None
        if start == end:
            return
        pieces = self._pipeline.pieces(text[start:end], first=start == 0, align=True)
        where: list[tuple[int, ...]] = [span for piece in pieces for span in piece.spans or ()]
        decoder = self._decoder
        b = 0
        for piece in pieces:
            for i in self._encode_data([piece.data]):
                e = b + len(decoder[i])
                covered = where[b:e]
                partial = (b > 0 and where[b - 1][2] == where[b][2]) or (
                    e < len(where) and where[e][2] == where[e - 1][2]
                )
                spans.append(
                    TokenSpan(
                        i, start + min(s[0] for s in covered), start + max(s[1] for s in covered), partial
                    )
                )
                b = e

    def _offsets_pieces(self, text: str, start: int, end: int, spans: list[TokenSpan]) -> None:
        """Offsets through a :attr:`piece_model`: a piece's token spans the original characters of its
        characters; byte tokens (a character the vocabulary lacks) each span that character, ``partial``."""
        model = self._piece_model
        assert model is not None and model.pipeline is not None
        if start == end:
            return
        byte_ids = set(model.byte_ids)
        for piece in model.pipeline.pieces(text[start:end], first=start == 0, align=True):
            where = piece.spans or []
            c = 0  # the character of the piece where the next token starts
            left = 0  # bytes of that character still to come, inside byte tokens
            for i in self._encoder.encode_pieces([piece.text]):
                if i in byte_ids:
                    size = len(piece.text[c].encode("utf-8", errors="surrogatepass"))
                    left = left or size
                    s = where[c]
                    spans.append(TokenSpan(i, start + s[0], start + s[1], size > 1))
                    left -= 1
                    if not left:
                        c += 1
                    continue
                size = len(self._decoder[i].decode("utf-8", errors="surrogatepass"))
                covered = where[c : c + size]
                first, last = min(s[0] for s in covered), max(s[1] for s in covered)
                spans.append(TokenSpan(i, start + first, start + last, False))
                c += size

    def _offsets_plain(self, text: str, start: int, end: int, spans: list[TokenSpan]) -> None:
        decoder = self._decoder
        matches = list(pretoken_matches(self._regex, text[start:end]))
        pieces = [m.group() for m in matches]
        for m, piece, ids in zip(matches, pieces, self._encode_each(pieces), strict=True):
            base = start + m.start()
            if piece.isascii():
                for i in ids:
                    size = len(decoder[i])
                    spans.append(TokenSpan(i, base, base + size))
                    base += size
                continue
            # char_at[b] = index in the piece of the character that byte b belongs to; starts marks
            # the bytes that begin a character.
            char_at: list[int] = []
            starts: list[bool] = []
            for index, ch in enumerate(piece):
                width = len(ch.encode("utf-8", errors="surrogatepass"))
                char_at += [index] * width
                starts += [True] + [False] * (width - 1)
            starts.append(True)
            b = 0
            for i in ids:
                e = b + len(decoder[i])
                partial = not (starts[b] and starts[e])
                spans.append(TokenSpan(i, base + char_at[b], base + char_at[e - 1] + 1, partial))
                b = e

    # ------------------------------------------------------------------ decoding

    def _unknown_id_message(self, token_id: object) -> str:
        return (
            f"token id {token_id!r} is not in this tokenizer's vocabulary (it has {len(self._vocab)} tokens, "
            f"ids {min(self._vocab)}..{max(self._vocab)}); check that the ids come from this tokenizer"
        )

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The concatenated bytes of the tokens.

        Raises:
            UnknownTokenIdError: An id is not in the vocabulary.

        Example:
            >>> tok.decode_bytes([8582, 247])
            b'\\xf0\\x9f\\x99'
        """
        ids = _id_list(ids)
        found = self._encoder.decode_bytes(ids)
        if found is not None:
            return found
        # The first id that is not in the vocabulary (as the native kernel finds it): numpy's integer scalars
        # (in a list) count as the ints they hold, and are named as such.
        from numbers import Integral  # (here: a fault's path; opening a file needs no numbers, 0.2 ms)

        items: Sequence[object] = ids  # typed as ints, but a caller may pass anything
        bad = next((i for i in items if not isinstance(i, Integral) or int(i) not in self._decoder), None)
        raise UnknownTokenIdError(self._unknown_id_message(int(bad) if isinstance(bad, Integral) else bad))

    def decode(self, ids: Iterable[int]) -> str:
        """Decode token ids to text; bytes that are not valid UTF-8 become U+FFFD.

        Raises:
            UnknownTokenIdError: An id is not in the vocabulary.

        With a Hugging Face :attr:`hf_decoder`, the text is what it makes of the tokens' spellings (ordinary
        tokens in GPT-2's characters, special tokens as their text), as ``tokenizers`` decodes.

        Example:
            >>> tok.decode(tok.encode("Hello"))
            'Hello'
        """
        if self._piece_model is not None:
            return self._piece_model.decode_text(self.decode_bytes(ids))
        if self._hf_decoder is None:
            return self.decode_bytes(ids).decode("utf-8", errors="replace")
        ids = _id_list(ids)
        self.decode_bytes(ids)  # names the first unknown id
        names = {i: token for token, i in self._specials.items()}
        return self._hf_decoder.decode(
            [names[i] if i in names else bytes_to_text(self._decoder[i]) for i in ids]
        )


def _id_list(ids: Iterable[int]) -> list[int] | tuple[int, ...]:
    """``ids`` as a list or tuple of ids (kept, so that a bad id can be found again after a failure).

    A numpy array (anything with ``ndim`` and ``tolist``) becomes Python ints, exactly (a huge ``uint64``
    stays itself, a negative ``int32`` stays negative), so that both engines name the same first bad id;
    an array of more or fewer than one dimension is refused with one sentence.

    Raises:
        ValueError: A 2-D (or 0-D) array.

    Example:
        >>> _id_list(range(3))
        [0, 1, 2]
    """
    if isinstance(ids, (list, tuple)):
        return ids
    ndim = getattr(ids, "ndim", None)
    if ndim is not None and hasattr(ids, "tolist"):
        if ndim == 0:
            raise ValueError(
                "ids: a single number (a 0-d array) is not a sequence of token ids; pass a list of them "
                "([int(ids)])"
            )
        if ndim != 1:
            shape = "x".join(str(n) for n in getattr(ids, "shape", ()))
            raise ValueError(
                f"ids: an array of {ndim} dimensions (shape {shape}) is not a sequence of token ids; decode "
                "one row at a time (ids[0]), or flatten it first (ids.ravel())"
            )
        listed: list[int] = ids.tolist()
        return listed
    return list(ids)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _normalized_origins(text: str, normal: str) -> tuple[list[int], list[int]]:
    """For each character of ``normal`` (``text`` normalized), where its source starts and ends in ``text``.

    The text is cut before each character of combining class 0 and each cut is normalized alone; when that
    gives ``normal`` (it does unless two such characters compose, as Hangul jamo do), each character maps to
    its cut, otherwise every character maps to the whole text.

    Example:
        >>> _normalized_origins("e\u0301x", "\u00e9x")
        ([0, 2], [2, 3])
    """
    cuts = [i for i, ch in enumerate(text) if i == 0 or unicodedata.combining(ch) == 0] + [len(text)]
    firsts: list[int] = []
    lasts: list[int] = []
    for a, b in pairwise(cuts):
        size = len(unicodedata.normalize("NFC", text[a:b]))
        firsts += [a] * size
        lasts += [b] * size
    if (
        len(firsts) != len(normal)
        or "".join(unicodedata.normalize("NFC", text[a:b]) for a, b in pairwise(cuts)) != normal
    ):
        return [0] * len(normal), [len(text)] * len(normal)
    return firsts, lasts


def _fix_surrogates(text: str) -> str:
    """Join surrogate pairs and replace lone surrogates by U+FFFD, as tiktoken does before encoding.

    Example:
        >>> _fix_surrogates("a\\ud83d\\ude43\\udc00") == "a🙃\\ufffd"
        True
    """
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _is_space(ch: str) -> bool:
    """Whitespace for either Python or the ``regex`` module's ``\\s`` (they differ on a few characters)."""
    return ch.isspace() or _whitespace().match(ch) is not None
