"""``bpe-studio encode --show`` never sends the text's control characters to the terminal: ESC, BEL, C1
controls and bidi overrides are printed in the app's notation (``<0x1B>``, ``<U+202E>``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bpe_studio.cli import main
from bpe_studio.engine.notation import control_label, token_label

NASTY = "clear\x1b[2J title\x1b]0;pwned\x07 c1\x9b31m rtl\u202eevil\u2066 bom\ufeff del\x7f end"


@pytest.mark.parametrize("color", ["never", "always"])
def test_show_prints_no_control_character_of_the_text(capsys: pytest.CaptureFixture[str], color: str) -> None:
    assert main(["encode", "-t", "gpt2", "--show", "--color", color, NASTY]) == 0
    out = capsys.readouterr().out
    shown = out.replace("\x1b[0m", "").replace("\x1b[38;5;16m", "")
    for code in range(16, 256):
        shown = shown.replace(f"\x1b[48;5;{code}m", "")  # only the colours --show adds itself
    for char in ("\x1b", "\x07", "\x9b", "\u202e", "\u2066", "\ufeff", "\x7f"):
        assert char not in shown, f"{char!r} reached the terminal"
    shown = shown.replace("│", "")
    for code in ("<0x1B>[2J", "<0x07>", "<U+009B>", "<U+202E>", "<U+2066>", "<U+FEFF>", "<0x7F>"):
        assert code in shown


def test_the_app_and_the_cli_share_one_notation() -> None:
    from bpe_studio.ui.present import token_format

    assert token_format.token_label is token_label
    assert token_label("\u202e\x85".encode()) == "<U+202E><U+0085>"
    assert control_label("a\tb\n\x1b") == "a\tb\n<0x1B>"


# ---- the other commands: listings, tables and error lines for a person; JSON escaped, still exact --------

RAW = ("\x1b", "\x07", "\x9b", "\u202e", "\x7f")
SPECIAL = "<|\x1b]0;pwned\x07\u202e|>"


@pytest.fixture(scope="module")
def nasty(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A tokenizer with a special token full of control characters, its file and corpus named with ESC."""
    from bpe_studio.engine import Tokenizer, TrainConfig, save, train

    folder = tmp_path_factory.mktemp("nasty")
    corpus = folder / "c\x1b[2Jorpus\u202e.txt"
    corpus.write_text((NASTY + "\n") * 50, encoding="utf-8")
    tok = folder / "tok\x1b]0;x\x07.json"
    result = train(TrainConfig(inputs=(corpus,), vocab_size=300, special_tokens=(SPECIAL,)))
    save(Tokenizer.from_result(result), tok)
    return tok, corpus


def _clean(text: str) -> None:
    for char in RAW:
        assert char not in text, f"{char!r} reached the terminal: {text!r}"


@pytest.mark.parametrize(
    "argv",
    [
        ["inspect", "{tok}", "--text", NASTY],
        ["compare", "{tok}", "gpt2", "--text", NASTY],
        ["eval", "-t", "{tok}", "{corpus}"],
    ],
    ids=["inspect", "compare", "eval"],
)
def test_tables_and_listings_show_no_control_character(
    nasty: tuple[Path, Path], capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    tok, corpus = nasty
    args = [a.format(tok=tok, corpus=corpus) for a in argv]
    assert main(args) == 0
    out = capsys.readouterr().out
    _clean(out)
    assert "<0x1B>" in out or "\\x1b" in out


@pytest.mark.parametrize("command", ["inspect", "compare"])
def test_json_escapes_every_control_character_and_stays_exact(
    nasty: tuple[Path, Path], capsys: pytest.CaptureFixture[str], command: str
) -> None:
    tok, _ = nasty
    args = [str(tok), "--json"] if command == "inspect" else [str(tok), str(tok), "--text", NASTY, "--json"]
    assert main([command, *args]) == 0
    out = capsys.readouterr().out
    _clean(out)
    data = json.loads(out)
    if command == "inspect":
        assert data["path"] == str(tok) and SPECIAL in data["special_tokens"]


def test_an_error_line_quoting_a_name_shows_no_control_character(
    nasty: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    tok, _ = nasty
    missing = tok.with_name("gone\x1b[2J\u202e\n.json")
    assert main(["encode", "-t", str(missing), "hello"]) == 2
    err = capsys.readouterr().err
    _clean(err)
    assert err.startswith("bpe-studio: error: ") and err.count("\n") == 1, err
    assert "gone<0x1B>[2J<U+202E><0x0A>.json" in err
