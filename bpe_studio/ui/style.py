"""The app's look: the Fusion style with a light palette, and a small style sheet.

Kept in code (not a file) so that an installed package needs no data files.
"""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QWidget

ACCENT = "#2a6fb0"
ERROR = "#b3261e"
#: Background of the training status strip (its live widgets fill their background with it, see
#: :func:`opaque`).
STATUS_BACKGROUND = "#f3f5f8"

STYLE_SHEET = f"""
QGroupBox {{
    font-weight: bold;
    border: 1px solid #c9ced6;
    border-radius: 6px;
    margin-top: 10px;
    padding-top: 6px;
}}
QGroupBox::title {{
    subcontrol-origin: margin;
    left: 10px;
    padding: 0 4px;
}}
QGroupBox > QWidget, QGroupBox QLabel {{
    font-weight: normal;
}}
QLabel#caption {{
    color: #5b6470;
}}
QLabel#phase {{
    color: {ACCENT};
}}
QLabel#error {{
    color: {ERROR};
}}
QLineEdit[invalid="true"] {{
    border: 1px solid {ERROR};
    background: #fdf0ef;
}}
QFrame#status QLabel {{
    background: {STATUS_BACKGROUND};
}}
QFrame#status {{
    background: {STATUS_BACKGROUND};
    border: 1px solid #dde1e7;
    border-radius: 6px;
}}
QProgressBar {{
    border: 1px solid #c9ced6;
    border-radius: 4px;
    background: white;
    text-align: center;
    min-height: 20px;
}}
QProgressBar::chunk {{
    background-color: #8fb8e0;
    border-radius: 3px;
}}
QPushButton#start {{
    background-color: {ACCENT};
    color: white;
    font-weight: bold;
    border: 1px solid #1f5a91;
    border-radius: 4px;
    padding: 5px 12px;
}}
QPushButton#start:hover {{
    background-color: #3479bb;
}}
QPushButton#start:disabled {{
    background-color: #a9bfd6;
    border-color: #a9bfd6;
}}
QTableView {{
    gridline-color: #e3e6ea;
}}
"""


def opaque(widget: QWidget, background: str) -> None:
    """Let a widget that changes often paint its own background.

    A widget that does not is transparent to Qt, so repainting it repaints every ancestor beneath it
    first; for a progress bar, whose ``setValue`` repaints at once, that is the whole window, ten times a
    second while training. An opaque widget repaints alone.
    """
    palette = widget.palette()
    palette.setColor(QPalette.ColorRole.Window, QColor(background))
    widget.setPalette(palette)
    widget.setAutoFillBackground(True)


def apply_style(app: QApplication) -> None:
    """Use the Fusion style, a light palette (the same on every platform) and the style sheet."""
    app.setStyle("Fusion")
    palette = QPalette()
    colors = {
        QPalette.ColorRole.Window: "#fbfbfc",
        QPalette.ColorRole.WindowText: "#1d232b",
        QPalette.ColorRole.Base: "#ffffff",
        QPalette.ColorRole.AlternateBase: "#f4f6f9",
        QPalette.ColorRole.Text: "#1d232b",
        QPalette.ColorRole.Button: "#f0f2f5",
        QPalette.ColorRole.ButtonText: "#1d232b",
        QPalette.ColorRole.Highlight: ACCENT,
        QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.ToolTipBase: "#ffffe8",
        QPalette.ColorRole.ToolTipText: "#1d232b",
        QPalette.ColorRole.PlaceholderText: "#8a929c",
    }
    for role, color in colors.items():
        palette.setColor(role, QColor(color))
    palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text, QColor("#9aa1aa"))
    palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.WindowText, QColor("#9aa1aa"))
    palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText, QColor("#9aa1aa"))
    app.setPalette(palette)
    app.setStyleSheet(STYLE_SHEET)


__all__ = ["STATUS_BACKGROUND", "apply_style", "opaque"]
