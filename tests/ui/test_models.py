"""The merges table model (checked by qtmodeltester while rows stream in) and its search filter."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt

from bpe_studio.engine import MergeMade
from bpe_studio.ui.present.token_format import search_key, token_label
from bpe_studio.ui.train.merges_model import MergesFilterModel, MergesTableModel


def _merges(pairs: list[tuple[bytes, bytes]], start: int = 0) -> list[MergeMade]:
    return [
        MergeMade(start + i, pair, 1000 - start - i, 256 + start + i, pair[0] + pair[1], 100, 0.0)
        for i, pair in enumerate(pairs)
    ]


PAIRS = [(b" ", b"t"), (b"h", b"e"), (b" t", b"he"), (b"\n", b"\n"), (b"\xe2\x80", b"\x94"), (b"a", b"\t")]


def test_visible_whitespace_control_bytes_and_partial_utf8() -> None:
    assert token_label(b" the\n") == "·the↵"
    assert token_label(b"\t\r\x00\x7f") == "→<0x0D><0x00><0x7F>"  # control bytes as bytes, not as ␍ ␀ ␡
    assert token_label(b"\xe2\x80") == "<0xE2><0x80>"
    assert token_label("é—".encode()) == "é—"
    assert search_key(" The") == "·the"
    assert search_key("<0xe2>") == "<0xe2>" and search_key("\x1b") == "<0x1b>"


def test_model_passes_qtmodeltester_while_growing(qtmodeltester) -> None:  # type: ignore[no-untyped-def]
    model = MergesTableModel()
    model.append_merges(_merges(PAIRS[:2]))
    qtmodeltester.check(model, force_py=True)  # checks the model now, then every change it announces
    model.append_merges(_merges(PAIRS[2:4], start=2))
    model.append_merges(_merges(PAIRS[4:], start=4))
    model.append_merges([])
    assert model.rowCount() == len(PAIRS)
    model.clear()
    assert model.rowCount() == 0
    model.append_merges(_merges(PAIRS))


def test_model_cells() -> None:
    model = MergesTableModel()
    model.append_merges(_merges(PAIRS))
    row = [model.data(model.index(2, c)) for c in range(model.columnCount())]
    assert row == ["3", "·t", "he", "·the", "998"]
    assert model.data(model.index(3, MergesTableModel.TOKEN)) == "↵↵"
    assert model.headerData(3, Qt.Orientation.Horizontal) == "New token"
    assert "token 258" in model.data(model.index(2, 0), Qt.ItemDataRole.ToolTipRole)
    assert model.data(model.index(2, MergesTableModel.COUNT), Qt.ItemDataRole.TextAlignmentRole)
    assert model.rowCount(model.index(0, 0)) == 0  # a flat table


def test_filter_matches_tokens_with_visible_or_real_whitespace(qtmodeltester) -> None:  # type: ignore[no-untyped-def]
    model = MergesTableModel()
    proxy = MergesFilterModel(model)
    model.append_merges(_merges(PAIRS))
    qtmodeltester.check(proxy, force_py=True)
    proxy.set_search_text(" T")  # a real space matches ·, case-insensitively
    assert proxy.rowCount(QModelIndex()) == 2  # " t" and " the"
    proxy.set_search_text("·the")
    assert proxy.rowCount(QModelIndex()) == 1
    assert proxy.data(proxy.index(0, MergesTableModel.RANK)) == "3"
    model.append_merges(_merges([(b" the", b"n")], start=len(PAIRS)))  # rows arriving while searching
    assert proxy.rowCount(QModelIndex()) == 2
    proxy.set_search_text("")  # no search: detached, so that inserting rows costs nothing
    assert proxy.sourceModel() is not model and proxy.rowCount(QModelIndex()) == 0
    model.append_merges(_merges([(b"q", b"z")], start=model.rowCount()))
    proxy.set_search_text("qz")
    assert proxy.rowCount(QModelIndex()) == 1
