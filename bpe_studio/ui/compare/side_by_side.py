"""The "Side by side" tab: any number of tokenizers on one text, one row each.

Each row shows the text with that tokenizer's token boundaries, its token count, bytes and characters per
token, and outlines the spans it cuts differently from the reference row (the first one, or the one chosen
in "Outline against"), with :func:`bpe_studio.engine.encoding.analysis.cut_difference`. "+ Add" offers the
tokenizers opened in this session, a file, GPT-2 and the Hugging Face cache; a row's × drops it. All rows
are encoded together on a worker thread (the newest text wins), so a long text never freezes the window.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMenu,
    QScrollArea,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ...engine.encoding.analysis import compression, cut_difference
from ..app.tasks import TaskContext, TaskRunner
from ..present.token_layout import Encoding, SpecialMode, encode_text
from ..present.tokenizer_info import LoadedTokenizer, listed_names
from ..widgets.common import delay_timer
from ..widgets.file_drop import FileDropWidget
from ..widgets.token_text import TokenTextEdit
from .view import _SideTextEdit, utf16_ranges

#: Milliseconds of quiet typing before every row is encoded again.
SIDE_DELAY_MS = 200
#: A row's text view: this many lines high (it scrolls for more).
ROW_LINES = 5


@dataclass(frozen=True)
class RowFigures:
    """One row's encoding and how it differs from the reference row.

    Attributes:
        encoding: The text in this row's tokens.
        spans: Byte ranges this row cuts differently from the reference (empty for the reference itself).
        tokens_inside: This row's tokens inside those ranges.
    """

    encoding: Encoding
    spans: tuple[tuple[int, int], ...] = ()
    tokens_inside: int = 0


def row_stats(text: str, figures: RowFigures, *, reference: str | None) -> str:
    """A row's figures as rich text: tokens, bytes and characters per token, and the outlined spans.

    Example:
        >>> from bpe_studio.ui.present.token_layout import Encoding
        >>> row_stats("abcd", RowFigures(Encoding("abcd", None)), reference=None)
        '<b>0</b> tokens · 4 bytes · 4 characters'
    """
    n = len(figures.encoding.spans)
    found = compression(text, n)
    parts = [f"<b>{n:,}</b> token{'s' if n != 1 else ''}"]
    if n:
        parts.append(f"<b>{found.bytes / n:.2f}</b> bytes per token")
        if found.chars_per_token is not None:
            parts.append(f"{found.chars_per_token:.2f} characters per token")
    else:
        parts.append(f"{found.bytes:,} bytes · {found.characters:,} characters")
    if reference is not None:
        spans = len(figures.spans)
        if not spans:
            parts.append(f"cut like {reference} everywhere")
        else:
            parts.append(
                f"{figures.tokens_inside:,} token{'s' if figures.tokens_inside != 1 else ''} in {spans:,} "
                f"span{'s' if spans != 1 else ''} cut differently from {reference} (outlined)"
            )
    return " · ".join(parts)


class _Row(QFrame):
    """One tokenizer's row: its name, figures, a × to drop it and the text in its tokens."""

    def __init__(self, loaded: LoadedTokenizer, parent: QWidget) -> None:
        super().__init__(parent)
        self.loaded = loaded
        self.setObjectName("status")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 6)
        layout.setSpacing(2)
        head = QHBoxLayout()
        head.setSpacing(12)
        self.name_label = QLabel(self)
        self.name_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.name_label.setToolTip(f"{loaded.source_text}\n{loaded.summary()}")
        self.stats_label = QLabel(self)
        self.stats_label.setObjectName("caption")
        self.stats_label.setWordWrap(True)
        self.drop_button = QToolButton(self)
        self.drop_button.setText("×")
        self.drop_button.setAutoRaise(True)
        head.addWidget(self.name_label)
        head.addWidget(self.stats_label, 1)
        head.addWidget(self.drop_button)
        layout.addLayout(head)
        self.view = _SideTextEdit(self)
        self.view.setObjectName("side_by_side_row_text")
        height = self.view.fontMetrics().lineSpacing() * ROW_LINES + 12
        self.view.setFixedHeight(height)
        self.view.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        layout.addWidget(self.view)

    def set_name(self, name: str, *, reference: bool) -> None:
        self.name_label.setText(f"<b>{name}</b>" + (" (reference)" if reference else ""))
        self.drop_button.setToolTip(f"Drop {name} from the side-by-side view")
        self.drop_button.setAccessibleName(f"Drop {name}")


class SideBySideView(FileDropWidget):
    """The side-by-side tab.

    Signals:
        compared(): Every row was encoded and shown.
        rows_changed(): A row was added or dropped.
        open_file_requested(): "+ Add ▸ Open file…" was chosen (the tokenizer views ask for the file).
        open_gpt2_requested(): "+ Add ▸ GPT-2".
        open_hub_requested(): "+ Add ▸ From Hugging Face…".
        files_dropped(list): Tokenizer files were dropped on the tab (each opened as a row).
    """

    compared = Signal()
    rows_changed = Signal()
    open_file_requested = Signal()
    open_gpt2_requested = Signal()
    open_hub_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("side_by_side")
        #: The tokenizers opened in this session, offered by "+ Add".
        self.available: list[LoadedTokenizer] = []
        self.rows: list[_Row] = []
        self.figures: list[RowFigures] = []
        self.runner = TaskRunner("bpe-studio-side-by-side", self)
        self.runner.finished.connect(self._on_runner_finished)
        self.timer = delay_timer(self, SIDE_DELAY_MS, self._on_timer_timeout)
        self._build()
        self._refresh()

    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        top = QHBoxLayout()
        intro = QLabel("Every tokenizer below encodes this text; special tokens are recognised.", self)
        intro.setWordWrap(True)  # the tab stays narrow enough for a small window
        top.addWidget(intro, 1)
        top.addWidget(QLabel("Outline against:", self))
        self.reference_combo = QComboBox(self)
        self.reference_combo.setToolTip("The row whose cuts the others are compared with")
        self.reference_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.reference_combo.currentIndexChanged.connect(self._on_reference_combo_changed)
        top.addWidget(self.reference_combo)
        self.whitespace_check = QCheckBox("Show whitespace", self)
        self.whitespace_check.setChecked(True)
        self.whitespace_check.toggled.connect(self._on_whitespace_check_toggled)
        top.addWidget(self.whitespace_check)
        self.add_button = QToolButton(self)
        self.add_button.setText("+ Add…")
        self.add_button.setToolTip(
            "Add a tokenizer as a row: one opened before, a file (Ctrl+Shift+A), GPT-2 or from Hugging Face"
        )
        self.add_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.add_menu = QMenu(self.add_button)
        self.add_menu.aboutToShow.connect(self._fill_add_menu)
        self.add_button.setMenu(self.add_menu)
        top.addWidget(self.add_button)
        layout.addLayout(top)

        self.text_edit = TokenTextEdit(self)
        self.text_edit.setObjectName("side_by_side_text")
        self.text_edit.setPlaceholderText("Text to encode with every tokenizer")
        self.text_edit.setMaximumHeight(self.text_edit.fontMetrics().lineSpacing() * 5 + 12)
        self.text_edit.text_edited.connect(self._on_text_edit_edited)
        self.text_edit.files_dropped.connect(self.files_dropped)
        layout.addWidget(self.text_edit)

        self.empty_label = QLabel(
            "Add tokenizers with “+ Add…” (or open them with the Tokenizer menu): each becomes a row.", self
        )
        self.empty_label.setObjectName("caption")
        layout.addWidget(self.empty_label)
        self.rows_area = QScrollArea(self)
        self.rows_area.setWidgetResizable(True)
        self.rows_area.setFrameShape(QFrame.Shape.NoFrame)
        inner = QWidget(self.rows_area)
        self.rows_layout = QVBoxLayout(inner)
        self.rows_layout.setContentsMargins(0, 0, 0, 0)
        self.rows_layout.addStretch(1)
        self.rows_area.setWidget(inner)
        layout.addWidget(self.rows_area, 1)

    # ==============================================================================================
    # Public API
    # ==============================================================================================

    def tokenizers(self) -> list[LoadedTokenizer]:
        """The rows' tokenizers, top to bottom."""
        return [row.loaded for row in self.rows]

    def add_tokenizer(self, loaded: LoadedTokenizer) -> None:
        """Add a row (a tokenizer of the same file or training run replaces its row in place)."""
        for row in self.rows:
            if _same_source(row.loaded, loaded):
                index = self.rows.index(row)
                self._drop_row(row)
                self._insert_row(index, loaded)
                break
        else:
            self._insert_row(len(self.rows), loaded)
        self._refresh()

    def remove_tokenizer(self, loaded: LoadedTokenizer) -> None:
        """Drop a tokenizer's row."""
        for row in self.rows:
            if row.loaded is loaded:
                self._drop_row(row)
                self._refresh()
                return

    def set_available(self, tokenizers: list[LoadedTokenizer]) -> None:
        """The tokenizers "+ Add" offers (those opened in this session)."""
        self.available = list(tokenizers)

    def text(self) -> str:
        """The shared text."""
        return self.text_edit.plain_text()

    def set_text(self, text: str) -> None:
        """Replace the shared text (encoded right away)."""
        self.text_edit.setPlainText(text)
        self.timer.start(0)

    def reference_index(self) -> int:
        """The row the others are outlined against (0 when there are rows, -1 otherwise)."""
        index = self.reference_combo.currentIndex()
        return index if 0 <= index < len(self.rows) else (0 if self.rows else -1)

    def set_reference_index(self, index: int) -> None:
        """Outline the other rows against this one."""
        self.reference_combo.setCurrentIndex(index)

    def is_busy(self) -> bool:
        """Whether an encoding waits or runs."""
        return self.timer.isActive() or self.runner.is_busy()

    def shutdown(self) -> None:
        """Stop the timer and the worker thread (when the window closes)."""
        self.timer.stop()
        self.runner.shutdown()

    # ==============================================================================================
    # Rows
    # ==============================================================================================

    def _insert_row(self, index: int, loaded: LoadedTokenizer) -> None:
        row = _Row(loaded, self)
        row.drop_button.clicked.connect(lambda _checked=False, r=row: self._on_row_drop_clicked(r))
        row.view.files_dropped.connect(self.files_dropped)
        row.view.set_whitespace_visible(self.whitespace_check.isChecked())
        self.rows.insert(index, row)
        self.rows_layout.insertWidget(index, row)

    def _drop_row(self, row: _Row) -> None:
        self.rows.remove(row)
        self.rows_layout.removeWidget(row)
        row.hide()
        row.deleteLater()

    def _on_row_drop_clicked(self, row: _Row) -> None:
        if row in self.rows:
            self._drop_row(row)
            self._refresh()

    def _refresh(self) -> None:
        """Names, the reference combo and the empty message after rows changed; encode again."""
        names = listed_names(self.tokenizers())
        reference = self.reference_combo.currentText()
        blocked = self.reference_combo.blockSignals(True)
        self.reference_combo.clear()
        self.reference_combo.addItems(names)
        self.reference_combo.setCurrentIndex(names.index(reference) if reference in names else 0)
        self.reference_combo.blockSignals(blocked)
        self.reference_combo.setEnabled(len(names) > 1)
        self._name_rows()
        self.empty_label.setVisible(not self.rows)
        self.rows_changed.emit()
        self.timer.start(0)

    def _name_rows(self) -> None:
        names = listed_names(self.tokenizers())
        reference = self.reference_index()
        for i, (row, name) in enumerate(zip(self.rows, names, strict=True)):
            row.set_name(name, reference=i == reference and len(self.rows) > 1)

    @Slot()
    def _fill_add_menu(self) -> None:
        menu = self.add_menu
        menu.clear()
        shown = self.tokenizers()
        names = listed_names(self.available)
        for loaded, name in zip(self.available, names, strict=True):
            action = QAction(name, menu)
            action.setToolTip(loaded.source_text)
            action.setEnabled(not any(loaded is other for other in shown))
            action.triggered.connect(lambda _checked=False, t=loaded: self.add_tokenizer(t))
            menu.addAction(action)
        if self.available:
            menu.addSeparator()
        for text, signal in (
            ("Open file…", self.open_file_requested),
            ("GPT-2", self.open_gpt2_requested),
            ("From Hugging Face…", self.open_hub_requested),
        ):
            action = QAction(text, menu)
            action.triggered.connect(lambda _checked=False, s=signal: s.emit())
            menu.addAction(action)

    # ==============================================================================================
    # Encoding
    # ==============================================================================================

    @Slot()
    def _on_text_edit_edited(self) -> None:
        self.timer.start()

    @Slot(int)
    def _on_reference_combo_changed(self, _index: int) -> None:
        self._name_rows()
        self.timer.start(0)

    @Slot(bool)
    def _on_whitespace_check_toggled(self, checked: bool) -> None:
        self.text_edit.set_whitespace_visible(checked)
        for row in self.rows:
            row.view.set_whitespace_visible(checked)

    @Slot()
    def _on_timer_timeout(self) -> None:
        text, tokenizers, reference = self.text(), self.tokenizers(), self.reference_index()

        def task(ctx: TaskContext) -> tuple[str, list[LoadedTokenizer], int, list[RowFigures]]:
            encodings = []
            for loaded in tokenizers:
                encodings.append(encode_text(loaded.tokenizer, text, SpecialMode.RECOGNISED, check=ctx.check))
            figures = []
            ref = encodings[reference] if 0 <= reference < len(encodings) else None
            for i, encoding in enumerate(encodings):
                if ref is None or i == reference:
                    figures.append(RowFigures(encoding))
                    continue
                ctx.check()
                cuts = cut_difference(
                    tokenizers[reference].tokenizer,
                    [s.id for s in ref.spans],
                    tokenizers[i].tokenizer,
                    [s.id for s in encoding.spans],
                )
                figures.append(RowFigures(encoding, cuts.spans, cuts.b_tokens))
            return text, tokenizers, reference, figures

        self.runner.start(task)

    @Slot(object)
    def _on_runner_finished(self, found: tuple[str, list[LoadedTokenizer], int, list[RowFigures]]) -> None:
        text, tokenizers, reference, figures = found
        same_rows = len(tokenizers) == len(self.rows) and all(
            a is b for a, b in zip(tokenizers, self.tokenizers(), strict=True)
        )
        if (
            text != self.text()
            or self.timer.isActive()
            or not same_rows
            or reference != self.reference_index()
        ):
            return  # something changed meanwhile; the next encoding is on its way
        self.figures = figures
        names = listed_names(tokenizers)
        ref_name = names[reference] if len(self.rows) > 1 else None
        for i, (row, row_figures) in enumerate(zip(self.rows, figures, strict=True)):
            encoding = row_figures.encoding
            colours = len(row.view.token_palette.backgrounds)
            row.view.set_text_and_units(
                text,
                encoding.unit_start,
                encoding.unit_end,
                encoding.unit_kind,
                encoding.unit_colours(colours),
            )
            row.view.set_difference_ranges(utf16_ranges(text, row_figures.spans))
            row.stats_label.setText(
                row_stats(text, row_figures, reference=None if i == reference else ref_name)
            )
        self.compared.emit()


def _same_source(a: LoadedTokenizer, b: LoadedTokenizer) -> bool:
    if a.path is not None and b.path is not None:
        try:
            return a.path.resolve() == b.path.resolve()
        except OSError:  # pragma: no cover - resolve() rarely fails
            return a.path == b.path
    return a.result is not None and a.result is b.result


__all__ = ["SIDE_DELAY_MS", "RowFigures", "SideBySideView", "row_stats"]
