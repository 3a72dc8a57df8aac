"""Watch BPE learn: the sample follows a run's merges from a timer (never per merge), equals the tokenizer
cut to those merges, replays the run after it, and follows the Train view's runs."""

# ruff: noqa: F811 - fixtures imported from tokenizer_helpers are test arguments

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QSize

from bpe_studio.engine import Tokenizer, TrainConfig, TrainResult
from bpe_studio.engine.encoding.analysis import cut_to_merges
from bpe_studio.ui.app.main_window import MainWindow
from bpe_studio.ui.present.replay_scale import LOG_PACE, slider_position
from bpe_studio.ui.train.charts import render_chart
from bpe_studio.ui.train.learn_view import SPEEDS, LearnView

from .tokenizer_helpers import SPECIAL, WAIT_MS, tiny_corpus, tiny_result  # noqa: F401 - fixtures


def _count(result: TrainResult, text: str, k: int) -> int:
    tok = Tokenizer(result.vocab, result.merges, {SPECIAL: max(result.vocab) + 1})
    return len(cut_to_merges(tok, k).encode(text, allowed_special="all"))


def _fed_view(qtbot, corpus: Path, result: TrainResult) -> LearnView:  # type: ignore[no-untyped-def]
    view = LearnView()
    qtbot.addWidget(view)
    view.resize(900, 260)
    view.show()
    config = TrainConfig(inputs=(corpus,), vocab_size=len(result.vocab) + 1, special_tokens=(SPECIAL,))
    view.start_run(config)
    return view


def test_the_sample_follows_the_merges_on_the_timer(
    qtbot, tiny_corpus: Path, tiny_result: TrainResult
) -> None:  # type: ignore[no-untyped-def]
    view = _fed_view(qtbot, tiny_corpus, tiny_result)
    text = view.sample_text
    assert text and text in tiny_corpus.read_text(encoding="utf-8")  # drawn from the corpus
    assert view.token_count == len(text.encode("utf-8"))  # no merge yet: one token per byte
    assert not view.play_button.isEnabled()  # no replay while a run goes on
    merges = tiny_result.merges
    for done in (10, 120, len(merges)):
        view.add_merges(merges[view.merges_applied if done != 10 else 0 : done])
        assert view.merges_applied < done  # nothing is applied per merge: the timer does it
        with qtbot.waitSignal(view.advanced, timeout=WAIT_MS, check_params_cb=lambda k, d=done: k == d):
            pass
        assert view.token_count == _count(tiny_result, text, done)
        assert f"{view.token_count:,} tokens" in view.count_label.text()
    html = view.tokens_html()
    assert html.count("<span") >= view.token_count
    view.end_run()
    assert view.play_button.isEnabled() and view.slider_merges(view.slider.maximum()) == len(merges)


def test_after_the_run_it_replays_merge_by_merge(qtbot, tiny_corpus: Path, tiny_result: TrainResult) -> None:  # type: ignore[no-untyped-def]
    view = _fed_view(qtbot, tiny_corpus, tiny_result)
    text = view.sample_text
    merges = tiny_result.merges
    view.add_merges(merges)
    view.end_run()
    assert view.merges_applied == len(merges)
    # Step back and forward.
    view.back_button.click()
    assert view.merges_applied == len(merges) - 1
    assert view.token_count == _count(tiny_result, text, len(merges) - 1)
    view.slider.setValue(slider_position(40, len(merges)))  # (a log scale: exact in the first merges)
    assert view.merges_applied == 40 and view.token_count == _count(tiny_result, text, 40)
    view.step_button.click()
    assert view.merges_applied == 41 and view.token_count == _count(tiny_result, text, 41)
    # Play at 1,000 merges/s (50 a frame): it goes on from the slider to the end of the run, then stops.
    view.speed_combo.setCurrentIndex(view.speed_combo.findData(1_000))
    seen: list[int] = []
    view.advanced.connect(seen.append)
    with qtbot.waitSignal(view.advanced, timeout=WAIT_MS, check_params_cb=lambda k: k == len(merges)):
        view.play_button.setChecked(True)
    assert not view.play_button.isChecked()
    assert seen == sorted(seen) and seen[0] >= 41 and len(set(seen)) > 1
    assert view.token_count == _count(tiny_result, text, len(merges))
    # Play again from the end: the replay starts over.
    view.speed_combo.setCurrentIndex(len(SPEEDS) - 1)
    with qtbot.waitSignal(view.advanced, timeout=WAIT_MS, check_params_cb=lambda k: k == 0):
        view.play_button.setChecked(True)
    view.play_button.setChecked(False)


def test_a_typed_sample_is_kept_and_tokenized(qtbot, tiny_corpus: Path, tiny_result: TrainResult) -> None:  # type: ignore[no-untyped-def]
    view = _fed_view(qtbot, tiny_corpus, tiny_result)
    view.add_merges(tiny_result.merges[:100])
    with qtbot.waitSignal(view.advanced, timeout=WAIT_MS, check_params_cb=lambda k: k == 100):
        pass
    view.edit_button.setChecked(True)
    assert view.stack.currentWidget() is view.editor
    mine = f"My own words, with the statement assert.{SPECIAL}And more."
    view.editor.setPlainText(mine)
    view.edit_button.setChecked(False)
    assert view.sample_text == mine and view.merges_applied == 100
    assert view.token_count == _count(tiny_result, mine, 100)
    assert "<|endoftext|>" in view.tokens_view.toPlainText()
    # A new run keeps the user's text.
    view.start_run(TrainConfig(inputs=(tiny_corpus,), vocab_size=300, special_tokens=(SPECIAL,)))
    assert view.sample_text == mine and view.merges_applied == 0


def test_it_follows_the_train_views_runs(
    qtbot, window: MainWindow, tiny_corpus: Path, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    view = window.train_view
    learn = view.findChild(LearnView)
    assert learn is not None and learn.isVisible()
    view.set_corpus_files([tiny_corpus])
    view.vocab_spin.setValue(700)
    with qtbot.waitSignal(view.training_ended, timeout=WAIT_MS):
        assert view.start_training()
    result = view.result
    assert result is not None
    assert learn.merges_applied == len(result.merges)
    assert learn.sample_text in tiny_corpus.read_text(encoding="utf-8")
    assert learn.token_count == _count(result, learn.sample_text, len(result.merges))
    assert learn.play_button.isEnabled()
    png, _svg = render_chart(learn.plot_widget, QSize(280, 200))
    (tmp_path / "learn-curve.png").write_bytes(png)
    # A second run starts from single bytes again.
    view.vocab_spin.setValue(300)
    with qtbot.waitSignal(view.training_ended, timeout=WAIT_MS):
        assert view.start_training()
    assert learn.merges_applied == 300 - 257


def test_it_follows_the_theme(qtbot) -> None:  # type: ignore[no-untyped-def]
    from bpe_studio.ui.app.style import DARK_THEME, qt_palette
    from bpe_studio.ui.present.token_format import DARK_PALETTE, LIGHT_PALETTE

    view = LearnView()
    qtbot.addWidget(view)
    assert LIGHT_PALETTE.backgrounds[0] in view.tokens_html()
    view.setPalette(qt_palette(DARK_THEME))
    assert DARK_PALETTE.backgrounds[0] in view.tokens_html()
    assert view.plot_widget.backgroundBrush().color().name().lower() == DARK_THEME.base.lower()


def test_a_compressed_json_lines_corpus_gives_a_sample(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import gzip
    import json

    text = "".join(f"Line {i} of a document stored as JSON Lines.\n" for i in range(30))
    path = tmp_path / "shard.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        for record in ({"text": "short"}, {"text": text}):
            handle.write(json.dumps(record) + "\n")
    view = LearnView()
    qtbot.addWidget(view)
    view.start_run(TrainConfig(inputs=(path,), vocab_size=300))
    assert view.sample_text.startswith("Line 0 of a document") and "{" not in view.sample_text


def test_the_demo_replays_its_run_at_a_pace_to_follow(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, tiny_corpus: Path, monkeypatch
) -> None:
    """The native kernel trains the demo in seconds; the demo then replays its merges along the log scale.
    A run the user starts is not replayed unasked."""
    import bpe_studio.demo

    monkeypatch.setattr(bpe_studio.demo, "demo_corpus", lambda: tiny_corpus)
    monkeypatch.setattr(bpe_studio.demo, "DEMO_VOCAB_SIZE", 600)
    view = window.train_view
    learn = view.findChild(LearnView)
    assert learn is not None
    with qtbot.waitSignal(view.training_ended, timeout=WAIT_MS) as ended:
        view.load_demo(start=True)
    assert ended.args == ["finished"]
    assert learn.play_button.isChecked(), "the demo's run is not being replayed"
    assert learn.speed_combo.currentData() == LOG_PACE  # the whole run in 30 s, whatever its length
    assert learn.merges_applied < len(view.result.merges)  # type: ignore[union-attr]
    with qtbot.waitSignal(learn.advanced, timeout=WAIT_MS):
        pass  # the replay moves on by itself (from its timer)
    learn.play_button.setChecked(False)
    # A run started with the Start button ends without a replay.
    with qtbot.waitSignal(view.training_ended, timeout=WAIT_MS):
        assert view.start_training()
    assert not learn.play_button.isChecked()


def test_the_training_charts_follow_the_replay(qtbot, settings: Any, small_corpus: Path) -> None:  # type: ignore[no-untyped-def]
    window = MainWindow(settings, persist=False)
    qtbot.addWidget(window)
    view = window.train_view
    charts = view.progress.charts
    view.set_corpus_files([small_corpus])
    view.vocab_spin.setValue(400)
    with qtbot.waitSignal(view.training_ended, timeout=60_000):
        assert view.start_training()
        assert not any(mark.isVisible() for mark in charts.replay_marks)  # hidden while training
    learn = view.learn_view
    learn.go_to(10)  # as the slider or Step does
    assert all(mark.isVisible() and mark.value() == 9 for mark in charts.replay_marks)
    with qtbot.waitSignal(view.training_started, timeout=60_000):
        assert view.start_training()
    assert not any(mark.isVisible() for mark in charts.replay_marks)  # a new run: gone again
    view.shutdown()
