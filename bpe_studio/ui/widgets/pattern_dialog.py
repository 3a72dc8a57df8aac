"""A small dialog that asks for the pre-tokenization pattern of a tokenizer file that does not state one.

A bare ``.tiktoken`` file that is not one of OpenAI's (which are recognised by content) holds no pattern,
and a wrong pattern gives other ids without any error, so the app asks rather than guesses.

Example (``window`` the app's main window; the dialog waits for the user)::

    PatternDialog.ask(window, Path("mine.tiktoken"))  # 'cl100k', or None when cancelled
"""

from __future__ import annotations

import html
from pathlib import Path

import regex
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from ...engine.pretokenize.patterns import compile_pattern

#: The choices offered: (label, preset name or None for a custom regex).
CHOICES: tuple[tuple[str, str | None], ...] = (
    ("GPT-2 (gpt2, also r50k/p50k)", "gpt2"),
    ("GPT-4 (cl100k)", "cl100k"),
    ("GPT-4o (o200k)", "o200k"),
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


class PatternDialog(QDialog):
    """Choose a preset pattern or type a regex; OK stays disabled while the regex does not compile.

    Attributes:
        choice: The preset combo box.
        regex: The custom regex field (enabled for "Custom regex…").
        problem: Why the typed regex cannot be used (empty when it can).
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

    def _on_changed(self) -> None:
        custom = self.choice.currentData() is None
        self.regex.setEnabled(custom)
        message = regex_problem(self.regex.text()) if custom and self.regex.text() else ""
        self.problem.setText(message)
        self.problem.setVisible(bool(message))
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(self.pattern() is not None)

    @classmethod
    def ask(cls, parent: QWidget | None, path: Path) -> str | None:
        """Show the dialog modally; the chosen pattern, or None when cancelled."""
        dialog = cls(parent, path)
        try:
            if dialog.exec() != QDialog.DialogCode.Accepted:
                return None
            return dialog.pattern()
        finally:
            dialog.deleteLater()


__all__ = ["CHOICES", "PatternDialog"]
