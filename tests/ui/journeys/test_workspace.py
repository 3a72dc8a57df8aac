"""Journey: the workspace stays (issue 21). A user opens tokenizers, types, moves the slider, arranges the
Side by side rows and the chat, quits, and finds it all again at the next start; a tokenizer deleted
meanwhile is skipped with one status line; File ▸ Save workspace… and Open workspace… do the same with a
file, never over a tokenizer's file."""

# ruff: noqa: F811, PLR0917 - fixtures (some imported from tokenizer_helpers) are test arguments

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from bpe_studio.ui.app.main_window import MainWindow
from bpe_studio.ui.app.settings import Settings, load_settings, settings_path
from bpe_studio.ui.app.workspace import MAX_TEXT_BYTES, WORKSPACE_FORMAT

from ..tokenizer_helpers import (  # noqa: F401 - fixtures
    WAIT_MS,
    small_file,
    tiny_corpus,
    tiny_file,
    tiny_result,
    train_tiny,
    wait_playground,
)
from .conftest import ScriptedDialogs, click, shoot, trigger

TEXT = "The workspace keeps this text, naïve café 🙃 and all."


@pytest.fixture
def start(qtbot) -> Iterator[Any]:  # type: ignore[no-untyped-def]
    """Start the app as `bpe-studio app` does: settings from the (temporary) config folder, kept on quit."""
    started: list[MainWindow] = []

    def launch(*, wait: bool = True) -> MainWindow:
        window = MainWindow(load_settings(), persist=True)
        qtbot.addWidget(window)
        started.append(window)
        window.resize(1024, 640)
        window.show()
        qtbot.waitExposed(window)
        if wait:
            qtbot.waitUntil(lambda: not window.workspace.is_busy(), timeout=WAIT_MS)
            _settle(qtbot, window)
        return window

    yield launch
    for window in started:
        window.tokenizer_views.shutdown()
        window.workspace.shutdown()


def _settle(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    views = window.tokenizer_views
    qtbot.waitUntil(
        lambda: not (views.is_busy() or views.side_by_side.is_busy() or views.chat.is_busy()), timeout=WAIT_MS
    )


def _quit(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    trigger(window, "File", "Quit")
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=WAIT_MS)


def test_the_workspace_comes_back_after_a_restart(  # type: ignore[no-untyped-def]
    qtbot, start, tiny_file: Path, small_file: Path, dialogs: ScriptedDialogs, shots: Path, tmp_path: Path
) -> None:
    # 1. A session: GPT-2, a second tokenizer added in Side by side, then the tiny one as the current.
    window = start()
    views = window.tokenizer_views
    with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS):
        trigger(window, "Tokenizer", "Open GPT-2")
    side = views.side_by_side
    dialogs.answer(small_file)
    side.add_menu.aboutToShow.emit()
    with qtbot.waitSignal(side.rows_changed, timeout=WAIT_MS):
        next(a for a in side.add_menu.actions() if a.text() == "Open file…").trigger()
    dialogs.answer(tiny_file)
    with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS):
        trigger(window, "Tokenizer", "Open tokenizer")
    wait_playground(qtbot, views.playground)
    editor = views.playground.editor
    editor.setFocus()
    editor.selectAll()
    qtbot.keyClicks(editor, "The workspace keeps this text")
    editor.insertPlainText(TEXT.removeprefix("The workspace keeps this text"))  # typed, then pasted
    wait_playground(qtbot, views.playground)
    box = views.playground.size_box
    box.slider.setValue(box.position_for(120))  # the slider dragged to a smaller vocabulary
    wait_playground(qtbot, views.playground)
    merges = views.playground.merges_used
    assert 0 < merges < views.current.index.merge_count  # type: ignore[union-attr]
    gpt2_row = next(row for row in side.rows if row.loaded.name == "gpt2")
    click(qtbot, gpt2_row, "×")
    views.chat.set_messages([("user", "Keep me"), ("assistant", "Kept.")])
    qtbot.keyClick(window, Qt.Key.Key_3, Qt.KeyboardModifier.ControlModifier)  # the Vocabulary tab
    _settle(qtbot, window)
    rows = [row.loaded.path for row in side.rows]
    _quit(qtbot, window)
    kept = json.loads(settings_path().read_text(encoding="utf-8"))["workspace"]
    assert kept["format"] == WORKSPACE_FORMAT and kept["tab"] == "Vocabulary"

    # 2. The next start: everything is back.
    window = start()
    views = window.tokenizer_views
    assert views.current is not None and views.current.path == tiny_file
    assert views.playground.text() == TEXT
    assert views.playground.merges_used == merges
    assert window.tabs.tabText(window.tabs.currentIndex()) == "Vocabulary"
    assert [t.path for t in views.side_by_side.tokenizers()] == rows
    assert sorted(t.name for t in views.opened) == ["gpt2", "small", "tiny.json"]
    assert [(m["role"], m["content"]) for m in views.chat.messages()] == [
        ("user", "Keep me"),
        ("assistant", "Kept."),
    ]
    assert window.statusBar().currentMessage().startswith("Restored the workspace: 3 tokenizers")
    shoot(window, shots, "workspace-restored")

    # 3. File ▸ Save workspace… writes a file; over a tokenizer's own file it refuses, in one line.
    saved = tmp_path / "mine.json"
    dialogs.answer(saved)
    trigger(window, "File", "Save workspace")
    assert json.loads(saved.read_text(encoding="utf-8"))["text"] == TEXT
    before = tiny_file.read_bytes()
    dialogs.answer(tiny_file)
    with qtbot.waitSignal(window.workspace.error_shown, timeout=WAIT_MS) as shown:
        trigger(window, "File", "Save workspace")
    title, message = shown.args
    assert title == "Cannot save the workspace"
    assert "tiny.json" in message and "the tokenizer" in message and "\n" not in message
    assert tiny_file.read_bytes() == before
    _close_error_box(window)

    # 4. A tokenizer deleted before the next start is skipped, with one status line.
    _quit(qtbot, window)
    small_file.unlink()
    window = start()
    views = window.tokenizer_views
    status = window.statusBar().currentMessage()
    assert status.startswith("Restored the workspace: 2 tokenizers; skipped 1 that could not be opened: ")
    assert str(small_file.parent) in status and "\n" not in status
    assert views.current is not None and views.current.path == tiny_file
    assert views.playground.merges_used == merges

    # 5. File ▸ Open workspace… puts a saved one back; a file that is not one says so in one line.
    views.playground.set_text("something else")
    dialogs.answer(saved)
    with qtbot.waitSignal(window.workspace.restored, timeout=WAIT_MS):
        trigger(window, "File", "Open workspace")
    _settle(qtbot, window)
    assert views.playground.text() == TEXT
    junk = tmp_path / "notes.json"
    junk.write_text('{"hello": 1}', encoding="utf-8")
    dialogs.answer(junk)
    with qtbot.waitSignal(window.workspace.error_shown, timeout=WAIT_MS) as shown:
        trigger(window, "File", "Open workspace")
    assert shown.args[1].startswith(f"{junk}: not a BPE Studio workspace")
    assert "Save workspace" in shown.args[1] and "\n" not in shown.args[1]
    _close_error_box(window)
    _quit(qtbot, window)


def _close_error_box(window: MainWindow) -> None:
    from PySide6.QtWidgets import QMessageBox

    for box in window.findChildren(QMessageBox, "workspace_error_box"):
        box.close()


def test_a_huge_text_is_kept_up_to_its_first_megabyte(qtbot, start) -> None:  # type: ignore[no-untyped-def]
    window = start()
    text = "é" * (MAX_TEXT_BYTES // 2 + 1000)  # 1,002,000 bytes
    window.tokenizer_views.playground.set_text(text)
    long_chat = [("user", "a" * 600_000), ("assistant", "b" * 600_000), ("user", "c")]
    window.tokenizer_views.chat.set_messages(long_chat)
    _quit(qtbot, window)
    window = start(wait=False)
    kept = window.tokenizer_views.playground.text()
    assert kept == text[: MAX_TEXT_BYTES // 2]
    chat = [(m["role"], m["content"]) for m in window.tokenizer_views.chat.messages()]
    assert chat == [("user", "a" * 600_000), ("assistant", "b" * 400_000), ("user", "")]
    assert "its texts were cut to their first 1 MB" in window.statusBar().currentMessage()


def test_screenshot_windows_neither_restore_nor_keep_the_workspace(  # type: ignore[no-untyped-def]
    qtbot, tiny_file: Path
) -> None:
    settings = Settings(
        workspace={
            "format": WORKSPACE_FORMAT,
            "version": 1,
            "tokenizers": [{"path": str(tiny_file)}],
            "current": 0,
            "text": "restored",
        }
    )
    window = MainWindow(settings, persist=False)  # as --screenshot makes it
    qtbot.addWidget(window)
    assert not window.workspace.is_busy()
    assert window.tokenizer_views.playground.text() == ""
    window.close()
    assert not settings_path().exists()


def test_the_demo_shows_its_training_whatever_tab_was_kept(  # type: ignore[no-untyped-def]
    qtbot, tiny_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bpe_studio.cli import parse_args
    from bpe_studio.ui.app.app import open_window
    from bpe_studio.ui.app.settings import save_settings
    from bpe_studio.ui.train.view import TrainView

    workspace = {"format": WORKSPACE_FORMAT, "version": 1, "tokenizers": [{"path": str(tiny_file)}]}
    save_settings(Settings(workspace={**workspace, "current": 0, "tab": "Vocabulary"}))
    started: list[bool] = []
    monkeypatch.setattr(TrainView, "load_demo", lambda _self, start=False: started.append(start))
    window, shooter = open_window(parse_args(["--demo"]))
    qtbot.addWidget(window)
    assert shooter is None and started == [True]
    qtbot.waitUntil(lambda: not window.workspace.is_busy(), timeout=WAIT_MS)
    views = window.tokenizer_views
    assert views.current is not None and views.current.path == tiny_file, "the workspace is restored"
    assert window.tabs.currentWidget() is window.train_view, "--demo shows the training"
    views.shutdown()
    window.close()
