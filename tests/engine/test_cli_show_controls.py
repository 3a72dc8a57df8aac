"""``bpe-studio encode --show`` never sends the text's control characters to the terminal: ESC, BEL, C1
controls and bidi overrides are printed in the app's notation (``<0x1B>``, ``<U+202E>``)."""

from __future__ import annotations

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
    from bpe_studio.ui import token_format

    assert token_format.token_label is token_label
    assert token_label("\u202e\x85".encode()) == "<U+202E><U+0085>"
    assert control_label("a\tb\n\x1b") == "a\tb\n<0x1B>"
