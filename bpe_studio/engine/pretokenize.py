"""Pre-tokenization: split text into pre-tokens with a pattern, fast for the presets.

For a preset, ASCII text is matched by its ASCII twin (``config.ASCII_PATTERNS``) with the standard
library's ``re``, which is faster there than ``regex`` with Unicode properties; text that is not all ASCII
is cut at newline-before-letter positions that are certain pre-token boundaries for every preset (see
:mod:`bpe_studio.engine.corpus`), and each ASCII piece still takes the fast path.

Example:
    >>> Pretokenizer("gpt2").findall("Hello world's 2024 café!")
    ['Hello', ' world', "'s", ' 2024', ' café', '!']
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .config import ASCII_PATTERNS, compile_pattern, preset_name

# The str form of corpus._NEWLINE_BOUNDARY: a split here changes no pre-token of any preset.
_SAFE_SPLIT = re.compile(r"(?<=[!-~]\n)(?=[A-Za-z])").split


class Pretokenizer:
    """Finds the pre-tokens of text for a preset name or a custom regex."""

    def __init__(self, pattern: str) -> None:
        self._slow: Callable[[str], list[str]] = compile_pattern(pattern).findall
        name = preset_name(pattern)
        self._fast: Callable[[str], list[str]] | None = (
            re.compile(ASCII_PATTERNS[name]).findall if name is not None else None
        )

    def findall(self, text: str) -> list[str]:
        """All pre-tokens of ``text``, in order (what ``regex.findall`` with the pattern returns)."""
        fast = self._fast
        if fast is None:
            return self._slow(text)
        if text.isascii():
            return fast(text)
        slow = self._slow
        tokens: list[str] = []
        for piece in _SAFE_SPLIT(text):
            tokens += fast(piece) if piece.isascii() else slow(piece)
        return tokens
