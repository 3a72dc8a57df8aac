"""Exporting: every format round-trips, the CSV, charts and report are written, failures are reported."""

# ruff: noqa: F811, PLR0917 - fixtures (some imported from tokenizer_helpers) are test arguments

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QImage

from bpe_studio.engine import FORMATS, Tokenizer, TrainResult, load
from bpe_studio.engine.formats import saving
from bpe_studio.ui.app.main_window import MainWindow
from bpe_studio.ui.app.tokenizer_views import TokenizerViews
from bpe_studio.ui.export import job as export_module
from bpe_studio.ui.export.dialog import ExportDialog
from bpe_studio.ui.export.job import DEFAULT_SAMPLE, ExportItem, tokenizer_path
from bpe_studio.ui.present.tokenizer_info import load_file

from .tokenizer_helpers import (  # noqa: F401 - fixtures
    SPECIAL,
    TRICKY_TEXT,
    WAIT_MS,
    open_and_wait,
    tiny_corpus,
    tiny_file,
    tiny_result,
    train_tiny,
    views,
)


def _export(qtbot, dialog: ExportDialog, folder: Path) -> list[ExportItem]:  # type: ignore[no-untyped-def]
    dialog.folder_edit.setText(str(folder))
    with qtbot.waitSignal(dialog.export_finished, timeout=WAIT_MS) as finished:
        assert dialog.start_export()
    results: list[ExportItem] = finished.args[0]
    assert not dialog.is_busy()
    return results


def test_export_everything_round_trips(
    qtbot, tiny_file: Path, tiny_result: TrainResult, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    loaded = load_file(tiny_file)
    dialog = ExportDialog(loaded, sample=TRICKY_TEXT)
    qtbot.addWidget(dialog)
    assert dialog.name_edit.text() == "tiny-export"
    assert not dialog.cut_check.isEnabled()
    out = tmp_path / "out"
    results = _export(qtbot, dialog, out)
    assert all(item.ok for item in results), [(i.path, i.message) for i in results if not i.ok]
    assert dialog.status_label.text() == "All 12 files written and checked."
    assert dialog.log.toPlainText().count("✓") == 12

    # Each tokenizer file loads back (checked here again, independently) and encodes like the original.
    tok = loaded.tokenizer
    for fmt in FORMATS:
        path = tokenizer_path(out, "tiny-export", fmt)
        again = load(path)
        for text in (TRICKY_TEXT, DEFAULT_SAMPLE, f"x{SPECIAL}y"):
            assert again.encode(text) == tok.encode(text), fmt
        assert dict(again.vocab) == dict(tok.vocab), fmt
        if fmt != "tiktoken":  # a .tiktoken file has ranks, not merges: they are rebuilt from the ranks
            assert again.merges == tok.merges, fmt
    # The studio file keeps the training record.
    assert load_file(out / "tiny-export.json").training["merge_counts"] == tiny_result.merge_counts

    # The merge statistics.
    rows = list(csv.DictReader(io.StringIO((out / "tiny-export-merges.csv").read_text(encoding="utf-8"))))
    assert len(rows) == len(tiny_result.merges)
    assert [int(r["count"]) for r in rows] == tiny_result.merge_counts
    first = rows[0]
    left, right = tiny_result.merges[0]
    assert bytes.fromhex(first["token_hex"]) == left + right and first["token_id"] == "256"

    # The charts, as PNG and SVG.
    for key in ("pair-counts", "token-lengths", "vocab-curve"):
        image = QImage(str(out / f"tiny-export-{key}.png"))
        assert not image.isNull() and (image.width(), image.height()) == (900, 500)
        colours = {image.pixel(x, y) for x in range(0, 900, 9) for y in range(0, 500, 9)}
        assert len(colours) > 5
        svg = (out / f"tiny-export-{key}.svg").read_text(encoding="utf-8")
        assert svg.lstrip().startswith("<?xml") and "<svg" in svg and "</svg>" in svg.rstrip()[-10:]

    # The report: configuration, corpus statistics, timings and the charts.
    report = (out / "tiny-export-report.md").read_text(encoding="utf-8")
    for part in (
        "# Tokenizer report: tiny.json",
        "## Training configuration",
        "## Corpus statistics",
        "## Timings",
    ):
        assert part in report
    assert str(tiny_corpus_path(loaded)) in report
    assert f"| Unique pre-tokens | {tiny_result.stats.unique_pretokens:,} |" in report
    assert "| Vocab size asked for | 600 |" in report
    assert "Not recorded: tokenizer files keep no timings" in report
    assert "![Pair count at each merge](tiny-export-pair-counts.png)" in report
    escaped = SPECIAL.replace("|", "\\|")  # a pipe inside a Markdown table cell
    assert f"`{escaped}` ({tok.special_tokens[SPECIAL]})" in report

    # Written atomically: no temporary files are left behind.
    leftovers = [p for p in out.rglob("*") if p.name.startswith(".") or p.suffix == ".tmp"]
    assert leftovers == []


def tiny_corpus_path(loaded: Any) -> str:
    return str(loaded.training["inputs"][0])


def test_export_the_slider_cut(
    qtbot, window: MainWindow, views: TokenizerViews, tiny_file: Path, tiny_corpus: Path, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    open_and_wait(qtbot, window, tiny_file, "some text to check with")
    playground = views.playground
    with qtbot.waitSignal(playground.encoded, timeout=WAIT_MS):
        playground.set_merges_used(100)
    dialog = views.show_export_dialog()
    assert dialog is not None and dialog.isVisible()
    assert dialog.cut_check.isChecked() and "first 100 merges" in dialog.cut_check.text()
    assert dialog.sample_edit.toPlainText() == "some text to check with"
    for fmt, check in dialog.format_checks.items():
        check.setChecked(fmt == "studio")
    dialog.charts_check.setChecked(False)
    results = _export(qtbot, dialog, tmp_path)
    assert [item.ok for item in results] == [True, True, True]
    cut = load(tmp_path / "tiny-export.json")
    trained = train_tiny(tiny_corpus, 256 + 100 + 1)
    assert dict(cut.vocab) == trained.vocab and list(cut.merges) == trained.merges
    report = (tmp_path / "tiny-export-report.md").read_text(encoding="utf-8")
    assert "| Cut | the first 100 merges of 343 |" in report
    assert "## Charts" not in report
    dialog.close()
    assert views.export_dialog is None or not views.export_dialog.isVisible()


def test_a_file_that_does_not_load_back_identically_is_a_failure(
    qtbot, tiny_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    loaded = load_file(tiny_file)
    other = Tokenizer({i: bytes([i]) for i in range(256)}, [])

    def fake_load(path: Path, **kwargs: Any) -> Tokenizer:
        return other if path.name == "tokenizer.json" else load(path, **kwargs)

    monkeypatch.setattr(saving, "load", fake_load)
    dialog = ExportDialog(loaded)
    qtbot.addWidget(dialog)
    dialog.report_check.setChecked(False)
    dialog.charts_check.setChecked(False)
    results = _export(qtbot, dialog, tmp_path)
    failed = [item for item in results if not item.ok]
    assert len(failed) == 1 and failed[0].path == tokenizer_path(tmp_path, "tiny-export", "hf")
    assert "encodes the sample text differently" in failed[0].message
    assert not tokenizer_path(tmp_path, "tiny-export", "hf").exists()  # nothing left under its name
    assert dialog.status_label.text().startswith("⚠ 4 of 5 written; 1 failed")
    assert "✗" in dialog.log.toPlainText()


def test_a_format_that_cannot_hold_the_tokenizer_is_reported(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from bpe_studio.ui.present.tokenizer_info import LoadedTokenizer

    # Ids that do not follow the merge order: tiktoken ranks merges by id, so it cannot hold this one.
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"bc", 257: b"ab"}
    tok = Tokenizer(vocab, [(b"a", b"b"), (b"b", b"c")], ["<s>"])
    dialog = ExportDialog(LoadedTokenizer(tok, "odd"), folder=tmp_path)
    qtbot.addWidget(dialog)
    assert dialog.name_edit.text() == "bpe-259"
    results = _export(qtbot, dialog, tmp_path)
    outcome = {item.path.name: item for item in results}
    assert [name for name, item in outcome.items() if not item.ok] == ["bpe-259.tiktoken"]
    assert "cannot save as tiktoken" in outcome["bpe-259.tiktoken"].message
    assert not (tmp_path / "bpe-259.tiktoken").exists()
    assert load(tmp_path / "bpe-259-hf" / "tokenizer.json").encode("abc") == tok.encode("abc")
    assert "1 failed" in dialog.status_label.text()


def test_bad_options_are_a_message(qtbot, tiny_file: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    dialog = ExportDialog(load_file(tiny_file), folder=tmp_path)
    qtbot.addWidget(dialog)
    dialog.name_edit.setText("a/b")
    with qtbot.waitSignal(dialog.export_failed):
        assert not dialog.start_export()
    assert "name" in dialog.status_label.text()
    blocker = tmp_path / "file"
    blocker.write_text("x")
    dialog.name_edit.setText("ok")
    dialog.folder_edit.setText(str(blocker))
    with qtbot.waitSignal(dialog.export_failed):
        assert not dialog.start_export()
    assert "is a file" in dialog.status_label.text()
    assert not dialog.is_busy()


@pytest.mark.parametrize("fmt", ["studio", "hf", "gpt2", "tiktoken"])
def test_export_of_a_tokenizer_with_a_template_verifies(tmp_path: Path, fmt: str) -> None:
    # gpt2 and tiktoken files cannot store a BOS/EOS template: the export drops it (the engine warns) and
    # must compare the reloaded file with the ids *without* the template, not report a mismatch.
    import warnings

    from bpe_studio.engine import FormatWarning, Template

    vocab = {i: bytes([i]) for i in range(256)}
    merges = [(b"h", b"e"), (b"l", b"l")]
    for n, (left, right) in enumerate(merges):
        vocab[256 + n] = left + right
    tok = Tokenizer(vocab, merges, {"<s>": 300, "</s>": 301}, template=Template((300,), (301,)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FormatWarning)
        written = export_module.write_tokenizer(tok, (tmp_path, "t"), fmt, sample="hello world", training={})
    again = load(written)
    kept = fmt in ("studio", "hf")
    assert (again.template is not None) == kept
    assert again.encode("hello") == tok.encode("hello", add_special_tokens=kept)
