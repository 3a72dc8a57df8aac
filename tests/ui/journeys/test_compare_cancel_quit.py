"""Journeys: compare two tokenizers from the menu; cancel a training and start it again; quit while a
training runs."""

# ruff: noqa: F811, PLR0917 - fixtures (some imported from tokenizer_helpers) are test arguments

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from bpe_studio.engine import TrainConfig
from bpe_studio.ui.app.main_window import MainWindow
from bpe_studio.ui.app.settings import Settings
from bpe_studio.ui.app.tokenizer_views import TokenizerViews
from bpe_studio.ui.train.view import save_result

from ..conftest import worker_processes
from ..tokenizer_helpers import SPECIAL, WAIT_MS, tiny_corpus, train_tiny, views, wait_playground  # noqa: F401
from .conftest import ScriptedDialogs, click, shoot, trigger

RUN_MS = 120_000


def _saved(corpus: Path, vocab_size: int, path: Path) -> Path:
    config = TrainConfig(inputs=(corpus,), vocab_size=vocab_size, special_tokens=(SPECIAL,))
    save_result(train_tiny(corpus, vocab_size), config, path)
    return path


def test_compare_two_tokenizers_from_the_menu(  # type: ignore[no-untyped-def]
    qtbot,
    window: MainWindow,
    views: TokenizerViews,
    tiny_corpus: Path,
    dialogs: ScriptedDialogs,
    tmp_path: Path,
    shots: Path,
) -> None:
    small = _saved(tiny_corpus, 300, tmp_path / "small.json")
    large = _saved(tiny_corpus, 500, tmp_path / "large.json")
    dialogs.answer(small)
    with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS):
        trigger(window, "Tokenizer", "Open tokenizer")
    wait_playground(qtbot, views.playground)

    # Tokenizer ▸ Compare with… opens B and shows the Compare tab with both.
    dialogs.answer(large)
    compare = views.compare
    trigger(window, "Tokenizer", "Compare with")

    def b_is_shown() -> bool:
        b = compare.chosen("b")
        return b is not None and b.path is not None and b.path.name == "large.json" and not compare.is_busy()

    # B loads in the background, then both sides are encoded (Compare may already have compared A with A).
    qtbot.waitUntil(b_is_shown, timeout=WAIT_MS)
    assert window.tabs.currentWidget() is compare
    a, b = compare.chosen("a"), compare.chosen("b")
    assert a is not None and b is not None
    assert {a.path.name, b.path.name} == {"small.json", "large.json"}  # type: ignore[union-attr]
    # The larger vocabulary needs fewer tokens for the same text, and the figures say so.
    text = compare.counts_label.text() + compare.merges_label.text()
    assert text.strip(), "the Compare tab shows no figures"
    assert "same tokenizer" not in text
    shoot(window, shots, "compare")

    # Ctrl+4 comes back to Compare after visiting the playground with Ctrl+2.
    qtbot.keyClick(window, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)
    assert window.tabs.currentWidget() is views.playground
    qtbot.keyClick(window, Qt.Key.Key_4, Qt.KeyboardModifier.ControlModifier)
    assert window.tabs.currentWidget() is compare


def test_cancel_then_start_again(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, big_corpus: Path, dialogs: ScriptedDialogs, shots: Path
) -> None:
    view = window.train_view
    dialogs.answer([big_corpus])
    trigger(window, "File", "Add corpus files")
    view.vocab_spin.setValue(2000)

    with qtbot.waitSignal(view.training_started, timeout=WAIT_MS):
        click(qtbot, view, "Start training")
    # Training ▸ Cancel (Ctrl+.) stops the run; its state says so and no worker is left.
    with qtbot.waitSignal(view.training_ended, timeout=RUN_MS) as ended:
        qtbot.keyClick(window, Qt.Key.Key_Period, Qt.KeyboardModifier.ControlModifier)
    assert ended.args == ["cancelled"]
    qtbot.waitUntil(lambda: worker_processes() == [], timeout=WAIT_MS)
    shoot(window, shots, "train-cancelled")

    # Start again with a smaller vocabulary (Ctrl+Return): a fresh run to the end.
    view.vocab_spin.setValue(400)
    with qtbot.waitSignal(view.training_ended, timeout=RUN_MS) as ended:
        qtbot.keyClick(window, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert ended.args == ["finished"]
    assert view.result is not None and len(view.result.vocab) == 400
    shoot(window, shots, "train-restarted")


def test_quit_while_training_stops_everything(  # type: ignore[no-untyped-def]
    qtbot, settings: Settings, big_corpus: Path, dialogs: ScriptedDialogs
) -> None:
    window = MainWindow(settings, persist=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    view = window.train_view
    dialogs.answer([big_corpus])
    trigger(window, "File", "Add corpus files")
    view.vocab_spin.setValue(5000)
    with qtbot.waitSignal(view.training_started, timeout=WAIT_MS):
        trigger(window, "Training", "Start")
    assert view.is_running()

    trigger(window, "File", "Quit")
    assert not window.isVisible()
    assert not view.is_running()
    assert not view.runner.is_busy(), "the training thread outlived the window"
    qtbot.waitUntil(lambda: worker_processes() == [], timeout=WAIT_MS)
