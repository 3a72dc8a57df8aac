"""Charts drawn for export and while training: laid out for the size asked, readable log axes, honest empty
axes, and nothing left of a previous run."""

# ruff: noqa: F811 - fixtures imported from tokenizer_helpers are test arguments

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PySide6.QtCore import QByteArray, QSize
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

from bpe_studio.ui.export import dialog as export_module
from bpe_studio.ui.export.dialog import render_charts
from bpe_studio.ui.export.job import ExportOptions, prepare_job
from bpe_studio.ui.present.tokenizer_info import load_file
from bpe_studio.ui.train.charts import LogAxis, TrainCharts, render_chart, short_number
from bpe_studio.ui.widgets.token_charts import VocabCurvePlot

from .tokenizer_helpers import tiny_corpus, tiny_file, tiny_result  # noqa: F401 - fixtures

SIZES = (QSize(900, 500), QSize(560, 340))


def _png_image(data: bytes) -> QImage:
    image = QImage()
    assert image.loadFromData(data, "PNG")
    return image.convertToFormat(QImage.Format.Format_RGB32)


def _svg_image(data: bytes, size: QSize) -> QImage:
    renderer = QSvgRenderer(QByteArray(data))
    assert renderer.isValid()
    image = QImage(size, QImage.Format.Format_RGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    renderer.render(painter)
    painter.end()
    return image


def _ink(image: QImage) -> np.ndarray:
    """A boolean array (rows, columns): where the image is not its background (the top-left pixel)."""
    width, height = image.width(), image.height()
    raw = np.frombuffer(image.constBits(), dtype=np.uint32, count=image.bytesPerLine() // 4 * height)
    pixels = raw.reshape(height, image.bytesPerLine() // 4)[:, :width] & 0xFFFFFF
    return np.asarray(pixels != pixels[0, 0])


def _runs(flags: np.ndarray) -> int:
    """How many separate runs of True a 1-D array holds."""
    padded = np.concatenate(([False], flags, [False])).astype(np.int8)
    return int((np.diff(padded) == 1).sum())


def check_whole(image: QImage, size: QSize, what: str) -> None:
    """A chart drawn whole at ``size``: title inside at the top, the plot reaching the right quarter, axis
    titles inside the bottom edge and apart from the tick labels."""
    assert (image.width(), image.height()) == (size.width(), size.height()), what
    ink = _ink(image)
    h, w = ink.shape
    assert not ink[0].any() and not ink[-1].any(), f"{what}: something is cut at the top or bottom edge"
    title_band = ink[: h // 10, w // 4 : 3 * w // 4]
    assert title_band.any(), f"{what}: no title at the top"
    assert ink[: h // 2, 3 * w // 4 :].any(), f"{what}: the right quarter is blank"
    # The bottom: tick labels, then (apart from them) the axis title.
    bottom_rows = ink[int(h * 0.85) :, w // 8 :].any(axis=1)
    assert _runs(bottom_rows) >= 2, f"{what}: the axis title touches the tick labels"


def test_export_charts_are_laid_out_for_their_size(
    qtbot, tiny_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    loaded = load_file(tiny_file)
    for size in SIZES:
        monkeypatch.setattr(export_module, "_CHART_SIZE", size)
        charts = render_charts(prepare_job(loaded, ExportOptions(folder=tmp_path, name="t")))
        assert [c.key for c in charts] == ["pair-counts", "token-lengths", "vocab-curve"]
        for chart in charts:
            check_whole(_png_image(chart.png), size, f"{chart.key} PNG at {size.toTuple()}")
            check_whole(_svg_image(chart.svg, size), size, f"{chart.key} SVG at {size.toTuple()}")
            assert b"<title>" + chart.title.encode() + b"</title>" in chart.svg


def test_live_charts_render_at_any_size(qtbot) -> None:  # type: ignore[no-untyped-def]
    charts = TrainCharts()
    qtbot.addWidget(charts)
    charts.reset(3000)
    charts.add_merges(list(range(5000, 2000, -1)), [2 + i % 7 for i in range(3000)])
    charts.add_merge_rate(0.5, 1.5, 2000.0)
    charts.refresh()
    png, _svg = render_chart(charts.view, QSize(1200, 320), title="live")
    image = _png_image(png)
    assert (image.width(), image.height()) == (1200, 320)
    ink = _ink(image)
    # The third chart (throughput) reaches the right edge.
    assert ink[40:280, 1100:].any()
    assert not ink[0].any() and not ink[-1].any()


def _labels(axis: LogAxis, low: float, high: float, size: float) -> list[tuple[float, str]]:
    levels = axis.tickValues(low, high, size)
    labelled = levels[0][1] if levels else []
    return [(v, s) for v, s in zip(labelled, axis.tickStrings(labelled, 1.0, 1.0), strict=True) if s]


@settings(max_examples=200, deadline=None)
@given(
    low=st.floats(-1.0, 7.0),
    span=st.floats(0.05, 9.0),
    size=st.floats(40.0, 2500.0),
    orientation=st.sampled_from(["left", "bottom"]),
)
def test_log_axis_labels_never_collide(qapp, low: float, span: float, size: float, orientation: str) -> None:  # type: ignore[no-untyped-def]
    axis = LogAxis(orientation)
    axis.setLogMode(True)
    high = low + span
    labels = _labels(axis, low, high, size)
    assert labels, "a log axis shows at least one value"
    positions = sorted(v for v, _ in labels)
    assert all(low - 1e-6 <= v <= high + 1e-6 for v in positions)
    per_decade = size / span
    gap = axis._label_extent([s for _, s in labels])
    if len(positions) > 1:
        closest = min(b - a for a, b in itertools.pairwise(positions)) * per_decade
        assert closest >= gap * 0.99, (labels, closest, gap)
    decade_labels = [v for v in positions if abs(v - round(v)) < 1e-9]
    for value in positions:
        mantissa = 10 ** (value - math.floor(value + 1e-9))
        if decade_labels or len(positions) > 2:
            assert round(mantissa, 6) in (1.0, 2.0, 5.0), labels


def test_log_axis_labels_1_2_5_only_when_there_is_room(qapp) -> None:  # type: ignore[no-untyped-def]
    axis = LogAxis("bottom")
    axis.setLogMode(True)
    # The axis: 300 to 2,000 on a short axis no longer reads "6·10²7·10²8·10²9·10²10³".
    cramped = [s for _, s in _labels(axis, math.log10(300), math.log10(2000), 260)]
    assert cramped == ["500", "1k", "2k"]
    roomy = [s for _, s in _labels(axis, 0, 4, 1600)]
    assert roomy == ["1", "2", "5", "10", "20", "50", "100", "200", "500", "1k", "2k", "5k", "10k"]
    # Many decades on a short vertical axis: every other decade.
    left = LogAxis("left")
    left.setLogMode(True)
    assert [s for _, s in _labels(left, 0, 8, 110)] == ["1", "100", "10k", "1M", "100M"]
    assert short_number(1_500_000) == "1.5M" and short_number(256) == "256"


def test_every_chart_uses_the_readable_log_axis(qtbot) -> None:  # type: ignore[no-untyped-def]
    charts = TrainCharts()
    curve = VocabCurvePlot()
    qtbot.addWidget(charts)
    qtbot.addWidget(curve)
    assert isinstance(charts.count_plot.getAxis("left"), LogAxis)
    assert isinstance(curve.plot.getAxis("bottom"), LogAxis)


def test_empty_charts_show_sensible_axes(qtbot) -> None:  # type: ignore[no-untyped-def]
    charts = TrainCharts()
    qtbot.addWidget(charts)
    charts.reset(5000)
    assert charts.length_plot.vb.viewRange()[1] == [0, 8]  # no negative byte lengths
    assert charts.count_plot.vb.viewRange()[1] == [0, 4]  # counts 1 to 10k (log10 units)
    assert charts.rate_plot.vb.viewRange()[0] == [0, 10.0]


def test_a_new_run_clears_the_last_runs_token_lengths(qtbot) -> None:  # type: ignore[no-untyped-def]
    charts = TrainCharts()
    qtbot.addWidget(charts)
    charts.reset(1000)
    charts.add_merges([900 - i for i in range(500)], [2 + i % 5 for i in range(500)])
    charts.add_bytes_rate(0.0, 2.0, 5.0)
    charts.refresh()
    image = charts.length_image.image
    assert image is not None and image.max() > 0
    charts.reset(1000)  # a new Start
    image = charts.length_image.image
    assert image is None or not image.any(), "the previous run's band is still drawn"
    assert charts.count_plot.vb.viewRange()[1] == [0, 4]
    assert charts.rate_plot.vb.viewRange()[0] == [0, 10.0]
