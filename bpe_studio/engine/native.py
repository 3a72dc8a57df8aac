"""Which engine runs: the native kernel (``bpe_studio._native``, Rust through PyO3) or the pure-Python code.

The native kernel is built by ``pip install`` when a Rust toolchain is present; without one the package
installs and runs the pure-Python engine, which stays the readable reference. ``BPE_STUDIO_PURE=1`` forces
the Python path.

This module is the one door to the extension: no other module imports ``bpe_studio._native``
(tests/engine/test_native_seam.py checks it). It hands out the native implementations, or None when the
Python engine is to run, with Python-typed methods: :func:`encoder` (a :class:`NativeEncoder`),
:func:`merge_kernel` and :func:`count_table` (a :class:`NativeCountTable`). The class-table protocol of the
scanners (a call answers with a code point to ask for a larger table, see :func:`_with_classes`) stays
inside this module.

Example:
    >>> from bpe_studio.engine import backend
    >>> backend() in ("native", "python")
    True
"""

from __future__ import annotations

import array
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from itertools import islice
from types import ModuleType

# `typing` is imported by type checkers only (its import is a millisecond of every command's start-up):
# the protocols and aliases below exist for them.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal, Protocol, TypeAlias, TypeGuard

Backend: TypeAlias = 'Literal["native", "python"]'

#: Set to 1 (or any value but 0 and empty) to force the pure-Python engine.
PURE_ENV = "BPE_STUDIO_PURE"

MISSING_HINT = (
    "bpe-studio: note: the native kernel (bpe_studio._native) is not built, so training runs the slower "
    "pure-Python merge loop; to build it, install Rust (https://rustup.rs) and run `pip install -e .` again "
    f"(set {PURE_ENV}=1 to use the Python engine without this note)"
)


def _forced_pure() -> bool:
    return os.environ.get(PURE_ENV, "") not in ("", "0")


def _load() -> ModuleType | None:
    try:
        from .. import _native
    except ImportError:
        # Said once per process, at import, so that it never lands in the middle of a command's output;
        # and only to a person at a terminal: a script or a pipe reading stderr (the CLI's one-line errors)
        # gets no extra line, and can ask backend() instead.
        if not _forced_pure() and sys.stderr is not None and sys.stderr.isatty():
            print(MISSING_HINT, file=sys.stderr)
        return None
    return _native


# The extension module itself (None when it is not built); only this module uses it.
_native: ModuleType | None = _load()


def built() -> bool:
    """True when the native kernel (``bpe_studio._native``) is built, whether or not it is switched off.

    Example:
        >>> built() in (True, False)
        True
    """
    return _native is not None


def backend() -> Backend:
    """The engine that training uses now: ``"native"`` when the kernel is built and not switched off by
    ``BPE_STUDIO_PURE=1``, else ``"python"``.

    Example:
        >>> backend() in ("native", "python")
        True
    """
    return "python" if _native is None or _forced_pure() else "native"


def resolve(requested: Backend | None) -> Backend:
    """The backend to use for ``requested`` (None: :func:`backend`).

    Raises:
        ValueError: ``"native"`` was asked for but the kernel is not built, or an unknown name was given.
    """
    if requested is None:
        return backend()
    if requested == "native" and _native is None:
        raise ValueError(
            "the native kernel (bpe_studio._native) is not built: install Rust (https://rustup.rs) and run "
            "`pip install -e .`, or use backend='python'"
        )
    if requested not in ("native", "python"):
        raise ValueError(f"backend must be 'native' or 'python', not {requested!r}")
    return requested


# Pre-tokenization (the presets). The native scanners ask for each code point's class in a table built
# here with the `regex` module itself (the properties the patterns use), so that both agree on every
# character whatever Unicode version each was built with. The table grows on demand: ASCII first, then
# the Basic Multilingual Plane, then all of Unicode only if such a character occurs. The values are those
# of rust/src/pretok.rs: 0 other, 1 upper case and title case letters (Lu Lt), 2 lower case letters (Ll),
# 3 letters without case (Lm Lo), 4 marks (M), 5 numbers (N), 6 whitespace (\s).
_CLASSES = (
    (1, r"[\p{Lu}\p{Lt}]+"),
    (2, r"\p{Ll}+"),
    (3, r"[\p{Lm}\p{Lo}]+"),
    (4, r"\p{M}+"),
    (5, r"\p{N}+"),
    (6, r"\s+"),
)
_classes = [b""]  # the current table, in a list so that _with_classes can replace it


def _ascii_classes() -> bytes:
    """:func:`_class_table` ``(128)`` written out (tests hold them equal): ASCII's classes never change, and
    most texts need no more, so opening a file and encoding ASCII need not import ``regex`` (7 ms)."""
    table = bytearray(128)
    table[0x09:0x0E] = b"\x06" * 5  # \t \n \v \f \r
    table[0x20] = 6  # space
    table[0x30:0x3A] = b"\x05" * 10  # 0-9
    table[0x41:0x5B] = b"\x01" * 26  # A-Z
    table[0x61:0x7B] = b"\x02" * 26  # a-z
    return bytes(table)


#: The presets with a native pre-tokenizer.
NATIVE_PRESETS = ("gpt2", "cl100k", "o200k")
#: Every native pre-tokenizer (rust/src/pretok.rs ``SCANNERS``): the presets', then those of models' own
#: patterns, which are a preset's with other parameters, and ``superbpe`` for the superword split
#: (rust/src/pretok_superbpe.rs), which counts a superword run's stage 2 and encodes with its tokenizer
#: (``pretokenize.patterns.scanner_name`` finds the one of a pattern).
NATIVE_SCANNERS = (*NATIVE_PRESETS, "llama3", "qwen2", "qwen35", "nemo", "superbpe")


def _code_points(size: int) -> str:
    """Every code point below ``size``, in order, surrogates included (``size``: 128 or a multiple of 65,536).

    Built as UTF-32 with slice assignments in C, byte by byte: ``"".join(map(chr, range(size)))`` took 9 ms
    for the BMP and 150 ms for all of Unicode, a good part of a small training run's time in a fresh process.

    Example:
        >>> _code_points(0x10000) == "".join(map(chr, range(0x10000)))
        True
    """
    if size % 0x10000:
        return "".join(map(chr, range(size)))
    utf32 = bytearray(4 * size)
    utf32[0::4] = bytes(range(256)) * (size // 256)  # lowest byte: 0..255, again and again
    utf32[1::4] = b"".join(bytes([i]) * 256 for i in range(256)) * (size // 0x10000)
    utf32[2::4] = b"".join(bytes([i]) * 0x10000 for i in range(size // 0x10000))
    return utf32.decode("utf-32-le", "surrogatepass")


#: The ``regex`` release whose classes ``resources/unicode_classes.zlib`` holds (every code point's class, one
#: byte each, zlib): ``python tools/class_table.py`` writes both after an upgrade of ``regex``.
SHIPPED_REGEX = "2026.11.19"
SHIPPED_TABLE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "resources", "unicode_classes.zlib")


def _installed_regex_is(release: str) -> bool:
    """Whether the ``regex`` that ``import regex`` would load is ``release``, told by the installed package's
    metadata folder beside it (one look-up, no import). False when that cannot be told."""
    from importlib.machinery import PathFinder

    spec = PathFinder.find_spec("regex")
    folders = spec.submodule_search_locations if spec is not None else None
    if not folders:
        return False
    return os.path.isdir(os.path.join(os.path.dirname(folders[0]), f"regex-{release}.dist-info"))


def _shipped_class_table() -> bytes | None:
    """:func:`_computed_class_table` ``(0x110000)`` as shipped, when the installed ``regex`` is the release it
    was made with (tests/engine/pretokenize/test_class_table.py holds them equal), else None.

    A run over a text beyond ASCII imported ``regex`` (7-10 ms) and built the table (4-8 ms) in every fresh
    process: a tenth of a small Chinese corpus's training (issue 22). Another ``regex`` release may class a
    new character otherwise, so its own table is computed then, as before.
    """
    if not _installed_regex_is(SHIPPED_REGEX):
        return None
    import zlib

    try:
        with open(SHIPPED_TABLE, "rb") as file:
            table = zlib.decompress(file.read())
    except (OSError, zlib.error):
        return None  # (a damaged install: computed instead)
    return table if len(table) == 0x110000 else None


def _class_table(size: int) -> bytes:
    """Each code point's class below ``size`` (see above): the shipped table's when it applies, else
    computed with ``regex``.

    Example:
        >>> list(_class_table(128)[ord("0") : ord("0") + 1] + _class_table(128)[ord(" ") :][:2])
        [5, 6, 0]
    """
    shipped = _shipped_class_table()
    return shipped[:size] if shipped is not None else _computed_class_table(size)


def _computed_class_table(size: int) -> bytes:
    """Each code point's class below ``size``, found with the installed ``regex``.

    Example:
        >>> _computed_class_table(128) == _ascii_classes()
        True
    """
    import regex

    table = bytearray(size)
    chars = _code_points(size)
    for value, pattern in _CLASSES:
        for m in regex.finditer(pattern, chars):
            table[m.start() : m.end()] = bytes([value]) * (m.end() - m.start())
    return bytes(table)


def _with_classes(call: Callable[[bytes], Any]) -> Any:
    """``call(table)`` again with a larger class table for as long as it answers with a code point.

    Example:
        >>> _with_classes(lambda table: ord("中") if len(table) <= ord("中") else "中 fits")
        '中 fits'
    """
    while True:
        table = _classes[0]
        result = call(table)
        if not isinstance(result, int):
            return result
        if result < len(table) or len(table) >= 0x110000:  # (a kernel bug: never loop on it)
            raise RuntimeError(
                f"the native kernel asked for code point {result:#x} with a table of {len(table)}"
            )
        _classes[0] = (
            _ascii_classes() if result < 128 else _class_table(0x10000 if result < 0x10000 else 0x110000)
        )


def count_pretokens(preset: str, texts: list[str]) -> tuple[dict[str, int], int] | None:
    """Pre-tokens of ``texts`` under a native scanner (:data:`NATIVE_SCANNERS`), counted natively:
    (pre-token -> count, how many).

    None when the native kernel is off (:func:`backend`) or cannot take the text (a lone surrogate); the
    caller then uses the Python pre-tokenizer.

    Example:
        >>> found = count_pretokens("cl100k", ["it's 12345"])
        >>> found in (({"it": 1, "'s": 1, " ": 1, "123": 1, "45": 1}, 5), None)
        True
    """
    if _native is None or _forced_pure():
        return None
    kernel = _native
    try:
        return _with_classes(  # type: ignore[no-any-return]
            lambda classes: kernel.count_pretokens(preset, texts, classes)
        )
    except UnicodeEncodeError:
        return None


def parse_ranks(data: bytes) -> dict[int, bytes] | None:
    """A tiktoken rank file's lines as rank -> token bytes, read natively (rust/src/rankfile.rs), or None when
    the kernel is off or the file is not in canonical form (padded base64, decimal ranks, each rank and token
    once): the caller then reads it in Python, which names the line of any error.

    Example:
        >>> parse_ranks(b"YQ== 0\\nYmM= 1\\n") in ({0: b"a", 1: b"bc"}, None)
        True
    """
    if _native is None or _forced_pure():
        return None
    found: dict[int, bytes] | None = _native.parse_ranks(data)
    return found


def plain_vocab(vocab: dict[Any, Any], limit: int) -> bool | None:
    """Whether every key of ``vocab`` is an ``int`` in ``0..limit`` and every value ``bytes`` (exact types),
    checked natively in one pass; None when the kernel is off (the caller checks in Python).

    Example:
        >>> plain_vocab({0: b"a"}, 10) in (True, None), plain_vocab({0: "a"}, 10) in (False, None)
        (True, True)
    """
    if _native is None or _forced_pure():
        return None
    found: bool = _native.plain_vocab(vocab, limit)
    return found


def length_counts(tokens: list[bytes]) -> dict[int, int] | None:
    """How many of ``tokens`` have each length, counted natively; None when the kernel is off.

    Example:
        >>> length_counts([b"a", b"bc", b"d"]) in ({1: 2, 2: 1}, None)
        True
    """
    if _native is None or _forced_pure():
        return None
    found: dict[int, int] = _native.length_counts(tokens)
    return found


def positions_at_least(tokens: list[bytes], shortest: int) -> list[int] | None:
    """The positions in ``tokens`` of those at least ``shortest`` bytes long, found natively; None when the
    kernel is off.

    Example:
        >>> positions_at_least([b"a", b"bc", b"d"], 2) in ([1], None)
        True
    """
    if _native is None or _forced_pure():
        return None
    found: list[int] = _native.positions_at_least(tokens, shortest)
    return found


def parse_sentencepiece(
    data: bytes,
) -> tuple[list[str], list[float], list[int], list[tuple[int, int]], list[tuple[int, int | bytes]]] | None:
    """A SentencePiece ``.model``'s pieces and specs, read natively (rust/src/spmodel.rs): (texts, scores,
    types, the trainer spec's varint fields, the normalizer spec's fields), each field as (number, value) in
    file order; or None when the kernel is off or the file has a fault, which the Python reader then names.

    Example:
        >>> parse_sentencepiece(b"\\x0a\\x03\\x0a\\x01a") in ((["a"], [0.0], [1], [], []), None)
        True
    """
    if _native is None or _forced_pure():
        return None
    found: (
        tuple[list[str], list[float], list[int], list[tuple[int, int]], list[tuple[int, int | bytes]]] | None
    ) = _native.parse_sentencepiece(data)
    return found


def byte_level_bytes(texts: list[str]) -> list[bytes] | None:
    """Each byte-level text's bytes (GPT-2's alphabet, rust/src/bytelevel.rs), read natively; None when the
    kernel is off or a text holds a character outside the alphabet (the caller then reads them in Python).

    Example:
        >>> byte_level_bytes(["Ġhi", "Ċ"]) in ([b" hi", b"\\n"], None)
        True
    """
    if _native is None or _forced_pure():
        return None
    found: list[bytes] | None = _native.byte_level_bytes(texts)
    return found


if TYPE_CHECKING:  # (a type for type checkers: no `typing` at run time)

    class HfJsonTables(Protocol):
        """A ``tokenizer.json``'s vocab and merges read natively (rust/src/hfjson.rs):
        :func:`read_hf_json`."""

        def raw_vocab(self) -> dict[str, int]:
            """``model.vocab`` as ``json.load`` gives it."""
            ...

        def raw_merges(self) -> list[Any]:
            """``model.merges`` as ``json.load`` gives it (strs, or lists of two strs)."""
            ...

        def byte_level(self, specials: dict[str, int]) -> tuple[dict[int, bytes], MergeTable] | None:
            """(id -> bytes, the merges as a :class:`MergeTable`) read in GPT-2's byte-level alphabet, a key
            that ``specials`` gives the same id read as its UTF-8; None when an id is listed twice or a text
            is outside the alphabet (the loader then reads them one by one, naming the fault)."""
            ...


if TYPE_CHECKING:  # (a type for type checkers: no `typing` at run time)

    class MergeTable(Protocol):
        """A tokenizer's merges read natively (:meth:`HfJsonTables.byte_level`), for
        :class:`~bpe_studio.engine.encoding.tokenizer.Tokenizer`, which hands them to :func:`encoder` as they
        are and makes Python objects of them only when asked for them."""

        def pairs(self) -> list[tuple[bytes, bytes]]:
            """Each merge as (left bytes, right bytes), in rank order."""
            ...

        def ids(self) -> list[tuple[int, int, int]] | None:
            """Each merge's (left id, right id, merged id) as the Tokenizer looks them up (bytes -> the
            smallest ordinary id, else a special token's), or None when a merge's bytes are not all tokens."""
            ...

        def summary(self, byte_ids: list[int]) -> tuple[int, int, tuple[int, int] | None] | None:
            """(merges, tokens they make that are not one of ``byte_ids``, the deepest token's (id, height))
            as ``analysis.merge_summary`` counts them, or None without :meth:`ids`."""
            ...

        def has_ids(self) -> bool:
            """Whether :meth:`ids` gives the ids (without making them)."""
            ...

        def __len__(self) -> int: ...


def is_merge_table(merges: object) -> TypeGuard[MergeTable]:
    """True for a :class:`MergeTable` (which only the native kernel makes).

    Example:
        >>> is_merge_table([(b"a", b"b")])
        False
    """
    # (The class is not in the extension's namespace: only HfJsonTables.byte_level makes one.)
    kind = type(merges)
    return _native is not None and kind.__module__ == _native.__name__ and kind.__name__ == "MergeTable"


def read_hf_json(data: bytes) -> tuple[str, HfJsonTables] | None:
    """A ``tokenizer.json``'s bytes read natively (rust/src/hfjson.rs): the document's JSON text with
    ``model.vocab`` and ``model.merges`` written as null (for ``json.loads``: a few kB), and those two read
    into native tables; None when the kernel is off or the Python reader must read the file (not UTF-8,
    no ``model`` with a vocab object of ids and a merges list, a key listed twice, JSON serde_json refuses).

    Example:
        >>> found = read_hf_json(b'{"model": {"vocab": {"a": 0}, "merges": []}}')
        >>> found is None or found[0] == '{"model":{"vocab":null,"merges":null}}'
        True
        >>> found is None or (found[1].raw_vocab(), found[1].raw_merges()) == ({"a": 0}, [])
        True
    """
    if _native is None or _forced_pure():
        return None
    found: tuple[str, HfJsonTables] | None = _native.read_hf_json(data)
    return found


def byte_level_merges(merges: list[str]) -> list[tuple[bytes, bytes]] | None:
    """A ``tokenizer.json``'s merges written ``"left right"`` as pairs of bytes (rust/src/bytelevel.rs), read
    natively; None when the kernel is off or a merge is not one str with one space between byte-level
    texts (the caller then reads them in Python).

    Example:
        >>> byte_level_merges(["Ġ t", "h e"]) in ([(b" ", b"t"), (b"h", b"e")], None)
        True
    """
    if _native is None or _forced_pure():
        return None
    found: list[tuple[bytes, bytes]] | None = _native.byte_level_merges(merges)
    return found


def sentencepiece_tables(
    texts: list[str], kinds: list[int]
) -> tuple[dict[int, bytes], dict[str, int], list[str], list[int]] | None:
    """A ``.model``'s tables from its pieces' texts and types, made natively as ``load_sentencepiece``'s
    loop makes them (``sentencepiece._piece_tables``, the reference): (id -> bytes, text -> id of the normal
    and user-defined pieces, the user-defined texts, the id of each byte); None when the kernel is off, a
    byte piece is not ``<0xNN>`` or a byte has no piece (the loop then names it).

    Example:
        >>> found = sentencepiece_tables([f"<0x{b:02X}>" for b in range(256)] + ["▁a"], [6] * 256 + [1])
        >>> found is None or (found[0][256], found[1], found[3][:2]) == (b" a", {"▁a": 256}, [0, 1])
        True
    """
    if _native is None or _forced_pure():
        return None
    found: tuple[dict[int, bytes], dict[str, int], list[str], list[int]] | None
    found = _native.sentencepiece_tables(texts, kinds)
    return found


def sentencepiece_pairs(
    texts: list[str], scores: list[float], kinds: list[int]
) -> tuple[Callable[[], dict[tuple[str, str], int]], Callable[[], list[tuple[str, str]]], MergeTable] | None:
    """A ``.model``'s derived pairs from its pieces' texts, scores and types (rust/src/spmodel.rs,
    ``pairs``), each made when first asked for (opening the file needs none of them): a function that makes
    every split's rank, as ``load_sentencepiece`` builds them (called when the model first encodes); a
    function that makes the pairs the views show, as ``PieceModel.piece_merges`` finds them; and those
    pairs' bytes as a :class:`MergeTable`, with the pieces' ids (``Tokenizer._piece_merge_ids``'s). None
    when the kernel is off or a piece that merges has a NaN score (the Python loader then derives them).

    Example:
        >>> found = sentencepiece_pairs(["a", "b", "ab"], [0.0, 0.0, -1.0], [1, 1, 1])
        >>> found is None or (found[0](), found[1](), found[2].pairs()) == (
        ...     {("a", "b"): 1}, [("a", "b")], [(b"a", b"b")])
        True
    """
    kernel = _native
    if kernel is None or _forced_pure():
        return None
    found = kernel.sentencepiece_pairs(texts, scores, kinds, with_ranks=False)
    if found is None:
        return None

    ranks, merges, table = found
    # (with_ranks=False: the kernel keeps them, and these make them when called: the kernel's, not the
    # BPE_STUDIO_PURE of the moment's, as the model was opened with it.)
    assert callable(ranks) and callable(merges) and is_merge_table(table)
    return ranks, merges, table


def sentencepiece_encoder(
    texts: list[str], scores: list[float], kinds: list[int], byte_ids: list[int]
) -> Callable[[], Callable[[str], tuple[int, ...]] | None] | None:
    """A ``.model``'s BPE over characters (rust/src/spmodel.rs, ``PieceEncoder``), made when first called
    (opening a file for ``inspect`` encodes nothing): a function that makes a function giving a normalized
    piece's ids as ``PieceModel.encode`` does with the ranks ``load_sentencepiece`` derives (the reference),
    from the pieces' texts, scores and types and the id of each byte, without deriving those ranks (the
    first encode of a fresh process built 60k-250k of them), or None when a piece that merges has a NaN
    score; None at once when the kernel is off. A piece with a lone surrogate raises UnicodeEncodeError (the
    caller then encodes it in Python).

    Example:
        >>> make = sentencepiece_encoder(["a", "b", "ab"], [0.0, 0.0, -1.0], [1, 1, 1], list(range(3, 259)))
        >>> found = make and make()
        >>> found is None or (found("ab"), found("ba")) == ((2,), (1, 0))
        True
    """
    kernel = _native
    if kernel is None or _forced_pure():
        return None

    def make() -> Callable[[str], tuple[int, ...]] | None:
        # (The kernel's, not the BPE_STUDIO_PURE of the moment's, as the model was opened with it.)
        found = kernel.sentencepiece_encoder(texts, scores, kinds, byte_ids)
        if found is None:
            return None
        encode: Callable[[str], tuple[int, ...]] = found.encode
        return encode

    return make


#: What :func:`sentencepiece_model` gives: (trainer fields, normalizer fields, id -> bytes, the user-defined
#: texts, the id of each byte, a function giving a normalized piece's ids, (ranks, pairs, MergeTable) as
#: :func:`sentencepiece_pairs` gives them and a function that makes text -> id of the normal and
#: user-defined pieces).
if TYPE_CHECKING:  # (a type for type checkers: no `typing` at run time)
    SentencepieceModel: TypeAlias = tuple[
        list[tuple[int, int]],
        list[tuple[int, "int | bytes"]],
        dict[int, bytes],
        list[str],
        list[int],
        Callable[[str], tuple[int, ...]],
        tuple[
            Callable[[], dict[tuple[str, str], int]],
            Callable[[], list[tuple[str, str]]],
            MergeTable,
            Callable[[], dict[str, int]],
        ],
    ]


def sentencepiece_model(data: bytes) -> SentencepieceModel | None:
    """A SentencePiece ``.model``'s bytes read and made ready in one native call (``load_sentencepiece``'s
    fast path): what :func:`parse_sentencepiece`, :func:`sentencepiece_tables`, :func:`sentencepiece_pairs`
    and :func:`sentencepiece_encoder` give together, without a Python list of the pieces' texts, scores and
    types for each to read again, the pieces' table (text -> id) made only when asked for; None when the
    kernel is off or when one of them would give None (the loader then takes that path, which names the
    fault).

    Example:
        >>> piece = lambda text, kind: bytes([10, len(text) + 4, 10, len(text)]) + text + bytes([24, kind])
        >>> data = b"".join(piece(b"<0x%02X>" % b, 6) for b in range(256)) + piece(b"a", 1)
        >>> found = sentencepiece_model(data)
        >>> found is None or (found[6][3](), found[4][:2], found[5]("a"), found[5]("b")) == (
        ...     {"a": 256}, [0, 1], (256,), (98,))
        True
    """
    kernel = _native
    if kernel is None or _forced_pure():
        return None
    found = kernel.sentencepiece_model(data)
    if found is None:
        return None
    trainer, normalizer, vocab, frozen, byte_ids, encoder, (ranks, merges, table, pieces) = found
    assert callable(ranks) and callable(merges) and is_merge_table(table) and callable(pieces)
    encode: Callable[[str], tuple[int, ...]] = encoder.encode
    return trainer, normalizer, vocab, frozen, byte_ids, encode, (ranks, merges, table, pieces)


def merge_ids(
    merges: Sequence[tuple[bytes, bytes]], ids_of: dict[bytes, int]
) -> list[tuple[int, int, int]] | None:
    """Each merge as (left id, right id, merged id) through ``ids_of``, looked up natively; None when the
    kernel is off or a merge uses or makes bytes without an id (the caller's loop then names it).

    Example:
        >>> merge_ids(((b"a", b"b"),), {b"a": 0, b"b": 1, b"ab": 2}) in ([(0, 1, 2)], None)
        True
    """
    if _native is None or _forced_pure():
        return None
    found: list[tuple[int, int, int]] | None = _native.merge_ids(merges, ids_of)
    return found


# The merge loop's kernel (rust/src/merge.rs): the index of pairs and the merges, for training.MergeLoop.


if TYPE_CHECKING:  # (a type for type checkers: no `typing` at run time)

    class MergeKernel(Protocol):
        """The native merge kernel (``bpe_studio._native.MergeKernel``) as the merge loop uses it."""

        def best(self) -> tuple[int, int, int] | None:
            """``(left id, right id, count)`` of the pair the next merge takes, or None when none is left."""
            ...

        def merge_top(self) -> tuple[int, bool]:
            """Merge that pair: the token's id, and True when the token is new."""
            ...

        def set_heap_min(self, n: int) -> None:
            """Leave pairs counting fewer than ``n`` out of the choice from now on
            (``MergeLoop(heap_min=)``)."""
            ...

        def merge_batch(
            self, new_tokens: int, min_frequency: int, *, max_merges: int, budget: int
        ) -> tuple[list[tuple[int, int, int, bool, int]], str | None]:
            """Merges as :meth:`best` and :meth:`merge_top` in turn would, until ``new_tokens`` new ids exist,
            no pair is left (``"no_pairs"``), the next pair counts fewer than ``min_frequency``
            (``"min_frequency"``), or a limit (``None``): ``(left, right, token id, new, count)`` each."""
            ...


#: Flat token ids: an ``array("I")``, or native 32-bit integers read in place from the bytes the kernel
#: returned (``memoryview(raw).cast("I")``: no copy of millions of ids).
IdBuffer: TypeAlias = "array.array[int] | memoryview"


class _Record:
    """A mutable record compared by its fields, as a ``@dataclass`` is: this module is imported by opening
    any file, and ``dataclasses`` imports ``inspect`` and ``ast`` (5-6 ms of a fresh process)."""

    _FIELDS: tuple[str, ...] = ()
    __hash__ = None  # type: ignore[assignment]  # (mutable and compared by value, as a dataclass)

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._FIELDS)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, _Record)
        return self._values() == other._values()

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._FIELDS)
        return f"{type(self).__name__}({fields})"


class EncodedWords(_Record):
    """Words as flat token ids (:data:`IdBuffer`), each word's length and count: what an extend run's
    encoder gives, handed to the native merge loop without a ``str`` per word (see
    ``MergeLoop(encoded=...)``)."""

    _FIELDS = ("ids", "lengths", "freqs")

    def __init__(self, ids: IdBuffer, lengths: list[int], freqs: list[int]) -> None:
        self.ids = ids
        self.lengths = lengths
        self.freqs = freqs

    def words(self) -> dict[str, int]:
        """The same words as ``str`` of token ids (the Python merge loop's form); equal words add up."""
        out: dict[str, int] = {}
        start = 0
        ids = self.ids
        for length, n in zip(self.lengths, self.freqs, strict=True):
            word = "".join(map(chr, ids[start : start + length]))
            start += length
            out[word] = out.get(word, 0) + n
        return out

    def packed(self) -> PackedWords:
        """The same words in less memory, to keep aside (see :class:`PackedWords`)."""
        lengths = array.array("I", self.lengths)
        # Every id below 2**16 (a tokenizer of at most 65,536 tokens, as a superword run's stage 1 mostly
        # is): two bytes each instead of four. Natively, not with numpy: a run imports numpy for nothing
        # else (its import and its threads, 0.1-0.2 s of CPU).
        if _native is not None and not _forced_pure():
            narrow = _native.narrow_ids(self.ids) if len(self.ids) else None  # (an empty buffer: no pointer)
            return PackedWords(
                self.ids if narrow is None else memoryview(narrow).cast("H"), lengths, self.freqs
            )
        import numpy as np  # a dependency; imported here, as this module is imported at start-up

        ids = np.frombuffer(self.ids, dtype=np.uint32)
        fits = len(ids) > 0 and int(ids.max()) < 1 << 16
        return PackedWords(ids.astype(np.uint16) if fits else ids, lengths, self.freqs)


class PackedWords(_Record):
    """:class:`EncodedWords` kept aside in less memory: the ids in 16 bits when they all fit (a numpy
    array), the lengths in 32. A superword run's stage 2 keeps its whole words so while its merge loop
    runs over their pieces, in case it has to go back to them (half of its peak memory at 50 MB).

    Example:
        >>> import array
        >>> words = EncodedWords(array.array("I", [1, 2, 300, 7]), [3, 1], [2, 5])
        >>> again = words.packed().unpacked()
        >>> (words.packed().ids.itemsize, again.ids.tolist(), again.lengths, again.freqs)
        (2, [1, 2, 300, 7], [3, 1], [2, 5])
    """

    _FIELDS = ("ids", "lengths", "freqs")

    def __init__(self, ids: Any, lengths: array.array[int], freqs: list[int]) -> None:
        # 16-bit ids (a memoryview of format "H", or a numpy array of uint16), or the 32-bit ones
        self.ids: Any = ids
        self.lengths = lengths
        self.freqs = freqs

    def unpacked(self) -> EncodedWords:
        """The words as :class:`EncodedWords` again (ids in 32 bits)."""
        ids: array.array[int] = array.array("I")
        if self.ids.itemsize == 4:
            ids.frombytes(memoryview(self.ids).cast("B"))
        elif _native is not None:
            # (the bytes under narrow_ids' view, not a copy of them)
            raw = self.ids.obj if isinstance(self.ids, memoryview) else None
            ids.frombytes(_native.widen_ids(raw if isinstance(raw, bytes) else bytes(self.ids)))
        else:
            import numpy as np

            ids.frombytes(np.asarray(self.ids).astype(np.uint32).tobytes())
        return EncodedWords(ids, self.lengths.tolist(), self.freqs)


def cut_rare_pairs(encoded: EncodedWords, *, below: int, threads: int = 1) -> EncodedWords | None:
    """The words cut between two ids whose pair counts fewer than ``below`` in all of them, equal pieces
    added up and pieces of one id left out (rust/src/cut_words.rs, which says when a merge loop over the
    pieces makes the same merges as over the words); None when the native kernel is off. ``threads``
    native threads share the work on large inputs (the same answer for any number).

    Example:
        >>> import array
        >>> words = EncodedWords(array.array("I", [1, 2, 3, 1, 2]), [3, 2], [1, 1])
        >>> cut = cut_rare_pairs(words, below=2)
        >>> cut is None or (cut.ids.tolist(), cut.lengths, cut.freqs) == ([1, 2], [2], [2])
        True
    """
    if _native is None or _forced_pure():
        return None
    # The array itself, read in place: no copy of its ids.
    raw, lengths, freqs = _native.cut_rare_pairs(
        encoded.ids, encoded.lengths, encoded.freqs, below, threads=threads
    )
    ids: array.array[int] = array.array("I")
    ids.frombytes(raw)
    return EncodedWords(ids, lengths, freqs)


def release_free_memory() -> bool:
    """Give the C allocator's free memory back to the system (glibc's ``malloc_trim``): True when some
    was. Between a superword run's stages (see ``release_free_memory`` in rust/src/py/mod.rs); False, and
    nothing done, without the native kernel or elsewhere than glibc.

    Example:
        >>> release_free_memory() in (True, False)
        True
    """
    if _native is None or _forced_pure():
        return False
    return bool(_native.release_free_memory())


def map_large_allocations(*, min_bytes: int = 4 << 20) -> bool:
    """Have the C allocator map each block of at least ``min_bytes`` apart and unmap it when freed (glibc's
    ``mallopt(M_MMAP_THRESHOLD)``): True when set; False, and nothing done, without the native kernel or
    elsewhere than glibc. For the rest of the process (see ``map_large_allocations`` in rust/src/py/mod.rs:
    a superword run's stage 2 sets it, so that its freed tables do not stay resident).

    Example:
        >>> map_large_allocations() in (True, False)
        True
    """
    if _native is None or _forced_pure():
        return False
    return bool(_native.map_large_allocations(min_bytes))


def merge_kernel(
    counts: dict[str, int],
    token_bytes: list[bytes],
    *,
    max_token_length: int | None,
    backend: Backend | None,
    encoded: EncodedWords | None = None,
) -> MergeKernel | None:
    """The native merge kernel over ``counts`` (pre-tokens spelled with one code point per token id) when
    ``backend`` resolves to ``"native"`` (see :func:`resolve`), else None: the caller runs the Python loop.

    Raises:
        ValueError: ``"native"`` was asked for but the kernel is not built, an unknown backend was named, or
            the kernel refuses the counts (their pair counts could overflow: ``merge.COUNT_LIMIT``).

    Example:
        >>> kernel = merge_kernel({"abab": 2}, [bytes([i]) for i in range(256)], max_token_length=None,
        ...                       backend=None)
        >>> kernel is None or kernel.best() == (ord("a"), ord("b"), 4)
        True
    """
    if resolve(backend) == "python":
        return None
    assert _native is not None  # resolve() said so
    if encoded is not None:  # the words as flat token ids (an extend run's): no str per word
        # The array is read in place: no bytes copy of its ids (millions in a superword run's stage 2). An
        # empty array may have no aligned buffer to read: its bytes, none, are given instead.
        if not encoded.ids:
            return _native.MergeKernel(  # type: ignore[no-any-return]
                b"", 4, encoded.lengths, encoded.freqs, token_bytes, max_token_length=max_token_length
            )
        return _native.MergeKernel.from_ids(  # type: ignore[no-any-return]
            encoded.ids,
            encoded.lengths,
            encoded.freqs,
            token_bytes,
            max_token_length=max_token_length,
        )
    words = list(counts)
    joined = "".join(words)
    try:
        data, width = joined.encode("latin-1"), 1  # the counting phase's words: one byte per token
    except UnicodeEncodeError:
        # Token ids above 255 (an extend run's words); ids 0xD800-0xDFFF are lone surrogates in a str.
        data, width = joined.encode("utf-32-le", "surrogatepass"), 4
    del joined
    kernel: MergeKernel = _native.MergeKernel(
        data,
        width,
        list(map(len, words)),
        list(counts.values()),
        token_bytes,
        max_token_length=max_token_length,
    )
    return kernel


# Counting into a native table (rust/src/count.rs): pre-token -> count kept in Rust across chunks, so that
# no Python dict is built per chunk; workers send it as a frame (protocol.encode_table's layout).


class NativeCountTable:
    """Pre-token -> count kept by the native kernel (``bpe_studio._native.CountTable``); made by
    :func:`count_table`.

    Example:
        >>> table = count_table()
        >>> table is None or (table.add("gpt2", ["a a a"]), len(table), table.total) == (None, 2, 3)
        True
    """

    __slots__ = ("_table",)

    def __init__(self, table: Any) -> None:
        self._table = table

    def add(self, preset: str, texts: list[str]) -> None:
        """Count the pre-tokens of ``texts`` under a native scanner (:data:`NATIVE_SCANNERS`), with the GIL
        released while it counts.

        Raises:
            UnicodeEncodeError: A text holds a lone surrogate, which the native scanner cannot take; nothing
                of ``texts`` is counted (the caller counts them with the Python pre-tokenizer).
        """
        table = self._table
        # A code point beyond the class table comes back before anything is counted (see _with_classes).
        _with_classes(lambda classes: table.add(preset, texts, classes))

    def add_bytes(self, preset: str, data: bytes, specials: list[bytes]) -> tuple[int, int] | None:
        """Count a chunk given as bytes, with the GIL released while the kernel checks they are UTF-8,
        splits them on ``specials`` (UTF-8, in :func:`~bpe_studio.engine.corpus.plan.special_token_regex`'s
        order) and counts the non-empty parts: (non-empty parts, special tokens found), or None when the
        bytes are not UTF-8 (nothing counted: the caller decodes them under its policy)."""
        table = self._table
        found: tuple[int, int] | None = _with_classes(
            lambda classes: table.add_bytes(preset, data, specials, classes)
        )
        return found

    def add_bytes_with_superwords(
        self, superwords: NativeCountTable, preset: str, data: bytes, specials: list[bytes]
    ) -> tuple[int, int] | None:
        """:meth:`add_bytes`, and in the same pass the superword split's pieces (``SUPERWORD_PATTERN``) of the
        same text into ``superwords``: a superword run counts its stage-2 chunks as stage 1 counts, reading,
        checking, splitting and classifying the corpus once. None as :meth:`add_bytes` (neither table counted
        anything)."""
        table, words = self._table, superwords._table
        found: tuple[int, int] | None = _with_classes(
            lambda classes: table.add_bytes_with_superwords(words, preset, data, specials, classes)
        )
        return found

    def merge(self, other: NativeCountTable) -> None:
        """Add every count of ``other`` to this table."""
        self._table.merge(other._table)

    def add_frame(self, frame: bytes) -> None:
        """Add the counts of one frame (``protocol.encode_table``'s layout).

        Raises:
            ValueError: The frame is not what its header declares (nothing of it is added).
        """
        self._table.add_frame(frame)

    def count_new(self, earlier: Sequence[NativeCountTable]) -> int:
        """How many keys of this table none of ``earlier`` holds (summed over tables in turn: the number of
        distinct keys of them all, without merging them)."""
        found: int = self._table.count_new([t._table for t in earlier])
        return found

    def byte_words(self) -> EncodedWords:
        """The keys as the words of a merge loop over the 256 byte tokens (a token id is a byte value), with
        their counts, in the table's order; the table is emptied. A run from scratch gives these to
        ``MergeLoop(encoded=...)``: no ``str`` per key (issue 22).

        Example:
            >>> table = count_table()
            >>> table is None or (table.add("gpt2", ["ab ab"]), table.byte_words().words()) == (
            ...     None, {"ab": 1, " ab": 1})
            True
        """
        raw, lengths, counts = self._table.byte_words()
        # Read in place as u32s (not copied into an array: 8 MB for 2 MB of text, issue 22).
        return EncodedWords(memoryview(raw).cast("I"), lengths, counts)

    def to_frame(self) -> bytes:
        """The counts as one frame (``protocol.encode_table``'s layout and order)."""
        frame: bytes = self._table.to_frame()
        return frame

    @property
    def total(self) -> int:
        """The sum of the counts."""
        total: int = self._table.total
        return total

    def __len__(self) -> int:
        return len(self._table)


def compact_tables(tables: Sequence[NativeCountTable]) -> int:
    """Lay each table's entries out flat, without its hash table, one after the other (the GIL released):
    the same keys, counts and order in less than half the memory, for tables only read from now on (a
    superword run's stage-2 tables while stage 1 merges); counting into one again rebuilds its hash table.
    Returns the number of distinct keys among all the tables, found in the same pass over each (as
    :meth:`NativeCountTable.count_new` of each over the ones before it, summed)."""
    if not tables:
        return 0
    assert _native is not None
    distinct: int = _native.compact_tables([table._table for table in tables])
    return distinct


class PartedChunks:
    """Count tables' keys split into their distinct parts (``bpe_studio._native.PartedChunks``, see
    rust/src/chunk_parts.rs), made by :func:`split_chunks`; :meth:`NativeEncoder.encode_tables` takes them
    as it takes the tables, and encodes each distinct part once."""

    __slots__ = ("_parted", "threads")

    def __init__(self, parted: Any, threads: int) -> None:
        self._parted = parted
        #: How many tables were split (the counting threads'): how many threads encode them.
        self.threads = threads

    def tables(self) -> list[NativeCountTable]:
        """The tables as they were split (each key whole again, with its count), which empties this."""
        return [NativeCountTable(table) for table in self._parted.tables()]


def held_pairs(words: NativeCountTable) -> bytes:
    """Which adjacent byte pairs some key of ``words`` holds: one byte (0 or 1) per pair ``x * 256 + y``
    (the places :func:`split_chunks` may cut at are the others)."""
    assert _native is not None
    held: bytes = _native.held_pairs(words._table)
    return held


def split_chunks(tables: Sequence[NativeCountTable], held: bytes) -> PartedChunks:
    """The keys of ``tables`` (emptied), a superword run's stage-2 chunks, cut between any two bytes that
    ``held`` (:func:`held_pairs` of its stage-1 pre-tokens) does not hold, where no stage-1 token can
    span: as their distinct parts, so that each part is encoded once when stage 1's merges are known (the
    GIL released: it runs while stage 1 merges; rust/src/chunk_parts.rs says why it is exact).

    Example:
        >>> a, b = count_table(), count_table()
        >>> a is None or (a.add("gpt2", ["ab ab"]), b.add("superbpe", ["ab ab"])) == (None, None)
        True
        >>> a is None or split_chunks([b], held_pairs(a)).threads == 1
        True
    """
    assert _native is not None
    return PartedChunks(_native.split_chunks([t._table for t in tables], held), len(tables))


def count_table() -> NativeCountTable | None:
    """An empty native count table, or None when the native kernel is off (:func:`backend`).

    Example:
        >>> table = count_table()
        >>> table is None or len(table) == 0
        True
    """
    if _native is None or _forced_pure():
        return None
    return NativeCountTable(_native.CountTable())


# Encoding (rust/src/encode.rs): the same BPE and caching as the Tokenizer's Python encoder, and for a preset
# the native scanner too (text to ids in one call).


class NativeEncoder:
    """The native encoder of a tokenizer, with the methods of the Tokenizer's Python encoder
    (``encoding.tokenizer.PythonEncoder``); made by :func:`encoder`.

    Attributes:
        preset: The native scanner (:data:`NATIVE_SCANNERS`) that splits a text in :meth:`encode_text`, or
            None when the tokenizer's Python split (a pattern without one) gives the pre-tokens.
    """

    __slots__ = ("_made", "_make", "_split", "preset")

    #: The engine, as :func:`backend` names it.
    backend: Backend = "native"

    def __init__(self, encoder: Any, preset: str | None, split: Callable[[str], list[str]]) -> None:
        # (``encoder``: the kernel's Encoder, or a function that makes it when first used: a file opened
        # for ``inspect`` encodes nothing, and building 50k merges into one takes milliseconds.)
        self._made: Any = None if callable(encoder) else encoder
        self._make: Callable[[], Any] | None = encoder if callable(encoder) else None
        self.preset = preset
        self._split = split

    @property
    def _encoder(self) -> Any:
        made = self._made
        if made is None:
            # (_make is kept: two threads that both find none each make one, and either serves.)
            assert self._make is not None
            made = self._made = self._make()
        return made

    def encode_pieces(self, pieces: list[str]) -> list[int]:
        """The ids of pre-tokens, one after the other (through the native cache)."""
        ids: list[int] = self._encoder.encode(pieces)
        return ids

    def encode_flat(self, pieces: list[str]) -> tuple[list[int], list[int]]:
        """The pre-tokens' ids one after the other, and how many each has."""
        flat: tuple[list[int], list[int]] = self._encoder.encode_counts(pieces)
        return flat

    def encode_words(self, words: list[str]) -> tuple[bytes, list[int]]:
        """Each word (bytes spelled as latin-1, merged whole as one pre-token): the ids one after the other
        as native 32-bit integers (``array("I").frombytes``) and how many each word has. Each word is cut
        where no token holds its two bytes side by side and the parts go through the cache: exact, and fast
        on long words made of recurring parts (a superword run's chunks; rust/src/encode_cut.rs)."""
        found: tuple[bytes, list[int]] = self._encoder.encode_words(words)
        return found

    def encode_tables(
        self, tables: Sequence[NativeCountTable] | PartedChunks
    ) -> tuple[bytes, list[int], list[int]]:
        """:meth:`encode_words` over count tables' keys, one table after the other, which empties the
        tables (each one's memory given back once it is encoded): the ids (as there), each key's number of
        ids and each key's count, in the tables' order; no ``str`` per key. A key in two tables comes twice
        (a merge loop counts it as one word of both counts). Tables split by :func:`split_chunks` give the
        same, each distinct part encoded once."""
        if isinstance(tables, PartedChunks):
            parted: tuple[bytes, list[int], list[int]] = self._encoder.encode_parted(
                tables._parted, tables.threads
            )
            return parted
        found: tuple[bytes, list[int], list[int]] = self._encoder.encode_tables([t._table for t in tables])
        return found

    def encode_each(self, pieces: list[str]) -> Iterator[tuple[int, ...]]:
        """Each pre-token's ids, in order."""
        ids, counts = self._encoder.encode_counts(pieces)
        flat = iter(ids)
        return (tuple(islice(flat, n)) for n in counts)

    def encode_text(self, text: str) -> list[int]:
        """The ids of ``text`` (ordinary text: no special tokens).

        Raises:
            UnicodeEncodeError: The text holds a lone surrogate (the caller fixes it and calls again).
        """
        if self.preset is None:
            return self.encode_pieces(self._split(text))
        encoder, preset = self._encoder, self.preset
        return _with_classes(lambda table: encoder.encode_text(preset, text, table))  # type: ignore[no-any-return]

    def encode_batch(self, texts: list[str], *, threads: int) -> list[list[int]]:
        """:meth:`encode_text` of each text, in order; for a preset on up to ``threads`` native threads.

        Raises:
            UnicodeEncodeError: A text holds a lone surrogate.
            ValueError: ``threads`` is below 1 (for a preset).
        """
        if self.preset is None:
            return [self.encode_text(text) for text in texts]
        encoder, preset = self._encoder, self.preset
        return _with_classes(  # type: ignore[no-any-return]
            lambda table: encoder.encode_batch(preset, texts, table, threads=threads)
        )

    def encode_batch_flat(self, texts: list[str], *, threads: int) -> tuple[bytearray, bytearray] | None:
        """:meth:`encode_batch` as two flat buffers, no Python int per id: the ids of all the texts one after
        the other (uint32, native order) and ``len(texts) + 1`` offsets (int64, native order; text i's ids
        are ``ids[offsets[i]:offsets[i + 1]]``). The calling thread needs no GIL while the threads encode.
        None without a preset (the caller encodes in Python).

        Raises:
            UnicodeEncodeError: A text holds a lone surrogate.
            ValueError: ``threads`` is below 1.
        """
        if self.preset is None:
            return None
        encoder, preset = self._encoder, self.preset
        return _with_classes(  # type: ignore[no-any-return]
            lambda table: encoder.encode_batch_flat(preset, texts, table, threads=threads)
        )

    def encode_join(self, texts: list[str], *, separator: int | None, width: int) -> bytes | None:
        """The ids of the texts one after the other, ``separator`` between two, as little-endian integers
        of ``width`` bytes (2 or 4): the rows encode-corpus writes. None without a preset (the caller
        encodes in Python).

        Raises:
            UnicodeEncodeError: A text holds a lone surrogate.
        """
        if self.preset is None:
            return None
        encoder, preset = self._encoder, self.preset
        return _with_classes(  # type: ignore[no-any-return]
            lambda table: encoder.encode_join(preset, texts, table, separator=separator, width=width)
        )

    def decode_bytes(self, ids: list[int] | tuple[int, ...]) -> bytes | None:
        """The concatenated bytes of the tokens, or None when an id is not in the vocabulary or not an
        int (the caller names it)."""
        try:
            found = self._encoder.decode_bytes(ids)
        except (TypeError, OverflowError):
            return None  # not all ints, or a huge one
        return found if isinstance(found, bytes) else None

    def clear_cache(self) -> None:
        """Forget the cached pre-token encodings."""
        if self._made is not None:  # (none before it is made)
            self._made.clear_cache()

    def derive_merges(self) -> list[tuple[int, int, int]]:
        """Under tiktoken's rule, each token's merge as ``(left id, right id, id)`` by rank (see
        ``encoding.rank_rule.derive_merges``, the reference); empty for an encoder of merges."""
        found: list[tuple[int, int, int]] = self._encoder.derive_merges()
        return found

    def merge_summary(self) -> tuple[int, int, int] | None:
        """Under tiktoken's rule, ``(merges, deepest id, its height)`` of :meth:`derive_merges`' merges,
        without making them Python objects (see ``analysis.merge_summary``); None for an encoder of merges
        or with no merge."""
        found: tuple[int, int, int] | None = self._encoder.merge_summary()
        return found

    def __len__(self) -> int:
        """The number of cached pre-tokens (of the cache that answered last)."""
        return 0 if self._made is None else len(self._made)


def encoder(
    byte_ids: Sequence[int],
    merges: list[tuple[int, int, int]] | MergeTable | None,
    whole: dict[bytes, int] | None,
    decoder: list[bytes | None],
    *,
    cache_size: int,
    preset: str | None,
    split: Callable[[str], list[str]],
    special_ids: Sequence[int] = (),
    ignore_merges: bool = False,
) -> NativeEncoder | None:
    """The native encoder of a tokenizer, or None when the native kernel is off (:func:`backend`).

    Args:
        byte_ids: The id of each single byte.
        merges: ``(left id, right id, merged id)`` in rank order (or a :class:`MergeTable` with ids); None
            for tiktoken's rule (any two parts
            whose concatenation is an ordinary token merge, lowest id first).
        whole: With merges: ordinary token bytes -> id when a pre-token that is a token is taken whole
            (``ignore_merges``).
        decoder: Each id's bytes (None for an unused id).
        cache_size: How many pre-tokens' ids to cache.
        preset: The pattern's native scanner (``pretokenize.patterns.scanner_name``, or None): with one,
            texts are split natively.
        split: The tokenizer's pre-tokenizer, for a pattern without a native scanner.
        special_ids: With tiktoken's rule: the special tokens' ids (no merge makes them).
        ignore_merges: With tiktoken's rule: a pre-token that is an ordinary token is taken whole.

    Example:
        >>> enc = encoder(range(256), [], None, [bytes([i]) for i in range(256)], cache_size=10,
        ...               preset="gpt2", split=str.split)
        >>> enc is None or enc.encode_text("hi") == [104, 105]
        True
    """
    if _native is None or _forced_pure():
        return None
    if merges is None:
        native_encoder = _native.Encoder.with_ranks(
            list(byte_ids), decoder, list(special_ids), ignore_merges=ignore_merges, cache_size=cache_size
        )
    else:
        # (Made when first used: see NativeEncoder. A list of merges is copied: the kernel copied them.)
        kernel, ids, rules = _native, list(byte_ids), list(merges) if isinstance(merges, list) else merges
        native_encoder = lambda: kernel.Encoder(ids, rules, whole, decoder, cache_size=cache_size)  # noqa: E731
    return NativeEncoder(native_encoder, preset if preset in NATIVE_SCANNERS else None, split)
