"""Item models: the merges table (grown a batch at a time while training) and its search filter.

Tokens are spelled by :func:`~bpe_studio.ui.present.token_format.token_label`, as in every other view: visible
whitespace, and ``<0xE2>`` for a byte that is not a whole character or is a control byte.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    QStringListModel,
    Qt,
)

from ...engine import MergeMade
from ...engine.humanize import MERGE_NUMBERING, merge_number
from ..present.token_format import search_key, token_label

Index = QModelIndex | QPersistentModelIndex

#: After the rank of a superword run's merges made after its transition.
SUPERWORD_MARK = " ✦"

# Item data roles as plain ints (data() is called thousands of times a second).
_DISPLAY = int(Qt.ItemDataRole.DisplayRole.value)
_TOOLTIP = int(Qt.ItemDataRole.ToolTipRole.value)
_ALIGNMENT = int(Qt.ItemDataRole.TextAlignmentRole.value)
_USER = int(Qt.ItemDataRole.UserRole.value)


class MergesTableModel(QAbstractTableModel):
    """The merges made so far: rank, left, right, new token and count, one row per merge.

    Rows are appended a batch at a time (:meth:`append_merges`), one ``beginInsertRows`` per batch. Display
    strings are made when a row is first shown (or searched), not when it arrives.
    """

    COLUMNS = ("Merge", "Left", "Right", "New token", "Count")
    RANK, LEFT, RIGHT, TOKEN, COUNT = range(5)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pairs: list[tuple[bytes, bytes]] = []
        self._counts: list[int] = []
        self._token_ids: list[int] = []
        self._texts: list[tuple[str, str, str] | None] = []
        self._align_right = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        #: Of a superword run, the first row after its transition: from there the rank carries
        #: :data:`SUPERWORD_MARK` and the tooltip says the merge may span words. None otherwise.
        self.superword_from: int | None = None
        #: Merges before the first row: an extended tokenizer's own (its first new merge is number
        #: ``first_merge + 1``); 0 for a run from the single bytes.
        self.first_merge = 0

    # -- editing ------------------------------------------------------------------------------------

    def append_merges(self, merges: Sequence[MergeMade]) -> None:
        """Append a batch of merges as rows (in one insertion)."""
        if not merges:
            return
        first = len(self._pairs)
        self.beginInsertRows(QModelIndex(), first, first + len(merges) - 1)
        self._pairs.extend([m.pair for m in merges])
        self._counts.extend([m.count for m in merges])
        self._token_ids.extend([m.token_id for m in merges])
        self._texts.extend([None] * len(merges))
        self.endInsertRows()

    def set_merges(
        self, merges: Sequence[tuple[bytes, bytes]], counts: Sequence[int], token_ids: Sequence[int]
    ) -> None:
        """Replace every row (e.g. by a finished result's merges)."""
        self.beginResetModel()
        self._pairs = list(merges)
        self._counts = list(counts)
        self._token_ids = list(token_ids)
        self._texts = [None] * len(self._pairs)
        self.endResetModel()

    def clear(self) -> None:
        """Remove every row."""
        self.set_merges([], [], [])

    # -- reading ------------------------------------------------------------------------------------

    def merge_at(self, row: int) -> tuple[bytes, bytes, int]:
        """The merge of a row: left bytes, right bytes, count."""
        left, right = self._pairs[row]
        return left, right, self._counts[row]

    def texts(self, row: int) -> tuple[str, str, str]:
        """A row's display strings for left, right and the new token."""
        cached = self._texts[row]
        if cached is None:
            left, right = self._pairs[row]
            cached = (token_label(left), token_label(right), token_label(left + right))
            self._texts[row] = cached
        return cached

    def row_matches(self, row: int, key: str) -> bool:
        """Whether a row's left, right or new token contains ``key`` (a :func:`search_key`)."""
        return any(key in text.casefold() for text in self.texts(row))

    # -- QAbstractTableModel ------------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008 - Qt's signature
        """Rows: one per merge (none below the root: this is a flat table)."""
        return 0 if parent.isValid() else len(self._pairs)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008 - Qt's signature
        """The five columns."""
        return 0 if parent.isValid() else len(self.COLUMNS)

    def data(self, index: Index, role: int = _DISPLAY) -> Any:
        """A cell's display text, alignment or tooltip.

        A view asks for seven roles per cell at every paint, so this answers the common ones first and
        with plain integer comparisons; the font is the view's (a fixed-width one, see the Train tab).
        """
        if role == _DISPLAY:
            if not index.isValid():
                return None
            row, column = index.row(), index.column()
            if column == 0:
                after = self.superword_from is not None and row >= self.superword_from
                return f"{merge_number(row + self.first_merge):,}{SUPERWORD_MARK if after else ''}"
            if column == 4:
                return f"{self._counts[row]:,}"
            return self.texts(row)[column - 1]
        if role == _ALIGNMENT:
            return self._align_right if index.column() in (0, 4) else None
        if role == _TOOLTIP and index.isValid():
            row = index.row()
            left, right = self._pairs[row]
            shown_left, shown_right, _ = self.texts(row)
            after = self.superword_from is not None and row >= self.superword_from
            number = merge_number(row + self.first_merge)
            return (
                f"Merge {number:,}: {shown_left} + {shown_right} → token {self._token_ids[row]} "
                f"({len(left) + len(right)} bytes), seen {self._counts[row]:,} times"
                + ("; a superword merge (after the transition: it may span words)" if after else "")
            )
        if role == _USER and index.isValid():
            row = index.row()
            return self._counts[row] if index.column() == self.COUNT else row
        return None

    def headerData(  # noqa: N802 - Qt's name
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        """Column titles."""
        if orientation == Qt.Orientation.Horizontal and 0 <= section < len(self.COLUMNS):
            if role == Qt.ItemDataRole.DisplayRole:
                return self.COLUMNS[section]
            if role == Qt.ItemDataRole.ToolTipRole:
                return _HEADER_TIPS[section]
        return None


_HEADER_TIPS = (
    f"Merge number: the order in which the merge was learned. {MERGE_NUMBERING}",
    "Left token of the merged pair (· is a space, ↵ a newline, <0xE2> a byte that is not a whole character)",
    "Right token of the merged pair",
    "The new token: left and right joined",
    "How often the pair occurred in the corpus when it was merged",
)


class MergesFilterModel(QSortFilterProxyModel):
    """Shows only the merges whose tokens contain a search text (case-insensitive, visible whitespace).

    It is attached to the merges model only while there is a search text: attached, it filters every row
    inserted (a Python call per row, thousands a second while training), whether it is shown or not.
    """

    def __init__(self, source: MergesTableModel, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._source = source
        self._key = ""
        self._detached = QStringListModel(self)  # what it filters while there is no search text
        self.setSourceModel(self._detached)

    @property
    def search_text(self) -> str:
        """The current search key."""
        return self._key

    def set_search_text(self, text: str) -> None:
        """Filter by a new search text (empty shows every row)."""
        key = search_key(text)
        if key == self._key:
            return
        if not key or self.sourceModel() is self._detached:
            self._key = key
            self.setSourceModel(self._source if key else self._detached)
            return
        if hasattr(self, "beginFilterChange"):  # Qt >= 6.10
            self.beginFilterChange()
            self._key = key
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:  # pragma: no cover - older Qt
            self._key = key
            self.invalidateRowsFilter()

    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:  # noqa: N802 - Qt's name
        """Keep rows whose left, right or new token contains the search key."""
        return not self._key or self._source.row_matches(source_row, self._key)


__all__ = ["MergesFilterModel", "MergesTableModel"]
