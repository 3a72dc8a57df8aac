"""How the app spells tokens and colours them: the one place for both. Qt-free.

Every view (the Train tab's merges table, the playground, the vocabulary, the merge tree, Compare and the
exports) spells a token with :func:`token_label`: visible whitespace (``·`` for a space, ``→`` for a tab,
``↵`` for a newline), and as ``<0xE2>`` both a byte that is not a complete UTF-8 character on its own and a
control byte (0x00–0x1F, 0x7F): the *decoded-bytes* spelling. Control bytes are not drawn as Unicode
"control pictures" (``␀``, ``␛``): most monospace fonts (DejaVu Sans Mono among them) lack those glyphs,
which showed as empty boxes.

Token boundaries are coloured with alternating backgrounds from Paul Tol's colour-blind-safe schemes, with
a light and a dark variant. Consecutive colours also alternate in lightness, so that neighbouring tokens stay
apart in grey scale; text on every background has a contrast of at least 7:1 in the light theme (WCAG AAA)
and 5:1 in the dark one (AA). Special tokens get
a neutral background, bold text and an outline.

Example:
    >>> token_label(b" the\\n")
    '·the↵'
    >>> token_label(b"\\xe2\\x80")
    '<0xE2><0x80>'
    >>> token_label(b"\\x1b[0m")
    '<0x1B>[0m'
    >>> hex_bytes(b" t")
    '20 74'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

# The notation itself lives in the engine (Qt-free, shared with the CLI): one table for every view.
from ...engine.notation import _VISIBLE_TABLE, WHITESPACE_SIGNS, text_label, token_label

if TYPE_CHECKING:
    from ...engine import Tokenizer


def token_name(tokenizer: Tokenizer, token_id: int) -> str:
    """An ordinary token spelled for the vocabulary and merge trees: as a SentencePiece-style model spells
    it (the piece ``▁the``, the byte-fallback token ``<0x61>``), else :func:`token_label` of its bytes.

    Example:
        >>> token_name(tok, 256)  # GPT-2: byte-level BPE
        '·t'
        >>> from bpe_studio.engine.encoding.pieces import PieceModel
        >>> model = PieceModel({"▁": 258, "a": 259, "▁a": 260}, [("▁", "a")], byte_ids=range(2, 258))
        >>> vocab = {i: bytes([i - 2]) for i in range(2, 258)} | {258: b" ", 259: b"a", 260: b" a"}
        >>> pieces = Tokenizer(vocab, [(b" ", b"a")], piece_model=model)
        >>> token_name(pieces, 260), token_name(pieces, 99)  # a piece, the byte-fallback token of b"a"
        ('▁a', '<0x61>')
    """
    model = tokenizer.piece_model
    if model is not None:
        name = model.names().get(token_id)
        if name is not None:
            return text_label(name)  # (▁ stays; any other whitespace made visible)
    return token_label(tokenizer.token_bytes(token_id))


def byte_fallback(tokenizer: Tokenizer, token_id: int) -> int | None:
    """The byte of a SentencePiece-style tokenizer's byte-fallback token (``<0x61>``: 0x61), else None."""
    model = tokenizer.piece_model
    return None if model is None else model.byte_of(token_id)


def search_key(text: str) -> str:
    """Normalise a search text the way tokens are displayed (and case-folded), so that a typed space
    finds ``·`` and a typed ``<0xe2>`` finds ``<0xE2>``.

    Example:
        >>> search_key(" The")
        '·the'
    """
    return text.translate(_VISIBLE_TABLE).casefold()


def hex_bytes(token: bytes) -> str:
    """A token's bytes in hex, separated by spaces.

    Example:
        >>> hex_bytes(b"\\xe2\\x80\\x94")
        'e2 80 94'
    """
    return token.hex(" ")


def is_complete_utf8(token: bytes) -> bool:
    """Whether the bytes are complete UTF-8 characters.

    Example:
        >>> is_complete_utf8(b"\\xe2\\x80")
        False
    """
    try:
        token.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def decoded_text(token: bytes) -> str:
    """A token's text as a Python string literal (``'\\n'``, ``' the'``); incomplete UTF-8 as ``\\xNN``.

    Example:
        >>> decoded_text(b" the\\n")
        "' the\\\\n'"
    """
    if is_complete_utf8(token):
        return repr(token.decode("utf-8"))
    return repr(token)


# ----------------------------------------------------------------------------------------------------------
# Colours
# ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TokenPalette:
    """The colours of token boundaries for one theme (``#rrggbb`` strings).

    Attributes:
        backgrounds: Backgrounds that alternate from token to token.
        text: Text colour on those backgrounds.
        special_background: Background of a special token.
        special_text: Text colour of a special token (bold).
        special_outline: Outline around a special token.
        current_outline: Outline around the hovered or selected token.
        partial_underline: Underline of a character whose bytes are split across tokens.
        error_background: Background of a disallowed special token.
    """

    backgrounds: tuple[str, ...]
    text: str
    special_background: str
    special_text: str
    special_outline: str
    current_outline: str
    partial_underline: str
    error_background: str


#: Light theme: Paul Tol's "light" scheme, alternating lighter and darker entries, with near-black text.
LIGHT_PALETTE = TokenPalette(
    backgrounds=("#99DDFF", "#EE8866", "#EEDD88", "#77AADD", "#FFAABB", "#44BB99"),
    text="#111111",
    special_background="#DDDDDD",
    special_text="#882255",
    special_outline="#882255",
    current_outline="#000000",
    partial_underline="#111111",
    error_background="#FFB3B3",
)

#: Dark theme: deep tones of the same hues, alternating lighter and darker, with near-white text.
DARK_PALETTE = TokenPalette(
    backgrounds=("#2E6B8F", "#5C2E2E", "#5E5A1E", "#2C3E73", "#2F6B3A", "#6B2F55"),
    text="#F2F2F2",
    special_background="#3A3A3A",
    special_text="#FFCCEE",
    special_outline="#EE99CC",
    current_outline="#FFFFFF",
    partial_underline="#F2F2F2",
    error_background="#7A1F1F",
)


def palette_for(dark: bool) -> TokenPalette:
    """The token palette of a light or dark theme."""
    return DARK_PALETTE if dark else LIGHT_PALETTE


def relative_luminance(colour: str) -> float:
    """WCAG relative luminance of a ``#rrggbb`` colour (0 for black, 1 for white).

    Example:
        >>> round(relative_luminance("#ffffff"), 3)
        1.0
    """
    channels = []
    for i in (1, 3, 5):
        c = int(colour[i : i + 2], 16) / 255
        channels.append(c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4)
    r, g, b = channels
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(first: str, second: str) -> float:
    """WCAG contrast ratio of two colours (1 to 21).

    Example:
        >>> round(contrast_ratio("#000000", "#ffffff"))
        21
    """
    a, b = sorted((relative_luminance(first), relative_luminance(second)), reverse=True)
    return (a + 0.05) / (b + 0.05)


__all__ = [
    "DARK_PALETTE",
    "LIGHT_PALETTE",
    "WHITESPACE_SIGNS",
    "TokenPalette",
    "byte_fallback",
    "contrast_ratio",
    "decoded_text",
    "hex_bytes",
    "is_complete_utf8",
    "palette_for",
    "relative_luminance",
    "search_key",
    "text_label",
    "token_label",
    "token_name",
]
