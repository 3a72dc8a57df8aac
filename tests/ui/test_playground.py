"""The Playground tab driven through its widgets: colours exactly on the engine's token spans, hover and
selection details, the decoded-bytes view, special-token modes, decoding ids, and the vocab-size slider."""

# ruff: noqa: F811, PLR0917 - fixtures (some imported from tokenizer_helpers) are test arguments

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor, QGuiApplication, QTextCursor

from bpe_studio.engine import Tokenizer, TrainResult
from bpe_studio.ui.app.main_window import MainWindow, recent_names
from bpe_studio.ui.app.tokenizer_views import TokenizerViews
from bpe_studio.ui.playground.decode_box import parse_ids
from bpe_studio.ui.playground.view import PlaygroundView
from bpe_studio.ui.present.token_copy import format_ids
from bpe_studio.ui.present.token_format import DARK_PALETTE, LIGHT_PALETTE, contrast_ratio, relative_luminance
from bpe_studio.ui.present.token_layout import SpecialMode, encode_options, token_count_curve
from bpe_studio.ui.present.tokenizer_info import LoadedTokenizer, from_result
from bpe_studio.ui.widgets.token_text import UNIT_PROPERTY, TokenTextEdit

from .tokenizer_helpers import (  # noqa: F401 - fixtures
    SPECIAL,
    TRICKY_TEXT,
    WAIT_MS,
    duplicate_merge_tokenizer,
    expected_formats,
    expected_units,
    formatted_units,
    open_and_wait,
    tiny_corpus,
    tiny_file,
    tiny_result,
    train_tiny,
    utf16,
    views,
    wait_playground,
)


def _point_of(edit: TokenTextEdit, position: int) -> QPoint:
    """A viewport point inside the character at a document position."""
    cursor = QTextCursor(edit.document())
    cursor.setPosition(position)
    left = edit.cursorRect(cursor)
    cursor.setPosition(position + 1)
    right = edit.cursorRect(cursor)
    return QPoint((left.left() + right.left()) // 2 + 1, left.center().y())


# ------------------------------------------------------------------------------------------------------
# Colours on the engine's spans
# ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", [SpecialMode.RECOGNISED, SpecialMode.ORDINARY])
def test_formats_cover_exactly_the_engine_spans(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views: TokenizerViews, tiny_file: Path, mode: SpecialMode
) -> None:
    playground = views.playground
    playground.set_special_mode(mode)
    open_and_wait(qtbot, window, tiny_file, TRICKY_TEXT)
    tok = views.current.tokenizer  # type: ignore[union-attr]
    assert playground.text() == TRICKY_TEXT
    spans = tok.encode_with_offsets(TRICKY_TEXT, **encode_options(mode))
    assert any(s.partial for s in spans), "the text should split characters across tokens"

    # Every character of every token carries its unit's format, and nothing else has one.
    assert formatted_units(playground.editor) == expected_formats(TRICKY_TEXT, spans)
    units = expected_units(spans)
    assert playground.editor.unit_starts == [utf16(TRICKY_TEXT, s) for s, _, _ in units]
    assert playground.editor.unit_ends == [utf16(TRICKY_TEXT, e) for _, e, _ in units]

    # Neighbouring units differ in colour; a special token looks special.
    palette = playground.editor.token_palette
    backgrounds = [playground.editor.unit_colour(u) for u in range(len(units))]
    for u in range(1, len(units)):
        if units[u - 1][1] == units[u][0]:
            assert backgrounds[u - 1] != backgrounds[u]
    special_units = [
        u for u, (_, _, tokens) in enumerate(units) if spans[tokens[0]].id in tok.special_tokens.values()
    ]
    assert len(special_units) == (1 if mode is SpecialMode.RECOGNISED else 0)
    for u in special_units:
        fmt = playground.editor.unit_format(u)
        assert fmt.background().color() == QColor(palette.special_background)
        assert fmt.fontWeight() == 700

    # The ids, counts and the decoded-bytes view agree with the engine.
    ids = [s.id for s in spans]
    assert playground.encoding is not None and playground.encoding.ids == ids
    assert json.loads(playground.ids_view.toPlainText()) == ids
    assert f"<b>{len(ids):,}</b> tokens" in playground.stats_label.text()
    assert f"{len(TRICKY_TEXT):,} characters" in playground.stats_label.text()
    assert f"{len(TRICKY_TEXT.encode()):,} bytes" in playground.stats_label.text()
    strip_units = formatted_units(playground.strip)
    labels = playground.encoding.labels
    # (the view's positions: a zero-width break sits between adjacent labels, see test_token_wrapping.py)
    assert len(playground.strip.unit_starts) == len(playground.encoding.label_start)
    for token, (start, end) in enumerate(
        zip(playground.strip.unit_starts, playground.strip.unit_ends, strict=True)
    ):
        assert {strip_units[p] for p in range(start, end)} == {token}
        data = tok.token_bytes(ids[token])
        if not spans[token].partial and ids[token] not in tok.special_tokens.values():
            assert labels[token] == data.decode().replace(" ", "·").replace("\n", "↵").replace("\t", "→")


def test_split_characters_are_shown_as_their_bytes(
    qtbot, window: MainWindow, views: TokenizerViews, tiny_result: TrainResult
) -> None:  # type: ignore[no-untyped-def]
    open_and_wait(qtbot, window, tiny_result, "a🙃b")
    playground = views.playground
    encoding = playground.encoding
    assert encoding is not None
    # The 600-token tokenizer has no token for the emoji's bytes: four single-byte tokens, one unit.
    assert encoding.labels == ["a", "<0xF0>", "<0x9F>", "<0x99>", "<0x83>", "b"]
    assert playground.strip.plain_text() == "a<0xF0><0x9F><0x99><0x83>b"
    assert encoding.unit_count == 3
    assert list(encoding.unit_tokens(1)) == [1, 2, 3, 4]
    # The emoji is two UTF-16 units in the editor, both in the same unit.
    assert formatted_units(playground.editor) == {0: 0, 1: 1, 2: 1, 3: 2}


def test_typing_is_encoded_after_a_pause(
    qtbot, window: MainWindow, views: TokenizerViews, tiny_file: Path
) -> None:  # type: ignore[no-untyped-def]
    open_and_wait(qtbot, window, tiny_file, "The cat")
    playground = views.playground
    before = dict(formatted_units(playground.editor))
    playground.editor.moveCursor(QTextCursor.MoveOperation.End)
    with qtbot.waitSignal(playground.encoded, timeout=WAIT_MS):
        qtbot.keyClicks(playground.editor, " sat on the mat")
        # Until the new encoding arrives, only the text before the edit keeps colours.
        assert playground.editor.valid_until == len("The cat")
        assert all(p < len("The cat") for p in formatted_units(playground.editor))
    wait_playground(qtbot, playground)
    text = "The cat sat on the mat"
    tok = views.current.tokenizer  # type: ignore[union-attr]
    assert playground.encoding is not None and playground.encoding.text == text
    assert formatted_units(playground.editor) == expected_formats(text, tok.encode_with_offsets(text))
    assert len(formatted_units(playground.editor)) > len(before)


# ------------------------------------------------------------------------------------------------------
# Hover and selection
# ------------------------------------------------------------------------------------------------------


def _first_merge_of(tok: Tokenizer, token_id: int) -> tuple[int, int, int]:
    data = tok.token_bytes(token_id)
    rank = next(r for r, (a, b) in enumerate(tok.merges) if a + b == data)
    left, right = tok.merges[rank]
    return rank, tok.token_id(left), tok.token_id(right)  # type: ignore[return-value]


def test_hover_and_selection_show_the_tokens_details(
    qtbot, window: MainWindow, views: TokenizerViews, tiny_result: TrainResult
) -> None:  # type: ignore[no-untyped-def]
    text = "The merge of the pair\té🙃"
    open_and_wait(qtbot, window, tiny_result, text)
    playground = views.playground
    tok = views.current.tokenizer  # type: ignore[union-attr]
    spans = tok.encode_with_offsets(text)
    editor = playground.editor
    counts = tiny_result.merge_counts

    # Hover over the token " merge"-ish second token: its id, bytes, text, merge rank and parents.
    target = next(i for i, s in enumerate(spans) if len(tok.token_bytes(s.id)) > 2 and s.start > 0)
    span = spans[target]
    qtbot.mouseMove(editor.viewport(), _point_of(editor, span.start + 1))
    facts = playground.details.facts
    assert [f.token_id for f in facts] == [span.id]
    fact = facts[0]
    data = tok.token_bytes(span.id)
    rank, left, right = _first_merge_of(tok, span.id)
    assert fact.data == data and fact.hex == data.hex(" ")
    assert fact.text == repr(data.decode())
    assert (fact.rank, fact.left, fact.right) == (rank, left, right)
    assert fact.count == counts[rank]
    shown = playground.details.text()
    assert data.hex(" ") in shown and f"merge {rank + 1:,} of" in shown and f"{counts[rank]:,} times" in shown
    assert f"token:{left}" in shown and f"token:{right}" in shown

    # Hovering the emoji shows the four tokens that split it.
    emoji = text.index("🙃")
    qtbot.mouseMove(editor.viewport(), _point_of(editor, utf16(text, emoji)))
    split = [s.id for s in spans if s.start == emoji]
    assert [f.token_id for f in playground.details.facts] == split
    assert all(not f.complete for f in playground.details.facts)

    # Leaving shows the legend (nothing selected yet); selecting with the cursor shows that token.
    qtbot.mouseMove(editor.viewport(), QPoint(editor.viewport().width() - 3, editor.viewport().height() - 3))
    assert playground.details.facts == []
    cursor = editor.textCursor()
    cursor.setPosition(span.start + 1)
    editor.setTextCursor(cursor)
    assert playground.selected_token == target
    assert [f.token_id for f in playground.details.facts] == [span.id]
    unit = playground.encoding.unit_of_token(target)  # type: ignore[union-attr]
    assert editor.current_units == range(unit, unit + 1)
    assert playground.strip.current_units == range(target, target + 1)

    # Clicking a token in the decoded-bytes view selects it (a single byte of the emoji here).
    strip = playground.strip
    byte_token = next(i for i, s in enumerate(spans) if s.partial)
    start = strip.unit_starts[byte_token]
    qtbot.mouseClick(strip.viewport(), Qt.MouseButton.LeftButton, pos=_point_of(strip, start + 1))
    assert playground.selected_token == byte_token
    fact = playground.details.facts[0]
    assert fact.token_id == spans[byte_token].id and len(fact.data) == 1 and fact.rank is None
    assert "a single byte" in playground.details.text()

    # A link to a parent shows it in the Vocabulary tab.
    playground.details.linkActivated.emit(f"token:{left}")
    assert window.tabs.currentWidget() is views.vocab_browser
    assert views.vocab_browser.selected_id == left


# ------------------------------------------------------------------------------------------------------
# Special tokens, decoding, copying
# ------------------------------------------------------------------------------------------------------


def test_special_token_modes(qtbot, window: MainWindow, views: TokenizerViews, tiny_file: Path) -> None:  # type: ignore[no-untyped-def]
    text = f"one{SPECIAL}two"
    open_and_wait(qtbot, window, tiny_file, text)
    playground = views.playground
    tok = views.current.tokenizer  # type: ignore[union-attr]
    special_id = tok.special_tokens[SPECIAL]
    assert playground.encoding is not None and special_id in playground.encoding.ids

    with qtbot.waitSignal(playground.encoded, timeout=WAIT_MS):
        playground.special_combo.setCurrentIndex(playground.special_combo.findData("ordinary"))
    assert playground.encoding.ids == tok.encode_ordinary(text)
    assert not playground.error_label.isVisible()

    with qtbot.waitSignal(playground.encoded, timeout=WAIT_MS):
        playground.special_combo.setCurrentIndex(playground.special_combo.findData("disallowed"))
    # A message, not an exception: the special token is marked and nothing is coloured.
    assert playground.error_label.isVisible()
    assert SPECIAL in playground.error_label.text() and "character 3" in playground.error_label.text()
    assert playground.encoding.error and playground.encoding.spans == []
    assert formatted_units(playground.editor) == {}
    marks = playground.editor.extraSelections()
    assert len(marks) == 1
    assert (marks[0].cursor.selectionStart(), marks[0].cursor.selectionEnd()) == (3, 3 + len(SPECIAL))
    assert "–" in playground.stats_label.text()
    wait_playground(qtbot, playground)
    assert playground.curve is not None and playground.curve.error

    with qtbot.waitSignal(playground.encoded, timeout=WAIT_MS):
        playground.special_combo.setCurrentIndex(playground.special_combo.findData("recognised"))
    assert not playground.error_label.isVisible()
    assert playground.editor.extraSelections() == []


def test_decode_box(qtbot, window: MainWindow, views: TokenizerViews, tiny_file: Path) -> None:  # type: ignore[no-untyped-def]
    open_and_wait(qtbot, window, tiny_file, "")
    playground = views.playground
    tok = views.current.tokenizer  # type: ignore[union-attr]
    ids = tok.encode("Decode me, naïve 🙃")
    playground.decode_edit.setText(str(ids))
    assert playground.decode_output.toPlainText() == "Decode me, naïve 🙃"
    assert f"{len(ids)} ids" in playground.decode_status.text()
    playground.decode_edit.setText(" ".join(map(str, ids[:-1])))  # ends inside the emoji
    assert "not whole UTF-8 characters" in playground.decode_status.text()
    playground.decode_edit.setText("12, 99999")
    assert playground.decode_output.toPlainText() == ""
    assert "99999" in playground.decode_status.text() and "⚠" in playground.decode_status.text()
    playground.decode_edit.setText("12, twelve")
    assert "not a token id" in playground.decode_status.text()
    playground.decode_edit.setText("")
    assert playground.decode_status.text() == ""


def test_decode_box_uses_the_full_tokenizer_whatever_the_slider(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views: TokenizerViews, tiny_file: Path
) -> None:
    open_and_wait(qtbot, window, tiny_file, "some text to encode")
    playground = views.playground
    tok = views.current.tokenizer  # type: ignore[union-attr]
    last_merge = max(i for i in tok.vocab if i not in tok.special_tokens.values())
    assert last_merge > 255
    with qtbot.waitSignal(playground.encoded, timeout=WAIT_MS):
        playground.set_merges_used(0)  # the cut has the 256 bytes only
    assert playground.effective_tokenizer().vocab_size < tok.vocab_size  # type: ignore[union-attr]
    playground.decode_edit.clear()
    qtbot.keyClicks(playground.decode_edit, f"[{last_merge}, 104]")
    expected = (tok.token_bytes(last_merge) + b"h").decode("utf-8", errors="replace")
    assert playground.decode_output.toPlainText() == expected
    assert "⚠" not in playground.decode_status.text()
    assert "full tokenizer" in playground.decode_edit.toolTip()
    assert f"{tok.vocab_size:,} tokens" in playground.decode_edit.toolTip()


def test_decode_placeholder_is_an_example_of_this_tokenizer(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views: TokenizerViews, tiny_file: Path
) -> None:
    playground = views.playground
    assert "15496" not in playground.decode_edit.placeholderText()
    open_and_wait(qtbot, window, tiny_file, "")
    tok = views.current.tokenizer  # type: ignore[union-attr]
    placeholder = playground.decode_edit.placeholderText()
    example = placeholder[placeholder.index("[") : placeholder.index("]") + 1]
    assert example == format_ids(tok.encode_ordinary("Hello world"))
    # Pasting the example decodes it, even on this small tokenizer (GPT-2's [15496, 995] would not).
    qtbot.keyClicks(playground.decode_edit, example)
    assert playground.decode_output.toPlainText() == "Hello world"
    assert "⚠" not in playground.decode_status.text()


def test_parse_and_format_ids() -> None:
    assert parse_ids("[1, 2,3]  4\n5") == [1, 2, 3, 4, 5]
    assert parse_ids("(7;8)") == [7, 8]
    assert parse_ids("") == []
    with pytest.raises(ValueError, match="not a token id"):
        parse_ids("1, x")
    assert format_ids([1, 2]) == "[1, 2]"


def test_copy_ids(qtbot, window: MainWindow, views: TokenizerViews, tiny_file: Path) -> None:  # type: ignore[no-untyped-def]
    open_and_wait(qtbot, window, tiny_file, "copy these ids")
    playground = views.playground
    qtbot.mouseClick(playground.copy_button, Qt.MouseButton.LeftButton)
    assert json.loads(QGuiApplication.clipboard().text()) == playground.encoding.ids  # type: ignore[union-attr]


def test_whitespace_toggle(qtbot, window: MainWindow, views: TokenizerViews, tiny_file: Path) -> None:  # type: ignore[no-untyped-def]
    open_and_wait(qtbot, window, tiny_file, "a b\n\nc")
    playground = views.playground
    assert playground.editor.whitespace_visible
    playground.whitespace_check.setChecked(False)
    assert not playground.editor.whitespace_visible
    playground.editor.grab()  # paints without the line-end markers
    playground.whitespace_check.setChecked(True)
    assert playground.editor.whitespace_visible
    assert not playground.editor.grab().isNull()


# ------------------------------------------------------------------------------------------------------
# The vocab-size slider
# ------------------------------------------------------------------------------------------------------


def test_slider_cut_equals_training_to_that_size(
    qtbot, window: MainWindow, views: TokenizerViews, tiny_corpus: Path, tiny_result: TrainResult
) -> None:  # type: ignore[no-untyped-def]
    text = TRICKY_TEXT * 2
    open_and_wait(qtbot, window, tiny_result, text)
    playground = views.playground
    loaded = views.current
    assert loaded is not None
    index = loaded.index
    assert playground.merges_used == len(tiny_result.merges) == index.merge_count
    curve = playground.curve
    assert curve is not None and not curve.error
    assert int(curve.counts[-1]) == len(playground.encoding.spans)  # type: ignore[union-attr]

    for merges in (0, 1, 57, 200):
        assert index.creates[merges - 1] or merges == 0
        with qtbot.waitSignal(playground.encoded, timeout=WAIT_MS):
            playground.set_merges_used(merges)
        size = index.vocab_size_at(merges)
        assert size == 256 + merges + 1
        assert f"<b>{size:,}</b> tokens" in playground.size_label.text()
        cut = playground.encoding.tokenizer  # type: ignore[union-attr]
        assert cut is not None
        trained = train_tiny(tiny_corpus, size)
        assert dict(cut.vocab) == trained.vocab
        assert list(cut.merges) == trained.merges
        assert dict(cut.special_tokens) == trained.special_token_ids
        ids = playground.encoding.ids  # type: ignore[union-attr]
        assert ids == Tokenizer.from_result(trained).encode(text)
        # The curve has every size's count: the one shown, and any other cut's.
        assert int(curve.counts[merges]) == len(ids)
    for merges in (3, 100, 300):
        assert int(curve.counts[merges]) == len(loaded.cut(merges).encode(text))

    # Clicking the curve picks the vocab size under the mouse.
    view = playground.curve_plot.view
    with qtbot.waitSignal(playground.curve_plot.vocab_size_clicked) as clicked:
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.viewport().rect().center())
    size = clicked.args[0]
    assert 256 < size < index.vocab_size_at(index.merge_count)
    assert playground.merges_used == index.merges_for_vocab_size(size)
    wait_playground(qtbot, playground)

    qtbot.mouseClick(playground.full_button, Qt.MouseButton.LeftButton)
    assert playground.merges_used == index.merge_count
    wait_playground(qtbot, playground)
    assert playground.encoding.tokenizer is loaded.tokenizer  # type: ignore[union-attr]


def test_cut_and_curve_with_a_merge_that_makes_no_new_token() -> None:
    tok = duplicate_merge_tokenizer()
    loaded = LoadedTokenizer(tok, "dup")
    index = loaded.index
    assert index.creates == [True, True, True, False, True]
    # Cut by number of merges: the duplicate merge adds a merge but no token.
    assert [index.vocab_size_at(k) for k in range(6)] == [257, 258, 259, 260, 260, 261]
    cut = loaded.cut(4)
    assert len(cut.merges) == 4 and cut.vocab_size == 260
    assert dict(cut.special_tokens) == {SPECIAL: 259}
    text = f"aabcbc abcabc babc bcab{SPECIAL}abcab"
    curve = token_count_curve(loaded, text)
    for k in range(6):
        assert int(curve.counts[k]) == len(loaded.cut(k).encode(text)), k
    assert index.merges_for_vocab_size(260) == 3


def test_curve_matches_cut_encodings(tiny_result: TrainResult) -> None:
    loaded = from_result(tiny_result)
    text = TRICKY_TEXT + " " * 700 + "x" + "🙃" * 30  # a long whitespace run takes the heap path
    for mode in (SpecialMode.RECOGNISED, SpecialMode.ORDINARY):
        curve = token_count_curve(loaded, text, mode)
        assert len(curve.counts) == len(tiny_result.merges) + 1
        for k in (0, 5, 64, 250, len(tiny_result.merges)):
            assert int(curve.counts[k]) == len(loaded.cut(k).encode(text, **encode_options(mode))), (mode, k)


# ------------------------------------------------------------------------------------------------------
# Colours
# ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("palette", [LIGHT_PALETTE, DARK_PALETTE], ids=["light", "dark"])
def test_palettes_are_readable_and_alternate_in_lightness(palette) -> None:  # type: ignore[no-untyped-def]
    minimum = 7.0 if palette is LIGHT_PALETTE else 5.0
    for background in palette.backgrounds:
        assert contrast_ratio(palette.text, background) >= minimum, background
    assert contrast_ratio(palette.special_text, palette.special_background) >= 4.5
    # Neighbouring colours differ in lightness too, so token boundaries survive grey scale.
    lums = [relative_luminance(c) for c in palette.backgrounds]
    for a, b in zip(lums, lums[1:] + lums[:1], strict=True):
        assert abs(a - b) >= 0.04
    assert len(set(palette.backgrounds)) == len(palette.backgrounds)


def test_dark_theme_uses_the_dark_palette(qtbot) -> None:  # type: ignore[no-untyped-def]
    view = PlaygroundView()
    qtbot.addWidget(view)
    dark = view.editor.palette()
    dark.setColor(dark.ColorRole.Base, QColor("#1e1e1e"))
    dark.setColor(dark.ColorRole.Text, QColor("#eeeeee"))
    view.editor.setPalette(dark)
    assert view.editor.token_palette is DARK_PALETTE
    assert view.strip.token_palette is LIGHT_PALETTE
    view.shutdown()


def test_unit_property_is_readable(qtbot) -> None:  # type: ignore[no-untyped-def]
    edit = TokenTextEdit()
    qtbot.addWidget(edit)
    edit.set_text_and_units("ab cd", [0, 2], [2, 5], [0, 0])
    assert formatted_units(edit) == {0: 0, 1: 0, 2: 1, 3: 1, 4: 1}
    assert edit.unit_format(1).property(UNIT_PROPERTY) == 1
    assert edit.unit_at_position(3) == 1 and edit.unit_at_position(9) == -1


# ------------------------------------------------------------------------------------------------------
# Loading
# ------------------------------------------------------------------------------------------------------


def _wait_load_error(qtbot, views: TokenizerViews, action) -> str:  # type: ignore[no-untyped-def]
    """Run ``action``, wait for the error dialog, check it is on screen, close it; returns the message."""
    with qtbot.waitSignal(views.error_shown, timeout=WAIT_MS) as blocker:
        action()
    box = views.error_box
    assert box is not None and box.isVisible() and box.text() == blocker.args[1]
    box.close()
    qtbot.waitUntil(lambda: views.error_box is None)
    return str(blocker.args[1])


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"format": "bpe-studio-tokenizer", "version": 1, "vocab": ', "line 1 column"),
        ('{"hello": 1}', "neither a BPE Studio tokenizer"),
        ("just some text\n", "not a tokenizer file"),
        (None, "no such file"),
    ],
    ids=["truncated", "other-json", "text", "missing"],
)
def test_a_malformed_file_shows_an_error_and_keeps_the_tokenizer(  # type: ignore[no-untyped-def]
    qtbot,
    window: MainWindow,
    views: TokenizerViews,
    tiny_file: Path,
    tmp_path: Path,
    content: str | None,
    expected: str,
) -> None:
    open_and_wait(qtbot, window, tiny_file, "keep this text")
    before = views.current
    encoding = views.playground.encoding
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_text(content, encoding="utf-8")
    message = _wait_load_error(qtbot, views, lambda: window.open_tokenizer(bad, "other text"))
    assert expected in message and "bad.json" in message
    assert views.current is before
    assert views.playground.loaded is before and views.playground.encoding is encoding
    assert views.playground.text() == "keep this text"
    assert views.vocab_browser.loaded is before
    assert str(bad) not in window.settings.recent_tokenizers
    assert window.settings.recent_tokenizers[0] == str(tiny_file)
    assert window.windowTitle().startswith("tiny.json")


def test_formats_recent_list_and_drop(
    qtbot, window: MainWindow, views: TokenizerViews, tiny_result: TrainResult, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import QMimeData, QPointF, QUrl
    from PySide6.QtGui import QDropEvent

    from bpe_studio.engine import save

    tok = Tokenizer.from_result(tiny_result)
    text = TRICKY_TEXT
    (tmp_path / "gpt2").mkdir()
    paths = {
        "gpt2": save(tok, tmp_path / "gpt2", format="gpt2"),
        "hf": save(tok, tmp_path / "tokenizer.json", format="hf"),
        "studio": save(tok, tmp_path / "t.json", format="studio"),
    }
    for fmt, path in paths.items():
        open_and_wait(qtbot, window, path, text)
        assert views.current is not None and views.current.format == fmt
        assert views.playground.encoding.ids == tok.encode(text)  # type: ignore[union-attr]
        assert window.settings.recent_tokenizers[0] == str(path.absolute())
    recent = [str(paths[f].absolute()) for f in ("studio", "hf", "gpt2")]
    # Named as the other views name them; the whole path is the tooltip.
    assert [a.text() for a in window.recent_tokenizers_menu.actions()][:3] == recent_names(recent)
    assert [a.toolTip() for a in window.recent_tokenizers_menu.actions()][:3] == recent
    # The recent list opens a tokenizer again.
    with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS):
        window.recent_tokenizers_menu.actions()[2].trigger()
    assert views.current.path == paths["gpt2"].absolute()  # type: ignore[union-attr]
    wait_playground(qtbot, views.playground)
    # Dropping a file on the playground opens it; the text stays.
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(paths["hf"]))])
    event = QDropEvent(
        QPointF(10, 10),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
    )
    with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS):
        views.playground.editor.dropEvent(event)
    assert views.current.format == "hf"  # type: ignore[union-attr]
    assert views.playground.text() == text
    wait_playground(qtbot, views.playground)
    # Every tokenizer opened is offered in the Compare tab (the same file once).
    assert [t.format for t in views.compare.tokenizers] == ["gpt2", "hf", "studio"]


def test_open_the_trained_tokenizer_from_the_train_tab(
    qtbot, window: MainWindow, views: TokenizerViews, small_corpus: Path
) -> None:  # type: ignore[no-untyped-def]
    train_view = window.train_view
    train_view.set_corpus_files([small_corpus])
    train_view.vocab_spin.setValue(400)
    with qtbot.waitSignal(train_view.training_ended, timeout=WAIT_MS):
        train_view.start_training()
    with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS):
        qtbot.mouseClick(train_view.open_button, Qt.MouseButton.LeftButton)
    wait_playground(qtbot, views.playground)
    loaded = views.current
    assert loaded is not None and loaded.result is train_view.result
    assert loaded.name == f"Trained on {small_corpus.name}"
    assert loaded.training["vocab_size"] == 400 and loaded.merge_counts == train_view.result.merge_counts  # type: ignore[union-attr]
    assert window.tabs.currentWidget() is views.playground
    assert views.export_action.isEnabled()


def test_gpt2_files_from_the_reference_data(
    qtbot, window: MainWindow, views: TokenizerViews, cs336_data: Path
) -> None:  # type: ignore[no-untyped-def]
    reference = json.loads((cs336_data / "tiktoken_gpt2_reference_ids.json").read_text(encoding="utf-8"))
    case = next(c for c in reference["cases"] if c["input"].get("literal", "").endswith("🙃<|endoftext|>"))
    text, ids = case["input"]["literal"], case["ids"]
    open_and_wait(qtbot, window, cs336_data / "gpt2_vocab.json", text)
    assert views.current is not None and views.current.tokenizer.vocab_size == 50257
    assert views.playground.encoding.ids == ids  # type: ignore[union-attr]
    assert views.playground.merges_used == 50000


def test_long_texts_are_coloured_where_they_are_seen(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views: TokenizerViews, tiny_file: Path
) -> None:
    text = "".join(f"line {n}: the quick brown fox\n" for n in range(3000))
    open_and_wait(qtbot, window, tiny_file, text)
    editor = views.playground.editor
    last_block = editor.document().blockCount() - 1
    assert 0 in editor.coloured_blocks and last_block - 1 not in editor.coloured_blocks
    # Scrolling colours what comes into view, on the engine's spans.
    editor.verticalScrollBar().setValue(editor.verticalScrollBar().maximum())
    qtbot.waitUntil(lambda: last_block - 1 in editor.coloured_blocks)
    editor.colour_all_blocks()
    tok = views.current.tokenizer  # type: ignore[union-attr]
    assert formatted_units(editor) == expected_formats(text, tok.encode_with_offsets(text))


def test_tokenizer_menu(qtbot, window: MainWindow, views: TokenizerViews, tiny_file: Path) -> None:  # type: ignore[no-untyped-def]
    titles = [action.text() for action in window.menuBar().actions()]
    assert titles.index("T&okenizer") == titles.index("&Help") - 1
    texts = [action.text() for action in views.menu.actions() if action.text()]
    assert texts[:8] == [
        "&Open tokenizer…",
        "Open tokenizer &folder…",
        "Open &GPT-2",
        "Open &OpenAI encoding",
        "Open from &Hugging Face…",
        "&Add to Side by side…",
        "&Compare with…",
        "&Export…",
    ]
    assert not views.export_action.isEnabled()
    assert [window.tabs.tabText(i) for i in range(window.tabs.count())] == [
        "Train",
        "Playground",
        "Vocabulary",
        "Compare",
        "Side by side",
        "Chat",
    ]
    open_and_wait(qtbot, window, tiny_file)
    assert views.export_action.isEnabled()
    assert window.windowTitle() == "tiny.json — BPE Studio"
    show_vocabulary = next(a for a in views.menu.actions() if a.text() == "Show &Vocabulary")
    show_vocabulary.trigger()
    assert window.tabs.currentWidget() is views.vocab_browser
