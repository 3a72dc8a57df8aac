"""GPT-2's reversible mapping between bytes and printable characters, used by its vocab and merges files.

Printable bytes map to themselves; the other 68 map, in increasing order, to ``chr(256 + n)``, so space is
``"Ġ"`` and newline ``"Ċ"``.

Example:
    >>> bytes_to_text(b" hi\\n")
    'ĠhiĊ'
    >>> text_to_bytes("ĠhiĊ")
    b' hi\\n'
"""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def byte_to_char() -> tuple[str, ...]:
    """The character of each byte value 0-255 (GPT-2's ``bytes_to_unicode``)."""
    printable = [
        *range(ord("!"), ord("~") + 1),
        *range(ord("¡"), ord("¬") + 1),
        *range(ord("®"), ord("ÿ") + 1),
    ]
    chars = {b: chr(b) for b in printable}
    n = 0
    for b in range(256):
        if b not in chars:
            chars[b] = chr(256 + n)
            n += 1
    return tuple(chars[b] for b in range(256))


@lru_cache(maxsize=1)
def char_to_byte() -> dict[str, int]:
    """The inverse of :func:`byte_to_char`."""
    return {c: b for b, c in enumerate(byte_to_char())}


@lru_cache(maxsize=1)
def _translation() -> dict[int, str]:
    return dict(enumerate(byte_to_char()))


def bytes_to_text(data: bytes) -> str:
    """Spell bytes in GPT-2's printable characters."""
    # latin-1 reads each byte as the code point of its value, and translate maps them all in C: five times
    # faster than a join over the bytes, for the 3 calls per token of writing a vocabulary (issue 22).
    return data.decode("latin-1").translate(_translation())


def text_to_bytes(text: str) -> bytes:
    """Turn GPT-2 printable characters back into bytes; ``KeyError`` for a character outside the table."""
    table = char_to_byte()
    return bytes(table[c] for c in text)
