"""Shared pieces of the tokenizer-view tests: small trained tokenizers, waiting helpers, reading formats.

Fixtures are imported by the test modules that use them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bpe_studio.engine import Tokenizer, TokenSpan, TrainConfig, TrainResult, save, train
from bpe_studio.ui.app.main_window import MainWindow
from bpe_studio.ui.app.tokenizer_views import TokenizerViews
from bpe_studio.ui.playground.view import PlaygroundView
from bpe_studio.ui.train.view import save_result
from bpe_studio.ui.widgets.token_text import UNIT_PROPERTY, TokenTextEdit

WAIT_MS = 30_000
SPECIAL = "<|endoftext|>"

#: A text with what tokenizers find hard: accents, CJK, an emoji (astral: two UTF-16 units), tabs, runs of
#: spaces and newlines, and a special token.
TRICKY_TEXT = (
    "Hello, world! The café's naïve owner said: “日本語 🙃”.\n"
    "\tdef f(x):   return x  # spaces\n\n\n"
    f"first{SPECIAL}second 🙃🙃 end\n"
)


def _documents() -> list[str]:
    from pydoc_data.topics import topics

    return [topics[name].strip() for name in sorted(topics)]


@pytest.fixture(scope="session")
def tiny_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """About 40 kB of English prose with special tokens between documents (trains in a few ms)."""
    path = tmp_path_factory.mktemp("tiny") / "tiny.txt"
    path.write_text(SPECIAL.join(_documents())[:40_000], encoding="utf-8")
    return path


def train_tiny(corpus: Path, vocab_size: int) -> TrainResult:
    """Train the tiny corpus to a vocab size (with the special token)."""
    return train(TrainConfig(inputs=(corpus,), vocab_size=vocab_size, special_tokens=(SPECIAL,)))


@pytest.fixture(scope="session")
def tiny_result(tiny_corpus: Path) -> TrainResult:
    """A 600-token tokenizer trained on the tiny corpus."""
    return train_tiny(tiny_corpus, 600)


@pytest.fixture(scope="session")
def tiny_file(tiny_corpus: Path, tiny_result: TrainResult, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny tokenizer saved in BPE Studio's format, with its training record."""
    path = tmp_path_factory.mktemp("tok") / "tiny.json"
    config = TrainConfig(inputs=(tiny_corpus,), vocab_size=600, special_tokens=(SPECIAL,))
    save_result(tiny_result, config, path)
    return path


@pytest.fixture
def small_file(tiny_corpus: Path, tmp_path: Path) -> Path:
    """A second, 300-token tokenizer of the same corpus, in a folder of its own (a Hugging Face
    tokenizer.json)."""
    folder = tmp_path / "small"
    folder.mkdir()
    save(Tokenizer.from_result(train_tiny(tiny_corpus, 300)), folder / "tokenizer.json", format="hf")
    return folder / "tokenizer.json"


@pytest.fixture
def views(window: MainWindow) -> Iterator[TokenizerViews]:
    """The main window's tokenizer views; at the end no worker thread may be left."""
    yield window.tokenizer_views
    window.tokenizer_views.shutdown()
    assert not window.tokenizer_views.is_busy(), "a tokenizer-view thread outlived the test"


def wait_playground(qtbot: Any, playground: PlaygroundView) -> None:
    """Wait until the playground encoded its text and computed the curve."""
    if playground.is_busy():
        with qtbot.waitSignal(playground.settled, timeout=WAIT_MS):
            pass
    assert not playground.is_busy()


def open_and_wait(qtbot: Any, window: MainWindow, source: Path | TrainResult, text: str = "") -> None:
    """Open a tokenizer through the window and wait until the playground shows it."""
    views = window.tokenizer_views
    with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS):
        window.open_tokenizer(source, text)
    wait_playground(qtbot, views.playground)


def formatted_units(edit: TokenTextEdit) -> dict[int, int]:
    """Document position (UTF-16) -> the unit index its character format carries."""
    found: dict[int, int] = {}
    block = edit.document().begin()
    while block.isValid():
        for item in block.layout().formats():
            unit = item.format.property(UNIT_PROPERTY)
            for offset in range(item.start, item.start + item.length):
                found[block.position() + offset] = unit
        block = block.next()
    return found


def utf16(text: str, offset: int) -> int:
    """The UTF-16 position of a code point offset."""
    return len(text[:offset].encode("utf-16-le")) // 2


def expected_units(spans: list[TokenSpan]) -> list[tuple[int, int, list[int]]]:
    """Token spans grouped as the views should colour them: tokens sharing a character form one unit."""
    units: list[tuple[int, int, list[int]]] = []
    for i, span in enumerate(spans):
        if units and span.start < units[-1][1]:
            start, end, tokens = units[-1]
            units[-1] = (start, max(end, span.end), [*tokens, i])
        else:
            units.append((span.start, span.end, [i]))
    return units


def expected_formats(text: str, spans: list[TokenSpan]) -> dict[int, int]:
    """Document position -> unit, for every character of every token (line breaks carry no format)."""
    found: dict[int, int] = {}
    for unit, (start, end, _tokens) in enumerate(expected_units(spans)):
        for offset in range(start, end):
            if text[offset] == "\n":
                continue
            position = utf16(text, offset)
            for extra in range(len(text[offset].encode("utf-16-le")) // 2):
                found[position + extra] = unit
    return found


def duplicate_merge_tokenizer() -> Tokenizer:
    """A tokenizer whose merge 3 makes bytes merge 2 already made (as the engine's tests build one)."""
    vocab = {i: bytes([i]) for i in range(256)}
    vocab |= {256: b"ab", 257: b"bc", 258: b"abc", 259: b"abcab"}
    merges = [(b"a", b"b"), (b"b", b"c"), (b"ab", b"c"), (b"a", b"bc"), (b"abc", b"ab")]
    return Tokenizer(vocab, merges, {SPECIAL: 260}, pattern=r"\S+|\s+")


__all__ = [
    "SPECIAL",
    "TRICKY_TEXT",
    "WAIT_MS",
    "duplicate_merge_tokenizer",
    "expected_formats",
    "expected_units",
    "formatted_units",
    "open_and_wait",
    "tiny_corpus",
    "tiny_file",
    "tiny_result",
    "train_tiny",
    "utf16",
    "views",
    "wait_playground",
]
