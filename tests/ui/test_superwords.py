"""Superwords in the app: the Train form's "Superwords after" makes a SuperBPE run, and Watch BPE learn cuts
its sample into superwords at the transition and marks the tokens that span words."""

# ruff: noqa: F811 - fixtures imported from tokenizer_helpers are test arguments

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from bpe_studio.engine import Tokenizer, TrainConfig, train
from bpe_studio.engine.training.learn import is_superword
from bpe_studio.ui.app.main_window import MainWindow
from bpe_studio.ui.train.form import TrainForm
from bpe_studio.ui.train.learn_view import LearnView
from bpe_studio.ui.train.merges_model import SUPERWORD_MARK, MergesTableModel

from .tokenizer_helpers import SPECIAL, WAIT_MS, tiny_corpus  # noqa: F401 - fixtures

UNDERLINE = "text-decoration: underline"


def test_the_form_asks_for_superwords_after_a_vocabulary_size(qtbot, tiny_corpus: Path) -> None:  # type: ignore[no-untyped-def]
    form = TrainForm()
    qtbot.addWidget(form)
    form.set_corpus_files([tiny_corpus])
    form.vocab_spin.setValue(700)
    assert form.build_config().superword_transition is None  # Off by default
    form.superword_spin.setValue(600)
    assert form.build_config().superword_transition == 600


def test_watch_bpe_learn_shows_superwords_after_the_transition(qtbot, tiny_corpus: Path) -> None:  # type: ignore[no-untyped-def]
    config = TrainConfig(
        inputs=(tiny_corpus,), vocab_size=700, special_tokens=(SPECIAL,), superword_transition=600
    )
    result = train(config)
    assert result.superword_transition == 600 - 257
    view = LearnView()
    qtbot.addWidget(view)
    view.resize(900, 260)
    view.show()
    view.start_run(config)
    text = view.sample_text
    before = result.superword_transition
    view.add_merges(result.merges[:before])
    with qtbot.waitSignal(view.advanced, timeout=WAIT_MS, check_params_cb=lambda k: k == before):
        pass
    assert UNDERLINE not in view.tokens_html()  # ordinary tokens only, up to the transition
    view.add_merges(result.merges[before:])
    total = len(result.merges)
    with qtbot.waitSignal(view.advanced, timeout=WAIT_MS, check_params_cb=lambda k: k == total):
        pass
    tokenizer = Tokenizer.from_result(result)
    ids = tokenizer.encode(text, allowed_special="all")
    assert view.token_count == len(ids)
    superwords = [tokenizer.vocab[i] for i in ids if is_superword(tokenizer.vocab[i])]
    assert superwords  # the sample of English prose has some
    assert view.tokens_html().count(UNDERLINE) == len(superwords)
    view.end_run()


def test_a_superword_run_in_the_window_marks_its_merges_after_the_transition(
    qtbot, window: MainWindow, small_corpus: Path
) -> None:  # type: ignore[no-untyped-def]
    view = window.train_view
    view.set_corpus_files([small_corpus])
    view.vocab_spin.setValue(900)
    view.form.superword_spin.setValue(700)
    with qtbot.waitSignal(view.training_ended, timeout=60_000) as ended:
        qtbot.mouseClick(view.start_button, Qt.MouseButton.LeftButton)
    assert ended.args == ["finished"]
    expected = train(
        TrainConfig(
            inputs=(small_corpus,), vocab_size=900, special_tokens=(SPECIAL,), superword_transition=700
        )
    )
    result = view.result
    assert result is not None and result.merges == expected.merges and result.vocab == expected.vocab
    model = view.merges_model
    first = 700 - 257
    rank = MergesTableModel.RANK
    assert not model.data(model.index(first - 1, rank)).endswith(SUPERWORD_MARK)
    assert model.data(model.index(first, rank)).endswith(SUPERWORD_MARK)
    assert "superword merge" in model.data(model.index(first, rank), Qt.ItemDataRole.ToolTipRole)
