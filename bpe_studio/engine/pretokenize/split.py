"""Pre-tokenization: split text into pre-tokens with a pattern, fast for the presets.

A pre-token is the whole text of a non-empty match of the pattern, in order (:func:`pretoken_matches`).
Everything that cuts text into pre-tokens goes through this module (counting, the Tokenizer, the app), so
they agree on every pattern: capturing groups change nothing (the whole match counts, not the groups, as
``findall`` would give), and a pattern that matches the empty string in some context (``(?<=Z)|\\w+``)
never makes an empty pre-token.

For a preset, ASCII text is matched by its ASCII twin (``patterns.ASCII_PATTERNS``) with the standard
library's ``re``, which is faster there than ``regex`` with Unicode properties; text that is not all ASCII
is cut at newline boundaries, certain pre-token boundaries for every preset (see
:mod:`bpe_studio.engine.pretokenize.boundary`), and each ASCII piece still takes the fast path.

Example:
    >>> Pretokenizer("gpt2").findall("Hello world's 2024 café!")
    ['Hello', ' world', "'s", ' 2024', ' café', '!']
    >>> Pretokenizer(r"(?<=Z)|(\\w+)").findall("aZ b")
    ['aZ', 'b']
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence

from .boundary import split_at_newline_boundaries
from .patterns import ASCII_PATTERNS, compile_pattern, preset_name, scanner_name

TYPE_CHECKING = False  # (typing is for type checkers only: see bpe_studio/__init__.py)
if TYPE_CHECKING:
    from typing import Any


def pretoken_matches(compiled: Any, text: str) -> Iterator[Any]:
    """The matches of a compiled pattern that are pre-tokens: every non-empty one, in order.

    Example:
        >>> [m.span() for m in pretoken_matches(compile_pattern(r"(?<=Z)|\\w+"), "aZ b")]
        [(0, 2), (3, 4)]
    """
    return (m for m in compiled.finditer(text) if m.end() > m.start())


def pretoken_splitter(compiled: Any) -> Callable[[str], list[str]]:
    """A function giving the pre-tokens of a text: the whole text of each of :func:`pretoken_matches`.

    Example:
        >>> pretoken_splitter(compile_pattern(r"(\\w)\\w*"))("ab c")
        ['ab', 'c']
    """
    finditer = compiled.finditer

    def split(text: str) -> list[str]:
        return [token for m in finditer(text) if (token := m.group())]

    return split


class Pretokenizer:
    """Finds the pre-tokens of text for a preset name or a custom regex (see :func:`pretoken_matches`)."""

    def __init__(self, pattern: str) -> None:
        self._name = preset_name(pattern)
        self._pattern = pattern
        self._slow: Callable[[str], list[str]] | None = None
        self._fast: Callable[[str], list[str]] | None = None
        # Any other regex is checked now (one that does not compile is refused).
        if scanner_name(pattern) is None:
            self._slow = pretoken_splitter(compile_pattern(pattern))
        # A pattern with a native scanner (a preset's or a model's, known to compile) is compiled when first
        # used: a tokenizer encoding natively never does, and compiling cl100k's takes longer than opening
        # some files.

    def _compile(self) -> None:
        if self._name is None:  # a model's pattern: the whole of each non-empty match, as any regex
            self._slow = pretoken_splitter(compile_pattern(self._pattern))
            return
        # The presets have no capturing groups and every alternative consumes a character, so findall
        # (faster than finditer) gives exactly the non-empty whole matches;
        # tests/engine/pretokenize/test_patterns.py checks it.
        self._fast = re.compile(ASCII_PATTERNS[self._name]).findall
        self._slow = compile_pattern(self._pattern).findall

    def findall(self, text: str) -> list[str]:
        """All pre-tokens of ``text``, in order: the whole text of every non-empty match of the pattern."""
        if self._slow is None:
            self._compile()
        slow = self._slow
        assert slow is not None
        fast = self._fast
        if fast is None:
            return slow(text)
        if text.isascii():
            return fast(text)
        tokens: list[str] = []
        for piece in split_at_newline_boundaries(text):
            tokens += fast(piece) if piece.isascii() else slow(piece)
        return tokens


def special_token_regex(special_tokens: Sequence[str]) -> re.Pattern[str] | None:
    """A regex matching any special token, longest first so overlapping specials match whole.

    (Here, not in ``corpus.plan``, which re-exports it: the tokenizer needs it, and opening a file must not
    import the corpus planner's ``dataclasses``.)

    Example:
        >>> special_token_regex(["<a>", "<a><a>"]).split("x<a><a>y")
        ['x', 'y']
    """
    if not special_tokens:
        return None
    ordered = sorted(special_tokens, key=lambda s: (-len(s), s))
    return re.compile("|".join(re.escape(s) for s in ordered))
