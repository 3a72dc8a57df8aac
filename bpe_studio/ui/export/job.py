"""Exporting a tokenizer without the dialog: its files in each format, merge statistics, a report.

This module imports no Qt (nor does :mod:`bpe_studio.ui.present.token_format`, which spells its tokens), and
can run on any thread.

Every tokenizer file is written by the engine's :func:`~bpe_studio.engine.formats.save_tokenizer`: into a
staging folder, loaded back, checked to encode the sample text (and the engine's own sample) to the same
ids, then renamed into place, so an interrupted or failed export never leaves a half-written or wrong
file under the final name. The charts are drawn by the dialog (:mod:`bpe_studio.ui.export.dialog`, on the
GUI thread) and handed over as PNG and SVG bytes; :func:`run_export` writes everything on a worker thread.

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

import contextlib
import csv
import io
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from ... import __version__
from ...demo import cache_dir
from ...engine import FORMATS, Tokenizer
from ...engine.encoding.analysis import MergeIndex, compression
from ...engine.formats import atomic_plan, atomic_write, sample_texts, save_plan, save_tokenizer, source_files
from ...engine.humanize import error_message, human_bytes, human_seconds, merge_number, stop_reason_text
from ...engine.write_plan import WritePlan
from ..present.token_format import hex_bytes, token_label
from ..present.tokenizer_info import LoadedTokenizer


class Progress(Protocol):
    """What :func:`run_export` reports to (the dialog's task context): a stop check and progress."""

    def check(self) -> None:
        """Raise to stop the export."""

    def progress(self, value: object) -> None:
        """Report ``(done, total, message)``."""


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


def write_tokenizer(
    tokenizer: Tokenizer, target_place: tuple[Path, str], fmt: str, *, sample: str, training: dict[str, Any]
) -> Path:
    """Write one format into ``target_place`` (folder, name) with the engine's
    :func:`~bpe_studio.engine.formats.save_tokenizer`, checked on ``sample`` and the engine's sample texts.

    Raises:
        FormatError: The format cannot represent the tokenizer (the engine's message); also
            ``VerificationError``: the file does not load back identically (nothing was written).
        OSError: The file cannot be written.
    """
    target = tokenizer_path(*target_place, fmt)
    target.parent.mkdir(parents=True, exist_ok=True)
    report = save_tokenizer(
        tokenizer, target, format=fmt, training=training, verify_texts=sample_texts(tokenizer, sample)
    )
    return report.path


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
                merge_number(rank),
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
        f"Written by BPE Studio {__version__} on {time.strftime('%Y-%m-%d %H:%M')}, {origin_text(loaded)}.",
        "",
        "## Tokenizer",
        "",
        "| | |",
        "|---|---|",
        f"| Vocabulary | {tok.vocab_size:,} tokens: {256 - len(tok.missing_bytes)} bytes, "
        f"{int(learned):,} learned, {len(specials)} special |",
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
        lines.append(f"Not known: {loaded.path or 'this tokenizer'} does not record how it was trained.")
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
    # A tokenizer trained in this session has its run's timings; a file's record has none (it holds nothing
    # of the machine or the clock, see training_record), except files written by older versions.
    timings = dict(loaded.result.timings) if loaded.result is not None else training.get("timings")
    if isinstance(timings, dict) and timings:
        lines += ["| Phase | Time |", "|---|---:|"]
        lines += [
            f"| {k} | {human_seconds(float(v))} |" for k, v in timings.items() if isinstance(v, (int, float))
        ]
    elif loaded.path is not None:
        lines.append("Not recorded: tokenizer files keep no timings (they depend on the machine).")
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
            "| Merge | Left | Right | Token | Pair count |",
            "|---:|---|---|---|---:|",
        ]
        for rank in range(min(20, index.merge_count)):
            count = index.counts[rank] if index.counts is not None else None
            lines.append(
                f"| {merge_number(rank)} | `{_md(token_label(tok.token_bytes(index.left[rank])))}` | "
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


def export_plan(job: ExportJob) -> WritePlan:
    """Every file :func:`run_export` writes (tokenizer files, their staging folders and temporary files, the
    CSV, charts and report) and reads (the exported tokenizer's own files, its training corpus)."""
    options = job.options
    folder, name = options.folder, options.name
    plan = WritePlan()
    plan.allow_new_folder("Export")
    for fmt in options.formats:
        save_plan(plan, "Export", tokenizer_path(folder, name, fmt), format=fmt, folder=False)
    extra = [f"{name}-merges.csv"] if options.merges_csv else []
    if options.charts:
        extra += [f"{name}-{chart.key}.{suffix}" for chart in job.charts for suffix in ("png", "svg")]
    extra += [f"{name}-report.md"] if options.report else []
    for file_name in extra:
        atomic_plan(plan, "Export", folder / file_name)
    if job.loaded.path is not None:
        with contextlib.suppress(OSError, ValueError):  # a tokenizer whose files are gone: nothing to keep
            for path in source_files(job.loaded.path):
                plan.read("the tokenizer's own file", path)
    for corpus in job.training.get("inputs") or ():
        if isinstance(corpus, str):
            plan.read("the training corpus", corpus)
    return plan


def run_export(job: ExportJob, ctx: Progress | None = None) -> list[ExportItem]:
    """Write everything the options ask for; a failure of one file does not stop the others.

    Raises:
        ValueError: A file to write is one the tokenizer was read or trained from (checked before any is
            written, see :func:`export_plan`), or cannot be written.
    """
    export_plan(job).check()
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


def origin_text(loaded: LoadedTokenizer) -> str:
    """Where a tokenizer came from, as the report says it.

    Example:
        >>> origin_text(LoadedTokenizer(small, "t", path=Path("out/t.json")))
        'from out/t.json'
    """
    if loaded.path is not None:
        return f"from {os.fspath(loaded.path)}"
    if loaded.result is not None:
        inputs = loaded.training.get("inputs")
        corpus = f" on {', '.join(str(p) for p in inputs)}" if isinstance(inputs, list) and inputs else ""
        return f"for a tokenizer trained{corpus} in the app (not saved to a file before this export)"
    return "for a tokenizer built in memory"


def default_folder(
    loaded: LoadedTokenizer | None = None, *, last: Path | None = None, near: Sequence[Path] = ()
) -> Path:
    """Where Save and Export start: the ``last`` folder used, else ``near`` (e.g. the corpus's folder), else
    beside the tokenizer file or its training corpus, else the Documents folder (else the home folder).

    A folder must be writable and one a user would look in: hidden folders (a dot in the path) and the
    app's cache (where the demo corpus lives) are passed over.

    Example:
        >>> default_folder(last=Path.home()) == Path.home()
        True
    """
    candidates: list[Path] = [last] if last is not None else []
    candidates += near
    if loaded is not None:
        if loaded.path is not None:
            candidates.append(loaded.path.parent)
        inputs = loaded.training.get("inputs")
        if isinstance(inputs, list) and inputs:
            candidates.append(Path(str(inputs[0])).parent)
    for folder in candidates:
        if is_visible_folder(folder):
            return folder
    from platformdirs import user_documents_dir

    documents = Path(user_documents_dir())
    return documents if is_visible_folder(documents) else Path.home()


def is_visible_folder(folder: Path) -> bool:
    """Whether ``folder`` is a writable folder outside hidden folders and the app's cache.

    Example:
        >>> is_visible_folder(Path.home() / ".cache")
        False
    """
    try:
        absolute = folder.expanduser().absolute()
        if not absolute.is_dir() or not os.access(absolute, os.W_OK):
            return False
        cache = cache_dir().expanduser().absolute()
    except OSError:
        return False
    hidden = any(part.startswith(".") for part in absolute.parts)
    return not hidden and not absolute.is_relative_to(cache)


def default_name(loaded: LoadedTokenizer) -> str:
    """The file names' start: the tokenizer file's stem and ``-export``, or ``bpe-VOCABSIZE``."""
    if loaded.path is not None:
        stem = loaded.path.name.split(".")[0] or "tokenizer"
        return f"{stem}-export"
    return f"bpe-{loaded.tokenizer.vocab_size}"


__all__ = [
    "CHART_TITLES",
    "DEFAULT_SAMPLE",
    "FORMAT_LABELS",
    "ChartImages",
    "ExportItem",
    "ExportJob",
    "ExportOptions",
    "Progress",
    "default_folder",
    "default_name",
    "export_plan",
    "is_visible_folder",
    "merges_csv",
    "origin_text",
    "prepare_job",
    "report_markdown",
    "run_export",
    "tokenizer_path",
    "write_tokenizer",
]
