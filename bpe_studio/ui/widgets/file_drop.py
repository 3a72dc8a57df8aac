"""Opening files by dropping them: which dragged data are local files, and a widget that accepts them.

The playground, vocabulary and compare tabs derive from :class:`FileDropWidget` (and the compare tab's corpus
mode, which adds dropped files to its corpus list); the text views inside them
(:class:`~bpe_studio.ui.widgets.token_text.TokenTextEdit`) accept dropped files themselves, with the same
:func:`dropped_paths`, so a drop is handled the same way wherever it lands.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QMimeData, Signal
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QWidget


def dropped_paths(mime: QMimeData) -> list[Path]:
    """The local files or folders in dragged data (empty for anything else, e.g. text or a web link)."""
    if not mime.hasUrls():
        return []
    urls = mime.urls()
    if not urls or not all(url.isLocalFile() for url in urls):
        return []
    return [Path(url.toLocalFile()) for url in urls]


class FileDropWidget(QWidget):
    """A tab (or part of one) that accepts files and folders dropped anywhere on it and reports them.

    The playground, vocabulary and compare tabs derive from it, so that a drop outside their text views
    (which report drops themselves, see :class:`~bpe_studio.ui.widgets.token_text.TokenTextEdit`) is handled
    the same way on each; so does the compare tab's corpus mode, which adds the files it reports to its list.

    Signals:
        files_dropped(list): Local files or folders were dropped on the widget (a list of ``Path``).
    """

    files_dropped = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAcceptDrops(True)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 - Qt's name
        """Accept tokenizer files and folders."""
        if dropped_paths(event.mimeData()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 - Qt's name
        """Report dropped files by :attr:`files_dropped` (the main window opens them)."""
        paths = dropped_paths(event.mimeData())
        if paths:
            event.acceptProposedAction()
            self.files_dropped.emit(paths)


__all__ = ["FileDropWidget", "dropped_paths"]
