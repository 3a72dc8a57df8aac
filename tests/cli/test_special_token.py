"""``--special-token TOKEN[=ID]`` for a bare ``.tiktoken`` file, which names no special tokens (Llama 3's
``<|begin_of_text|>`` would otherwise be encoded as text): recognised as other formats' special tokens are
(``--no-special`` encodes them as text), checked against the ranks and each other (one line, exit 2)."""

# ruff: noqa: F811 - the fixtures imported from bare_rank_file are test arguments

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bpe_studio.engine import Tokenizer, save

from .bare_rank_file import bare, ordinary  # noqa: F401 - fixtures
from .bare_rank_file import run_cli as _run

BEGIN, END = "<|begin_of_text|>", "<|end_of_text|>"
TEXT = f"{BEGIN}Hello, world!{END}"


def _expected(ordinary: Tokenizer, specials: dict[str, int]) -> list[int]:
    tok = Tokenizer(dict(ordinary.vocab), ordinary.merges, specials, pattern="cl100k", ignore_merges=True)
    return tok.encode(TEXT)


def test_special_tokens_are_recognised_with_their_ids(
    bare: Path, ordinary: Tokenizer, capsys: pytest.CaptureFixture[str]
) -> None:
    free = max(ordinary.vocab) + 1
    base = ("encode", "-t", bare, "--pattern", "cl100k", "--json")
    code, out, _ = _run(capsys, *base, TEXT)
    assert code == 0 and json.loads(out) == ordinary.encode(TEXT)  # without them: text, as before
    # TOKEN alone takes the next id after the ranks (and after the special tokens before it).
    code, out, err = _run(capsys, *base, "--special-token", BEGIN, "--special-token", END, TEXT)
    ids = json.loads(out)
    assert code == 0 and err == "" and ids[0] == free and ids[-1] == free + 1
    assert ids == _expected(ordinary, {BEGIN: free, END: free + 1})
    # TOKEN=ID, and a TOKEN after it continues from there.
    code, out, _ = _run(capsys, *base, "--special-token", f"{BEGIN}=5000", "--special-token", END, TEXT)
    assert code == 0 and json.loads(out) == _expected(ordinary, {BEGIN: 5000, END: 5001})
    # --no-special encodes them as ordinary text, as for any format's special tokens.
    code, out, _ = _run(capsys, *base, "--no-special", "--special-token", BEGIN, TEXT)
    assert code == 0 and json.loads(out) == ordinary.encode(TEXT)
    # decode, inspect, compare and convert take them too.
    code, out, _ = _run(capsys, "decode", "-t", bare, "--special-token", BEGIN, free, *ordinary.encode("Hi"))
    assert code == 0 and out == f"{BEGIN}Hi\n"
    code, out, _ = _run(capsys, "inspect", bare, "--pattern", "cl100k", "--special-token", BEGIN, "--json")
    assert code == 0 and json.loads(out)["special_tokens"] == {BEGIN: free}
    code, out, _ = _run(
        capsys, "compare", bare, bare, "--text", TEXT, "--pattern-a", "cl100k", "--pattern-b", "cl100k",
        "--special-token-b", BEGIN, "--json",
    )  # fmt: skip
    found = json.loads(out)
    assert code == 0 and found["a"]["tokens"] == len(ordinary.encode(TEXT))
    assert found["b"]["tokens"] == 1 + len(ordinary.encode(TEXT.removeprefix(BEGIN)))


def test_convert_keeps_them(
    bare: Path, ordinary: Tokenizer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    free = max(ordinary.vocab) + 1
    target = tmp_path / "tokenizer.json"
    code, _, err = _run(
        capsys, "convert", bare, "--to", "hf", target, "--pattern", "cl100k", "--special-token", BEGIN
    )
    assert code == 0, err
    document = json.loads(target.read_text(encoding="utf-8"))
    assert [(t["content"], t["id"]) for t in document["added_tokens"]] == [(BEGIN, free)]


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (
            ["<|x|>=5"],
            "--special-token: {path}: <|x|>=5: id 5 is the rank of the token b'\\x05'; give a free id",
        ),
        ([BEGIN, f"{END}={{free}}"], "id {free} is already '<|begin_of_text|>'; give a free id, e.g. {next}"),
        ([BEGIN, BEGIN], "'<|begin_of_text|>' is already a special token (id {free}); list each special"),
        (["=5"], "names no token before '='"),
    ],
)
def test_a_clash_is_one_line_exit_2(
    bare: Path,
    ordinary: Tokenizer,
    capsys: pytest.CaptureFixture[str],
    given: list[str],
    expected: str,
) -> None:
    free = max(ordinary.vocab) + 1
    options = [a for g in given for a in ("--special-token", g.format(free=free))]
    code, out, err = _run(capsys, "encode", "-t", bare, "--pattern", "cl100k", *options, TEXT)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert expected.format(path=bare, free=free, next=free + 1) in err


def test_other_formats_store_their_own(
    ordinary: Tokenizer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = save(ordinary, tmp_path / "tokenizer.json", format="hf")
    code, _, err = _run(capsys, "encode", "-t", path, "--special-token", BEGIN, TEXT)
    assert code == 2 and err.count("\n") == 1
    assert f"--special-token: {path} is not a .tiktoken file; its format stores its own special" in err
