"""Text views with colour-coded token boundaries.

:class:`TokenTextEdit` is a ``QPlainTextEdit`` (editable for the playground, read-only for the decoded-bytes
view and the compare tab) that colours *units* (see :class:`~bpe_studio.ui.present.token_layout.Encoding`): a
:class:`UnitHighlighter` sets each unit's character format (alternating backgrounds; every format carries
the unit's index as the property :data:`UNIT_PROPERTY`, which the tests read back), and ``paintEvent``
draws what formats cannot: outlines around special tokens and the current token, and with visible
whitespace a coloured ``↵`` where a line ends inside a token. Spaces and tabs are made visible by Qt
(``QTextOption.ShowTabsAndSpaces`` draws ``·`` and ``→``).

While the user types, the units are stale until the next encoding arrives; the highlighter then keeps
colouring only the text before the first edit, so colours never land on the wrong characters.

A line longer than a few thousand characters is held as several paragraphs (*soft breaks*, see
:mod:`~bpe_studio.ui.widgets.soft_breaks`): Qt lays out a whole paragraph at each edit and each colouring,
and a pasted megabyte on one line froze the window for seconds. The soft breaks are not part of the text:
:meth:`TokenTextEdit.plain_text`, copies and drags leave them out, and every position this view takes or
reports (units, :meth:`~TokenTextEdit.range_rects`, :meth:`~TokenTextEdit.unit_at_cursor`…) is a position
of the text, which :meth:`~TokenTextEdit.to_document` and :meth:`~TokenTextEdit.to_text` map. The paragraph
after a soft break carries the block property :data:`SOFT_PROPERTY`, so that undo and redo bring soft
breaks back as soft; the view keeps the document positions of the soft breaks in step with each edit.
"""

from __future__ import annotations

import array
import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from functools import lru_cache
from typing import cast

from PySide6.QtCore import (
    QEvent,
    QMimeData,
    QPoint,
    QPointF,
    QRect,
    QRectF,
    Qt,
    QTextBoundaryFinder,
    Signal,
    Slot,
)
from PySide6.QtGui import (
    QColor,
    QContextMenuEvent,
    QDragEnterEvent,
    QDragMoveEvent,
    QDropEvent,
    QFontDatabase,
    QFontMetricsF,
    QKeyEvent,
    QKeySequence,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QPen,
    QSyntaxHighlighter,
    QTextBlock,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextFormat,
    QTextLine,
    QTextOption,
)
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QWidget

from ..app.style import theme_of
from ..present.token_format import TokenPalette, palette_for
from ..present.token_layout import SLICE, SPECIAL, SPLIT
from .common import delay_timer
from .file_drop import dropped_paths
from .soft_breaks import SOFT_LIMIT, SOFT_TARGET, soft_break_points, utf16_length

#: The character-format property holding a unit's index.
UNIT_PROPERTY = int(QTextFormat.Property.UserProperty) + 1
#: The block-format property of a paragraph that follows a soft break (see the module).
SOFT_PROPERTY = int(QTextFormat.Property.UserProperty) + 2
#: The Unicode paragraph separator: a block break in a document's raw text.
_PARAGRAPH = "\u2029"

#: Put between two token labels in a view of labels: a zero-width space, where a line may wrap. Without it
#: the labels form one long "word" that Qt breaks anywhere, e.g. between ``<0x8A`` and ``>``.
LABEL_BREAK = "\u200b"


#: Put inside a token label where a line could otherwise wrap: a word joiner, which forbids a break. Qt
#: breaks lines where Unicode allows it, e.g. after the ``|`` of ``<|endoftext|>``, after a hyphen or
#: between two CJK characters, which would split one token's label over two lines.
LABEL_JOIN = "\u2060"
# Labels made only of these never hold a place to wrap (byte labels, most words): no need to ask Qt.
_NEVER_BREAKS = re.compile(r"[0-9A-Za-z<>·]*")


#: Characters of a long text set in one turn of the event loop, when a view feeds it in slices.
FEED_CHARS = 100_000

#: Control characters a view draws as their code: C0 but tab and line feed, DEL, and C1.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def label_break_points(label: str) -> list[int]:
    """The places strictly inside a label (in UTF-16 code units) where Qt could wrap a line.

    Example:
        >>> label_break_points("<|endoftext|>"), label_break_points("<0x8A>")
        ([2, 12], [])
    """
    if _NEVER_BREAKS.fullmatch(label):
        return []
    return list(_break_points(label))


@lru_cache(maxsize=65536)
def _break_points(label: str) -> tuple[int, ...]:
    # Cached: a long text repeats the same few thousand labels, and asking Qt costs ~10 µs a label.
    # QTextBoundaryFinder is reentrant, so this also runs on a worker thread (the playground's encoding).
    length = len(label.encode("utf-16-le")) // 2
    finder = QTextBoundaryFinder(QTextBoundaryFinder.BoundaryType.Line, label)
    points = []
    while 0 < (point := finder.toNextBoundary()) < length:
        points.append(point)
    return tuple(points)


def with_label_breaks(
    text: str, starts: Sequence[int], ends: Sequence[int]
) -> tuple[str, list[int], list[int]]:
    """Insert :data:`LABEL_BREAK` between adjacent labels and :data:`LABEL_JOIN` where a line could wrap
    inside one; returns the text and the labels' new positions.

    Positions are in UTF-16 code units, as in the document. Qt-free apart from asking Qt where lines may
    break, so it runs on a worker thread too (the playground prepares its Tokens view there).

    Example:
        >>> with_label_breaks("ab<0xE2>", [0, 1, 2], [1, 2, 8])
        ('a\u200bb\u200b<0xE2>', [0, 2, 4], [1, 3, 10])
        >>> with_label_breaks("a<|eot|>", [0, 1], [1, 8])
        ('a\u200b<|\u2060eot|\u2060>', [0, 2], [1, 11])
    """
    data = text.encode("utf-16-le")
    parts: list[bytes] = []
    new_starts: list[int] = []
    new_ends: list[int] = []
    done = 0  # UTF-16 units of the text copied so far
    added = 0
    for i, (start, end) in enumerate(zip(starts, ends, strict=True)):
        if i and start == ends[i - 1]:
            parts += [data[2 * done : 2 * start], LABEL_BREAK.encode("utf-16-le")]
            done = start
            added += 1
        new_starts.append(start + added)
        for point in label_break_points(data[2 * start : 2 * end].decode("utf-16-le")):
            parts += [data[2 * done : 2 * (start + point)], LABEL_JOIN.encode("utf-16-le")]
            done = start + point
            added += 1
        new_ends.append(end + added)
    parts.append(data[2 * done :])
    # Joined SLICE parts at a time (a part never ends inside a character): on the playground's worker thread,
    # one join of the two million parts of 400,000 Chinese characters' labels held Python's lock for 200 ms,
    # all that time a wait for the GUI thread.
    pieces = [b"".join(parts[i : i + SLICE]).decode("utf-16-le") for i in range(0, len(parts), SLICE)]
    return "".join(pieces), new_starts, new_ends


def _as_list(values: Sequence[int]) -> list[int]:
    """A list or an array as it is (indexed like a list, see ``token_layout.IntArray``), else a list."""
    if isinstance(values, (list, array.array)):
        return cast(list[int], values)
    return list(values)


def _without_label_marks(text: str) -> str:
    """Text of a view of labels without the breaks and joiners :func:`with_label_breaks` put in."""
    return text.replace(LABEL_BREAK, "").replace(LABEL_JOIN, "")


def is_dark(widget: QWidget) -> bool:
    """Whether a widget is drawn in a dark theme (its base colour is dark)."""
    return widget.palette().color(QPalette.ColorRole.Base).lightness() < 128


def _line_index_at(block: QTextBlock, y: float) -> int:
    """The index of the block's line at height ``y`` (block coordinates; the last line above it), by
    bisection over the lines (a long paragraph has thousands); -1 when the block is not laid out."""
    layout = block.layout()
    count = layout.lineCount()
    if count == 0:
        return -1
    lo, hi = 0, count - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if layout.lineAt(mid).y() <= y:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _line_start(block: QTextBlock, y: float) -> int:
    """Where the block's line at height ``y`` starts (0: not laid out), relative to the block."""
    index = _line_index_at(block, y)
    return block.layout().lineAt(index).textStart() if index >= 0 else 0


def _line_end(block: QTextBlock, y: float) -> int:
    """Where the block's line at height ``y`` ends, relative to the block (its length: not laid out)."""
    index = _line_index_at(block, y)
    if index < 0:
        return block.length()
    line = block.layout().lineAt(index)
    return line.textStart() + line.textLength() + (1 if index == block.layout().lineCount() - 1 else 0)


def _line_x(line: QTextLine, position: int) -> float:
    """The x of a cursor position in a line (PySide6 returns ``(x, position)``)."""
    found: tuple[float, int] = line.cursorToX(position)  # type: ignore[assignment]
    return float(found[0])


class UnitHighlighter(QSyntaxHighlighter):
    """Colours the units of a :class:`TokenTextEdit` (positions in UTF-16 code units of the document).

    Only the blocks (paragraphs) in view, and some around them, are coloured; the edit colours the others
    when they scroll into view. So a long text costs little more than a short one.
    """

    def __init__(self, edit: TokenTextEdit) -> None:
        super().__init__(edit.document())
        self._edit = edit

    def highlightBlock(self, text: str) -> None:  # noqa: N802 - Qt's name
        """Set the format of each unit (part) in the block, if the block is near the view."""
        edit = self._edit
        block = self.currentBlock()
        if not edit.unit_starts or not edit.block_wanted(block):
            edit.coloured_blocks.discard(block.blockNumber())
            return
        edit.coloured_blocks.add(block.blockNumber())
        starts, ends = edit.unit_starts, edit.unit_ends
        first = edit.to_text(block.position())  # a block holds no soft break: its text maps one to one
        last = first + block.length() - 1  # the block's text, without its separator
        limit = last if edit.valid_until is None else min(last, edit.valid_until)
        # Only the characters near the view, too: a long text with no line break is one block, whose
        # hundreds of thousands of units took seconds to colour, again at each key typed into it.
        low, high = edit.wanted_chars
        limit = min(limit, high)
        unit = bisect_right(ends, max(first, low))
        count = len(starts)
        while unit < count and starts[unit] < limit:
            begin = max(starts[unit], first)
            end = min(ends[unit], limit)
            if end > begin:
                self.setFormat(begin - first, end - begin, edit.unit_format(unit))
            unit += 1


class TokenTextEdit(QPlainTextEdit):
    """A text view whose token units are coloured; reports the unit under the mouse.

    Signals:
        unit_hovered(int): The unit under the mouse changed (-1: none).
        text_edited(): The text changed (other than through :meth:`set_text_and_units`).
        files_dropped(list): Local files or folders were dropped on the view (a list of ``Path``); dropped
            text is inserted as usual.
        fed(): The last slice of a long text came in (see :attr:`feed_in_slices`).

    Attributes:
        feed_in_slices: Whether a long text set from code goes in a slice per turn of the event loop.
    """

    unit_hovered = Signal(int)
    text_edited = Signal()
    files_dropped = Signal(object)
    fed = Signal()

    def __init__(self, parent: QWidget | None = None, *, read_only: bool = False) -> None:
        super().__init__(parent)
        self.setReadOnly(read_only)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.viewport().setMouseTracking(True)
        self.unit_starts: list[int] = []
        self.unit_ends: list[int] = []
        self.unit_kinds: list[int] = []
        self.unit_colours: list[int] | None = None
        self.valid_until: int | None = None
        self._label_breaks = False
        self._hovered = -1
        self._current = range(0)
        self._show_whitespace = False
        self._palette = palette_for(is_dark(self))
        self._formats: list[QTextCharFormat] = []
        self._special_format = QTextCharFormat()
        self._split_formats: list[QTextCharFormat] = []
        self._make_formats()
        self._updating = False
        self._revision = self.document().revision()
        #: Characters of a paragraph the soft breaks aim for, and the longest line held as one paragraph.
        self.soft_target, self.soft_limit = SOFT_TARGET, SOFT_LIMIT
        self._soft: list[int] = []  # document positions of the soft breaks' separators, in order
        self._soft_text: list[int] = []  # their positions in the text (see to_document)
        self._soft_marked = False  # whether a soft break was put in since the text was last set
        self._soft_length = 1  # the document's length when the soft breaks were last kept in step
        self._soft_frozen = False  # the soft breaks are being set from code
        self._undoing = False  # an undo or a redo is under way
        self._soft_format = QTextBlockFormat()
        self._soft_format.setProperty(SOFT_PROPERTY, True)
        self._mark_fixes: list[tuple[int, bool]] = []  # paragraphs whose soft mark an edit left wrong
        self._split_due: list[int] = []  # document positions of edited paragraphs to check for length
        self._soft_timer = delay_timer(self, 0, self._on_soft_timer_timeout)
        # Connected before the highlighter exists, so that an edit is seen before Qt re-highlights the block.
        self.document().contentsChange.connect(self._on_document_contents_change)
        self.coloured_blocks: set[int] = set()
        self._block_count = self.document().blockCount()
        self._wanted = range(0)
        self.wanted_chars = (0, 1 << 62)  # the document positions to colour (see _wanted_blocks)
        self.highlighter = UnitHighlighter(self)
        self.updateRequest.connect(self._on_update_request)
        self.feed_in_slices = False
        self._rest = ""  # the part of the text still to be fed in (see _set_text)
        self._rest_points: list[int] = []  # the soft breaks of the rest (positions in it)
        self._feed_timer = delay_timer(self, 0, self._on_feed_timer_timeout)
        if read_only:
            self.document().setUndoRedoEnabled(False)  # nothing to undo, and slices fed in would pile up

    def plain_text(self) -> str:
        """The text with its line breaks as ``\\n`` (no-break spaces kept, unlike ``toPlainText``; the
        breaks between labels and the soft breaks left out, see :meth:`set_labels_and_units` and the
        module)."""
        return self._text_of(self.document().toRawText(), 0)

    def _text_of(self, raw: str, offset: int) -> str:
        """The text of a piece of the document's raw text that starts at document position ``offset``."""
        soft = self._soft
        if soft:
            lo = bisect_left(soft, offset)
            data = raw.encode("utf-16-le", "surrogatepass")
            hi = bisect_left(soft, offset + len(data) // 2)
            if hi > lo:
                parts, done = [], 0
                for position in soft[lo:hi]:
                    parts.append(data[2 * done : 2 * (position - offset)])
                    done = position - offset + 1
                parts.append(data[2 * done :])
                raw = b"".join(parts).decode("utf-16-le", "surrogatepass")
        text = raw.replace(_PARAGRAPH, "\n").replace("\u2028", "\n")
        return _without_label_marks(text) if self._label_breaks else text

    def createMimeDataFromSelection(self) -> QMimeData:  # noqa: N802 - Qt's name
        """Copy (or drag) the selected text without the soft breaks and the breaks put between labels."""
        cursor = self.textCursor()
        # Qt's own object (one made here would be freed by Python while the clipboard holds it); reading
        # its text first makes it fill in its formats, so that the text set next stays.
        mime = super().createMimeDataFromSelection()
        mime.text()
        mime.setText(self._text_of(cursor.selectedText(), cursor.selectionStart()))
        for rich in mime.formats():
            if rich != "text/plain":  # a rich copy would hold the soft breaks as paragraphs
                mime.removeFormat(rich)
        return mime

    # -- soft breaks ------------------------------------------------------------------------------------

    def to_text(self, position: int) -> int:
        """The position in the text of a document position (a soft break's separator: the place it is at)."""
        return position - bisect_left(self._soft, position)

    def to_document(self, position: int, *, after: bool = False) -> int:
        """The document position of a position in the text: before the soft breaks there, or ``after``
        them (where a unit starting there begins)."""
        side = bisect_right if after else bisect_left
        return position + side(self._soft_text, position)

    @property
    def soft_breaks(self) -> list[int]:
        """The positions in the text where the document holds a soft break (see the module)."""
        return list(self._soft_text)

    def setPlainText(self, text: str) -> None:  # noqa: N802 - Qt's name
        """Replace the text (not undoable), with soft breaks in its long lines."""
        points = self._soft_points(text)
        if not points:
            self._set_soft([])
            self._soft_marked = False
            super().setPlainText(text)
            return
        self._soft_frozen = True
        try:
            super().setPlainText(text[: points[0]])
            self._soft, self._soft_text = [], []
            self._soft_marked = True
            self._append_text(text[points[0] :], [p - points[0] for p in points[1:]], soft_first=True)
        finally:
            self._soft_frozen = False

    def _append_text(self, text: str, points: Sequence[int], *, soft_first: bool) -> None:
        """Put ``text`` at the end of the document (not undoably) with soft breaks before ``points`` (and at
        its start with ``soft_first``); the soft breaks are recorded here."""
        doc = self.document()
        undo = doc.isUndoRedoEnabled()
        doc.setUndoRedoEnabled(False)
        frozen = self._soft_frozen
        self._soft_frozen = True
        try:
            cursor = QTextCursor(doc)
            cursor.movePosition(QTextCursor.MoveOperation.End)
            soft = list(self._soft)
            # In one edit block: Qt updates the layout and the highlighter once, not at each piece (10×).
            cursor.beginEditBlock()
            try:
                self._insert_pieces(cursor, text, points, soft_first, soft)
            finally:
                cursor.endEditBlock()
            self._set_soft(soft)
            self._soft_marked = self._soft_marked or bool(soft)
        finally:
            self._soft_frozen = frozen
            doc.setUndoRedoEnabled(undo)

    def _insert_pieces(
        self, cursor: QTextCursor, text: str, points: Sequence[int], soft_first: bool, soft: list[int]
    ) -> None:
        """Insert ``text`` at the cursor with a soft break before each of ``points`` (and at the start with
        ``soft_first``), appending the document positions of the soft breaks to ``soft``.

        A line break of the text goes in as a plain paragraph: Qt's own would copy the soft mark of the
        paragraph it splits, and undo would take it for a soft break.
        """
        bounds = [0, *points, len(text)]
        for i in range(len(bounds) - 1):
            if i or soft_first:
                soft.append(cursor.position())
                cursor.insertBlock(self._soft_format)
            piece = text[bounds[i] : bounds[i + 1]]
            line_end = piece.find("\n")
            if line_end >= 0 and cursor.blockFormat().hasProperty(SOFT_PROPERTY):
                cursor.insertText(piece[:line_end])
                cursor.insertBlock(QTextBlockFormat())
                piece = piece[line_end + 1 :]
            if piece:
                cursor.insertText(piece)

    def _soft_points(self, text: str) -> list[int]:
        return soft_break_points(text, target=self.soft_target, limit=self.soft_limit)

    def _set_soft(self, soft: list[int]) -> None:
        self._soft = soft
        self._soft_text = [position - i for i, position in enumerate(soft)]

    def insertFromMimeData(self, source: QMimeData) -> None:  # noqa: N802 - Qt's name
        """Paste or drop text as plain text, with soft breaks in its long lines (one undo step)."""
        if not source.hasText():
            super().insertFromMimeData(source)
            return
        self.insert_text(source.text())

    def insertPlainText(self, text: str) -> None:  # noqa: N802 - Qt's name
        """Insert text at the cursor as typed or pasted (see :meth:`insert_text`)."""
        self.insert_text(text)

    def insert_text(self, text: str) -> None:
        """Insert text at the cursor, replacing the selection, as one undo step; soft breaks go in its long
        lines, and in a paragraph it makes too long."""
        cursor = self.textCursor()
        points = self._soft_points(text)
        self._soft_marked = self._soft_marked or bool(points)
        cursor.beginEditBlock()
        try:
            cursor.removeSelectedText()
            start = cursor.position()
            soft: list[int] = []
            self._insert_pieces(cursor, text, points, False, soft)
        finally:
            cursor.endEditBlock()
        self._check_soft_marks(start, soft)
        self.setTextCursor(cursor)
        self.ensureCursorVisible()

    def _check_soft_marks(self, start: int, soft: list[int]) -> None:
        """Record as soft the breaks just put in, and have the edited paragraphs checked for length."""
        if soft:
            merged = sorted({*self._soft, *soft})
            self._set_soft(merged)
        self._split_due.append(start)
        self._soft_timer.start()

    def _track_soft(self, position: int, removed: int, added: int) -> None:
        """Keep the soft breaks' document positions in step with an edit (Qt's ``contentsChange``)."""
        doc = self.document()
        length, self._soft_length = self._soft_length, doc.characterCount()
        if self._soft_frozen or not self._soft_marked:
            return
        if length + added - removed != self._soft_length:
            # Not an edit of the text since the last one kept in step: colours set while Qt is still making
            # an edit (its layout asks for a repaint before it tells of the edit, which moves the soft breaks
            # when told next), or an edit told again, merged with the colours its own telling set (the
            # Playground colours the edited paragraph from the highlighter: Qt then reported a paste at 51
            # as 37, 14 → 136, and the soft breaks after it moved twice, a character of the text cut out as
            # if it were one).
            self._soft_length = length
            return
        soft = self._soft
        i = bisect_left(soft, position)
        j = bisect_left(soft, position + removed)
        block = doc.findBlock(position)
        if block.isValid() and block.position() <= position:
            # Qt gives a paragraph merged by a deletion from a paragraph's start the mark of the last one:
            # its separator, before the edit, says what the mark must be (set right after the edit).
            before = block.position() - 1
            k = bisect_left(soft, before)
            want = before >= 0 and k < len(soft) and soft[k] == before
            if want != block.blockFormat().hasProperty(SOFT_PROPERTY):
                self._mark_fixes.append((block.position(), want))
                self._soft_timer.start()
        found = []
        if block.isValid() and block.position() <= position:
            block = block.next()
        while block.isValid() and block.position() <= position + added:
            if block.blockFormat().hasProperty(SOFT_PROPERTY):
                found.append(block.position() - 1)
            block = block.next()
        self._set_soft(soft[:i] + found + [p + added - removed for p in soft[j:]])

    @Slot()
    def _on_soft_timer_timeout(self) -> None:
        self._fix_soft_marks()
        self._split_long_blocks()

    def _fix_soft_marks(self) -> None:
        """Set the soft marks an edit left wrong (see :meth:`_track_soft`), in that edit's undo step."""
        fixes, self._mark_fixes = self._mark_fixes, []
        doc = self.document()
        for position, want in fixes:
            block = doc.findBlock(position)
            if block.position() != position or block.blockFormat().hasProperty(SOFT_PROPERTY) == want:
                continue
            cursor = QTextCursor(block)
            self._updating = True  # not an edit of the text
            cursor.joinPreviousEditBlock()
            try:
                cursor.setBlockFormat(self._soft_format if want else QTextBlockFormat())
            finally:
                cursor.endEditBlock()
                self._updating = False

    def _split_long_blocks(self) -> None:
        """Put soft breaks in the edited paragraphs that grew longer than :data:`SOFT_LIMIT` (typed into, or
        joined), as part of the edit's undo step: bounded work, the paragraphs the edit touched."""
        due, self._split_due = self._split_due, []
        doc = self.document()
        for position in sorted(set(due), reverse=True):
            block = doc.findBlock(position)
            if not block.isValid() or block.length() <= self.soft_limit:
                continue
            text = block.text()
            points = self._soft_points(text)
            if not points:
                continue
            base = block.position()
            offsets = [utf16_length(text[:p]) for p in points] if not text.isascii() else points
            before = [base + offset for offset in offsets]
            cursor = QTextCursor(doc)
            # Not an edit of the text: the units stay valid and nothing is encoded again.
            self._soft_frozen = self._updating = True
            cursor.joinPreviousEditBlock()
            try:
                for position in reversed(before):  # from the end: the earlier positions stay put
                    cursor.setPosition(position)
                    cursor.insertBlock(self._soft_format)
            finally:
                cursor.endEditBlock()
                self._soft_frozen = self._updating = False
            self._soft_marked = True
            moved = [p + bisect_right(before, p) for p in self._soft]
            self._set_soft(sorted(moved + [p + i for i, p in enumerate(before)]))
        self._soft_length = doc.characterCount()

    def undo(self) -> None:
        """Undo the last edit (soft breaks come back as they were)."""
        self._flush_soft()
        self._undoing = True  # the paragraphs it brings back are not cut again: that would redo it
        try:
            super().undo()
        finally:
            self._undoing = False

    def redo(self) -> None:
        """Redo the last undone edit."""
        self._flush_soft()
        self._undoing = True
        try:
            super().redo()
        finally:
            self._undoing = False

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:  # noqa: N802 - Qt's name
        """The standard menu, its Undo and Redo going through :meth:`undo` and :meth:`redo`."""
        menu = self.createStandardContextMenu(event.pos())
        for action in menu.actions():
            if action.objectName() == "edit-undo":
                action.triggered.disconnect()
                action.triggered.connect(self.undo)
            elif action.objectName() == "edit-redo":
                action.triggered.disconnect()
                action.triggered.connect(self.redo)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        menu.popup(event.globalPos())

    def _flush_soft(self) -> None:
        if self._soft_timer.isActive():
            self._soft_timer.stop()
            self._on_soft_timer_timeout()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt's name
        """Type as if the soft breaks were not there: Backspace, Delete and the arrows step over them, Enter
        makes a plain line break, Undo and Redo keep them right."""
        self._flush_soft()
        if not self.isReadOnly() and event.matches(QKeySequence.StandardKey.Undo):
            self.undo()
            return
        if not self.isReadOnly() and event.matches(QKeySequence.StandardKey.Redo):
            self.redo()
            return
        if self.isReadOnly() or not self._soft_marked:
            super().keyPressEvent(event)
            return
        cursor = self.textCursor()
        position = cursor.position()
        backward = (
            QKeySequence.StandardKey.MoveToPreviousChar,
            QKeySequence.StandardKey.SelectPreviousChar,
            QKeySequence.StandardKey.DeleteStartOfWord,
            QKeySequence.StandardKey.MoveToPreviousWord,
            QKeySequence.StandardKey.SelectPreviousWord,
        )
        forward = (
            QKeySequence.StandardKey.MoveToNextChar,
            QKeySequence.StandardKey.SelectNextChar,
            QKeySequence.StandardKey.Delete,
            QKeySequence.StandardKey.DeleteEndOfWord,
            QKeySequence.StandardKey.MoveToNextWord,
            QKeySequence.StandardKey.SelectNextWord,
        )
        mode = (
            QTextCursor.MoveMode.KeepAnchor
            if any(event.matches(k) for k in backward[1::2] + forward[1::2])
            else QTextCursor.MoveMode.MoveAnchor
        )
        if (event.key() == Qt.Key.Key_Backspace and not cursor.hasSelection()) or any(
            event.matches(k) for k in backward
        ):
            if not cursor.hasSelection() or mode == QTextCursor.MoveMode.KeepAnchor:
                cursor.setPosition(self.to_document(self.to_text(position)), mode)
        elif any(event.matches(k) for k in forward):
            if not cursor.hasSelection() or mode == QTextCursor.MoveMode.KeepAnchor:
                cursor.setPosition(self.to_document(self.to_text(position), after=True), mode)
        elif event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not (
            event.modifiers() & Qt.KeyboardModifier.ShiftModifier
        ):
            self.insert_text("\n")
            return
        if cursor.position() != position:
            blocked = self.blockSignals(True)
            try:
                self.setTextCursor(cursor)
            finally:
                self.blockSignals(blocked)
        super().keyPressEvent(event)

    # -- formats ----------------------------------------------------------------------------------------

    @property
    def token_palette(self) -> TokenPalette:
        """The colours in use."""
        return self._palette

    def _make_formats(self) -> None:
        palette = self._palette
        text = QColor(palette.text)
        self._formats = []
        self._split_formats = []
        for colour in palette.backgrounds:
            fmt = QTextCharFormat()
            fmt.setBackground(QColor(colour))
            fmt.setForeground(text)
            self._formats.append(fmt)
            split = QTextCharFormat(fmt)
            split.setUnderlineStyle(QTextCharFormat.UnderlineStyle.DotLine)
            split.setUnderlineColor(QColor(palette.partial_underline))
            self._split_formats.append(split)
        special = QTextCharFormat()
        special.setBackground(QColor(palette.special_background))
        special.setForeground(QColor(palette.special_text))
        special.setFontWeight(700)
        self._special_format = special

    def _colour_number(self, unit: int) -> int:
        return unit if self.unit_colours is None else self.unit_colours[unit]

    def unit_colour(self, unit: int) -> str:
        """The background colour of a unit."""
        if self.unit_kinds[unit] == SPECIAL:
            return self._palette.special_background
        return self._palette.backgrounds[self._colour_number(unit) % len(self._palette.backgrounds)]

    def unit_format(self, unit: int) -> QTextCharFormat:
        """The character format of a unit (with its index as :data:`UNIT_PROPERTY`)."""
        kind = self.unit_kinds[unit]
        number = self._colour_number(unit)
        if kind == SPECIAL:
            fmt = QTextCharFormat(self._special_format)
        elif kind == SPLIT:
            fmt = QTextCharFormat(self._split_formats[number % len(self._split_formats)])
        else:
            fmt = QTextCharFormat(self._formats[number % len(self._formats)])
        fmt.setProperty(UNIT_PROPERTY, unit)
        return fmt

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        """Follow a change between light and dark themes."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            palette = palette_for(is_dark(self))
            if palette != self._palette:
                self._palette = palette
                self._make_formats()
                self._rehighlight()

    # -- units ------------------------------------------------------------------------------------------

    def set_units(
        self,
        starts: Sequence[int],
        ends: Sequence[int],
        kinds: Sequence[int],
        colours: Sequence[int] | None = None,
    ) -> None:
        """Colour these units (UTF-16 positions of the current text) and forget any edits.

        ``colours`` gives each unit's colour number (by default its index), so that two views of the same
        tokens can agree on colours.
        """
        # Lists are kept as given (never changed here): a long text's copies were more work on the GUI
        # thread, and more for its garbage collector to visit.
        self.unit_starts = _as_list(starts)
        self.unit_ends = _as_list(ends)
        self.unit_kinds = _as_list(kinds)
        self.unit_colours = _as_list(colours) if colours is not None else None
        self.valid_until = None
        self._current = range(0)
        self._hovered = -1
        self._revision = self.document().revision()
        self._rehighlight()

    def clear_units(self) -> None:
        """Remove every colour."""
        self.set_units([], [], [])

    def set_text_and_units(
        self,
        text: str,
        starts: Sequence[int],
        ends: Sequence[int],
        kinds: Sequence[int],
        colours: Sequence[int] | None = None,
    ) -> None:
        """Replace the text and colour its units (for the read-only views)."""
        self._label_breaks = False
        self._set_text(text)
        self.set_units(starts, ends, kinds, colours)

    def set_labels_and_units(
        self,
        text: str,
        starts: Sequence[int],
        ends: Sequence[int],
        kinds: Sequence[int],
        colours: Sequence[int] | None = None,
    ) -> None:
        """Show token labels (one unit each) so that lines wrap between labels, never inside one.

        A :data:`LABEL_BREAK` goes between adjacent labels and a :data:`LABEL_JOIN` wherever a line could
        wrap inside one (``<|endoftext|>``), so the units' positions in the view (:attr:`unit_starts`) are
        not those given; :meth:`plain_text` and copying leave both out.
        """
        text, starts, ends = with_label_breaks(text, starts, ends)
        self.set_broken_labels_and_units(text, starts, ends, kinds, colours)

    def set_broken_labels_and_units(
        self,
        text: str,
        starts: Sequence[int],
        ends: Sequence[int],
        kinds: Sequence[int],
        colours: Sequence[int] | None = None,
    ) -> None:
        """:meth:`set_labels_and_units` with the labels' text already through :func:`with_label_breaks` (the
        playground does that on its worker thread: for a long text it takes seconds)."""
        self._label_breaks = True
        self._set_text(text)
        self.set_units(starts, ends, kinds, colours)

    def _set_text(self, text: str) -> None:
        """Replace the text; with :attr:`feed_in_slices`, a long one goes in :data:`FEED_CHARS` at a time, one
        slice per turn of the event loop (1.5 MB at once kept the window from reacting for 130 ms). A slice
        ends at a line end or a soft break, so each turn lays out only its own paragraphs (appended to one
        paragraph, the slices made the work quadratic)."""
        self.unit_starts, self.unit_ends, self.unit_kinds = [], [], []
        self._feed_timer.stop()
        self._rest = ""
        self._rest_points = []
        self._updating = True
        try:
            if self.feed_in_slices and len(text) > FEED_CHARS:
                points = self._soft_points(text)
                cut = self._slice_end(text, points)
                self.setPlainText(text[:cut])  # its own soft breaks: those before the cut
                self._rest = text[cut:]
                self._rest_points = [p - cut for p in points if p >= cut]
            else:
                self.setPlainText(text)
        finally:
            self._updating = False
        if self._rest:
            self._feed_timer.start()

    @staticmethod
    def _slice_end(text: str, points: Sequence[int]) -> int:
        """Where the slice of :data:`FEED_CHARS` fed first ends: the last line end or soft break in it."""
        soft = points[bisect_right(points, FEED_CHARS) - 1] if points and points[0] <= FEED_CHARS else 0
        return max(text.rfind("\n", 0, FEED_CHARS) + 1, soft) or FEED_CHARS

    def is_feeding(self) -> bool:
        """Whether part of the text set last is still to come (see :meth:`_set_text`)."""
        return bool(self._rest)

    @Slot()
    def _on_feed_timer_timeout(self) -> None:
        rest, points = self._rest, self._rest_points
        soft_first = bool(points) and points[0] == 0
        if soft_first:
            points = points[1:]
        cut = self._slice_end(rest, points) if len(rest) > FEED_CHARS else len(rest)
        self._updating = True
        try:
            self._append_text(rest[:cut], [p for p in points if p < cut], soft_first=soft_first)
        finally:
            self._updating = False
        self._rest = rest[cut:]
        self._rest_points = [p - cut for p in points if p >= cut]
        if self._rest:
            self._feed_timer.start()
        else:
            self.fed.emit()

    def _rehighlight(self) -> None:
        """Colour the blocks near the view again, and clear those coloured before: only those, since a
        whole-document rehighlight calls :meth:`UnitHighlighter.highlightBlock` once per block (tens of
        thousands for a pasted megabyte)."""
        self._updating = True
        try:
            stale = self.coloured_blocks
            self.coloured_blocks = set()
            self._wanted = self._wanted_blocks()
            self.wanted_chars = self._wanted_window()
            doc = self.document()
            count = doc.blockCount()
            for number in sorted(stale.union(self._wanted)):
                if number >= count:
                    break
                self.highlighter.rehighlightBlock(doc.findBlockByNumber(number))
        finally:
            self._updating = False
        self.viewport().update()

    def _wanted_blocks(self) -> range:
        """Block numbers to colour: those in view and a screenful around them.

        Counted in characters as well as in blocks: in a text of long paragraphs (Chinese, or the Tokens
        view of one), a screenful of blocks is many screens of units, and colouring them all froze the
        window for half a second.
        """
        first = self.firstVisibleBlock()
        number = first.blockNumber() if first.isValid() else 0
        metrics = self.fontMetrics()
        lines = max(self.viewport().height() // max(metrics.lineSpacing(), 1), 10)
        columns = max(self.viewport().width() // max(metrics.averageCharWidth(), 1), 20)
        budget = lines * columns  # about a screenful of characters
        start, spent = number, 0
        block = first.previous() if first.isValid() else first
        while block.isValid() and number - start < lines and spent < budget:
            start -= 1
            spent += block.length()
            block = block.previous()
        end, spent = number, 0
        block = first
        while block.isValid() and end - number < 3 * lines and spent < 2 * budget:
            end += 1
            spent += block.length()
            block = block.next()
        return range(start, max(end, number + 1))

    def _wanted_window(self) -> tuple[int, int]:
        """Document positions to colour: those in view and a screenful of characters before, two after (in a
        block of a whole long text, the blocks near the view are much more than that)."""
        first, last = self._visible_range()
        metrics = self.fontMetrics()
        lines = max(self.viewport().height() // max(metrics.lineSpacing(), 1), 10)
        columns = max(self.viewport().width() // max(metrics.averageCharWidth(), 1), 20)
        budget = lines * columns
        return max(first - budget, 0), last + 2 * budget

    def block_wanted(self, block: QTextBlock) -> bool:
        """Whether a block is near enough to the view to be coloured now."""
        return block.blockNumber() in self._wanted

    @Slot()
    def colour_visible_blocks(self) -> None:
        """Colour the blocks that came into view (after scrolling or resizing)."""
        if self._updating or not self.unit_starts:
            return
        low, high = self.wanted_chars
        first, last = self._visible_range()
        if first < low or last > high:
            self._rehighlight()  # scrolled out of the coloured part of a long block
            return
        wanted = self._wanted_blocks()
        missing = [n for n in wanted if n not in self.coloured_blocks]
        if not missing:
            return
        self._updating = True
        try:
            self._wanted = wanted
            doc = self.document()
            for number in missing:
                block = doc.findBlockByNumber(number)
                if not block.isValid():
                    break
                self.highlighter.rehighlightBlock(block)
        finally:
            self._updating = False

    def colour_all_blocks(self) -> None:
        """Colour every block now (e.g. before grabbing or exporting the whole text)."""
        self._updating = True
        try:
            self._wanted = range(self.document().blockCount())
            self.wanted_chars = (0, 1 << 62)
            self.coloured_blocks.clear()
            self.highlighter.rehighlight()
        finally:
            self._updating = False

    @Slot(QRect, int)
    def _on_update_request(self, _rect: QRect, _dy: int) -> None:
        self.colour_visible_blocks()

    @Slot(int, int, int)
    def _on_document_contents_change(self, position: int, removed: int, added: int) -> None:
        self._renumber_coloured_blocks(position)
        self._track_soft(position, removed, added)
        revision = self.document().revision()
        if self._updating or revision == self._revision:
            return  # set from code, or only formats changed
        self._revision = revision
        if not self._soft_frozen and not self._undoing:
            self._split_due.append(position)
            self._soft_timer.start()
        # The units after the first edit are stale until the next set_units().
        position = self.to_text(position)
        self.valid_until = position if self.valid_until is None else min(self.valid_until, position)
        self._current = range(0)
        if not self.isReadOnly():
            self.text_edited.emit()

    def _renumber_coloured_blocks(self, position: int) -> None:
        """Follow lines added or removed at ``position`` in :attr:`coloured_blocks` (block numbers after it
        move), so that the next colouring also clears the colours of blocks that moved out of view."""
        doc = self.document()
        count, before = doc.blockCount(), self._block_count
        self._block_count = count
        delta = count - before
        if not delta or not self.coloured_blocks:
            return
        edited = doc.findBlock(position).blockNumber()
        moved = set()
        for number in self.coloured_blocks:
            if number <= edited:
                moved.add(number)
            elif number > edited - min(delta, 0):  # blocks merged into the edited one (delta < 0) are gone
                moved.add(number + delta)
        self.coloured_blocks = moved

    def unit_at_position(self, position: int) -> int:
        """The unit holding the character at a document position, or -1 (also while it is stale)."""
        if self.valid_until is not None and position >= self.valid_until:
            return -1
        unit = bisect_right(self.unit_starts, position) - 1
        if unit >= 0 and position < self.unit_ends[unit]:
            return unit
        return -1

    @property
    def current_units(self) -> range:
        """The units outlined as current (empty: none)."""
        return self._current

    def set_current_units(self, units: range, *, scroll: bool = False) -> None:
        """Outline units as the current ones (an empty range: none); ``scroll`` brings them into view."""
        if units != self._current:
            self._current = units
            self.viewport().update()
        if scroll and len(units) and 0 <= units[0] < len(self.unit_starts):
            cursor = QTextCursor(self.document())
            cursor.setPosition(self.to_document(self.unit_starts[units[0]], after=True))
            if not self.viewport().rect().contains(self.cursorRect(cursor)):
                self.centerCursor_at(cursor)

    def centerCursor_at(self, cursor: QTextCursor) -> None:  # noqa: N802 - matches Qt's centerCursor
        """Scroll so that a position is in the middle, without moving the text cursor.

        The cursor's signals are blocked while it visits the position: the playground links this view's
        cursor to the other view's, and each visit (and return) would scroll that one, whose visit would
        scroll this one, without end (found with a long line of special tokens and Select All).
        """
        keep = self.textCursor()
        blocked = self.blockSignals(True)
        try:
            self.setTextCursor(cursor)
            self.centerCursor()
            self.setTextCursor(keep)
        finally:
            self.blockSignals(blocked)
        self.colour_visible_blocks()  # updateRequest, blocked above, colours what scrolled into view

    # -- whitespace -------------------------------------------------------------------------------------

    @property
    def whitespace_visible(self) -> bool:
        """Whether spaces, tabs and line ends are drawn."""
        return self._show_whitespace

    def set_whitespace_visible(self, visible: bool) -> None:
        """Draw spaces as ``·``, tabs as ``→`` and line ends inside tokens as ``↵`` (or not)."""
        self._show_whitespace = visible
        option = self.document().defaultTextOption()
        flags = option.flags()
        if visible:
            flags |= QTextOption.Flag.ShowTabsAndSpaces
        else:
            flags &= ~QTextOption.Flag.ShowTabsAndSpaces
        option.setFlags(flags)
        self._updating = True
        try:
            self.document().setDefaultTextOption(option)
        finally:
            self._updating = False
        self.viewport().update()

    # -- errors -----------------------------------------------------------------------------------------

    def mark_error(self, start: int | None, end: int | None) -> None:
        """Give characters (UTF-16 positions) the error background, or clear it with None."""
        if start is None or end is None:
            self.setExtraSelections([])
            return
        selection = QTextEdit.ExtraSelection()
        cursor = QTextCursor(self.document())
        cursor.setPosition(self.to_document(start, after=True))
        cursor.setPosition(self.to_document(end), QTextCursor.MoveMode.KeepAnchor)
        selection.cursor = cursor
        fmt = QTextCharFormat()
        fmt.setBackground(QColor(self._palette.error_background))
        fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
        fmt.setUnderlineColor(QColor(theme_of(self).error_underline))
        selection.format = fmt
        self.setExtraSelections([selection])

    # -- geometry ---------------------------------------------------------------------------------------

    def range_rects(self, start: int, end: int) -> list[QRectF]:
        """Viewport rectangles covering positions ``start..end`` of the text (one per line)."""
        return self._document_rects(self.to_document(start, after=True), self.to_document(end))

    def _document_rects(self, start: int, end: int) -> list[QRectF]:
        """Viewport rectangles covering document positions ``start..end`` (one per line)."""
        rects: list[QRectF] = []
        doc = self.document()
        offset = self.contentOffset()
        block = doc.findBlock(start)
        height = self.viewport().height()
        while block.isValid() and block.position() < end:
            top = self.blockBoundingGeometry(block).translated(offset).top()
            if top > height:
                break
            layout = block.layout()
            base = block.position()
            # From the line holding ``start``: all lines of a long paragraph (a pasted megabyte on one line)
            # were visited once per outlined token at each repaint.
            first_line = layout.lineForTextPosition(max(start - base, 0))
            for i in range(first_line.lineNumber() if first_line.isValid() else 0, layout.lineCount()):
                line = layout.lineAt(i)
                if line.textStart() >= end - base:
                    break
                a = max(start - base, line.textStart())
                b = min(end - base, line.textStart() + line.textLength())
                if b <= a:
                    continue
                x1 = _line_x(line, a)
                x2 = _line_x(line, b)
                rects.append(QRectF(x1 + offset.x(), top + line.y(), x2 - x1, line.height()))
            block = block.next()
        return rects

    def _visible_range(self) -> tuple[int, int]:
        """Positions of the text from the first line in view to the end of the last one."""
        first, last = self._visible_document_range()
        return self.to_text(first), self.to_text(last)

    def _visible_document_range(self) -> tuple[int, int]:
        """Document positions from the first line in view to the end of the last one.

        Lines, not whole blocks: a paragraph of a pasted megabyte with no line break is one block, and the
        overlay visited each of its units at every repaint.
        """
        block = self.firstVisibleBlock()
        if not block.isValid():
            return 0, 0
        offset = self.contentOffset()
        height = self.viewport().height()
        top = self.blockBoundingGeometry(block).translated(offset).top()
        first = block.position() + _line_start(block, -top)
        last = first
        while block.isValid():
            geometry = self.blockBoundingGeometry(block).translated(offset)
            if geometry.bottom() > height:
                last = block.position() + _line_end(block, height - geometry.top())
                break
            last = block.position() + block.length()
            block = block.next()
        return first, last

    def _line_end_box(self, block: QTextBlock) -> QRectF | None:
        layout = block.layout()
        if layout.lineCount() == 0:
            return None
        line = layout.lineAt(layout.lineCount() - 1)
        top = self.blockBoundingGeometry(block).translated(self.contentOffset()).top()
        x = _line_x(line, block.length() - 1) + self.contentOffset().x()
        width = self.fontMetrics().horizontalAdvance("↵") + 2
        return QRectF(x, top + line.y(), width, line.height())

    # -- painting ---------------------------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        """Draw the text, then outlines, line-end markers and the codes of control characters."""
        super().paintEvent(event)
        painter = QPainter(self.viewport())
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        try:
            if self.unit_starts:
                self._paint_overlay(painter)
            self._paint_controls(painter)
        finally:
            painter.end()

    def control_positions(self) -> list[int]:
        """Positions in the text of the control characters in view (drawn as their code, see the module)."""
        first, last = self._visible_document_range()
        found = []
        block = self.document().findBlock(first)
        while block.isValid() and block.position() < last:
            base = block.position()
            # Only the part in view: the paragraph of a long text with no line break is the whole text.
            found += [
                self.to_text(base + m.start())
                for m in _CONTROL.finditer(block.text(), max(first - base, 0), last - base)
            ]
            block = block.next()
        return found

    def _paint_controls(self, painter: QPainter) -> None:
        """Draw each control character in view as its code in a small box (``1B`` for ESC): the font has
        no glyph for them, and an empty box said nothing (the Tokens view writes ``<0x1B>``)."""
        positions = self.control_positions()
        if not positions:
            return
        font = self.font()
        font.setPointSizeF(max(font.pointSizeF() * 0.6, 5.0))
        painter.setFont(font)
        text = QColor(self._palette.text)
        document = self.document()
        for position in positions:
            code = f"{ord(document.characterAt(self.to_document(position, after=True))):02X}"
            for rect in self.range_rects(position, position + 1):
                width = max(rect.width(), QFontMetricsF(font).horizontalAdvance(code) + 2)
                box = QRectF(rect.left(), rect.top() + 1, width, rect.height() - 2)
                painter.fillRect(box, QColor(self.palette().color(QPalette.ColorRole.Base)))
                painter.setPen(QPen(text, 1))
                painter.drawRect(box.adjusted(0.5, 0.5, -0.5, -0.5))
                painter.drawText(box, int(Qt.AlignmentFlag.AlignCenter), code)

    def _paint_overlay(self, painter: QPainter) -> None:
        palette = self._palette
        first, last = self._visible_range()
        limit = (
            len(self.unit_starts)
            if self.valid_until is None
            else bisect_left(self.unit_ends, self.valid_until + 1)
        )
        lo = bisect_right(self.unit_ends, first)
        hi = min(bisect_left(self.unit_starts, last), limit)
        if self._show_whitespace:
            block = self.document().findBlock(self.to_document(first))
            doc_last = self.to_document(last)
            text_pen = QPen(QColor(palette.text))
            while block.isValid() and block.position() < doc_last:
                separator = block.position() + block.length() - 1
                if block.next().isValid() and not self._is_soft(separator):
                    unit = self.unit_at_position(self.to_text(separator))
                    box = self._line_end_box(block)
                    if unit >= 0 and box is not None:
                        painter.fillRect(box, QColor(self.unit_colour(unit)))
                        painter.setPen(text_pen)
                        painter.drawText(box, int(Qt.AlignmentFlag.AlignCenter), "↵")
                block = block.next()
        special_pen = QPen(QColor(palette.special_outline), 1.5)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        for unit in range(lo, hi):
            if self.unit_kinds[unit] == SPECIAL:
                painter.setPen(special_pen)
                for rect in self.range_rects(self.unit_starts[unit], self.unit_ends[unit]):
                    painter.drawRoundedRect(rect.adjusted(0.75, 0.75, -0.75, -0.75), 3, 3)
        painter.setPen(QPen(QColor(palette.current_outline), 2))
        for unit in self._current:
            if not 0 <= unit < limit:
                continue
            rects = self.range_rects(self.unit_starts[unit], self.unit_ends[unit])
            end = self.to_document(self.unit_ends[unit])  # after its last character: a line end maybe
            block = self.document().findBlock(end - 1)
            if (
                self._show_whitespace
                and end == block.position() + block.length()
                and block.next().isValid()
                and not self._is_soft(end - 1)
            ):
                box = self._line_end_box(block)
                if box is not None:
                    rects.append(box)
            for rect in rects:
                painter.drawRect(rect.adjusted(1, 1, -1, -1))

    # -- mouse ------------------------------------------------------------------------------------------

    def _is_soft(self, position: int) -> bool:
        """Whether a document position holds a soft break's separator."""
        i = bisect_left(self._soft, position)
        return i < len(self._soft) and self._soft[i] == position

    def position_at(self, point: QPoint | QPointF) -> int:
        """The position in the text of the character under a viewport point, or -1 (line ends included
        when whitespace is visible)."""
        p = QPointF(point)
        cursor = self.cursorForPosition(p.toPoint())
        doc = self.document()
        # The character after the nearest cursor position, or before it (two before: a surrogate pair).
        for candidate in (cursor.position(), cursor.position() - 1, cursor.position() - 2):
            if candidate < 0:
                continue
            block = doc.findBlock(candidate)
            if not block.isValid():
                continue
            separator = block.position() + block.length() - 1
            if candidate == separator:
                if self._show_whitespace and block.next().isValid() and not self._is_soft(candidate):
                    box = self._line_end_box(block)
                    if box is not None and box.contains(p):
                        return self.to_text(candidate)
                continue
            for rect in self._document_rects(candidate, candidate + 1):
                if rect.left() <= p.x() < rect.right() and rect.top() <= p.y() < rect.bottom():
                    return self.to_text(candidate)
        return -1

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt's name
        """Report the unit under the mouse."""
        super().mouseMoveEvent(event)
        position = self.position_at(event.position())
        unit = self.unit_at_position(position) if position >= 0 else -1
        if unit != self._hovered:
            self._hovered = unit
            self.unit_hovered.emit(unit)

    def viewportEvent(self, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        """Report that the mouse left."""
        if event.type() == QEvent.Type.Leave and self._hovered != -1:
            self._hovered = -1
            self.unit_hovered.emit(-1)
        return super().viewportEvent(event)

    # -- drag and drop --------------------------------------------------------------------------------

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 - Qt's name
        """Accept files (reported by ``files_dropped``) as well as text."""
        if dropped_paths(event.mimeData()):
            event.acceptProposedAction()
        else:
            super().dragEnterEvent(event)

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:  # noqa: N802 - Qt's name
        """Keep accepting files wherever they are over the view."""
        if dropped_paths(event.mimeData()):
            event.acceptProposedAction()
        else:
            super().dragMoveEvent(event)

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 - Qt's name
        """Report dropped files instead of inserting their names."""
        paths = dropped_paths(event.mimeData())
        if paths:
            event.acceptProposedAction()
            self.files_dropped.emit(paths)
        else:
            super().dropEvent(event)

    def unit_at_cursor(self) -> int:
        """The unit at the text cursor (the character after it, or before it at a unit's end)."""
        position = self.to_text(self.textCursor().position())
        unit = self.unit_at_position(position)
        if unit < 0 and position > 0:
            unit = self.unit_at_position(position - 1)
        return unit


__all__ = [
    "LABEL_BREAK",
    "LABEL_JOIN",
    "UNIT_PROPERTY",
    "TokenTextEdit",
    "UnitHighlighter",
    "is_dark",
    "with_label_breaks",
]
