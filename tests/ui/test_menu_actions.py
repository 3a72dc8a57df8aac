"""The main window's menus driven the way a user does: ``QAction.trigger()`` on actions found by their
text, with the file dialogs and message boxes patched. Every action of every menu is triggered once; any
exception in a slot or any Qt warning fails the test (see conftest.py: ``qt_log_level_fail``; pytest-qt
reports exceptions raised in slots as errors of the test)."""

# ruff: noqa: F811 - fixtures imported from tokenizer_helpers are test arguments

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QFileDialog, QMenu, QMessageBox

from bpe_studio.engine import TrainConfig
from bpe_studio.engine.formats import display_name
from bpe_studio.engine.formats.named import GPT2_FOLDER
from bpe_studio.ui.app.main_window import MainWindow
from bpe_studio.ui.train.view import save_result
from bpe_studio.ui.widgets.hub_dialog import HubDialog

from .tokenizer_helpers import (  # noqa: F401 - fixtures
    SPECIAL,
    WAIT_MS,
    open_and_wait,
    tiny_corpus,
    train_tiny,
    views,
    wait_playground,
)

#: Actions that end the app: they must exist, but triggering them would close the window under the test.
QUITTING = {("File", "Quit")}
#: Actions that open a tokenizer without a dialog (test_pattern_dialog.py triggers them): the walk would
#: replace the tokenizer these tests check.
OPENING = {("Tokenizer", "Open GPT-2")}


def _plain(text: str) -> str:
    """A menu text as the user reads it: ``"&Open tokenizer…"`` -> ``"Open tokenizer"``."""
    return text.replace("&", "").rstrip("…").strip()


def menu_actions(window: MainWindow) -> list[tuple[tuple[str, ...], QAction]]:
    """Every action of every menu of the menu bar (submenus walked recursively), with its path of texts.

    Example (``window`` the app's main window)::

        [path for path, _ in menu_actions(window)][:2]
        # [('File', 'Add corpus files'), ('File', 'Open demo corpus')]
    """
    found: list[tuple[tuple[str, ...], QAction]] = []

    def walk(menu: QMenu, path: tuple[str, ...]) -> None:
        for action in menu.actions():
            if action.isSeparator():
                continue
            here = (*path, _plain(action.text()))
            submenu = action.menu()
            if isinstance(submenu, QMenu):
                walk(submenu, here)
            else:
                found.append((here, action))

    for top in window.menuBar().actions():
        menu = top.menu()
        assert isinstance(menu, QMenu), f"menu bar entry {top.text()!r} has no menu"
        walk(menu, (_plain(top.text()),))
    return found


def find_action(window: MainWindow, *path: str) -> QAction:
    """The menu action at a path of texts, e.g. ``find_action(window, "Tokenizer", "Open tokenizer")``."""
    for here, action in menu_actions(window):
        if here == path:
            return action
    raise AssertionError(f"no menu action {' ▸ '.join(path)}; menus: {[p for p, _ in menu_actions(window)]}")


@pytest.fixture
def tokenizer_file(tiny_corpus: Path, tmp_path: Path) -> Path:
    """A small trained tokenizer saved in BPE Studio's format in the test's folder."""
    config = TrainConfig(inputs=(tiny_corpus,), vocab_size=300, special_tokens=(SPECIAL,))
    path = tmp_path / "small tokenizer.json"
    save_result(train_tiny(tiny_corpus, 300), config, path)
    return path


@pytest.fixture
def cancelled_dialogs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every QFileDialog / QMessageBox static method the app could call answers as if the user cancelled.

    Returns the names of the methods called, in order.
    """
    calls: list[str] = []

    def answer(name: str, value: Any) -> None:
        def fake(*_args: Any, **_kwargs: Any) -> Any:
            calls.append(name)
            return value

        owner = QFileDialog if name.startswith("get") else QMessageBox
        monkeypatch.setattr(owner, name, staticmethod(fake))

    for name, value in (
        ("getOpenFileName", ("", "")),
        ("getOpenFileNames", ([], "")),
        ("getOpenFileUrl", None),
        ("getSaveFileName", ("", "")),
        ("getExistingDirectory", ""),
    ):
        answer(name, value)
    for name in ("about", "aboutQt"):
        answer(name, None)
    for name in ("information", "warning", "critical", "question"):
        answer(name, QMessageBox.StandardButton.Cancel)

    def hub_cancelled(*_args: Any) -> None:  # File ▸ Open from Hugging Face…: the model id dialog
        calls.append("HubDialog.ask")

    monkeypatch.setattr(HubDialog, "ask", staticmethod(hub_cancelled))
    return calls


def test_open_tokenizer_from_the_menu_opens_it_in_the_playground(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views, tokenizer_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[tuple[Any, ...]] = []

    def get_open_file_name(*args: Any, **_kwargs: Any) -> tuple[str, str]:
        asked.append(args)
        return str(tokenizer_file), "Tokenizers (*.json)"

    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(get_open_file_name))
    action = find_action(window, "Tokenizer", "Open tokenizer")
    assert action.isEnabled()
    with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS) as blocker:
        action.trigger()
    wait_playground(qtbot, views.playground)

    assert len(asked) == 1, "the file dialog was not shown exactly once"
    shown = blocker.args[0]
    assert shown.path is not None and shown.path.resolve() == tokenizer_file.resolve()
    assert views.current is shown
    assert views.playground.loaded is shown
    assert window.tabs.currentWidget() is views.playground
    assert views.last_error == ""
    assert views.error_box is None
    assert window.settings.recent_tokenizers[0] == str(tokenizer_file)
    # Named as everywhere else (not by its whole path, which is its tooltip).
    recent = find_action(window, "File", "Recent tokenizers", display_name(tokenizer_file))
    assert recent.isEnabled() and recent.toolTip() == str(tokenizer_file)


def _trigger_every_action(qtbot: Any, window: MainWindow, calls: list[str]) -> list[tuple[str, ...]]:
    """Trigger every menu action but Quit; returns the paths triggered."""
    paths = [path for path, _ in menu_actions(window)]
    for quitting in QUITTING:
        assert quitting in paths, f"no {' ▸ '.join(quitting)} action"
    triggered = []
    for path, action in menu_actions(window):
        if path in QUITTING or path in OPENING:
            continue
        action.trigger()
        QApplication.processEvents()
        triggered.append(path)
        # A run started by Training ▸ Start (the demo corpus is in the form) ends before the next action.
        if window.train_view.is_running() and path != ("Training", "Start"):
            qtbot.waitUntil(lambda: not window.train_view.is_running(), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: not window.train_view.is_running(), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: not window.tokenizer_views.is_busy(), timeout=WAIT_MS)
    QApplication.processEvents()
    return triggered


def _close_dialogs(window: MainWindow) -> None:
    views = window.tokenizer_views
    if views.export_dialog is not None:
        views.export_dialog.close()
    for box in (views.error_box, window.train_view.error_box):
        if box is not None:
            box.close()


def test_every_menu_action_can_be_triggered_on_an_empty_window(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views, cancelled_dialogs: list[str]
) -> None:
    triggered = _trigger_every_action(qtbot, window, cancelled_dialogs)
    _close_dialogs(window)

    for path in (
        ("File", "Open demo corpus"),
        ("Training", "Start"),
        ("Training", "Cancel"),
        ("Tokenizer", "Open tokenizer"),
        ("Tokenizer", "Show Compare"),
        ("Help", "About BPE Studio"),
    ):
        assert path in triggered, f"{' ▸ '.join(path)} was not found in the menus"
    # Cancelled dialogs open nothing: the one tokenizer shown is GPT-2, which a tokenizer tab shown with
    # none opened shows unasked (issue 21), and which is therefore no recent file.
    assert views.current is None or views.current.path == GPT2_FOLDER
    assert window.settings.recent_tokenizers == []
    assert "getOpenFileName" in cancelled_dialogs
    assert "getExistingDirectory" in cancelled_dialogs
    assert "about" in cancelled_dialogs
    assert "HubDialog.ask" in cancelled_dialogs


def test_every_menu_action_can_be_triggered_with_a_tokenizer_open(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views, tokenizer_file: Path, cancelled_dialogs: list[str]
) -> None:
    # A tokenizer open (Export enabled) and one in Recent tokenizers (a submenu with an action).
    open_and_wait(qtbot, window, tokenizer_file)
    assert find_action(window, "Tokenizer", "Export").isEnabled()

    triggered = _trigger_every_action(qtbot, window, cancelled_dialogs)
    wait_playground(qtbot, views.playground)

    assert ("File", "Recent tokenizers", display_name(tokenizer_file)) in triggered
    assert views.export_dialog is not None, "Tokenizer ▸ Export did not open the export dialog"
    _close_dialogs(window)
    # The file dialogs were cancelled: the tokenizer shown is still the one opened.
    assert views.current is not None and views.current.path is not None
    assert views.current.path.resolve() == tokenizer_file.resolve()
    assert views.last_error == ""


#: Signals that pass a ``checked`` bool to a slot that can take one.
BOOL_SIGNALS = {"triggered", "clicked", "toggled"}


def _positional_parameters(args: ast.arguments) -> list[str]:
    return [arg.arg for arg in (*args.posonlyargs, *args.args) if arg.arg != "self"]


def test_no_checked_bool_can_land_in_a_slot_parameter() -> None:
    """The class of the Open tokenizer bug, checked in the source: a ``triggered``/``clicked``/``toggled``
    connection goes to a method without positional parameters (or only ``checked``), or to a lambda whose
    first parameter takes ``checked`` (``lambda _checked=False, x=x: ...``); a slot's options are
    keyword-only."""
    import bpe_studio.ui

    folder = Path(bpe_studio.ui.__file__).parent
    trees = {
        str(path.relative_to(folder)): ast.parse(path.read_text(encoding="utf-8"))
        for path in sorted(folder.rglob("*.py"))
    }
    methods: dict[str, list[tuple[str, ast.FunctionDef]]] = {}
    for name, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef):
                        methods.setdefault(item.name, []).append((f"{name}:{node.name}", item))

    wrong: list[str] = []
    connections = 0
    for name, tree in trees.items():
        for node in ast.walk(tree):
            call = node
            if not (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute)
                and call.func.attr == "connect"
                and isinstance(call.func.value, ast.Attribute)
                and call.func.value.attr in BOOL_SIGNALS
                and call.args
            ):
                continue
            connections += 1
            slot = call.args[0]
            where = f"{name}:{call.lineno}"
            if isinstance(slot, ast.Lambda):
                params = _positional_parameters(slot.args)
                if params and params[0].lstrip("_") != "checked":
                    wrong.append(f"{where}: the lambda's first parameter {params[0]!r} receives `checked`")
            elif isinstance(slot, ast.Attribute):
                for owner, method in methods.get(slot.attr, []):
                    params = _positional_parameters(method.args)
                    # A `checked` parameter without a default is meant for the bool (a toggled check box).
                    if params and (params != ["checked"] or method.args.defaults):
                        wrong.append(f"{where}: {owner}.{slot.attr} takes positional {params}")
            else:
                wrong.append(f"{where}: connect a method or a lambda, not {ast.dump(slot)[:40]}")
    assert connections >= 10, "the scan found too few connections to be looking at the right code"
    assert wrong == [], "a signal's `checked` bool can land in a slot parameter:\n" + "\n".join(wrong)
