"""Journey: a laptop screen. The window is set to 1024×640 (a 1366×768 laptop with a panel, or a 2048×1280
screen at 2× scaling) and every tab must fit it: the window takes that size, and no button, header, box or
field of any view is cut off (issue 21: the window could not be smaller than 1150×751)."""

# ruff: noqa: F811, PLR0917 - fixtures (some imported from tokenizer_helpers) are test arguments

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QComboBox,
    QGroupBox,
    QHeaderView,
    QLineEdit,
    QStyle,
    QWidget,
)

from bpe_studio.ui.app.main_window import MainWindow
from bpe_studio.ui.app.tokenizer_views import TokenizerViews
from bpe_studio.ui.widgets.common import VerticalScroll

from ..tokenizer_helpers import WAIT_MS, views, wait_playground  # noqa: F401 - fixtures
from .conftest import ScriptedDialogs, shoot, trigger

#: The size every view must fit (logical pixels).
SMALL = (1024, 640)

#: Seconds a training run of the journey may take.
RUN_MS = 120_000


def cut_off(tab: QWidget) -> list[str]:
    """The controls of a tab that are not wholly visible: buttons, fields and combo boxes cut by their
    parents' edges, a box whose title does not fit, a table header wider than its table."""
    found = []
    for widget in tab.findChildren(QWidget):
        if not widget.isVisible() or widget.window() is not tab.window():
            continue
        name = f"{type(widget).__name__} {widget.objectName() or ''}".strip()
        if isinstance(widget, (QAbstractButton, QLineEdit, QComboBox)):
            text = getattr(widget, "text", lambda: "")()
            if widget.visibleRegion().boundingRect().size() != widget.size():
                found.append(f"{name} {text!r} is cut off")
            elif isinstance(widget, QAbstractButton) and widget.width() < widget.minimumSizeHint().width():
                found.append(f"{name} {text!r} is too narrow for its text")
        elif isinstance(widget, QHeaderView) and widget.orientation().name == "Horizontal":
            table = widget.parent().objectName()
            if widget.length() > widget.viewport().width() + 1:
                found.append(f"the header of {table!r} is wider than its table")
            model = widget.model()
            margin = 2 * widget.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None, widget)
            for column in range(widget.count() if model is not None else 0):
                title = str(model.headerData(column, Qt.Orientation.Horizontal) or "")
                if widget.sectionSize(column) < widget.fontMetrics().horizontalAdvance(title) + margin:
                    found.append(f"the title {title!r} of {table!r} is cut off")
        elif isinstance(widget, QGroupBox):
            title = widget.fontMetrics().horizontalAdvance(widget.title()) + 16
            if title > widget.width():
                found.append(f"the title of the box {widget.title()!r} is cut off")
    return found


def test_every_tab_fits_a_laptop_screen(  # type: ignore[no-untyped-def]
    qtbot,
    window: MainWindow,
    views: TokenizerViews,
    small_corpus: Path,
    dialogs: ScriptedDialogs,
    shots: Path,
) -> None:
    # Something in every view: a finished run (its charts, merges and result), GPT-2 in the playground,
    # its vocabulary, and the trained tokenizer beside it in Compare.
    window.resize(*SMALL)
    dialogs.answer([small_corpus])
    trigger(window, "File", "Add corpus files")
    window.train_view.vocab_spin.setValue(400)
    with qtbot.waitSignal(window.train_view.training_ended, timeout=RUN_MS):
        trigger(window, "Training", "Start")
    with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS):
        trigger(window, "Tokenizer", "Open GPT-2")
    wait_playground(qtbot, views.playground)
    with qtbot.waitSignal(views.compare.compared, timeout=WAIT_MS):
        views.open(window.train_view.result, target="b")  # type: ignore[arg-type]
    qtbot.waitUntil(lambda: not views.is_busy() and not views.compare.is_busy(), timeout=WAIT_MS)

    minimum = window.minimumSizeHint()
    assert minimum.width() <= SMALL[0] and minimum.height() <= SMALL[1], minimum
    problems = {}
    for index in range(window.tabs.count()):
        window.tabs.setCurrentIndex(index)
        title = window.tabs.tabText(index).replace("&", "")
        modes = getattr(window.tabs.currentWidget(), "modes", None)  # Compare: its Text and Corpus modes
        for mode in range(modes.count() if modes is not None else 1):
            if modes is not None:
                modes.setCurrentIndex(mode)
                title = f"Compare ▸ {modes.tabText(mode)}"
            qtbot.waitUntil(lambda: (window.width(), window.height()) == SMALL)
            shoot(window, shots, f"small-{title.replace(' ▸ ', '-')}")
            problems[title] = cut_off(window.tabs.currentWidget())
    assert all(not found for found in problems.values()), problems
    # The Train tab's form scrolls its settings rather than setting the window's height (Start and Cancel
    # stay below it); at this size it needs not.
    window.tabs.setCurrentWidget(window.train_view)
    form_area = window.train_view.form.scroll_area
    assert isinstance(form_area, VerticalScroll)
    assert form_area.isVisible() and not form_area.verticalScrollBar().isVisible()


#: Run in a child process: the window's minimum size at 2× scaling, in logical pixels, every tab shown.
_SCALED = """
import json, sys
from bpe_studio.ui.app.app import create_application
from bpe_studio.ui.app.main_window import MainWindow
from bpe_studio.ui.app.settings import Settings
app = create_application()
window = MainWindow(Settings(), persist=False)
window.resize(1024, 640)
window.show()
sizes = []
for index in range(window.tabs.count()):
    window.tabs.setCurrentIndex(index)
    app.processEvents()
    hint = window.minimumSizeHint()
    sizes.append([window.width(), window.height(), hint.width(), hint.height()])
print(json.dumps({"ratio": window.devicePixelRatio(), "sizes": sizes}))
window.close()
"""


def test_at_twice_the_scale_the_window_still_fits(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "QT_SCALE_FACTOR": "2",
        "BPE_STUDIO_CONFIG_DIR": str(tmp_path / "config"),
    }
    done = subprocess.run(
        [sys.executable, "-I", "-c", _SCALED],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["ratio"] == 2
    for width, height, min_width, min_height in found["sizes"]:
        assert (width, height) == (1024, 640)
        assert min_width <= 1024 and min_height <= 640
