"""Journey: a megabyte with no line break (issue 21.1). Pasted into the Playground it is held as paragraphs of
a few thousand characters (soft breaks) that are no part of the text: the ids are the engine's, a copy
across a soft break holds no break, the workspace saves and restores the text exactly, hovering a token
after a soft break describes that token, and Side by side (Ctrl+5) and Compare show the same text."""

# ruff: noqa: F811, PLR0917 - fixtures (some imported from tokenizer_helpers) are test arguments

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QKeySequence, QTextCursor
from PySide6.QtWidgets import QApplication

from bpe_studio.ui.app.main_window import MainWindow
from bpe_studio.ui.app.tokenizer_views import TokenizerViews
from bpe_studio.ui.app.workspace import MAX_TEXT_BYTES
from bpe_studio.ui.widgets.token_text import TokenTextEdit

from ..tokenizer_helpers import WAIT_MS, views, wait_playground  # noqa: F401 - fixtures
from .conftest import ScriptedDialogs, shoot, trigger

SENTENCE = "The quick brown fox jumps over the lazy dog, naïve café 日本語 🙃; "


def _one_line(size: int) -> str:
    return (SENTENCE * (size // len(SENTENCE) + 1))[:size]


def _point_of(edit: TokenTextEdit, position: int) -> QPoint:
    """A viewport point inside the character at a position of the text."""
    cursor = QTextCursor(edit.document())
    cursor.setPosition(edit.to_document(position, after=True))
    left = edit.cursorRect(cursor)
    cursor.setPosition(edit.to_document(position + 1))
    right = edit.cursorRect(cursor)
    return QPoint((left.left() + right.left()) // 2 + 1, left.center().y())


def test_a_megabyte_on_one_line(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views: TokenizerViews, dialogs: ScriptedDialogs, shots: Path, tmp_path: Path
) -> None:
    playground = views.playground
    editor = playground.editor
    trigger(window, "Tokenizer", "Show Playground")
    qtbot.waitUntil(lambda: views.current is not None and not views.loader.is_busy(), timeout=WAIT_MS)
    wait_playground(qtbot, playground)

    # 1. Paste a megabyte with no line break, as a person does (the clipboard and the Paste shortcut); just
    # under the workspace's 1 MB, which keeps it whole.
    text = _one_line(MAX_TEXT_BYTES * len(SENTENCE) // len(SENTENCE.encode()) - 100)
    assert 990_000 < len(text.encode()) <= MAX_TEXT_BYTES
    playground.set_text("")
    wait_playground(qtbot, playground)
    editor.setFocus()
    QApplication.clipboard().setText(text)
    qtbot.keySequence(editor, QKeySequence.StandardKey.Paste)
    qtbot.waitUntil(lambda: playground.text() == text, timeout=WAIT_MS)
    wait_playground(qtbot, playground)
    soft = editor.soft_breaks
    assert len(soft) > 200  # held as paragraphs of a few thousand characters
    assert editor.document().blockCount() == len(soft) + 1
    assert playground.encoding is not None and playground.encoding.text == text
    tokenizer = views.current.tokenizer
    assert playground.encoding.ids == tokenizer.encode(text, allowed_special="all", disallowed_special=())
    shoot(window, shots, "long-line-pasted")

    # 2. A copy across a soft break holds the text as it is, no break in it.
    at = soft[3]
    cursor = editor.textCursor()
    cursor.setPosition(editor.to_document(at - 30))
    cursor.setPosition(editor.to_document(at + 30), QTextCursor.MoveMode.KeepAnchor)
    editor.setTextCursor(cursor)
    assert "\u2029" in cursor.selectedText()
    qtbot.keySequence(editor, QKeySequence.StandardKey.Copy)
    copied = QApplication.clipboard().text()
    assert copied == _slice16(text, at - 30, at + 30)
    assert "\n" not in copied

    # 3. Hover a token just after a soft break: the details describe that token.
    encoding = playground.encoding
    position = next(  # a letter of a whole token, in the paragraph after the break
        p for p in range(at, at + 80) if len(encoding.unit_tokens(editor.unit_at_position(p))) == 1
    )
    unit = editor.unit_at_position(position)
    token = encoding.unit_first[unit]
    editor.set_current_units(range(unit, unit + 1), scroll=True)  # bring it into view
    qtbot.mouseMove(editor.viewport(), _point_of(editor, position))
    qtbot.waitUntil(lambda: f"Token {token + 1:,} of {len(encoding.spans):,}" in playground.details.text())
    shoot(window, shots, "long-line-hover")

    # 4. File ▸ Save workspace… keeps the text exactly; Open workspace… brings it back, soft breaks and all.
    saved = tmp_path / "long.json"
    dialogs.answer(saved)
    trigger(window, "File", "Save workspace")
    assert json.loads(saved.read_text(encoding="utf-8"))["text"] == text
    playground.set_text("something else")
    dialogs.answer(saved)
    with qtbot.waitSignal(window.workspace.restored, timeout=WAIT_MS):
        trigger(window, "File", "Open workspace")
    wait_playground(qtbot, playground)
    assert playground.text() == text
    assert editor.soft_breaks == soft
    assert playground.encoding is not None and playground.encoding.ids == encoding.ids


def test_side_by_side_and_compare_show_one_line_text(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views: TokenizerViews, shots: Path
) -> None:
    trigger(window, "Tokenizer", "Show Playground")
    qtbot.waitUntil(lambda: views.current is not None and not views.loader.is_busy(), timeout=WAIT_MS)
    wait_playground(qtbot, views.playground)
    text = _one_line(60_000)
    tokenizer = views.current.tokenizer
    ids = tokenizer.encode(text, allowed_special="all")

    qtbot.keyClick(window, Qt.Key.Key_5, Qt.KeyboardModifier.ControlModifier)
    side = views.side_by_side
    assert window.tabs.currentWidget() is side
    with qtbot.waitSignal(side.compared, timeout=WAIT_MS):
        side.text_edit.setFocus()
        qtbot.keySequence(side.text_edit, QKeySequence.StandardKey.SelectAll)  # over the text it had
        QApplication.clipboard().setText(text)
        qtbot.keySequence(side.text_edit, QKeySequence.StandardKey.Paste)
    qtbot.waitUntil(lambda: not side.is_busy(), timeout=WAIT_MS)
    assert side.text() == text and side.text_edit.soft_breaks
    row = side.rows[0]
    assert row.view.plain_text() == text and row.view.soft_breaks
    assert side.figures[0].encoding.ids == ids
    shoot(window, shots, "long-line-side-by-side")

    compare = views.compare
    window.tabs.setCurrentWidget(compare)
    with qtbot.waitSignal(compare.compared, timeout=WAIT_MS):
        compare.set_text(text)
    assert compare.text() == text and compare.text_edit.soft_breaks
    for name in ("a", "b"):
        view = compare.sides[name].view
        if compare.sides[name].encoding is not None:
            assert view.plain_text() == text
            assert compare.sides[name].encoding.ids == ids
    shoot(window, shots, "long-line-compare")


def _slice16(text: str, start: int, end: int) -> str:
    """``text`` between two UTF-16 positions."""
    data = text.encode("utf-16-le")
    return data[2 * start : 2 * end].decode("utf-16-le")


def test_after_pasting_a_megabyte_on_one_line_the_window_fits_a_small_screen(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views: TokenizerViews, shots: Path
) -> None:
    """Issue 21.3 (every view usable at 1024×640): a megabyte pasted on one line must not make the window's
    minimum wider or taller than that (its figures, in the Playground's one-line stats, made it 1042 px)."""
    playground = views.playground
    editor = playground.editor
    trigger(window, "Tokenizer", "Show Playground")
    qtbot.waitUntil(lambda: views.current is not None and not views.loader.is_busy(), timeout=WAIT_MS)
    wait_playground(qtbot, playground)
    before = window.minimumSizeHint()
    text = _one_line(MAX_TEXT_BYTES * len(SENTENCE) // len(SENTENCE.encode()) - 100)
    playground.set_text("")
    wait_playground(qtbot, playground)
    editor.setFocus()
    QApplication.clipboard().setText(text)
    qtbot.keySequence(editor, QKeySequence.StandardKey.Paste)
    qtbot.waitUntil(lambda: playground.text() == text, timeout=WAIT_MS)
    wait_playground(qtbot, playground)
    after = window.minimumSizeHint()
    assert after.width() <= 1024 and after.height() <= 640, after
    assert window.minimumSize().width() <= 1024 and window.minimumSize().height() <= 640
    assert after.width() <= max(before.width(), 925), (before, after)
    window.resize(1024, 640)
    qtbot.waitUntil(lambda: (window.width(), window.height()) == (1024, 640))
    shoot(window, shots, "long-line-small-screen")
