"""The playground's "Decode ids" box: paste token ids, read the text they stand for.

:func:`parse_ids` reads ids however they were pasted (a JSON list, spaces, commas); :class:`DecodeBox`
decodes them with the *full* tokenizer, whatever the vocab-size slider is set to, since pasted ids may come
from anywhere (another program, the Copy button before the slider moved).
"""

from __future__ import annotations

import re

from PySide6.QtCore import Slot
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QGroupBox, QLabel, QLineEdit, QPlainTextEdit, QVBoxLayout, QWidget

from ...engine import Tokenizer, UnknownTokenIdError
from ..present.token_copy import format_ids

_IDS_PATTERN = re.compile(r"[\s,;\[\]()]*")
_ID = re.compile(r"-?\d+")


def parse_ids(text: str) -> list[int]:
    """Token ids from pasted text: integers separated by spaces, commas or brackets.

    Raises:
        ValueError: Something else is in the text; the message quotes it.

    Example:
        >>> parse_ids("[15496, 995]")
        [15496, 995]
    """
    ids: list[int] = []
    position = 0
    while position < len(text):
        position = _IDS_PATTERN.match(text, position).end()  # type: ignore[union-attr]
        if position >= len(text):
            break
        found = _ID.match(text, position)
        if found is None:
            bad = text[position : position + 12]
            raise ValueError(f"not a token id: {bad!r} (paste numbers separated by spaces or commas)")
        ids.append(int(found.group()))
        position = found.end()
    return ids


#: The text whose ids the decode box's placeholder shows as an example.
DECODE_EXAMPLE = "Hello world"


def decode_placeholder(tokenizer: Tokenizer | None) -> str:
    """The decode box's placeholder: ids that this tokenizer really decodes (those of "Hello world").

    Example:
        >>> decode_placeholder(None)
        'Open a tokenizer, then paste token ids here'
    """
    if tokenizer is None:
        return "Open a tokenizer, then paste token ids here"
    try:
        ids = tokenizer.encode_ordinary(DECODE_EXAMPLE)
    except (ValueError, KeyError):  # a tokenizer without every byte: no example rather than a wrong one
        return "Paste token ids (full vocabulary)"
    return f"Paste ids (full vocabulary), e.g. {format_ids(ids)} for {DECODE_EXAMPLE!r}"


class DecodeBox(QGroupBox):
    """A line for pasted ids, the text they decode to, and a status line (counts, or what is wrong)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Decode ids", parent)
        self._tokenizer: Tokenizer | None = None
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        layout = QVBoxLayout(self)
        self.edit = QLineEdit(self)
        self.edit.setFont(mono)
        self.edit.setPlaceholderText(decode_placeholder(None))
        self.edit.setClearButtonEnabled(True)
        self.edit.textChanged.connect(self._on_edit_changed)
        layout.addWidget(self.edit)
        self.output = QPlainTextEdit(self)
        self.output.setObjectName("decode_output")
        self.output.setReadOnly(True)
        self.output.setMaximumHeight(70)
        self.output.setPlaceholderText("The decoded text appears here.")
        layout.addWidget(self.output)
        self.status = QLabel(self)
        self.status.setObjectName("caption")
        self.status.setWordWrap(True)
        layout.addWidget(self.status)

    def set_tokenizer(self, tokenizer: Tokenizer | None) -> None:
        """Decode with this (full) tokenizer from now on (None: none), and decode the ids again."""
        self._tokenizer = tokenizer
        self.edit.setPlaceholderText(decode_placeholder(tokenizer))
        self.edit.setToolTip(
            ""
            if tokenizer is None
            else f"Decodes with the full tokenizer ({tokenizer.vocab_size:,} tokens), whatever the "
            "vocab-size slider is set to"
        )
        self.refresh()

    def refresh(self) -> None:
        """Decode the ids in the box again."""
        self._on_edit_changed(self.edit.text())

    @Slot(str)
    def _on_edit_changed(self, text: str) -> None:
        tokenizer = self._tokenizer
        if not text.strip():
            self.output.setPlainText("")
            self.status.setText("")
            return
        if tokenizer is None:
            self.output.setPlainText("")
            self.status.setText("Open a tokenizer to decode ids.")
            return
        try:
            ids = parse_ids(text)
            data = tokenizer.decode_bytes(ids)
        except (ValueError, UnknownTokenIdError) as exc:
            self.output.setPlainText("")
            self.status.setText(f"⚠ {exc}")
            return
        decoded = data.decode("utf-8", errors="replace")
        self.output.setPlainText(decoded)
        plural = "s" if len(ids) != 1 else ""
        note = f"{len(ids):,} id{plural} → {len(decoded):,} characters, {len(data):,} bytes"
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            note += " (some bytes are not whole UTF-8 characters: shown as �)"
        self.status.setText(note)


__all__ = ["DECODE_EXAMPLE", "DecodeBox", "decode_placeholder", "parse_ids"]
