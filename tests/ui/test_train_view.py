"""The Train tab driven through its widgets: a full run, cancelling, errors, search, saving and settings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QMimeData, QModelIndex, QPoint, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QMessageBox

from bpe_studio.engine import (
    MergeMade,
    StopReason,
    TrainConfig,
    train,
)
from bpe_studio.engine.encoding.tokenizer import Tokenizer
from bpe_studio.engine.formats import load, load_studio
from bpe_studio.ui.app.main_window import MainWindow
from bpe_studio.ui.app.settings import Settings, TrainSettings, load_settings
from bpe_studio.ui.train.view import TrainView

from .conftest import worker_processes

RUN_TIMEOUT = 60_000
# Cancel must end a run promptly; the bound is generous so that a loaded machine does not fail the test
# (how fast it really is, is measured in bench/gui.py, not asserted here).
CANCEL_TIMEOUT = 15_000


def _fill(view: TrainView, corpus: Path, vocab_size: int, *, workers: int = 0) -> None:
    view.set_corpus_files([corpus])
    view.vocab_spin.setValue(vocab_size)
    view.workers_spin.setValue(workers)


def _start(qtbot, view: TrainView) -> None:  # type: ignore[no-untyped-def]
    qtbot.mouseClick(view.start_button, Qt.MouseButton.LeftButton)
    assert view.is_running()
    assert not view.start_button.isEnabled() and view.cancel_button.isEnabled()


def _wait_error(qtbot, view: TrainView, action: Any) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """Run ``action``, wait for the error dialog, check it is on screen, close it and return (title, text)."""
    with qtbot.waitSignal(view.error_shown, timeout=RUN_TIMEOUT) as blocker:
        action()
    box = view.error_box
    assert isinstance(box, QMessageBox) and box.isVisible()
    assert box.text() == blocker.args[1]
    box.button(QMessageBox.StandardButton.Ok).click()
    qtbot.waitUntil(lambda: view.error_box is None)
    return blocker.args[0], blocker.args[1]


# ------------------------------------------------------------------------------------------------------
# A complete run
# ------------------------------------------------------------------------------------------------------


def test_full_run_gives_the_engines_merges(qtbot, window: MainWindow, small_corpus: Path) -> None:  # type: ignore[no-untyped-def]
    view = window.train_view
    _fill(view, small_corpus, 1200)
    with qtbot.waitSignal(view.training_ended, timeout=RUN_TIMEOUT) as ended:
        _start(qtbot, view)
    assert ended.args == ["finished"]

    expected = train(
        TrainConfig(
            inputs=(small_corpus,), vocab_size=1200, special_tokens=("<|endoftext|>",), pattern="gpt2"
        )
    )
    result = view.result
    assert result is not None
    assert result.merges == expected.merges
    assert result.vocab == expected.vocab
    assert result.merge_counts == expected.merge_counts

    # The live table and charts hold every merge, in order.
    model = view.merges_model
    assert model.rowCount() == len(expected.merges)
    assert [model.merge_at(r)[:2] for r in range(model.rowCount())] == expected.merges
    assert view.charts.data_counts().tolist() == expected.merge_counts
    # The summary, the progress bar and the buttons.
    assert view.summary_labels["merges"].text() == f"{len(expected.merges):,}"
    assert view.summary_labels["stopped"].text() == "the vocabulary reached its size"
    assert view.phase_label.text() == "Finished"
    assert view.save_button.isEnabled() and view.open_button.isEnabled()
    assert window.save_action.isEnabled()
    assert view.start_button.isEnabled() and not view.cancel_button.isEnabled()
    assert not view.runner.is_busy()


def test_second_run_starts_afresh(qtbot, window: MainWindow, small_corpus: Path) -> None:  # type: ignore[no-untyped-def]
    view = window.train_view
    _fill(view, small_corpus, 400)
    for vocab in (400, 300):
        view.vocab_spin.setValue(vocab)
        with qtbot.waitSignal(view.training_ended, timeout=RUN_TIMEOUT):
            _start(qtbot, view)
        assert view.merges_model.rowCount() == vocab - 257
        assert view.charts.merge_count == vocab - 257


def test_min_frequency_stop_is_explained(qtbot, window: MainWindow, small_corpus: Path) -> None:  # type: ignore[no-untyped-def]
    view = window.train_view
    _fill(view, small_corpus, 5000)
    view.min_freq_spin.setValue(50)
    with qtbot.waitSignal(view.training_ended, timeout=RUN_TIMEOUT):
        _start(qtbot, view)
    assert view.result is not None and view.result.stop_reason is StopReason.MIN_FREQUENCY
    assert "fewer than 50 times" in view.summary_labels["stopped"].text()


# ------------------------------------------------------------------------------------------------------
# Cancelling
# ------------------------------------------------------------------------------------------------------


def test_cancel_while_workers_count_leaves_no_process(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, big_corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What it proves: Cancel while worker processes count ends the run as cancelled, and leaves no process
    # and no task thread running. The situation is forced, not hoped for: the Python backend counts in
    # worker processes (the native one counts in threads of the training process, so there would be no
    # worker to see), and the test waits until both run; counting 9 MB in Python takes seconds, the click
    # follows in milliseconds, and the events seen prove that no merge had started.
    monkeypatch.setenv("BPE_STUDIO_PURE", "1")
    view = window.train_view
    _fill(view, big_corpus, 2000, workers=2)
    seen: list[Any] = []
    view.runner.progress.connect(seen.extend)

    def counting_workers() -> list[Any]:
        return [p for p in worker_processes() if "workers.count_worker" in " ".join(p.cmdline())]

    _start(qtbot, view)
    qtbot.waitUntil(lambda: len(counting_workers()) == 2, timeout=RUN_TIMEOUT)
    with qtbot.waitSignal(view.training_ended, timeout=CANCEL_TIMEOUT) as ended:
        qtbot.mouseClick(view.cancel_button, Qt.MouseButton.LeftButton)
        assert view.phase_label.text() == "Cancelling…"
    assert ended.args == ["cancelled"]
    assert not any(isinstance(e, MergeMade) for e in seen), "the run was to be cancelled while counting"
    assert not view.runner.is_busy()  # the task's thread ended
    # The training process was waited for; its workers end with it (stopped, or killed with its thread).
    qtbot.waitUntil(lambda: worker_processes() == [], timeout=CANCEL_TIMEOUT)
    assert view.result is None and not view.save_button.isEnabled()
    assert view.phase_label.text() == "Cancelled"
    assert view.start_button.isEnabled()


def test_closing_the_window_stops_a_run(qtbot, settings: Settings, big_corpus: Path) -> None:  # type: ignore[no-untyped-def]
    win = MainWindow(settings, persist=False)
    qtbot.addWidget(win)
    win.show()
    view = win.train_view
    _fill(view, big_corpus, 2000, workers=2)
    with qtbot.waitSignal(view.training_started):
        view.start_training()
    win.close()
    assert not view.runner.is_busy()
    assert worker_processes() == []


# ------------------------------------------------------------------------------------------------------
# Errors
# ------------------------------------------------------------------------------------------------------


def test_no_corpus_disables_start(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    view = window.train_view
    view.set_corpus_files([])
    assert not view.start_button.isEnabled()
    assert view.start_button.toolTip().startswith("Add a corpus first")
    # Asked anyway (not through the disabled button), it says the same in a dialog, in the app's words.
    title, text = _wait_error(qtbot, view, view.start_training)
    assert title == "Cannot start training"
    assert text == view.start_button.toolTip() and "inputs" not in text
    assert not view.is_running()


def test_bad_pattern_is_shown_inline_and_in_a_dialog(qtbot, window: MainWindow, small_corpus: Path) -> None:  # type: ignore[no-untyped-def]
    view = window.train_view
    _fill(view, small_corpus, 300)
    view.pattern_edit.clear()
    qtbot.keyClicks(view.pattern_edit, r"\p{L}+|(")
    assert view.pattern_combo.currentData() == "custom"
    assert view.pattern_error.isVisible()
    assert "does not compile" in view.pattern_error.text()
    assert view.pattern_edit.property("invalid") is True
    assert not view.start_button.isEnabled()
    _title, text = _wait_error(qtbot, view, view.start_training)
    assert text.startswith("Start needs a working pattern.") and view.pattern_error.text() in text
    # Fixing the pattern clears the inline error; a pattern that can match nothing is refused too.
    qtbot.keyClicks(view.pattern_edit, "x)")
    assert view.pattern_problem == "" and not view.pattern_error.isVisible()
    assert view.start_button.isEnabled()
    view.pattern_edit.setText("a*")
    assert "empty string" in view.pattern_problem
    view.pattern_combo.setCurrentIndex(view.pattern_combo.findData("cl100k"))
    assert view.pattern() == "cl100k" and view.pattern_problem == ""


def test_invalid_utf8_comes_from_the_worker_as_a_dialog(qtbot, window: MainWindow, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    view = window.train_view
    bad = tmp_path / "bad.txt"
    # Past the start of the file, which the form checks as it is filled in (see journeys/test_train_form.py).
    bad.write_bytes(b"hello world " * 2000 + b"\xff\xfe" + b" more text" * 100)
    _fill(view, bad, 300)
    with qtbot.waitSignal(view.training_ended, timeout=RUN_TIMEOUT) as ended:
        _title, text = _wait_error(qtbot, view, view.start_training)
    assert ended.args == ["failed"]
    assert "invalid UTF-8 at byte offset 24000" in text
    assert view.phase_label.text() == "Failed"
    # The app stays usable: fix the file and train again.
    bad.write_bytes(b"hello world " * 200)
    with qtbot.waitSignal(view.training_ended, timeout=RUN_TIMEOUT) as ended:
        view.start_training()
    assert ended.args == ["finished"]


def test_empty_special_token_is_refused(qtbot, window: MainWindow, small_corpus: Path) -> None:  # type: ignore[no-untyped-def]
    view = window.train_view
    _fill(view, small_corpus, 300)
    qtbot.mouseClick(view.add_special_button, Qt.MouseButton.LeftButton)
    view.specials_model.setData(view.specials_model.index(1, 0), "")
    _title, text = _wait_error(qtbot, view, view.start_training)
    assert text.startswith("Special tokens:")  # the form's label, not the field's name


# ------------------------------------------------------------------------------------------------------
# Corpus, search, result actions
# ------------------------------------------------------------------------------------------------------


def test_drop_files_and_preview(qtbot, window: MainWindow, small_corpus: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    view = window.train_view
    view.set_corpus_files([])
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(small_corpus)), QUrl.fromLocalFile(str(tmp_path))])
    event = QDropEvent(
        QPoint(10, 10).toPointF(),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
    )
    with qtbot.waitSignal(view.scanner.done, timeout=5000), qtbot.waitSignal(view.status_message):
        view.dropEvent(event)
    assert view.corpus_files() == [small_corpus]  # the folder holds no corpus file (said in the status bar)
    expected = small_corpus.read_text(encoding="utf-8").count("<|endoftext|>")
    assert f"{expected} special tokens" in view.preview_label.text()
    assert view.preview_text.toPlainText().startswith(small_corpus.read_text(encoding="utf-8")[:40])
    assert window.settings.recent_corpora[0] == str(small_corpus)


def test_search_filters_the_merges(qtbot, window: MainWindow, small_corpus: Path) -> None:  # type: ignore[no-untyped-def]
    view = window.train_view
    _fill(view, small_corpus, 800)
    with qtbot.waitSignal(view.training_ended, timeout=RUN_TIMEOUT):
        view.start_training()
    qtbot.keyClicks(view.search_edit, " the")
    table_model = view.merges_table.model()
    assert table_model is view.merges_filter
    shown = table_model.rowCount(QModelIndex())
    assert 0 < shown < view.merges_model.rowCount()
    for row in range(shown):
        texts = [table_model.data(table_model.index(row, c)) for c in (1, 2, 3)]
        assert any("·the" in t.casefold() for t in texts)
    assert view.match_label.text() == f"{shown:,} matches"
    view.search_edit.clear()
    assert view.merges_table.model() is view.merges_model


def test_save_and_open(qtbot, window: MainWindow, small_corpus: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    view = window.train_view
    _fill(view, small_corpus, 500)
    with qtbot.waitSignal(view.training_ended, timeout=RUN_TIMEOUT):
        view.start_training()
    out = tmp_path / "out"
    out.mkdir()
    with qtbot.waitSignal(view.tokenizer_saved) as saved:
        assert view.save_tokenizer(out / "tok.json") == out / "tok.json"
    assert saved.args == [out / "tok.json"]
    assert [p.name for p in out.iterdir()] == ["tok.json"]  # no temporary file left behind
    loaded = load_studio(out / "tok.json")
    assert view.result is not None
    assert loaded.merges == view.result.merges and loaded.vocab == view.result.vocab
    assert window.settings.recent_tokenizers[0] == str(out / "tok.json")
    assert window.recent_tokenizers_menu.isEnabled()
    # Every engine format; each loads back to a tokenizer with the same vocabulary and encodings.
    trained = Tokenizer.from_result(view.result)
    sample = small_corpus.read_text(encoding="utf-8")[:3000]
    for fmt, name in (("hf", "hf.json"), ("tiktoken", "t.tiktoken"), ("gpt2", "gpt2.json")):
        written = view.save_tokenizer(out / name, fmt)
        assert written is not None
        again = load(written)
        assert dict(again.vocab) == view.result.vocab
        assert again.encode(sample, allowed_special="all") == trained.encode(sample, allowed_special="all")
        if fmt != "tiktoken":  # (tiktoken files keep ranks, not merges: the merges are derived again)
            assert list(again.merges) == view.result.merges
    assert (out / "gpt2" / "vocab.json").is_file()  # the gpt2 format is a folder
    assert not [p for p in out.rglob("*") if p.name.startswith(".")]  # no temporary file left behind
    # Saving where it cannot be written is an error dialog, not a crash.
    _title, text = _wait_error(qtbot, view, lambda: view.save_tokenizer(tmp_path / "missing" / "tok.json"))
    assert "the folder" in text and "does not exist" in text
    with qtbot.waitSignal(window.tokenizer_opened) as opened:
        qtbot.mouseClick(view.open_button, Qt.MouseButton.LeftButton)
    assert opened.args == [view.result, ""]


# ------------------------------------------------------------------------------------------------------
# Settings
# ------------------------------------------------------------------------------------------------------


def test_settings_are_saved_on_close_and_restored(qtbot, small_corpus: Path) -> None:  # type: ignore[no-untyped-def]
    first = MainWindow(load_settings())
    qtbot.addWidget(first)
    first.show()
    first.resize(first.minimumSizeHint().width(), 640)
    height = first.size().height()
    view = first.train_view
    _fill(view, small_corpus, 4321, workers=3)
    view.min_freq_spin.setValue(7)
    view.set_pattern("o200k")
    view.vocab_spin.setValue(300)
    with qtbot.waitSignal(view.training_ended, timeout=RUN_TIMEOUT):
        view.start_training()  # a corpus trained on becomes a recent corpus
    view.vocab_spin.setValue(4321)
    first.close()

    settings = load_settings()
    assert settings.train == TrainSettings(
        inputs=[str(small_corpus)],
        vocab_size=4321,
        special_tokens=["<|endoftext|>"],
        pattern="o200k",
        workers=3,
        min_frequency=7,
    )
    second = MainWindow(settings)
    qtbot.addWidget(second)
    assert settings.geometry
    assert (
        second.size().height() == height
    )  # (the width may shrink to the 800 pixels of the offscreen screen)
    view = second.train_view
    assert view.build_config() == first.train_view.build_config()
    assert second.recent_corpora_menu.actions()[0].text() == str(small_corpus)


@pytest.mark.parametrize("content", ["{", '{"geometry": "!!!not base64", "train": {"inputs": 5}}'])
def test_corrupt_settings_file_still_opens_the_window(
    qtbot, content: str, caplog: pytest.LogCaptureFixture
) -> None:  # type: ignore[no-untyped-def]
    from bpe_studio.ui.app.settings import settings_path

    path = settings_path()
    path.parent.mkdir(parents=True)
    path.write_text(content, encoding="utf-8")
    win = MainWindow(load_settings(), persist=False)
    qtbot.addWidget(win)
    win.show()
    assert win.train_view.corpus_files() == []
    assert any("settings" in r.getMessage() or "geometry" in r.getMessage() for r in caplog.records)


def test_save_menu_uses_the_dialogs_format(
    qtbot, window: MainWindow, small_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QFileDialog

    from bpe_studio.engine.formats import detect_format
    from bpe_studio.ui.train.view import SAVE_FILTERS

    view = window.train_view
    _fill(view, small_corpus, 400)
    assert not window.save_action.isEnabled()
    with qtbot.waitSignal(view.training_ended, timeout=RUN_TIMEOUT):
        view.start_training()
    hf_filter = next(f for f, fmt in SAVE_FILTERS.items() if fmt == "hf")
    asked: list[str] = []

    def fake_dialog(parent: Any, caption: str, start: str, filters: str) -> tuple[str, str]:
        asked.append(start)
        return str(tmp_path / "picked.json"), hf_filter

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(fake_dialog))
    with qtbot.waitSignal(view.tokenizer_saved):
        window.save_action.trigger()
    assert asked == [str(small_corpus.with_name(f"{small_corpus.stem}-bpe400.json"))]
    assert detect_format(tmp_path / "picked.json") == "hf"
    # The Result box's button does the same.
    (tmp_path / "picked.json").unlink()
    with qtbot.waitSignal(view.tokenizer_saved):
        qtbot.mouseClick(view.save_button, Qt.MouseButton.LeftButton)
    assert detect_format(tmp_path / "picked.json") == "hf"


@pytest.mark.parametrize("fmt", ["studio", "tiktoken"])
def test_save_refuses_to_write_over_the_runs_corpus(  # noqa: PLR0917 - fixtures
    qtbot, window: MainWindow, small_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:  # type: ignore[no-untyped-def]
    # Issue 18: the save dialog's path (or a .tiktoken's sidecar) on the corpus replaced the corpus.
    from PySide6.QtWidgets import QFileDialog

    from bpe_studio.ui.train.view import SAVE_FILTERS

    corpus = tmp_path / ("c.tiktoken.json" if fmt == "tiktoken" else "corpus.txt")
    corpus.write_bytes(small_corpus.read_bytes())
    view = window.train_view
    _fill(view, corpus, 300)
    with qtbot.waitSignal(view.training_ended, timeout=RUN_TIMEOUT):
        view.start_training()
    chosen = tmp_path / ("c.tiktoken" if fmt == "tiktoken" else "corpus.txt")
    picked = next(f for f, name in SAVE_FILTERS.items() if name == fmt)
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *_: (str(chosen), picked)))
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    saved: list[object] = []
    view.tokenizer_saved.connect(saved.append)
    title, text = _wait_error(qtbot, view, window.save_action.trigger)
    assert title == "Cannot save the tokenizer"
    assert "is the input corpus" in text and str(corpus.name) in text and "Traceback" not in text
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before, "something was written"
    assert not saved


# ------------------------------------------------------------------------------------------------------
# The training child process (the default: the GUI never shares a GIL with the merge loop)
# ------------------------------------------------------------------------------------------------------


def test_cancel_while_the_child_merges(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, big_corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The Python merge loop, so that the run is still merging when the test acts: the native one ends
    # this corpus's merges in a fraction of a second (see tests/engine/training/test_native_merge.py for its
    # cancel).
    monkeypatch.setenv("BPE_STUDIO_PURE", "1")
    view = window.train_view
    _fill(view, big_corpus, 30_000)

    def merging(events: list[Any]) -> bool:
        return any(isinstance(e, MergeMade) for e in events)

    with qtbot.waitSignal(view.runner.progress, timeout=RUN_TIMEOUT, check_params_cb=merging):
        _start(qtbot, view)
    with qtbot.waitSignal(view.runner.cancelled, timeout=CANCEL_TIMEOUT) as cancelled:
        view.cancel_training()
    qtbot.waitUntil(lambda: not view.runner.is_busy(), timeout=RUN_TIMEOUT)
    result = cancelled.args[0]
    assert result.stop_reason is StopReason.CANCELLED and 0 < len(result.merges) < 30_000 - 257
    assert view.merges_model.rowCount() == len(result.merges)
    assert worker_processes() == []
    # The app and the CLI word why a run stopped the same way ("Stopped because it was cancelled").
    assert view.summary_labels["stopped"].text() == "it was cancelled"


def test_a_killed_child_is_reported(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, big_corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The Python merge loop, so that the run is still merging when the test acts: the native one ends
    # this corpus's merges in a fraction of a second (see tests/engine/training/test_native_merge.py for its
    # cancel).
    monkeypatch.setenv("BPE_STUDIO_PURE", "1")
    view = window.train_view
    _fill(view, big_corpus, 30_000)

    def merging(events: list[Any]) -> bool:
        return any(isinstance(e, MergeMade) for e in events)

    with qtbot.waitSignal(view.runner.progress, timeout=RUN_TIMEOUT, check_params_cb=merging):
        _start(qtbot, view)
    (child,) = [p for p in worker_processes() if "ui.train.process" in " ".join(p.cmdline())]
    _title, text = _wait_error(qtbot, view, child.kill)
    assert text.startswith("the training process died (exit code -9)")
    qtbot.waitUntil(lambda: not view.runner.is_busy(), timeout=RUN_TIMEOUT)
    assert view.phase_label.text() == "Failed" and view.start_button.isEnabled()


def test_a_file_removed_after_start_is_reported(qtbot, window: MainWindow, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    view = window.train_view
    corpus = tmp_path / "soon-gone.txt"
    corpus.write_text("some text " * 1000, encoding="utf-8")
    _fill(view, corpus, 300)

    def start_and_remove() -> None:
        assert view.start_training()
        corpus.unlink()  # the child process has not read it yet: it starts in a fraction of a second

    _title, text = _wait_error(qtbot, view, start_and_remove)
    # Found missing by the run's own checks (preflight) or, if removed after them, when it is read.
    assert str(corpus) in text and ("No such file" in text or "does not exist" in text)


def test_a_crashed_counting_worker_is_reported(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, big_corpus: Path, monkeypatch
) -> None:
    # Worker processes count on the Python backend (the native one counts in threads of this process).
    monkeypatch.setenv("BPE_STUDIO_PURE", "1")
    view = window.train_view
    _fill(view, big_corpus, 2000, workers=2)

    def counting_workers() -> list[Any]:
        return [p for p in worker_processes() if "workers.count_worker" in " ".join(p.cmdline())]

    with qtbot.waitSignal(view.runner.progress, timeout=RUN_TIMEOUT):
        _start(qtbot, view)
    qtbot.waitUntil(lambda: len(counting_workers()) == 2, timeout=RUN_TIMEOUT)
    victim = counting_workers()[0]
    _title, text = _wait_error(qtbot, view, victim.kill)
    assert "a counting worker process died" in text
    qtbot.waitUntil(lambda: not view.runner.is_busy(), timeout=RUN_TIMEOUT)
    assert worker_processes() == []
    assert view.phase_label.text() == "Failed" and view.start_button.isEnabled()


def test_cluster_address_is_an_advanced_setting(qtbot, window: MainWindow, small_corpus: Path) -> None:  # type: ignore[no-untyped-def]
    view = window.train_view
    _fill(view, small_corpus, 300)
    view.form.set_more_options_shown(True)  # (under More options)
    assert view.build_config().cluster is None  # empty: count on this machine
    view.cluster_edit.setText("localhost")
    assert view.cluster_error.isVisibleTo(view)
    assert "tcp://HOST:8786" in view.cluster_error.text()
    view.cluster_edit.setText("local:2")
    from bpe_studio.engine.corpus.distributed import dask_missing

    assert view.cluster_error.text() == (dask_missing() or "")
    if dask_missing() is None:
        assert view.build_config().cluster == "local:2"
    assert view.form_settings().cluster == "local:2"
    view.cluster_edit.clear()
    assert not view.cluster_error.isVisibleTo(view)


def test_a_cancel_that_comes_as_the_run_ends_shows_it_finished(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, small_corpus: Path
) -> None:
    # The runner reports "cancelled" when Cancel was pressed, even if the run ended by itself first (CI
    # once had "Cancelled" shown with a whole result whose stop reason was no_pairs): a whole result is
    # shown as finished, savable as any other.
    view = window.train_view
    result = train(TrainConfig(inputs=[str(small_corpus)], vocab_size=300))
    assert result.stop_reason is not StopReason.CANCELLED
    view.runner.cancelled.emit(result)
    assert view.progress.ended == "finished"
    assert view.result is result
