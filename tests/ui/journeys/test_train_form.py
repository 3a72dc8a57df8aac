"""Journeys through the Train form (issue 21): every option of ``bpe-studio train`` has a control, the text
field of JSON Lines is chosen from the records, folders are corpora, problems are shown as the form is
filled in (not in a dialog after Start), the corpus is fixed while a run goes on, a cancelled run's result
can be saved, nothing stale stays on screen, and the demo corpus is built off the GUI thread."""

# ruff: noqa: PLR0917 - fixtures are test arguments

from __future__ import annotations

import dataclasses
import json
import random
import threading
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox, QToolButton

from bpe_studio.cli import build_parser
from bpe_studio.engine import MergeMade, StopReason, TrainConfig
from bpe_studio.engine.formats import load
from bpe_studio.ui.app.main_window import MainWindow
from bpe_studio.ui.train.form import START_TIP

from ..conftest import worker_processes
from .conftest import ScriptedDialogs, click, shoot, trigger

#: Long enough for a small training on a loaded machine.
RUN_MS = 120_000

#: The options of ``bpe-studio train`` that are not the form's: where the app does what they do.
NOT_IN_THE_FORM = {
    "out": "Save tokenizer… (its file dialog)",
    "format": "Save tokenizer… (the dialog's file type)",
    "progress": "the Train tab shows the progress",
    "quiet": "the Train tab shows the progress",
    "urls": "URLs are a CLI input only",
}


def _records(path: Path, count: int = 200) -> Path:
    """JSON Lines whose text is in "content" (and a number in "id"): no "text" field."""
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(count):
            line = {"id": i, "content": f"Record {i} says the cat sat on the mat, then the dog sat too."}
            handle.write(json.dumps(line) + "\n")
    return path


def _wait_checked(qtbot: Any, window: MainWindow) -> None:
    """Wait for the form's checks that follow an edit (they run a moment after it)."""
    form = window.train_view.form
    qtbot.waitUntil(lambda: not form._check_timer.isActive(), timeout=5_000)


# ------------------------------------------------------------------------------------------------------
# Item 2: every option has a control; the text field is chosen from the records
# ------------------------------------------------------------------------------------------------------


def test_every_train_option_has_a_control(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    """Each option of ``bpe-studio train`` is a TrainConfig field the form sets (or the app's Save does it);
    every field changes when its control changes."""
    parser = build_parser()
    train = next(
        choices["train"]
        for action in parser._actions
        if (choices := getattr(action, "choices", None)) and "train" in choices
    )
    fields = {f.name for f in dataclasses.fields(TrainConfig) if f.init}
    dests = {a.dest for a in train._actions if a.dest != "help"}
    assert dests - fields <= set(NOT_IN_THE_FORM), (
        f"options without a control: {dests - fields - set(NOT_IN_THE_FORM)}"
    )
    form = window.train_view.form
    form.add_corpus_files([Path("corpus.txt")])
    default = form.build_config()
    form.set_more_options_shown(True)
    form.vocab_spin.setValue(1234)
    form.specials_model.setStringList(["<s>"])
    form.pattern_combo.setCurrentIndex(form.pattern_combo.findData("cl100k"))
    form.workers_spin.setValue(2)
    form.min_freq_spin.setValue(3)
    form.max_length_spin.setValue(16)
    form.chunk_spin.setValue(1024)
    form.utf8_combo.setCurrentIndex(form.utf8_combo.findData("replace"))
    form.cluster_edit.setText("local:2")
    form.counts_in_edit.setText("in.counts")
    form.counts_out_edit.setText("out.counts")
    form.checkpoint_edit.setText("run.ckpt")
    form.checkpoint_every_spin.setValue(50)
    form.text_field_combo.setEditText("meta.body")
    form.skip_bad_check.setChecked(True)
    form.add_corpus_files([Path("more.txt")])
    changed = form.build_config()
    form.counts_in_edit.clear()  # resume and counts_in exclude each other
    form.resume_edit.setText("old.ckpt")
    resumed = form.build_config()
    # A superword run reads its corpus twice, so it takes no counts files or checkpoints.
    for edit in (form.counts_out_edit, form.checkpoint_edit, form.resume_edit):
        edit.clear()
    form.superword_spin.setValue(600)
    superwords = form.build_config()
    # Start from a tokenizer (it is opened off the GUI thread); superwords are then off.
    combo = form.base_combo
    with qtbot.waitSignal(form.base_runner.finished, timeout=RUN_MS):
        combo.setCurrentIndex(combo.findData("gpt2"))
        combo.activated.emit(combo.currentIndex())
    extended = form.build_config()
    assert extended.superword_transition is None
    configs = (changed, resumed, superwords, extended)
    same = {
        name
        for name in fields - set(NOT_IN_THE_FORM)
        if all(getattr(config, name) == getattr(default, name) for config in configs)
    }
    assert not same, f"fields the form cannot set: {same}"


def test_a_jsonl_text_field_is_chosen_from_its_records(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, dialogs: ScriptedDialogs, tmp_path: Path, shots: Path
) -> None:
    view = window.train_view
    form = view.form
    corpus = _records(tmp_path / "records.jsonl")
    dialogs.answer([corpus])
    trigger(window, "File", "Add corpus files")
    _wait_checked(qtbot, window)
    # No "text" field: the preview says so, Start is disabled and its tooltip says why.
    assert form.text_field_row.isVisible()
    assert "No field “text”" in view.preview_text.toPlainText()
    assert not view.start_button.isEnabled() and not window.start_action.isEnabled()
    assert "Text field" in view.start_button.toolTip() and "content" in view.start_button.toolTip()
    # The field is picked from the records' fields (the text ones first).
    combo = form.text_field_combo
    assert [combo.itemText(i) for i in range(combo.count())] == ["content", "id"]
    combo.setCurrentIndex(combo.findText("content"))
    _wait_checked(qtbot, window)
    assert view.preview_text.toPlainText().startswith("Record 0 says the cat")
    assert view.start_button.isEnabled() and view.start_button.toolTip() == START_TIP
    # "id" holds numbers: refused again, with the reason beside the field.
    combo.setCurrentIndex(combo.findText("id"))
    _wait_checked(qtbot, window)
    assert not view.start_button.isEnabled() and form.text_field_error.isVisible()
    assert "not text" in form.text_field_error.text()
    combo.setCurrentIndex(combo.findText("content"))
    view.vocab_spin.setValue(300)
    with qtbot.waitSignal(view.training_ended, timeout=RUN_MS) as ended:
        trigger(window, "Training", "Start")
    assert ended.args == ["finished"]
    assert view.result is not None and view.result.stats.documents == 200
    assert view.result_config is not None and view.result_config.text_field == "content"


def test_a_bad_record_found_by_the_run_names_the_apps_control(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, dialogs: ScriptedDialogs, tmp_path: Path
) -> None:
    """A record past the ones the form reads lacks the field: the run's error names the form's Text field
    and Bad records, not the command line's --text-field."""
    view = window.train_view
    corpus = _records(tmp_path / "late.jsonl")
    with open(corpus, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"id": 200, "title": "no content here"}) + "\n")
    dialogs.answer([corpus])
    trigger(window, "File", "Add corpus files")
    view.form.text_field_combo.setCurrentIndex(view.form.text_field_combo.findText("content"))
    view.vocab_spin.setValue(300)
    _wait_checked(qtbot, window)
    with qtbot.waitSignal(view.error_shown, timeout=RUN_MS) as shown:
        trigger(window, "Training", "Start")
    message = shown.args[1]
    assert "line 201" in message and "--text-field" not in message and "Text field" in message
    qtbot.waitUntil(lambda: not view.is_running(), timeout=RUN_MS)
    assert view.error_box is not None
    view.error_box.close()


def test_more_options_reach_the_run(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, dialogs: ScriptedDialogs, tmp_path: Path, small_corpus: Path, shots: Path
) -> None:
    """Invalid UTF-8 read as U+FFFD, a max token length, saved counts and checkpoints, then a second run
    from the counts: all from the form, in a 1024×640 window."""
    view = window.train_view
    form = view.form
    window.resize(1024, 640)
    corpus = tmp_path / "latin1.txt"
    corpus.write_bytes("café crème ".encode("latin-1") * 50 + small_corpus.read_bytes()[:60_000])
    dialogs.answer([corpus])
    trigger(window, "File", "Add corpus files")
    _wait_checked(qtbot, window)
    # Not UTF-8 under the default policy: said beside the corpus, before Start.
    assert not view.start_button.isEnabled()
    assert form.files_error.isVisible() and "not UTF-8" in form.files_error.text()
    click(qtbot, view, "More options")
    assert form.more_box.isVisible()
    form.utf8_combo.setCurrentIndex(form.utf8_combo.findData("replace"))
    _wait_checked(qtbot, window)
    assert view.start_button.isEnabled() and not form.files_error.isVisible()
    form.max_length_spin.setValue(4)
    counts, checkpoint = tmp_path / "run.counts", tmp_path / "run.ckpt"
    dialogs.answer(counts, checkpoint)
    qtbot.mouseClick(form.counts_out_edit.parent().findChild(QToolButton), Qt.MouseButton.LeftButton)
    qtbot.mouseClick(form.checkpoint_edit.parent().findChild(QToolButton), Qt.MouseButton.LeftButton)
    assert form.counts_out_edit.text() == str(counts) and form.checkpoint_edit.text() == str(checkpoint)
    form.checkpoint_every_spin.setValue(20)
    view.vocab_spin.setValue(400)
    shoot(window, shots, "train-more-options-1024x640")
    with qtbot.waitSignal(view.training_ended, timeout=RUN_MS) as ended:
        trigger(window, "Training", "Start")
    assert ended.args == ["finished"]
    result = view.result
    assert result is not None
    specials = {token.encode() for token in result.special_tokens}
    assert max(len(t) for t in result.vocab.values() if t not in specials) <= 4
    assert counts.stat().st_size > 0 and checkpoint.stat().st_size > 0
    # A second run from the saved counts, without the corpus; its tokenizer is saved like any other.
    form.counts_out_edit.clear()
    form.checkpoint_edit.clear()
    dialogs.answer(counts)
    qtbot.mouseClick(form.counts_in_edit.parent().findChild(QToolButton), Qt.MouseButton.LeftButton)
    click(qtbot, view, "Clear")
    _wait_checked(qtbot, window)
    assert view.corpus_files() == []
    assert view.start_button.isEnabled(), view.start_button.toolTip()
    with qtbot.waitSignal(view.training_ended, timeout=RUN_MS) as ended:
        trigger(window, "Training", "Start")
    assert ended.args == ["finished"]
    assert view.result is not None and view.result.merges == result.merges
    saved = tmp_path / "from-counts.json"
    dialogs.answer(saved)
    with qtbot.waitSignal(view.tokenizer_saved, timeout=RUN_MS):
        trigger(window, "File", "Save tokenizer")
    assert list(load(saved).merges) == list(result.merges)
    shoot(window, shots, "train-finished-1024x640")


# ------------------------------------------------------------------------------------------------------
# Items 5, 9, 17: the corpus is fixed while training; Cancel only then; a cancelled result is saved
# ------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def varied_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """About 3 MB of seeded random words: far more than 30,000 merges' worth of pairs, so a run in the Python
    merge loop is still merging when the journey acts (the repeated demo text runs out of pairs after about
    5,000 merges, which a loaded machine can reach before Cancel is pressed)."""
    rng = random.Random(22)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = ["".join(rng.choices(letters, k=rng.randint(3, 12))) for _ in range(60_000)]
    path = tmp_path_factory.mktemp("varied") / "varied.txt"
    path.write_text(" ".join(rng.choices(words, k=350_000)), encoding="utf-8")
    return path


def test_during_a_run_only_cancel_and_a_cancelled_result_is_saved(  # type: ignore[no-untyped-def]
    qtbot,
    window: MainWindow,
    dialogs: ScriptedDialogs,
    varied_corpus: Path,
    small_corpus: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    shots: Path,
) -> None:
    # The Python merge loop, so that the run is still merging when the journey acts.
    monkeypatch.setenv("BPE_STUDIO_PURE", "1")
    window.resize(1024, 640)
    view = window.train_view
    # Ctrl+1 shows the Train tab, as Ctrl+2.. show the tokenizer tabs.
    window.tabs.setCurrentIndex(window.tabs.count() - 1)
    assert trigger(window, "Training", "Show Train").shortcut().toString() == "Ctrl+1"
    assert window.tabs.currentWidget() is view
    cancel = next(a for a in window.findChildren(type(window.start_action)) if a.text() == "&Cancel")
    assert not cancel.isEnabled(), "Training ▸ Cancel is enabled with nothing to cancel"
    view.set_corpus_files([varied_corpus])
    view.vocab_spin.setValue(30_000)

    def merging(events: list[Any]) -> bool:
        return any(isinstance(e, MergeMade) for e in events)

    with qtbot.waitSignal(view.runner.progress, timeout=RUN_MS, check_params_cb=merging):
        trigger(window, "Training", "Start")
    shoot(window, shots, "train-running")
    add = next(a for a in window.findChildren(type(window.start_action)) if a.text() == "&Add corpus files…")
    assert not add.isEnabled() and cancel.isEnabled()
    view.add_corpus_files([small_corpus])  # as a drop or a recent corpus would
    assert view.corpus_files() == [varied_corpus]
    with qtbot.waitSignal(view.training_ended, timeout=RUN_MS) as ended:
        trigger(window, "Training", "Cancel")
    assert ended.args == ["cancelled"]
    assert add.isEnabled() and not cancel.isEnabled()
    result = view.result
    assert result is not None and result.stop_reason is StopReason.CANCELLED and result.merges
    # Saved (File ▸ Save tokenizer…) and opened in the playground like a finished run's.
    target = tmp_path / "cancelled.json"
    dialogs.answer(target)
    with qtbot.waitSignal(view.tokenizer_saved, timeout=RUN_MS):
        trigger(window, "File", "Save tokenizer")
    assert len(load(target).vocab) == len(result.vocab)
    assert view.open_button.isEnabled()
    assert worker_processes() == []


# ------------------------------------------------------------------------------------------------------
# Item 6: a folder is a corpus, as on the command line
# ------------------------------------------------------------------------------------------------------


def test_a_folder_adds_its_corpus_files(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, dialogs: ScriptedDialogs, tmp_path: Path, small_corpus: Path
) -> None:
    view = window.train_view
    folder = tmp_path / "shards"
    (folder / "deeper").mkdir(parents=True)
    (folder / "a.txt").write_bytes(small_corpus.read_bytes()[:40_000])
    _records(folder / "deeper" / "b.jsonl")
    (folder / "notes.pdf").write_bytes(b"%PDF")  # not a corpus suffix: left out, as the CLI does
    dialogs.answer(folder)
    click(qtbot, view, "Add folder…")
    assert view.corpus_files() == [folder / "a.txt", folder / "deeper" / "b.jsonl"]
    assert "2 files" in view.preview_label.text() and "directory" not in view.preview_label.text()
    # A folder without corpus files adds nothing and says why.
    empty = tmp_path / "empty"
    empty.mkdir()
    dialogs.answer(empty)
    with qtbot.waitSignal(view.status_message) as said:
        click(qtbot, view, "Add folder…")
    assert "holds no corpus file" in said.args[0]
    assert len(view.corpus_files()) == 2


# ------------------------------------------------------------------------------------------------------
# Item 7: problems are shown as the form is filled in
# ------------------------------------------------------------------------------------------------------


def test_problems_are_shown_beside_their_control(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, dialogs: ScriptedDialogs, tmp_path: Path, small_corpus: Path
) -> None:
    view = window.train_view
    form = view.form
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    dialogs.answer([empty])
    trigger(window, "File", "Add corpus files")
    assert not view.start_button.isEnabled() and "empty" in form.files_error.text()
    assert form.files_error.isVisible()
    binary = tmp_path / "picture.png"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    view.set_corpus_files([binary])
    assert not view.start_button.isEnabled() and "not UTF-8" in form.files_error.text()
    missing = tmp_path / "gone.txt"
    missing.write_text("soon gone", encoding="utf-8")
    view.set_corpus_files([missing])
    assert view.start_button.isEnabled()
    missing.unlink()
    view.vocab_spin.setValue(500)  # any edit checks the form again
    _wait_checked(qtbot, window)
    assert not view.start_button.isEnabled() and "does not exist" in form.files_error.text()
    view.set_corpus_files([small_corpus])
    assert view.start_button.isEnabled() and not form.files_error.isVisible()
    # Special tokens: an empty one and a duplicate are refused beside the list; a lone space is allowed,
    # with a word on what it does.
    model = form.specials_model
    for tokens, expected in (([""], "empty string"), (["<s>", "<s>"], "listed twice")):
        model.setStringList(tokens)
        model.dataChanged.emit(model.index(0), model.index(model.rowCount() - 1))
        assert not view.start_button.isEnabled() and expected in form.specials_error.text()
        assert form.specials_error.isVisible()
    model.setStringList([" "])
    model.dataChanged.emit(model.index(0), model.index(0))
    assert view.start_button.isEnabled()
    assert form.specials_error.isVisible() and "only whitespace" in form.specials_error.text()
    # No dialog was needed for any of it.
    assert view.error_box is None


# ------------------------------------------------------------------------------------------------------
# Item 8: nothing stale
# ------------------------------------------------------------------------------------------------------


def test_nothing_stale_stays_on_screen(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, tmp_path: Path, small_corpus: Path, big_corpus: Path
) -> None:
    view = window.train_view
    # A run that fails: "Failed" belongs to its corpus, and goes with it.
    corpus = tmp_path / "soon-gone.txt"
    corpus.write_text("some failing text " * 1000, encoding="utf-8")
    view.set_corpus_files([corpus])
    view.vocab_spin.setValue(300)
    with qtbot.waitSignal(view.error_shown, timeout=RUN_MS):
        assert view.start_training()
        corpus.unlink()
    box = view.error_box
    assert isinstance(box, QMessageBox)
    box.button(QMessageBox.StandardButton.Ok).click()
    qtbot.waitUntil(lambda: not view.is_running(), timeout=RUN_MS)
    assert view.phase_label.text() == "Failed"
    assert "failing" in view.learn_view.sample_text  # Watch BPE learn shows the failed file's text
    view.set_corpus_files([small_corpus])
    assert view.phase_label.text() == "Ready"
    assert "failing" not in view.learn_view.sample_text
    # The special tokens' count waits while training: the preview does not claim to be counting.
    view.set_corpus_files([big_corpus])
    with qtbot.waitSignal(view.training_ended, timeout=RUN_MS):
        assert view.start_training()
        assert "counting special tokens" not in view.preview_label.text()
        assert "after the run" in view.preview_label.text()
    qtbot.waitUntil(
        lambda: "special tokens" in view.preview_label.text() and "…" not in view.preview_label.text()
    )


def test_the_new_options_are_kept_between_sessions(qtbot, window: MainWindow, settings: Any) -> None:  # type: ignore[no-untyped-def]
    from bpe_studio.ui.app.settings import settings_from_json

    form = window.train_view.form
    form.max_length_spin.setValue(12)
    form.chunk_spin.setValue(2048)
    form.utf8_combo.setCurrentIndex(form.utf8_combo.findData("replace"))
    form.skip_bad_check.setChecked(True)
    form.checkpoint_every_spin.setValue(77)
    form.text_field_combo.setEditText("body")
    window.store_settings()
    again = MainWindow(settings_from_json(window.settings.to_json()), persist=False)
    qtbot.addWidget(again)
    kept = again.train_view.form_settings()
    assert (kept.max_token_length, kept.chunk_size, kept.invalid_utf8) == (12, 2048 * 1024, "replace")
    assert (kept.skip_bad_records, kept.checkpoint_every, kept.text_field) == (True, 77, "body")


def test_compare_corpus_hint_follows_the_files(qtbot, window: MainWindow, small_corpus: Path) -> None:  # type: ignore[no-untyped-def]
    from bpe_studio.ui.compare.corpus import CorpusCompareView

    corpus_view = window.findChild(CorpusCompareView)
    assert corpus_view is not None
    assert corpus_view.status_label.text().startswith("Add corpus files")
    corpus_view.add_files([small_corpus])
    assert not corpus_view.status_label.text().startswith("Add corpus files")
    assert "1 corpus file" in corpus_view.status_label.text()


def test_a_failed_open_names_the_file_and_what_is_still_shown(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, dialogs: ScriptedDialogs, tmp_path: Path
) -> None:
    views = window.tokenizer_views
    with qtbot.waitSignal(views.current_changed, timeout=RUN_MS):
        trigger(window, "Tokenizer", "Open GPT-2")
    bad = tmp_path / "broken.json"
    bad.write_text("{not json", encoding="utf-8")
    dialogs.answer(bad)
    with qtbot.waitSignal(views.error_shown, timeout=RUN_MS):
        trigger(window, "Tokenizer", "Open tokenizer")
    message = window.statusBar().currentMessage()
    assert "broken.json could not be opened" in message and "still shown" in message
    for box in window.findChildren(QMessageBox):
        box.close()


# ------------------------------------------------------------------------------------------------------
# Item 10: the demo corpus is built off the GUI thread
# ------------------------------------------------------------------------------------------------------


def test_the_demo_corpus_is_built_off_the_gui_thread(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, small_corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bpe_studio.demo

    built_on: list[threading.Thread] = []
    release = threading.Event()

    def slow_demo_corpus() -> Path:
        built_on.append(threading.current_thread())
        assert release.wait(30), "the journey never let the demo corpus finish"
        return small_corpus

    monkeypatch.setattr(bpe_studio.demo, "demo_corpus", slow_demo_corpus)
    view = window.train_view
    trigger(window, "File", "Open demo corpus")
    # The menu returned while the corpus is still being built: the window paints and answers meanwhile.
    qtbot.waitUntil(lambda: bool(built_on))
    assert built_on[0] is not threading.main_thread()
    assert view.is_preparing_demo() and view.corpus_files() == []
    QApplication.processEvents()
    with qtbot.waitSignal(view.demo_ready, timeout=RUN_MS):
        release.set()
    assert view.corpus_files() == [small_corpus]


# ------------------------------------------------------------------------------------------------------
# Item 11: no meaningless numbers
# ------------------------------------------------------------------------------------------------------


def test_empty_charts_and_counting_show_no_meaningless_numbers(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, small_corpus: Path
) -> None:
    from bpe_studio.engine import Phase, PhaseStarted

    view = window.train_view
    charts, learn = view.progress.charts, view.learn_view
    # Before any run: whole merges from 0, no negative bytes, a token axis from 0 (not 190.6..191.4).
    for plot in (charts.count_plot, charts.length_plot):
        low, high = plot.vb.viewRange()[0]
        assert -0.05 * high <= low <= 0 and high >= 100, (low, high)  # (a little padding around 0)
    assert charts.length_plot.vb.viewRange()[1][0] >= -0.5  # (the density image's rows are centred)
    assert learn.plot.vb.viewRange()[1][0] == 0
    # A theme switch shows no replay mark at merge 0 (there is no run to mark).
    trigger(window, "View", "Theme", "Dark")
    trigger(window, "View", "Theme", "Light")
    assert not any(mark.isVisible() for mark in charts.replay_marks)
    # Counting has begun but no chunk is counted yet: no "0 B of 0 B · at least 0 unique pre-tokens".
    view.set_corpus_files([small_corpus])
    config = view.build_config()
    view.progress.begin(config)
    view.progress.add_events([PhaseStarted(Phase.COUNTING, 0.01)])
    view.progress._update_status()
    assert "0 B of 0 B" not in view.progress_bar.format() and "at least 0" not in view.progress_bar.format()
    view.progress.stop()


# ------------------------------------------------------------------------------------------------------
# Item 16: Watch BPE learn's slider and replay follow the log scale; the merges table follows the replay
# ------------------------------------------------------------------------------------------------------


def test_replay_scale_gives_the_first_merges_their_share() -> None:
    from bpe_studio.ui.present.replay_scale import (
        LOG_PACE,
        REPLAY_SECONDS,
        SLIDER_STEPS,
        replay_target,
        slider_merges,
        slider_position,
    )

    total = 65_279
    # The first 1,000 merges had 1.5% of a linear slider's travel; on the log scale they have most of it.
    assert slider_position(1_000, total) / SLIDER_STEPS > 0.6
    positions = range(SLIDER_STEPS + 1)
    merges = [slider_merges(p, total) for p in positions]
    assert merges[0] == 0 and merges[-1] == total and merges == sorted(merges)
    assert all(slider_merges(slider_position(m, total), total) == m for m in range(60))  # exact at first
    # A replay at the default pace ends in REPLAY_SECONDS, whatever the run's length (100/s took 11 min).
    for n in (50, total, 1_000_000):
        assert replay_target(0, n, REPLAY_SECONDS, speed=LOG_PACE) == n
        assert replay_target(0, n, REPLAY_SECONDS / 2, speed=LOG_PACE) < n


def test_the_merges_table_follows_the_replay(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, small_corpus: Path
) -> None:
    from bpe_studio.ui.present.replay_scale import LOG_PACE, slider_position

    view = window.train_view
    learn = view.learn_view
    assert learn.speed_combo.currentData() == LOG_PACE  # the default replay: the whole run in 30 s
    view.set_corpus_files([small_corpus])
    view.vocab_spin.setValue(700)
    with qtbot.waitSignal(view.training_ended, timeout=RUN_MS):
        trigger(window, "Training", "Start")
    total = len(view.result.merges)  # type: ignore[union-attr]
    learn.slider.setValue(slider_position(30, total))
    assert learn.merges_applied == 30
    selected = view.merges_table.selectionModel().selectedRows()
    assert [index.row() for index in selected] == [29]  # the 30th merge, the last one applied
    learn.step_button.click()
    assert [index.row() for index in view.merges_table.selectionModel().selectedRows()] == [30]
    # The slider's middle is the middle of the log scale: far fewer merges than half the run.
    learn.slider.setValue(learn.slider.maximum() // 2)
    assert 0 < learn.merges_applied < total // 4
