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
    form.vocab_spin.setValue(GPT2_TOKENS + 60)
    qtbot.waitUntil(lambda: not form.vocab_error.isVisible(), timeout=5_000)
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
    learn = view.learn_view
    assert learn.merges_applied == GPT2_MERGES + 60
    assert learn._merges[:GPT2_MERGES] == list(result.merges[:GPT2_MERGES])
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
    with qtbot.waitSignal(window.tokenizer_opened, timeout=RUN_MS):
        view.open_button.click()
    # The choice is kept in the settings (and "Superwords after" too).
    assert view.form_settings().extend == "gpt2"
    # Back to the bytes: the form's own pattern and special tokens come back, unlocked.
    combo = form.base_combo
    combo.setCurrentIndex(0)
    combo.activated.emit(0)
    assert form.vocab_spin.minimum() == 257 and form.pattern_edit.isEnabled()
    assert form.superword_spin.isEnabled()
    assert form.build_config().extend is None
