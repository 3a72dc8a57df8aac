"""Journey: a user opens tokenizers of every format, from the menu, from Recent tokenizers and by dropping a
file on the playground, and types text into each."""

# ruff: noqa: F811, PLR0917 - fixtures (some imported from tokenizer_helpers) are test arguments

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent, QKeySequence
from PySide6.QtWidgets import QApplication, QWidget

from bpe_studio.engine import FORMATS, TrainResult, save
from bpe_studio.engine.formats.detect import save_targets
from bpe_studio.ui.app.main_window import MainWindow
from bpe_studio.ui.app.tokenizer_views import TokenizerViews

from ..tokenizer_helpers import (  # noqa: F401 - fixtures
    TRICKY_TEXT,
    WAIT_MS,
    tiny_corpus,
    tiny_result,
    views,
    wait_playground,
)
from .conftest import ScriptedDialogs, shoot, trigger


@pytest.fixture
def saved(tiny_result: TrainResult, tmp_path: Path) -> dict[str, Path]:
    """The tiny tokenizer saved in every format; the path a user picks in the Open dialog for each."""
    from bpe_studio.engine import Tokenizer

    tok = Tokenizer.from_result(tiny_result)
    picked: dict[str, Path] = {}
    for fmt in FORMATS:
        folder = tmp_path / f"as {fmt}"
        folder.mkdir()
        save(tok, folder, format=fmt)
        picked[fmt] = save_targets(folder, format=fmt, folder=True)[0]  # vocab.json for gpt2
    return picked


def drag_and_drop(target: QWidget, path: Path) -> None:
    """What the window system sends when a file is dragged over ``target`` and dropped: enter, move, drop."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    where = QPointF(20, 20)
    enter = QDragEnterEvent(
        where,
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(target, enter)
    assert enter.isAccepted(), f"{type(target).__name__} refused a dragged file"
    move = QDragMoveEvent(
        where,
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(target, move)
    drop = QDropEvent(
        where, Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    )
    QApplication.sendEvent(target, drop)
    assert drop.isAccepted(), f"{type(target).__name__} did not take the dropped file"


def _type(qtbot, views: TokenizerViews, text: str) -> None:  # type: ignore[no-untyped-def]
    editor = views.playground.editor
    editor.setFocus()
    editor.selectAll()
    if text.isascii():
        qtbot.keyClicks(editor, text)
    else:  # QTest types ASCII only: other text arrives the way people bring it, pasted
        QApplication.clipboard().setText(text)
        qtbot.keySequence(editor, QKeySequence.StandardKey.Paste)
    wait_playground(qtbot, views.playground)


def test_open_every_format_from_the_menu_recent_and_drop(  # type: ignore[no-untyped-def]
    qtbot,
    window: MainWindow,
    views: TokenizerViews,
    saved: dict[str, Path],
    dialogs: ScriptedDialogs,
    shots: Path,
) -> None:
    expected_ids = None
    # 1. Tokenizer ▸ Open tokenizer… (and the shortcut for the second half of the formats).
    for fmt, path in saved.items():
        dialogs.answer(path)
        with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS):
            trigger(window, "Tokenizer", "Open tokenizer")
        wait_playground(qtbot, views.playground)
        assert views.last_error == "", f"{fmt}: {views.last_error}"
        assert views.current is not None and views.current.format == fmt
        _type(qtbot, views, "Hello world")
        ids = views.playground.encoding.ids if views.playground.encoding else None
        assert ids, f"{fmt}: typing gave no tokens"
        expected_ids = expected_ids or ids
        assert ids == expected_ids, f"{fmt} encodes differently from the first format"
    assert len(dialogs.asked) == len(saved)

    # 2. File ▸ Recent tokenizers lists them, most recent first, and opens each again.
    recent = [a.text() for a in window.recent_tokenizers_menu.actions()]
    assert len(recent) == len(saved)
    for text in recent:
        # Each opening rebuilds the menu (the file moves to the top): find the entry again, as a person would.
        action = next(a for a in window.recent_tokenizers_menu.actions() if a.text() == text)
        with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS):
            action.trigger()
        wait_playground(qtbot, views.playground)
        assert views.last_error == ""
        assert views.current is not None and views.current.path is not None

    # 3. Dropping a file on the playground's text opens it and keeps the text.
    for fmt in ("hf", "tiktoken"):
        with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS):
            drag_and_drop(views.playground.editor.viewport(), saved[fmt])
        wait_playground(qtbot, views.playground)
        assert views.current is not None and views.current.format == fmt
        assert views.playground.editor.toPlainText() == "Hello world"

    # 4. A folder through Tokenizer ▸ Open tokenizer folder… (the GPT-2 layout).
    dialogs.answer(saved["gpt2"].parent)
    with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS):
        trigger(window, "Tokenizer", "Open tokenizer folder")
    wait_playground(qtbot, views.playground)
    assert views.current is not None and views.current.format == "gpt2"
    _type(qtbot, views, TRICKY_TEXT)
    shoot(window, shots, "open-tokenizers")


def test_a_file_that_is_not_a_tokenizer_says_so_and_is_not_remembered(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views: TokenizerViews, dialogs: ScriptedDialogs, tmp_path: Path, shots: Path
) -> None:
    junk = tmp_path / "notes.json"
    junk.write_text('{"hello": "world"}', encoding="utf-8")
    dialogs.answer(junk)
    with qtbot.waitSignal(views.error_shown, timeout=WAIT_MS) as shown:
        trigger(window, "Tokenizer", "Open tokenizer")
    title, message = shown.args
    assert "notes.json" in title + message
    assert "Traceback" not in message
    assert window.settings.recent_tokenizers == []
    shoot(window, shots, "open-not-a-tokenizer")
    if views.error_box is not None:
        views.error_box.close()
