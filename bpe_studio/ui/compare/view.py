"""The "Compare" tab: two tokenizers side by side on the same text.

Each side shows the text with its own token boundaries and counts; below, how many tokens the two share
(same bytes of the text) and the first merge where their merge lists differ. The figures are the engine's
(:mod:`bpe_studio.engine.encoding.analysis`), which ``bpe-studio compare`` prints too.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence

import numpy as np
from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ...engine.encoding.analysis import (
    Comparison,
    CutDifference,
    MergeDifference,
    compare_encoded,
    compression,
    cut_difference,
)
from ..app.style import theme_of
from ..app.tasks import TaskContext, TaskRunner
from ..present.token_format import token_label
from ..present.token_layout import SPECIAL, Encoding, SpecialMode, encode_text
from ..present.tokenizer_info import LoadedTokenizer, listed_names
from ..widgets.common import delay_timer
from ..widgets.file_drop import FileDropWidget
from ..widgets.token_text import LABEL_BREAK, LABEL_JOIN, TokenTextEdit, label_break_points
from .corpus import CorpusCompareView

#: Milliseconds of quiet typing before both sides are encoded again.
COMPARE_DELAY_MS = 200

SIDES = ("a", "b")


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _chip(token: bytes) -> str:
    """A token in rich text: monospace on a light background."""
    label = _escape(token_label(token))
    return f"<code style='background-color: palette(alternate-base)'>&nbsp;{label}&nbsp;</code>"


def _bold(text: str) -> str:
    return f"<b>{text}</b>"


def utf16_ranges(text: str, byte_spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Byte ranges of ``text``'s UTF-8 as UTF-16 positions in the text, widened to whole characters.

    Example:
        >>> utf16_ranges("a🙃é", [(1, 3), (5, 7)])  # part of 🙃 (4 bytes, 2 UTF-16 units), then é
        [(1, 3), (3, 4)]
    """
    if not byte_spans:
        return []
    points = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    sizes = 1 + (points >= 0x80) + (points >= 0x800) + (points >= 0x10000)
    byte_ends = np.cumsum(sizes)
    utf16 = np.concatenate(([0], np.cumsum(1 + (points >= 0x10000))))
    starts = np.array([start for start, _ in byte_spans])
    ends = np.array([end for _, end in byte_spans])
    first = np.searchsorted(byte_ends, starts, side="right")  # the character holding the first byte
    last = np.searchsorted(byte_ends, ends, side="left")  # the character holding the last byte
    return list(zip(utf16[first].tolist(), utf16[last + 1].tolist(), strict=True))


def join_specials(
    text: str, starts: Sequence[int], ends: Sequence[int], kinds: Sequence[int]
) -> tuple[str, list[int], list[int], list[int]]:
    """Keep each special token on one line (issue 21: ``<|endoftext|>`` wrapped after its ``|``, its outline
    split in two): a word joiner (:data:`~bpe_studio.ui.widgets.token_text.LABEL_JOIN`) wherever a line
    could wrap inside it, and a zero-width space (:data:`~bpe_studio.ui.widgets.token_text.LABEL_BREAK`)
    before and after it, so that a line too long for the view wraps there rather than anywhere.

    Returns the text shown, the units' positions in it, and the positions of the text before which a mark
    went in (for :func:`shift_positions`).

    Example:
        >>> shown, starts, ends, marks = join_specials("a<|eot|>b", [0, 1, 8], [1, 8, 9], [0, SPECIAL, 0])
        >>> shown == "a" + LABEL_BREAK + "<|" + LABEL_JOIN + "eot|" + LABEL_JOIN + ">" + LABEL_BREAK + "b"
        True
        >>> starts, ends, marks
        ([0, 2, 12], [1, 11, 13], [1, 3, 7, 8])
    """
    data = text.encode("utf-16-le", "surrogatepass")  # once: one pass over the text, however many tokens
    length = len(data) // 2
    found: set[int] = set()
    edges: set[int] = set()
    for start, end, kind in zip(starts, ends, kinds, strict=True):
        if kind == SPECIAL:
            label = data[2 * start : 2 * end].decode("utf-16-le", "surrogatepass")
            found.update(start + point for point in label_break_points(label))
            edges.update(point for point in (start, end) if 0 < point < length)
    if not found and not edges:
        return text, list(starts), list(ends), []
    marks = sorted(found | edges)
    parts, done = [], 0
    for point in marks:
        mark = LABEL_BREAK if point in edges else LABEL_JOIN
        parts += [data[2 * done : 2 * point], mark.encode("utf-16-le")]
        done = point
    parts.append(data[2 * done :])
    shown = b"".join(parts).decode("utf-16-le", "surrogatepass")
    return shown, shift_positions(starts, marks), shift_positions(ends, marks, ends=True), marks


def shift_positions(positions: Sequence[int], marks: Sequence[int], *, ends: bool = False) -> list[int]:
    """Positions of the text in the text shown, past the marks put in before them (:func:`join_specials`):
    a mark at ``p`` goes before the text's character ``p``, so a range that ends at ``p`` (``ends``) ends
    before it, and one that starts at ``p`` starts after it.

    Example:
        >>> shift_positions([0, 3, 4, 8], [3, 7]), shift_positions([3, 8], [3, 7], ends=True)
        ([0, 4, 5, 10], [3, 10])
    """
    if not marks:
        return list(positions)
    side = bisect_left if ends else bisect_right
    return [p + side(marks, p) for p in positions]


class _SideTextEdit(TokenTextEdit):
    """A side's text: its tokens' colours, and a dashed outline around each span the other side cuts
    differently (:func:`bpe_studio.engine.encoding.analysis.cut_difference`)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, read_only=True)
        #: The outlined spans, in UTF-16 positions of the text, in order.
        self.difference_ranges: list[tuple[int, int]] = []
        #: The positions of the text before which a word joiner or a zero-width space went in
        #: (:func:`join_specials`).
        self.marks: list[int] = []
        self._shown_ranges: list[tuple[int, int]] = []  # difference_ranges in the document's positions

    def set_text_and_tokens(self, text: str, encoding: Encoding | None) -> None:
        """Show the text cut into the encoding's units (None: plain), a special token never wrapped across
        two lines (the document holds word joiners inside it; :meth:`plain_text` and copying do not)."""
        if encoding is None:
            self.marks = []
            self.set_text_and_units(text, [], [], [])
        else:
            shown, starts, ends, self.marks = join_specials(
                text, encoding.unit_start, encoding.unit_end, encoding.unit_kind
            )
            colours = encoding.unit_colours(len(self.token_palette.backgrounds))
            self.set_text_and_units(shown, starts, ends, encoding.unit_kind, colours)
        self._label_breaks = bool(self.marks)  # plain_text() and copying leave the marks out
        self.set_difference_ranges([])

    def set_difference_ranges(self, ranges: list[tuple[int, int]]) -> None:
        """Outline these spans (UTF-16 positions of the text; empty: none)."""
        self.difference_ranges = ranges
        starts = shift_positions([start for start, _ in ranges], self.marks)
        ends = shift_positions([end for _, end in ranges], self.marks, ends=True)
        self._shown_ranges = list(zip(starts, ends, strict=True))
        self.viewport().update()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        """Draw the text and its tokens, then the outlines of the spans cut differently."""
        super().paintEvent(event)
        if not self._shown_ranges:
            return
        first, last = self._visible_range()
        lo = bisect_right([end for _, end in self._shown_ranges], first)
        painter = QPainter(self.viewport())
        try:
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            painter.setPen(QPen(QColor(theme_of(self).difference), 2, Qt.PenStyle.DashLine))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            for start, end in self._shown_ranges[lo:]:
                if start >= last:
                    break
                for rect in self.range_rects(start, end):
                    painter.drawRoundedRect(rect.adjusted(1, 1, -1, -1), 3, 3)
        finally:
            painter.end()


def describe_merges(difference: MergeDifference) -> str:
    """The engine's sentence on how two merge lists compare, as rich text (tokens as chips)."""
    return difference.describe(token=_chip, strong=_bold)


class _Side:
    """The widgets of one side of the comparison."""

    def __init__(self, name: str, parent: QWidget) -> None:
        self.box = QGroupBox(f"Tokenizer {name.upper()}", parent)
        layout = QGridLayout(self.box)
        self.combo = QComboBox(self.box)
        self.combo.setToolTip("A tokenizer opened in this session")
        self.combo.setMinimumContentsLength(20)
        # A long name is elided rather than widening the window past the screen (issue 21).
        self.combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.open_button = QPushButton("Open…", self.box)
        self.open_button.setToolTip(f"Open a tokenizer file as {name.upper()}")
        self.summary = QLabel(self.box)
        self.summary.setObjectName("caption")
        self.summary.setWordWrap(True)  # its lines wrap in a narrow window instead of widening it
        self.view = _SideTextEdit(self.box)
        self.view.setObjectName(f"compare_{name}")
        self.stats = QLabel(self.box)
        self.stats.setObjectName("stats")
        self.stats.setWordWrap(True)
        layout.addWidget(self.combo, 0, 0)
        layout.addWidget(self.open_button, 0, 1)
        layout.addWidget(self.summary, 1, 0, 1, 2)
        layout.addWidget(self.view, 2, 0, 1, 2)
        layout.addWidget(self.stats, 3, 0, 1, 2)
        layout.setColumnStretch(0, 1)
        self.encoding: Encoding | None = None
        #: The spans this side cuts unlike the other (bytes of the text's UTF-8), and its tokens there.
        self.difference_spans: tuple[tuple[int, int], ...] = ()
        self.difference_tokens = 0


class CompareView(FileDropWidget):
    """The compare tab.

    Signals:
        compared(): Both sides were encoded and shown.
        open_requested(str): The user asked to open a file for side ``"a"`` or ``"b"``.
        files_dropped(list): Tokenizer files were dropped on the tab (opened as B).
    """

    compared = Signal()
    open_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("compare")
        self.tokenizers: list[LoadedTokenizer] = []
        self.difference: MergeDifference | None = None
        self.comparison: Comparison | None = None
        self.runner = TaskRunner("bpe-studio-compare", self)
        self.runner.finished.connect(self._on_runner_finished)
        self.timer = delay_timer(self, COMPARE_DELAY_MS, self._on_timer_timeout)
        self._build()
        self._refresh_combos()

    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        # Two modes: the text (below) and the corpus mode (figures per corpus file, as `bpe-studio eval`).
        self.modes = QTabWidget(self)
        self.modes.setObjectName("compare_modes")
        layout.addWidget(self.modes)
        splitter = QSplitter(Qt.Orientation.Vertical, self.modes)
        splitter.setChildrenCollapsible(False)
        self.modes.addTab(splitter, "Text")
        self.corpus_view = CorpusCompareView(self.modes)
        self.modes.addTab(self.corpus_view, "Corpus")

        text_box = QGroupBox("Text", splitter)
        text_layout = QVBoxLayout(text_box)
        options = QHBoxLayout()
        options.addWidget(
            QLabel("Both tokenizers encode this text; special tokens are recognised.", text_box)
        )
        options.addStretch(1)
        self.whitespace_check = QCheckBox("Show whitespace", text_box)
        self.whitespace_check.setToolTip("Draw spaces as ·, tabs as → and line ends inside tokens as ↵")
        self.whitespace_check.setChecked(True)
        self.whitespace_check.toggled.connect(self._on_whitespace_check_toggled)
        options.addWidget(self.whitespace_check)
        text_layout.addLayout(options)
        self.text_edit = TokenTextEdit(text_box)
        self.text_edit.setObjectName("compare_text")
        self.text_edit.setPlaceholderText("Text to encode with both tokenizers")
        self.text_edit.text_edited.connect(self._on_text_edit_changed)
        self.text_edit.files_dropped.connect(self.files_dropped)
        text_layout.addWidget(self.text_edit)

        sides = QWidget(splitter)
        sides_layout = QGridLayout(sides)
        sides_layout.setContentsMargins(0, 0, 0, 0)
        self.sides = {name: _Side(name, sides) for name in SIDES}
        for column, name in enumerate(SIDES):
            side = self.sides[name]
            sides_layout.addWidget(side.box, 0, column)
            side.combo.currentIndexChanged.connect(self._on_side_combo_changed)
            side.open_button.clicked.connect(lambda _checked=False, n=name: self.open_requested.emit(n))
            side.view.files_dropped.connect(self.files_dropped)
        self.result_frame = QFrame(sides)
        self.result_frame.setObjectName("status")
        result_layout = QVBoxLayout(self.result_frame)
        result_layout.setContentsMargins(8, 6, 8, 6)
        self.counts_label = QLabel(self.result_frame)
        self.counts_label.setWordWrap(True)
        self.merges_label = QLabel(self.result_frame)
        self.merges_label.setObjectName("merges_difference")
        self.merges_label.setWordWrap(True)
        self.merges_label.setTextFormat(Qt.TextFormat.RichText)
        self.merges_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        result_layout.addWidget(self.counts_label)
        result_layout.addWidget(self.merges_label)
        sides_layout.addWidget(self.result_frame, 1, 0, 1, 2)
        splitter.addWidget(text_box)
        splitter.addWidget(sides)
        self._on_whitespace_check_toggled(True)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 4)
        splitter.setSizes([150, 600])

    # -- public -------------------------------------------------------------------------------------

    def set_tokenizers(self, tokenizers: list[LoadedTokenizer]) -> None:
        """The tokenizers to choose from (those opened in this session); the choices are kept if possible."""
        self.tokenizers = list(tokenizers)
        self._refresh_combos()
        self._refresh_corpus_tokenizers()

    def choose(self, side: str, loaded: LoadedTokenizer) -> None:
        """Show a tokenizer on side ``"a"`` or ``"b"`` (added to the choices if new)."""
        if loaded not in self.tokenizers:
            self.tokenizers.append(loaded)
            self._refresh_combos()
        combo = self.sides[side].combo
        combo.setCurrentIndex(self.tokenizers.index(loaded))
        self._refresh_corpus_tokenizers()

    def chosen(self, side: str) -> LoadedTokenizer | None:
        """The tokenizer on a side."""
        index = self.sides[side].combo.currentIndex()
        return self.tokenizers[index] if 0 <= index < len(self.tokenizers) else None

    def text(self) -> str:
        """The text compared."""
        return self.text_edit.plain_text()

    def set_text(self, text: str) -> None:
        """Replace the text (both sides are encoded again)."""
        self.text_edit.setPlainText(text)

    def is_busy(self) -> bool:
        """Whether an encoding is waiting or running."""
        return self.timer.isActive() or self.runner.is_busy() or self.corpus_view.is_busy()

    def shutdown(self) -> None:
        """Stop the timer and the worker threads."""
        self.timer.stop()
        self.runner.shutdown()
        self.corpus_view.shutdown()

    def _refresh_corpus_tokenizers(self) -> None:
        # The corpus mode lists the same tokenizers, A first; A and B get checked.
        chosen = [t for t in (self.chosen("a"), self.chosen("b")) if t is not None]
        ordered = list(dict.fromkeys(chosen + self.tokenizers))
        self.corpus_view.set_tokenizers(ordered, chosen)

    @Slot(bool)
    def _on_whitespace_check_toggled(self, checked: bool) -> None:
        for side in self.sides.values():
            side.view.set_whitespace_visible(checked)

    # -- encoding -----------------------------------------------------------------------------------

    def _refresh_combos(self) -> None:
        for position, name in enumerate(SIDES):
            combo = self.sides[name].combo
            previous = self.chosen(name) if combo.count() else None
            combo.blockSignals(True)
            combo.clear()
            for loaded, shown in zip(self.tokenizers, listed_names(self.tokenizers), strict=True):
                combo.addItem(shown, None)
                combo.setItemData(combo.count() - 1, loaded.source_text, Qt.ItemDataRole.ToolTipRole)
            if previous in self.tokenizers:
                combo.setCurrentIndex(self.tokenizers.index(previous))
            elif self.tokenizers:
                # By default A is the first tokenizer and B the latest other one.
                combo.setCurrentIndex(0 if position == 0 else len(self.tokenizers) - 1)
            combo.blockSignals(False)
        self.timer.start(0)

    @Slot(int)
    def _on_side_combo_changed(self, _index: int) -> None:
        self.timer.start(0)

    @Slot()
    def _on_text_edit_changed(self) -> None:
        self.timer.start()

    @Slot()
    def _on_timer_timeout(self) -> None:
        text = self.text()
        chosen = {name: self.chosen(name) for name in SIDES}

        def task(ctx: TaskContext) -> tuple[str, dict[str, Encoding | None], CutDifference | None]:
            encodings: dict[str, Encoding | None] = {}
            for name, loaded in chosen.items():
                encodings[name] = (
                    None
                    if loaded is None
                    else encode_text(loaded.tokenizer, text, SpecialMode.RECOGNISED, check=ctx.check)
                )
            a, b, ta, tb = encodings["a"], encodings["b"], chosen["a"], chosen["b"]
            cuts = None
            if a is not None and b is not None and ta is not None and tb is not None:
                a_ids, b_ids = [s.id for s in a.spans], [s.id for s in b.spans]
                cuts = cut_difference(ta.tokenizer, a_ids, tb.tokenizer, b_ids)
            return text, encodings, cuts

        self.runner.start(task)

    @Slot(object)
    def _on_runner_finished(
        self, found: tuple[str, dict[str, Encoding | None], CutDifference | None]
    ) -> None:
        text, encodings, cuts = found
        if text != self.text() or self.timer.isActive():
            return
        for name in SIDES:
            side = self.sides[name]
            encoding = encodings[name]
            loaded = self.chosen(name)
            side.encoding = encoding
            side.difference_spans = cuts.spans if cuts is not None else ()
            side.difference_tokens = (cuts.a_tokens if name == "a" else cuts.b_tokens) if cuts else 0
            side.summary.setText(loaded.summary() if loaded is not None else "Open a tokenizer.")
            side.view.set_text_and_tokens(text, encoding)
            if encoding is None:
                side.stats.setText("")
                continue
            n = len(encoding.spans)
            per_token = compression(text, n).chars_per_token
            ratio = f" · {per_token:.2f} characters per token" if per_token is not None else ""
            side.view.set_difference_ranges(utf16_ranges(text, side.difference_spans))
            note = self._cut_note(name, cuts)
            side.stats.setText(f"<b>{n:,}</b> token{'s' if n != 1 else ''}{ratio}{note}")
        self._describe(encodings)
        self.compared.emit()

    @staticmethod
    def _cut_note(name: str, cuts: CutDifference | None) -> str:
        """What a side's stats add about the spans the other side cuts differently."""
        if cuts is None:
            return ""
        other = "B" if name == "a" else "A"
        if not cuts.spans:
            return f" · cut like {other} everywhere"
        tokens = cuts.a_tokens if name == "a" else cuts.b_tokens
        spans = len(cuts.spans)
        return (
            f" · <b>{tokens:,}</b> token{'s' if tokens != 1 else ''} in {spans:,} "
            f"span{'s' if spans != 1 else ''} that {other} cuts differently (outlined)"
        )

    def _describe(self, encodings: dict[str, Encoding | None]) -> None:
        a, b = encodings["a"], encodings["b"]
        ta, tb = self.chosen("a"), self.chosen("b")
        if a is None or b is None or ta is None or tb is None:
            self.difference = None
            self.comparison = None
            self.counts_label.setText("Open two tokenizers (Tokenizer ▸ Open tokenizer…) to compare them.")
            self.merges_label.setText("")
            return
        found = compare_encoded(
            ta.tokenizer, [s.id for s in a.spans], tb.tokenizer, [s.id for s in b.spans], a.text
        )
        self.comparison = found
        self.difference = found.merges
        self.counts_label.setText(found.describe_counts(strong=_bold))
        text = describe_merges(found.merges)
        if ta is tb:
            text = "A and B are the same tokenizer. " + text
        if not found.same_pattern:
            text += " Their pre-tokenization patterns differ too."
        self.merges_label.setText(text)


__all__ = ["CompareView", "describe_merges", "join_specials", "shift_positions", "utf16_ranges"]
