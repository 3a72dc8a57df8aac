"""The token details panel: what one token is (id, bytes, text) and the merge that made it.

:func:`token_facts` gathers the facts (no Qt); :class:`TokenDetails` shows them, or a legend of the token
colours while nothing is hovered or selected.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from ...engine import Tokenizer
from ...engine.encoding.analysis import MergeIndex
from ...engine.humanize import MERGE_NUMBERING, merge_number
from ..present.token_format import (
    TokenPalette,
    byte_fallback,
    decoded_text,
    hex_bytes,
    is_complete_utf8,
    palette_for,
    token_name,
)
from .token_text import is_dark


@dataclass(frozen=True)
class TokenFacts:
    """What the details panel says about one token."""

    token_id: int
    data: bytes
    label: str
    hex: str
    text: str
    special: bool
    rank: int | None
    left: int | None
    right: int | None
    count: int | None
    complete: bool


def token_facts(tokenizer: Tokenizer, index: MergeIndex, token_id: int) -> TokenFacts:
    """Everything about a token: bytes, spellings, and the merge that made it.

    ``tokenizer`` is the one that produced the id (possibly a cut); ``index`` is of the full tokenizer,
    whose ordinary ids the cuts share.
    """
    data = tokenizer.token_bytes(token_id)
    special = token_id in frozenset(tokenizer.special_tokens.values())
    found = None if special else index.parents(token_id)
    rank, left, right = found if found is not None else (None, None, None)
    return TokenFacts(
        token_id=token_id,
        data=data,
        label=data.decode("utf-8") if special else token_name(tokenizer, token_id),
        hex=hex_bytes(data),
        text=decoded_text(data),
        special=special,
        rank=rank,
        left=left,
        right=right,
        count=None if special else index.count_of(token_id),
        complete=is_complete_utf8(data),
    )


class TokenDetails(QLabel):
    """A panel describing the hovered or selected token(s): id, bytes, text, merge rank and parents.

    Links to the parents (``token:ID``) are reported by ``linkActivated``.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("token_details")
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setWordWrap(True)
        self.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.LinksAccessibleByMouse
        )
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self.facts: list[TokenFacts] = []
        self._mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont).family()
        self._legend: str | None = None  # the legend's intro while it is shown, to redraw it in a new theme
        self.show_message("Hover over a token, or click one, to see it here.")

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        """Show the legend in the colours of a new theme."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and self._legend is not None:
            self.show_legend(palette_for(is_dark(self)), self._legend)

    def show_legend(self, palette: TokenPalette, intro: str = "") -> None:
        """Explain the colours (shown while no token is hovered or selected)."""
        self.facts = []
        self._legend = intro

        def chip(text: str, background: str, colour: str, extra: str = "") -> str:
            return (
                f'<span style=\'font-family: "{self._mono}"; background-color: {background}; color: {colour};'
                f" {extra}'>{html.escape(text)}</span>"
            )

        b = palette.backgrounds
        words = "".join(chip(w, b[i], palette.text) for i, w in enumerate(("Hello", "·wor", "ld", "!")))
        special = chip(
            "<|endoftext|>", palette.special_background, palette.special_text, "font-weight: bold;"
        )
        split = chip("é", b[1], palette.text, "text-decoration: underline;")
        rows = [
            (words, "each token has its own colour; the colours alternate"),
            (special, "a special token (outlined in the text)"),
            (
                split,
                "a character whose bytes are split across tokens (dotted underline); the Tokens view "
                "shows such tokens as their bytes, e.g. <0xC3>",
            ),
            (chip("· → ↵", palette.backgrounds[0], palette.text), "a space, a tab, a line end"),
            (
                chip("°", palette.backgrounds[2], palette.text),
                "a no-break space in the text (⍽ in the Tokens view)",
            ),
            (
                chip("1B", palette.backgrounds[3], palette.text, "font-size: small; border: 1px solid;"),
                "a control character in the text, by its code (ESC; <0x1B> in the Tokens view)",
            ),
        ]
        table = "".join(
            f"<tr><td style='padding: 2px 10px 2px 0'>{left}</td>"
            f"<td style='padding: 2px 0'>{html.escape(right)}</td></tr>"
            for left, right in rows
        )
        intro = intro or (
            "Hover over a token, or click one, to see its id, bytes, merge number and the two tokens it was "
            "merged from."
        )
        self.setText(f"<p>{html.escape(intro)}</p><table>{table}</table>")

    def show_message(self, text: str) -> None:
        """Show a hint instead of token details."""
        self.facts = []
        self._legend = None
        self.setText(f"<span style='color: palette(placeholder-text)'>{html.escape(text)}</span>")

    def show_tokens(
        self,
        tokenizer: Tokenizer,
        index: MergeIndex,
        token_ids: Sequence[int],
        *,
        where: str = "",
    ) -> None:
        """Describe one token, or the tokens that split one character."""
        self.facts = [token_facts(tokenizer, index, i) for i in token_ids]
        self._legend = None
        parts: list[str] = []
        if len(self.facts) > 1:
            parts.append(
                f"<p>This character's bytes are split across <b>{len(self.facts)} tokens</b>; "
                "none of them is a whole character.</p>"
            )
        for facts in self.facts:
            parts.append(self._describe(tokenizer, index, facts))
        if where:
            parts.append(f"<p style='color: palette(placeholder-text)'>{html.escape(where)}</p>")
        self.setText("".join(parts))

    def _chip(self, text: str) -> str:
        """A token as a chip in the colours of the token views (readable in light and dark themes)."""
        palette = palette_for(is_dark(self))
        return (
            f'<span style=\'font-family: "{self._mono}"; background-color: {palette.backgrounds[0]}; '
            f"color: {palette.text};'>&nbsp;{html.escape(text)}&nbsp;</span>"
        )

    def _token_link(self, tokenizer: Tokenizer, token_id: int) -> str:
        label = token_name(tokenizer, token_id)  # a SentencePiece-style model's pieces as it spells them
        return f"<a href='token:{token_id}'>{self._chip(label)}</a>&nbsp;<small>({token_id:,})</small>"

    def _describe(self, tokenizer: Tokenizer, index: MergeIndex, facts: TokenFacts) -> str:
        rows: list[tuple[str, str]] = []
        size = len(facts.data)
        rows.append(("Bytes", f"<code>{facts.hex}</code> ({size} byte{'s' if size != 1 else ''})"))
        if facts.complete:
            rows.append(("Text", f"<code>{html.escape(facts.text)}</code>"))
        else:
            rows.append(("Text", "<i>not a whole UTF-8 character</i> (shown as its bytes)"))
        if facts.special:
            rows.append(("Merge", "special token: never split or merged"))
        elif facts.rank is not None and facts.left is not None and facts.right is not None:
            total = index.merge_count
            merge = f"merge {merge_number(facts.rank):,} of {total:,}"
            if facts.count is not None:
                merge += f" · its pair was seen {facts.count:,} times"
            rows.append(("Merge", f"<span title='{html.escape(MERGE_NUMBERING)}'>{merge}</span>"))
            rows.append(
                (
                    "Merged from",
                    f"{self._token_link(tokenizer, facts.left)} + {self._token_link(tokenizer, facts.right)}",
                )
            )
        elif (byte := byte_fallback(tokenizer, facts.token_id)) is not None:
            rows.append(("Merge", f"byte fallback: the byte 0x{byte:02X}, for characters no piece covers"))
        elif tokenizer.piece_model is not None:
            rows.append(("Merge", "a piece no merge makes (a single character, or one the model defines)"))
        elif size == 1:
            rows.append(("Merge", "a single byte: in every byte-level vocabulary"))
        else:
            rows.append(("Merge", "no merge makes this token"))
        table = "".join(
            f"<tr><td style='padding-right: 10px; color: palette(placeholder-text)'>{name}</td>"
            f"<td>{value}</td></tr>"
            for name, value in rows
        )
        title = f"Token {facts.token_id:,}&nbsp; {self._chip(facts.label)}"
        return f"<p style='margin-bottom: 2px'><b>{title}</b></p><table>{table}</table>"


__all__ = ["TokenDetails", "TokenFacts", "token_facts"]
