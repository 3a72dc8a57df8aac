"""One notation everywhere (issue 11, items 3 and 4), checked the way a user meets it: train in the Train tab,
open the result, and read the same merge and the same bytes in the merges table, the playground's details,
the vocabulary and its merge tree, and the exported CSV."""

# ruff: noqa: F811 - the fixtures imported from tokenizer_helpers are test arguments

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics

from bpe_studio.engine.humanize import MERGE_NUMBERING
from bpe_studio.ui.app.main_window import MainWindow
from bpe_studio.ui.app.tokenizer_views import TokenizerViews
from bpe_studio.ui.export.job import merges_csv
from bpe_studio.ui.train.merges_model import MergesTableModel
from bpe_studio.ui.vocabulary.model import VocabTableModel

from .tokenizer_helpers import WAIT_MS, views, wait_playground  # noqa: F401 - fixtures

#: Box-drawing lines and a control character: tokens made of part of a 3-byte character, and a C0 byte.
CORPUS = "── ─── ──── ─┼─ ┼┼ \x01\x01 \x1b[0m " * 400 + "the the then there " * 400


def _train(qtbot, window: MainWindow, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    corpus = tmp_path / "lines.txt"
    corpus.write_text(CORPUS, encoding="utf-8")
    view = window.train_view
    view.set_corpus_files([corpus])
    view.vocab_spin.setValue(300)
    view.workers_spin.setValue(0)
    with qtbot.waitSignal(view.training_ended, timeout=WAIT_MS):
        qtbot.mouseClick(view.start_button, Qt.MouseButton.LeftButton)
    with qtbot.waitSignal(window.tokenizer_views.current_changed, timeout=WAIT_MS):
        qtbot.mouseClick(view.open_button, Qt.MouseButton.LeftButton)
    wait_playground(qtbot, window.tokenizer_views.playground)


def test_a_merge_has_one_number_everywhere(
    qtbot, window: MainWindow, views: TokenizerViews, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    _train(qtbot, window, tmp_path)
    result = window.train_view.result
    assert result is not None
    table = window.train_view.merges_model
    # The merge that makes "the" (some way into the list, so an off-by-one shows).
    rank = next(r for r, (a, b) in enumerate(result.merges) if a + b == b"the")
    token_id = next(i for i, data in result.vocab.items() if data == b"the")
    number = f"{rank + 1:,}"  # merge 1 is the first merge

    # Train tab: the merges table's first column, and its header says how merges are numbered.
    assert table.data(table.index(rank, MergesTableModel.RANK)) == number
    tip = table.headerData(MergesTableModel.RANK, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    assert MERGE_NUMBERING in tip
    # One name for it (issue 21: "Rank", "merge #" and "#n" were three): the column, the charts' axes.
    assert table.headerData(MergesTableModel.RANK, Qt.Orientation.Horizontal) == "Merge"
    charts = window.train_view.charts
    for plot in (charts.count_plot, charts.length_plot):
        assert plot.getAxis("bottom").labelText == "merge"

    # Playground: select the token in the text; its details name the same merge.
    playground = views.playground
    playground.set_text("the cat")
    wait_playground(qtbot, playground)
    assert playground.encoding is not None
    index = next(i for i, s in enumerate(playground.encoding.spans) if s.id == token_id)
    playground.select_token(index)
    assert f"merge {number} of {len(result.merges):,}" in playground.details.text()
    assert "rank" not in playground.details.text()

    # Vocabulary: the tooltip of the token's row, and the merge tree's root box.
    browser = views.vocab_browser
    browser.show_token(token_id)
    model = browser.model
    tooltip = model.data(
        model.index(model.row_of(token_id), VocabTableModel.TOKEN), Qt.ItemDataRole.ToolTipRole
    )
    assert f"made by merge {number}," in tooltip
    root = next(box for box in browser.tree_view.boxes if box.node.token_id == token_id)
    assert root.caption == f"merge {number}"

    # The exported CSV: the same number in its first column.
    loaded = views.current
    assert loaded is not None
    rows = list(csv.DictReader(io.StringIO(merges_csv(loaded.tokenizer, result.merge_counts))))
    assert rows[rank]["rank"] == number.replace(",", "") and rows[rank]["token_id"] == str(token_id)


def test_bytes_have_one_spelling_and_control_bytes_are_visible(
    qtbot, window: MainWindow, views: TokenizerViews, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    _train(qtbot, window, tmp_path)
    result = window.train_view.result
    assert result is not None
    table = window.train_view.merges_model
    browser = views.vocab_browser
    model = browser.model

    def vocab_label(data: bytes) -> str:
        token_id = next(i for i, b in result.vocab.items() if b == data)
        return str(model.data(model.index(model.row_of(token_id), VocabTableModel.TOKEN)))

    # A merge of part of "─" (e2 94 80): the merges table spells it as the vocabulary and playground do.
    rank = next(r for r, (a, b) in enumerate(result.merges) if a + b == b"\xe2\x94")
    shown = table.data(table.index(rank, MergesTableModel.TOKEN))
    assert shown == "<0xE2><0x94>" == vocab_label(b"\xe2\x94")
    tip = table.data(table.index(rank, MergesTableModel.LEFT), Qt.ItemDataRole.ToolTipRole)
    assert tip.startswith(f"Merge {rank + 1:,}: <0xE2> + <0x94> → token ")  # not b'\\xe2' + b'\\x94'
    assert "\\x" not in "".join(
        str(table.data(table.index(r, c))) for r in range(table.rowCount()) for c in (1, 2, 3)
    )

    # Control bytes: written <0xNN>, in characters the vocabulary's font really has (no empty boxes).
    metrics = QFontMetrics(browser.table.font())
    for byte in (*range(0x20), 0x7F):
        label = vocab_label(bytes([byte]))
        assert label, byte
        missing = [c for c in label if not metrics.inFontUcs4(ord(c))]
        assert not missing, (hex(byte), label, missing)
        if byte not in (0x09, 0x0A):  # a tab and a newline keep their arrows (→, ↵)
            assert label == f"<0x{byte:02X}>"

    # The playground's Tokens view spells the escape-sequence token the same way.
    playground = views.playground
    playground.set_text("\x1b[0m")
    wait_playground(qtbot, playground)
    assert "<0x1B>" in playground.strip.plain_text()


def test_the_spelling_helpers_import_no_qt() -> None:
    """token_format (the one place tokens are spelled), token_copy, the export job and the modules that hold
    a loaded tokenizer and lay text out in tokens run without Qt (they run on worker threads)."""
    code = (
        "import sys; import bpe_studio.ui.present.token_format, bpe_studio.ui.present.token_copy; "
        "import bpe_studio.ui.export.job; "
        "import bpe_studio.ui.present.tokenizer_info, bpe_studio.ui.present.token_layout; "
        "sys.exit(any(m.split('.')[0] in ('PySide6', 'shiboken6') for m in sys.modules))"
    )
    root = str(Path(__file__).resolve().parents[2])
    done = subprocess.run([sys.executable, "-c", code], cwd=root, timeout=60, check=False)
    assert done.returncode == 0
