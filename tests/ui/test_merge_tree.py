"""The Vocabulary tab's merge tree with a long token (issue 11, item 7): the placeholder is not clipped, a
93-byte token's tree shows its top box in view, fits the width as far as it can, and folds deep levels."""

# ruff: noqa: F811 - the fixtures imported from tokenizer_helpers are test arguments

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QFontMetrics

from bpe_studio.engine import TrainConfig, train
from bpe_studio.ui.app.main_window import MainWindow
from bpe_studio.ui.app.tokenizer_views import TokenizerViews
from bpe_studio.ui.widgets.merge_tree import DEFAULT_LEVELS

from .tokenizer_helpers import WAIT_MS, views  # noqa: F401 - fixtures

#: A 93-character line of punctuation (one pre-token) repeated: training makes it one 93-byte token.
LINE = ("#-=*" * 24)[:93]


def _show(qtbot, window: MainWindow, views: TokenizerViews) -> None:  # type: ignore[no-untyped-def]
    window.resize(1280, 760)
    window.show()
    qtbot.waitExposed(window)
    window.tabs.setCurrentWidget(views.vocab_browser)


def test_the_placeholder_is_not_clipped(qtbot, window: MainWindow, views: TokenizerViews) -> None:  # type: ignore[no-untyped-def]
    _show(qtbot, window, views)
    tree = views.vocab_browser.tree_view
    viewport = views.vocab_browser.tree_scroll.viewport()
    qtbot.waitUntil(lambda: tree.width() > 0 and viewport.width() > 300)
    message = "Open a tokenizer to browse its vocabulary."  # what the tab says before one is open
    # The message gets the whole width of the view (it was drawn centred in a 200-pixel widget, both ends
    # cut off), and wrapped in that width it fits.
    metrics = QFontMetrics(tree.font())
    assert tree.width() >= min(metrics.horizontalAdvance(message) + 16, viewport.width())
    assert tree.width() <= viewport.width() + 1
    flags = int(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop | Qt.TextFlag.TextWordWrap)
    area = tree.rect().adjusted(8, 8, -8, -8)
    assert area.contains(metrics.boundingRect(area, flags, message))


def test_a_long_tokens_tree_shows_its_top_and_folds_deep_levels(
    qtbot, window: MainWindow, views: TokenizerViews, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    corpus = tmp_path / "lines.txt"
    corpus.write_text((LINE + "\nthe quick brown fox\n") * 300, encoding="utf-8")
    result = train(TrainConfig(inputs=(corpus,), vocab_size=400))
    _show(qtbot, window, views)
    with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS):
        window.open_tokenizer(result)
    loaded = views.current
    assert loaded is not None
    longest = max(loaded.tokenizer.vocab, key=lambda i: len(loaded.tokenizer.token_bytes(i)))
    assert loaded.tokenizer.token_bytes(longest) == LINE.encode()
    browser = views.vocab_browser
    browser.show_token(longest)
    tree, scroll = browser.tree_view, browser.tree_scroll
    if os.environ.get("BPE_STUDIO_SHOT_DIR"):
        browser.grab().save(os.path.join(os.environ["BPE_STUDIO_SHOT_DIR"], "merge-tree-93.png"))
    full = tree.tree
    assert full is not None and full.token_id == longest and full.height() > DEFAULT_LEVELS

    # The top box (the token itself) is where the user looks: its middle is inside the visible area.
    root = next(box for box in tree.boxes if box.node is full)
    visible = QRect(QPoint(0, 0), scroll.viewport().size())
    top_middle = tree.mapTo(scroll.viewport(), root.rect.center().toPoint())
    assert visible.contains(top_middle), (visible, top_middle)

    # Deep levels are folded: few rows, and the folded boxes say so; the drawing shrank to fit.
    rows = {round(box.rect.top()) for box in tree.boxes}
    assert len(rows) == DEFAULT_LEVELS + 1
    folded = [box for box in tree.boxes if box.collapsed]
    assert folded and all("level" in box.caption for box in folded if box.caption)
    assert len(tree.boxes) < 2 * len(LINE) - 1
    assert tree.scale < 1

    # Clicking a folded box shows that token's own tree.
    target = max(folded, key=lambda box: box.rect.width())
    with qtbot.waitSignal(browser.token_selected, timeout=WAIT_MS) as selected:
        qtbot.mouseClick(tree, Qt.MouseButton.LeftButton, pos=target.rect.center().toPoint())
    assert selected.args == [target.node.token_id]

    # Every level on request: the whole tree, one box per node, the top box still in view.
    browser.show_token(longest)
    qtbot.mouseClick(browser.all_levels_check, Qt.MouseButton.LeftButton)
    assert browser.all_levels_check.isChecked()
    assert len(tree.boxes) == 2 * len(LINE) - 1
    root = tree.root_box()
    assert root is not None
    top_middle = tree.mapTo(scroll.viewport(), root.rect.center().toPoint())
    assert visible.contains(top_middle)
