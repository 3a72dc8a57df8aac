"""File ▸ Open from Hugging Face…: the cached models are listed, a model id opens from the cache, the title
names the model, and nothing is downloaded unless the box is ticked (a fake cache, no network)."""

# ruff: noqa: F811 - fixtures imported from tokenizer_helpers are test arguments

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QDialog

from bpe_studio.engine import load, save
from bpe_studio.engine.formats.named import GPT2_FOLDER
from bpe_studio.ui.app.main_window import MainWindow
from bpe_studio.ui.widgets.hub_dialog import HubDialog

from .test_menu_actions import find_action
from .tokenizer_helpers import WAIT_MS, views, wait_playground  # noqa: F401 - fixtures

_COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Hugging Face cache holding GPT-2 as ``openai-community/gpt2``."""
    folder = tmp_path / "hub"
    model = folder / "models--openai-community--gpt2"
    (model / "refs").mkdir(parents=True)
    (model / "refs" / "main").write_text(_COMMIT)
    (model / "snapshots" / _COMMIT).mkdir(parents=True)
    save(load(GPT2_FOLDER), model / "snapshots" / _COMMIT / "tokenizer.json", format="hf")
    monkeypatch.setenv("HF_HUB_CACHE", str(folder))
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # discard: nothing may reach the network
    return folder


def _pick(monkeypatch: pytest.MonkeyPatch, model_id: str, *, download: bool = False) -> list[list[str]]:
    listed: list[list[str]] = []

    def exec_(dialog: HubDialog) -> int:
        listed.append([dialog.model_box.itemText(i) for i in range(dialog.model_box.count())])
        dialog.model_box.setCurrentText(model_id)
        dialog.download_box.setChecked(download)
        return QDialog.DialogCode.Accepted.value

    monkeypatch.setattr(HubDialog, "exec", exec_)
    return listed


def test_a_cached_model_opens_from_the_file_menu(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views, hub: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    listed = _pick(monkeypatch, "openai-community/gpt2")
    with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS):
        find_action(window, "File", "Open from Hugging Face").trigger()
    wait_playground(qtbot, views.playground)
    assert listed == [["openai-community/gpt2"]]
    assert views.current is not None and views.current.tokenizer.vocab_size == 50_257
    assert "openai-community/gpt2" in window.windowTitle()


def test_a_model_not_cached_is_not_downloaded_unasked(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views, hub: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fetched: list[str] = []
    monkeypatch.setattr("bpe_studio.ui.app.tokenizer_views.download_model", lambda m, **_: fetched.append(m))
    _pick(monkeypatch, "meta-llama/Llama-3.1-8B")
    find_action(window, "File", "Open from Hugging Face").trigger()
    assert fetched == [] and views.current is None
    assert "huggingface-cli download meta-llama/Llama-3.1-8B" in views.last_error


def test_the_box_ticked_downloads_then_opens(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views, hub: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = hub / "models--openai-community--gpt2" / "snapshots" / _COMMIT / "tokenizer.json"

    def download(model_id: str, **_: Any) -> Path:  # what a download leaves in the cache
        target = hub / ("models--" + model_id.replace("/", "--")) / "snapshots" / _COMMIT / "tokenizer.json"
        target.parent.mkdir(parents=True)
        target.write_bytes(source.read_bytes())
        return target

    monkeypatch.setattr("bpe_studio.ui.app.tokenizer_views.download_model", download)
    _pick(monkeypatch, "org/Fresh", download=True)
    with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS):
        find_action(window, "File", "Open from Hugging Face").trigger()
    wait_playground(qtbot, views.playground)
    assert "org/Fresh" in window.windowTitle()
