"""Journey: the Playground's second hour (issue 21): it opens on GPT-2, takes a large paste and typing after
it with exact ids, loads a dropped .txt as its text, lets the keyboard leave the text, zooms its text, shows
control characters and no-break spaces, leaves "tokens per word" out for Chinese, and offers Copy only
with something to copy."""

# ruff: noqa: F811 - fixtures (some imported from tokenizer_helpers) are test arguments

from __future__ import annotations

import array
import gc
import json
import threading
from pathlib import Path

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QApplication

from bpe_studio.engine import TokenSpan, TrainResult
from bpe_studio.engine.formats.named import GPT2_FOLDER
from bpe_studio.ui.app.main_window import MainWindow
from bpe_studio.ui.app.tokenizer_views import TokenizerViews
from bpe_studio.ui.playground import view as playground_module
from bpe_studio.ui.present.token_copy import IDS_PER_LINE
from bpe_studio.ui.present.token_layout import SpecialMode

from ..tokenizer_helpers import (  # noqa: F401 - fixtures
    SPECIAL,
    WAIT_MS,
    open_and_wait,
    tiny_corpus,
    tiny_result,
    views,
    wait_playground,
)
from .conftest import shoot, trigger
from .test_open_tokenizers import drag_and_drop


def _wait_loaded(qtbot, views: TokenizerViews) -> None:  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: views.current is not None and not views.loader.is_busy(), timeout=WAIT_MS)
    wait_playground(qtbot, views.playground)


def _paste(qtbot, views: TokenizerViews, text: str) -> None:  # type: ignore[no-untyped-def]
    """Paste as a person does: the text on the clipboard, the Paste shortcut in the focused editor."""
    editor = views.playground.editor
    editor.setFocus()
    QApplication.clipboard().setText(text)
    qtbot.keySequence(editor, QKeySequence.StandardKey.Paste)
    qtbot.waitUntil(lambda: views.playground.text().endswith(text[-50:]), timeout=WAIT_MS)
    wait_playground(qtbot, views.playground)


def _english(size: int) -> str:
    line = "The quick brown fox jumps over the lazy dog, again and again; 1234 times.\n"
    return (line * (size // len(line) + 1))[:size]


def test_the_playground_opens_on_gpt2(qtbot, window: MainWindow, views: TokenizerViews) -> None:  # type: ignore[no-untyped-def]
    playground = views.playground
    assert views.current is None
    trigger(window, "Tokenizer", "Show Playground")
    _wait_loaded(qtbot, views)
    assert views.current is not None and "gpt2" in views.current.name.lower()
    assert playground.title_label.text() != "No tokenizer"
    assert playground.encoding is not None and playground.encoding.spans
    tok = views.current.tokenizer
    assert playground.encoding.ids == tok.encode(playground.text(), allowed_special="all")
    # Shown unasked, so not put among the recent tokenizers.
    assert not any(
        Path(p).resolve().is_relative_to(GPT2_FOLDER.resolve()) for p in window.settings.recent_tokenizers
    )


def test_a_large_paste_and_typing_after_it_give_exact_ids(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views: TokenizerViews, monkeypatch, tmp_path: Path
) -> None:
    window.resize(1024, 640)
    views.open(GPT2_FOLDER)
    _wait_loaded(qtbot, views)
    window.tabs.setCurrentWidget(views.playground)
    playground = views.playground
    playground.set_text("")
    wait_playground(qtbot, playground)

    # The Tokens view's text is made on the worker thread, not on the GUI thread.
    threads: list[threading.Thread] = []
    real = playground_module.with_label_breaks

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        threads.append(threading.current_thread())
        return real(*args, **kwargs)

    monkeypatch.setattr(playground_module, "with_label_breaks", spy)
    # The Tokens view's text goes in over several turns of the event loop, whole in the end.
    at_encoded: list[int] = []
    playground.encoded.connect(lambda: at_encoded.append(len(playground.strip.document().toRawText())))
    text = _english(200_000)
    _paste(qtbot, views, text)
    assert playground.encoding is not None
    assert playground.strip.plain_text() == playground.encoding.strip_text
    assert at_encoded and at_encoded[-1] < len(playground.encoding.strip_text) / 2
    tok = playground.effective_tokenizer()
    assert tok is not None
    ids = tok.encode(text, allowed_special="all", disallowed_special=())
    assert playground.encoding is not None and playground.encoding.ids == ids
    assert threads and all(t is not threading.main_thread() for t in threads)

    # The spans are arrays, not a TokenSpan object per token for the GUI thread's garbage collector.
    gc.collect()
    assert sum(isinstance(o, TokenSpan) for o in gc.get_objects()) < 1000
    # Nor lists of positions that it visits item by item: arrays.
    layout = ("unit_start", "unit_end", "unit_first", "unit_kind", "label_start", "label_end", "token_kind")
    assert all(isinstance(getattr(playground.encoding, name), array.array) for name in layout)
    for view in (playground.editor, playground.strip):
        assert isinstance(view.unit_starts, array.array) and isinstance(view.unit_ends, array.array)
    # The ids box holds every id, as JSON, in lines of IDS_PER_LINE ids (one line of them froze Qt).
    shown = playground.ids_view.toPlainText()
    assert json.loads(shown) == ids
    lines = shown.split("\n")
    assert len(lines) == -(-len(ids) // IDS_PER_LINE)
    # Only the blocks near the view are coloured.
    assert 0 < len(playground.editor.coloured_blocks) < 400 < playground.editor.document().blockCount()

    # Typing at the end: encoded again, exactly.
    cursor = playground.editor.textCursor()
    cursor.movePosition(cursor.MoveOperation.End)
    playground.editor.setTextCursor(cursor)
    qtbot.keyClicks(playground.editor, " fox")
    qtbot.waitUntil(lambda: playground.text() == text + " fox", timeout=WAIT_MS)
    wait_playground(qtbot, playground)
    assert playground.encoding.ids == tok.encode(text + " fox", allowed_special="all", disallowed_special=())
    shoot(window, tmp_path, "playground-large-paste")


def test_a_text_file_dropped_on_the_text_becomes_the_text(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views: TokenizerViews, tiny_result: TrainResult, tmp_path: Path
) -> None:
    open_and_wait(qtbot, window, tiny_result, "before")
    current = views.current
    notes = tmp_path / "notes.txt"
    notes.write_text("dropped text, not a tokenizer\n", encoding="utf-8")
    drag_and_drop(views.playground.editor.viewport(), notes)
    wait_playground(qtbot, views.playground)
    assert views.playground.text() == "dropped text, not a tokenizer\n"
    assert views.current is current and not views.loader.is_busy()
    assert views.playground.encoding is not None
    assert views.playground.encoding.text == "dropped text, not a tokenizer\n"

    # A file that is not UTF-8: one line saying so, the text kept.
    latin = tmp_path / "latin.txt"
    latin.write_bytes(b"caf\xe9\n")
    drag_and_drop(views.playground.editor.viewport(), latin)
    message = views.playground.error_label.text()
    assert views.playground.error_label.isVisibleTo(views.playground)
    assert "latin.txt" in message and "UTF-8" in message and "\n" not in message
    assert views.playground.text() == "dropped text, not a tokenizer\n"


def test_tab_leaves_the_text_and_charts_take_no_tab_stop(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views: TokenizerViews, tiny_result: TrainResult
) -> None:
    open_and_wait(qtbot, window, tiny_result, "some text")
    playground = views.playground
    window.activateWindow()
    editor = playground.editor
    editor.setFocus()
    qtbot.waitUntil(editor.hasFocus, timeout=WAIT_MS)
    qtbot.keyClick(editor, Qt.Key.Key_Tab)
    assert not editor.hasFocus()
    assert playground.text() == "some text"
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Backtab, Qt.KeyboardModifier.ShiftModifier)
    assert editor.hasFocus()
    for chart in playground.findChildren(pg.PlotWidget):
        assert not chart.focusPolicy() & Qt.FocusPolicy.TabFocus


def test_zoom_shortcuts_size_the_text_views(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views: TokenizerViews, tiny_result: TrainResult
) -> None:
    open_and_wait(qtbot, window, tiny_result, "some text")
    playground = views.playground
    window.activateWindow()
    qtbot.waitActive(window)
    editor = playground.editor
    editor.setFocus()
    base = editor.font().pointSizeF()
    strip_base = playground.strip.font().pointSizeF()
    qtbot.keyClick(editor, Qt.Key.Key_Equal, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(editor, Qt.Key.Key_Equal, Qt.KeyboardModifier.ControlModifier)
    assert editor.font().pointSizeF() == base + 2
    assert playground.strip.font().pointSizeF() == strip_base + 2
    qtbot.keyClick(editor, Qt.Key.Key_Minus, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(editor, Qt.Key.Key_Minus, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(editor, Qt.Key.Key_Minus, Qt.KeyboardModifier.ControlModifier)
    assert editor.font().pointSizeF() == base - 1
    qtbot.keyClick(editor, Qt.Key.Key_0, Qt.KeyboardModifier.ControlModifier)
    assert editor.font().pointSizeF() == base
    assert playground.strip.font().pointSizeF() == strip_base
    assert playground.text() == "some text"  # the shortcuts typed nothing


def test_control_characters_no_break_spaces_and_words(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views: TokenizerViews, tiny_result: TrainResult
) -> None:
    open_and_wait(qtbot, window, tiny_result, "a\x1bb\xa0c d")
    playground = views.playground
    # ESC is drawn as its code where it is; the legend explains that and the no-break space's sign.
    assert playground.editor.control_positions() == [1]
    playground.select_token(-1)
    legend = playground.details.text()
    assert "no-break space" in legend and "control character" in legend
    assert "tokens per word" in playground.stats_label.text()
    # Chinese has no spaces between words: no "tokens per word".
    playground.set_text("我们今天去公园散步，然后回家吃饭。")
    wait_playground(qtbot, playground)
    assert "tokens per word" not in playground.stats_label.text()
    assert "characters per token" in playground.stats_label.text()


def test_copy_is_offered_only_with_something_to_copy(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views: TokenizerViews, tiny_result: TrainResult
) -> None:
    playground = views.playground
    assert not playground.copy_button.isEnabled()
    assert not playground.ids_box.copy_as_button.isEnabled()
    open_and_wait(qtbot, window, tiny_result, f"text {SPECIAL}")
    assert playground.copy_button.isEnabled() and playground.ids_box.copy_as_button.isEnabled()
    playground.set_special_mode(SpecialMode.DISALLOWED)
    wait_playground(qtbot, playground)
    assert playground.encoding is not None and playground.encoding.error
    assert not playground.copy_button.isEnabled()
    playground.set_text("")
    playground.set_special_mode(SpecialMode.RECOGNISED)
    wait_playground(qtbot, playground)
    assert not playground.copy_button.isEnabled()


def test_the_curve_waits_until_the_encoding_is_shown(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views: TokenizerViews, tiny_result: TrainResult, monkeypatch
) -> None:
    # Run together, the encoding and the curve threads took turns at Python's lock, and the GUI thread,
    # showing the encoding, waited at each call into Python: the curve now starts once the encoding shows.
    open_and_wait(qtbot, window, tiny_result, "before")
    playground = views.playground
    release = threading.Event()
    real = playground_module.encode_text

    def held(*args, **kwargs):  # type: ignore[no-untyped-def]
        release.wait(WAIT_MS / 1000)
        return real(*args, **kwargs)

    curves: list[str] = []
    real_curve = playground_module.token_count_curve

    def curve(loaded, text, *args, **kwargs):  # type: ignore[no-untyped-def]
        curves.append(text)
        return real_curve(loaded, text, *args, **kwargs)

    monkeypatch.setattr(playground_module, "encode_text", held)
    monkeypatch.setattr(playground_module, "token_count_curve", curve)
    playground.set_text("after the change")
    # The curve's delay passed while the encoding is held: the curve waits (or, as before, started).
    qtbot.waitUntil(lambda: bool(curves) or getattr(playground, "_curve_waiting", False), timeout=WAIT_MS)
    assert not curves and not playground.curve_runner.is_busy()
    assert playground.is_busy()  # not settled while the curve waits
    release.set()
    wait_playground(qtbot, playground)
    assert playground.curve is not None
    assert curves == ["after the change"]
