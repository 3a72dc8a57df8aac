"""One command-line parser: the app is the default command, a mistyped command is refused with a suggestion,
text that is not UTF-8 is refused in one line (issue 9 items 13 and 14, issue 10 item 8). No Qt needed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bpe_studio.cli import build_parser, main, parse_args

from ..conftest import REPO_ROOT


def _usage_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1, captured.err
    return captured.err


def _run(args: list[str | bytes], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "bpe_studio", *args],
        capture_output=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT), "QT_QPA_PLATFORM": "offscreen"},
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("word", "suggestion"), [("trian", "train"), ("encdoe", "encode"), ("inspct", "inspect"), ("ap", "app")]
)
def test_mistyped_command_suggests_the_right_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], word: str, suggestion: str
) -> None:
    (tmp_path / "corpus.txt").write_text("hello\n", encoding="utf-8")
    err = _usage_error(capsys, [word, str(tmp_path / "corpus.txt")])
    assert err == f"bpe-studio: error: unknown command '{word}' (did you mean '{suggestion}'?)\n"


def test_unknown_word_lists_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    err = _usage_error(capsys, ["frobnicate"])
    assert err.startswith("bpe-studio: error: unknown command 'frobnicate'; the commands are train, encode,")


def test_mistyped_command_never_opens_the_app(tmp_path: Path) -> None:
    done = _run(["trian", "corpus.txt"], tmp_path)
    assert done.returncode == 2
    assert done.stderr == b"bpe-studio: error: unknown command 'trian' (did you mean 'train'?)\n"
    code = (
        "import sys\nfrom bpe_studio.cli import main\ntry:\n    main(['trian', 'corpus.txt'])\n"
        "except SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith(('PySide6', 'bpe_studio.ui'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)}, timeout=120, check=False,
    )  # fmt: skip
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


def test_the_app_is_the_default_command(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("hello\n", encoding="utf-8")
    assert parse_args([]).command == "app"
    args = parse_args(["--demo", "--screenshot", str(tmp_path / "s.png")])
    assert (args.command, args.demo, args.screenshot) == ("app", True, tmp_path / "s.png")
    args = parse_args([str(corpus), "--tokenizer", "t.json", "--text", "héllo"])
    assert (args.command, args.corpus, args.tokenizer, args.text) == (
        "app",
        [corpus],
        Path("t.json"),
        "héllo",
    )
    assert parse_args(["app", "--demo"]).demo
    assert parse_args(["train", str(corpus), "--vocab-size", "300", "--out", "o"]).command == "train"


def test_help_shows_the_app_options() -> None:
    text = build_parser().format_help()
    for option in ("--demo", "--screenshot", "--tokenizer", "--text", "CORPUS", "train", "inspect"):
        assert option in text


@pytest.mark.parametrize(
    "argv",
    [
        ["train", "c.txt", "--vocab-size", "300", "--out", "o", "--special-token", "\udcff"],
        ["train", "c.txt", "--vocab-size", "300", "--out", "o", "--pattern", "a\udcffb"],
        ["encode", "-t", "tok.json", "--show", "caf\udcc3"],
        ["encode", "-t", "tok.json", "\udcff"],
        ["convert", "a.tiktoken", "--to", "gpt2", "out", "--pattern", "\udcfe"],
        ["--tokenizer", "t.json", "--text", "\udcff"],
    ],
)
def test_text_that_is_not_utf8_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    err = _usage_error(capsys, argv)
    assert ": error: argument " in err and "is not valid UTF-8 text; give the text in UTF-8" in err


def test_non_utf8_bytes_on_a_real_command_line(tmp_path: Path) -> None:
    (tmp_path / "c.txt").write_text("hello world\n" * 20, encoding="utf-8")
    done = _run(["train", "c.txt", "--vocab-size", "300", "--out", "o", "--special-token", b"\xff"], tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith(b"bpe-studio train: error: argument --special-token: b'\\xff' is not valid")
    assert done.stderr.count(b"\n") == 1 and b"Traceback" not in done.stderr
    assert not (tmp_path / "o").exists()


def test_parse_errors_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    err = _usage_error(capsys, ["train", "c.txt", "--out", "o"])
    assert err == "bpe-studio train: error: the following arguments are required: --vocab-size\n"
