"""Tokenizer ▸ Open OpenAI encoding: from tiktoken's cache when the file is there; otherwise the app asks
before downloading anything, says where a copy would go, and opens nothing when the user says no."""

# ruff: noqa: F811 - fixtures imported from tokenizer_helpers are test arguments

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QMessageBox

from bpe_studio.engine import load, save
from bpe_studio.engine.formats import named
from bpe_studio.engine.formats.named import GPT2_FOLDER
from bpe_studio.ui.app.main_window import MainWindow

from .test_menu_actions import find_action
from .tokenizer_helpers import WAIT_MS, views, wait_playground  # noqa: F401 - fixtures


@pytest.fixture(scope="module")
def r50k_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """OpenAI's r50k_base.tiktoken byte for byte: GPT-2's ranks as this engine writes them."""
    return save(load(GPT2_FOLDER), tmp_path_factory.mktemp("r50k") / "r50k.tiktoken", format="tiktoken")


def _answer(monkeypatch: pytest.MonkeyPatch, button: QMessageBox.StandardButton) -> list[str]:
    asked: list[str] = []

    def question(_parent: Any, title: str, text: str, *_args: Any) -> QMessageBox.StandardButton:
        asked.append(f"{title}\n{text}")
        return button

    monkeypatch.setattr(QMessageBox, "question", staticmethod(question))
    return asked


def test_an_encoding_in_tiktokens_cache_opens_from_the_menu(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views, r50k_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = Path(os.environ["TIKTOKEN_CACHE_DIR"])
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "r50k_base.tiktoken").write_bytes(r50k_file.read_bytes())
    asked = _answer(monkeypatch, QMessageBox.StandardButton.Cancel)
    with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS):
        find_action(window, "Tokenizer", "Open OpenAI encoding", "r50k_base (GPT-3)").trigger()
    wait_playground(qtbot, views.playground)
    assert asked == [], "a file in the cache must open without a question"
    assert views.current is not None and views.current.tokenizer.vocab_size == 50_257
    assert views.current.tokenizer.special_tokens == {"<|endoftext|>": 50256}


def test_a_missing_encoding_is_not_downloaded_unasked(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views, monkeypatch: pytest.MonkeyPatch
) -> None:
    fetched: list[str] = []
    views_module = "bpe_studio.ui.app.tokenizer_views"
    monkeypatch.setattr(f"{views_module}.download_encoding", lambda name, **_: fetched.append(name))
    asked = _answer(monkeypatch, QMessageBox.StandardButton.Cancel)
    find_action(window, "Tokenizer", "Open OpenAI encoding", "cl100k_base (GPT-3.5, GPT-4)").trigger()
    assert len(asked) == 1
    assert "cl100k_base.tiktoken" in asked[0] and os.environ["TIKTOKEN_CACHE_DIR"] in asked[0]
    assert fetched == [] and views.current is None
    assert "not on this computer" in window.statusBar().currentMessage()


def test_download_on_request_then_open(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views, r50k_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = Path(os.environ["TIKTOKEN_CACHE_DIR"])

    def download(name: str, **_options: Any) -> Path:  # what a checked download leaves in the cache
        cache.mkdir(parents=True, exist_ok=True)
        target = cache / f"{name}.tiktoken"
        target.write_bytes(r50k_file.read_bytes())
        return target

    monkeypatch.setattr("bpe_studio.ui.app.tokenizer_views.download_encoding", download)
    asked = _answer(monkeypatch, QMessageBox.StandardButton.Yes)
    with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS):
        find_action(window, "Tokenizer", "Open OpenAI encoding", "r50k_base (GPT-3)").trigger()
    wait_playground(qtbot, views.playground)
    assert len(asked) == 1
    assert views.current is not None and views.current.tokenizer.vocab_size == 50_257
    # Next time it is in the cache: no question.
    asked.clear()
    with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS):
        find_action(window, "Tokenizer", "Open OpenAI encoding", "r50k_base (GPT-3)").trigger()
    assert asked == []


def test_a_failed_download_is_reported_in_the_apps_words(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views, monkeypatch: pytest.MonkeyPatch
) -> None:
    def download(name: str, **_options: Any) -> Path:
        raise named.FormatError(f"{name}: no answer from the server within 60 s; try again later")

    monkeypatch.setattr("bpe_studio.ui.app.tokenizer_views.download_encoding", download)
    _answer(monkeypatch, QMessageBox.StandardButton.Yes)
    with qtbot.waitSignal(views.error_shown, timeout=WAIT_MS) as shown:
        find_action(window, "Tokenizer", "Open OpenAI encoding", "o200k_base (GPT-4o)").trigger()
    _title, message = shown.args
    assert "no answer from the server" in message and "Traceback" not in message
    assert views.current is None
    if views.error_box is not None:
        views.error_box.close()
