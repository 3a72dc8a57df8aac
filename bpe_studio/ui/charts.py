"""Live training charts (pyqtgraph): each merge's count, each new token's length, and throughput over time.

The plot items are created once. Data arrive in batches (:meth:`TrainCharts.add_merges`,
:meth:`TrainCharts.add_throughput`) into numpy arrays grown by doubling; :meth:`TrainCharts.refresh`, called
from the view's timer, hands them to the plot items only when something changed. Nothing is drawn per merge.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from numpy.typing import NDArray
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QVBoxLayout, QWidget

# Colours (colour-blind friendly: the Okabe-Ito palette).
COUNT_COLOR = "#0072B2"
LENGTH_COLOR = "#E69F00"
MEAN_COLOR = "#A0522D"
BYTES_RATE_COLOR = "#009E73"
MERGE_RATE_COLOR = "#CC79A7"

#: Merges the running mean of token length is taken over.
MEAN_WINDOW = 200


class GrowingArray:
    """A 1-D numpy array that grows by doubling; :attr:`values` is a view of the filled part.

    Example:
        >>> a = GrowingArray()
        >>> a.extend([1, 2, 3])
        >>> a.values.tolist()
        [1.0, 2.0, 3.0]
    """

    def __init__(self, capacity: int = 1024) -> None:
        self._data: NDArray[np.float64] = np.empty(capacity, dtype=np.float64)
        self._size = 0

    def __len__(self) -> int:
        return self._size

    @property
    def values(self) -> NDArray[np.float64]:
        """The filled part (a view: copy it to keep it)."""
        return self._data[: self._size]

    def extend(self, values: Sequence[float] | NDArray[np.float64]) -> None:
        """Append values."""
        n = len(values)
        needed = self._size + n
        if needed > len(self._data):
            capacity = len(self._data)
            while capacity < needed:
                capacity *= 2
            grown = np.empty(capacity, dtype=np.float64)
            grown[: self._size] = self._data[: self._size]
            self._data = grown
        self._data[self._size : needed] = values
        self._size = needed

    def append(self, value: float) -> None:
        """Append one value."""
        self.extend((value,))

    def clear(self) -> None:
        """Forget every value (keeping the capacity)."""
        self._size = 0


class StepRate:
    """Turns readings of a growing amount (bytes, merges) into average rates over windows of some length.

    Each window's rate is drawn as a horizontal step from its start to its end: an honest picture of
    throughput when readings arrive irregularly (e.g. one per counted chunk).

    Example:
        >>> r = StepRate(min_window=0.5)
        >>> r.start(0.0, 0)
        >>> r.update(0.2, 100) is None
        True
        >>> r.update(1.0, 600)
        (0.0, 1.0, 600.0)
    """

    def __init__(self, min_window: float) -> None:
        self.min_window = min_window
        self._mark: tuple[float, float] | None = None

    @property
    def started(self) -> bool:
        """Whether :meth:`start` was called."""
        return self._mark is not None

    def start(self, seconds: float, amount: float) -> None:
        """Begin measuring at a reading."""
        self._mark = (seconds, amount)

    def update(
        self, seconds: float, amount: float, *, force: bool = False
    ) -> tuple[float, float, float] | None:
        """Take a reading; returns ``(start, end, rate)`` when a window closed (always with ``force``)."""
        if self._mark is None:
            self._mark = (seconds, amount)
            return None
        t0, a0 = self._mark
        span = seconds - t0
        if span <= 0 or (span < self.min_window and not force) or (force and amount == a0):
            return None
        self._mark = (seconds, amount)
        return t0, seconds, (amount - a0) / span


def _style_plot(plot: pg.PlotItem, title: str, left: str, bottom: str, foreground: QColor) -> None:
    plot.setTitle(title, color=foreground.name(), size="10pt")
    plot.setLabel("left", left)
    plot.setLabel("bottom", bottom)
    plot.showGrid(x=True, y=True, alpha=0.15)
    plot.setMenuEnabled(False)
    plot.hideButtons()
    for name in ("left", "bottom", "right"):
        axis = plot.getAxis(name)
        axis.setTextPen(foreground)
        axis.setPen(pg.mkPen(foreground, width=1))
        axis.enableAutoSIPrefix(False)


class TrainCharts(QWidget):
    """Three live plots of a training run, fed in batches and redrawn by :meth:`refresh`."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        palette = self.palette()
        background = palette.color(QPalette.ColorRole.Base)
        foreground = palette.color(QPalette.ColorRole.Text)
        self.view = pg.GraphicsLayoutWidget(self)
        self.view.setBackground(background)
        self.view.ci.setSpacing(12)
        self.view.ci.setContentsMargins(4, 4, 4, 4)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view)

        # 1. Each merge's count, log scale.
        self.count_plot: pg.PlotItem = self.view.addPlot(row=0, col=0)
        _style_plot(self.count_plot, "Pair count at each merge", "count", "merge #", foreground)
        self.count_plot.setLogMode(x=False, y=True)
        self.count_curve: pg.PlotDataItem = self.count_plot.plot(pen=pg.mkPen(COUNT_COLOR, width=2))
        self.count_curve.setDownsampling(auto=True, method="peak")
        self.count_curve.setClipToView(True)

        # 2. Each new token's length in bytes, and its running mean.
        self.length_plot: pg.PlotItem = self.view.addPlot(row=0, col=1)
        _style_plot(self.length_plot, "Length of each new token", "bytes", "merge #", foreground)
        length_brush = QColor(LENGTH_COLOR)
        length_brush.setAlpha(90)
        self.length_points = pg.ScatterPlotItem(
            size=3, pen=None, brush=length_brush, pxMode=True, hoverable=False, name="token"
        )
        self.length_plot.addItem(self.length_points)
        self.length_mean: pg.PlotDataItem = self.length_plot.plot(pen=pg.mkPen(MEAN_COLOR, width=2))
        legend = self.length_plot.addLegend(offset=(8, 8), labelTextColor=foreground, brush=background)
        legend.addItem(self.length_points, "new token")
        legend.addItem(self.length_mean, f"mean of {MEAN_WINDOW}")

        # 3. Throughput over time: MB/s while counting (left axis), merges/s while merging (right axis).
        self.rate_plot: pg.PlotItem = self.view.addPlot(row=0, col=2)
        _style_plot(self.rate_plot, "Throughput", "MB/s (counting)", "seconds", foreground)
        self.rate_plot.showAxis("right")
        self.rate_plot.setLabel("right", "merges/s (merging)")
        self.merge_rate_box = pg.ViewBox()
        self.rate_plot.scene().addItem(self.merge_rate_box)
        self.rate_plot.getAxis("right").linkToView(self.merge_rate_box)
        self.merge_rate_box.setXLink(self.rate_plot)
        self.rate_plot.vb.sigResized.connect(self._on_rate_plot_resized)
        rate_legend = self.rate_plot.addLegend(offset=(8, 8), labelTextColor=foreground, brush=background)
        self.bytes_rate_curve: pg.PlotDataItem = self.rate_plot.plot(
            pen=pg.mkPen(BYTES_RATE_COLOR, width=2), name="MB/s"
        )
        self.merge_rate_curve = pg.PlotDataItem(pen=pg.mkPen(MERGE_RATE_COLOR, width=2))
        self.merge_rate_box.addItem(self.merge_rate_curve)
        rate_legend.addItem(self.merge_rate_curve, "merges/s")
        for plot in (self.count_plot, self.length_plot, self.rate_plot):
            plot.vb.setMouseEnabled(x=True, y=False)

        self._counts = GrowingArray()
        self._lengths = GrowingArray()
        self._bytes_t = GrowingArray(64)
        self._bytes_rate = GrowingArray(64)
        self._merge_t = GrowingArray(256)
        self._merge_rate = GrowingArray(256)
        self._points_shown = 0
        self._dirty = False

    def _on_rate_plot_resized(self) -> None:
        self.merge_rate_box.setGeometry(self.rate_plot.vb.sceneBoundingRect())
        self.merge_rate_box.linkedViewChanged(self.rate_plot.vb, self.merge_rate_box.XAxis)

    # -- data -------------------------------------------------------------------------------------

    @property
    def merge_count(self) -> int:
        """How many merges the charts hold."""
        return len(self._counts)

    def reset(self, total_merges: int | None = None) -> None:
        """Clear every chart; with ``total_merges``, fix the merge axes' range to it."""
        for array in (
            self._counts,
            self._lengths,
            self._bytes_t,
            self._bytes_rate,
            self._merge_t,
            self._merge_rate,
        ):
            array.clear()
        self._points_shown = 0
        self.length_points.clear()
        self._dirty = True
        self.set_total_merges(total_merges)
        self.refresh()

    def set_total_merges(self, total: int | None) -> None:
        """Show the merge axes from 0 to ``total`` (or fit them to the data when None)."""
        for plot in (self.count_plot, self.length_plot):
            if total:
                plot.setXRange(0, total, padding=0.02)
                plot.enableAutoRange(x=False, y=True)
            else:
                plot.enableAutoRange(x=True, y=True)

    def add_merges(self, counts: Sequence[int], lengths: Sequence[int]) -> None:
        """Buffer a batch of merges: each one's pair count and new token length."""
        if counts:
            self._counts.extend(counts)
            self._lengths.extend(lengths)
            self._dirty = True

    def add_bytes_rate(self, start: float, end: float, mb_per_s: float) -> None:
        """Buffer the counting throughput (MB/s) between two times (seconds since the start)."""
        self._bytes_t.extend((start, end))
        self._bytes_rate.extend((mb_per_s, mb_per_s))
        self._dirty = True

    def add_merge_rate(self, start: float, end: float, merges_per_s: float) -> None:
        """Buffer the merging throughput (merges/s) between two times (seconds since the start)."""
        self._merge_t.extend((start, end))
        self._merge_rate.extend((merges_per_s, merges_per_s))
        self._dirty = True

    def refresh(self) -> None:
        """Hand new data to the plot items (does nothing when nothing changed)."""
        if not self._dirty:
            return
        self._dirty = False
        n = len(self._counts)
        x = np.arange(n, dtype=np.float64)
        self.count_curve.setData(x, self._counts.values)
        lengths = self._lengths.values
        if n > self._points_shown:
            self.length_points.addPoints(x=x[self._points_shown :], y=lengths[self._points_shown :].copy())
            self._points_shown = n
        if n >= 1:
            window = min(MEAN_WINDOW, n)
            sums = np.cumsum(lengths)
            mean = (sums[window - 1 :] - np.concatenate(([0.0], sums[: n - window]))) / window
            self.length_mean.setData(x[window - 1 :], mean)
        else:
            self.length_mean.setData([], [])
        self.bytes_rate_curve.setData(self._bytes_t.values.copy(), self._bytes_rate.values.copy())
        self.merge_rate_curve.setData(self._merge_t.values.copy(), self._merge_rate.values.copy())
        ends = [float(t.values[-1]) for t in (self._bytes_t, self._merge_t) if len(t)]
        if ends:
            self.rate_plot.setXRange(0, max(ends), padding=0.02)
        # Both rate axes start at 0, so that the steps' heights compare honestly.
        for box, rates in ((self.rate_plot.vb, self._bytes_rate), (self.merge_rate_box, self._merge_rate)):
            top = float(rates.values.max()) if len(rates) else 1.0
            box.setYRange(0, top * 1.1 or 1.0, padding=0)

    def data_counts(self) -> NDArray[np.float64]:
        """A copy of the per-merge counts the charts hold (for tests)."""
        counts: NDArray[np.float64] = self._counts.values.copy()
        return counts


__all__ = ["GrowingArray", "StepRate", "TrainCharts"]
