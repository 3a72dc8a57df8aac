"""Journey: train from a corpus picked in the File menu, open the result in the playground, slide the vocab
size, export every format with its charts and report, and open the exported tokenizer again."""

# ruff: noqa: F811, PLR0917 - fixtures (some imported from tokenizer_helpers) are test arguments

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QImage

from bpe_studio.engine import FORMATS, Tokenizer
from bpe_studio.ui.app.main_window import MainWindow
from bpe_studio.ui.app.tokenizer_views import TokenizerViews

from ..tokenizer_helpers import WAIT_MS, views, wait_playground  # noqa: F401 - fixtures
from .conftest import ScriptedDialogs, click, shoot, trigger

#: Long enough for a small training on a loaded machine.
RUN_MS = 120_000


def test_train_open_slide_export_reopen(  # type: ignore[no-untyped-def]
    qtbot,
    window: MainWindow,
    views: TokenizerViews,
    small_corpus: Path,
    dialogs: ScriptedDialogs,
    tmp_path: Path,
    shots: Path,
) -> None:
    train_view = window.train_view
    # File ▸ Add corpus files… (Ctrl+O) picks the corpus.
    dialogs.answer([small_corpus])
    trigger(window, "File", "Add corpus files")
    assert str(small_corpus) in window.settings.recent_corpora[0]

    # The vocab size is typed into its box, as a person does.
    spin = train_view.vocab_spin
    spin.setFocus()
    spin.selectAll()
    qtbot.keyClicks(spin, "700")
    qtbot.keyClick(spin, Qt.Key.Key_Tab)
    assert spin.value() == 700

    # Training ▸ Start, then wait for the end of the run.
    with qtbot.waitSignal(train_view.training_ended, timeout=RUN_MS) as ended:
        trigger(window, "Training", "Start")
    assert ended.args == ["finished"]
    result = train_view.result
    assert result is not None and len(result.vocab) == 700
    shoot(window, shots, "train-finished")

    # "Open in Playground" shows the trained tokenizer with the corpus's first text.
    with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS):
        click(qtbot, train_view, "Open in Playground")
    wait_playground(qtbot, views.playground)
    assert window.tabs.currentWidget() is views.playground
    full = views.playground.encoding
    assert full is not None and full.ids

    # Sliding the vocab size down cuts merges: the same text takes more tokens.
    slider = views.playground.size_slider
    slider.setFocus()
    qtbot.keyClick(slider, Qt.Key.Key_Home)
    wait_playground(qtbot, views.playground)
    cut = views.playground.encoding
    assert cut is not None and len(cut.ids) > len(full.ids)
    qtbot.keyClick(slider, Qt.Key.Key_End)
    wait_playground(qtbot, views.playground)
    shoot(window, shots, "playground-after-training")

    # Tokenizer ▸ Export… (Ctrl+E): every format, the CSV, the charts and the report into a chosen folder.
    trigger(window, "Tokenizer", "Export")
    dialog = views.export_dialog
    assert dialog is not None and dialog.isVisible()
    out = tmp_path / "exported"
    dialogs.answer(out)
    click(qtbot, dialog, "Choose")
    assert Path(dialog.folder_edit.text()) == out
    with qtbot.waitSignal(dialog.export_finished, timeout=RUN_MS) as finished:
        click(qtbot, dialog, "Export")
    items = finished.args[0]
    assert items and all(item.ok for item in items), [(i.path, i.message) for i in items if not i.ok]
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    pngs = [out / name for name in written if name.endswith(".png")]
    assert pngs, f"no chart pictures among {written}"
    for png in pngs:
        image = QImage(str(png))
        assert not image.isNull() and image.width() >= 400, f"{png} is not a real picture"
    assert any(name.endswith(".md") for name in written), written
    assert any(name.endswith(".csv") for name in written), written
    shoot(dialog, shots, "export-dialog-done")  # type: ignore[arg-type]
    click(qtbot, dialog, "Close")

    # Each exported tokenizer opens again from the menu and encodes the text as the trained one does.
    text = views.playground.editor.toPlainText()
    expected = Tokenizer.from_result(result).encode(text, allowed_special="all")
    assert full.ids == expected, "the playground does not show the trained tokenizer's ids"
    reopened: list[str] = []
    for item in items:
        path = item.path
        sidecar = path.name == "bpe_studio.json" or path.name.endswith(".tiktoken.json")
        if not (path.is_dir() or path.suffix in (".json", ".tiktoken")) or sidecar:
            continue  # charts, CSV, report, sidecars
        dialogs.answer(path)
        with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS):
            trigger(window, "Tokenizer", "Open tokenizer folder" if path.is_dir() else "Open tokenizer")
        wait_playground(qtbot, views.playground)
        assert views.last_error == "", views.last_error
        assert views.playground.editor.toPlainText() == text, "opening a tokenizer changed the text"
        encoding = views.playground.encoding
        assert encoding is not None
        assert encoding.ids == expected, path
        assert views.current is not None
        reopened.append(views.current.format)
    assert sorted(reopened) == sorted(FORMATS), f"reopened {reopened}"
    shoot(window, shots, "reopened-export")
