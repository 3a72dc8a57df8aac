"""Charts of the tokenizer views (pyqtgraph): token count against vocab size, and the export charts.

Plot items are created once and updated with ``setData``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from numpy.typing import NDArray
from PySide6.QtCore import QEvent, QPointF, Qt, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QVBoxLayout, QWidget

from ..app.style import theme_of
from ..train.charts import COUNT_COLOR, LENGTH_COLOR, MEAN_COLOR, LogAxis, short_number

#: The curve of token count against vocab size (Okabe-Ito blue) and the current cut (vermilion).
CURVE_COLOR = COUNT_COLOR
CURRENT_COLOR = "#D55E00"


def style_plot(plot: pg.PlotItem, title: str, left: str, bottom: str, foreground: QColor) -> None:
    """Title, axis labels and colours of a plot, as in the Train tab's charts."""
    plot.setTitle(title, color=foreground.name(), size="10pt")
    plot.setLabel("left", left)
    plot.setLabel("bottom", bottom)
    plot.showGrid(x=True, y=True, alpha=0.15)
    plot.setMenuEnabled(False)
    plot.hideButtons()
    # A margin, so that the axis titles and the last tick label do not touch the edges (or get cut there).
    plot.layout.setContentsMargins(4, 4, 10, 6)
    for name in ("left", "bottom"):
        axis = plot.getAxis(name)
        axis.setTextPen(foreground)
        axis.setPen(pg.mkPen(foreground, width=1))
        axis.enableAutoSIPrefix(False)


class VocabCurvePlot(QWidget):
    """Token count of a text against vocab size (log scale), with the current size marked.

    Signals:
        vocab_size_clicked(int): The user clicked the plot at this vocab size.
    """

    vocab_size_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        palette = self.palette()
        foreground = palette.color(QPalette.ColorRole.Text)
        self.view = pg.PlotWidget(self, axisItems={"bottom": LogAxis("bottom")})
        # Clicked, never typed into: no tab stop (Tab went from the text to the chart, which showed nothing).
        self.view.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.view.setBackground(palette.color(QPalette.ColorRole.Base))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view)
        self.plot: pg.PlotItem = self.view.getPlotItem()
        style_plot(self.plot, "", "tokens", "vocab size (log scale)", foreground)
        self.plot.setLogMode(x=True, y=False)
        self.plot.vb.setMouseEnabled(x=False, y=False)
        self.curve: pg.PlotDataItem = self.plot.plot(pen=pg.mkPen(CURVE_COLOR, width=2))
        self.curve.setDownsampling(auto=True, method="peak")
        self.marker: pg.PlotDataItem = self.plot.plot(
            pen=None, symbol="o", symbolSize=9, symbolBrush=CURRENT_COLOR, symbolPen=pg.mkPen(foreground)
        )
        self.line = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen(CURRENT_COLOR, width=1.5))
        self.line.setVisible(False)
        self.plot.addItem(self.line, ignoreBounds=True)
        self.view.scene().sigMouseClicked.connect(self._on_scene_clicked)
        self.sizes: NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self.counts: NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self.apply_theme()

    def apply_theme(self) -> None:
        """Colour the plot in the theme of this widget's palette (again whenever the palette changes)."""
        theme = theme_of(self)
        foreground = QColor(theme.text)
        self.view.setBackground(QColor(theme.base))
        # Kept by the title for the texts set later (setTitle without a colour).
        self.plot.titleLabel.setText(self.plot.titleLabel.text, color=foreground.name())
        for name in ("left", "bottom"):
            axis = self.plot.getAxis(name)
            axis.setTextPen(foreground)
            axis.setPen(pg.mkPen(foreground, width=1))
        self.curve.setPen(pg.mkPen(theme.chart_count, width=2))
        self.marker.setSymbolBrush(QColor(theme.chart_current))
        self.marker.setSymbolPen(pg.mkPen(foreground))
        self.line.setPen(pg.mkPen(theme.chart_current, width=1.5))

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        """Follow a change of theme (the app's palette)."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self.apply_theme()

    def set_curve(self, vocab_sizes: NDArray[np.int64] | None, counts: NDArray[np.int64] | None) -> None:
        """Show a curve (None clears it)."""
        if vocab_sizes is None or counts is None or len(vocab_sizes) == 0:
            self.sizes = np.zeros(0, dtype=np.int64)
            self.counts = np.zeros(0, dtype=np.int64)
            self.curve.setData([], [])
            self.marker.setData([], [])
            self.line.setVisible(False)
            return
        self.sizes, self.counts = vocab_sizes, counts
        # Several cuts can share a vocab size (a merge that makes no new token): keep the last of each.
        keep = np.append(np.diff(vocab_sizes) != 0, True)
        self.curve.setData(vocab_sizes[keep].astype(np.float64), counts[keep].astype(np.float64))
        self.plot.enableAutoRange()

    def set_current(self, vocab_size: int, count: int | None) -> None:
        """Mark the current cut."""
        self.line.setValue(math.log10(max(vocab_size, 1)))
        self.line.setVisible(True)
        if count is None:
            self.marker.setData([], [])
        else:
            self.marker.setData([float(vocab_size)], [float(count)])

    def _on_scene_clicked(self, event: object) -> None:
        if not len(self.sizes):
            return
        pos = getattr(event, "scenePos", None)
        if pos is None:
            return
        point: QPointF = self.plot.vb.mapSceneToView(pos())
        if not self.plot.vb.sceneBoundingRect().contains(pos()):
            return
        size = round(10 ** point.x())
        low, high = int(self.sizes[0]), int(self.sizes[-1])
        self.vocab_size_clicked.emit(max(low, min(high, size)))


def running_mean(values: Sequence[float] | NDArray[np.float64], window: int) -> NDArray[np.float64]:
    """The mean of each ``window`` consecutive values (empty when there are fewer).

    Example:
        >>> running_mean([1, 2, 3, 4], 2).tolist()
        [1.5, 2.5, 3.5]
    """
    data = np.asarray(values, dtype=np.float64)
    if len(data) < window or window < 1:
        return np.zeros(0, dtype=np.float64)
    sums = np.cumsum(np.concatenate(([0.0], data)))
    result: NDArray[np.float64] = (sums[window:] - sums[:-window]) / window
    return result


__all__ = [
    "COUNT_COLOR",
    "CURRENT_COLOR",
    "CURVE_COLOR",
    "LENGTH_COLOR",
    "MEAN_COLOR",
    "VocabCurvePlot",
    "running_mean",
    "short_number",
    "style_plot",
]
