"""The "Compare" tab: two tokenizers side by side on the same text.

Each side shows the text with its own token boundaries and counts; below, how many tokens the two share
(same characters) and the first merge where their merge lists differ.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt, QTimer, Signal, Slot
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
    QVBoxLayout,
    QWidget,
)

from ..engine import Tokenizer
from .tasks import TaskContext, TaskRunner
from .token_format import token_label
from .token_text import FileDropWidget, TokenTextEdit
from .tokenizer_info import Encoding, LoadedTokenizer, SpecialMode, encode_text

#: Milliseconds of quiet typing before both sides are encoded again.
COMPARE_DELAY_MS = 200

SIDES = ("a", "b")


@dataclass(frozen=True)
class MergeDifference:
    """How two merge lists compare.

    Attributes:
        shared: How many merges the two lists start with in common.
        first: Rank of the first merge where they differ (None when one list is a prefix of the other).
        a_merge, b_merge: The two merges at that rank (None past the end of a list).
        a_total, b_total: The lengths of the lists.
    """

    shared: int
    first: int | None
    a_merge: tuple[bytes, bytes] | None
    b_merge: tuple[bytes, bytes] | None
    a_total: int
    b_total: int

    def describe(self) -> str:
        """A sentence (rich text) saying how the lists compare."""

        def merge(pair: tuple[bytes, bytes] | None) -> str:
            if pair is None:
                return "nothing (its list has ended)"
            left, right = (token_label(t) for t in pair)
            return f"{_chip(left)} + {_chip(right)}"

        if self.first is not None:
            return (
                f"The merge lists agree on the first {self.shared:,} merges. First difference at rank "
                f"<b>{self.first:,}</b>: A merges {merge(self.a_merge)}, B merges {merge(self.b_merge)}."
            )
        if self.a_total == self.b_total:
            return f"The merge lists are identical ({self.a_total:,} merges)."
        longer, shorter = ("A", "B") if self.a_total > self.b_total else ("B", "A")
        extra = abs(self.a_total - self.b_total)
        return (
            f"{shorter}'s {self.shared:,} merges are the first {self.shared:,} of {longer}'s; {longer} has "
            f"{extra:,} more (first: {merge(self.a_merge if longer == 'A' else self.b_merge)})."
        )


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _chip(text: str) -> str:
    """A token in rich text: monospace on a light background."""
    return f"<code style='background-color: palette(alternate-base)'>&nbsp;{_escape(text)}&nbsp;</code>"


def compare_merges(a: Tokenizer, b: Tokenizer) -> MergeDifference:
    """Where two tokenizers' merge lists first differ.

    Example:
        >>> from bpe_studio.engine import Tokenizer
        >>> base = {i: bytes([i]) for i in range(256)}
        >>> one = Tokenizer(base | {256: b"ab"}, [(b"a", b"b")])
        >>> two = Tokenizer(base | {256: b"bc"}, [(b"b", b"c")])
        >>> compare_merges(one, two).first
        0
    """
    ma, mb = a.merges, b.merges
    shared = 0
    for left, right in zip(ma, mb, strict=False):
        if left != right:
            break
        shared += 1
    first: int | None = shared if shared < min(len(ma), len(mb)) else None
    return MergeDifference(
        shared=shared,
        first=first,
        a_merge=ma[shared] if shared < len(ma) else None,
        b_merge=mb[shared] if shared < len(mb) else None,
        a_total=len(ma),
        b_total=len(mb),
    )


def shared_tokens(first: Encoding, second: Encoding) -> int:
    """How many tokens of ``first`` cover exactly the same characters as a token of ``second``."""
    spans = {(s.start, s.end) for s in second.spans if not s.partial}
    return sum(1 for s in first.spans if not s.partial and (s.start, s.end) in spans)


class _Side:
    """The widgets of one side of the comparison."""

    def __init__(self, name: str, parent: QWidget) -> None:
        self.box = QGroupBox(f"Tokenizer {name.upper()}", parent)
        layout = QGridLayout(self.box)
        self.combo = QComboBox(self.box)
        self.combo.setToolTip("A tokenizer opened in this session")
        self.combo.setMinimumContentsLength(20)
        self.open_button = QPushButton("Open…", self.box)
        self.open_button.setToolTip(f"Open a tokenizer file as {name.upper()}")
        self.summary = QLabel(self.box)
        self.summary.setObjectName("caption")
        self.view = TokenTextEdit(self.box, read_only=True)
        self.view.setObjectName(f"compare_{name}")
        self.stats = QLabel(self.box)
        self.stats.setObjectName("stats")
        layout.addWidget(self.combo, 0, 0)
        layout.addWidget(self.open_button, 0, 1)
        layout.addWidget(self.summary, 1, 0, 1, 2)
        layout.addWidget(self.view, 2, 0, 1, 2)
        layout.addWidget(self.stats, 3, 0, 1, 2)
        layout.setColumnStretch(0, 1)
        self.encoding: Encoding | None = None


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
        self.runner = TaskRunner("bpe-studio-compare", self)
        self.runner.finished.connect(self._on_runner_finished)
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(COMPARE_DELAY_MS)
        self.timer.timeout.connect(self._on_timer_timeout)
        self._build()
        self._refresh_combos()

    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.setChildrenCollapsible(False)
        layout.addWidget(splitter)

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

    def choose(self, side: str, loaded: LoadedTokenizer) -> None:
        """Show a tokenizer on side ``"a"`` or ``"b"`` (added to the choices if new)."""
        if loaded not in self.tokenizers:
            self.tokenizers.append(loaded)
            self._refresh_combos()
        combo = self.sides[side].combo
        combo.setCurrentIndex(self.tokenizers.index(loaded))

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
        return self.timer.isActive() or self.runner.is_busy()

    def shutdown(self) -> None:
        """Stop the timer and the worker thread."""
        self.timer.stop()
        self.runner.shutdown()

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
            for loaded in self.tokenizers:
                combo.addItem(loaded.name, None)
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

        def task(ctx: TaskContext) -> tuple[str, dict[str, Encoding | None]]:
            encodings: dict[str, Encoding | None] = {}
            for name, loaded in chosen.items():
                encodings[name] = (
                    None
                    if loaded is None
                    else encode_text(loaded.tokenizer, text, SpecialMode.RECOGNISED, check=ctx.check)
                )
            return text, encodings

        self.runner.start(task)

    @Slot(object)
    def _on_runner_finished(self, found: tuple[str, dict[str, Encoding | None]]) -> None:
        text, encodings = found
        if text != self.text() or self.timer.isActive():
            return
        for name in SIDES:
            side = self.sides[name]
            encoding = encodings[name]
            loaded = self.chosen(name)
            side.encoding = encoding
            side.summary.setText(loaded.summary() if loaded is not None else "Open a tokenizer.")
            if encoding is None:
                side.view.set_text_and_units(text, [], [], [])
                side.stats.setText("")
                continue
            colours = len(side.view.token_palette.backgrounds)
            side.view.set_text_and_units(
                text,
                encoding.unit_start,
                encoding.unit_end,
                encoding.unit_kind,
                encoding.unit_colours(colours),
            )
            n = len(encoding.spans)
            ratio = f" · {len(text) / n:.2f} characters per token" if n else ""
            side.stats.setText(f"<b>{n:,}</b> token{'s' if n != 1 else ''}{ratio}")
        self._describe(encodings)
        self.compared.emit()

    def _describe(self, encodings: dict[str, Encoding | None]) -> None:
        a, b = encodings["a"], encodings["b"]
        ta, tb = self.chosen("a"), self.chosen("b")
        if a is None or b is None or ta is None or tb is None:
            self.difference = None
            self.counts_label.setText("Open two tokenizers (Tokenizer ▸ Open tokenizer…) to compare them.")
            self.merges_label.setText("")
            return
        na, nb = len(a.spans), len(b.spans)
        if na == nb:
            counts = f"Both use <b>{na:,}</b> tokens."
        else:
            fewer, more = ("A", "B") if na < nb else ("B", "A")
            change = abs(na - nb) / max(na, nb)
            counts = f"{fewer} uses <b>{abs(na - nb):,} fewer</b> tokens than {more} ({change:.1%} fewer)."
        same = shared_tokens(a, b)
        counts += f" {same:,} of A's {na:,} tokens cover the same characters as one of B's."
        self.counts_label.setText(counts)
        self.difference = compare_merges(ta.tokenizer, tb.tokenizer)
        text = self.difference.describe()
        if ta is tb:
            text = "A and B are the same tokenizer. " + text
        if ta.tokenizer.pattern != tb.tokenizer.pattern:
            text += " Their pre-tokenization patterns differ too."
        self.merges_label.setText(text)


__all__ = ["CompareView", "MergeDifference", "compare_merges", "shared_tokens"]
