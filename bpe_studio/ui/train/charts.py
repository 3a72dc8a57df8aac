"""Live training charts (pyqtgraph): each merge's count, each new token's length, and throughput over time.

The plot items are created once. Data arrive in batches (:meth:`TrainCharts.add_merges`,
:meth:`TrainCharts.add_bytes_rate`, :meth:`TrainCharts.add_merge_rate`) into numpy arrays grown by doubling;
:meth:`TrainCharts.refresh`, called from the view's timer, hands them to the plot items only when something
changed. Nothing is drawn per merge.

Cheap frames matter: the GUI thread shares the GIL with the merge loop, so every millisecond spent here is
taken from training. Hence axis ranges that change in coarse steps (an axis whose range changes is laid out
and drawn again), no grid lines (they make every axis repaint with the data), thin cosmetic pens, and token
lengths drawn as a density image updated in place (O(batch) per frame) rather than as thousands of points.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from numpy.typing import NDArray
from PySide6.QtCore import QBuffer, QByteArray, QCoreApplication, QEvent, QIODevice, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QImage, QPainter, QPaintEvent, QPalette, QResizeEvent
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene, QGraphicsWidget, QVBoxLayout, QWidget

from ..app.style import theme_of

# Colours (colour-blind friendly: the Okabe-Ito palette) of the light theme, as exported charts use them; on
# screen the charts take the current theme's (:class:`bpe_studio.ui.app.style.Theme`).
COUNT_COLOR = "#0072B2"
LENGTH_COLOR = "#E69F00"
MEAN_COLOR = "#1d232b"
BYTES_RATE_COLOR = "#009E73"
MERGE_RATE_COLOR = "#CC79A7"
#: A superword run's transition (dashed, on the merge charts; readable on the light and the dark theme).
TRANSITION_COLOR = "#CC79A7"
#: What the transition line is (its tooltip; the learn chart's too).
TRANSITION_TIP = (
    "Superwords start here: the merges after this line may span the spaces between words (SuperBPE)"
)

#: Merges the running mean of token length is taken over.
MEAN_WINDOW = 200
#: Columns of the token-length density image (merges are binned into this many columns at most).
LENGTH_COLUMNS = 400
#: Points a curve is drawn with at most (its extremes per bin are kept): about two per pixel column.
CURVE_POINTS = 1000
#: The axes of empty charts: counts from 1 to 10^4, 0 to 10 seconds.
EMPTY_COUNT_DECADES = 4
EMPTY_SECONDS = 10.0
#: ... and merges, when the run's total is not known yet.
EMPTY_MERGES = 1000
#: Fixed width of the vertical axes (pixels): tick labels of another width never re-lay the charts out.
AXIS_WIDTH = 58


def peak_downsample(
    x: NDArray[np.float64], y: NDArray[np.float64], points: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Reduce a curve to at most about ``points`` points, keeping each bin's minimum and maximum.

    Example:
        >>> xs, ys = peak_downsample(np.arange(10.0), np.arange(10.0), 4)
        >>> ys.tolist()
        [0.0, 4.0, 5.0, 9.0]
    """
    n = len(x)
    if n <= points:
        return x, y
    size = math.ceil(n / (points // 2))
    bins = n // size
    body = y[: bins * size].reshape(bins, size)
    lows, highs = body.argmin(axis=1), body.argmax(axis=1)
    starts = np.arange(bins) * size
    first, second = np.minimum(lows, highs) + starts, np.maximum(lows, highs) + starts
    index = np.empty(2 * bins, dtype=np.intp)
    index[0::2], index[1::2] = first, second
    if bins * size < n:  # the last, partial bin
        tail = np.arange(bins * size, n)
        index = np.concatenate((index, tail[[int(y[tail].argmin()), int(y[tail].argmax())]]))
        index.sort(kind="stable")
    return x[index], y[index]


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


_NICE_STEPS = (1.0, 1.5, 2.0, 3.0, 5.0, 7.5, 10.0)


def nice_ceil(value: float) -> float:
    """The smallest of 1, 1.5, 2, 3, 5 or 7.5 times a power of ten that is at least ``value`` (> 0).

    Axis ranges are rounded up to such values, so they change (and axes are redrawn) only now and then.

    Example:
        >>> nice_ceil(0.9), nice_ceil(11), nice_ceil(2400)
        (1.0, 15.0, 3000.0)
    """
    if value <= 0:
        return 1.0
    power = 10.0 ** math.floor(math.log10(value))
    for step in _NICE_STEPS:
        if step * power >= value * (1 - 1e-12):
            return step * power
    return 10.0 * power  # pragma: no cover - rounding


def short_number(value: float) -> str:
    """A tick label: ``256``, ``1k``, ``20k``, ``1.5M``.

    Example:
        >>> [short_number(v) for v in (256, 1000, 2500, 50000, 1500000, 0.5)]
        ['256', '1k', '2.5k', '50k', '1.5M', '0.5']
    """
    for size, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= size:
            return f"{value / size:.3g}{suffix}"
    return f"{value:.3g}"


#: log10 of the mantissas that get a label on a roomy log axis (1, 2 and 5), and of the others (ticks only).
_LOG_LABELLED = tuple(math.log10(m) for m in (1, 2, 5))
_LOG_OTHERS = tuple(math.log10(m) for m in (3, 4, 6, 7, 8, 9))


class LogAxis(pg.AxisItem):  # type: ignore[misc]
    """An axis whose log mode labels only what fits: every decade (or every 2nd, 5th...), plus 2 and 5 when
    there is room, as short numbers (``100``, ``2k``, ``50k``); other ticks are unlabelled. pyqtgraph's own
    log axis labels every tick (``6·10²7·10²8·10²9·10²10³``). In linear mode this is pyqtgraph's axis.

    Example (in a running Qt application)::

        axis = LogAxis("bottom")
        axis.setLogMode(True)
    """

    def __init__(self, orientation: str, **kwargs: object) -> None:
        super().__init__(orientation, **kwargs)
        self._labels: dict[float, str] = {}

    def _label_extent(self, samples: Sequence[str]) -> float:
        """Pixels a label takes along the axis, with a gap to its neighbour."""
        font = self.style["tickFont"] or self.font()
        metrics = QFontMetricsF(font if isinstance(font, QFont) else QFont())
        if self.orientation in ("left", "right"):
            return metrics.height() * 1.5
        widest = max((metrics.horizontalAdvance(s) for s in samples), default=0.0)
        return widest + metrics.horizontalAdvance("MM")

    def logTickValues(  # noqa: N802 - pyqtgraph's name
        self, min_val: float, max_val: float, size: float, std_ticks: object
    ) -> list[tuple[float | None, list[float]]]:
        """Tick levels of a log axis from ``min_val`` to ``max_val`` (log10 units), ``size`` pixels long:
        labelled ticks first, then the rest."""
        self._labels = {}
        if not max_val > min_val or size <= 0 or not math.isfinite(min_val) or not math.isfinite(max_val):
            return []
        per_decade = size / (max_val - min_val)
        first, last = math.floor(min_val), math.ceil(max_val)
        gap = self._label_extent([short_number(5 * 10.0**d) for d in range(first, last + 1)])
        step = next(s for s in (1, 2, 3, 5, 10, 20, 50, 100, 10**9) if per_decade * s >= gap)
        with_25 = step == 1 and per_decade * math.log10(2) >= gap
        labelled: list[float] = []
        others: list[float] = []
        for decade in range(first, last + 1):
            for offset in _LOG_LABELLED:
                value = decade + offset
                if not min_val - 1e-9 <= value <= max_val + 1e-9:
                    continue
                if (offset == 0 and decade % step == 0) or (offset > 0 and with_25):
                    labelled.append(value)
                elif offset == 0 or per_decade >= 40:
                    others.append(value)
            if per_decade >= 40:  # room for the unlabelled 3, 4, 6... ticks
                others += [decade + o for o in _LOG_OTHERS if min_val <= decade + o <= max_val]
        if not labelled:  # a narrow range between two labelled ticks: label its ends
            labelled = [min_val, max_val] if per_decade * (max_val - min_val) >= 2 * gap else [min_val]
        self._labels = {round(v, 9): short_number(10.0**v) for v in labelled}
        return [(None, labelled), (None, others)]

    def logTickStrings(  # noqa: N802 - pyqtgraph's name
        self, values: list[float], scale: float, spacing: float
    ) -> list[str]:
        """The labels chosen by :meth:`logTickValues` (empty for the unlabelled ticks)."""
        return [self._labels.get(round(v, 9), "") for v in values]


def lay_out(widget: pg.GraphicsView, size: QSize) -> None:
    """Resize a chart widget that may never have been shown, and lay its plots out at once.

    A hidden widget gets its resize event only when shown or rendered, and the plots' layouts are activated
    from the event loop: rendered straight away, the scene would be laid out for another size (titles cut,
    labels over the ticks, a blank strip). Here the resize event is sent now and every layout activated.
    """
    old, old_viewport = widget.size(), widget.viewport().size()
    widget.resize(size)
    QCoreApplication.sendEvent(widget, QResizeEvent(size, old))  # sizes the viewport
    viewport = widget.viewport()
    # The view hears of its viewport's resize, and pyqtgraph fits its scene to the view then.
    QCoreApplication.sendEvent(viewport, QResizeEvent(viewport.size(), old_viewport))
    # Parents first: activating a layout sets its children's geometry, which their own layouts then fill.
    # (QGraphicsWidget.layout is called unbound: pyqtgraph's PlotItem hides it behind an attribute.)
    widgets = [item for item in widget.scene().items() if isinstance(item, QGraphicsWidget)]
    widgets.sort(key=_depth)
    for item in widgets:
        layout = QGraphicsWidget.layout(item)
        if layout is not None:
            layout.activate()


def _depth(item: QGraphicsItem) -> int:
    depth = 0
    parent: QGraphicsItem | None = item.parentItem()
    while parent is not None:
        depth, parent = depth + 1, parent.parentItem()
    return depth


def render_chart(
    widget: pg.GraphicsView, size: QSize, *, title: str = "", description: str = ""
) -> tuple[bytes, bytes]:
    """Draw a chart widget at ``size`` pixels (laid out for that size, as on screen) as PNG and SVG bytes.

    Example (in a running Qt application)::

        png, svg = render_chart(pg.PlotWidget(), QSize(600, 400), title="empty")
        png[1:4], svg[:5]  # (b'PNG', b'<?xml')
    """
    lay_out(widget, size)
    image = QImage(size, QImage.Format.Format_ARGB32)
    image.fill(widget.backgroundBrush().color())
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    widget.render(painter)
    painter.end()
    png_data = QByteArray()
    buffer = QBuffer(png_data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")  # type: ignore[call-overload]  # the stubs want bytes, PySide6 a str
    buffer.close()
    svg_data = QByteArray()
    svg_buffer = QBuffer(svg_data)
    svg_buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    generator = QSvgGenerator()
    generator.setOutputDevice(svg_buffer)
    # The widget's resolution: at the generator's own (90 dpi) fonts would come out larger than laid out.
    generator.setResolution(widget.logicalDpiX())
    generator.setSize(size)
    generator.setViewBox(QRectF(0, 0, size.width(), size.height()))
    generator.setTitle(title)
    generator.setDescription(description)
    painter = QPainter(generator)
    widget.render(painter)
    painter.end()
    svg_buffer.close()
    return bytes(png_data.data()), bytes(svg_data.data())


def _style_plot(plot: pg.PlotItem, title: str, left: str, bottom: str, foreground: QColor) -> None:
    plot.setTitle(title, color=foreground.name(), size="10pt")
    plot.setLabel("left", left)
    plot.setLabel("bottom", bottom)
    plot.setMenuEnabled(False)
    plot.hideButtons()
    for name in ("left", "bottom", "right"):
        axis = plot.getAxis(name)
        axis.setTextPen(foreground)
        axis.setPen(pg.mkPen(foreground, width=1))
        axis.enableAutoSIPrefix(False)
        if name in ("left", "right"):
            axis.setWidth(AXIS_WIDTH)
        _cache(axis)
    _cache(plot.titleLabel)


def _colour_plot(plot: pg.PlotItem, foreground: QColor, axes: Sequence[str]) -> None:
    """Give a plot's title and ``axes`` (their lines, ticks and labels) the ``foreground`` colour."""
    plot.titleLabel.setText(plot.titleLabel.text, color=foreground.name(), size="10pt")
    for name in axes:
        axis = plot.getAxis(name)
        axis.setTextPen(foreground)
        axis.setPen(pg.mkPen(foreground, width=1))


def _cache(item: QGraphicsItem) -> None:
    """Keep an item's rendering in a pixmap: repainting it (when the data next to it changes) is then a
    blit in C++, not a call of its Python ``paint``. The cache is redrawn when the item itself changes."""
    item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)


class TrainCharts(QWidget):
    """Three live plots of a training run, fed in batches and redrawn by :meth:`refresh`."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        palette = self.palette()
        background = palette.color(QPalette.ColorRole.Base)
        foreground = palette.color(QPalette.ColorRole.Text)
        self.view = _TimedGraphicsLayoutWidget(self)
        # No BSP index: items change every frame, and keeping the index current costs a Python boundingRect()
        # call per changed item (each a GIL round trip while the merge loop runs).
        self.view.scene().setItemIndexMethod(QGraphicsScene.ItemIndexMethod.NoIndex)
        self.view.setBackground(background)
        self.view.ci.setSpacing(12)
        self.view.ci.setContentsMargins(4, 4, 4, 4)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view)

        # 1. Each merge's count, log scale.
        self.count_plot: pg.PlotItem = self.view.addPlot(row=0, col=0, axisItems={"left": LogAxis("left")})
        _style_plot(self.count_plot, "Pair count at each merge", "count", "merge", foreground)
        self.count_plot.setLogMode(x=False, y=True)
        self.count_curve: pg.PlotDataItem = self.count_plot.plot(pen=pg.mkPen(COUNT_COLOR, width=1))

        # 2. Each new token's length in bytes, and its running mean.
        self.length_plot: pg.PlotItem = self.view.addPlot(row=0, col=1)
        _style_plot(self.length_plot, "Length of each new token", "bytes", "merge", foreground)
        length_brush = QColor(LENGTH_COLOR)
        legend_brush = QColor(background)
        legend_brush.setAlpha(215)
        # A density image: column = a bin of consecutive merges, row = a length in bytes; the darker, the more
        # of the bin's new tokens have that length.
        self.length_image = pg.ImageItem(axisOrder="col-major")
        ramp = np.linspace(0.0, 1.0, 256)[:, None]
        white, orange, brown = np.array([255, 255, 255]), np.array([230, 159, 0]), np.array([120, 60, 0])
        colours = np.where(
            ramp < 0.5, white + (orange - white) * ramp * 2, orange + (brown - orange) * (ramp - 0.5) * 2
        )
        self.length_image.setLookupTable(colours.astype(np.uint8))
        self.length_plot.addItem(self.length_image)
        self.length_mean: pg.PlotDataItem = self.length_plot.plot(pen=pg.mkPen(MEAN_COLOR, width=1))
        legend = self.length_plot.addLegend(offset=(8, 8), labelTextColor=foreground, brush=legend_brush)
        self.length_legend = legend
        self._length_sample = pg.ScatterPlotItem(symbol="s", size=8, pen=None, brush=length_brush)
        # Short labels: at 1024×640 the chart is ~230 px wide and a longer one was cut ("new tokens (dark");
        # what the shade means is in the chart's tooltip and the guide (F1).
        legend.addItem(self._length_sample, "new tokens")
        legend.addItem(self.length_mean, f"mean of {MEAN_WINDOW}")
        _cache(legend)
        self._density = np.zeros((1, 32), dtype=np.float32)
        self._bin = 1

        # 3. Throughput over time: MB/s while counting (left axis), merges/s while merging (right axis). Each
        # axis is coloured as its curve, which says which is which without a legend over the data.
        self.rate_plot: pg.PlotItem = self.view.addPlot(row=0, col=2)
        _style_plot(self.rate_plot, "Throughput", "MB/s (counting)", "seconds", foreground)
        self.rate_plot.showAxis("right")
        _cache(self.rate_plot.getAxis("right"))
        # Half pyqtgraph's tick density across: the chart is narrow beside the other two, and "0.02 0.04 0.06"
        # of a short run ran into each other.
        self.rate_plot.getAxis("bottom").setTickDensity(0.5)
        for side, text, colour in (
            ("left", "MB/s (counting)", BYTES_RATE_COLOR),
            ("right", "merges/s (merging)", MERGE_RATE_COLOR),
        ):
            self.rate_plot.setLabel(side, text, color=colour)
            axis = self.rate_plot.getAxis(side)
            axis.setTextPen(pg.mkPen(colour))
            axis.setPen(pg.mkPen(colour, width=1))
        self.merge_rate_box = pg.ViewBox()
        self.rate_plot.scene().addItem(self.merge_rate_box)
        self.rate_plot.getAxis("right").linkToView(self.merge_rate_box)
        self.merge_rate_box.setXLink(self.rate_plot)
        self.rate_plot.vb.sigResized.connect(self._on_rate_plot_resized)
        self.bytes_rate_curve: pg.PlotDataItem = self.rate_plot.plot(pen=pg.mkPen(BYTES_RATE_COLOR, width=2))
        self.merge_rate_curve = pg.PlotDataItem(pen=pg.mkPen(MERGE_RATE_COLOR, width=2))
        self.merge_rate_box.addItem(self.merge_rate_curve)
        for plot in (self.count_plot, self.length_plot, self.rate_plot):
            plot.vb.setMouseEnabled(x=True, y=False)
            plot.vb.disableAutoRange()  # ranges are set by refresh(), in coarse steps
        self.merge_rate_box.disableAutoRange()

        # Where Watch BPE learn's replay is, on both merge charts (hidden while a run trains): the charts
        # of a finished run then follow its replay, merge by merge.
        self.replay_marks = [
            pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen("#D55E00", width=1)) for _ in range(2)
        ]
        for plot, mark in zip((self.count_plot, self.length_plot), self.replay_marks, strict=True):
            plot.addItem(mark, ignoreBounds=True)
            mark.hide()
        # A superword run's transition on both merge charts: the merges right of the dashed line may span
        # words. Made once; a run moves (setValue) and shows or hides them.
        self.transition_marks = [
            pg.InfiniteLine(
                angle=90,
                movable=False,
                pen=pg.mkPen(TRANSITION_COLOR, width=1, style=Qt.PenStyle.DashLine),
                **label,
            )
            # Labelled on the count chart; on the length chart its legend names it (and takes the top).
            for label in (
                {
                    "label": "superwords →",
                    "labelOpts": {
                        "position": 0.92,
                        "anchors": [(0, 0.5), (0, 0.5)],
                        "color": TRANSITION_COLOR,
                    },
                },
                {},
            )
        ]
        for plot, mark in zip((self.count_plot, self.length_plot), self.transition_marks, strict=True):
            plot.addItem(mark, ignoreBounds=True)
            mark.setToolTip(TRANSITION_TIP)
            mark.hide()
        # The legend names the line (a sample drawn with its pen; the item is not plotted).
        self._transition_sample = pg.PlotDataItem(
            pen=pg.mkPen(TRANSITION_COLOR, width=1, style=Qt.PenStyle.DashLine)
        )
        self._transition_shown = False
        #: Of a superword run, the first merge after its transition (0-based among the run's merges).
        self.transition: int | None = None
        #: Merges before the charts' first: an extended tokenizer's own (x is the merge number - 1).
        self.first_merge = 0

        self._counts = GrowingArray()
        self._lengths = GrowingArray()
        self._bytes_t = GrowingArray(64)
        self._bytes_rate = GrowingArray(64)
        self._merge_t = GrowingArray(256)
        self._merge_rate = GrowingArray(256)
        self._shown = 0  # merges already in the density image
        self._ranges: dict[str, tuple[float, float]] = {}
        self._dirty = False
        #: Seconds the last :meth:`refresh` took (the paint that follows is ``self.view.last_paint``).
        self.last_refresh = 0.0
        self.apply_theme()
        self.reset()  # honest empty axes from the start (not -0.4..0.4 bytes, merge # 0.2..0.8)

    def apply_theme(self) -> None:
        """Colour the charts in the theme of this widget's palette (again whenever the palette changes)."""
        theme = theme_of(self)
        foreground = QColor(theme.text)
        background = QColor(theme.base)
        self.view.setBackground(background)
        for plot in (self.count_plot, self.length_plot):
            _colour_plot(plot, foreground, ("left", "bottom", "right"))
        _colour_plot(self.rate_plot, foreground, ("bottom",))
        self.count_curve.setPen(pg.mkPen(theme.chart_count, width=1))
        self.length_mean.setPen(pg.mkPen(theme.chart_mean, width=1))
        # The density ramp: the background for none, orange for some, a strong tone for the most.
        none, some, most = (
            np.array([QColor(c).red(), QColor(c).green(), QColor(c).blue()], dtype=np.float64)
            for c in theme.density
        )
        ramp = np.linspace(0.0, 1.0, 256)[:, None]
        colours = np.where(
            ramp < 0.5, none + (some - none) * ramp * 2, some + (most - some) * (ramp - 0.5) * 2
        )
        self.length_image.setLookupTable(colours.astype(np.uint8))
        legend_brush = QColor(background)
        legend_brush.setAlpha(215)
        self.length_legend.setBrush(legend_brush)
        self.length_legend.setLabelTextColor(foreground)
        for _sample, label in self.length_legend.items:  # labels made already keep their colour otherwise
            text = label.text
            label.setText(text, color=foreground.name())
        shade = "brighter" if theme.dark else "darker"  # the ramp ends dark on light, bright on dark
        self.length_plot.getViewBox().setToolTip(
            f"Each new token's length in bytes, per bin of merges: the {shade} a cell, the more of the bin's "
            f"new tokens have that length; the line is the mean of {MEAN_WINDOW} merges"
        )
        self._length_sample.setBrush(QColor(theme.chart_length))
        for side, colour in (("left", theme.chart_bytes_rate), ("right", theme.chart_merge_rate)):
            axis = self.rate_plot.getAxis(side)
            axis.setTextPen(pg.mkPen(colour))
            axis.setPen(pg.mkPen(colour, width=1))
        self.bytes_rate_curve.setPen(pg.mkPen(theme.chart_bytes_rate, width=2))
        self.merge_rate_curve.setPen(pg.mkPen(theme.chart_merge_rate, width=2))
        for mark in self.replay_marks:
            mark.setPen(pg.mkPen(theme.chart_current, width=1))

    def show_replay_position(self, merges: int | None) -> None:
        """Mark the last of the first ``merges`` merges on the merge charts; None hides the marks."""
        for mark in self.replay_marks:
            if merges is None:
                mark.hide()
            else:
                mark.setValue(max(merges - 1, 0))  # (the charts put merge k at x = k - 1)
                mark.show()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        """Follow a change of theme (the app's palette)."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self.apply_theme()

    def _on_rate_plot_resized(self) -> None:
        self.merge_rate_box.setGeometry(self.rate_plot.vb.sceneBoundingRect())
        self.merge_rate_box.linkedViewChanged(self.rate_plot.vb, self.merge_rate_box.XAxis)

    # -- data -------------------------------------------------------------------------------------

    @property
    def merge_count(self) -> int:
        """How many merges the charts hold."""
        return len(self._counts)

    def set_transition(self, first_superword: int | None) -> None:
        """Mark a superword run's transition before merge ``first_superword`` (0-based; None: no mark)."""
        self.transition = first_superword
        for mark in self.transition_marks:
            if first_superword is None:
                mark.hide()
            else:
                mark.setValue(self.first_merge + first_superword - 0.5)
                mark.show()
        shown = first_superword is not None
        if shown != self._transition_shown:
            self._transition_shown = shown
            if shown:
                self.length_legend.addItem(self._transition_sample, "superwords start")
            else:
                self.length_legend.removeItem(self._transition_sample)
            self.apply_theme()  # (the legend's new label in the theme's colours)

    def reset(self, total_merges: int | None = None, *, first_merge: int = 0) -> None:
        """Clear every chart; with ``total_merges``, fix the merge axes' range to it. ``first_merge``: the
        merges before the run's first (an extended tokenizer's own), so that x is the merge number - 1."""
        for array in (
            self._counts,
            self._lengths,
            self._bytes_t,
            self._bytes_rate,
            self._merge_t,
            self._merge_rate,
        ):
            array.clear()
        self._shown = 0
        self._ranges.clear()
        self.length_image.clear()  # else the last run's tokens stay drawn until the new run's first merge
        self.show_replay_position(None)
        self.first_merge = first_merge
        self.set_transition(None)
        self._dirty = True
        self.set_total_merges(total_merges)
        self.refresh()

    def set_total_merges(self, total: int | None) -> None:
        """Show the merge axes from 0 to ``total`` (the merges the run aims for; None: not known yet, whole
        merges up to :data:`EMPTY_MERGES` rather than pyqtgraph's fractions of one)."""
        total = max(total or EMPTY_MERGES, 1)
        for plot in (self.count_plot, self.length_plot):
            plot.setXRange(self.first_merge, self.first_merge + total, padding=0.02)
        self._bin = max(1, math.ceil(total / LENGTH_COLUMNS))
        self._density = np.zeros((math.ceil(total / self._bin), self._density.shape[1]), dtype=np.float32)
        self._shown = 0
        self._dirty = True

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
        """Hand new data to the plot items (does nothing when nothing changed); times itself.

        Axis ranges are set here, rounded to "nice" values, rather than left to pyqtgraph's auto-range:
        an axis whose range changes is laid out and drawn again, which is the costliest part of a frame.
        """
        if not self._dirty:
            return
        start = time.perf_counter()
        self._refresh()
        self.last_refresh = time.perf_counter() - start

    def _refresh(self) -> None:
        self._dirty = False
        n = len(self._counts)
        x = np.arange(self.first_merge, self.first_merge + n, dtype=np.float64)
        counts, lengths = self._counts.values, self._lengths.values
        self.count_curve.setData(*peak_downsample(x, counts, CURVE_POINTS))
        if n > self._shown:
            self._add_density(lengths[self._shown :], self._shown)
            self._shown = n
        if n >= 1:
            window = min(MEAN_WINDOW, n)
            sums = np.cumsum(lengths)
            mean = (sums[window - 1 :] - np.concatenate(([0.0], sums[: n - window]))) / window
            self.length_mean.setData(*peak_downsample(x[window - 1 :], mean, CURVE_POINTS))
            # Log axis: whole decades around the counts (ViewBox ranges are in log10 units then).
            low = math.floor(math.log10(max(float(counts.min()), 1.0)))
            high = max(math.ceil(math.log10(max(float(counts.max()), 1.0))), low + 1)
            self._set_range("count_y", self.count_plot.vb, "y", low, high)
            self._set_range("length_y", self.length_plot.vb, "y", 0, 8 * math.ceil((lengths.max() + 1) / 8))
        else:  # no merges yet (a new run): honest empty axes, not the last run's or pyqtgraph's -0.5..0.5
            self.length_mean.setData([], [])
            self._set_range("count_y", self.count_plot.vb, "y", 0, EMPTY_COUNT_DECADES)
            self._set_range("length_y", self.length_plot.vb, "y", 0, 8)
        self.bytes_rate_curve.setData(self._bytes_t.values.copy(), self._bytes_rate.values.copy())
        self.merge_rate_curve.setData(self._merge_t.values.copy(), self._merge_rate.values.copy())
        ends = [float(t.values[-1]) for t in (self._bytes_t, self._merge_t) if len(t)]
        self._set_range("rate_x", self.rate_plot.vb, "x", 0, nice_ceil(max(ends)) if ends else EMPTY_SECONDS)
        # Both rate axes start at 0, so that the steps' heights compare honestly.
        for key, box, rates in (
            ("bytes_y", self.rate_plot.vb, self._bytes_rate),
            ("merge_y", self.merge_rate_box, self._merge_rate),
        ):
            top = float(rates.values.max()) if len(rates) else 0.0
            self._set_range(key, box, "y", 0, nice_ceil(top * 1.1))

    def repaint_now(self) -> None:
        """Paint the charts at once (see :meth:`TrainView._redraw <bpe_studio.ui.train.view.TrainView>`):
        called from Python, the paint keeps the GIL for all of pyqtgraph's Python callbacks."""
        if self.isVisible():
            self.view.viewport().repaint()

    def _add_density(self, lengths: NDArray[np.float64], first: int) -> None:
        """Count new tokens into the density image (only the new ones: O(batch)) and show it."""
        columns = (np.arange(first, first + len(lengths)) // self._bin).astype(np.intp)
        rows = lengths.astype(np.intp)
        if columns[-1] >= self._density.shape[0] or rows.max() >= self._density.shape[1]:
            # More merges than planned (no total given) or a longer token: grow the image.
            width = max(self._density.shape[0], int(columns[-1]) + 1)
            height = self._density.shape[1]
            while height <= rows.max():
                height *= 2
            grown = np.zeros((width, height), dtype=np.float32)
            grown[: self._density.shape[0], : self._density.shape[1]] = self._density
            self._density = grown
        np.add.at(self._density, (columns, rows), 1.0)
        top = float(self._density.max())
        # Square root: a bin's few long tokens stay visible next to its many short ones.
        self.length_image.setImage(np.sqrt(self._density), autoLevels=False, levels=(0.0, math.sqrt(top)))
        width, height = self._density.shape
        self.length_image.setRect(QRectF(float(self.first_merge), -0.5, width * self._bin, height))

    def _set_range(self, key: str, box: pg.ViewBox, axis: str, low: float, high: float) -> None:
        """Set a view range (without padding) unless it is already that."""
        if self._ranges.get(key) == (low, high):
            return
        self._ranges[key] = (low, high)
        if axis == "x":
            box.setXRange(low, high, padding=0)
        else:
            box.setYRange(low, high, padding=0)

    def data_counts(self) -> NDArray[np.float64]:
        """A copy of the per-merge counts the charts hold (for tests)."""
        counts: NDArray[np.float64] = self._counts.values.copy()
        return counts


class _TimedGraphicsLayoutWidget(pg.GraphicsLayoutWidget):  # type: ignore[misc]
    """A GraphicsLayoutWidget that remembers how long its last paint took (``last_paint``, seconds)."""

    last_paint = 0.0

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        start = time.perf_counter()
        super().paintEvent(event)
        self.last_paint = time.perf_counter() - start


__all__ = [
    "TRANSITION_COLOR",
    "TRANSITION_TIP",
    "GrowingArray",
    "LogAxis",
    "StepRate",
    "TrainCharts",
    "lay_out",
    "nice_ceil",
    "peak_downsample",
    "render_chart",
    "short_number",
]
