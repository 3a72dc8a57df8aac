"""Journeys of the desktop app's second hour (issue 21): exporting twice to one place, downloading offline,
searching the vocabulary by the Hex column's bytes, and reading Compare's text and corpus modes."""

# ruff: noqa: F811 - fixtures (some imported from tokenizer_helpers) are test arguments

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHeaderView, QMessageBox

from bpe_studio.engine import TrainResult
from bpe_studio.ui.app.main_window import MainWindow
from bpe_studio.ui.app.tokenizer_views import TokenizerViews
from bpe_studio.ui.present.token_layout import SPECIAL as SPECIAL_UNIT
from bpe_studio.ui.vocabulary.model import VocabTableModel

from ..tokenizer_helpers import (  # noqa: F401 - fixtures
    SPECIAL,
    WAIT_MS,
    open_and_wait,
    tiny_corpus,
    tiny_result,
    train_tiny,
    views,
)
from .conftest import trigger


def test_an_export_asks_before_it_replaces_an_earlier_one(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views: TokenizerViews, tiny_result: TrainResult, tmp_path: Path
) -> None:
    open_and_wait(qtbot, window, tiny_result)
    out = tmp_path / "out"
    trigger(window, "Tokenizer", "Export")
    dialog = views.export_dialog
    assert dialog is not None
    dialog.folder_edit.setText(str(out))
    with qtbot.waitSignal(dialog.export_finished, timeout=WAIT_MS) as first:
        qtbot.mouseClick(dialog.export_button, Qt.MouseButton.LeftButton)
    written = [item.path for item in first.args[0] if item.ok]
    assert len(written) == 12
    before = {path: path.stat().st_mtime_ns for path in written}

    # The same name again: a question, and nothing is written until it is answered.
    qtbot.mouseClick(dialog.export_button, Qt.MouseButton.LeftButton)
    box = dialog.replace_box
    assert box is not None and box.isVisible()
    assert f"{out} already holds " in box.text() and "vocab.json" in box.text()
    box.button(QMessageBox.StandardButton.Cancel).click()
    qtbot.waitUntil(lambda: dialog.replace_box is None)
    assert not dialog.is_busy()
    assert {path: path.stat().st_mtime_ns for path in written} == before
    assert "Nothing was written" in dialog.status_label.text()

    # Asked again and answered Replace: the export runs.
    qtbot.mouseClick(dialog.export_button, Qt.MouseButton.LeftButton)
    box = dialog.replace_box
    assert box is not None
    replace = next(b for b in box.buttons() if b.text() == "Replace")
    with qtbot.waitSignal(dialog.export_finished, timeout=WAIT_MS) as second:
        replace.click()
    assert all(item.ok for item in second.args[0])
    assert dialog.status_label.text() == "All 12 files written and checked."
    dialog.close()


def test_an_offline_download_says_so_in_words(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views: TokenizerViews, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It said "[Errno -2] Name or service not known" (issue 21)."""

    def offline(*_args: object, **_kwargs: object) -> object:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", offline)
    monkeypatch.setattr(QMessageBox, "question", lambda *_a, **_k: QMessageBox.StandardButton.Yes)
    with qtbot.waitSignal(views.error_shown, timeout=WAIT_MS) as shown:
        trigger(window, "Tokenizer", "Open OpenAI encoding", "cl100k_base (GPT-3.5, GPT-4)")
    _title, message = shown.args
    assert "cannot look up openaipublic.blob.core.windows.net: this computer seems to be offline" in message
    assert "Errno" not in message and "Name or service" not in message
    assert views.error_box is not None
    views.error_box.close()


def test_the_vocabulary_names_its_count_and_finds_the_hex_columns_bytes(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views: TokenizerViews, tiny_result: TrainResult
) -> None:
    open_and_wait(qtbot, window, tiny_result)
    trigger(window, "Tokenizer", "Show Vocabulary")
    browser = views.vocab_browser
    model = browser.model
    horizontal = Qt.Orientation.Horizontal
    assert model.headerData(VocabTableModel.COUNT, horizontal) == "Pair count at merge"
    tip = model.headerData(VocabTableModel.COUNT, horizontal, Qt.ItemDataRole.ToolTipRole)
    assert tip.startswith("Pair count at merge: how often the token's two parts occurred")
    # A token of two bytes, searched for as its Hex cell shows it and as people copy it.
    tokenizer = tiny_result.vocab
    token_id = next(i for i, data in sorted(tokenizer.items()) if len(data) == 2 and data.isalpha())
    cell = model.data(model.index(model.row_of(token_id), VocabTableModel.HEX))
    for query in (f"0x{cell}", "0x" + cell.replace(" ", " 0x")):  # "0x74 68", "0x74 0x68"
        browser.search_edit.clear()
        qtbot.keyClicks(browser.search_edit, query)
        assert token_id in model.shown_ids(), query
        assert all(bytes.fromhex(cell) in tokenizer[i] for i in model.shown_ids()), query


def test_compare_keeps_special_tokens_whole_and_its_corpus_table_fills_its_width(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views: TokenizerViews, tiny_corpus: Path
) -> None:
    small, other = train_tiny(tiny_corpus, 300), train_tiny(tiny_corpus, 400)
    # Special tokens at every place of a line, so that some would fall where a line wraps.
    text = "".join(f"{'a' * n}{SPECIAL}" for n in range(1, 40))
    open_and_wait(qtbot, window, small, text)
    open_and_wait(qtbot, window, other)
    window.resize(1024, 640)
    trigger(window, "Tokenizer", "Show Compare")
    compare = views.compare
    compare.choose("a", views.opened[0])
    compare.choose("b", views.opened[1])
    qtbot.waitUntil(lambda: not compare.is_busy() and compare.comparison is not None, timeout=WAIT_MS)
    for side in compare.sides.values():
        view = side.view
        assert view.plain_text() == text  # the joiners that hold it together are not part of the text
        specials = [
            (start, end)
            for start, end, kind in zip(view.unit_starts, view.unit_ends, view.unit_kinds, strict=True)
            if kind == SPECIAL_UNIT
        ]
        assert len(specials) == 39
        lines = {len(view.range_rects(start, end)) for start, end in specials}
        assert lines == {1}, "a special token wraps across two lines"

    # Compare ▸ Corpus: the figures' columns share the table's width.
    compare.modes.setCurrentIndex(1)
    table = compare.corpus_view.table
    qtbot.waitUntil(table.isVisible)
    header = table.horizontalHeader()
    for column in range(2, header.count()):
        assert header.sectionResizeMode(column) == QHeaderView.ResizeMode.Stretch
    qtbot.waitUntil(lambda: abs(header.length() - header.viewport().width()) <= 1)
