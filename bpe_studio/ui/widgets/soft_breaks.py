"""Soft breaks: block breaks a text view holds inside a long line, which are not part of its text.

Qt lays out a whole paragraph (a ``QTextBlock``) again at each edit, each change of colour and each piece
appended to it: a pasted megabyte with no line break is one paragraph, and each keystroke cost the window
seconds (issue 21). So :class:`~bpe_studio.ui.widgets.token_text.TokenTextEdit` cuts a line longer than
:data:`SOFT_LIMIT` characters into paragraphs of about :data:`SOFT_TARGET` characters, at a place where the
line could wrap anyway (after a space, between two CJK characters…), else between two graphemes, never
inside a character the user sees. The view maps these breaks out of its text, copies and positions; this
module finds the places (Qt-free but for ``QTextBoundaryFinder``, which is reentrant).
"""

from __future__ import annotations

import unicodedata

from PySide6.QtCore import QTextBoundaryFinder

#: Characters of a paragraph the soft breaks aim for.
SOFT_TARGET = 2_000
#: A line (or a paragraph, after edits) longer than this gets soft breaks.
SOFT_LIMIT = 4_000
#: How far back from the aimed place a soft break looks for a place where the line may wrap.
_LOOK_BACK = 256


def soft_break_points(text: str, *, target: int = SOFT_TARGET, limit: int = SOFT_LIMIT) -> list[int]:
    """The places (code-point indices of ``text``) where a view puts soft breaks: in each line longer than
    ``limit``, every ``target`` characters or a little before, where the line may wrap.

    Linear in the text: each step either passes a line end it found within ``limit`` characters, or puts a
    break at least ``target // 2`` characters further.

    Example:
        >>> soft_break_points("ab cd ef gh", target=4, limit=5)
        [3, 6]
        >>> soft_break_points("short\\nlines", target=4, limit=5)
        []
        >>> soft_break_points("a" * 9, target=3, limit=4)
        [3, 6]
    """
    points: list[int] = []
    position = 0
    size = len(text)
    while size - position > limit:
        line_end = text.find("\n", position, position + limit + 1)
        if line_end >= 0:  # this line is short enough
            position = line_end + 1
            continue
        point = _break_before(text, position + target, position + target // 2)
        points.append(point)
        position = point
    return points


def _break_before(text: str, at: int, lowest: int) -> int:
    """The last place in ``text[lowest + 1 : at + 1]`` where a line may wrap, else between two graphemes
    (``at`` itself when the window is one grapheme, which never happens in real text)."""
    start = max(lowest, at - _LOOK_BACK)
    window = text[start:at]
    # After a space or a zero-width space (between two token labels) is where Qt wraps: found without a
    # boundary finder, which cost ~50 µs a break, 0.2 s for the Tokens view of 400,000 Chinese characters.
    found = max(window.rfind(" "), window.rfind("\u200b"))
    if found >= 0 and start + found + 1 > lowest and not unicodedata.combining(text[start + found + 1]):
        return start + found + 1
    wide = len(window.encode("utf-16-le", "surrogatepass")) != 2 * len(window)
    for kind in (QTextBoundaryFinder.BoundaryType.Line, QTextBoundaryFinder.BoundaryType.Grapheme):
        finder = QTextBoundaryFinder(kind, window + text[at : at + 2])  # what follows decides the last place
        finder.setPosition(len(window.encode("utf-16-le", "surrogatepass")) // 2)
        point = finder.position() if finder.isAtBoundary() else finder.toPreviousBoundary()
        if point > 0:
            return start + (_code_points(window, point) if wide else point)
    return at


def _code_points(text: str, units: int) -> int:
    """How many code points of ``text`` its first ``units`` UTF-16 code units hold."""
    return len(text.encode("utf-16-le", "surrogatepass")[: 2 * units].decode("utf-16-le", "surrogatepass"))


def utf16_length(text: str) -> int:
    """The length of ``text`` in UTF-16 code units (a document's positions).

    Example:
        >>> utf16_length("a🙃")
        3
    """
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


__all__ = ["SOFT_LIMIT", "SOFT_TARGET", "soft_break_points", "utf16_length"]
