"""Fixtures of the journey tests: the main window driven through its menus, shortcuts and buttons, with the
file dialogs answered by a script instead of a person, and a picture of the window at each journey's end.

Pictures go to ``$BPE_STUDIO_JOURNEY_SHOTS`` when it is set (to look at them after a run), else to the test's
temporary folder.
"""

from __future__ import annotations

import os
from collections import deque
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QAbstractButton, QApplication, QFileDialog, QMainWindow, QWidget

from ..test_menu_actions import find_action

#: Environment variable naming a folder for the journeys' end pictures.
SHOTS_ENV = "BPE_STUDIO_JOURNEY_SHOTS"


class ScriptedDialogs:
    """Answers to the app's file dialogs, in order: ``dialogs.answer(path)`` queues one answer.

    Every QFileDialog static method takes the next answer (a path, a list of paths for
    ``getOpenFileNames``); a dialog asked with nothing queued fails the test, as a person would not know
    what to pick.
    """

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.answers: deque[Path | list[Path]] = deque()
        self.asked: list[str] = []
        for name in ("getOpenFileName", "getOpenFileNames", "getSaveFileName", "getExistingDirectory"):
            monkeypatch.setattr(QFileDialog, name, staticmethod(self._fake(name)))

    def answer(self, *answers: Path | list[Path]) -> None:
        self.answers.extend(answers)

    def _fake(self, name: str) -> Any:
        def fake(*_args: Any, **_kwargs: Any) -> Any:
            self.asked.append(name)
            assert self.answers, f"QFileDialog.{name} was shown but the journey had no answer for it"
            answer = self.answers.popleft()
            if name == "getOpenFileNames":
                paths = answer if isinstance(answer, list) else [answer]
                return [str(p) for p in paths], ""
            assert isinstance(answer, Path)
            if name == "getExistingDirectory":
                return str(answer)
            return str(answer), ""

        return fake


@pytest.fixture
def dialogs(monkeypatch: pytest.MonkeyPatch) -> ScriptedDialogs:
    """The file dialogs, answered by the journey."""
    return ScriptedDialogs(monkeypatch)


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    """The folder for the journeys' end pictures."""
    folder = Path(os.environ.get(SHOTS_ENV) or tmp_path / "shots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def shoot(window: QMainWindow, folder: Path, name: str) -> Path:
    """Save a picture of the window as ``folder/name.png`` and check it is a real picture.

    Example (in a journey, ``window`` the app's main window)::

        shoot(window, shots, "train-export")  # PosixPath('.../train-export.png')
    """
    QApplication.processEvents()
    path = folder / f"{name}.png"
    image = window.grab().toImage()
    assert image.width() > 400 and image.height() > 300, "the window is too small to be a real picture"
    assert image.save(str(path)), f"could not save {path}"
    return path


def trigger(window: QMainWindow, *menu_path: str) -> QAction:
    """Trigger the menu action at a path of texts the way a click does (it must be enabled)."""
    action = find_action(window, *menu_path)  # type: ignore[arg-type]
    assert action.isEnabled(), f"{' ▸ '.join(menu_path)} is disabled"
    action.trigger()
    return action


def button(parent: QWidget, text: str) -> QAbstractButton:
    """The visible button a person would press, found by its text (``&`` and a trailing ``…`` ignored)."""

    def plain(label: str) -> str:
        return label.replace("&", "").rstrip("…").strip()

    found = [
        b for b in parent.findChildren(QAbstractButton) if plain(b.text()) == plain(text) and b.isVisible()
    ]
    assert len(found) == 1, f"expected one visible button {text!r}, found {len(found)}"
    return found[0]


def click(qtbot: Any, parent: QWidget, text: str) -> None:
    """Click the button with this text (it must be enabled)."""
    from PySide6.QtCore import Qt

    target = button(parent, text)
    assert target.isEnabled(), f"the {text!r} button is disabled"
    qtbot.mouseClick(target, Qt.MouseButton.LeftButton)
