"""Journey: a user opens SentencePiece-style BPE tokenizers (Llama 2's kind: a ``.model`` with byte fallback,
and the same model as a ``tokenizer.json``) through Tokenizer ▸ Open tokenizer…, and sees in the playground
the ids, bytes and boundaries ``sentencepiece`` gives; in the vocabulary the pieces as the model spells them
(``▁the``) and the byte-fallback tokens (``<0x61>``) labelled as such; merge trees built from the piece
merges (the piece ``a``, not the byte token ``<0x61>``); and both files side by side in Compare."""

# ruff: noqa: F811, PLR0917 - fixtures (some imported from tokenizer_helpers) are test arguments

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QApplication

from bpe_studio.engine.encoding.pieces import piece_bytes
from bpe_studio.ui.app.main_window import MainWindow
from bpe_studio.ui.app.tokenizer_views import TokenizerViews
from bpe_studio.ui.present.tokenizer_info import LoadedTokenizer
from bpe_studio.ui.vocabulary.model import VocabTableModel

from ...spm_helpers import llama2_style_tokenizer_json
from ..tokenizer_helpers import WAIT_MS, views, wait_playground  # noqa: F401 - fixtures
from .conftest import ScriptedDialogs, shoot, trigger

spm = pytest.importorskip("sentencepiece", reason="needs the sentencepiece package (the test extra)")
hf_tokenizers = pytest.importorskip("tokenizers", reason="needs the tokenizers package (the test extra)")

_TRAINING = "\n".join(
    f"the {w} sat on the {u} and the {w}s ran to the {u}, {n} times over. " * 2
    for n, (w, u) in enumerate(
        zip(["cat", "dog", "bird", "horse"] * 10, ["mat", "park", "garden", "river", "hut"] * 8, strict=False)
    )
)
# Characters the training text lacks (byte fallback: "€", "日本", "😀"), runs of spaces, a newline.
TEXT = "the cat sat on the mat € 日本  and  😀 ran\nthe dog"


def _train(folder: Path) -> Path:
    corpus = folder / "corpus.txt"
    corpus.write_text(_TRAINING, encoding="utf-8")
    spm.SentencePieceTrainer.train(
        input=str(corpus),
        model_prefix=str(folder / "tiny"),
        model_type="bpe",
        vocab_size=320,
        byte_fallback=True,
        normalization_rule_name="identity",
        remove_extra_whitespaces=False,
        minloglevel=2,
    )
    return folder / "tiny.model"


def _as_tokenizer_json(model_file: Path, folder: Path) -> Path:
    """The same model as a Llama 2 style ``tokenizer.json`` (merges by the score of the piece they make)."""
    return llama2_style_tokenizer_json(model_file, folder / "tokenizer.json")


@pytest.fixture(scope="module")
def piece_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A tiny SentencePiece BPE model with byte fallback, as a ``.model`` and as a ``tokenizer.json``."""
    model_file = _train(tmp_path_factory.mktemp("spm"))
    return model_file, _as_tokenizer_json(model_file, tmp_path_factory.mktemp("spm-json"))


def _open(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views: TokenizerViews, dialogs: ScriptedDialogs, path: Path
) -> LoadedTokenizer:
    dialogs.answer(path)
    with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS):
        trigger(window, "Tokenizer", "Open tokenizer")
    wait_playground(qtbot, views.playground)
    assert views.last_error == "", views.last_error
    loaded = views.current
    assert loaded is not None and loaded.tokenizer.piece_model is not None
    return loaded


def _paste(qtbot, views: TokenizerViews, text: str) -> None:  # type: ignore[no-untyped-def]
    editor = views.playground.editor
    editor.setFocus()
    editor.selectAll()
    QApplication.clipboard().setText(text)  # QTest types ASCII only: the text arrives pasted
    qtbot.keySequence(editor, QKeySequence.StandardKey.Paste)
    wait_playground(qtbot, views.playground)


def _reference_bytes(sp: object, ids: list[int]) -> list[bytes]:
    """Each sentencepiece token's bytes: a piece's text (▁ a space), a byte piece its byte."""
    out = []
    for i in ids:
        piece = sp.id_to_piece(i)  # type: ignore[attr-defined]
        out.append(bytes([int(piece[3:5], 16)]) if sp.is_byte(i) else piece_bytes(piece))  # type: ignore[attr-defined]
    return out


def test_sentencepiece_files_in_the_playground_vocabulary_merge_trees_and_compare(  # type: ignore[no-untyped-def]
    qtbot,
    window: MainWindow,
    views: TokenizerViews,
    dialogs: ScriptedDialogs,
    piece_files: tuple[Path, Path],
    shots: Path,
) -> None:
    model_file, json_file = piece_files
    sp = spm.SentencePieceProcessor(model_file=str(model_file))
    expected = sp.encode(TEXT)
    assert any(sp.is_byte(i) for i in expected)  # the text uses byte fallback
    expected_bytes = _reference_bytes(sp, expected)
    opened: list[LoadedTokenizer] = []
    for path in (model_file, json_file):
        loaded = _open(qtbot, window, views, dialogs, path)
        opened.append(loaded)
        tok = loaded.tokenizer

        # Playground: the ids, each token's bytes and the boundaries are sentencepiece's.
        _paste(qtbot, views, TEXT)
        encoding = views.playground.encoding
        assert encoding is not None and encoding.text == TEXT
        assert encoding.ids == expected, path.name
        assert [tok.token_bytes(i) for i in encoding.ids] == expected_bytes
        # Each boundary where sentencepiece's pieces end on a whole character (the first piece holds the
        # "▁" the model puts before the text, no character of it).
        ends = [len(TEXT[: span.end].encode()) for span in encoding.spans]
        total = -1
        for n, data in enumerate(expected_bytes):
            total += len(data)
            if total == len(TEXT.encode()[:total].decode("utf-8", "ignore").encode()):
                assert ends[n] == total, (n, data)
        assert b"".join(expected_bytes)[1:] == TEXT.encode()

        # Vocabulary: the pieces as the model spells them, byte-fallback tokens labelled as such.
        browser = views.vocab_browser
        window.tabs.setCurrentWidget(browser)
        model = browser.model
        the = sp.piece_to_id("▁the")
        a_byte = sp.piece_to_id("<0x61>")
        assert model.label(the) == "▁the" and model.label(a_byte) == "<0x61>"
        row = model.row_of(a_byte)
        tip = model.data(model.index(row, VocabTableModel.TOKEN), Qt.ItemDataRole.ToolTipRole)
        assert tip.startswith(f"Byte-fallback token {a_byte}: the byte 0x61")
        browser.show_token(a_byte)
        assert browser.details.facts[0].label == "<0x61>"
        assert "byte fallback: the byte 0x61" in browser.details.text()
        qtbot.keyClicks(browser.search_edit, " the")  # a typed space finds ▁
        assert the in model.shown_ids()
        browser.search_edit.clear()

        # Merge tree: built from the piece merges, down to the pieces (a, not <0x61>).
        browser.show_token(the)
        tree = browser.tree_view.tree
        assert tree is not None and tree.token_id == the
        assert [sp.id_to_piece(i) for i in tree.leaves()] == ["▁", "t", "h", "e"]
        assert not any(sp.is_byte(i) for i in tree.leaves())
        leaves = [box.label for box in browser.tree_view.boxes if box.node.rank is None]
        assert sorted(leaves) == sorted(["▁", "t", "h", "e"])
        assert browser.tree_view.boxes[0].label == "▁the"
        assert browser.details.facts[0].label == "▁the"
        assert "a piece no merge makes" not in browser.details.text()  # a merge made it

    # Compare: the .model and the tokenizer.json cut the text the same.
    compare = views.compare
    compare.set_tokenizers(views.opened)
    with qtbot.waitSignal(compare.compared, timeout=WAIT_MS):
        compare.choose("a", opened[0])
        compare.choose("b", opened[1])
        compare.set_text(TEXT)
    qtbot.waitUntil(lambda: not compare.is_busy(), timeout=WAIT_MS)
    sides = [compare.sides[s].encoding for s in ("a", "b")]
    assert [e.ids for e in sides if e is not None] == [expected, expected]
    assert f"<b>{len(expected):,}</b> tokens" in compare.sides["b"].stats.text()
    window.tabs.setCurrentWidget(compare)
    shoot(window, shots, "open-sentencepiece")
