"""Which engine runs: the native kernel (``bpe_studio._native``, Rust through PyO3) or the pure-Python code.

The native kernel is built by ``pip install`` when a Rust toolchain is present; without one the package
installs and runs the pure-Python engine, which stays the readable reference. ``BPE_STUDIO_PURE=1`` forces
the Python path.

Example:
    >>> from bpe_studio.engine import backend
    >>> backend() in ("native", "python")
    True
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any, Literal

Backend = Literal["native", "python"]

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


native: ModuleType | None = _load()


def backend() -> Backend:
    """The engine that training uses now: ``"native"`` when the kernel is built and not switched off by
    ``BPE_STUDIO_PURE=1``, else ``"python"``.

    Example:
        >>> backend() in ("native", "python")
        True
    """
    return "python" if native is None or _forced_pure() else "native"


def resolve(requested: Backend | None) -> Backend:
    """The backend to use for ``requested`` (None: :func:`backend`).

    Raises:
        ValueError: ``"native"`` was asked for but the kernel is not built, or an unknown name was given.
    """
    if requested is None:
        return backend()
    if requested == "native" and native is None:
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
_classes = [b""]  # the current table, in a list so that count_pretokens can replace it

#: The presets with a native pre-tokenizer.
NATIVE_PRESETS = ("gpt2", "cl100k", "o200k")


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


def _class_table(size: int) -> bytes:
    """Each code point's class below ``size`` (see above).

    Example:
        >>> list(_class_table(128)[ord("0") : ord("0") + 1] + _class_table(128)[ord(" ") :][:2])
        [5, 6, 0]
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
        _classes[0] = _class_table(128 if result < 128 else 0x10000 if result < 0x10000 else 0x110000)


def count_pretokens(preset: str, texts: list[str]) -> tuple[dict[str, int], int] | None:
    """Pre-tokens of ``texts`` under a preset (:data:`NATIVE_PRESETS`), counted natively:
    (pre-token -> count, how many).

    None when the native kernel is off (:func:`backend`) or cannot take the text (a lone surrogate); the
    caller then uses the Python pre-tokenizer.

    Example:
        >>> found = count_pretokens("cl100k", ["it's 12345"])
        >>> found in (({"it": 1, "'s": 1, " ": 1, "123": 1, "45": 1}, 5), None)
        True
    """
    if native is None or _forced_pure():
        return None
    try:
        return _with_classes(  # type: ignore[no-any-return]
            lambda classes: native.count_pretokens(preset, texts, classes)
        )
    except UnicodeEncodeError:
        return None


# Counting into a native table (rust/src/count.rs): pre-token -> count kept in Rust across chunks, so that
# no Python dict is built per chunk; workers send it as a frame (counting.encode_table's layout).


def new_count_table() -> Any | None:
    """An empty native count table (``bpe_studio._native.CountTable``), or None when the native kernel is
    off (:func:`backend`).

    Example:
        >>> table = new_count_table()
        >>> table is None or len(table) == 0
        True
    """
    if native is None or _forced_pure():
        return None
    return native.CountTable()


def count_into(table: Any, preset: str, texts: list[str]) -> bool:
    """Count the pre-tokens of ``texts`` under a preset (:data:`NATIVE_PRESETS`) into a native ``table``
    (from :func:`new_count_table`), with the GIL released while it counts.

    False, with nothing counted, when the table cannot take the text (a lone surrogate): the caller then
    counts it with the Python pre-tokenizer.

    Example:
        >>> table = new_count_table()
        >>> table is None or (count_into(table, "gpt2", ["a a a"]), len(table), table.total) == (True, 2, 3)
        True
    """
    try:
        # A code point beyond the class table comes back before anything is counted (see _with_classes).
        _with_classes(lambda classes: table.add(preset, texts, classes))
    except UnicodeEncodeError:
        return False
    return True


# Encoding whole texts for a preset (rust/src/encode.rs): the native scanner and the Encoder's BPE in one
# call, with the same class table and the same protocol as count_pretokens (a code point beyond the table
# comes back as an int; the table is extended and the call made again).


def encode_text(encoder: Any, preset: str, text: str) -> list[int]:
    """The ids of ``text`` under a preset's pattern, split and merged natively by ``encoder`` (a
    ``bpe_studio._native.Encoder``). Raises UnicodeEncodeError for a lone surrogate (the caller fixes the
    text as its Python path does).

    Example:
        >>> encode_text(tok._native, "gpt2", "hello world")  # doctest: +SKIP
        [31373, 995]
    """
    return _with_classes(lambda table: encoder.encode_text(preset, text, table))  # type: ignore[no-any-return]


def encode_texts(encoder: Any, preset: str, texts: list[str], *, threads: int) -> list[list[int]]:
    """:func:`encode_text` for each text, on up to ``threads`` native threads; in the texts' order.

    Example:
        >>> encode_texts(tok._native, "gpt2", ["hello", " world"], threads=2)  # doctest: +SKIP
        [[31373], [995]]
    """
    return _with_classes(  # type: ignore[no-any-return]
        lambda table: encoder.encode_batch(preset, texts, table, threads=threads)
    )


def encode_join(encoder: Any, preset: str, texts: list[str], *, separator: int | None, width: int) -> bytes:
    """The ids of the texts one after the other, ``separator`` between two, as little-endian integers of
    ``width`` bytes (2 or 4): the rows encode-corpus writes.

    Example:
        >>> encode_join(tok._native, "gpt2", ["a", "b"], separator=50256, width=2)  # doctest: +SKIP
        b'@\\x00\\x00\\xc4A\\x00'
    """
    return _with_classes(  # type: ignore[no-any-return]
        lambda table: encoder.encode_join(preset, texts, table, separator=separator, width=width)
    )
