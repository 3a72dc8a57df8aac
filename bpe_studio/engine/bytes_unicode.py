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


def bytes_to_text(data: bytes) -> str:
    """Spell bytes in GPT-2's printable characters."""
    table = byte_to_char()
    return "".join(table[b] for b in data)


def text_to_bytes(text: str) -> bytes:
    """Turn GPT-2 printable characters back into bytes; ``KeyError`` for a character outside the table."""
    table = char_to_byte()
    return bytes(table[c] for c in text)
