"""The app's entry point: --demo --screenshot writes a PNG of the trained window, --tokenizer is passed on."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QImage

from bpe_studio.cli import parse_args
from bpe_studio.ui.app import app as app_module
from bpe_studio.ui.app.main_window import DEFAULT_SIZE, MainWindow
from bpe_studio.ui.app.settings import Settings, load_settings, save_settings, settings_path

REPO = Path(__file__).resolve().parents[2]


def _open(qtbot, *argv: str) -> tuple[MainWindow, app_module.Screenshotter | None]:  # type: ignore[no-untyped-def]
    app_module.create_application()
    window, shooter = app_module.open_window(parse_args(argv))
    qtbot.addWidget(window)
    return window, shooter


def test_demo_screenshot(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "shots" / "demo.png"
    out.parent.mkdir()
    window, shooter = _open(qtbot, "--demo", "--screenshot", str(out))
    # The demo corpus is built in a thread first (the window paints meanwhile), then the run starts.
    assert shooter is not None and (window.train_view.is_preparing_demo() or window.train_view.is_running())
    with qtbot.waitSignal(shooter.done, timeout=120_000) as done:
        pass
    assert done.args == [0]
    assert not window.isVisible() and not window.train_view.is_running()
    image = QImage(str(out))
    assert not image.isNull()
    assert (image.width(), image.height()) == DEFAULT_SIZE
    # Not a blank image: the charts, table and text give it many colours.
    colours = {image.pixel(x, y) for x in range(0, image.width(), 7) for y in range(0, image.height(), 7)}
    assert len(colours) > 50
    window.close()
    assert not settings_path().exists()  # the demo leaves the user's settings alone


def test_tokenizer_and_text_are_passed_to_the_window(
    qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    calls: list[tuple[Any, ...]] = []
    monkeypatch.setattr(
        MainWindow, "open_tokenizer", lambda self, source, text="": calls.append((source, text))
    )
    _window, shooter = _open(qtbot, "--tokenizer", str(tmp_path / "t.json"), "--text", "héllo")
    assert shooter is None
    assert calls == [(tmp_path / "t.json", "héllo")]


def test_tokenizer_by_name_opens_the_built_in_one(qtbot, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """``bpe-studio --tokenizer gpt2`` opens the built-in GPT-2, as ``bpe-studio encode -t gpt2`` does."""
    from bpe_studio.engine.formats.named import GPT2_FOLDER

    calls: list[tuple[Any, ...]] = []
    monkeypatch.chdir(REPO)  # no file named gpt2 here
    monkeypatch.setattr(
        MainWindow, "open_tokenizer", lambda self, source, text="": calls.append((source, text))
    )
    _open(qtbot, "--tokenizer", "gpt2")
    assert calls == [(GPT2_FOLDER, "")]


def test_screenshot_to_an_unwritable_place_fails(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    blocker = tmp_path / "file"
    blocker.write_text("x")
    _window, shooter = _open(qtbot, "--screenshot", str(blocker / "shot.png"))
    assert shooter is not None
    with qtbot.waitSignal(shooter.done, timeout=10_000) as done:
        pass
    assert done.args == [app_module.EXIT_SCREENSHOT_FAILED]


def test_bpe_studio_command_runs_the_demo(tmp_path: Path, shared_cache_dir: Path) -> None:
    out = tmp_path / "cli.png"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(REPO))
    done = subprocess.run(
        [sys.executable, "-m", "bpe_studio", "--demo", "--screenshot", str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert out.stat().st_size > 10_000
    assert "saved a screenshot" in done.stderr


def test_the_demo_session_keeps_its_settings(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # The README's first command is --demo: its window geometry and recent tokenizers must outlive it.
    window, shooter = _open(qtbot, "--demo")
    assert shooter is None and window.persist
    window.resize(1100, 740)  # fits the offscreen platform's 800-pixel screen (its height is not cut)
    size = (window.width(), window.height())
    assert size != DEFAULT_SIZE
    window.remember_tokenizer(tmp_path / "tok.json")
    window.close()
    assert not window.train_view.is_running()
    saved = load_settings()
    assert saved.recent_tokenizers == [str(tmp_path / "tok.json")]
    assert saved.geometry != ""
    # The next session starts with them.
    again, _ = _open(qtbot)
    assert again.settings.recent_tokenizers == [str(tmp_path / "tok.json")]
    # Qt fits a restored window into the screen (800 px wide offscreen), down to the window's minimum width.
    assert again.height() == size[1]
    assert again.width() == min(size[0], max(800, again.minimumSizeHint().width()))
    again.close()


def test_a_screenshot_neither_reads_nor_writes_the_settings(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    stored = Settings(recent_tokenizers=[str(tmp_path / "old.json")])
    assert save_settings(stored)
    before = settings_path().read_bytes()
    window, shooter = _open(qtbot, "--screenshot", str(tmp_path / "shot.png"))
    assert shooter is not None and not window.persist
    assert window.settings.recent_tokenizers == []
    with qtbot.waitSignal(shooter.done, timeout=10_000):
        pass
    assert settings_path().read_bytes() == before


def test_text_without_a_tokenizer_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """``bpe-studio --text hi`` was ignored without a word (issue 21): now one line, exit code 2."""
    assert app_module.main(parse_args(["--text", "hello"])) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "bpe-studio: error: --text is the playground's text for --tokenizer's tokenizer: give --tokenizer "
        "PATH too"
    )


def test_an_encoding_not_cached_says_where_it_goes_and_how_to_download_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``bpe-studio --tokenizer cl100k_base`` with an empty tiktoken cache said "no such file or folder"
    (issue 21): now the line the other commands print (the cache, --download), before any window opens."""
    monkeypatch.chdir(tmp_path)  # no file named cl100k_base here
    opened: list[object] = []
    monkeypatch.setattr(app_module, "open_window", opened.append)
    assert app_module.main(parse_args(["--tokenizer", "cl100k_base"])) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("bpe-studio: error: --tokenizer cl100k_base: OpenAI's cl100k_base is not in")
    assert "--download" in err and str(tmp_path / "tiktoken-cache") in err and "\n" not in err
    assert opened == []


def test_download_fetches_the_encoding_without_asking(
    qtbot, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    from bpe_studio.ui.app.tokenizer_views import TokenizerViews

    monkeypatch.chdir(tmp_path)
    calls: list[tuple[Any, ...]] = []

    def open_encoding(_self: object, name: str, *, text: str = "", ask: bool = True) -> None:
        calls.append((name, text, ask))

    monkeypatch.setattr(TokenizerViews, "open_encoding", open_encoding)
    _open(qtbot, "--tokenizer", "cl100k", "--text", "hi", "--download")
    assert calls == [("cl100k_base", "hi", False)]
