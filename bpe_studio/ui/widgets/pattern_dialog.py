"""A small dialog that asks for the pre-tokenization pattern of a tokenizer file that does not state one, and
for its special tokens.

A bare ``.tiktoken`` file that is not one of OpenAI's (which are recognised by content) holds no pattern,
and a wrong pattern gives other ids without any error, so the app asks rather than guesses. Nor does it name
special tokens (Llama 3's ``<|begin_of_text|>``): those the user lists, one per line, ``TOKEN`` (the next
free id) or ``TOKEN=ID``.

Example (``window`` the app's main window; the dialog waits for the user)::

    PatternDialog.ask(window, Path("mine.tiktoken"))  # PatternAnswer('cl100k', ()), or None when cancelled
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path

import regex
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from ...engine.formats.tiktoken_format import SpecialTokenSpec, parse_special_token
from ...engine.pretokenize.patterns import compile_pattern

#: The choices offered: (label, preset name or None for a custom regex).
CHOICES: tuple[tuple[str, str | None], ...] = (
    ("GPT-2 (gpt2, also r50k/p50k)", "gpt2"),
    ("GPT-4 (cl100k)", "cl100k"),
    ("GPT-4o, Llama 4 (o200k)", "o200k"),
    ("Llama 3 (llama3)", "llama3"),
    ("Custom regex…", None),
)


def regex_problem(text: str) -> str:
    """Why a typed regex cannot be a pattern, in the app's words ("" if it can).

    Example:
        >>> regex_problem("(")
        'This regex does not compile: missing ) at position 1.'
    """
    try:
        regex.compile(text)
    except regex.error as exc:
        return f"This regex does not compile: {exc}."
    try:
        compile_pattern(text)
    except ValueError as exc:
        # The engine's message quotes the regex the user sees already; keep what it says about it.
        reason = str(exc).split("' ", 1)[-1]
        return f"This regex {reason.split(';')[0]}."
    return ""


def special_token_lines(text: str) -> tuple[tuple[SpecialTokenSpec, ...], str]:
    """The special tokens typed one per line (``TOKEN`` or ``TOKEN=ID``; blank lines skipped), and why they
    cannot be used, in the app's words ("" if they can).

    Example:
        >>> special_token_lines("<|begin_of_text|>=128000\\n\\n<|end_of_text|>")
        ((('<|begin_of_text|>', 128000), ('<|end_of_text|>', None)), '')
        >>> special_token_lines("<|a|>\\n<|a|>")[1]
        "Line 2: '<|a|>' is listed twice; list each special token once."
    """
    found: list[SpecialTokenSpec] = []
    seen: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            token, i = parse_special_token(line)
        except ValueError as exc:
            return (), f"Line {number}: {exc}."
        if token in seen:
            return (), f"Line {number}: {token!r} is listed twice; list each special token once."
        seen.add(token)
        found.append((token, i))
    return tuple(found), ""


@dataclass(frozen=True)
class PatternAnswer:
    """What the user chose: the pattern (a preset name or a regex) and the special tokens to add.

    Attributes:
        pattern: The preset name or regex.
        special_tokens: ``(token, id or None for the next free id)``, in the order typed.
    """

    pattern: str
    special_tokens: tuple[SpecialTokenSpec, ...] = ()


class PatternDialog(QDialog):
    """Choose a preset pattern or type a regex; OK stays disabled while the regex does not compile.

    Attributes:
        choice: The preset combo box.
        regex: The custom regex field (enabled for "Custom regex…").
        specials: The special tokens field, one per line: ``TOKEN`` or ``TOKEN=ID``.
        problem: Why the typed regex or special tokens cannot be used (empty when they can).
    """

    def __init__(self, parent: QWidget | None, path: Path) -> None:
        super().__init__(parent)
        self.setWindowTitle("Which pattern does this tokenizer use?")
        self.setMinimumWidth(460)  # the explanation wraps into a few readable lines, not a narrow column
        layout = QVBoxLayout(self)
        intro = QLabel(
            f"<b>{html.escape(path.name)}</b> does not say how it splits text into words before merging (its "
            "pre-tokenization pattern), and a wrong choice gives other token ids. Choose the pattern it was "
            "made with."
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.choice = QComboBox(self)
        for label, name in CHOICES:
            self.choice.addItem(label, name)
        layout.addWidget(self.choice)
        self.regex = QLineEdit(self)
        self.regex.setPlaceholderText(r"a regex, e.g. \w+|\s+|[^\w\s]+")
        layout.addWidget(self.regex)
        specials_label = QLabel(
            "Special tokens, if any (the file names none), one per line: <code>TOKEN</code> for the next "
            "free id, or <code>TOKEN=ID</code>:",
            self,
        )
        specials_label.setWordWrap(True)
        layout.addWidget(specials_label)
        self.specials = QPlainTextEdit(self)
        self.specials.setPlaceholderText("<|begin_of_text|>=128000\n<|end_of_text|>")
        self.specials.setTabChangesFocus(True)
        self.specials.setFixedHeight(self.specials.fontMetrics().lineSpacing() * 5)
        specials_label.setBuddy(self.specials)
        layout.addWidget(self.specials)
        self.problem = QLabel(self)
        self.problem.setWordWrap(True)
        layout.addWidget(self.problem)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, parent=self
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.choice.currentIndexChanged.connect(self._on_changed)
        self.regex.textChanged.connect(self._on_changed)
        self.specials.textChanged.connect(self._on_changed)
        self._on_changed()

    def pattern(self) -> str | None:
        """The chosen preset name or typed regex; None while the regex is empty or does not compile."""
        name = self.choice.currentData()
        if name is not None:
            return str(name)
        text = self.regex.text()
        if not text:
            return None
        try:
            compile_pattern(text)
        except ValueError:
            return None
        return text

    def special_tokens(self) -> tuple[SpecialTokenSpec, ...] | None:
        """The special tokens typed, in order; None while a line cannot be read."""
        found, problem = special_token_lines(self.specials.toPlainText())
        return None if problem else found

    def answer(self) -> PatternAnswer | None:
        """The pattern and special tokens chosen; None while either cannot be used."""
        pattern, specials = self.pattern(), self.special_tokens()
        return None if pattern is None or specials is None else PatternAnswer(pattern, specials)

    def _on_changed(self) -> None:
        custom = self.choice.currentData() is None
        self.regex.setEnabled(custom)
        message = regex_problem(self.regex.text()) if custom and self.regex.text() else ""
        message = message or special_token_lines(self.specials.toPlainText())[1]
        self.problem.setText(message)
        self.problem.setVisible(bool(message))
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(self.answer() is not None)

    @classmethod
    def ask(cls, parent: QWidget | None, path: Path) -> PatternAnswer | None:
        """Show the dialog modally; the chosen pattern and special tokens, or None when cancelled."""
        dialog = cls(parent, path)
        try:
            if dialog.exec() != QDialog.DialogCode.Accepted:
                return None
            return dialog.answer()
        finally:
            dialog.deleteLater()


__all__ = ["CHOICES", "PatternAnswer", "PatternDialog", "special_token_lines"]
