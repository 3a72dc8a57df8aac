"""The vocabulary table model: every token of a tokenizer, searchable and sortable.

Searching and sorting happen in the model (on lists of ids, in Python), not in a proxy, so that a vocabulary
of hundreds of thousands of tokens stays quick: a proxy would call :meth:`VocabTableModel.data` for every
comparison. Display strings are made when first needed.
"""

from __future__ import annotations

import re
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontDatabase

from ...engine.humanize import merge_number
from ..app.style import theme_of
from ..present.token_format import byte_fallback, hex_bytes, search_key, token_name
from ..present.tokenizer_info import LoadedTokenizer

Index = QModelIndex | QPersistentModelIndex

#: A search for bytes: ``0x`` then hex digits, in groups that may each start with ``0x`` again, as the Hex
#: column writes them or as people copy them (``0xe7 0x9a``, ``0xe7 9a``, ``0xe79a``).
#: Each group needs a digit, so that a run of spaces splits one way only (no backtracking on long input).
_HEX_QUERY = re.compile(r"^0x\s*[0-9a-fA-F]+(?:\s+(?:0x)?[0-9a-fA-F]+)*(?:\s+0x)?$")

_HEADER_TIPS = (
    "The token's id",
    "The token's bytes as text (· is a space, ↵ a newline, <0xE2> a byte that is not a whole character)",
    "The token's bytes in hex",
    "The token's length in bytes",
    "Pair count at merge: how often the token's two parts occurred side by side in the corpus when the "
    "merge that made the token was made (known for tokenizers trained here or saved in BPE Studio's "
    "format; – when unknown)",
)


def hex_digits(query: str) -> str:
    """The hex digits of a byte search, without its ``0x`` prefixes and spaces.

    Example:
        >>> hex_digits("0xE7 0x9a"), hex_digits("0xe7 9a"), hex_digits("0xe79a")
        ('e79a', 'e79a', 'e79a')
    """
    return "".join(part.removeprefix("0x") for part in query.lower().split())


def hex_contains(data: bytes, wanted: str) -> bool:
    """Whether ``data`` holds the bytes spelled by the hex digits ``wanted``, on byte boundaries only.

    A plain substring search of the hex would find ``e2`` inside ``2e 2e`` (``..``); here a match must
    start at a byte. An odd number of digits matches a byte that begins with the last one (``e`` for
    e0–ef), so that the results narrow as the user types.

    Example:
        >>> hex_contains(b"..", "e2"), hex_contains("—".encode(), "e2"), hex_contains(b" t", "207")
        (False, True, True)
    """
    text = data.hex()
    start = text.find(wanted)
    while start >= 0 and start % 2:
        start = text.find(wanted, start + 1)
    return start >= 0


class VocabTableModel(QAbstractTableModel):
    """Id, token, hex, length and merge count of every token; rows filtered by :meth:`set_search_text`.

    Signals:
        rows_changed(): The rows were filtered or sorted again (the view's selection was reset).
    """

    COLUMNS = ("Id", "Token", "Hex", "Bytes", "Pair count at merge")
    ID, TOKEN, HEX, LENGTH, COUNT = range(5)

    rows_changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.loaded: LoadedTokenizer | None = None
        self._ids: list[int] = []  # every id, ascending
        self._rows: list[int] = []  # the ids shown, in order
        self._labels: dict[int, str] = {}
        self._search = ""
        self._sort: tuple[int, Qt.SortOrder] = (self.ID, Qt.SortOrder.AscendingOrder)
        self._specials: frozenset[int] = frozenset()
        self._mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self._bold_mono = QFont(self._mono)
        self._bold_mono.setBold(True)
        self._align_right = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)

    # -- contents -----------------------------------------------------------------------------------

    def set_tokenizer(self, loaded: LoadedTokenizer | None) -> None:
        """Show a tokenizer's vocabulary (None: empty)."""
        self.beginResetModel()
        self.loaded = loaded
        self._labels = {}
        if loaded is None:
            self._ids = []
            self._specials = frozenset()
        else:
            self._ids = sorted(loaded.tokenizer.vocab)
            self._specials = frozenset(loaded.tokenizer.special_tokens.values())
        self._rows = self._filtered_sorted()
        self.endResetModel()
        self.rows_changed.emit()

    @property
    def search_text(self) -> str:
        """The search text in use."""
        return self._search

    def set_search_text(self, text: str) -> None:
        """Show only tokens whose text contains ``text`` (case-insensitive; a space matches ``·``), whose id
        is ``text``, or, for ``0x…``, that hold those bytes (whole bytes: ``0xe2`` does not match ``2e 2e``).
        """
        if text == self._search:
            return
        self.beginResetModel()
        self._search = text
        self._rows = self._filtered_sorted()
        self.endResetModel()
        self.rows_changed.emit()

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort the rows by a column (ties by id)."""
        if not 0 <= column < len(self.COLUMNS):
            return
        self.beginResetModel()
        self._sort = (column, order)
        self._rows = self._filtered_sorted()
        self.endResetModel()
        self.rows_changed.emit()

    def label(self, token_id: int) -> str:
        """A token spelled for display."""
        found = self._labels.get(token_id)
        if found is None:
            assert self.loaded is not None
            tokenizer = self.loaded.tokenizer
            if token_id in self._specials:
                found = tokenizer.token_bytes(token_id).decode("utf-8", "replace")
            else:  # a SentencePiece-style model's pieces as it spells them (▁the, <0x61>)
                found = token_name(tokenizer, token_id)
            self._labels[token_id] = found
        return found

    def _count(self, token_id: int) -> int | None:
        assert self.loaded is not None
        return self.loaded.index.count_of(token_id)

    def _filtered_sorted(self) -> list[int]:
        loaded = self.loaded
        if loaded is None:
            return []
        rows = self._ids
        text = self._search.strip()
        if text:
            hex_query = _HEX_QUERY.match(text)
            key = search_key(self._search)
            number = int(text) if text.isdigit() else None
            if hex_query is not None:
                wanted = hex_digits(text)
                token_bytes = loaded.tokenizer.token_bytes
                rows = [i for i in rows if hex_contains(token_bytes(i), wanted)]
            else:
                label = self.label
                # A SentencePiece-style model spells a space ▁: a typed space finds it too.
                piece_key = key.replace("·", "▁") if loaded.tokenizer.piece_model is not None else key
                rows = [
                    i
                    for i in rows
                    if i == number or key in (shown := label(i).casefold()) or piece_key in shown
                ]
        column, order = self._sort
        reverse = order == Qt.SortOrder.DescendingOrder
        if column == self.ID:
            return rows[::-1] if reverse else list(rows)  # the ids are in ascending order already
        token_bytes = loaded.tokenizer.token_bytes
        if column == self.TOKEN:
            label = self.label
            return sorted(rows, key=lambda i: (label(i).casefold(), i), reverse=reverse)
        if column == self.HEX:
            return sorted(rows, key=lambda i: (token_bytes(i), i), reverse=reverse)
        if column == self.LENGTH:
            return sorted(rows, key=lambda i: (len(token_bytes(i)), i), reverse=reverse)
        count = self._count
        return sorted(rows, key=lambda i: (c if (c := count(i)) is not None else -1, i), reverse=reverse)

    # -- reading ------------------------------------------------------------------------------------

    def id_at(self, row: int) -> int:
        """The id shown in a row."""
        return self._rows[row]

    def row_of(self, token_id: int) -> int:
        """The row showing a token, or -1 (filtered out or not in the vocabulary)."""
        try:
            return self._rows.index(token_id)
        except ValueError:
            return -1

    def shown_ids(self) -> list[int]:
        """The ids of the rows, in order."""
        return list(self._rows)

    # -- QAbstractTableModel ------------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008 - Qt's signature
        """One row per shown token (none below the root: a flat table)."""
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008 - Qt's signature
        """The five columns."""
        return 0 if parent.isValid() else len(self.COLUMNS)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """A cell's text, tooltip, font, alignment or colours."""
        if not index.isValid() or self.loaded is None:
            return None
        row, column = index.row(), index.column()
        if not 0 <= row < len(self._rows):
            return None
        token_id = self._rows[row]
        special = token_id in self._specials
        if role == Qt.ItemDataRole.DisplayRole:
            if column == self.ID:
                return str(token_id)
            if column == self.TOKEN:
                return self.label(token_id)
            data = self.loaded.tokenizer.token_bytes(token_id)
            if column == self.HEX:
                return hex_bytes(data)
            if column == self.LENGTH:
                return str(len(data))
            if special:
                return "special"
            count = self._count(token_id)
            return f"{count:,}" if count is not None else "–"
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return self._align_right if column in (self.ID, self.LENGTH, self.COUNT) else None
        if role == Qt.ItemDataRole.FontRole:
            if column == self.TOKEN:
                return self._bold_mono if special else self._mono
            return self._mono if column == self.HEX else None
        if role == Qt.ItemDataRole.BackgroundRole:
            # The current theme's (read here, so that a change of theme shows at once).
            return QColor(theme_of().tokens.special_background) if special and column == self.TOKEN else None
        if role == Qt.ItemDataRole.ForegroundRole:
            return QColor(theme_of().tokens.special_text) if special and column == self.TOKEN else None
        if role == Qt.ItemDataRole.ToolTipRole:
            if special:
                return f"Special token {token_id}: {self.label(token_id)} (never split or merged)"
            parents = self.loaded.index.parents(token_id)
            data = self.loaded.tokenizer.token_bytes(token_id)
            byte = byte_fallback(self.loaded.tokenizer, token_id)
            if byte is not None:
                return (
                    f"Byte-fallback token {token_id}: the byte 0x{byte:02X}, for the characters no piece "
                    "covers (their UTF-8 bytes, one token each)"
                )
            if parents is None:
                return f"Token {token_id}: {len(data)} byte{'s' if len(data) != 1 else ''}"
            rank, left, right = parents
            number = merge_number(rank)
            return f"Token {token_id}: made by merge {number:,}, {self.label(left)} + {self.label(right)}"
        if role == Qt.ItemDataRole.UserRole:
            return token_id
        return None

    def headerData(  # noqa: N802 - Qt's name
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        """Column titles and their tooltips."""
        if orientation == Qt.Orientation.Horizontal and 0 <= section < len(self.COLUMNS):
            if role == Qt.ItemDataRole.DisplayRole:
                return self.COLUMNS[section]
            if role == Qt.ItemDataRole.ToolTipRole:
                return _HEADER_TIPS[section]
        return None


__all__ = ["VocabTableModel", "hex_contains", "hex_digits"]
