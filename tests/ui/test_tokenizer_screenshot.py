"""``bpe-studio --tokenizer PATH --text TEXT --screenshot PNG`` shows the playground with that tokenizer."""

# ruff: noqa: F811 - the fixtures imported from tokenizer_helpers are test arguments

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtGui import QColor, QImage

from bpe_studio.cli import parse_args
from bpe_studio.ui.app import app as app_module
from bpe_studio.ui.app.main_window import DEFAULT_SIZE, MainWindow
from bpe_studio.ui.app.settings import settings_path
from bpe_studio.ui.present.token_format import LIGHT_PALETTE

from .tokenizer_helpers import TRICKY_TEXT, tiny_corpus, tiny_file, tiny_result  # noqa: F401 - fixtures

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _restore_sigint() -> Iterator[None]:
    handler = signal.getsignal(signal.SIGINT)
    yield
    signal.signal(signal.SIGINT, handler)


@pytest.fixture(autouse=True)
def _no_quit_on_last_window(qapp) -> Iterator[None]:  # type: ignore[no-untyped-def]
    """Closing the app's only window posts a Quit event; delivered after main() returned, it would end every
    event loop of the next tests at once. Here the window closes by itself, so that is not needed."""
    qapp.setQuitOnLastWindowClosed(False)
    yield
    qapp.setQuitOnLastWindowClosed(True)


def _token_colour_pixels(image: QImage) -> int:
    """How many sampled pixels have one of the token background colours."""
    colours = {QColor(c).rgb() for c in LIGHT_PALETTE.backgrounds}
    points = ((x, y) for x in range(0, image.width(), 3) for y in range(0, image.height(), 3))
    return sum(1 for x, y in points if image.pixel(x, y) in colours)


def test_screenshot_of_the_playground(qapp, tiny_file: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "shots" / "playground.png"
    out.parent.mkdir()
    code = app_module.main(
        parse_args(["--tokenizer", str(tiny_file), "--text", TRICKY_TEXT, "--screenshot", str(out)])
    )
    assert code == 0
    assert [p.name for p in out.parent.iterdir()] == [out.name]  # written by a rename: no temporary left
    image = QImage(str(out))
    assert (image.width(), image.height()) == DEFAULT_SIZE
    # The text is coloured by token (in the text and the decoded-bytes view).
    assert _token_colour_pixels(image) > 500
    assert not settings_path().exists()  # screenshots leave the user's settings alone


def test_screenshot_with_a_malformed_tokenizer_fails(  # type: ignore[no-untyped-def]
    qapp, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{ not json", encoding="utf-8")
    out = tmp_path / "bad.png"
    args = parse_args(["--tokenizer", str(bad), "--text", "x", "--screenshot", str(out)])
    assert app_module.main(args) != 0
    assert not out.exists()
    err = capsys.readouterr().err
    assert "cannot open the tokenizer" in err and "bad.json" in err and "not valid JSON" in err


def test_screenshot_into_a_missing_folder_is_refused_up_front(  # type: ignore[no-untyped-def]
    qapp, tiny_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "missing" / "shot.png"
    args = parse_args(["--tokenizer", str(tiny_file), "--screenshot", str(out)])
    assert app_module.main(args) == app_module.EXIT_SCREENSHOT_PATH
    assert not out.parent.exists()
    assert not any(isinstance(w, MainWindow) and w.isVisible() for w in qapp.topLevelWidgets())  # none opened
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("bpe-studio: error: --screenshot:")
    assert "does not exist" in err


def test_screenshot_into_a_file_as_folder_is_refused_up_front(  # type: ignore[no-untyped-def]
    qapp, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert app_module.main(parse_args(["--screenshot", str(blocker / "shot.png")])) == 2
    assert f"{blocker} is a file, so {blocker / 'shot.png'} cannot be written" in capsys.readouterr().err


def test_window_closed_before_the_screenshot_fails(  # type: ignore[no-untyped-def]
    qapp, tiny_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The user closes the window (the app quits) before the shot: no PNG, so not a success."""
    out = tmp_path / "shot.png"

    def close_window() -> None:
        for widget in qapp.topLevelWidgets():
            if isinstance(widget, MainWindow):
                widget.close()
        qapp.quit()  # what closing the last window does when the app quits on it

    QTimer.singleShot(0, close_window)
    args = parse_args(["--tokenizer", str(tiny_file), "--text", "hi", "--screenshot", str(out)])
    assert app_module.main(args) == app_module.EXIT_SCREENSHOT_FAILED
    assert not out.exists()
    assert "closed before the screenshot" in capsys.readouterr().err


def test_demo_that_cannot_start_takes_no_screenshot(  # type: ignore[no-untyped-def]
    qapp, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def no_corpus() -> Path:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("bpe_studio.demo.demo_corpus", no_corpus)
    out = tmp_path / "demo.png"
    code = app_module.main(parse_args(["--demo", "--screenshot", str(out)]))
    assert code == app_module.EXIT_SCREENSHOT_FAILED
    assert not out.exists()
    err = capsys.readouterr().err
    assert "demo training did not start" in err and "no screenshot taken" in err


def test_failed_write_leaves_nothing_behind(  # type: ignore[no-untyped-def]
    qapp, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The PNG is written to a temporary file and renamed: a failed rename leaves neither behind."""

    def failing_replace(src: str, dst: str) -> None:
        assert Path(src).stat().st_size > 0  # the image was written in full before the rename
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(app_module.os, "replace", failing_replace)
    out = tmp_path / "shot.png"
    assert app_module.main(parse_args(["--screenshot", str(out)])) == app_module.EXIT_SCREENSHOT_FAILED
    assert list(tmp_path.iterdir()) == []  # neither the PNG nor a temporary file
    assert "cannot write the screenshot" in capsys.readouterr().err


def test_bpe_studio_command_with_gpt2_files(cs336_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "gpt2.png"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(REPO))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bpe_studio",
            "--tokenizer",
            str(cs336_data / "gpt2_vocab.json"),
            "--text",
            "Hello, world! Héllò 🙃<|endoftext|>",
            "--screenshot",
            str(out),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    image = QImage(str(out))
    assert (image.width(), image.height()) == DEFAULT_SIZE
    assert _token_colour_pixels(image) > 100


@pytest.mark.parametrize("spelling", ["same path", "symlink", "hard link", "corpus"])
def test_a_screenshot_over_an_input_is_refused_before_the_app_starts(
    tiny_file: Path, tmp_path: Path, spelling: str
) -> None:
    # Issue 18: --screenshot tok.json replaced the tokenizer it was showing with a PNG.
    tokenizer = tmp_path / "tok.json"
    tokenizer.write_bytes(tiny_file.read_bytes())
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the cat sat\n", encoding="utf-8")
    shot = {"same path": tokenizer, "corpus": corpus}.get(spelling, tmp_path / "shot.png")
    if spelling == "symlink":
        shot.symlink_to(tokenizer)
    elif spelling == "hard link":
        os.link(tokenizer, shot)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(REPO))
    argv = [str(corpus), "--tokenizer", str(tokenizer), "--text", "x", "--screenshot", str(shot)]
    done = subprocess.run(
        [sys.executable, "-I", "-m", "bpe_studio", *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("bpe-studio: error: --screenshot: ")
    what = "a CORPUS file" if spelling == "corpus" else "the --tokenizer file"
    assert f"is {what} " in done.stderr and "choose another output path" in done.stderr
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before, "something was written"
