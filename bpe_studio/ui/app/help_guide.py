"""Help ▸ Guide (F1): a short text per view saying what it shows and how to read it.

A non-modal window, so the guide can stay open beside the view it explains; it opens at the section of
the current tab.

Example:
    >>> [section.title for section in GUIDE][:2]
    ['Train', 'Playground']
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout, QWidget


@dataclass(frozen=True)
class GuideSection:
    """What one view shows.

    Attributes:
        title: The view's tab title.
        intro: One sentence on what the view is for.
        points: Short lines, one per part of the view.
    """

    title: str
    intro: str
    points: tuple[str, ...]

    @property
    def anchor(self) -> str:
        """The section's anchor in the guide's HTML (``"train"`` for "Train")."""
        return self.title.lower().replace(" ", "-")


GUIDE: tuple[GuideSection, ...] = (
    GuideSection(
        "Train",
        "Train a byte-level BPE tokenizer on your text files and watch it learn.",
        (
            "Corpus and settings on the left: the files, the vocabulary size, special tokens (never merged) "
            "and the pre-tokenization pattern. File ▸ Open demo corpus fills them in.",
            "Pair count at each merge: how often the pair merged at each step occurred (log scale); it falls "
            "as the common pairs are used up.",
            "Length of each new token: darker cells mean more of the new tokens have that many bytes; the "
            "line is a running mean. Tokens get longer as training goes on.",
            "Throughput: megabytes counted per second, then merges per second.",
            "The merges table lists every merge in the order it was made, with its count; Open in "
            "Playground and Save use the result.",
        ),
    ),
    GuideSection(
        "Playground",
        "Type or paste text and see how the tokenizer cuts it.",
        (
            "The text is coloured by token: each colour band is one token. A space shows as ·, a tab as → "
            "and a line end as ↵; bytes that are part of a character show as <0xNN>.",
            "Hover or click a token to see its id, bytes, merge rank and how it was built.",
            "Below: the token count, characters and bytes per token, and the ids (copy them as JSON).",
            "The vocab-size slider cuts the tokenizer to its first merges; the curve beside it shows the "
            "token count of the text at every vocabulary size.",
            "The decode box turns pasted ids back into text with the full tokenizer.",
        ),
    ),
    GuideSection(
        "Vocabulary",
        "Every token of the tokenizer, searchable and sortable.",
        (
            "Search by text, or by bytes with 0x… (whole bytes: 0xe2 finds tokens containing the byte E2).",
            "The merge tree shows how the selected token was built: the token on top, the two parts of each "
            "merge below it, down to single bytes. Click a box to select that token.",
        ),
    ),
    GuideSection(
        "Compare",
        "Two tokenizers on the same text, side by side.",
        (
            "Each side shows the text cut by its tokenizer, with its token count, bytes per token and tokens "
            "per word.",
            "Spans where the two cut the text differently are outlined on both sides, with a count per side.",
            "Below: how many tokens cover the same bytes on both sides, and the first merge (by rank) where "
            "the two merge lists differ.",
        ),
    ),
    GuideSection(
        "Side by side",
        "Any number of tokenizers on one text, one row each.",
        (
            "Every tokenizer you open gets a row; “+ Add…” adds one (opened before, a file, GPT-2 or from "
            "the Hugging Face cache) and a row's × drops it.",
            "Each row shows the text cut by its tokenizer, its token count, and bytes and characters per "
            "token.",
            "Spans a row cuts differently from the reference row (the first, or the one in “Outline "
            "against”) are outlined.",
        ),
    ),
    GuideSection(
        "Chat",
        "Chat messages rendered through the model's chat template, in its tokens.",
        (
            "The template is the chat_template of the tokenizer_config.json beside the tokenizer.json (or "
            "its chat_template.jinja), rendered with Jinja2 as Hugging Face's transformers does; a tokenizer "
            "without one (GPT-2) uses the built-in ChatML layout.",
            "Edit a message in place (double-click); Add message and Remove message change the list.",
            "The special tokens the template put in are outlined and counted; the token count is measured "
            "against the context length (the model's model_max_length when it states one).",
        ),
    ),
)


def guide_html() -> str:
    """The guide as HTML, one anchored section per view."""
    parts = ["<h2>What each view shows</h2>"]
    for section in GUIDE:
        parts.append(f"<h3><a name='{section.anchor}'></a>{html.escape(section.title)}</h3>")
        parts.append(f"<p>{html.escape(section.intro)}</p><ul>")
        parts.extend(f"<li>{html.escape(point)}</li>" for point in section.points)
        parts.append("</ul>")
    return "\n".join(parts)


class HelpGuide(QDialog):
    """The guide's window (non-modal); :meth:`show_section` opens it at one view's section."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("help_guide")
        self.setWindowTitle("BPE Studio guide")
        self.setModal(False)
        self.browser = QTextBrowser(self)
        self.browser.setOpenExternalLinks(True)
        self.browser.setHtml(guide_html())
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.browser)
        layout.addWidget(buttons)
        self.resize(560, 620)

    def show_section(self, title: str) -> None:
        """Show the window (raised) at the section of the view titled ``title`` (the top if none)."""
        anchor = next((s.anchor for s in GUIDE[1:] if s.title == title.replace("&", "")), "")
        self.show()
        self.activateWindow()
        if anchor:
            self.browser.scrollToAnchor(anchor)
        else:  # the first view, or none: the top, with the guide's title
            self.browser.verticalScrollBar().setValue(0)
        self.browser.setFocus(Qt.FocusReason.OtherFocusReason)


__all__ = ["GUIDE", "GuideSection", "HelpGuide", "guide_html"]
