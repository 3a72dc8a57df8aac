"""Opening a bare ``.tiktoken`` file that states no pattern: the app asks for it (PatternDialog, patched here
the way a user answers) rather than guessing GPT-2's; OpenAI's files are recognised and open directly."""

# ruff: noqa: F811 - fixtures imported from tokenizer_helpers are test arguments

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QDialogButtonBox

from bpe_studio.engine import Tokenizer, load, save
from bpe_studio.engine.formats.tiktoken_format import sidecar_path
from bpe_studio.engine.pretokenize.patterns import resolve_pattern
from bpe_studio.ui.app.main_window import MainWindow
from bpe_studio.ui.widgets.pattern_dialog import PatternAnswer, PatternDialog

from .tokenizer_helpers import (  # noqa: F401 - fixtures
    WAIT_MS,
    tiny_corpus,
    train_tiny,
    views,
    wait_playground,
)


@pytest.fixture
def bare_file(tiny_corpus: Path, tmp_path: Path) -> Path:
    """A small trained tokenizer as a .tiktoken file without its sidecar (so without a pattern)."""
    path = save(
        Tokenizer.from_result(train_tiny(tiny_corpus, 300)), tmp_path / "mine.tiktoken", format="tiktoken"
    )
    sidecar_path(path).unlink()
    return path


def _answer(
    monkeypatch: pytest.MonkeyPatch, pattern: str | None, special_tokens: tuple[Any, ...] = ()
) -> list[Path]:
    asked: list[Path] = []

    def ask(_parent: Any, path: Path) -> PatternAnswer | None:
        asked.append(path)
        return None if pattern is None else PatternAnswer(pattern, special_tokens)

    monkeypatch.setattr(PatternDialog, "ask", staticmethod(ask))
    return asked


@pytest.mark.parametrize("chosen", ["cl100k", "llama3"])
def test_a_bare_tiktoken_file_opens_with_the_pattern_the_user_chose(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views, bare_file: Path, monkeypatch: pytest.MonkeyPatch, *, chosen: str
) -> None:
    asked = _answer(monkeypatch, chosen)
    with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS) as blocker:
        window.open_tokenizer(bare_file, "Hello there")
    wait_playground(qtbot, views.playground)
    assert asked == [bare_file]
    tok = blocker.args[0].tokenizer
    assert tok.pattern == resolve_pattern(chosen)
    assert views.playground.encoding is not None
    assert views.playground.encoding.ids == load(bare_file, pattern=chosen).encode("Hello there")
    assert views.error_box is None and views.last_error == ""
    assert window.settings.recent_tokenizers[0] == str(bare_file)


def test_cancelling_the_question_opens_nothing(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views, bare_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = _answer(monkeypatch, None)
    window.open_tokenizer(bare_file)
    qtbot.waitUntil(lambda: bool(asked) and not views.is_busy(), timeout=WAIT_MS)
    assert views.current is None and views.error_box is None
    assert "no pattern chosen" in window.statusBar().currentMessage()
    assert str(bare_file) not in window.settings.recent_tokenizers


@pytest.fixture
def openai_file(cs336_data: Path, tmp_path: Path) -> Path:
    """GPT-2's ranks without a sidecar: byte for byte OpenAI's r50k_base.tiktoken."""
    gpt2 = Tokenizer.from_files(
        cs336_data / "gpt2_vocab.json", cs336_data / "gpt2_merges.txt", ["<|endoftext|>"]
    )
    path = save(gpt2, tmp_path / "r50k_base.tiktoken", format="tiktoken")
    sidecar_path(path).unlink()
    return path


def test_an_openai_file_opens_without_asking(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views, openai_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = openai_file
    asked = _answer(monkeypatch, "o200k")
    with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS) as blocker:
        window.open_tokenizer(path)
    wait_playground(qtbot, views.playground)
    assert asked == []
    tok = blocker.args[0].tokenizer
    assert tok.pattern_name == "gpt2" and len(tok.merges) == 50_000 and "<|endoftext|>" in tok.special_tokens


def test_the_dialog_offers_presets_and_checks_a_custom_regex(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    dialog = PatternDialog(None, tmp_path / "mine.tiktoken")
    qtbot.addWidget(dialog)
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    names = [dialog.choice.itemData(i) for i in range(dialog.choice.count())]
    assert names == ["gpt2", "cl100k", "o200k", "llama3", None]
    assert dialog.pattern() == "gpt2" and ok.isEnabled() and not dialog.regex.isEnabled()
    dialog.choice.setCurrentIndex(3)
    assert dialog.pattern() == "llama3" and ok.isEnabled()  # Llama 3's tokenizer.model is a bare rank file
    dialog.choice.setCurrentIndex(4)
    assert dialog.regex.isEnabled() and not ok.isEnabled()  # nothing typed yet
    dialog.regex.setText("(")
    assert not ok.isEnabled() and "does not compile" in dialog.problem.text()
    dialog.regex.setText("a*")
    assert not ok.isEnabled() and "empty string" in dialog.problem.text()
    dialog.regex.setText(r"\w+|\s+|[^\w\s]+")
    assert ok.isEnabled() and dialog.problem.text() == ""
    assert dialog.pattern() == r"\w+|\s+|[^\w\s]+"
    dialog.choice.setCurrentIndex(2)
    assert dialog.pattern() == "o200k"


def test_open_gpt2_from_the_menu(qtbot, window: MainWindow, views) -> None:  # type: ignore[no-untyped-def]
    from .test_menu_actions import find_action

    action = find_action(window, "Tokenizer", "Open GPT-2")
    with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS) as blocker:
        action.trigger()
    wait_playground(qtbot, views.playground)
    tok = blocker.args[0].tokenizer
    assert tok.vocab_size == 50_257 and tok.encode("Hello world<|endoftext|>") == [15496, 995, 50256]
    assert views.error_box is None and views.playground.loaded is blocker.args[0]


def test_the_dialog_reads_special_tokens_one_per_line(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    dialog = PatternDialog(None, tmp_path / "llama.tiktoken")
    qtbot.addWidget(dialog)
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    assert dialog.answer() == PatternAnswer("gpt2", ()) and ok.isEnabled()
    dialog.choice.setCurrentIndex(1)
    dialog.specials.setPlainText("<|begin_of_text|>=128000\n\n<|end_of_text|>\n")
    assert ok.isEnabled() and dialog.problem.text() == ""
    assert dialog.answer() == PatternAnswer(
        "cl100k", (("<|begin_of_text|>", 128000), ("<|end_of_text|>", None))
    )
    dialog.specials.setPlainText("<|a|>\n=7")
    assert not ok.isEnabled() and dialog.problem.text().startswith("Line 2: '=7' names no token before '='")
    dialog.specials.setPlainText("<|a|>\n<|a|>=9")
    assert not ok.isEnabled() and "Line 2: '<|a|>' is listed twice" in dialog.problem.text()
    dialog.specials.setPlainText("")
    assert ok.isEnabled() and dialog.answer() == PatternAnswer("cl100k", ())


def test_a_bare_file_opens_with_the_special_tokens_listed(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views, bare_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _answer(monkeypatch, "gpt2", (("<|begin_of_text|>", None), ("<|eot|>", 5000)))
    with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS) as blocker:
        window.open_tokenizer(bare_file, "<|begin_of_text|>Hello<|eot|>")
    wait_playground(qtbot, views.playground)
    tok = blocker.args[0].tokenizer
    ranks = max(i for i in tok.vocab if i not in tok.special_tokens.values())
    assert dict(tok.special_tokens) == {"<|begin_of_text|>": ranks + 1, "<|eot|>": 5000}
    ids = tok.encode("<|begin_of_text|>Hello<|eot|>")
    assert ids[0] == ranks + 1 and ids[-1] == 5000


def test_a_special_token_on_a_rank_is_an_error_that_says_which(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views, bare_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = _answer(monkeypatch, "gpt2", (("<|x|>", 65),))
    window.open_tokenizer(bare_file)
    qtbot.waitUntil(lambda: bool(asked) and not views.is_busy() and views.last_error != "", timeout=WAIT_MS)
    assert views.current is None and views.error_box is not None
    assert "<|x|>=65: id 65 is the rank of the token b'A'; give a free id" in views.last_error
