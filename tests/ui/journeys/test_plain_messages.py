"""Journey: a new user's first steps read in the app's words (issue 11, item 11).

Start training is disabled (button, Training ▸ Start, Ctrl+Return) until there is a corpus, and says why;
a bad regex is quoted as typed (no doubled backslashes, no Markdown backticks); the status bar follows
what the user did instead of repeating "Add a corpus…".
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from bpe_studio.ui.app.main_window import MainWindow

from ..test_menu_actions import find_action
from .conftest import ScriptedDialogs, click, trigger

RUN_MS = 60_000


def _status(window: MainWindow) -> str:
    return window.statusBar().currentMessage()


def test_start_waits_for_a_corpus_and_the_status_bar_follows(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, small_corpus: Path, dialogs: ScriptedDialogs
) -> None:
    view = window.train_view
    start = find_action(window, "Training", "Start")
    # A first start: no corpus, so Start cannot work yet, and says why in plain words.
    assert view.corpus_files() == []
    assert not view.start_button.isEnabled() and not start.isEnabled()
    assert view.start_button.toolTip().startswith("Add a corpus first")
    assert "corpus" in start.toolTip()
    assert _status(window).startswith("Add a corpus")
    # Ctrl+Return does nothing: no dialog, no run.
    with qtbot.assertNotEmitted(view.error_shown, wait=100):
        qtbot.keyClick(window, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert not view.is_running() and view.error_box is None

    # File ▸ Add corpus files… picks one: Start is ready, and the status bar says what to do next.
    dialogs.answer([small_corpus])
    trigger(window, "File", "Add corpus files")
    assert view.start_button.isEnabled() and start.isEnabled()
    assert _status(window) == "Ready: press Start training (Ctrl+Return)."
    assert "Ctrl+Return" in view.start_button.toolTip()

    # Clear empties the list: back to the hint.
    click(qtbot, view, "Clear")
    assert not view.start_button.isEnabled() and not start.isEnabled()
    assert _status(window).startswith("Add a corpus")

    # Ctrl+Return starts a run once a corpus is back.
    dialogs.answer([small_corpus])
    trigger(window, "File", "Add corpus files")
    view.vocab_spin.setValue(300)
    with qtbot.waitSignal(view.training_ended, timeout=RUN_MS) as ended:
        qtbot.keyClick(window, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert ended.args == ["finished"]
    assert start.isEnabled() and _status(window).startswith("Trained ")


def test_a_bad_regex_is_quoted_as_typed(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, small_corpus: Path, dialogs: ScriptedDialogs
) -> None:
    view = window.train_view
    dialogs.answer([small_corpus])
    trigger(window, "File", "Add corpus files")
    typed = r"\p{L}+|\d+|("
    view.pattern_edit.clear()
    qtbot.keyClicks(view.pattern_edit, typed)

    error = view.pattern_error.text()
    assert view.pattern_error.isVisible()
    assert f"“{typed}”" in error and "does not compile" in error
    assert "\\\\" not in error and "`" not in error and "pattern:" not in error
    # Start waits for a pattern that works, and says why (the button, the menu and the status bar).
    start = find_action(window, "Training", "Start")
    assert not view.start_button.isEnabled() and not start.isEnabled()
    assert error in view.start_button.toolTip() and error in _status(window)
    # A regex that compiles but can match nothing is explained the same way.
    view.pattern_edit.setText(r"\s*")
    error = view.pattern_error.text()
    assert error.startswith("The regex “\\s*” can match the empty string") and "\\\\" not in error
    # Fixed: Start is ready again.
    view.pattern_edit.setText(r"\w+|\s+|[^\w\s]+")
    assert not view.pattern_error.isVisible()
    assert view.start_button.isEnabled() and start.isEnabled()
    assert _status(window) == "Ready: press Start training (Ctrl+Return)."


def test_a_corpus_gone_before_start_is_named_in_the_apps_words(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, tmp_path: Path, dialogs: ScriptedDialogs
) -> None:
    view = window.train_view
    corpus = tmp_path / "notes.txt"
    corpus.write_text("some text to train on\n" * 20, encoding="utf-8")
    dialogs.answer([corpus])
    trigger(window, "File", "Add corpus files")
    corpus.unlink()  # removed (or its drive unplugged) after it was added
    with qtbot.waitSignal(view.error_shown, timeout=RUN_MS) as shown:
        trigger(window, "Training", "Start")
    title, text = shown.args
    assert title == "Cannot start training"
    assert text.startswith("Corpus: ") and str(corpus) in text and "inputs" not in text
    box = view.error_box
    assert isinstance(box, QMessageBox)
    box.button(QMessageBox.StandardButton.Ok).click()
    qtbot.waitUntil(lambda: view.error_box is None)
    assert not view.is_running()
