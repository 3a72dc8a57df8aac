"""The "Vocabulary" tab: every token in a searchable, sortable table; the selected one's details and merge
tree (drawn by :mod:`bpe_studio.ui.widgets.merge_tree`; clicking a box selects that token).
"""

from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QSplitter,
    QStyle,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ...engine.humanize import MERGE_NUMBERING
from ..present.tokenizer_info import LoadedTokenizer
from ..widgets.file_drop import FileDropWidget
from ..widgets.merge_tree import DEFAULT_LEVELS, MergeTreePanel
from ..widgets.token_details import TokenDetails
from .model import VocabTableModel


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
        # The numbers as wide as their title and figures, the token and its hex sharing the rest: fixed
        # widths summed to 640 px, more than the table has in a 1024 px window (issue 21).
        metrics = header.fontMetrics()
        pad = 2 * header.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin) + 16  # and a sort arrow
        for column, widest in (
            (VocabTableModel.ID, "1,000,000"),
            (VocabTableModel.LENGTH, "Bytes"),
            (VocabTableModel.COUNT, VocabTableModel.COLUMNS[VocabTableModel.COUNT]),
        ):
            title = VocabTableModel.COLUMNS[column]
            width = max(metrics.horizontalAdvance(title), self.fontMetrics().horizontalAdvance(widest)) + pad
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
            self.table.setColumnWidth(column, width)
        header.setSectionResizeMode(VocabTableModel.TOKEN, QHeaderView.ResizeMode.Stretch)
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
        # A short title (a long one was cut off in a narrow window); the tooltip says how to read the tree.
        tree_box = QGroupBox("Merge tree", right)
        tree_box.setToolTip(
            "The token on top, the two parts of each merge below it, its single bytes at the bottom; "
            f"“merge n” is the merge that made a box's token. {MERGE_NUMBERING}"
        )
        tree_layout = QVBoxLayout(tree_box)
        self.all_levels_check = QCheckBox(
            f"Show every level (else the top {DEFAULT_LEVELS} merge levels)", tree_box
        )
        self.all_levels_check.setToolTip(
            "Deeper levels fold into dashed boxes; click one to see that token's own tree"
        )
        self.all_levels_check.toggled.connect(self._on_all_levels_check_toggled)
        tree_layout.addWidget(self.all_levels_check)
        self.tree_scroll = MergeTreePanel(tree_box)
        self.tree_view = self.tree_scroll.tree_view
        self.tree_view.token_clicked.connect(self.show_token)
        tree_layout.addWidget(self.tree_scroll)
        right_layout.addWidget(tree_box, 1)
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([740, 580])

    # -- public -------------------------------------------------------------------------------------

    def set_tokenizer(self, loaded: LoadedTokenizer | None) -> None:
        """Show a tokenizer's vocabulary."""
        self.loaded = loaded
        self._selected = -1
        self.model.set_tokenizer(loaded)
        if loaded is None:
            self.details.show_message("Open a tokenizer to browse its vocabulary.")
            self.tree_scroll.show_tree(None, None, "Open a tokenizer to browse its vocabulary.")
        else:
            self.details.show_message("Select a token to see it here.")
            self.tree_scroll.show_tree(None, None, "Select a token to see how merges build it.")

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
            self.tree_scroll.show_tree(None, None, "A special token is never merged: it has no merge tree.")
        else:
            self.tree_scroll.show_tree(loaded.index.merge_tree(token_id), loaded.tokenizer)
        self.token_selected.emit(token_id)

    @Slot(bool)
    def _on_all_levels_check_toggled(self, checked: bool) -> None:
        self.tree_scroll.set_levels(None if checked else DEFAULT_LEVELS)

    @Slot(str)
    def _on_details_link_activated(self, link: str) -> None:
        if link.startswith("token:"):
            self.show_token(int(link.removeprefix("token:")))


__all__ = ["VocabBrowser"]
