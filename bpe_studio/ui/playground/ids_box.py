"""The playground's "Token ids" box: the encoding's ids, the selected token's id marked, and copying.

A click on an id reports that token (:attr:`IdsBox.id_clicked`), so that the playground selects it in every
view; "Copy" copies the ids as JSON, "Copy as" the tokens themselves as text or TSV
(:mod:`bpe_studio.ui.present.token_copy`).
"""

from __future__ import annotations

from bisect import bisect_right

from PySide6.QtCore import Signal, Slot
from PySide6.QtGui import QFontDatabase, QGuiApplication, QPalette, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..present.token_copy import IdsText, format_ids, ids_text, tokens_text, tokens_tsv
from ..present.token_layout import Encoding


class IdsBox(QGroupBox):
    """The ids of an encoding, as a JSON list, with copy buttons.

    Signals:
        id_clicked(int): The user clicked an id (the index of its token in the encoding).
    """

    id_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Token ids", parent)
        self.encoding: Encoding | None = None
        self._starts: list[int] = []  # where each token's id is in the text
        self._ends: list[int] = []
        self._marked = -1
        self._moving = False  # the cursor is moved by code, not by a click
        layout = QHBoxLayout(self)
        self.view = QPlainTextEdit(self)
        self.view.setObjectName("playground_ids")
        self.view.setReadOnly(True)
        self.view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.view.setPlaceholderText("The ids of the tokens appear here; click one to select its token.")
        self.view.cursorPositionChanged.connect(self._on_view_cursor_moved)
        layout.addWidget(self.view, 1)
        buttons = QVBoxLayout()
        self.copy_button = QPushButton("Copy", self)
        self.copy_button.setToolTip("Copy the ids as a JSON list")
        self.copy_button.clicked.connect(self.copy_ids)
        buttons.addWidget(self.copy_button)
        self.copy_as_button = QToolButton(self)
        self.copy_as_button.setText("Copy as")
        self.copy_as_button.setToolTip("Copy the tokens themselves, as text or as a table")
        self.copy_as_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.copy_as_button)
        self.copy_text_action = menu.addAction("Tokens as text (one per line)")
        self.copy_text_action.triggered.connect(self._on_copy_text_action_triggered)
        self.copy_tsv_action = menu.addAction("Tokens as TSV (index, id, token, hex, start, end)")
        self.copy_tsv_action.triggered.connect(self._on_copy_tsv_action_triggered)
        self.copy_as_button.setMenu(menu)
        buttons.addWidget(self.copy_as_button)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        self.set_encoding(None)  # nothing to copy yet: the buttons start disabled

    def set_encoding(self, encoding: Encoding | None, ids: IdsText | None = None) -> None:
        """Show an encoding's ids (None, or one with an error: none), nothing marked; ``ids``: its ids'
        text, if already made (:func:`~bpe_studio.ui.present.token_copy.ids_text`, slow for a long text)."""
        self.encoding = encoding
        if encoding is None or encoding.error or not encoding.spans:
            ids = IdsText("", [], [])
        elif ids is None:
            ids = ids_text(encoding.ids)
        self._moving = True  # a new text, not a click on an id
        try:
            self.view.setPlainText(ids.text)
        finally:
            self._moving = False
        self._starts, self._ends = ids.starts, ids.ends
        has = bool(ids.starts)
        self.copy_button.setEnabled(has)
        self.copy_as_button.setEnabled(has and encoding is not None and encoding.tokenizer is not None)
        self.mark(-1)

    def mark(self, token: int, *, scroll: bool = True) -> None:
        """Highlight the id of a token (by index; -1: none); ``scroll`` brings it into view."""
        self._marked = token
        if not 0 <= token < len(self._starts):
            self.view.setExtraSelections([])
            return
        cursor = QTextCursor(self.view.document())
        cursor.setPosition(self._starts[token])
        cursor.setPosition(self._ends[token], QTextCursor.MoveMode.KeepAnchor)
        selection = QTextEdit.ExtraSelection()
        selection.cursor = cursor
        fmt = QTextCharFormat()
        fmt.setBackground(self.view.palette().color(QPalette.ColorRole.Highlight))
        fmt.setForeground(self.view.palette().color(QPalette.ColorRole.HighlightedText))
        selection.format = fmt
        self.view.setExtraSelections([selection])
        if scroll and not self.view.viewport().rect().contains(self.view.cursorRect(cursor)):
            self._moving = True
            try:
                keep = self.view.textCursor()
                self.view.setTextCursor(cursor)
                self.view.ensureCursorVisible()
                self.view.setTextCursor(keep)
            finally:
                self._moving = False

    @Slot()
    def _on_view_cursor_moved(self) -> None:
        """A click on an id reports its token."""
        if self._moving or not self._starts:
            return
        position = self.view.textCursor().position()
        token = bisect_right(self._starts, position) - 1
        if token >= 0 and position <= self._ends[token] and token != self._marked:
            self.id_clicked.emit(token)

    # -- copying --------------------------------------------------------------------------------------

    @Slot()
    def copy_ids(self) -> None:
        """Copy the ids to the clipboard as a JSON list."""
        if self.encoding is not None and self._starts:
            QGuiApplication.clipboard().setText(format_ids(self.encoding.ids))

    def copy_tokens(self, *, tsv: bool = False) -> None:
        """Copy the tokens: one per line as the Tokens view spells them, or as TSV."""
        encoding = self.encoding
        if encoding is None or encoding.error or encoding.tokenizer is None or not encoding.spans:
            return
        if tsv:
            data = [encoding.tokenizer.token_bytes(i) for i in encoding.ids]
            spans = [(s.start, s.end) for s in encoding.spans]
            text = tokens_tsv(encoding.ids, encoding.labels, data, spans)
        else:
            text = tokens_text(encoding.labels)
        QGuiApplication.clipboard().setText(text)

    @Slot()
    def _on_copy_text_action_triggered(self) -> None:
        self.copy_tokens()

    @Slot()
    def _on_copy_tsv_action_triggered(self) -> None:
        self.copy_tokens(tsv=True)


__all__ = ["IdsBox"]
