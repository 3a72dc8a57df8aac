"""Linked views (issue 11): a token clicked in the playground's text is marked in the ids box and selected in
the Vocabulary; a click on an id, or a row of the Vocabulary, selects the token in the playground; the
tokens are copied as text or TSV; the counts say tokens per word."""

# ruff: noqa: F811 - the fixtures imported from tokenizer_helpers are test arguments

from __future__ import annotations

import csv
import io
from pathlib import Path

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QGuiApplication, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit

from bpe_studio.ui.app.main_window import MainWindow
from bpe_studio.ui.app.tokenizer_views import TokenizerViews
from bpe_studio.ui.present.token_format import hex_bytes

from .tokenizer_helpers import open_and_wait, tiny_corpus, tiny_file, tiny_result, views  # noqa: F401

TEXT = "The parser reads the file, then the parser writes the result.\n\tDone: naïve café 🙃"


def _point_of(edit: QPlainTextEdit, position: int) -> QPoint:
    """A viewport point inside the character at a document position."""
    cursor = QTextCursor(edit.document())
    cursor.setPosition(position)
    left = edit.cursorRect(cursor)
    cursor.setPosition(position + 1)
    right = edit.cursorRect(cursor)
    return QPoint((left.left() + right.left()) // 2 + 1, left.center().y())


def _marked_id(playground) -> str:  # type: ignore[no-untyped-def]
    """The text of the ids box's highlight (empty: none)."""
    marks = playground.ids_view.extraSelections()
    return marks[0].cursor.selectedText() if marks else ""


def test_selection_is_linked_across_text_ids_and_vocabulary(
    qtbot, window: MainWindow, views: TokenizerViews, tiny_file: Path
) -> None:  # type: ignore[no-untyped-def]
    window.resize(1200, 800)
    window.show()
    qtbot.waitExposed(window)
    open_and_wait(qtbot, window, tiny_file, TEXT)
    playground, browser = views.playground, views.vocab_browser
    encoding = playground.encoding
    assert encoding is not None
    spans = encoding.spans
    ids = encoding.ids

    # Click a token in the text: its id is marked in the ids box and its row is selected in the Vocabulary.
    target = next(i for i, s in enumerate(spans) if TEXT[s.start : s.end] == " then")
    qtbot.mouseClick(
        playground.editor.viewport(),
        Qt.MouseButton.LeftButton,
        pos=_point_of(playground.editor, spans[target].start + 2),
    )
    assert playground.selected_token == target
    assert _marked_id(playground) == str(ids[target])
    assert browser.selected_id == ids[target]
    current = browser.table.currentIndex()
    assert current.isValid() and browser.model.id_at(current.row()) == ids[target]

    # Click an id in the ids box: its token is selected in the text, the Tokens view and the Vocabulary.
    other = next(i for i, s in enumerate(spans) if TEXT[s.start : s.end] == " res")
    start = playground.ids_view.toPlainText().index(", ".join(map(str, ids[other - 1 : other + 2])))
    start += len(str(ids[other - 1])) + 2  # the id of `other`, after its neighbour and ", "
    assert playground.ids_view.toPlainText()[start:].startswith(str(ids[other]))
    qtbot.mouseClick(
        playground.ids_view.viewport(),
        Qt.MouseButton.LeftButton,
        pos=_point_of(playground.ids_view, start + 1),
    )
    assert playground.selected_token == other
    unit = encoding.unit_of_token(other)
    assert playground.editor.current_units == range(unit, unit + 1)
    assert playground.strip.current_units == range(other, other + 1)
    assert _marked_id(playground) == str(ids[other])
    assert browser.selected_id == ids[other]

    # Back from the Vocabulary: selecting a row selects that token's first use in the text.
    window.tabs.setCurrentWidget(browser)
    the = ids[next(i for i, s in enumerate(spans) if TEXT[s.start : s.end] == " the")]
    browser.search_edit.clear()
    browser.table.selectRow(browser.model.row_of(the))
    first = ids.index(the)
    assert playground.selected_token == first
    assert _marked_id(playground) == str(the)
    # A token the text does not use: no selection in the playground.
    unused = next(i for i in range(256, 600) if i not in ids)
    browser.table.selectRow(browser.model.row_of(unused))
    assert playground.selected_token == -1 and _marked_id(playground) == ""
    assert browser.selected_id == unused


def test_tokens_are_copied_as_text_and_tsv(
    qtbot, window: MainWindow, views: TokenizerViews, tiny_file: Path
) -> None:  # type: ignore[no-untyped-def]
    open_and_wait(qtbot, window, tiny_file, TEXT)
    playground = views.playground
    encoding = playground.encoding
    assert encoding is not None and encoding.tokenizer is not None
    clipboard = QGuiApplication.clipboard()

    playground.copy_text_action.trigger()
    assert (
        clipboard.text().splitlines() == encoding.labels
    )  # one token per line, as the Tokens view spells it

    playground.copy_tsv_action.trigger()
    rows = list(csv.DictReader(io.StringIO(clipboard.text()), delimiter="\t", quoting=csv.QUOTE_NONE))
    assert [int(r["id"]) for r in rows] == encoding.ids
    assert [r["token"] for r in rows] == encoding.labels
    data = b"".join(bytes.fromhex(r["hex"]) for r in rows)
    assert data == TEXT.encode()
    assert [TEXT[int(r["start"]) : int(r["end"])] for r in rows] == [
        TEXT[s.start : s.end] for s in encoding.spans
    ]
    assert rows[0]["hex"] == hex_bytes(encoding.tokenizer.token_bytes(encoding.ids[0]))


def test_counts_say_tokens_per_word(
    qtbot, window: MainWindow, views: TokenizerViews, tiny_file: Path
) -> None:  # type: ignore[no-untyped-def]
    open_and_wait(qtbot, window, tiny_file, TEXT)
    playground = views.playground
    assert playground.encoding is not None
    tokens, words = len(playground.encoding.spans), len(TEXT.split())
    stats = playground.stats_label.text()
    assert f"<b>{len(TEXT) / tokens:.2f}</b> characters per token" in stats
    assert f"<b>{tokens / words:.2f}</b> tokens per word" in stats
