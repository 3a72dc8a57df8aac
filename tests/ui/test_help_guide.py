"""Help ▸ Guide to the views (F1): a short text per view, opened at the current tab's section."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QApplication

from bpe_studio.ui.app.help_guide import GUIDE, HelpGuide
from bpe_studio.ui.app.main_window import MainWindow

from .test_menu_actions import find_action, menu_actions


def test_the_menu_action_opens_the_guide(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    action = find_action(window, "Help", "Guide to the views")
    assert action.shortcut() == QKeySequence(Qt.Key.Key_F1)
    action.trigger()
    guide = window.findChild(HelpGuide)
    assert guide is not None and guide.isVisible() and not guide.isModal()
    text = guide.browser.toPlainText()
    # One section per tab of the window, each with its text.
    tabs = [window.tabs.tabText(i).replace("&", "") for i in range(window.tabs.count())]
    assert [section.title for section in GUIDE] == tabs
    for section in GUIDE:
        assert section.title in text and section.intro in text
    guide.close()


def test_f1_opens_the_guide_at_the_current_view(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    window.tabs.setCurrentIndex(window.tabs.count() - 1)  # Compare, at the end of the guide
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    qtbot.keyClick(window, Qt.Key.Key_F1)
    guide = window.findChild(HelpGuide)
    assert guide is not None and guide.isVisible()
    qtbot.waitUntil(lambda: guide.browser.verticalScrollBar().value() > 0)
    # Asked again (from the Train tab), the same window goes back to the top.
    window.tabs.setCurrentIndex(0)
    find_action(window, "Help", "Guide to the views").trigger()
    assert window.findChildren(HelpGuide) == [guide]
    assert guide.browser.verticalScrollBar().value() == 0
    guide.close()


def test_the_guide_covers_every_part_and_shortcut(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    """Issue 21: the guide left out Watch BPE learn, Compare ▸ Corpus, Export, the special-token modes and
    the shortcuts, and said "darker" where the dark theme shows "brighter"."""
    find_action(window, "Help", "Guide to the views").trigger()
    guide = window.findChild(HelpGuide)
    assert guide is not None
    text = guide.browser.toPlainText()
    parts = ("Watch BPE learn", "Replay", "Corpus:", "Export", "Recognised", "Ordinary text", "Disallowed")
    for part in parts:
        assert part in text, part
    assert "brighter in the dark" in text and "darker in the light" in text
    # Every shortcut of every menu, with what it does.
    shortcuts = [(path, action.shortcut()) for path, action in menu_actions(window)]
    shortcuts = [(path, key) for path, key in shortcuts if not key.isEmpty()]
    assert len(shortcuts) >= 10
    lines = text.splitlines()
    for path, key in shortcuts:
        keys = key.toString(QKeySequence.SequenceFormat.NativeText)
        assert any(" ▸ ".join(path) in line for line in lines), path
        assert keys in text, keys
    guide.close()
