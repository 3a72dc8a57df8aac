"""Journey: a user puts several tokenizers side by side on one text (issue 21), adds and drops rows, and
picks the row the others are outlined against."""

# ruff: noqa: F811, PLR0917 - fixtures (some imported from tokenizer_helpers) are test arguments

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction

from bpe_studio.engine import Tokenizer, TrainResult
from bpe_studio.engine.encoding.analysis import cut_difference
from bpe_studio.ui.app.main_window import MainWindow
from bpe_studio.ui.app.tokenizer_views import TokenizerViews
from bpe_studio.ui.compare.side_by_side import SideBySideView

from ..tokenizer_helpers import (  # noqa: F401 - fixtures
    SPECIAL,
    WAIT_MS,
    small_file,
    tiny_corpus,
    tiny_file,
    tiny_result,
    train_tiny,
    views,
    wait_playground,
)
from .conftest import ScriptedDialogs, click, shoot, trigger

TEXT = "Hello world, the tokenizers cut this text their own way."


def _add_menu_action(view: SideBySideView, text: str) -> QAction:
    """The "+ Add…" menu's entry a person would click (the menu is filled as it opens)."""
    view.add_menu.aboutToShow.emit()
    found = [a for a in view.add_menu.actions() if a.text() == text]
    assert len(found) == 1, f"+ Add… has no single {text!r}: {[a.text() for a in view.add_menu.actions()]}"
    return found[0]


def _wait(qtbot, view: SideBySideView) -> None:  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: not view.is_busy(), timeout=WAIT_MS)


def test_many_tokenizers_side_by_side(  # type: ignore[no-untyped-def]
    qtbot,
    window: MainWindow,
    views: TokenizerViews,
    tiny_file: Path,
    small_file: Path,
    dialogs: ScriptedDialogs,
    shots: Path,
) -> None:
    view = views.side_by_side
    # 1. Tokenizer ▸ Open tokenizer…: an opened tokenizer is a row of the Side by side tab (Ctrl+5).
    dialogs.answer(tiny_file)
    with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS):
        trigger(window, "Tokenizer", "Open tokenizer")
    wait_playground(qtbot, views.playground)
    qtbot.keyClick(window, Qt.Key.Key_5, Qt.KeyboardModifier.ControlModifier)
    assert window.tabs.currentWidget() is view
    assert [t.path for t in view.tokenizers()] == [tiny_file]

    # 2. "+ Add… ▸ Open file…" and "+ Add… ▸ GPT-2" add rows; the current tokenizer stays.
    dialogs.answer(small_file)
    with qtbot.waitSignal(view.rows_changed, timeout=WAIT_MS):
        _add_menu_action(view, "Open file…").trigger()
    with qtbot.waitSignal(view.rows_changed, timeout=WAIT_MS):
        _add_menu_action(view, "GPT-2").trigger()
    assert len(view.rows) == 3
    assert views.current is not None and views.current.path == tiny_file
    assert window.tabs.currentWidget() is view

    # 3. Typing the shared text encodes it with every row: counts, bytes per token, outlines.
    view.text_edit.setFocus()
    view.text_edit.selectAll()
    qtbot.keyClicks(view.text_edit, TEXT)
    _wait(qtbot, view)
    assert view.text() == TEXT
    tokenizers = [t.tokenizer for t in view.tokenizers()]
    ids = [tok.encode(TEXT, allowed_special="all") for tok in tokenizers]
    for row, figures, row_ids in zip(view.rows, view.figures, ids, strict=True):
        assert [s.id for s in figures.encoding.spans] == row_ids
        n = len(row_ids)
        assert f"<b>{n}</b> tokens" in row.stats_label.text()
        assert f"<b>{len(TEXT.encode()) / n:.2f}</b> bytes per token" in row.stats_label.text()
    assert view.figures[0].spans == ()
    assert "(reference)" in view.rows[0].name_label.text()
    for i in (1, 2):
        expected = cut_difference(tokenizers[0], ids[0], tokenizers[i], ids[i])
        assert expected.spans, "the tokenizers should cut the text differently"
        assert view.figures[i].spans == expected.spans
        assert view.rows[i].view.difference_ranges, "the spans cut differently are outlined"
        assert "cut differently from tiny.json (outlined)" in view.rows[i].stats_label.text()

    # 4. "Outline against" GPT-2: its row becomes the reference.
    with qtbot.waitSignal(view.compared, timeout=WAIT_MS):
        view.reference_combo.setCurrentIndex(2)
    assert "(reference)" in view.rows[2].name_label.text()
    assert view.figures[2].spans == () and view.figures[0].spans
    assert "from gpt2" in view.rows[0].stats_label.text()

    # 5. A row's × drops it; "+ Add…" offers it again and puts it back.
    dropped = view.rows[1].loaded
    with qtbot.waitSignal(view.compared, timeout=WAIT_MS):
        click(qtbot, view.rows[1], "×")
    assert len(view.rows) == 2 and all(t is not dropped for t in view.tokenizers())
    assert view.reference_combo.currentText() == "gpt2", "the reference stays the one chosen"
    with qtbot.waitSignal(view.compared, timeout=WAIT_MS):
        _add_menu_action(view, "small").trigger()
    assert view.tokenizers()[-1] is dropped
    assert not _add_menu_action(view, "small").isEnabled(), "a tokenizer shown is not offered again"
    # 6. Tokenizer ▸ Add to Side by side… (Ctrl+Shift+A): the same file again replaces its row in place.
    dialogs.answer(tiny_file)
    with qtbot.waitSignal(view.rows_changed, timeout=WAIT_MS):
        qtbot.keyClick(
            window, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
        )
    assert [t.name for t in view.tokenizers()] == ["tiny.json", "gpt2", "small"]
    window.resize(1024, 640)
    _wait(qtbot, view)
    shoot(window, shots, "side-by-side")


def test_a_trained_tokenizer_and_a_long_text(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views: TokenizerViews, tiny_corpus: Path, tiny_result: TrainResult
) -> None:
    """A tokenizer trained in this session is a row too (opened twice: still one row), and a long text is
    encoded off the GUI thread."""
    with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS):
        window.open_tokenizer(tiny_result)
    with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS):
        window.open_tokenizer(tiny_result)
    view = views.side_by_side
    assert len(view.rows) == 1
    text = (TEXT + f"\n{SPECIAL}\n") * 20_000  # ~1.3 MB
    view.set_text(text)
    assert view.is_busy()
    _wait(qtbot, view)
    n = len(view.figures[0].encoding.spans)
    assert n == len(Tokenizer.from_result(tiny_result).encode(text, allowed_special="all"))
