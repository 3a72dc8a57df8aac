"""The playground's Tokens view wraps lines between tokens, never inside one (issue 11, item 8: ``<0x8A`` and
``>`` ended up on two lines; and ``<|`` / ``endoftext|>`` for a special token)."""

# ruff: noqa: F811 - the fixtures imported from tokenizer_helpers are test arguments

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtGui import QTextCursor

from bpe_studio.engine import TrainResult
from bpe_studio.ui.app.main_window import MainWindow
from bpe_studio.ui.app.tokenizer_views import TokenizerViews
from bpe_studio.ui.present.token_layout import SPECIAL as SPECIAL_KIND
from bpe_studio.ui.widgets.token_text import LABEL_JOIN, TokenTextEdit, label_break_points

from .tokenizer_helpers import (  # noqa: F401
    SPECIAL,
    open_and_wait,
    tiny_corpus,
    tiny_result,
    views,
    wait_playground,
)

#: Emoji and CJK the tiny tokenizer has no tokens for: runs of single-byte tokens, <0xF0><0x9F>… labels.
TEXT = "🙃 日本語の文章 ✓ ─┼─ " * 12 + "plain words to wrap as well " * 4


def _line_of(edit: TokenTextEdit, position: int) -> tuple[int, int]:
    """(block, line in the block) of the character at a document position."""
    block = edit.document().findBlock(position)
    line = block.layout().lineForTextPosition(position - block.position())
    return block.blockNumber(), line.lineNumber()


def _assert_no_label_split(
    qtbot, window: MainWindow, views: TokenizerViews, result: TrainResult, text: str
) -> int:  # type: ignore[no-untyped-def]
    """Show ``text`` in a narrow Tokens view; check that no label spans two lines; return how many tokens
    begin a new line."""
    window.resize(900, 700)
    window.show()
    qtbot.waitExposed(window)
    window.tabs.setCurrentWidget(views.playground)
    open_and_wait(qtbot, window, result, text)
    playground = views.playground
    strip = playground.strip
    strip.resize(260, 400)  # narrow: every line wraps many times
    qtbot.waitUntil(lambda: strip.viewport().width() < 300)
    wait_playground(qtbot, playground)
    encoding = playground.encoding
    assert encoding is not None and len(encoding.spans) > 100
    if os.environ.get("BPE_STUDIO_SHOT_DIR"):
        strip.grab().save(os.path.join(os.environ["BPE_STUDIO_SHOT_DIR"], "tokens-view.png"))
    wrapped = 0
    for token, (start, end) in enumerate(zip(strip.unit_starts, strip.unit_ends, strict=True)):
        cursor = QTextCursor(strip.document())
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        # The strip shows each token's label (with word joiners where a line could wrap inside it).
        assert cursor.selectedText().replace(LABEL_JOIN, "") == encoding.labels[token]
        first, last = _line_of(strip, start), _line_of(strip, end - 1)
        assert first == last, f"token {token} ({encoding.labels[token]!r}) is split across lines"
        wrapped += start > 0 and _line_of(strip, start - 1) != first
    # What a user copies from the view is the labels, without anything added between them.
    strip.selectAll()
    assert strip.createMimeDataFromSelection().text() == encoding.strip_text
    assert strip.plain_text() == encoding.strip_text
    return wrapped


def test_token_labels_are_never_split_across_lines(
    qtbot, window: MainWindow, views: TokenizerViews, tiny_result: TrainResult, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    assert _assert_no_label_split(qtbot, window, views, tiny_result, TEXT) > 5  # it did wrap, between tokens


def test_special_token_labels_are_never_split_across_lines(
    qtbot, window: MainWindow, views: TokenizerViews, tiny_result: TrainResult, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    assert label_break_points(SPECIAL) == [2, 12]  # Qt would wrap after either "|"
    # The special token at every offset from a line's start: some of them meet a line's end.
    text = "".join("x" * k + SPECIAL for k in range(40))
    assert _assert_no_label_split(qtbot, window, views, tiny_result, text) > 5
    encoding = views.playground.encoding
    assert encoding is not None
    specials = [i for i, label in enumerate(encoding.labels) if label == SPECIAL]
    assert len(specials) == 40
    assert all(views.playground.strip.unit_kinds[i] == SPECIAL_KIND for i in specials)
