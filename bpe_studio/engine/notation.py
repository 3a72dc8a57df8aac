r"""The visible notation of token text, shared by the app's views and the CLI (Qt-free).

Whitespace people must see gets a sign (``·`` space, ``→`` tab, ``↵`` newline), and every control character
is written as a code, never passed through: C0 controls and DEL as their byte (``<0x1B>``, like a byte that
is not a whole character), C1 controls and the invisible format characters that reorder or hide text (bidi
overrides and isolates, the byte-order mark) as ``<U+202E>``. A terminal or a view then never receives an
escape sequence, a bell or a right-to-left override from a token.

Example:
    >>> token_label(b"\x1b[2J\x07")
    '<0x1B>[2J<0x07>'
    >>> control_label("a\u202eb\n")
    'a<U+202E>b\n'
"""

from __future__ import annotations

import codecs

_HEX_ERRORS = "bpe_studio_hex_bytes"


def _hex_bytes_handler(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeDecodeError):  # pragma: no cover - only registered for decoding
        raise exc
    bad = exc.object[exc.start : exc.end]
    return "".join(f"<0x{b:02X}>" for b in bad), exc.end


codecs.register_error(_HEX_ERRORS, _hex_bytes_handler)

#: Characters a token label draws as a visible sign: whitespace people must see.
WHITESPACE_SIGNS = {" ": "·", "\t": "→", "\n": "↵", "\xa0": "⍽", "\u3000": "□"}

#: Invisible characters that reorder or hide text: bidi marks, embeddings, overrides and isolates, the BOM.
FORMAT_CONTROLS = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0xFEFF)

#: Every control character as its code (whitespace signs not included).
_CONTROL_TABLE = (
    {c: f"<0x{c:02X}>" for c in (*range(0x20), 0x7F)}
    | {c: f"<U+{c:04X}>" for c in range(0x80, 0xA0)}
    | {c: f"<U+{c:04X}>" for c in FORMAT_CONTROLS}
)

# DEL, C1 and format controls as their \u escape (only JSON strings can hold them; json.dumps escapes C0
# controls in strings itself, and the newlines of its indentation are layout).
_JSON_ESCAPES = {c: f"\\u{c:04x}" for c in _CONTROL_TABLE if c >= 0x7F}

# Whitespace made visible, and every other control character written as its code.
_VISIBLE_TABLE = _CONTROL_TABLE | {ord(c): sign for c, sign in WHITESPACE_SIGNS.items()}


def token_label(token: bytes) -> str:
    r"""A token's bytes for display: visible whitespace, and incomplete UTF-8 as ``<0xNN>``.

    Example:
        >>> token_label("\t→é".encode())
        '→→é'
    """
    return token.decode("utf-8", errors=_HEX_ERRORS).translate(_VISIBLE_TABLE)


def text_label(text: str) -> str:
    r"""Text with visible whitespace (a special token, or a piece of the playground's text).

    Example:
        >>> text_label("a b\n")
        'a·b↵'
    """
    return text.translate(_VISIBLE_TABLE)


def json_text(value: object, *, indent: int | None = 1) -> str:
    r"""``value`` as JSON for a terminal: characters as they are (``ensure_ascii=False``), except every
    control character, escaped as ``\uXXXX`` (``json.dumps`` escapes C0 controls only; C1 controls, DEL
    and bidi overrides would reach the terminal raw). The JSON means exactly the same values.

    Example:
        >>> print(json_text(["\x1b", "\u202e", "é"], indent=None))
        ["\u001b", "\u202e", "é"]
    """
    import json  # (here: inspect and encode print text unless --json; 1 ms of a fresh process)

    return json.dumps(value, ensure_ascii=False, indent=indent).translate(_JSON_ESCAPES)


def control_label(text: str, *, keep: str = "\n\t") -> str:
    r"""Text with its control characters written as codes, except those in ``keep`` (layout a terminal
    needs); for text printed as it is, such as ``bpe-studio encode --show``.

    Example:
        >>> control_label("\x1b]0;title\x07ok\n")
        '<0x1B>]0;title<0x07>ok\n'
    """
    table = {c: code for c, code in _CONTROL_TABLE.items() if chr(c) not in keep}
    return text.translate(table)


__all__ = ["FORMAT_CONTROLS", "WHITESPACE_SIGNS", "control_label", "json_text", "text_label", "token_label"]
