"""``bpe-studio inspect FILE`` in a fresh process imports what describing a file needs, not the modules only
a name, a download, a message or another command needs (each costs milliseconds of every run, and a fresh
``inspect`` should take no longer than the reference library's load: issue 20, bench/load.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bpe_studio.engine import Tokenizer
from bpe_studio.engine.formats import save
from tests.fresh_python import printed_by_isolated

# Imported only to resolve a name or download (formats/hub.py, formats/named.py), for an error message
# (humanize.py and the training events it imports), a mean (statistics) or a mistyped command (difflib).
NOT_FOR_INSPECT = (
    "bpe_studio.engine.formats.hub",
    "bpe_studio.engine.formats.named",
    "bpe_studio.engine.humanize",
    "bpe_studio.engine.events",
    "statistics",
    "difflib",
)

_PROBE = (
    "import sys, io, contextlib\n"
    "from bpe_studio.cli import main\n"
    "with contextlib.redirect_stdout(io.StringIO()):\n"
    "    assert main(['inspect', sys.argv[1]]) == 0\n"
    f"print(' '.join(m for m in {NOT_FOR_INSPECT!r} if m in sys.modules))\n"
)


def test_inspect_of_a_tokenizer_json_leaves_out_what_it_does_not_need(tmp_path: Path) -> None:
    base = {i: bytes([i]) for i in range(256)}
    path = save(
        Tokenizer(base | {256: b"ab"}, [(b"a", b"b")], ["<|endoftext|>"]), tmp_path / "t.json", format="hf"
    )
    assert printed_by_isolated(_PROBE, str(path)) == []


# What describing a file needs none of (issue 20: ``inspect FILE`` within the reference library's load):
# dataclasses (with inspect and ast, 5-6 ms: the writers' plans, the analysis module's records), the other
# commands' modules, and for a .model no JSON at all (the text output is not JSON) and no ``typing``
# (1-2 ms: the modules opening a .model import it only for type checkers, see bpe_studio/__init__.py).
NOT_FOR_DESCRIBING = (
    "dataclasses",
    "inspect",
    "ast",
    "bpe_studio.engine.write_plan",
    "bpe_studio.engine.encoding.analysis",
    "bpe_studio.engine.formats.tiktoken_format",
    "bpe_studio.cli.encode",
    "bpe_studio.cli.signals",
    "shutil",
)


def test_inspect_of_a_file_imports_no_dataclasses_and_no_other_command(tmp_path: Path) -> None:
    from tests.engine.formats.test_load_imports import _model

    base = {i: bytes([i]) for i in range(256)}
    hf_file = save(Tokenizer(base | {256: b"ab"}, [(b"a", b"b")]), tmp_path / "t.json", format="hf")
    model = _model(tmp_path / "tokenizer.model")
    for path, unwanted in ((hf_file, NOT_FOR_DESCRIBING), (model, (*NOT_FOR_DESCRIBING, "json", "typing"))):
        probe = _PROBE.replace(repr(NOT_FOR_INSPECT), repr(unwanted))
        assert printed_by_isolated(probe, str(path)) == [], path


def test_help_is_as_wide_as_argparse_makes_it_without_shutil(monkeypatch: pytest.MonkeyPatch) -> None:
    # The parsers take the terminal's width from os, not shutil (imported by argparse's own formatter at
    # every add_argument, with bz2 and lzma): the same width, whatever $COLUMNS says.
    import argparse

    from bpe_studio.cli import Parser

    for columns in ("50", "132", "0", "x"):
        monkeypatch.setenv("COLUMNS", columns)
        ours = Parser(prog="p")._get_formatter()
        theirs = argparse.HelpFormatter(prog="p")
        assert (ours._width, ours._max_help_position) == (theirs._width, theirs._max_help_position)
