"""A long text with no line break is one block (paragraph) of the text views: what a repaint, a key or the
colouring costs must depend on what is in view, not on the block (issue 21.1: a pasted megabyte on one line
stalled the window for seconds at each key)."""

from __future__ import annotations

from bpe_studio.ui.widgets.token_text import UNIT_PROPERTY, TokenTextEdit

#: Units of a two-character "token" each, on one line.
UNITS = 20_000


def _long_line(qtbot) -> TokenTextEdit:
    edit = TokenTextEdit()
    qtbot.addWidget(edit)
    edit.resize(400, 300)
    edit.show()
    qtbot.waitExposed(edit)
    edit.setPlainText("ab" * UNITS)
    edit.set_units(list(range(0, 2 * UNITS, 2)), list(range(2, 2 * UNITS + 2, 2)), [0] * UNITS)
    return edit


def _coloured_units(edit: TokenTextEdit) -> set[int]:
    found = set()
    block = edit.document().firstBlock()
    while block.isValid():  # the line is held as several paragraphs (soft breaks)
        found |= {r.format.property(UNIT_PROPERTY) for r in block.layout().formats()}
        block = block.next()
    return found


def test_only_the_units_near_the_view_of_a_long_line_are_coloured(qtbot) -> None:
    edit = _long_line(qtbot)
    first, last = edit._visible_range()
    assert 0 == first < last < 2 * UNITS // 10  # lines in view, not the whole block
    coloured = _coloured_units(edit)
    assert set(range(last // 2)) <= coloured  # all in view are coloured
    assert len(coloured) < UNITS // 4  # and not the whole line


def test_scrolling_along_a_long_line_colours_what_comes_into_view(qtbot) -> None:
    edit = _long_line(qtbot)
    bar = edit.verticalScrollBar()
    with qtbot.waitSignal(edit.updateRequest):
        bar.setValue(bar.maximum())
    edit.colour_visible_blocks()  # as the update request does (idempotent)
    first, last = edit._visible_range()
    assert first > 2 * UNITS // 2
    coloured = _coloured_units(edit)
    assert set(range(first // 2 + 1, last // 2)) <= coloured
    assert 0 not in coloured  # what left the view was cleared
    assert len(coloured) < UNITS // 4


def test_control_characters_are_looked_for_in_view_only(qtbot) -> None:
    edit = TokenTextEdit()
    qtbot.addWidget(edit)
    edit.resize(400, 300)
    edit.show()
    qtbot.waitExposed(edit)
    edit.setPlainText("\x01" + "ab" * UNITS + "\x02")
    assert edit.control_positions() == [0]
