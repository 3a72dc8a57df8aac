"""Journeys of issue 23 in the app: a run that starts from a tokenizer (the Train form's "Start from"), and a
superword run whose transition the charts mark."""

# ruff: noqa: PLR0917 - fixtures are test arguments

from __future__ import annotations

from pathlib import Path
from typing import Any

from bpe_studio.engine.formats import FORMATS, load
from bpe_studio.ui.app.main_window import MainWindow

from .conftest import ScriptedDialogs, shoot, trigger

#: Long enough for a small training on a loaded machine (an extend run opens GPT-2 twice: form and child).
RUN_MS = 180_000
#: GPT-2's tokens and merges.
GPT2_TOKENS, GPT2_MERGES = 50_257, 50_000


def _choose_base(qtbot: Any, form: Any, text: str) -> None:
    """Pick an entry of "Start from" as a person does (the combo's activated signal), and wait until the
    tokenizer is opened."""
    combo = form.base_combo
    index = combo.findText(text)
    assert index >= 0, f"no {text!r} under Start from"
    with qtbot.waitSignal(form.base_runner.finished, timeout=RUN_MS):
        combo.setCurrentIndex(index)
        combo.activated.emit(index)


def test_an_extended_run_keeps_the_bases_ids(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, dialogs: ScriptedDialogs, small_corpus: Path, tmp_path: Path, shots: Path
) -> None:
    window.resize(1024, 640)
    view = window.train_view
    form = view.form
    dialogs.answer([small_corpus])
    trigger(window, "File", "Add corpus files")
    _choose_base(qtbot, form, "GPT-2 (built in)")
    # The vocab size counts GPT-2's tokens (raised, and said why); its pattern and special token are the
    # run's, shown and locked; superwords are off.
    assert form.vocab_spin.minimum() == GPT2_TOKENS + 1
    assert form.vocab_spin.value() == GPT2_TOKENS + 1000
    assert form.vocab_error.isVisible() and "50,257 tokens of GPT-2" in form.vocab_error.text()
    assert form.special_tokens() == ["<|endoftext|>"]
    assert form.pattern_combo.currentData() == "gpt2"
    for control in (form.pattern_combo, form.pattern_edit, form.specials_view, form.superword_spin):
        assert not control.isEnabled()
        assert "GPT-2" in control.toolTip()
    assert "50,000 merges" in form.base_note.text()
    shoot(window, shots, "train-start-from-gpt2-1024x640")
    form.vocab_spin.setValue(GPT2_TOKENS + 60)
    qtbot.waitUntil(lambda: not form.vocab_error.isVisible(), timeout=RUN_MS)
    assert view.start_button.isEnabled(), view.start_button.toolTip()
    with qtbot.waitSignal(view.training_ended, timeout=RUN_MS) as ended:
        trigger(window, "Training", "Start")
    assert ended.args == ["finished"]
    result = view.result
    assert result is not None and len(result.vocab) == GPT2_TOKENS + 60
    assert result.vocab[50256] == b"<|endoftext|>" and result.base_merges == GPT2_MERGES
    # The first new merge is merge 50,001: in the table, on the charts and in Watch BPE learn, whose replay
    # starts from GPT-2's merges (not the bytes).
    model = view.progress.merges_model
    assert model.rowCount() == 60
    assert model.data(model.index(0, 0)).replace(",", "") == str(GPT2_MERGES + 1)
    charts = view.progress.charts
    assert charts.first_merge == GPT2_MERGES and charts.merge_count == 60
    low, high = charts.count_plot.vb.viewRange()[0]
    assert low < GPT2_MERGES < high
    assert view.progress_bar.text().startswith(f"{GPT2_MERGES + 60:,} merges")
    assert view.summary_labels["merges"].text() == "60 new after GPT-2's 50,000"
    assert "(50,257 of GPT-2, 60 new)" in view.summary_labels["tokens"].text()
    learn = view.learn_view
    assert learn.merges_applied == GPT2_MERGES + 60
    assert learn._merges[:GPT2_MERGES] == list(result.merges[:GPT2_MERGES])
    # Stepped back to the base's last merge, the sample's tokens are GPT-2's own.
    learn.go_to(GPT2_MERGES)
    assert learn.token_count == len(load("gpt2").encode_ordinary(learn.sample_text))
    learn.go_to(GPT2_MERGES + 60)
    # Replay (at the end) starts from GPT-2's merges, not from the bytes.
    learn.play_button.click()
    assert learn.merges_applied == GPT2_MERGES
    learn.play_button.click()
    learn.go_to(GPT2_MERGES + 60)
    shoot(window, shots, "train-extended-gpt2-1024x640")
    # Saved in every format, each opens with GPT-2's ids (and the new ones after them).
    for fmt in FORMATS:
        written = view.save_tokenizer(tmp_path / f"extended-{fmt}", fmt)
        assert written is not None, fmt
        opened = load(written)
        assert opened.vocab[50256] == b"<|endoftext|>", fmt
        assert opened.vocab[GPT2_TOKENS + 59] == result.vocab[GPT2_TOKENS + 59], fmt
        assert opened.encode("Hello world") == [15496, 995], fmt
    # Opened in the Playground: the ids are GPT-2's.
    views = window.tokenizer_views
    with qtbot.waitSignal(views.current_changed, timeout=RUN_MS):
        view.open_button.click()
    opened_here = views.current
    assert opened_here is not None and opened_here.tokenizer.vocab[50256] == b"<|endoftext|>"
    assert opened_here.tokenizer.encode("Hello world") == [15496, 995]
    assert len(opened_here.tokenizer.vocab) == GPT2_TOKENS + 60
    # The choice is kept in the settings (and "Superwords after" too).
    assert view.form_settings().extend == "gpt2"
    # Back to the bytes: the form's own pattern and special tokens come back, unlocked.
    combo = form.base_combo
    combo.setCurrentIndex(0)
    combo.activated.emit(0)
    assert form.vocab_spin.minimum() == 257 and form.pattern_edit.isEnabled()
    assert form.superword_spin.isEnabled()
    assert form.build_config().extend is None


def _small_tokenizer(folder: Path, corpus: Path) -> Path:
    """A 300-token tokenizer of our own, saved as a tiktoken rank file (one of the formats a base may be)."""
    from bpe_studio.engine import TrainConfig, train
    from bpe_studio.engine.encoding.tokenizer import Tokenizer
    from bpe_studio.engine.formats import save

    result = train(TrainConfig(inputs=(corpus,), vocab_size=300))
    return save(Tokenizer(result.vocab, result.merges), folder / "small.tiktoken", format="tiktoken")


def test_start_from_a_chosen_file_and_a_bad_one(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, dialogs: ScriptedDialogs, small_corpus: Path, tmp_path: Path
) -> None:
    view = window.train_view
    form = view.form
    view.set_corpus_files([small_corpus])
    base = _small_tokenizer(tmp_path, small_corpus)
    dialogs.answer(base)
    _choose_base(qtbot, form, "Choose file…")
    # The file is listed under its name (its path in the tooltip) and chosen; the run extends it.
    assert form.base_combo.currentText() == "small.tiktoken" and form.base_source() == str(base)
    assert form.vocab_spin.minimum() == 301
    form.vocab_spin.setValue(340)
    with qtbot.waitSignal(view.training_ended, timeout=RUN_MS) as ended:
        trigger(window, "Training", "Start")
    assert ended.args == ["finished"]
    assert view.result is not None and len(view.result.vocab) == 340 and view.result.base_merges == 44
    assert view.progress.merges_model.data(view.progress.merges_model.index(0, 0)) == "45"
    # A file that is not a tokenizer: said beside "Start from", Start disabled with the reason.
    bad = tmp_path / "notes.json"
    bad.write_text('{"hello": 1}', encoding="utf-8")
    dialogs.answer(bad)
    combo = form.base_combo
    with qtbot.waitSignal(form.base_runner.errored, timeout=RUN_MS):
        combo.setCurrentIndex(combo.findText("Choose file…"))
        combo.activated.emit(combo.currentIndex())
    assert form.base_error.isVisible() and "notes.json" in form.base_error.text()
    assert not view.start_button.isEnabled() and "notes.json" in view.start_button.toolTip()
    assert view.start_button.toolTip().startswith("Start from: "), view.start_button.toolTip()
    assert form.base_error.text().count("notes.json") == 1, form.base_error.text()


def test_start_from_and_superwords_are_kept_between_sessions(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, tmp_path: Path
) -> None:
    from bpe_studio.ui.app.settings import settings_from_json

    form = window.train_view.form
    form.vocab_spin.setValue(2000)
    form.superword_spin.setValue(1500)
    window.store_settings()
    again = MainWindow(settings_from_json(window.settings.to_json()), persist=False)
    qtbot.addWidget(again)
    assert again.train_view.form.superword_spin.value() == 1500
    assert again.train_view.form.base_source() is None
    # A recent tokenizer is offered under Start from; chosen, it is remembered (superwords go off).
    recent = tmp_path / "recent.json"
    window.remember_tokenizer(recent)
    assert form.base_combo.findData(str(recent)) >= 0
    _choose_base(qtbot, form, "GPT-2 (built in)")
    assert form.superword_spin.value() == 0
    window.store_settings()
    third = MainWindow(settings_from_json(window.settings.to_json()), persist=False)
    qtbot.addWidget(third)
    restored = third.train_view.form
    assert restored.base_source() == "gpt2" and restored.base_combo.currentText() == "GPT-2 (built in)"
    qtbot.waitUntil(lambda: restored.base is not None, timeout=RUN_MS)
    assert restored.vocab_spin.value() == GPT2_TOKENS + 1000
    assert restored.base is not None and restored.base.source == "gpt2"
    for win in (again, third):
        win.train_view.shutdown()


def test_the_charts_mark_a_superword_runs_transition(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, small_corpus: Path, shots: Path
) -> None:
    import math

    window.resize(1024, 640)
    view = window.train_view
    form = view.form
    view.set_corpus_files([small_corpus])
    form.specials_model.setStringList(["<|endoftext|>"])
    view.vocab_spin.setValue(700)
    form.set_more_options_shown(True)
    form.superword_spin.setValue(500)
    with qtbot.waitSignal(view.training_ended, timeout=RUN_MS) as ended:
        trigger(window, "Training", "Start")
    assert ended.args == ["finished"]
    assert view.result is not None and view.result.superword_transition is not None
    first_superword = 500 - 256 - 1  # merges before the transition (256 bytes, one special token)
    charts = view.progress.charts
    for mark in charts.transition_marks:
        assert mark.isVisible() and mark.value() == first_superword - 0.5
        assert "Superwords start" in mark.toolTip()
    legend = [label.text for _, label in charts.length_legend.items]
    assert "superwords start" in legend
    assert view.summary_labels["merges"].text() == f"443 ({443 - first_superword} superword ✦)"
    # Watch BPE learn's chart marks it too (log10 of merges + 1, as its x axis).
    learn = view.learn_view
    assert learn.transition_mark.isVisible()
    assert math.isclose(learn.transition_mark.value(), math.log10(first_superword + 1))
    form.set_more_options_shown(False)
    shoot(window, shots, "train-superwords-1024x640")
    # A plain run after it: no transition anywhere.
    form.superword_spin.setValue(0)
    view.vocab_spin.setValue(400)
    with qtbot.waitSignal(view.training_ended, timeout=RUN_MS):
        trigger(window, "Training", "Start")
    assert not any(mark.isVisible() for mark in charts.transition_marks)
    assert "superwords start" not in [label.text for _, label in charts.length_legend.items]
    assert not learn.transition_mark.isVisible()


def test_compare_corpus_labels_a_superword_tokenizer_and_counts_it_right(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, dialogs: ScriptedDialogs, small_corpus: Path, tmp_path: Path
) -> None:
    """Plain BPE and a superword tokenizer of the same vocabulary size, opened from files (the superword one
    as tokenizer.json: no training record, its pattern tells), in Compare ▸ Corpus: the superword one is
    labelled in the list, the table and the legend, and each row's tokens are its tokenizer's own count."""
    from PySide6.QtCore import Qt

    from bpe_studio.engine import Tokenizer, TrainConfig, save, train

    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(small_corpus.read_bytes()[:60_000])
    paths = []
    for name, transition, fmt in (("plain.json", None, "studio"), ("super", 500, "hf")):
        config = TrainConfig(
            inputs=(corpus,),
            vocab_size=700,
            special_tokens=("<|endoftext|>",),
            superword_transition=transition,
        )
        written = save(Tokenizer.from_result(train(config)), tmp_path / name, format=fmt)
        paths.append(written / "tokenizer.json" if written.is_dir() else written)
    views = window.tokenizer_views
    for path in paths:
        dialogs.answer(path)
        with qtbot.waitSignal(views.current_changed, timeout=RUN_MS):
            trigger(window, "Tokenizer", "Open tokenizer")
    compare = views.compare
    window.tabs.setCurrentWidget(compare)
    compare.modes.setCurrentWidget(compare.corpus_view)
    view = compare.corpus_view
    listed = [view.tokenizer_list.item(i) for i in range(view.tokenizer_list.count())]
    for item in listed:
        item.setCheckState(Qt.CheckState.Checked)
    texts = [item.text() for item in listed]
    assert texts == ["plain.json", "super (superwords)"], texts
    assert "Superwords" in listed[1].toolTip() and "Superwords" not in listed[0].toolTip()
    dialogs.answer([corpus])
    qtbot.mouseClick(view.add_button, Qt.MouseButton.LeftButton)
    with qtbot.waitSignal(view.evaluated, timeout=RUN_MS):
        qtbot.mouseClick(view.compute_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not view.is_busy(), timeout=RUN_MS)
    text = corpus.read_text("utf-8")
    rows = view.rows
    assert [row.tokenizer for row in rows] == texts
    for row, path in zip(rows, paths, strict=True):
        tokens = len(load(path).encode_ordinary(text))
        assert row.compression.tokens == tokens
        assert row.compression.bytes_per_token == row.compression.bytes / tokens
    assert rows[1].ratio is not None and rows[1].ratio < 1  # superwords: fewer tokens at the same size
    legend = [label.text for _, label in view.chart.getPlotItem().legend.items]
    assert "super (superwords)" in legend


def test_an_extended_run_cancelled_before_merging_has_no_result(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, big_corpus: Path
) -> None:
    """Cancelled while counting, an extend run made nothing new: GPT-2 alone is not offered as its result."""
    from bpe_studio.engine import CountProgress, MergeMade, Phase

    view = window.train_view
    view.set_corpus_files([big_corpus])
    _choose_base(qtbot, view.form, "GPT-2 (built in)")

    cancelled: list[bool] = []

    def cancel_while_counting(events: list[Any]) -> bool:
        # Cancelled as the batch arrives (not a turn of the event loop later): the run still counts.
        counting = any(isinstance(e, CountProgress) for e in events)
        merging = any(isinstance(e, MergeMade) or getattr(e, "phase", None) is Phase.MERGING for e in events)
        if not cancelled and counting and not merging:
            cancelled.append(True)
            trigger(window, "Training", "Cancel")
        return False

    view.runner.progress.connect(cancel_while_counting)
    with qtbot.waitSignal(view.training_ended, timeout=RUN_MS) as ended:
        trigger(window, "Training", "Start")
    view.runner.progress.disconnect(cancel_while_counting)
    assert cancelled, "the run was never seen counting"
    assert ended.args == ["cancelled"]
    assert view.result is None and not view.open_button.isEnabled()
    assert view.progress_bar.text() == "cancelled after 0 new merges"


def test_superwords_after_says_its_problem_beside_it(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, small_corpus: Path, tmp_path: Path
) -> None:
    view = window.train_view
    form = view.form
    view.set_corpus_files([small_corpus])
    form.set_more_options_shown(True)
    view.vocab_spin.setValue(500)
    form.superword_spin.setValue(600)
    qtbot.waitUntil(form.superword_error.isVisible, timeout=RUN_MS)
    assert "below vocab_size (500)" in form.superword_error.text()
    assert not view.start_button.isEnabled() and view.start_button.toolTip().startswith("Superwords after:")
    form.superword_spin.setValue(400)
    form.checkpoint_edit.setText(str(tmp_path / "run.ckpt"))
    qtbot.waitUntil(lambda: "counts its corpus twice" in form.superword_error.text(), timeout=RUN_MS)
    form.checkpoint_edit.clear()
    qtbot.waitUntil(lambda: not form.superword_error.isVisible(), timeout=RUN_MS)
    assert view.start_button.isEnabled(), view.start_button.toolTip()


def test_a_base_file_gone_since_the_last_session_is_left_out(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from bpe_studio.ui.app.settings import settings_from_json

    gone = tmp_path / "gone.tiktoken"
    window = MainWindow(settings_from_json({"train": {"extend": str(gone)}}), persist=False)
    qtbot.addWidget(window)
    form = window.train_view.form
    assert form.base_source() is None and form.base_combo.currentText() == "Nothing (bytes)"
    assert not form.base_runner.is_busy()


def test_start_waits_while_the_base_opens(qtbot, window: MainWindow, small_corpus: Path) -> None:  # type: ignore[no-untyped-def]
    view = window.train_view
    form = view.form
    view.set_corpus_files([small_corpus])
    combo = form.base_combo
    with qtbot.waitSignal(form.base_runner.finished, timeout=RUN_MS):
        combo.setCurrentIndex(combo.findData("gpt2"))
        combo.activated.emit(combo.currentIndex())
        # Opening (off the GUI thread): Start waits and says why; nothing is shown as an error.
        assert not view.start_button.isEnabled() and "still opening" in view.start_button.toolTip()
        assert form.base_note.text() == "Opening GPT-2…" and not form.base_error.isVisible()
    qtbot.waitUntil(view.start_button.isEnabled, timeout=RUN_MS)
