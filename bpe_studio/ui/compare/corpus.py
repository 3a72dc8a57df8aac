"""The Compare tab's corpus mode: several tokenizers' compression on corpus files, as a chart and a table.

For each corpus file and chosen tokenizer: bytes per token, tokens per word and the token count relative to
the first tokenizer — the figures of ``bpe-studio eval`` (both call
:func:`~bpe_studio.engine.encoding.evaluation.evaluate_files`). They are computed on the compare tab's
:class:`~bpe_studio.ui.app.tasks.TaskRunner` thread, one file at a time with all the tokenizers (cancellable
before each document, so also inside a large file).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import (
    QAbstractTableModel,
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    QSize,
    Qt,
    Signal,
    Slot,
)
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import (
    QFileDialog,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ... import __version__
from ...engine.corpus.sources import check_source, expand_inputs
from ...engine.encoding.analysis import Compression
from ...engine.encoding.evaluation import EvaluationCancelledError, evaluate_files
from ...engine.encoding.tokenizer import Tokenizer
from ...engine.formats import atomic_plan, atomic_write, source_files
from ...engine.humanize import error_message
from ...engine.write_plan import WritePlan
from ..app.style import LIGHT_THEME, Theme, theme_of
from ..app.tasks import TaskCancelledError, TaskContext, TaskRunner
from ..present.tokenizer_info import LoadedTokenizer, listed_names
from ..train.charts import render_chart
from ..train.preview import CORPUS_FILTER
from ..widgets.file_drop import FileDropWidget
from ..widgets.token_charts import style_plot

#: The chart's file filter when exporting.
CHART_FILTER = "PNG image (*.png);;SVG image (*.svg)"
#: Size of the exported chart (as the export dialog's charts).
EXPORT_SIZE = QSize(900, 500)
#: Title of the exported chart.
CHART_TITLE = "Bytes per token, per corpus file and tokenizer"
#: Okabe-Ito colours beyond the theme's chart colours, for a fifth tokenizer and on (then they repeat).
_EXTRA_COLOURS = ("#F0E442", "#999999", "#56B4E9")


@dataclass(frozen=True)
class CorpusFigures:
    """One file's figures with one tokenizer (a row of ``bpe-studio eval``).

    Attributes:
        corpus: The corpus file.
        tokenizer: The tokenizer's name.
        compression: Its sizes and token count.
        ratio: Its tokens relative to the first tokenizer's on the same file (None if that has none).
    """

    corpus: Path
    tokenizer: str
    compression: Compression

    ratio: float | None


def corpus_label(loaded: LoadedTokenizer, name: str) -> str:
    """A tokenizer's name in the table and the chart's legend: a superword tokenizer is said to be one (its
    figures compare with plain BPE of the same vocabulary size only knowing that).

    Example (``loaded`` a superword tokenizer)::

        corpus_label(loaded, "super.json")  # 'super.json (superwords)'
    """
    return f"{name} (superwords)" if loaded.has_superwords else name


def _list_tip(loaded: LoadedTokenizer) -> str:
    """The tokenizer list's tooltip: where it comes from, and a superword tokenizer's transition."""
    if not loaded.has_superwords:
        return loaded.source_text
    after = loaded.superwords_after
    where = f" after {after:,} tokens" if after is not None else ""
    return f"{loaded.source_text}\nSuperwords{where}: tokens may span the spaces between words (SuperBPE)"


def evaluate_corpora(
    tokenizers: Sequence[tuple[str, Tokenizer]],
    corpora: Sequence[Path],
    ctx: TaskContext | None = None,
) -> list[CorpusFigures]:
    """The figures of every corpus file with every tokenizer, file by file; the first tokenizer is the
    reference of ``ratio``. Reports ``(done, total, corpus name)`` to ``ctx`` and stops when it is cancelled,
    also inside a file (before each of its documents).

    Example:
        >>> round(evaluate_corpora([("gpt2", tok), ("mine", small)], [Path("corpus.jsonl")])[1].ratio, 2)
        2.11
    """
    for path in corpora:
        check_source(path)  # a format that cannot be read here says so before any work
    rows: list[CorpusFigures] = []
    total = len(tokenizers) * len(corpora)
    cancelled = (lambda: ctx.cancelled) if ctx is not None else None
    for path in corpora:
        if ctx is not None:
            ctx.check()
            ctx.progress((len(rows), total, path.name))
        try:
            (per_tokenizer,) = evaluate_files(
                [t for _, t in tokenizers], [path], workers=1, cancelled=cancelled
            )
        except EvaluationCancelledError:
            raise TaskCancelledError from None
        first_tokens = per_tokenizer[0].tokens if per_tokenizer else None
        for (name, _), figures in zip(tokenizers, per_tokenizer, strict=True):
            ratio = figures.tokens / first_tokens if first_tokens else None
            rows.append(CorpusFigures(path, name, figures, ratio))
    if ctx is not None:
        ctx.progress((total, total, ""))
    return rows


def bar_colours(theme: Theme, count: int) -> list[str]:
    """One colour per tokenizer: the theme's chart colours, then a few more (repeating).

    Example:
        >>> bar_colours(LIGHT_THEME, 2)
        ['#0072B2', '#E69F00']
    """
    base = (
        theme.chart_count,
        theme.chart_length,
        theme.chart_bytes_rate,
        theme.chart_current,
        theme.chart_merge_rate,
        *_EXTRA_COLOURS,
    )
    return [base[i % len(base)] for i in range(count)]


class CorpusFiguresModel(QAbstractTableModel):
    """The figures as a table: corpus, tokenizer, bytes, tokens, bytes per token, tokens per word, × first."""

    HEADERS = ("Corpus", "Tokenizer", "Bytes", "Tokens", "Bytes/token", "Tokens/word", "× first")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: list[CorpusFigures] = []

    def set_rows(self, rows: list[CorpusFigures]) -> None:
        """Show these rows."""
        self.beginResetModel()
        self.rows = list(rows)
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008, N802
        """Rows: one per file and tokenizer (none under an item: a table)."""
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008, N802
        """Columns: :attr:`HEADERS`."""
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(  # noqa: N802 - Qt's name
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        """Column titles."""
        horizontal = orientation == Qt.Orientation.Horizontal
        if role == Qt.ItemDataRole.DisplayRole and horizontal and 0 <= section < len(self.HEADERS):
            return self.HEADERS[section]
        return None

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        """A cell: text, tooltip (the full path) and alignment (numbers to the right)."""
        if not index.isValid() or not 0 <= index.row() < len(self.rows):
            return None
        row, column = self.rows[index.row()], index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(row, column)
        if role == Qt.ItemDataRole.ToolTipRole and column == 0:
            return os.fspath(row.corpus)
        if role == Qt.ItemDataRole.TextAlignmentRole and column >= 2:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    @staticmethod
    def _text(row: CorpusFigures, column: int) -> str:
        figures = row.compression
        values: tuple[object, ...] = (
            row.corpus.name,
            row.tokenizer,
            figures.bytes,
            figures.tokens,
            figures.bytes_per_token,
            figures.tokens_per_word,
            row.ratio,
        )
        value = values[column]
        if value is None:
            return "–"
        if isinstance(value, float):
            return f"{value:.3f}"
        if isinstance(value, int):
            return f"{value:,}"
        return str(value)


def draw_bars(
    plot: pg.PlotItem, rows: Sequence[CorpusFigures], colours: Sequence[str], foreground: QColor
) -> None:
    """Draw the grouped bar chart on ``plot``: one group per corpus file, one bar per tokenizer (bytes per
    token), a legend naming the tokenizers in ``foreground``."""
    plot.clear()
    if plot.legend is None:
        plot.addLegend(offset=(-10, 10))
    plot.legend.clear()
    plot.legend.setLabelTextColor(foreground)  # before the items: their labels take it when added
    files = list(dict.fromkeys(row.corpus for row in rows))
    names = list(dict.fromkeys(row.tokenizer for row in rows))
    if not files or not names:
        return
    width = 0.8 / len(names)
    for j, name in enumerate(names):
        x, heights = [], []
        for row in rows:
            if row.tokenizer == name and row.compression.bytes_per_token is not None:
                x.append(files.index(row.corpus) + (j - (len(names) - 1) / 2) * width)
                heights.append(row.compression.bytes_per_token)
        bars = pg.BarGraphItem(
            x=np.asarray(x, dtype=np.float64),
            height=np.asarray(heights, dtype=np.float64),
            width=width * 0.92,
            brush=QColor(colours[j % len(colours)]),
            pen=pg.mkPen(None),
            name=name,
        )
        plot.addItem(bars)
    plot.getAxis("bottom").setTicks([[(i, path.name) for i, path in enumerate(files)], []])
    top = max((r.compression.bytes_per_token or 0.0) for r in rows)
    # Room above the bars for the legend (a line per tokenizer).
    headroom = 1.15 + 0.08 * len(names)
    plot.setRange(xRange=(-0.6, len(files) - 0.4), yRange=(0, max(top, 1.0) * headroom), padding=0)


def chart_widget(rows: Sequence[CorpusFigures], theme: Theme) -> pg.PlotWidget:
    """A stand-alone chart of the figures in a theme's colours (for the export)."""
    widget = pg.PlotWidget()
    widget.setBackground(theme.base)
    plot = widget.getPlotItem()
    style_plot(plot, CHART_TITLE, "bytes per token", "corpus file", QColor(theme.text))
    draw_bars(plot, rows, bar_colours(theme, len({r.tokenizer for r in rows})), QColor(theme.text))
    return widget


def chart_plan(path: Path, corpora: Sequence[Path], tokenizers: Sequence[LoadedTokenizer]) -> WritePlan:
    """What :meth:`CorpusCompareView.export_chart` writes (the image and its temporary files) and what the
    view read (the corpus files, the files the tokenizers were loaded from), for :meth:`WritePlan.check`."""
    plan = WritePlan()
    atomic_plan(plan, "Export chart", path)
    for corpus in dict.fromkeys(corpora):
        plan.read("a corpus file", corpus)
    for loaded in tokenizers:
        if loaded.path is not None:
            with contextlib.suppress(OSError, ValueError):  # its files are gone: nothing to keep
                for source in source_files(loaded.path):
                    plan.read(f"the file of the tokenizer {loaded.name}", source)
    return plan


class CorpusCompareView(FileDropWidget):
    """The corpus mode: corpus files, the tokenizers to compare, the chart and the table.

    Corpus files dropped here are added to the list (tokenizer files are opened elsewhere in the tab).

    Signals:
        evaluated(): New figures are shown.
        failed(str): The figures could not be computed (the message, also shown in the view).
        files_dropped(list): Local files or folders were dropped on the view (the view adds them itself).
    """

    evaluated = Signal()
    failed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("compare_corpus")
        # Its own runner: the text mode's re-encodes on every keystroke and would supersede a long run.
        self.runner = TaskRunner("bpe-studio-compare-corpus", self)
        runner = self.runner
        self.tokenizers: list[LoadedTokenizer] = []
        self.rows: list[CorpusFigures] = []
        self._running = False
        self._hinting = True  # the status line says what is missing (until figures or an error are shown)
        self._build()
        runner.progress.connect(self._on_runner_progress)
        runner.finished.connect(self._on_runner_finished)
        runner.errored.connect(self._on_runner_errored)
        runner.cancelled.connect(self._on_runner_cancelled)
        self.files_dropped.connect(self._on_files_dropped)
        self._update_buttons()

    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.setChildrenCollapsible(False)
        layout.addWidget(splitter)

        top = QWidget(splitter)
        top_layout = QGridLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        files_box = QGroupBox("Corpus files", top)
        files_layout = QVBoxLayout(files_box)
        self.files_list = QListWidget(files_box)
        self.files_list.setObjectName("corpus_files")
        self.files_list.setSelectionMode(QListWidget.SelectionMode.ExtendedSelection)
        self.files_list.setToolTip("Text, JSON Lines, Parquet or compressed files; drop them here too")
        files_layout.addWidget(self.files_list)
        buttons = QHBoxLayout()
        self.add_button = QPushButton("Add files…", files_box)
        self.add_button.clicked.connect(self.choose_files)
        self.remove_button = QPushButton("Remove", files_box)
        self.remove_button.clicked.connect(self._on_remove_button_clicked)
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        files_layout.addLayout(buttons)
        tokenizers_box = QGroupBox("Tokenizers (the first checked is the reference of × first)", top)
        tokenizers_layout = QVBoxLayout(tokenizers_box)
        self.tokenizer_list = QListWidget(tokenizers_box)
        self.tokenizer_list.setObjectName("corpus_tokenizers")
        self.tokenizer_list.itemChanged.connect(self._on_tokenizer_item_changed)
        tokenizers_layout.addWidget(self.tokenizer_list)
        top_layout.addWidget(files_box, 0, 0)
        top_layout.addWidget(tokenizers_box, 0, 1)

        actions = QHBoxLayout()
        self.compute_button = QPushButton("Compute", top)
        self.compute_button.setToolTip("Encode every file with every checked tokenizer (as bpe-studio eval)")
        self.compute_button.clicked.connect(self.compute)
        self.cancel_button = QPushButton("Cancel", top)
        self.cancel_button.clicked.connect(self.runner.cancel)
        self.progress_bar = QProgressBar(top)
        self.progress_bar.setTextVisible(True)
        self.status_label = QLabel("Add corpus files and check two tokenizers or more.", top)
        self.status_label.setObjectName("caption")
        self.status_label.setWordWrap(True)
        self.export_button = QPushButton("Export chart…", top)
        self.export_button.setToolTip("Save the chart as PNG or SVG")
        self.export_button.clicked.connect(self.choose_export)
        actions.addWidget(self.compute_button)
        actions.addWidget(self.cancel_button)
        actions.addWidget(self.progress_bar, 1)
        actions.addWidget(self.export_button)
        top_layout.addLayout(actions, 1, 0, 1, 2)
        top_layout.addWidget(self.status_label, 2, 0, 1, 2)

        self.chart = pg.PlotWidget(splitter)
        self.plot: pg.PlotItem = self.chart.getPlotItem()
        self.table = QTableView(splitter)
        self.table.setObjectName("corpus_figures")
        self.model = CorpusFiguresModel(self.table)
        self.table.setModel(self.model)
        self.table.verticalHeader().setVisible(False)
        # The names as wide as they are, the figures sharing the rest: the table fills its width (issue 21),
        # and still fits its contents when narrow (then it scrolls sideways).
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        for column in range(2, len(CorpusFiguresModel.HEADERS)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Stretch)
        splitter.addWidget(top)
        splitter.addWidget(self.chart)
        splitter.addWidget(self.table)
        splitter.setSizes([200, 360, 160])
        self.apply_theme()

    # -- public -------------------------------------------------------------------------------------

    def corpora(self) -> list[Path]:
        """The corpus files, in order."""
        return [Path(self.files_list.item(i).text()) for i in range(self.files_list.count())]

    def add_files(self, paths: Sequence[Path]) -> None:
        """Add corpus files (ones already listed are not repeated)."""
        current = {os.fspath(p) for p in self.corpora()}
        for path in paths:
            if os.fspath(path) not in current:
                current.add(os.fspath(path))
                self.files_list.addItem(os.fspath(path))
                self._hinting = True
        self._update_buttons()

    def set_tokenizers(
        self, tokenizers: Sequence[LoadedTokenizer], checked: Sequence[LoadedTokenizer]
    ) -> None:
        """The tokenizers to choose from, in order; those checked before stay checked, and ``checked`` (the
        text mode's A and B) are checked too."""
        wanted = {id(t) for t in self.checked_tokenizers()} | {id(t) for t in checked}
        self.tokenizers = list(tokenizers)
        self.tokenizer_list.blockSignals(True)
        self.tokenizer_list.clear()
        for loaded, name in zip(self.tokenizers, listed_names(self.tokenizers), strict=True):
            item = QListWidgetItem(corpus_label(loaded, name), self.tokenizer_list)
            item.setToolTip(_list_tip(loaded))
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if id(loaded) in wanted else Qt.CheckState.Unchecked)
        self.tokenizer_list.blockSignals(False)
        self._update_buttons()

    def checked_tokenizers(self) -> list[LoadedTokenizer]:
        """The tokenizers checked, in list order (the first is the reference)."""
        return [
            loaded
            for i, loaded in enumerate(self.tokenizers)
            if i < self.tokenizer_list.count()
            and self.tokenizer_list.item(i).checkState() == Qt.CheckState.Checked
        ]

    def is_busy(self) -> bool:
        """Whether figures are being computed (or the thread is still ending)."""
        return self._running or self.runner.is_busy()

    def shutdown(self) -> None:
        """Stop the worker thread."""
        self.runner.shutdown()

    @Slot()
    def compute(self) -> None:
        """Compute the figures in the background (the previous run, if any, is superseded)."""
        # The list's names: never two alike, which the chart's legend and bars would merge into one.
        checked = {id(t) for t in self.checked_tokenizers()}
        chosen = [
            (corpus_label(t, name), t.tokenizer)
            for t, name in zip(self.tokenizers, listed_names(self.tokenizers), strict=True)
            if id(t) in checked
        ]
        corpora = self.corpora()
        if not chosen or not corpora:
            return

        def task(ctx: TaskContext) -> list[CorpusFigures]:
            return evaluate_corpora(chosen, corpora, ctx)

        self._running = True
        self._hinting = False
        self.progress_bar.setRange(0, len(chosen) * len(corpora))
        self.progress_bar.setValue(0)
        self.status_label.setText("Encoding…")
        self._update_buttons()
        self.runner.start(task)

    @Slot()
    def choose_files(self) -> None:
        """Ask for corpus files with a file dialog."""
        corpora = self.corpora()
        start = os.fspath(corpora[-1].parent) if corpora else ""
        paths, _ = QFileDialog.getOpenFileNames(self, "Add corpus files", start, CORPUS_FILTER)
        if paths:
            self.add_files([Path(p) for p in paths])

    @Slot()
    def choose_export(self) -> None:
        """Ask where to save the chart, then save it."""
        if not self.rows:
            return
        start = os.fspath(self.rows[0].corpus.with_name("compression.png"))
        path, chosen_filter = QFileDialog.getSaveFileName(self, "Export chart", start, CHART_FILTER)
        if not path:
            return
        target = Path(path)
        if target.suffix.lower() not in (".png", ".svg"):
            target = target.with_name(target.name + (".svg" if "svg" in chosen_filter.lower() else ".png"))
        try:
            self.export_chart(target)
        except (OSError, ValueError) as exc:
            QMessageBox.warning(self, "Export chart", error_message(exc, path=target))

    def export_chart(self, path: Path) -> None:
        """Write the chart (light theme, as the other exported charts) to ``path``: PNG or SVG by its suffix,
        atomically. Raises ``ValueError`` for another suffix or a path the write plan refuses (a corpus file
        or a tokenizer's own file: :func:`chart_plan`), ``OSError`` when it cannot be written."""
        suffix = path.suffix.lower()
        if suffix not in (".png", ".svg"):
            raise ValueError(f"{path.name}: the chart is saved as .png or .svg; choose one of these suffixes")
        chart_plan(path, [row.corpus for row in self.rows] + self.corpora(), self.tokenizers).check()
        widget = chart_widget(self.rows, LIGHT_THEME)
        try:
            png, svg = render_chart(
                widget, EXPORT_SIZE, title=CHART_TITLE, description=f"BPE Studio {__version__}"
            )
        finally:
            widget.deleteLater()
        atomic_write(path, png if suffix == ".png" else svg)

    # -- drops --------------------------------------------------------------------------------------

    @Slot(object)
    def _on_files_dropped(self, paths: list[Path]) -> None:
        """Add dropped files as corpus files; a folder gives the corpus files under it (as the CLI)."""
        files: list[Path] = []
        for path in paths:
            try:
                files.extend(expand_inputs([path]) if path.is_dir() else [path])
            except ValueError as exc:  # a folder without corpus files
                self._hinting = False
                self.status_label.setText(str(exc))
        self.add_files([p for p in files if p.is_file()])

    # -- theme --------------------------------------------------------------------------------------

    def apply_theme(self) -> None:
        """Colour the chart like the current theme."""
        theme = theme_of(self)
        foreground = QColor(theme.text)
        self.chart.setBackground(self.palette().color(QPalette.ColorRole.Base))
        style_plot(self.plot, "", "bytes per token", "corpus file", foreground)
        draw_bars(self.plot, self.rows, bar_colours(theme, len({r.tokenizer for r in self.rows})), foreground)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        """Follow theme changes."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self.apply_theme()

    # -- results ------------------------------------------------------------------------------------

    def _update_hint(self) -> None:
        """Say what is missing before Compute can run, or that it can (until figures or an error replace
        the hint): a hint that asks for files already added would be stale."""
        files, checked = self.files_list.count(), len(self.checked_tokenizers())
        if not files:
            hint = "Add corpus files" + (" and check the tokenizers to compare." if not checked else ".")
        else:
            listed = f"{files:,} corpus file{'s' if files != 1 else ''}"
            hint = (
                f"{listed}: check the tokenizers to compare."
                if not checked
                else f"{listed}, {checked} tokenizer{'s' if checked != 1 else ''} checked: press Compute."
            )
        self.status_label.setText(hint)

    def _update_buttons(self) -> None:
        if self._hinting and not self._running:
            self._update_hint()
        self.compute_button.setEnabled(
            not self._running and bool(self.checked_tokenizers()) and self.files_list.count() > 0
        )
        self.cancel_button.setEnabled(self._running)
        self.remove_button.setEnabled(self.files_list.count() > 0)
        self.export_button.setEnabled(bool(self.rows) and not self._running)

    @Slot(QListWidgetItem)
    def _on_tokenizer_item_changed(self, _item: QListWidgetItem) -> None:
        self._hinting = True
        self._update_buttons()

    @Slot()
    def _on_remove_button_clicked(self) -> None:
        for item in self.files_list.selectedItems():
            self.files_list.takeItem(self.files_list.row(item))
        self._hinting = True
        self._update_buttons()

    @Slot(object)
    def _on_runner_progress(self, value: object) -> None:
        if self._running and isinstance(value, tuple) and len(value) == 3:
            done, total, name = value
            self.progress_bar.setValue(done)
            if name:
                self.status_label.setText(f"Encoding {name}… ({done} of {total})")

    @Slot(object)
    def _on_runner_finished(self, result: object) -> None:
        if not self._running or not isinstance(result, list):
            return
        self._running = False
        self.rows = result
        self.model.set_rows(self.rows)
        self.apply_theme()
        self.progress_bar.setValue(self.progress_bar.maximum())
        files = len({r.corpus for r in self.rows})
        self.status_label.setText(f"{files:,} file{'s' if files != 1 else ''} encoded.")
        self._update_buttons()
        self.evaluated.emit()

    @Slot(object)
    def _on_runner_errored(self, exc: object) -> None:
        if not self._running:
            return
        self._running = False
        message = error_message(exc) if isinstance(exc, BaseException) else str(exc)
        self.status_label.setText(f"Could not compute the figures: {message}")
        self._update_buttons()
        self.failed.emit(message)

    @Slot(object)
    def _on_runner_cancelled(self, _result: object) -> None:
        if not self._running:
            return
        self._running = False
        self.status_label.setText("Cancelled.")
        self._update_buttons()


__all__ = [
    "CorpusCompareView",
    "CorpusFigures",
    "CorpusFiguresModel",
    "bar_colours",
    "chart_plan",
    "chart_widget",
    "corpus_label",
    "draw_bars",
    "evaluate_corpora",
]
