"""Every subcommand that takes ``-t/--tokenizer`` takes the options that complete a bare ``.tiktoken`` file,
``--pattern`` and ``--special-token`` (and ``--download``), through one helper (``add_tokenizer_options``):
``eval`` and ``encode-corpus`` too, also in their worker processes. ``eval``, which repeats ``-t``, gives
them to the ``-t`` before them. Wrong arguments are one line, exit 2."""

# ruff: noqa: F811 - the fixtures imported from bare_rank_file are test arguments

from __future__ import annotations

import json
from pathlib import Path

import numpy
import pytest

from bpe_studio.cli import build_parser
from bpe_studio.engine import Tokenizer, load

from .bare_rank_file import bare, ordinary  # noqa: F401 - fixtures
from .bare_rank_file import run_cli as _run

BEGIN = "<|begin_of_text|>"
# Not a preset: a tokenizer with it is encoded in worker processes (presets run on threads).
REGEX = r"\s?\w+|\s?[^\s\w]+|\s+"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "docs.jsonl"
    docs = [f"Document {i}: the cat sat on the mat, {i * 7} times. Héllo wörld!" for i in range(60)]
    path.write_text("".join(json.dumps({"text": d}) + "\n" for d in docs), encoding="utf-8")
    return path


def _subcommands_with_tokenizer_option() -> list[str]:
    parser = build_parser()
    (subparsers,) = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
    return sorted(
        name
        for name, sub in subparsers.choices.items()  # type: ignore[attr-defined]
        if any("-t" in a.option_strings for a in sub._actions) and name != "app"
    )


def test_every_subcommand_with_a_tokenizer_option_has_the_same_options() -> None:
    names = _subcommands_with_tokenizer_option()
    assert {"encode", "decode", "eval", "encode-corpus"} <= set(names)
    parser = build_parser()
    (subparsers,) = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
    for name in names:
        sub = subparsers.choices[name]  # type: ignore[attr-defined]
        flags = {flag for action in sub._actions for flag in action.option_strings}
        assert {"-t", "--tokenizer", "--pattern", "--special-token", "--download"} <= flags, name


def test_eval_takes_a_pattern_and_special_tokens_for_a_bare_file(
    bare: Path, ordinary: Tokenizer, corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(capsys, "eval", "-t", bare, corpus, "--json")
    assert code == 2 and err.count("\n") == 1 and "--pattern" in err, err
    code, out, err = _run(
        capsys, "eval", "-t", bare, "--pattern", "cl100k", "--special-token", BEGIN, corpus, "--json"
    )
    assert code == 0, err
    (row,) = json.loads(out)
    texts = [json.loads(line)["text"] for line in corpus.read_text(encoding="utf-8").splitlines()]
    assert row["tokens"] == sum(len(ordinary.encode(t)) for t in texts)


def test_eval_gives_the_options_to_the_tokenizer_before_them(
    bare: Path, corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, alone, _ = _run(capsys, "eval", "-t", "gpt2", corpus, "--json")
    assert code == 0
    code, out, err = _run(capsys, "eval", "-t", bare, "--pattern", REGEX, "-t", "gpt2", corpus, "--json")
    assert code == 0, err
    ours, gpt2 = json.loads(out)
    assert gpt2["tokens"] == json.loads(alone)[0]["tokens"]  # GPT-2 kept its own pattern
    # The same figures from worker processes (a regex that is no preset): they load the file with its
    # pattern too.
    code, parallel, err = _run(
        capsys, "eval", "-t", bare, "--pattern", REGEX, "-t", "gpt2", corpus, "--json", "--workers", "2"
    )
    assert code == 0, err
    assert [r["tokens"] for r in json.loads(parallel)] == [ours["tokens"], gpt2["tokens"]]


def test_encode_corpus_takes_a_pattern_and_a_special_token_as_separator(
    bare: Path, ordinary: Tokenizer, corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    free = max(ordinary.vocab) + 1
    texts = [json.loads(line)["text"] for line in corpus.read_text(encoding="utf-8").splitlines()]
    for workers, pattern in (("1", "cl100k"), ("2", REGEX)):  # this process; worker processes
        out = tmp_path / f"ids{workers}.npy"
        code, _, err = _run(
            capsys, "encode-corpus", "-t", bare, "--pattern", pattern, "--special-token", BEGIN,
            "--separator", BEGIN, corpus, "--out", out, "--workers", workers, "--chunk-size", "512", "-q",
        )  # fmt: skip
        assert code == 0, err
        tok = load(bare, pattern=pattern)
        expected: list[int] = []
        for i, text in enumerate(texts):
            expected += ([free] if i else []) + tok.encode_ordinary(text)
        assert numpy.load(out).tolist() == expected


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["eval", "--pattern", "cl100k", "-t", "{bare}", "{corpus}"], "--pattern: give it after the -t"),
        (
            ["eval", "-t", "{bare}", "--pattern", "cl100k", "--pattern", "gpt2", "{corpus}"],
            "--pattern: given twice for -t {bare}",
        ),
        (
            ["eval", "-t", "gpt2", "--special-token", BEGIN, "{corpus}"],
            "--special-token: gpt2 is not a .tiktoken file",
        ),
        (
            ["encode-corpus", "-t", "{bare}", "{corpus}", "--out", "{out}"],
            "{bare}: this .tiktoken file does not say which pre-tokenization pattern",
        ),
        (
            ["encode-corpus", "-t", "{bare}", "--pattern", "(", "{corpus}", "--out", "{out}"],
            "pattern",
        ),
        (
            ["encode-corpus", "-t", "{bare}", "--pattern", "cl100k", "--special-token", "=5", "{corpus}"],
            "names no token before '='",
        ),
    ],
)
def test_wrong_arguments_are_one_line_exit_2(
    bare: Path,
    corpus: Path,
    *,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    expected: str,
) -> None:
    out = tmp_path / "ids.npy"
    given = [a.format(bare=bare, corpus=corpus, out=out) for a in args]
    code, stdout, err = _run(capsys, *given)
    assert code == 2 and stdout == "" and err.count("\n") == 1, err
    assert expected.format(bare=bare) in err, err
    assert not out.exists()


@pytest.mark.parametrize("name", ["llama3", "qwen2", "qwen35", "nemo"])
def test_a_models_name_is_its_pattern(name: str, bare: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A Llama 3 user gives --pattern llama3, as the native scanner is named: the same ids as its regex
    # spelled out, and the native scanner (was: "'llama3' matches nothing", read as a regex).
    from bpe_studio.engine.pretokenize.patterns import MODEL_PATTERNS, scanner_name

    text = "Héllo wörld 12345 it's\n\n  日本語 x.:.:;"
    by_name = _run(capsys, "encode", "-t", bare, "--pattern", name, "--json", text)
    by_regex = _run(capsys, "encode", "-t", bare, "--pattern", MODEL_PATTERNS[name], "--json", text)
    assert by_name[0] == 0, by_name[2]
    assert by_name == by_regex
    assert json.loads(by_name[1]) == load(bare, pattern=MODEL_PATTERNS[name]).encode_ordinary(text)
    assert scanner_name(name) == name
    assert load(bare, pattern=name).encode_ordinary(text) == json.loads(by_name[1])


def test_the_missing_pattern_error_names_the_models_patterns(
    bare: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(capsys, "encode", "-t", bare, "hello")
    assert code == 2
    assert err.count("\n") == 1 and "llama3" in err
