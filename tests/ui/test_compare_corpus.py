"""The Compare tab's corpus mode: files added by the dialog and by drops, figures equal to
``bpe-studio eval --json``, the table (qtmodeltester), the chart and its PNG/SVG export, cancel and errors."""

# ruff: noqa: F811, PLR0917 - fixtures (some imported from tokenizer_helpers) are test arguments

from __future__ import annotations

import gzip
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QColor, QDragEnterEvent, QDragMoveEvent, QDropEvent, QImage
from PySide6.QtWidgets import QApplication, QFileDialog

from bpe_studio.cli import main
from bpe_studio.engine import Tokenizer, TrainConfig, save, train
from bpe_studio.engine.encoding.evaluation import evaluate_files
from bpe_studio.ui.app.main_window import MainWindow
from bpe_studio.ui.app.style import DARK_THEME, LIGHT_THEME, apply_style, theme_of
from bpe_studio.ui.app.tokenizer_views import TokenizerViews
from bpe_studio.ui.compare import corpus as compare_corpus
from bpe_studio.ui.compare.corpus import CorpusCompareView, CorpusFiguresModel
from bpe_studio.ui.compare.view import CompareView
from bpe_studio.ui.train.preview import CORPUS_FILTER

from .tokenizer_helpers import (  # noqa: F401 - fixtures
    SPECIAL,
    TRICKY_TEXT,
    WAIT_MS,
    open_and_wait,
    tiny_corpus,
    tiny_file,
    tiny_result,
    views,
)

DOCUMENTS = [f"doc {i}: the cat sat on the mat, naïve café №{i}\n" for i in range(30)]


@pytest.fixture(scope="module")
def other_tokenizer(tiny_corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A second tokenizer whose merges differ (trained on the upper-cased corpus)."""
    folder = tmp_path_factory.mktemp("other")
    corpus = folder / "upper.txt"
    corpus.write_text(tiny_corpus.read_text(encoding="utf-8").upper(), encoding="utf-8")
    result = train(TrainConfig(inputs=(corpus,), vocab_size=450, special_tokens=(SPECIAL,)))
    path = folder / "other.json"
    save(Tokenizer.from_result(result), path)
    return path


def _corpora(folder: Path) -> list[Path]:
    """A text file, a gzip-compressed JSON Lines file and an upper-cased text file."""
    text = folder / "plain.txt"
    text.write_text("".join(DOCUMENTS), encoding="utf-8")
    jsonl = folder / "records.jsonl.gz"
    jsonl.write_bytes(gzip.compress("".join(json.dumps({"text": d}) + "\n" for d in DOCUMENTS).encode()))
    upper = folder / "upper.txt"
    upper.write_text("".join(DOCUMENTS).upper(), encoding="utf-8")
    return [text, jsonl, upper]


@pytest.fixture
def corpus_mode(
    qtbot: Any, window: MainWindow, views: TokenizerViews, tiny_file: Path, other_tokenizer: Path
) -> tuple[CompareView, list[Path]]:
    """The compare tab in corpus mode with the tiny tokenizer as A and another as B."""
    other = other_tokenizer
    open_and_wait(qtbot, window, tiny_file, TRICKY_TEXT)
    compare = views.compare
    with qtbot.waitSignal(compare.compared, timeout=WAIT_MS):
        views.open(other, target="b")
    compare.modes.setCurrentWidget(compare.corpus_view)
    return compare, [tiny_file, other]


def _add_by_dialog(qtbot: Any, view: CorpusCompareView, monkeypatch: Any, paths: list[Path]) -> None:
    seen: list[str] = []

    def fake_open(_parent: object, _title: str, _start: str, filter_: str) -> tuple[list[str], str]:
        seen.append(filter_)
        return [str(p) for p in paths], filter_

    monkeypatch.setattr(QFileDialog, "getOpenFileNames", staticmethod(fake_open))
    qtbot.mouseClick(view.add_button, Qt.MouseButton.LeftButton)
    assert seen == [CORPUS_FILTER]


def _wait_idle(qtbot: Any, view: CorpusCompareView) -> None:
    """Wait until the worker thread has ended (it may have already)."""
    if view.runner.is_busy():
        with qtbot.waitSignal(view.runner.idle, timeout=WAIT_MS):
            pass
    assert not view.runner.is_busy()


def _compute(qtbot: Any, view: CorpusCompareView) -> None:
    assert view.compute_button.isEnabled()
    with qtbot.waitSignal(view.evaluated, timeout=WAIT_MS):
        qtbot.mouseClick(view.compute_button, Qt.MouseButton.LeftButton)
    _wait_idle(qtbot, view)
    assert not view.is_busy()


def test_figures_equal_eval_json(
    qtbot: Any,
    corpus_mode: tuple[CompareView, list[Path]],
    tmp_path: Path,
    monkeypatch: Any,
    capsys: pytest.CaptureFixture[str],
    qtmodeltester: Any,
) -> None:
    compare, tokenizer_files = corpus_mode
    view = compare.corpus_view
    a, b = compare.chosen("a"), compare.chosen("b")
    assert a is not None and b is not None and a is not b
    # A and B are listed first and checked; A is the reference.
    assert view.checked_tokenizers() == [a, b]
    assert not view.compute_button.isEnabled()  # no corpus yet
    corpora = _corpora(tmp_path)
    _add_by_dialog(qtbot, view, monkeypatch, corpora[:2])
    _add_by_dialog(qtbot, view, monkeypatch, corpora[1:])  # the one listed already is not repeated
    assert view.corpora() == corpora
    _compute(qtbot, view)

    assert (
        main(
            ["eval", "-t", str(tokenizer_files[0]), "-t", str(tokenizer_files[1]), "--json"]
            + [str(p) for p in corpora]
        )
        == 0
    )
    expected = json.loads(capsys.readouterr().out)
    assert len(view.rows) == len(expected) == 6
    names = {str(tokenizer_files[0]): a.name, str(tokenizer_files[1]): b.name}
    for row, want in zip(view.rows, expected, strict=True):
        figures = row.compression
        assert (str(row.corpus), row.tokenizer) == (want["corpus"], names[want["tokenizer"]])
        assert (figures.bytes, figures.words, figures.tokens) == (
            want["bytes"],
            want["words"],
            want["tokens"],
        )
        assert figures.bytes_per_token is not None and figures.tokens_per_word is not None
        assert round(figures.bytes_per_token, 4) == want["bytes_per_token"]
        assert round(figures.tokens_per_word, 4) == want["tokens_per_word"]
        assert row.ratio is not None and round(row.ratio, 4) == want["ratio"]
    # The two tokenizers really differ on the upper-cased file (else the ratio would say nothing).
    assert expected[5]["ratio"] != 1.0 and expected[4]["ratio"] == 1.0

    model = view.model
    qtmodeltester.check(model, force_py=True)
    assert model.rowCount() == 6
    cell = model.data(model.index(5, CorpusFiguresModel.HEADERS.index("Bytes/token")))
    assert cell == f"{expected[5]['bytes_per_token']:.3f}"
    assert model.data(model.index(5, 0)) == "upper.txt"
    # The chart: one bar item per tokenizer, one bar per file, as high as the bytes per token.
    bars = [item for item in view.plot.items if type(item).__name__ == "BarGraphItem"]
    assert len(bars) == 2
    heights = sorted(h for bar in bars for h in bar.opts["height"])
    assert heights == pytest.approx(sorted(r.compression.bytes_per_token or 0 for r in view.rows))


def test_unchecked_tokenizer_is_left_out_and_the_first_checked_is_the_reference(
    qtbot: Any, corpus_mode: tuple[CompareView, list[Path]], tmp_path: Path, monkeypatch: Any
) -> None:
    compare, _ = corpus_mode
    view = compare.corpus_view
    _add_by_dialog(qtbot, view, monkeypatch, _corpora(tmp_path)[:1])
    view.tokenizer_list.item(0).setCheckState(Qt.CheckState.Unchecked)
    assert view.checked_tokenizers() == [compare.chosen("b")]
    _compute(qtbot, view)
    assert [row.tokenizer for row in view.rows] == [compare.chosen("b").name]  # type: ignore[union-attr]
    assert view.rows[0].ratio == 1.0
    view.tokenizer_list.item(1).setCheckState(Qt.CheckState.Unchecked)
    assert not view.compute_button.isEnabled()


def test_dropped_files_are_added_as_corpora(
    qtbot: Any, corpus_mode: tuple[CompareView, list[Path]], tmp_path: Path
) -> None:
    compare, _ = corpus_mode
    view = compare.corpus_view
    corpora = _corpora(tmp_path)
    opened: list[object] = []
    compare.files_dropped.connect(opened.append)  # tokenizer drops elsewhere on the tab
    mime = QMimeData()
    # Two files and a folder holding the third (a folder gives the corpus files under it).
    folder = tmp_path / "folder"
    folder.mkdir()
    corpora[2] = corpora[2].rename(folder / corpora[2].name)
    (folder / "notes.json").write_text("{}", encoding="utf-8")  # not a corpus suffix: left out
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in (*corpora[:2], folder)])
    target = view.files_list.viewport()  # dropped on the list of files, as a user would
    where = QPointF(10, 10)
    buttons, keys = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    enter = QDragEnterEvent(where, Qt.DropAction.CopyAction, mime, buttons, keys)
    QApplication.sendEvent(target, enter)
    assert enter.isAccepted()
    QApplication.sendEvent(
        target, QDragMoveEvent(where, Qt.DropAction.CopyAction, mime, buttons, keys)
    )
    drop = QDropEvent(where, Qt.DropAction.CopyAction, mime, buttons, keys)
    QApplication.sendEvent(target, drop)
    assert drop.isAccepted()
    assert view.corpora() == corpora
    assert opened == []


def test_export_chart_png_and_svg(
    qtbot: Any, corpus_mode: tuple[CompareView, list[Path]], tmp_path: Path, monkeypatch: Any
) -> None:
    compare, _ = corpus_mode
    view = compare.corpus_view
    assert not view.export_button.isEnabled()  # nothing to export yet
    _add_by_dialog(qtbot, view, monkeypatch, _corpora(tmp_path))
    _compute(qtbot, view)
    out = tmp_path / "out"
    out.mkdir()
    answers = [(str(out / "chart"), "SVG image (*.svg)"), (str(out / "chart.png"), "PNG image (*.png)")]
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *_args: answers.pop(0)))
    qtbot.mouseClick(view.export_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(view.export_button, Qt.MouseButton.LeftButton)
    assert sorted(p.name for p in out.iterdir()) == ["chart.png", "chart.svg"]  # no temporary file left
    svg = (out / "chart.svg").read_text(encoding="utf-8")
    assert svg.startswith("<?xml") and "<svg" in svg and compare_corpus.CHART_TITLE in svg
    image = QImage(str(out / "chart.png"))
    assert (image.width(), image.height()) == (900, 500)
    # Not blank: the bars (the theme's first two chart colours) are drawn.
    colours = {image.pixelColor(x, y).name() for x in range(0, 900, 3) for y in range(0, 500, 3)}
    assert {LIGHT_THEME.chart_count.lower(), LIGHT_THEME.chart_length.lower()} <= colours
    # Laid out at the image's size: the last file's bars reach the right part of the image.
    second = LIGHT_THEME.chart_length.lower()
    assert max(x for x in range(900) if image.pixelColor(x, 400).name() == second) > 700
    with pytest.raises(ValueError, match=r"\.png or \.svg"):
        view.export_chart(out / "chart.jpg")


def test_cancel_stops_between_files(
    qtbot: Any, corpus_mode: tuple[CompareView, list[Path]], tmp_path: Path, monkeypatch: Any
) -> None:
    compare, _ = corpus_mode
    view = compare.corpus_view
    _add_by_dialog(qtbot, view, monkeypatch, _corpora(tmp_path))
    release = threading.Event()
    calls: list[Path] = []

    def held(tokenizers: Any, paths: list[Path], **options: Any) -> Any:
        calls.extend(paths)
        release.wait(WAIT_MS / 1000)  # held until the test has asked to cancel
        return evaluate_files(tokenizers, paths, **options)

    monkeypatch.setattr("bpe_studio.ui.compare.corpus.evaluate_files", held)
    with qtbot.waitSignal(view.runner.progress, timeout=WAIT_MS):
        qtbot.mouseClick(view.compute_button, Qt.MouseButton.LeftButton)
    assert view.is_busy() and view.cancel_button.isEnabled() and not view.compute_button.isEnabled()
    with qtbot.waitSignal(view.runner.idle, timeout=WAIT_MS):
        qtbot.mouseClick(view.cancel_button, Qt.MouseButton.LeftButton)
        release.set()
    assert len(calls) == 1  # stopped in the file being read
    assert view.status_label.text() == "Cancelled." and view.rows == [] and not view.is_busy()
    assert view.compute_button.isEnabled() and not view.export_button.isEnabled()


def test_cancel_stops_inside_a_large_file(
    qtbot: Any, corpus_mode: tuple[CompareView, list[Path]], tmp_path: Path, monkeypatch: Any
) -> None:
    compare, _ = corpus_mode
    view = compare.corpus_view
    records = 4000  # one task (far below the 4 MiB chunk), so no check between tasks can stop it
    large = tmp_path / "large.jsonl"
    large.write_text("".join(json.dumps({"text": f"record {i} of the cat"}) + "\n" for i in range(records)))
    _add_by_dialog(qtbot, view, monkeypatch, [large])
    reached, release = threading.Event(), threading.Event()
    calls: list[str] = []
    encode = Tokenizer.encode_ordinary

    def counted(self: Tokenizer, text: str) -> list[int]:
        calls.append(text)
        if len(calls) == 50:  # document 25, second tokenizer: hold until Cancel was pressed
            reached.set()
            release.wait(WAIT_MS / 1000)
        return encode(self, text)

    monkeypatch.setattr(Tokenizer, "encode_ordinary", counted)
    qtbot.mouseClick(view.compute_button, Qt.MouseButton.LeftButton)
    assert reached.wait(WAIT_MS / 1000)
    with qtbot.waitSignal(view.runner.idle, timeout=WAIT_MS):
        qtbot.mouseClick(view.cancel_button, Qt.MouseButton.LeftButton)
        release.set()
    # Both tokenizers finished document 25; document 26 was never started, nor any after it.
    assert len(calls) == 50 and calls[-1] == "record 24 of the cat"
    assert view.status_label.text() == "Cancelled." and view.rows == [] and not view.is_busy()


def test_a_corrupt_file_is_reported(
    qtbot: Any, corpus_mode: tuple[CompareView, list[Path]], tmp_path: Path, monkeypatch: Any
) -> None:
    compare, _ = corpus_mode
    view = compare.corpus_view
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "fine"}\nnot json\n', encoding="utf-8")
    _add_by_dialog(qtbot, view, monkeypatch, [bad])
    with qtbot.waitSignal(view.failed, timeout=WAIT_MS) as blocker:
        qtbot.mouseClick(view.compute_button, Qt.MouseButton.LeftButton)
    _wait_idle(qtbot, view)
    assert "bad.jsonl" in blocker.args[0] and "line 2" in blocker.args[0]
    assert blocker.args[0] in view.status_label.text()
    assert not view.is_busy() and view.compute_button.isEnabled()


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_chart_follows_the_theme(
    qtbot: Any,
    qapp: Any,
    corpus_mode: tuple[CompareView, list[Path]],
    tmp_path: Path,
    monkeypatch: Any,
    dark: bool,
) -> None:
    compare, _ = corpus_mode
    view = compare.corpus_view
    _add_by_dialog(qtbot, view, monkeypatch, _corpora(tmp_path))
    _compute(qtbot, view)
    theme = apply_style(qapp, "dark" if dark else "light")
    assert theme is (DARK_THEME if dark else LIGHT_THEME) and theme_of(view) is theme
    image = compare.grab().toImage()
    image.save(str(tmp_path / f"corpus-{'dark' if dark else 'light'}.png"))
    chart = view.chart.grab().toImage()
    colours = {
        chart.pixelColor(x, y).name() for x in range(0, chart.width(), 2) for y in range(0, chart.height(), 2)
    }
    assert {theme.chart_count.lower(), theme.chart_length.lower()} <= colours
    assert chart.pixelColor(2, 2).name() == theme.base.lower()
    legend = view.plot.legend
    assert len(legend.items) == 2
    for _sample, label in legend.items:  # the names are drawn in the theme's text colour
        assert QColor(theme.text).name() in label.item.toHtml().lower()


def test_export_chart_refuses_to_write_over_a_corpus(
    qtbot: Any, corpus_mode: tuple[CompareView, list[Path]], tmp_path: Path, monkeypatch: Any
) -> None:
    # Issue 18: the chart's path is checked against what the view read (an SVG is text: a corpus can be one).
    from PySide6.QtWidgets import QMessageBox

    compare, _ = corpus_mode
    view = compare.corpus_view
    corpus = tmp_path / "docs.svg"
    corpus.write_text("".join(DOCUMENTS), encoding="utf-8")
    _add_by_dialog(qtbot, view, monkeypatch, [corpus])
    _compute(qtbot, view)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    shown: list[tuple[str, str]] = []
    monkeypatch.setattr(
        QMessageBox, "warning", staticmethod(lambda _p, title, text: shown.append((title, text)))
    )
    monkeypatch.setattr(
        QFileDialog, "getSaveFileName", staticmethod(lambda *_args: (str(corpus), "SVG image (*.svg)"))
    )
    qtbot.mouseClick(view.export_button, Qt.MouseButton.LeftButton)
    assert len(shown) == 1 and shown[0][0] == "Export chart"
    assert "Export chart:" in shown[0][1] and "is a corpus file" in shown[0][1]
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before


def test_tokenizers_named_tokenizer_json_are_listed_by_folder(
    qtbot: Any, tiny_result: Any, tmp_path: Path
) -> None:
    """Exports named tokenizer.json in alpha/, x/out/ and y/out/, and two runs of this session: the list,
    the figures and the chart's legend name each differently, as ``bpe-studio eval`` does."""
    from bpe_studio.ui.present.tokenizer_info import from_result, load_file

    tok = Tokenizer.from_result(tiny_result)
    loaded = []
    for folder in ("alpha", "x/out", "y/out"):
        (tmp_path / folder).mkdir(parents=True)
        loaded.append(load_file(save(tok, tmp_path / folder / "tokenizer.json", format="hf")))
    loaded += [from_result(tiny_result), from_result(tiny_result)]
    assert [t.name for t in loaded[:3]] == ["alpha", "out", "out"]
    view = CorpusCompareView()
    qtbot.addWidget(view)
    view.set_tokenizers(loaded, loaded)
    expected = ["alpha", "x/out", "y/out", loaded[3].name, f"{loaded[3].name} (2)"]
    assert [view.tokenizer_list.item(i).text() for i in range(5)] == expected
    corpus = tmp_path / "c.txt"
    corpus.write_text("".join(DOCUMENTS), encoding="utf-8")
    view.add_files([corpus])
    _compute(qtbot, view)
    assert [row.tokenizer for row in view.rows] == expected
    legend = [label.text for _, label in view.plot.legend.items]
    assert legend == expected
    view.shutdown()
