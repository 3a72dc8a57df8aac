"""The export dialog: choose formats, extras and a folder; draws the charts and runs the export.

What is written, and how, is :mod:`bpe_studio.ui.export.job` (no Qt of its own). This module draws the charts
(pyqtgraph, on the GUI thread) and runs :func:`~bpe_studio.ui.export.job.run_export` on a
:class:`~bpe_studio.ui.app.tasks.TaskRunner` worker thread.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QSize, Qt, Signal, Slot
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QFileDialog,
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ... import __version__
from ...engine import FORMATS
from ...engine.encoding.analysis import MergeIndex
from ...engine.humanize import error_message
from ..app.tasks import TaskRunner
from ..present.token_layout import SpecialMode, token_count_curve
from ..present.tokenizer_info import LoadedTokenizer
from ..train.charts import LogAxis, render_chart
from ..widgets.token_charts import (
    COUNT_COLOR,
    CURVE_COLOR,
    LENGTH_COLOR,
    MEAN_COLOR,
    running_mean,
    style_plot,
)
from .job import (
    CHART_TITLES,
    DEFAULT_SAMPLE,
    FORMAT_LABELS,
    ChartImages,
    ExportItem,
    ExportJob,
    ExportOptions,
    default_folder,
    default_name,
    export_plan,
    prepare_job,
    run_export,
)

_CHART_SIZE = QSize(900, 500)


def _render(widget: pg.PlotWidget, title: str) -> tuple[bytes, bytes]:
    return render_chart(widget, _CHART_SIZE, title=title, description=f"BPE Studio {__version__}")


def _chart_widget(title: str, left: str, bottom: str) -> pg.PlotWidget:
    widget = pg.PlotWidget(axisItems={"left": LogAxis("left"), "bottom": LogAxis("bottom")})
    widget.setBackground("w")
    style_plot(widget.getPlotItem(), title, left, bottom, QColor("#1d232b"))
    return widget


def render_charts(job: ExportJob) -> list[ChartImages]:
    """Draw the export charts and return them as PNG and SVG bytes (on the GUI thread)."""
    charts: list[ChartImages] = []
    tokenizer = job.tokenizer
    index = MergeIndex(tokenizer, job.merge_counts)
    n = index.merge_count
    x = np.arange(n, dtype=np.float64)

    def add(key: str, widget: pg.PlotWidget) -> None:
        title = CHART_TITLES[key]
        png, svg = _render(widget, title)
        charts.append(ChartImages(key, title, png, svg))
        widget.deleteLater()

    if job.merge_counts and n:
        widget = _chart_widget(CHART_TITLES["pair-counts"], "count", "merge")
        plot = widget.getPlotItem()
        plot.setLogMode(x=False, y=True)
        plot.plot(
            x,
            np.maximum(np.asarray(job.merge_counts, dtype=np.float64), 1),
            pen=pg.mkPen(COUNT_COLOR, width=2),
        )
        add("pair-counts", widget)
    if n:
        widget = _chart_widget(CHART_TITLES["token-lengths"], "bytes", "merge")
        plot = widget.getPlotItem()
        lengths = np.asarray([len(tokenizer.token_bytes(i)) for i in index.result], dtype=np.float64)
        brush = QColor(LENGTH_COLOR)
        brush.setAlpha(110)
        plot.addItem(pg.ScatterPlotItem(x=x, y=lengths, size=3, pen=None, brush=brush))
        window = min(200, n)
        mean = running_mean(lengths, window)
        plot.plot(x[window - 1 :], mean, pen=pg.mkPen(MEAN_COLOR, width=2))
        add("token-lengths", widget)
        curve_source = LoadedTokenizer(tokenizer, job.loaded.name)
        curve = token_count_curve(curve_source, job.options.sample, SpecialMode.RECOGNISED)
        if not curve.error:
            widget = _chart_widget(CHART_TITLES["vocab-curve"], "tokens", "vocab size (log scale)")
            plot = widget.getPlotItem()
            plot.setLogMode(x=True, y=False)
            keep = np.append(np.diff(curve.vocab_sizes) != 0, True)
            plot.plot(
                curve.vocab_sizes[keep].astype(np.float64),
                curve.counts[keep].astype(np.float64),
                pen=pg.mkPen(CURVE_COLOR, width=2),
            )
            add("vocab-curve", widget)
    return charts


class ExportDialog(QDialog):
    """Choose what to export and where; runs the export and lists each file's outcome.

    Signals:
        export_finished(list): The export ended and its thread stopped (a list of :class:`ExportItem`).
        export_failed(str): The export could not run at all (the message).
    """

    export_finished = Signal(object)
    export_failed = Signal(str)

    def __init__(
        self,
        loaded: LoadedTokenizer,
        *,
        merges: int | None = None,
        sample: str = "",
        folder: Path | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("export_dialog")
        self.setWindowTitle(f"Export {loaded.shown_name}")
        self.loaded = loaded
        self.merges = merges if merges is not None and merges < loaded.index.merge_count else None
        self.results: list[ExportItem] = []
        #: The box asking whether to replace an earlier export's files, while it is open.
        self.replace_box: QMessageBox | None = None
        self.runner = TaskRunner("bpe-studio-export", self)
        self.runner.progress.connect(self._on_runner_progress)
        self.runner.finished.connect(self._on_runner_finished)
        self.runner.errored.connect(self._on_runner_errored)
        self.runner.cancelled.connect(self._on_runner_cancelled)
        self.runner.idle.connect(self._on_runner_idle)
        self._ended: list[ExportItem] | None = None
        self._build(sample or DEFAULT_SAMPLE, folder or default_folder(loaded))

    def _build(self, sample: str, folder: Path) -> None:
        layout = QVBoxLayout(self)
        intro = QLabel(
            "Writes the tokenizer in each chosen format, loads every file back (also in tiktoken or "
            "Hugging Face tokenizers, when installed) and checks that it encodes the sample text to the same "
            "ids before it takes the file's name: a failed or interrupted export leaves no half-written or "
            "wrong file.",
            self,
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        form = QFormLayout()
        folder_row = QHBoxLayout()
        self.folder_edit = QLineEdit(os.fspath(folder), self)
        choose = QPushButton("Choose…", self)
        choose.clicked.connect(self._on_choose_button_clicked)
        folder_row.addWidget(self.folder_edit, 1)
        folder_row.addWidget(choose)
        form.addRow("Folder", folder_row)
        self.name_edit = QLineEdit(default_name(self.loaded), self)
        self.name_edit.setToolTip("File names start with this")
        form.addRow("Name", self.name_edit)
        formats = QWidget(self)
        formats_layout = QGridLayout(formats)
        formats_layout.setContentsMargins(0, 0, 0, 0)
        self.format_checks: dict[str, QCheckBox] = {}
        for n, fmt in enumerate(FORMATS):
            check = QCheckBox(FORMAT_LABELS[fmt], formats)
            check.setChecked(True)
            formats_layout.addWidget(check, n // 2, n % 2)
            self.format_checks[fmt] = check
        form.addRow("Tokenizer files", formats)
        others = QWidget(self)
        others_layout = QHBoxLayout(others)
        others_layout.setContentsMargins(0, 0, 0, 0)
        self.csv_check = QCheckBox("Merge statistics (CSV)", others)
        self.charts_check = QCheckBox("Charts (PNG and SVG)", others)
        self.report_check = QCheckBox("Training report (Markdown)", others)
        for check in (self.csv_check, self.charts_check, self.report_check):
            check.setChecked(True)
            others_layout.addWidget(check)
        form.addRow("Also", others)
        self.cut_check = QCheckBox(self)
        if self.merges is not None:
            size = self.loaded.index.vocab_size_at(self.merges)
            self.cut_check.setText(
                f"Only the first {self.merges:,} merges ({size:,} tokens, as the playground's slider)"
            )
            self.cut_check.setChecked(True)
        else:
            self.cut_check.setText("The whole tokenizer")
            self.cut_check.setEnabled(False)
        form.addRow("Size", self.cut_check)
        self.sample_edit = QPlainTextEdit(sample, self)
        self.sample_edit.setMaximumHeight(80)
        self.sample_edit.setToolTip(
            "Each tokenizer file is loaded back and must encode this text identically"
        )
        form.addRow("Check with", self.sample_edit)
        layout.addLayout(form)
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("")
        self.progress.setVisible(False)
        layout.addWidget(self.progress)
        self.log = QPlainTextEdit(self)
        self.log.setObjectName("export_log")
        self.log.setReadOnly(True)
        self.log.setPlaceholderText("Each file written is listed here, with ✓ once it is checked.")
        layout.addWidget(self.log, 1)
        self.status_label = QLabel(self)
        self.status_label.setWordWrap(True)
        layout.addWidget(self.status_label)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.export_button = QPushButton("Export", self)
        self.export_button.setDefault(True)
        self.export_button.clicked.connect(self.start_export)
        self.close_button = QPushButton("Close", self)
        self.close_button.clicked.connect(self.reject)
        buttons.addWidget(self.export_button)
        buttons.addWidget(self.close_button)
        layout.addLayout(buttons)
        self.resize(720, 560)

    def options(self) -> ExportOptions:
        """The options the dialog shows."""
        return ExportOptions(
            folder=Path(self.folder_edit.text()).expanduser(),
            name=self.name_edit.text().strip(),
            formats=tuple(fmt for fmt, check in self.format_checks.items() if check.isChecked()),
            merges_csv=self.csv_check.isChecked(),
            charts=self.charts_check.isChecked(),
            report=self.report_check.isChecked(),
            sample=self.sample_edit.toPlainText(),
            merges=self.merges if self.cut_check.isChecked() else None,
        )

    @Slot()
    def start_export(self, *, replace: bool = False) -> bool:
        """Render the charts and start writing; returns False (with a message) when the options are wrong,
        or when files of the same names are in the folder already: then a box asks whether to replace them
        (:attr:`replace_box`; its Replace starts the export), unless ``replace``."""
        if self.runner.is_busy() or self.replace_box is not None:
            return False
        options = self.options()
        problem = ""
        if not options.name or any(c in options.name for c in "/\\:") or options.name in (".", ".."):
            problem = "Give a name without / \\ or : (file names start with it)."
        elif not str(options.folder).strip():
            problem = "Choose a folder."
        elif options.folder.exists() and not options.folder.is_dir():
            problem = f"{options.folder} is a file, not a folder."
        if problem:
            self.status_label.setText(f"⚠ {problem}")
            self.export_failed.emit(problem)
            return False
        job = prepare_job(self.loaded, options)
        if options.charts or options.report:
            job.charts = render_charts(job)
        existing = [w.path for w in export_plan(job).writes if w.path.exists()]
        if existing and not replace:
            self._ask_replace(options, existing)
            return False
        self.results = []
        self.log.setPlainText("")
        self.status_label.setText("Exporting…")
        self.export_button.setEnabled(False)
        self.progress.setVisible(True)
        self.progress.setRange(0, 0)
        self.runner.start(lambda ctx: run_export(job, ctx))
        return True

    def is_busy(self) -> bool:
        """Whether an export runs."""
        return self.runner.is_busy()

    def _ask_replace(self, options: ExportOptions, existing: list[Path]) -> None:
        """Ask (without blocking) before an export replaces files an earlier one wrote (issue 21: twelve
        files were replaced without a word)."""
        shown = ", ".join(path.name for path in existing[:4])
        more = f" and {len(existing) - 4} more" if len(existing) > 4 else ""
        count = f"{len(existing)} file{'s' if len(existing) != 1 else ''}"
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Replace the earlier export?",
            f"{options.folder} already holds {count} this export writes ({shown}{more}). Replace them, "
            "or give another name or folder?",
            QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setObjectName("replace_box")
        replace = box.addButton("Replace", QMessageBox.ButtonRole.DestructiveRole)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.buttonClicked.connect(
            lambda clicked: self._on_replace_box_answered(clicked is replace)
        )
        box.finished.connect(self._on_replace_box_finished)
        self.replace_box = box
        self.status_label.setText(
            f"⚠ {count} of this name {'are' if len(existing) != 1 else 'is'} in the folder already."
        )
        box.open()

    def _on_replace_box_answered(self, replace: bool) -> None:
        self.replace_box = None
        if replace:
            self.start_export(replace=True)
        else:
            self.status_label.setText(
                "Nothing was written: give another name or folder, or export again to replace."
            )

    @Slot()
    def _on_replace_box_finished(self) -> None:
        self.replace_box = None

    @Slot()
    def _on_choose_button_clicked(self) -> None:
        chosen = QFileDialog.getExistingDirectory(self, "Export into", self.folder_edit.text())
        if chosen:
            self.folder_edit.setText(chosen)

    @Slot(object)
    def _on_runner_progress(self, value: tuple[int, int, str]) -> None:
        done, total, message = value
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        self.progress.setFormat(message)

    @Slot(object)
    def _on_runner_finished(self, results: list[ExportItem]) -> None:
        self.results = results
        self.export_button.setEnabled(True)
        lines = [
            f"{'✓' if item.ok else '✗'} {item.path}  ({item.what}){'' if item.ok else ': ' + item.message}"
            for item in results
        ]
        self.log.setPlainText("\n".join(lines))
        ok = sum(1 for item in results if item.ok)
        failed = len(results) - ok
        self.progress.setRange(0, 1)
        self.progress.setValue(1)
        self.progress.setFormat("")
        if failed:
            self.status_label.setText(f"⚠ {ok} of {len(results)} written; {failed} failed (see ✗ above).")
        else:
            self.status_label.setText(f"All {ok} files written and checked.")
        self._ended = results

    @Slot()
    def _on_runner_idle(self) -> None:
        # Reported once the worker thread has ended, so that nothing runs after export_finished.
        results, self._ended = self._ended, None
        if results is not None:
            self.export_finished.emit(results)

    @Slot(object)
    def _on_runner_errored(self, exc: BaseException) -> None:
        self.export_button.setEnabled(True)
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        message = error_message(exc)
        self.status_label.setText(f"⚠ The export failed: {message}")
        self.export_failed.emit(message)

    @Slot()
    def _on_runner_cancelled(self) -> None:
        self.export_button.setEnabled(True)
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.status_label.setText("Export cancelled.")
        self.export_failed.emit("cancelled")

    def done(self, result: int) -> None:
        """Closing the dialog waits for a running export (it only writes files)."""
        self.runner.shutdown()
        super().done(result)


__all__ = ["ExportDialog", "render_charts"]
