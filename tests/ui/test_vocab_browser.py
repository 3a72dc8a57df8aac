"""The Vocabulary tab: the table model (checked by qtmodeltester), search, sorting, and the merge tree."""

# ruff: noqa: F811 - the fixtures imported from tokenizer_helpers are test arguments

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QModelIndex, Qt

from bpe_studio.engine import TrainConfig, TrainResult, train
from bpe_studio.engine.encoding.analysis import MergeNode
from bpe_studio.ui.app.main_window import MainWindow
from bpe_studio.ui.app.tokenizer_views import TokenizerViews
from bpe_studio.ui.present.tokenizer_info import from_result
from bpe_studio.ui.vocabulary.model import VocabTableModel

from .tokenizer_helpers import (  # noqa: F401 - fixtures
    SPECIAL,
    open_and_wait,
    tiny_corpus,
    tiny_file,
    tiny_result,
    views,
)


def _column(model: VocabTableModel, column: int) -> list[str]:
    return [model.data(model.index(row, column)) for row in range(model.rowCount())]


def test_model_passes_qtmodeltester(qtmodeltester, tiny_result: TrainResult) -> None:  # type: ignore[no-untyped-def]
    model = VocabTableModel()
    model.set_tokenizer(from_result(tiny_result))
    qtmodeltester.check(model, force_py=True)
    model.set_search_text(" th")
    model.sort(VocabTableModel.LENGTH, Qt.SortOrder.DescendingOrder)
    model.set_search_text("")
    model.sort(VocabTableModel.COUNT, Qt.SortOrder.AscendingOrder)
    model.set_tokenizer(None)
    assert model.rowCount() == 0


def test_hex_search_matches_whole_bytes_only(qtmodeltester, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``0xe2`` finds tokens holding the byte E2 (as in "—"), not ``..`` (2e 2e) nor ``.)`` (2e 29)."""
    corpus = tmp_path / "dots.txt"
    corpus.write_text("Wait.. (see above.) then — and — again.. (ok.)\n" * 200, encoding="utf-8")
    result = train(TrainConfig(inputs=(corpus,), vocab_size=300))
    loaded = from_result(result)
    tok = loaded.tokenizer
    dots = {tok.token_id(b".."), tok.token_id(b".)")}
    assert None not in dots  # the corpus makes both tokens: the cases that a plain hex substring mismatches
    model = VocabTableModel()
    model.set_tokenizer(loaded)
    qtmodeltester.check(model, force_py=True)  # and it watches every reset the searches make
    queries = [("0xe2", b"\xe2"), ("0x E2 80", b"\xe2\x80"), ("0x2e2e", b".."), ("0x0a", b"\n")]
    # The Hex column's spaced form with a 0x per byte, as people copy it (issue 21 found it refused).
    queries += [("0xe2 0x80", b"\xe2\x80"), ("0xE2 80", b"\xe2\x80"), ("0x2e 0x2e", b"..")]
    for query, needle in queries:
        model.set_search_text(query)
        shown = model.shown_ids()
        assert shown == [i for i in sorted(tok.vocab) if needle in tok.token_bytes(i)], query
    model.set_search_text("0xe2")
    assert not dots & set(model.shown_ids())
    model.set_search_text("0xe")  # an odd digit count: the bytes e0–ef, as the user types
    high_e = {i for i in tok.vocab if any(0xE0 <= b <= 0xEF for b in tok.token_bytes(i))}
    assert set(model.shown_ids()) == high_e


def test_columns_search_and_sort(tiny_result: TrainResult) -> None:
    loaded = from_result(tiny_result)
    tok = loaded.tokenizer
    model = VocabTableModel()
    model.set_tokenizer(loaded)
    assert model.rowCount() == len(tiny_result.vocab) == 600
    assert model.shown_ids() == sorted(tok.vocab)
    # A learned token: visible whitespace, hex, length and its merge's count.
    rank = next(
        r for r, (a, b) in enumerate(tiny_result.merges) if (a + b).startswith(b" ") and len(a + b) > 2
    )
    token_id = 256 + rank
    row = model.row_of(token_id)
    data = tok.token_bytes(token_id)
    values = [model.data(model.index(row, c)) for c in range(5)]
    assert values == [
        str(token_id),
        "·" + data[1:].decode(),
        data.hex(" "),
        str(len(data)),
        f"{tiny_result.merge_counts[rank]:,}",
    ]
    special = tok.special_tokens[SPECIAL]
    assert [model.data(model.index(model.row_of(special), c)) for c in (1, 4)] == [SPECIAL, "special"]
    assert model.data(model.index(model.row_of(65), 4)) == "–"  # a single byte has no merge count
    assert model.headerData(1, Qt.Orientation.Horizontal) == "Token"

    # Search: a space matches "·"; digits match an id; 0x… matches bytes in hex.
    model.set_search_text(" the")
    assert model.rowCount() > 0
    assert all("·the" in label.casefold() for label in _column(model, 1))
    model.set_search_text("300")
    assert 300 in model.shown_ids()
    model.set_search_text("0x2074")
    assert model.shown_ids() and all(b" t" in tok.token_bytes(i) for i in model.shown_ids())
    model.set_search_text("")
    assert model.rowCount() == 600

    # Sorting.
    model.sort(VocabTableModel.LENGTH, Qt.SortOrder.DescendingOrder)
    lengths = [int(v) for v in _column(model, 3)]
    assert lengths == sorted(lengths, reverse=True)
    model.sort(VocabTableModel.COUNT, Qt.SortOrder.DescendingOrder)
    assert model.shown_ids()[0] == 256 + max(
        range(len(tiny_result.merge_counts)), key=tiny_result.merge_counts.__getitem__
    )
    model.sort(VocabTableModel.TOKEN, Qt.SortOrder.AscendingOrder)
    labels = [label.casefold() for label in _column(model, 1)]
    assert labels == sorted(labels)
    model.sort(VocabTableModel.ID, Qt.SortOrder.DescendingOrder)
    assert model.shown_ids() == sorted(tok.vocab, reverse=True)


def _check_tree(node: MergeNode, loaded, top: bool = True) -> None:  # type: ignore[no-untyped-def]
    tok = loaded.tokenizer
    data = tok.token_bytes(node.token_id)
    if node.left is None or node.right is None:
        assert len(data) == 1 and node.rank is None
        return
    assert tok.merges[node.rank] == (
        tok.token_bytes(node.left.token_id),
        tok.token_bytes(node.right.token_id),
    )
    assert tok.token_bytes(node.left.token_id) + tok.token_bytes(node.right.token_id) == data
    _check_tree(node.left, loaded, False)
    _check_tree(node.right, loaded, False)


def test_browser_selection_shows_the_merge_tree(
    qtbot, window: MainWindow, views: TokenizerViews, tiny_file: Path
) -> None:  # type: ignore[no-untyped-def]
    open_and_wait(qtbot, window, tiny_file)
    browser = views.vocab_browser
    window.tabs.setCurrentWidget(browser)
    loaded = views.current
    assert loaded is not None
    assert browser.match_label.text() == "600 tokens"
    # The longest token: its tree goes down to its single bytes, each merge making its parent.
    longest = max(loaded.tokenizer.vocab, key=lambda i: (len(loaded.tokenizer.token_bytes(i)), -i))
    assert longest not in loaded.tokenizer.special_tokens.values()
    qtbot.keyClicks(browser.search_edit, str(longest))
    row = browser.model.row_of(longest)
    with qtbot.waitSignal(browser.token_selected) as selected:
        browser.table.selectRow(row)
    assert selected.args == [longest]
    tree = browser.tree_view.tree
    assert tree is not None and tree.token_id == longest
    data = loaded.tokenizer.token_bytes(longest)
    assert [loaded.tokenizer.token_bytes(i) for i in tree.leaves()] == [bytes([b]) for b in data]
    _check_tree(tree, loaded)
    assert len(browser.tree_view.boxes) == 2 * len(data) - 1
    assert browser.details.facts[0].token_id == longest
    assert not browser.tree_view.grab().isNull()

    # Clicking a box selects that token (clearing the search that hides it).
    child = tree.left
    assert child is not None
    box = next(b for b in browser.tree_view.boxes if b.node is child)
    with qtbot.waitSignal(browser.token_selected) as selected:
        qtbot.mouseClick(browser.tree_view, Qt.MouseButton.LeftButton, pos=box.rect.center().toPoint())
    assert selected.args == [child.token_id]
    assert browser.search_edit.text() == "" or browser.model.row_of(child.token_id) >= 0
    assert browser.tree_view.tree is not None and browser.tree_view.tree.token_id == child.token_id

    # Sorting keeps the selection.
    browser.table.sortByColumn(VocabTableModel.LENGTH, Qt.SortOrder.DescendingOrder)
    current = browser.table.currentIndex()
    assert current.isValid() and browser.model.id_at(current.row()) == child.token_id

    # A special token has no tree.
    special = loaded.tokenizer.special_tokens[SPECIAL]
    browser.show_token(special)
    assert browser.selected_id == special and browser.tree_view.tree is None
    assert browser.details.facts[0].special


def test_browser_search_label(qtbot, window: MainWindow, views: TokenizerViews, tiny_file: Path) -> None:  # type: ignore[no-untyped-def]
    open_and_wait(qtbot, window, tiny_file)
    browser = views.vocab_browser
    qtbot.keyClicks(browser.search_edit, "ing")
    shown = browser.model.rowCount(QModelIndex())
    assert 0 < shown < 600
    assert browser.match_label.text() == f"{shown:,} of 600"


def test_a_vocabulary_without_the_bytes_utf8_never_uses_opens(
    qtbot, window: MainWindow, views: TokenizerViews, tiny_result: TrainResult, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """GPT-NeoX-20B's shape (no token for 0xC0, 0xC1, 0xF5-0xFF): the playground, the vocabulary, a merge
    tree and the vocab-size slider work; the single bytes counted are the 243 there are."""
    from bpe_studio.engine import Tokenizer, save
    from bpe_studio.engine.encoding.tokenizer import UTF8_UNUSED_BYTES

    full = from_result(tiny_result).tokenizer
    vocab = {i: t for i, t in full.vocab.items() if not (len(t) == 1 and t[0] in UTF8_UNUSED_BYTES)}
    tok = Tokenizer(vocab, full.merges, dict(full.special_tokens), pattern=full.pattern)
    (tmp_path / "neox").mkdir()
    path = save(tok, tmp_path / "neox" / "tokenizer.json", format="hf")
    open_and_wait(qtbot, window, path, "the cat 日本 😀")
    loaded = views.current
    assert loaded is not None and loaded.tokenizer.missing_bytes == tuple(sorted(UTF8_UNUSED_BYTES))
    assert loaded.index.vocab_sizes()[0] == 243 + 1
    browser = views.vocab_browser
    window.tabs.setCurrentWidget(browser)
    assert browser.model.rowCount() == len(vocab)
    longest = max(vocab, key=lambda i: (len(vocab[i]), -i))
    browser.show_token(longest)
    tree = browser.tree_view.tree
    assert tree is not None and b"".join(map(loaded.tokenizer.token_bytes, tree.leaves())) == vocab[longest]
    assert loaded.cut(5).missing_bytes == loaded.tokenizer.missing_bytes
