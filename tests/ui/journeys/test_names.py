"""Journey: tokenizers named alike. Three exports each hold a ``tokenizer.json``; opened together, each list,
legend, title and Recent entry must tell them apart (issue 21), and the built-in GPT-2 is no internal path."""

# ruff: noqa: F811, PLR0917 - fixtures (some imported from tokenizer_helpers) are test arguments

from __future__ import annotations

from pathlib import Path

from bpe_studio.engine import Tokenizer, TrainResult, save
from bpe_studio.ui.app.main_window import BUILT_IN_GPT2, MainWindow
from bpe_studio.ui.app.tokenizer_views import TokenizerViews

from ..test_menu_actions import find_action
from ..tokenizer_helpers import (  # noqa: F401 - fixtures
    WAIT_MS,
    tiny_corpus,
    tiny_result,
    views,
    wait_playground,
)
from .conftest import ScriptedDialogs, trigger


def test_files_of_the_same_name_are_told_apart_everywhere(  # type: ignore[no-untyped-def]
    qtbot,
    window: MainWindow,
    views: TokenizerViews,
    tiny_result: TrainResult,
    dialogs: ScriptedDialogs,
    tmp_path: Path,
) -> None:
    files = []
    for run in ("monday", "tuesday", "wednesday"):
        path = tmp_path / run / "export" / "tokenizer.json"
        path.parent.mkdir(parents=True)
        save(Tokenizer.from_result(tiny_result), path, format="hf")
        files.append(path)
    for path in files:
        dialogs.answer(path)
        with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS):
            trigger(window, "Tokenizer", "Open tokenizer")
        wait_playground(qtbot, views.playground)
    expected = ["monday/export", "tuesday/export", "wednesday/export"]

    # The window's title and the playground's, for the one shown (the last opened).
    assert window.windowTitle() == "wednesday/export — BPE Studio"
    assert views.playground.title_label.text() == "wednesday/export"
    # Compare's two lists and its corpus mode's list (whose names are the chart's legend).
    compare = views.compare
    for side in compare.sides.values():
        assert [side.combo.itemText(i) for i in range(side.combo.count())] == expected
    corpus_list = compare.corpus_view.tokenizer_list
    assert sorted(corpus_list.item(i).text() for i in range(corpus_list.count())) == expected
    # File ▸ Recent tokenizers, newest first; the whole path is the tooltip.
    for name, path in zip(expected, files, strict=True):
        action = find_action(window, "File", "Recent tokenizers", name)
        assert action.toolTip() == str(path)
    # The export dialog's title.
    dialog = views.show_export_dialog()
    assert dialog is not None and dialog.windowTitle() == "Export wednesday/export"
    dialog.close()


def test_the_built_in_gpt2_is_named_in_recent_tokenizers(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views: TokenizerViews
) -> None:
    with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS):
        trigger(window, "Tokenizer", "Open GPT-2")
    wait_playground(qtbot, views.playground)
    menu = window.recent_tokenizers_menu
    assert [action.text() for action in menu.actions()] == [BUILT_IN_GPT2]
    # Chosen again from there, it opens.
    with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS):
        trigger(window, "File", "Recent tokenizers", BUILT_IN_GPT2)
    assert views.current is not None and views.current.tokenizer.vocab_size == 50_257
