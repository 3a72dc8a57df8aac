"""Small Qt helpers shared by the views: a caption label and a non-blocking error box."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QMessageBox, QWidget


class Caption(QLabel):
    """A label naming a value next to it (styled by its object name, ``caption``)."""

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setObjectName("caption")


def open_error_box(parent: QWidget, title: str, message: str, *, name: str) -> QMessageBox:
    """Open a window-modal error box without blocking; it deletes itself when closed.

    Example (``window`` the app's main window)::

        box = open_error_box(window, "Training failed", str(exc), name="error_box")
    """
    box = QMessageBox(QMessageBox.Icon.Critical, title, message, QMessageBox.StandardButton.Ok, parent)
    box.setObjectName(name)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()
    return box
