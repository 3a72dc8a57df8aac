"""``convert`` says what other libraries will do with files that cannot carry the tokenizer's pattern or
special tokens: ``gpt2`` (vocab.json + merges.txt: transformers and tokenizers apply GPT-2's regex and mark
no special tokens) and ``tiktoken`` (a rank file: tiktoken.Encoding needs pat_str and special_tokens); one
``bpe-studio: warning:`` line each, naming the file. ``hf`` and ``studio`` carry both: no such line."""

from __future__ import annotations

from pathlib import Path

import pytest

from bpe_studio.cli import main
from bpe_studio.engine import Tokenizer, save

from ..engine.reference_encoder import SPECIAL, trained_tokenizer


def _run(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("bpe-studio: warning: ")]


@pytest.fixture(scope="module")
def cl100k_file(cs336_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save(trained_tokenizer(cs336_data, "cl100k"), tmp_path_factory.mktemp("cl") / "t.json")


@pytest.fixture(scope="module")
def gpt2_file(cs336_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save(trained_tokenizer(cs336_data, "gpt2"), tmp_path_factory.mktemp("g") / "t.json")


def test_gpt2_target_warns_of_the_pattern_and_the_special_tokens(
    cl100k_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(capsys, "convert", cl100k_file, "--to", "gpt2", tmp_path / "out")
    assert code == 0, err
    lines = _warnings(err)
    assert lines == [
        f"bpe-studio: warning: {tmp_path / 'out'}: gpt2 files carry no pattern: transformers and tokenizers "
        "will split text with GPT-2's regex, not cl100k's, and encode differently; convert --to hf keeps the "
        "pattern",
        f"bpe-studio: warning: {tmp_path / 'out'}: gpt2 files do not mark special tokens: tokenizers will "
        f"encode {SPECIAL!r} and 1 more as ordinary text (transformers' GPT2Tokenizer knows only "
        "'<|endoftext|>'); convert --to hf keeps them",
    ]


def test_a_gpt2_pattern_without_special_tokens_needs_no_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = save(Tokenizer({i: bytes([i]) for i in range(256)}, []), tmp_path / "t.json")
    code, _, err = _run(capsys, "convert", source, "--to", "gpt2", tmp_path / "out")
    assert code == 0 and _warnings(err) == []


def test_a_custom_regex_is_named_as_such(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tok = Tokenizer({i: bytes([i]) for i in range(256)}, [], pattern=r"\w+|\s+|[^\w\s]+")
    source = save(tok, tmp_path / "t.json")
    code, _, err = _run(capsys, "convert", source, "--to", "gpt2", tmp_path / "out")
    assert code == 0 and len(_warnings(err)) == 1
    assert "with GPT-2's regex, not this tokenizer's own, and encode differently" in err


def test_tiktoken_target_warns_that_the_rank_file_needs_pat_str_and_special_tokens(
    gpt2_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "t.tiktoken"
    code, _, err = _run(capsys, "convert", gpt2_file, "--to", "tiktoken", target)
    assert code == 0, err
    assert _warnings(err) == [
        f"bpe-studio: warning: {target}: tiktoken rank files carry no pattern and no special tokens: "
        f"tiktoken.Encoding must be given pat_str (gpt2's regex) and special_tokens ({SPECIAL!r} and 1 "
        "more), which only the sidecar (.tiktoken.json) holds; without them text is split and encoded "
        "differently"
    ]


@pytest.mark.parametrize("fmt", ["hf", "studio"])
def test_hf_and_studio_carry_both(
    cl100k_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    code, _, err = _run(capsys, "convert", cl100k_file, "--to", fmt, tmp_path / "o.json")
    assert code == 0 and _warnings(err) == [], err
