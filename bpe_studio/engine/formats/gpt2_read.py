"""Reading GPT-2's two files, ``vocab.json`` and ``merges.txt``, into bytes (no tokenizer built).

What both :mod:`bpe_studio.engine.formats.gpt2` (loading a saved folder) and
:meth:`bpe_studio.engine.encoding.tokenizer.Tokenizer.from_files` need: it sits below both, so neither
imports the other for it (they did, a cycle).
"""

from __future__ import annotations

import os
from collections.abc import Collection

from .. import native
from ..bytes_unicode import char_to_byte
from .base import FormatError
from .studio import read_json, utf8


def _fail(path: str | os.PathLike[str], where: str, problem: str) -> FormatError:
    return FormatError(f"{os.fspath(path)}: {where}: {problem}")


def _spelled_bytes(text: str) -> bytes | None:
    """GPT-2 characters -> bytes, or None when a character is outside the table."""
    table = char_to_byte()
    try:
        return bytes(table[c] for c in text)
    except KeyError:
        return None


def read_vocab_json(path: str | os.PathLike[str], *, raw_tokens: Collection[str] = ()) -> dict[int, bytes]:
    """Read a GPT-2 style ``vocab.json`` into id -> bytes.

    Args:
        path: The file.
        raw_tokens: Keys to take literally as UTF-8 text (special tokens that a file may spell as they are,
            e.g. ``"<pad token>"``, instead of in GPT-2 characters).

    Raises:
        FormatError: The file is not a JSON object of token -> id; the message names the key.

    Example:
        >>> vocab = read_vocab_json("vocab.json")
        >>> vocab[50256]
        b'<|endoftext|>'
    """
    document = read_json(path)
    if not isinstance(document, dict):
        raise _fail(path, "top level", "expected a JSON object of token -> id")
    vocab: dict[int, bytes] = {}
    # Every key's bytes in one native pass (GPT-2's 50k keys one by one in Python were most of the read);
    # any fault, and a kernel that is off, leave it to the loop below, which names the key.
    keys = [key for key in document if key not in raw_tokens]
    spelled = dict(zip(keys, native.byte_level_bytes(keys) or (), strict=False))
    for key, i in document.items():
        if not isinstance(i, int) or isinstance(i, bool) or i < 0:
            raise _fail(path, f"key {key!r}", f"expected a non-negative integer id, got {i!r}")
        token = spelled.get(key) or (
            utf8(path, f"key {key!r}", key) if key in raw_tokens else _spelled_bytes(key)
        )
        if token is None:
            raise _fail(
                path,
                f"key {key!r}",
                "holds a character outside GPT-2's byte-to-character table; is this a "
                "byte-level BPE vocabulary?",
            )
        if i in vocab:
            raise _fail(path, f"key {key!r}", f"id {i} is used twice")
        vocab[i] = token
    return vocab


def read_merges_txt(path: str | os.PathLike[str]) -> list[tuple[bytes, bytes]]:
    """Read a GPT-2 style ``merges.txt`` (with or without the ``#version`` header line).

    Raises:
        FormatError: A line is not two tokens in GPT-2 characters; the message names the line number.

    Example:
        >>> read_merges_txt("merges.txt")[0]
        (b' ', b't')
    """
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            lines = handle.read().split("\n")
    except UnicodeDecodeError as exc:
        raise _fail(path, f"byte {exc.start}", "not UTF-8 text") from None
    # The usual file, in one native pass over every token (GPT-2's 50k lines one by one in Python were
    # most of its load): a header, then lines of two tokens; anything else goes through the loop below,
    # which names the line at fault.
    body = lines[1:] if lines and lines[0].startswith("#version") else lines
    body = [line.rstrip("\r") for line in body]
    while body and not body[-1]:
        body.pop()
    parts = [part for line in body for part in line.split(" ")]
    if len(parts) == 2 * len(body) and all(parts):
        found = native.byte_level_bytes(parts)
        if found is not None and all(found):
            return list(zip(found[0::2], found[1::2], strict=True))
    merges: list[tuple[bytes, bytes]] = []
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            for number, line in enumerate(handle, start=1):
                # No GPT-2 character is a space, "\r" or "\n", so stripping line ends is safe.
                line = line.rstrip("\r\n")
                if not line or (number == 1 and line.startswith("#version")):
                    continue
                parts = line.split(" ")
                pair = [_spelled_bytes(p) for p in parts] if len(parts) == 2 and all(parts) else []
                if len(pair) != 2 or pair[0] is None or pair[1] is None:
                    raise _fail(
                        path, f"line {number}", f"expected 'left right' in GPT-2 characters, got {line!r}"
                    )
                merges.append((pair[0], pair[1]))
    except UnicodeDecodeError as exc:
        raise _fail(path, f"byte {exc.start}", "not UTF-8 text") from None
    return merges
