"""Exporting a tokenizer: its files in every format, merge statistics, charts and a training report.

Every tokenizer file is loaded back and must encode a sample text to the same ids before it counts as
written. Every file is written atomically (a temporary file renamed into place), so an interrupted export
never leaves a half-written file under the final name. Charts are drawn on the GUI thread (pyqtgraph); the
files are written and checked by a :class:`~bpe_studio.ui.tasks.TaskRunner` on a worker thread.

Files, for a name ``NAME`` in the chosen folder::

    NAME.json                   BPE Studio format (with the training record)
    NAME-gpt2/                  vocab.json, merges.txt and bpe_studio.json
    NAME.tiktoken               with its NAME.tiktoken.json sidecar
    NAME-hf/tokenizer.json      Hugging Face
    NAME-merges.csv             one row per merge
    NAME-CHART.png / .svg       pair-count-per-merge, token-length, tokens-by-vocab-size
    NAME-report.md              configuration, corpus statistics, timings, the charts
"""

from __future__ import annotations

import csv
import io
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QSize, Signal, Slot
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
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from .. import __version__
from ..engine import FORMATS, Tokenizer, load, save
from ..engine.analysis import compression
from ..engine.formats import atomic_write
from ..engine.humanize import error_message, human_bytes, human_seconds, stop_reason_text
from .charts import LogAxis, render_chart
from .tasks import TaskContext, TaskRunner
from .token_charts import COUNT_COLOR, CURVE_COLOR, LENGTH_COLOR, MEAN_COLOR, running_mean, style_plot
from .token_format import hex_bytes, token_label
from .tokenizer_info import LoadedTokenizer, MergeIndex, SpecialMode, token_count_curve

#: Human names of the formats.
FORMAT_LABELS = {
    "studio": "BPE Studio (.json)",
    "gpt2": "GPT-2 (vocab.json + merges.txt)",
    "tiktoken": "tiktoken (.tiktoken)",
    "hf": "Hugging Face (tokenizer.json)",
}

#: The chart files: key -> title.
CHART_TITLES = {
    "pair-counts": "Pair count at each merge",
    "token-lengths": "Length of each new token",
    "vocab-curve": "Tokens of the sample text by vocab size",
}

#: The text each exported tokenizer must encode identically after loading it back.
DEFAULT_SAMPLE = (
    "Hello, world! It's 2024: naïve café, “quotes” — 日本語 and emoji 🙃.\n"
    "    def f(x):\n\treturn x  # tabs, spaces\n\n"
)

_CHART_SIZE = QSize(900, 500)


def tokenizer_path(folder: Path, name: str, fmt: str) -> Path:
    """Where a format is written (what ``load`` reads back).

    Example:
        >>> tokenizer_path(Path("out"), "mine", "hf").as_posix()
        'out/mine-hf/tokenizer.json'
    """
    if fmt == "studio":
        return folder / f"{name}.json"
    if fmt == "gpt2":
        return folder / f"{name}-gpt2"
    if fmt == "tiktoken":
        return folder / f"{name}.tiktoken"
    if fmt == "hf":
        return folder / f"{name}-hf" / "tokenizer.json"
    raise ValueError(f"format: {fmt!r} is not one of {', '.join(FORMATS)}")


@dataclass
class ExportOptions:
    """What to export, and where."""

    folder: Path
    name: str
    formats: tuple[str, ...] = FORMATS
    merges_csv: bool = True
    charts: bool = True
    report: bool = True
    sample: str = DEFAULT_SAMPLE
    merges: int | None = None  # export the cut to this many merges (None: the whole tokenizer)


@dataclass(frozen=True)
class ExportItem:
    """One exported file (or folder) and whether it succeeded."""

    what: str
    path: Path
    ok: bool
    message: str = ""


@dataclass
class ChartImages:
    """A chart rendered for export."""

    key: str
    title: str
    png: bytes
    svg: bytes


@dataclass
class ExportJob:
    """Everything the worker needs: the tokenizer to write, its records and the rendered charts."""

    loaded: LoadedTokenizer
    tokenizer: Tokenizer
    options: ExportOptions
    training: dict[str, Any]
    merge_counts: list[int] | None
    charts: list[ChartImages] = field(default_factory=list)


def prepare_job(loaded: LoadedTokenizer, options: ExportOptions) -> ExportJob:
    """Choose the tokenizer (the whole one or a cut) and its records; call on the GUI thread before
    :func:`render_charts`."""
    merges = options.merges
    counts = loaded.merge_counts
    training = dict(loaded.training)
    if merges is not None and merges < loaded.index.merge_count:
        tokenizer = loaded.cut(merges)
        counts = counts[:merges] if counts is not None else None
        training["cut_to_merges"] = merges
        if counts is not None:
            training["merge_counts"] = counts
    else:
        tokenizer = loaded.tokenizer
    return ExportJob(loaded, tokenizer, options, training, counts)


# ----------------------------------------------------------------------------------------------------------
# Charts (GUI thread)
# ----------------------------------------------------------------------------------------------------------


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
        widget = _chart_widget(CHART_TITLES["pair-counts"], "count", "merge #")
        plot = widget.getPlotItem()
        plot.setLogMode(x=False, y=True)
        plot.plot(
            x,
            np.maximum(np.asarray(job.merge_counts, dtype=np.float64), 1),
            pen=pg.mkPen(COUNT_COLOR, width=2),
        )
        add("pair-counts", widget)
    if n:
        widget = _chart_widget(CHART_TITLES["token-lengths"], "bytes", "merge #")
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


# ----------------------------------------------------------------------------------------------------------
# Files (worker thread)
# ----------------------------------------------------------------------------------------------------------


class VerificationError(ValueError):
    """A tokenizer file, loaded back, does not encode the sample as the tokenizer does."""


def write_tokenizer(
    tokenizer: Tokenizer, target_place: tuple[Path, str], fmt: str, *, sample: str, training: dict[str, Any]
) -> Path:
    """Write one format into ``target_place`` (folder, name), load it back and check that it encodes
    ``sample`` to the same ids.

    Raises:
        FormatError: The format cannot represent the tokenizer (the engine's message).
        VerificationError: The file does not load back identically.
        OSError: The file cannot be written.
    """
    target = tokenizer_path(*target_place, fmt)
    target.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "gpt2":
        target.mkdir(parents=True, exist_ok=True)
    written = save(tokenizer, target, format=fmt, training=training if fmt == "studio" else None)
    again = load(written)
    # A BOS/EOS template that the format cannot store (gpt2, tiktoken) is dropped on purpose, with a warning.
    kept = again.template is not None
    expected = tokenizer.encode(sample, allowed_special="all", add_special_tokens=kept)
    found = again.encode(sample, allowed_special="all")
    if found != expected:
        first = next((i for i, (a, b) in enumerate(zip(expected, found, strict=False)) if a != b), None)
        where = f"at token {first}" if first is not None else f"in length ({len(found)} vs {len(expected)})"
        raise VerificationError(f"{written}: loaded back, it encodes the sample differently ({where})")
    if again.decode(found) != tokenizer.decode(expected):
        raise VerificationError(f"{written}: loaded back, it decodes the sample differently")
    return written


def merges_csv(tokenizer: Tokenizer, counts: Sequence[int] | None) -> str:
    """One CSV row per merge: rank, ids, tokens (visible and hex), length, count, whether it is new."""
    index = MergeIndex(tokenizer, counts)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        [
            "rank",
            "left_id",
            "right_id",
            "token_id",
            "left",
            "right",
            "token",
            "token_hex",
            "bytes",
            "count",
            "new_token",
        ]
    )
    for rank in range(index.merge_count):
        left, right, made = index.left[rank], index.right[rank], index.result[rank]
        data = tokenizer.token_bytes(made)
        count = index.counts[rank] if index.counts is not None else ""
        writer.writerow(
            [
                rank,
                left,
                right,
                made,
                token_label(tokenizer.token_bytes(left)),
                token_label(tokenizer.token_bytes(right)),
                token_label(data),
                hex_bytes(data),
                len(data),
                count,
                int(index.creates[rank]),
            ]
        )
    return out.getvalue()


def _md(text: str) -> str:
    """Text safe inside a Markdown table cell or code span."""
    return text.replace("|", "\\|").replace("`", "ˋ")


def report_markdown(job: ExportJob, written: Sequence[ExportItem], chart_files: dict[str, str]) -> str:
    """The training report: tokenizer, configuration, corpus statistics, timings, charts and a sample."""
    tok = job.tokenizer
    loaded = job.loaded
    training = job.training
    index = MergeIndex(tok, job.merge_counts)
    specials = dict(tok.special_tokens)
    learned = index.new_before[-1] if index.merge_count else 0
    lines = [
        f"# Tokenizer report: {loaded.name}",
        "",
        f"Written by BPE Studio {__version__} on {time.strftime('%Y-%m-%d %H:%M')}",
        f"from {loaded.source_text}.",
        "",
        "## Tokenizer",
        "",
        "| | |",
        "|---|---|",
        f"| Vocabulary | {tok.vocab_size:,} tokens: 256 bytes, {int(learned):,} learned, "
        f"{len(specials)} special |",
        f"| Merges | {len(tok.merges):,} |",
    ]
    if "cut_to_merges" in training:
        lines.append(
            f"| Cut | the first {training['cut_to_merges']:,} merges of {loaded.index.merge_count:,} |"
        )
    special_text = ", ".join(f"`{_md(t)}` ({i})" for t, i in specials.items()) or "none"
    lines.append(f"| Special tokens | {special_text} |")
    pattern = tok.pattern_name
    lines.append(f"| Pattern | {pattern + ' preset' if pattern else '`' + _md(tok.pattern) + '`'} |")
    lines += ["", "## Training configuration", ""]
    config_rows = []
    inputs = training.get("inputs")
    if isinstance(inputs, list) and inputs:
        config_rows.append(("Corpus files", "<br>".join(f"`{_md(str(p))}`" for p in inputs)))
    for key, title in (
        ("vocab_size", "Vocab size asked for"),
        ("min_frequency", "Minimum pair frequency"),
        ("max_token_length", "Longest token allowed"),
        ("stop_reason", "Stopped because"),
    ):
        value = training.get(key)
        if key == "stop_reason" and isinstance(value, str):
            value = stop_reason_text(value)
        if value is not None:
            config_rows.append((title, f"{value:,}" if isinstance(value, int) else str(value)))
    if config_rows:
        lines += ["| | |", "|---|---|", *(f"| {k} | {v} |" for k, v in config_rows)]
    else:
        lines.append(f"Not known: {loaded.source_text} does not record how the tokenizer was trained.")
    lines += ["", "## Corpus statistics", ""]
    stats = training.get("stats")
    if isinstance(stats, dict) and stats:
        rows = [
            ("Files", stats.get("files")),
            ("Size", human_bytes(stats["bytes"]) if isinstance(stats.get("bytes"), int) else None),
            ("Documents", stats.get("documents")),
            ("Special tokens in the corpus", stats.get("special_tokens")),
            ("Pre-tokens", stats.get("pretokens")),
            ("Unique pre-tokens", stats.get("unique_pretokens")),
        ]
        lines += ["| | |", "|---|---:|"]
        lines += [
            f"| {k} | {v:,} |" if isinstance(v, int) else f"| {k} | {v} |" for k, v in rows if v is not None
        ]
    else:
        lines.append("Not known.")
    lines += ["", "## Timings", ""]
    timings = training.get("timings")
    if isinstance(timings, dict) and timings:
        lines += ["| Phase | Time |", "|---|---:|"]
        lines += [
            f"| {k} | {human_seconds(float(v))} |" for k, v in timings.items() if isinstance(v, (int, float))
        ]
    else:
        lines.append("Not known.")
    if chart_files:
        lines += ["", "## Charts", ""]
        for key, file_name in chart_files.items():
            lines += [f"![{CHART_TITLES[key]}]({file_name})", ""]
    sample = job.options.sample
    if sample:
        ids = tok.encode(sample, allowed_special="all")
        figures = compression(sample, len(ids))
        per_token = figures.chars_per_token
        ratio = f", {per_token:.2f} characters per token" if per_token is not None else ""
        lines += [
            "",
            "## Sample",
            "",
            f"{figures.characters:,} characters, {figures.bytes:,} bytes → **{len(ids):,} tokens**{ratio}.",
            "",
            "| # | Id | Token |",
            "|---:|---:|---|",
        ]
        lines += [f"| {n} | {i} | `{_md(token_label(tok.token_bytes(i)))}` |" for n, i in enumerate(ids[:40])]
        if len(ids) > 40:
            lines.append(f"| … | | {len(ids) - 40:,} more |")
    if index.merge_count:
        lines += [
            "",
            "## First merges",
            "",
            "| Rank | Left | Right | Token | Count |",
            "|---:|---|---|---|---:|",
        ]
        for rank in range(min(20, index.merge_count)):
            count = index.counts[rank] if index.counts is not None else None
            lines.append(
                f"| {rank} | `{_md(token_label(tok.token_bytes(index.left[rank])))}` | "
                f"`{_md(token_label(tok.token_bytes(index.right[rank])))}` | "
                f"`{_md(token_label(tok.token_bytes(index.result[rank])))}` | "
                f"{f'{count:,}' if count is not None else '–'} |"
            )
        longest = sorted(set(index.result), key=lambda i: (-len(tok.token_bytes(i)), i))[:10]
        lines += ["", "## Longest tokens", "", "| Id | Token | Bytes |", "|---:|---|---:|"]
        lines += [
            f"| {i} | `{_md(token_label(tok.token_bytes(i)))}` | {len(tok.token_bytes(i))} |" for i in longest
        ]
    if written:
        lines += ["", "## Files", ""]
        lines += [f"- `{_md(item.path.name)}`: {item.what}" for item in written if item.ok]
    return "\n".join(lines) + "\n"


def run_export(job: ExportJob, ctx: TaskContext | None = None) -> list[ExportItem]:
    """Write everything the options ask for; a failure of one file does not stop the others."""
    options = job.options
    folder, name = options.folder, options.name
    steps: list[tuple[str, Path, Callable[[], Path]]] = []
    for fmt in options.formats:
        action: Callable[[], Path] = partial(
            write_tokenizer, job.tokenizer, (folder, name), fmt, sample=options.sample, training=job.training
        )
        steps.append(
            (f"{FORMAT_LABELS[fmt]}, checked by loading it back", tokenizer_path(folder, name, fmt), action)
        )
    if options.merges_csv:
        path = folder / f"{name}-merges.csv"
        steps.append(
            (
                "merge statistics (CSV)",
                path,
                partial(_write, path, merges_csv(job.tokenizer, job.merge_counts)),
            )
        )
    chart_files: dict[str, str] = {}
    if options.charts:
        for chart in job.charts:
            for suffix, data in (("png", chart.png), ("svg", chart.svg)):
                path = folder / f"{name}-{chart.key}.{suffix}"
                steps.append((f"chart: {chart.title} ({suffix.upper()})", path, partial(_write, path, data)))
            chart_files[chart.key] = f"{name}-{chart.key}.png"
    results: list[ExportItem] = []
    total = len(steps) + (1 if options.report else 0)
    folder.mkdir(parents=True, exist_ok=True)
    for done, (what, path, action) in enumerate(steps):
        if ctx is not None:
            ctx.check()
            ctx.progress((done, total, f"Writing {path.name}…"))
        try:
            written = action()
        except (OSError, ValueError) as exc:
            results.append(ExportItem(what, path, False, error_message(exc)))
        else:
            results.append(ExportItem(what, written, True))
    if options.report:
        path = folder / f"{name}-report.md"
        if ctx is not None:
            ctx.check()
            ctx.progress((len(steps), total, f"Writing {path.name}…"))
        shown = {k: v for k, v in chart_files.items() if any(r.ok and r.path.name == v for r in results)}
        try:
            _write(path, report_markdown(job, results, shown))
        except (OSError, ValueError) as exc:
            results.append(ExportItem("training report (Markdown)", path, False, error_message(exc)))
        else:
            results.append(ExportItem("training report (Markdown)", path, True))
    if ctx is not None:
        ctx.progress((total, total, "Done"))
    return results


def _write(path: Path, data: str | bytes) -> Path:
    atomic_write(path, data)
    return path


# ----------------------------------------------------------------------------------------------------------
# The dialog
# ----------------------------------------------------------------------------------------------------------


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
        self.setWindowTitle(f"Export {loaded.name}")
        self.loaded = loaded
        self.merges = merges if merges is not None and merges < loaded.index.merge_count else None
        self.results: list[ExportItem] = []
        self.runner = TaskRunner("bpe-studio-export", self)
        self.runner.progress.connect(self._on_runner_progress)
        self.runner.finished.connect(self._on_runner_finished)
        self.runner.errored.connect(self._on_runner_errored)
        self.runner.cancelled.connect(self._on_runner_cancelled)
        self.runner.idle.connect(self._on_runner_idle)
        self._ended: list[ExportItem] | None = None
        self._build(sample or DEFAULT_SAMPLE, folder or _default_folder(loaded))

    def _build(self, sample: str, folder: Path) -> None:
        layout = QVBoxLayout(self)
        intro = QLabel(
            "Writes the tokenizer in each chosen format, then loads every file back and checks that it "
            "encodes the sample text to the same ids. Files are written atomically: an interrupted export "
            "leaves no half-written file.",
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
        self.name_edit = QLineEdit(_default_name(self.loaded), self)
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
    def start_export(self) -> bool:
        """Render the charts and start writing; returns False (with a message) when the options are wrong."""
        if self.runner.is_busy():
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


def _default_folder(loaded: LoadedTokenizer) -> Path:
    """Beside the tokenizer file or the training corpus, if that folder is writable; else the home folder."""
    candidates: list[Path] = []
    if loaded.path is not None:
        candidates.append(loaded.path.parent)
    inputs = loaded.training.get("inputs")
    if isinstance(inputs, list) and inputs:
        candidates.append(Path(str(inputs[0])).parent)
    for folder in candidates:
        if folder.is_dir() and os.access(folder, os.W_OK):
            return folder
    return Path.home()


def _default_name(loaded: LoadedTokenizer) -> str:
    if loaded.path is not None:
        stem = loaded.path.name.split(".")[0] or "tokenizer"
        return f"{stem}-export"
    return f"bpe-{loaded.tokenizer.vocab_size}"


__all__ = [
    "CHART_TITLES",
    "DEFAULT_SAMPLE",
    "FORMAT_LABELS",
    "ChartImages",
    "ExportDialog",
    "ExportItem",
    "ExportJob",
    "ExportOptions",
    "VerificationError",
    "merges_csv",
    "prepare_job",
    "render_charts",
    "report_markdown",
    "run_export",
    "tokenizer_path",
    "write_tokenizer",
]
