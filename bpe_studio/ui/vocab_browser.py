"""The "Vocabulary" tab: every token in a searchable, sortable table; the selected one's merge tree.

The merge tree is drawn as nested boxes: the token on top, each merge's two parts below it, down to single
bytes at the bottom; every box spans the bytes it is made of. Clicking a box selects that token.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QItemSelectionModel, QModelIndex, QPointF, QRectF, QSize, Qt, Signal, Slot
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QFontMetricsF,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPen,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QScrollArea,
    QSplitter,
    QTableView,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from ..engine import Tokenizer
from .style import theme_of
from .token_format import hex_bytes, token_label
from .token_text import FileDropWidget, TokenDetails
from .tokenizer_info import LoadedTokenizer, MergeNode
from .vocab_model import VocabTableModel

_PAD = 6.0
_GAP = 4.0
_ROW_GAP = 14.0


@dataclass(frozen=True)
class TreeBox:
    """A drawn node of the merge tree: its rectangle and what it shows."""

    rect: QRectF
    node: MergeNode
    label: str
    caption: str


class MergeTreeView(QWidget):
    """A merge tree drawn as boxes (see the module docstring).

    Signals:
        token_clicked(int): A box was clicked (the token's id).
    """

    token_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("merge_tree")
        self.setMouseTracking(True)
        self.tree: MergeNode | None = None
        self.boxes: list[TreeBox] = []
        self._font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self._small = QFont(self.font())
        self._small.setPointSizeF(max(6.0, self._small.pointSizeF() * 0.85))
        self._size = QSize(0, 0)
        self._message = "Select a token to see how merges build it."

    def set_tree(self, tree: MergeNode | None, tokenizer: Tokenizer | None, message: str = "") -> None:
        """Show a tree (None: a message instead)."""
        self.tree = tree
        self.boxes = []
        if message:
            self._message = message
        if tree is not None and tokenizer is not None:
            self._layout(tree, tokenizer)
        self.updateGeometry()
        self.adjustSize()
        self.update()

    def _layout(self, tree: MergeNode, tokenizer: Tokenizer) -> None:
        metrics = QFontMetricsF(self._font)
        small = QFontMetricsF(self._small)
        label_height = metrics.height()
        box_height = label_height + small.height() + 2 * 3
        rows = tree.height() + 1
        leaves = tree.leaves()
        # Each leaf (a single byte, or a token no merge makes) gets a slot wide enough for its label and hex.
        slots: list[tuple[float, float]] = []
        x = _GAP
        for leaf in leaves:
            data = tokenizer.token_bytes(leaf)
            width = max(
                metrics.horizontalAdvance(token_label(data)), small.horizontalAdvance(hex_bytes(data))
            )
            width = max(width + 2 * _PAD, 26.0)
            slots.append((x, width))
            x += width + _GAP
        total_width = x
        special_ids = frozenset(tokenizer.special_tokens.values())

        def place(node: MergeNode, first_leaf: int) -> int:
            """Add the node's box (and its children's); returns the number of leaves it spans."""
            if node.left is None or node.right is None:
                count = 1
            else:
                count = place(node.left, first_leaf)
                count += place(node.right, first_leaf + count)
            left = slots[first_leaf][0]
            last_x, last_width = slots[first_leaf + count - 1]
            row = rows - 1 - node.height()
            top = _GAP + row * (box_height + _ROW_GAP)
            rect = QRectF(left, top, last_x + last_width - left, box_height)
            data = tokenizer.token_bytes(node.token_id)
            if node.token_id in special_ids:
                label = data.decode("utf-8", "replace")
                caption = "special"
            else:
                label = token_label(data)
                caption = f"#{node.rank:,}" if node.rank is not None else hex_bytes(data)
            if small.horizontalAdvance(caption) > rect.width() - 4:
                caption = ""
            self.boxes.append(TreeBox(rect, node, label, caption))
            return count

        place(tree, 0)
        self._size = QSize(int(total_width + _GAP), int(_GAP * 2 + rows * (box_height + _ROW_GAP)))

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        """The drawing's size (a message needs little)."""
        if not self.boxes:
            return QSize(200, 60)
        return self._size

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        """As large as the drawing, so that a scroll area scrolls it."""
        return self.sizeHint()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        """Draw the boxes, children below their parents, with lines from each box to its parts."""
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        try:
            theme = theme_of(self)
            palette = theme.tokens
            text_colour = QColor(palette.text)
            if not self.boxes:
                painter.setPen(self.palette().color(self.foregroundRole()))
                painter.drawText(self.rect(), int(Qt.AlignmentFlag.AlignCenter), self._message)
                return
            by_node = {id(box.node): box for box in self.boxes}
            painter.setPen(QPen(QColor(theme.tree_edge), 1))
            for box in self.boxes:
                node = box.node
                if node.left is None or node.right is None:
                    continue
                for child in (node.left, node.right):
                    child_box = by_node[id(child)]
                    start = QPointF(child_box.rect.center().x(), box.rect.bottom())
                    painter.drawLine(start, QPointF(child_box.rect.center().x(), child_box.rect.top()))
            for box in self.boxes:
                node = box.node
                leaf = node.left is None
                colour = (
                    palette.special_background
                    if box.caption == "special"
                    else (theme.tree_leaf if leaf else palette.backgrounds[node.height() % 6])
                )
                painter.setBrush(QColor(colour))
                painter.setPen(QPen(QColor(theme.tree_outline), 1))
                painter.drawRoundedRect(box.rect.adjusted(0.5, 0.5, -0.5, -0.5), 4, 4)
                painter.setPen(QColor(theme.text) if leaf else text_colour)
                painter.setFont(self._font)
                label_rect = QRectF(
                    box.rect.left(), box.rect.top() + 2, box.rect.width(), box.rect.height() / 2
                )
                painter.drawText(label_rect, int(Qt.AlignmentFlag.AlignCenter), box.label)
                if box.caption:
                    painter.setFont(self._small)
                    caption_rect = QRectF(
                        box.rect.left(), box.rect.center().y(), box.rect.width(), box.rect.height() / 2 - 2
                    )
                    painter.drawText(caption_rect, int(Qt.AlignmentFlag.AlignCenter), box.caption)
        finally:
            painter.end()

    def box_at(self, point: QPointF) -> TreeBox | None:
        """The box under a point, if any."""
        for box in self.boxes:
            if box.rect.contains(point):
                return box
        return None

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt's name
        """Report the clicked token."""
        box = self.box_at(event.position())
        if box is not None and event.button() == Qt.MouseButton.LeftButton:
            self.token_clicked.emit(box.node.token_id)
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt's name
        """Describe the box under the mouse in a tooltip."""
        box = self.box_at(event.position())
        if box is None:
            QToolTip.hideText()
        else:
            node = box.node
            how = f"made by merge #{node.rank:,}" if node.rank is not None else "not made by a merge"
            QToolTip.showText(
                event.globalPosition().toPoint(), f"Token {node.token_id}: {box.label} ({how})", self
            )
        super().mouseMoveEvent(event)


class VocabBrowser(FileDropWidget):
    """The vocabulary tab.

    Signals:
        token_selected(int): A token was selected (its id; -1: none).
        files_dropped(list): Tokenizer files were dropped on the tab.
    """

    token_selected = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("vocab_browser")
        self.loaded: LoadedTokenizer | None = None
        self._selected = -1
        self._build()
        self.set_tokenizer(None)

    def _build(self) -> None:
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.setChildrenCollapsible(False)
        layout.addWidget(splitter)

        left = QGroupBox("Vocabulary", splitter)
        left_layout = QVBoxLayout(left)
        search_row = QHBoxLayout()
        self.search_edit = QLineEdit(left)
        self.search_edit.setPlaceholderText("Search tokens (a space matches ·), an id, or 0x bytes in hex")
        self.search_edit.setClearButtonEnabled(True)
        self.search_edit.textChanged.connect(self._on_search_edit_changed)
        self.match_label = QLabel(left)
        self.match_label.setObjectName("caption")
        search_row.addWidget(self.search_edit, 1)
        search_row.addWidget(self.match_label)
        left_layout.addLayout(search_row)
        self.model = VocabTableModel(self)
        self.model.rows_changed.connect(self._on_model_rows_changed)
        self.table = QTableView(left)
        self.table.setObjectName("vocab_table")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(VocabTableModel.ID, Qt.SortOrder.AscendingOrder)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        for column, width in enumerate((70, 210, 200, 60, 100)):
            self.table.setColumnWidth(column, width)
        header.setSectionResizeMode(VocabTableModel.HEX, QHeaderView.ResizeMode.Stretch)
        selection = self.table.selectionModel()
        selection.currentRowChanged.connect(self._on_table_current_changed)
        left_layout.addWidget(self.table)

        right = QWidget(splitter)
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(4, 0, 0, 0)
        details_box = QGroupBox("Token", right)
        details_layout = QVBoxLayout(details_box)
        self.details = TokenDetails(details_box)
        self.details.linkActivated.connect(self._on_details_link_activated)
        details_layout.addWidget(self.details)
        right_layout.addWidget(details_box, 0)
        tree_box = QGroupBox(
            "Merge tree: the token on top, its single bytes at the bottom (#n: merge rank)", right
        )
        tree_layout = QVBoxLayout(tree_box)
        self.tree_view = MergeTreeView(tree_box)
        self.tree_view.token_clicked.connect(self.show_token)
        self.tree_scroll = QScrollArea(tree_box)
        self.tree_scroll.setWidget(self.tree_view)
        self.tree_scroll.setWidgetResizable(False)
        self.tree_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.tree_scroll.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        tree_layout.addWidget(self.tree_scroll)
        right_layout.addWidget(tree_box, 1)
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([700, 620])

    # -- public -------------------------------------------------------------------------------------

    def set_tokenizer(self, loaded: LoadedTokenizer | None) -> None:
        """Show a tokenizer's vocabulary."""
        self.loaded = loaded
        self._selected = -1
        self.model.set_tokenizer(loaded)
        if loaded is None:
            self.details.show_message("Open a tokenizer to browse its vocabulary.")
            self.tree_view.set_tree(None, None, "Open a tokenizer to browse its vocabulary.")
        else:
            self.details.show_message("Select a token to see it here.")
            self.tree_view.set_tree(None, None, "Select a token to see how merges build it.")

    @property
    def selected_id(self) -> int:
        """The selected token's id (-1: none)."""
        return self._selected

    @Slot(int)
    def show_token(self, token_id: int) -> None:
        """Select a token (clearing the search when it hides the token) and scroll to it."""
        if self.loaded is None or token_id not in self.loaded.tokenizer.vocab:
            return
        row = self.model.row_of(token_id)
        if row < 0:
            self.search_edit.clear()
            row = self.model.row_of(token_id)
        if row < 0:
            return
        index = self.model.index(row, VocabTableModel.TOKEN)
        self.table.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        )
        self.table.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)

    # -- slots --------------------------------------------------------------------------------------

    @Slot(str)
    def _on_search_edit_changed(self, text: str) -> None:
        self.model.set_search_text(text)

    @Slot()
    def _on_model_rows_changed(self) -> None:
        shown = self.model.rowCount()
        total = len(self.loaded.tokenizer.vocab) if self.loaded is not None else 0
        if self.model.search_text:
            self.match_label.setText(f"{shown:,} of {total:,}")
        else:
            self.match_label.setText(f"{total:,} tokens" if self.loaded is not None else "")
        # Filtering and sorting reset the model: select the same token again.
        if self._selected >= 0:
            row = self.model.row_of(self._selected)
            if row >= 0:
                index = self.model.index(row, VocabTableModel.TOKEN)
                self.table.selectionModel().setCurrentIndex(
                    index,
                    QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows,
                )

    @Slot(QModelIndex, QModelIndex)
    def _on_table_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not current.isValid() or self.loaded is None:
            return
        token_id = self.model.id_at(current.row())
        if token_id == self._selected and self.tree_view.tree is not None:
            return
        self._selected = token_id
        loaded = self.loaded
        self.details.show_tokens(loaded.tokenizer, loaded.index, [token_id])
        if token_id in loaded.index.special_ids:
            self.tree_view.set_tree(None, None, "A special token is never merged: it has no merge tree.")
        else:
            self.tree_view.set_tree(loaded.index.merge_tree(token_id), loaded.tokenizer)
        self.token_selected.emit(token_id)

    @Slot(str)
    def _on_details_link_activated(self, link: str) -> None:
        if link.startswith("token:"):
            self.show_token(int(link.removeprefix("token:")))


__all__ = ["MergeTreeView", "TreeBox", "VocabBrowser"]
