"""Save and Export from the app: the same studio file as the CLI for the same training, a visible folder
to start in (never the demo's cache), and a report that says where the tokenizer came from."""

# ruff: noqa: F811, PLR0917 - fixtures (some imported from tokenizer_helpers) are test arguments

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QFileDialog

from bpe_studio.cli import main
from bpe_studio.demo import cache_dir
from bpe_studio.ui.app.main_window import MainWindow
from bpe_studio.ui.app.tokenizer_views import TokenizerViews
from bpe_studio.ui.export.dialog import ExportDialog
from bpe_studio.ui.train.view import SAVE_FILTERS

from .tokenizer_helpers import WAIT_MS, open_and_wait, views  # noqa: F401 - fixtures

RUN_TIMEOUT = 60_000
STUDIO_FILTER = next(f for f, fmt in SAVE_FILTERS.items() if fmt == "studio")


def _train_in_app(qtbot: Any, window: MainWindow, corpus: Path, vocab_size: int) -> None:
    view = window.train_view
    view.set_corpus_files([corpus])
    view.vocab_spin.setValue(vocab_size)
    with qtbot.waitSignal(view.training_ended, timeout=RUN_TIMEOUT) as ended:
        view.start_training()
    assert ended.args == ["finished"]


def _export_studio_only(qtbot: Any, dialog: ExportDialog, folder: Path | None = None) -> None:
    for fmt, check in dialog.format_checks.items():
        check.setChecked(fmt == "studio")
    dialog.csv_check.setChecked(False)
    dialog.charts_check.setChecked(False)
    if folder is not None:
        dialog.folder_edit.setText(str(folder))
    with qtbot.waitSignal(dialog.export_finished, timeout=WAIT_MS) as finished:
        assert dialog.start_export()
    assert all(item.ok for item in finished.args[0]), [(i.path, i.message) for i in finished.args[0]]


def test_the_app_and_the_cli_write_byte_identical_studio_files(
    qtbot: Any,
    window: MainWindow,
    views: TokenizerViews,
    small_corpus: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The CLI, with the settings the app's form has by default (the special token, the gpt2 pattern).
    cli_out = tmp_path / "cli"
    args = ["train", str(small_corpus), "--vocab-size", "400", "--special-token", "<|endoftext|>"]
    assert main([*args, "--pattern", "gpt2", "--format", "studio", "--quiet", "--out", str(cli_out)]) == 0
    cli_file = cli_out / "tokenizer.json"

    # The app: the Train view trains the same corpus (another run: its timings differ), then File ▸ Save.
    _train_in_app(qtbot, window, small_corpus, 400)
    saved = tmp_path / "saved.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a: (str(saved), STUDIO_FILTER)))
    with qtbot.waitSignal(window.train_view.tokenizer_saved):
        window.save_action.trigger()
    assert saved.read_bytes() == cli_file.read_bytes()

    # ... and Open ▸ Export, studio format.
    result = window.train_view.result
    assert result is not None
    open_and_wait(qtbot, window, result)
    dialog = views.show_export_dialog()
    assert dialog is not None
    _export_studio_only(qtbot, dialog, tmp_path / "export")
    exported = tmp_path / "export" / f"{dialog.name_edit.text()}.json"
    assert exported.read_bytes() == cli_file.read_bytes()
    report = (tmp_path / "export" / f"{dialog.name_edit.text()}-report.md").read_text(encoding="utf-8")
    assert f"for a tokenizer trained on {small_corpus} in the app" in report
    assert "from trained in this session" not in report
    assert "| merging |" in report  # this session's run has its timings, though the file does not
    dialog.close()


def test_save_and_export_of_a_demo_result_start_in_documents(
    qtbot: Any,
    window: MainWindow,
    views: TokenizerViews,
    small_corpus: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A corpus in the app's cache folder, as the demo's is.
    demo = cache_dir() / "demo-like-corpus.txt"
    shutil.copyfile(small_corpus, demo)
    documents = tmp_path / "Documents"
    documents.mkdir()
    monkeypatch.setattr("platformdirs.user_documents_dir", lambda: str(documents))
    _train_in_app(qtbot, window, demo, 300)

    asked: list[str] = []

    def get_save_file_name(parent: Any, caption: str, start: str, filters: str) -> tuple[str, str]:
        asked.append(start)
        return "", ""  # cancelled

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(get_save_file_name))
    window.save_action.trigger()
    assert asked == [str(documents / "demo-like-corpus-bpe300.json")]

    result = window.train_view.result
    assert result is not None
    open_and_wait(qtbot, window, result)
    views.export_action.trigger()
    dialog = views.export_dialog
    assert dialog is not None and dialog.isVisible()
    assert Path(dialog.folder_edit.text()) == documents
    # The folder chosen for an export is where the next one starts.
    chosen = tmp_path / "chosen"
    chosen.mkdir()
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(lambda *a: str(chosen)))
    dialog._on_choose_button_clicked()
    _export_studio_only(qtbot, dialog)
    dialog.close()
    views.export_action.trigger()
    again = views.export_dialog
    assert again is not None and Path(again.folder_edit.text()) == chosen
    again.close()
    demo.unlink()
