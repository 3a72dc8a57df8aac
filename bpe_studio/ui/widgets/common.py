"""Small Qt helpers shared by the views: a caption label, a non-blocking error box, a scroll area that
lets a panel be shorter than its contents and a single-shot timer that puts work off."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QSize, Qt, QTimer
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QApplication, QFrame, QLabel, QMessageBox, QScrollArea, QStyle, QWidget


class Caption(QLabel):
    """A label naming a value next to it (styled by its object name, ``caption``)."""

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setObjectName("caption")


def delay_timer(parent: QObject, interval_ms: int, on_timeout: Callable[[], None]) -> QTimer:
    """A single-shot timer of ``interval_ms`` calling ``on_timeout``: ``start()`` (again) puts the call off,
    so a burst of edits makes one call after the last (0 ms: after the events already queued).

    Example (in a view's ``__init__``)::

        self.timer = delay_timer(self, 150, self._on_timer_timeout)
    """
    timer = QTimer(parent)
    timer.setSingleShot(True)
    timer.setInterval(interval_ms)
    timer.timeout.connect(on_timeout)
    return timer


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


class _Holder(QWidget):
    """Holds a scrolled panel at the scroll area's size, never below the panel's minimum size.

    QScrollArea sizes a panel whose layout has a height-for-width (any word-wrapped label) at its preferred
    height, so it would scroll where its minimum fits; the holder has no layout, so the area uses the
    minimum size the holder reports: the panel's.
    """

    def __init__(self, panel: QWidget) -> None:
        super().__init__()
        self.panel = panel
        panel.setParent(self)
        panel.installEventFilter(self)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        """The panel's minimum size; at the holder's width, the height its wrapped lines need."""
        hint = self.panel.minimumSizeHint().expandedTo(self.panel.minimumSize())
        layout = self.panel.layout()
        if layout is not None and layout.hasHeightForWidth():
            width = max(self.width(), hint.width())
            hint.setHeight(max(hint.height(), layout.minimumHeightForWidth(width)))
        return hint

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        """The panel's size hint."""
        return self.panel.sizeHint()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        """The panel fills the holder; a new width may wrap its lines to another height."""
        super().resizeEvent(event)
        self.panel.setGeometry(self.rect())
        if event.oldSize().width() != event.size().width():
            self._ask_area()

    def _ask_area(self) -> None:
        """Make the scroll area size the holder again (its minimum height may have changed)."""
        self.updateGeometry()
        area = self.parentWidget()
        while area is not None and not isinstance(area, QScrollArea):
            area = area.parentWidget()
        if area is not None:
            QApplication.postEvent(area, QEvent(QEvent.Type.LayoutRequest))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        """A change of the panel's minimum size resizes the holder (through the scroll area)."""
        if watched is self.panel and event.type() == QEvent.Type.LayoutRequest:
            self._ask_area()
        return False


class VerticalScroll(QScrollArea):
    """A panel that scrolls up and down when the window is too short for it, never sideways.

    Its minimum height is small, so a tall panel (a form, a column of boxes) no longer sets the window's
    minimum height (issue 21: the window could not be smaller than 1150×751); its minimum width is the
    panel's, plus room for the scroll bar, so nothing is cut off at the side. While there is room, the panel
    has all of it and no scroll bar shows.

    Example (in a view's layout)::

        layout.addWidget(VerticalScroll(form, parent=self))
    """

    #: The least height a scrolled panel keeps (px): a few lines of it stay visible.
    MIN_HEIGHT = 80

    def __init__(self, widget: QWidget, *, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(f"{widget.objectName() or 'panel'}_scroll")
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.panel = widget
        self.setWidget(_Holder(widget))
        self.viewport().setAutoFillBackground(False)  # the window's background, as before
        holder = self.widget()
        if holder is not None:
            holder.setAutoFillBackground(False)

    def _bar_width(self) -> int:
        return self.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent, None, self)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        """The panel's minimum width (and the scroll bar's), and a small height."""
        wanted = self.panel.minimumSizeHint().expandedTo(self.panel.minimumSize())
        return QSize(wanted.width() + self._bar_width(), min(wanted.height(), self.MIN_HEIGHT))

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        """The panel's own size hint (and room for the scroll bar)."""
        return self.panel.sizeHint() + QSize(self._bar_width(), 0)
