"""``--pattern`` wherever the CLI loads a tokenizer: a bare ``.tiktoken`` file that is not one of OpenAI's is
refused (one line, exit 2, naming the option) until its pattern is given; OpenAI's files need none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bpe_studio.cli import main
from bpe_studio.engine import save
from bpe_studio.engine.formats.tiktoken_format import sidecar_path

from ..engine.reference_encoder import gpt2_tokenizer, trained_tokenizer

TEXT = "Hello, world! It's 2024 -- naïve café 日本語"


def _run(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def bare_cl100k(cs336_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cl100k-pattern tokenizer saved as a .tiktoken file, its sidecar removed."""
    path = save(
        trained_tokenizer(cs336_data, "cl100k"),
        tmp_path_factory.mktemp("bare") / "mine.tiktoken",
        format="tiktoken",
    )
    sidecar_path(path).unlink()
    return path


@pytest.fixture(scope="module")
def r50k(cs336_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = save(
        gpt2_tokenizer(cs336_data), tmp_path_factory.mktemp("r50k") / "r50k_base.tiktoken", format="tiktoken"
    )
    sidecar_path(path).unlink()
    return path


def test_encode_and_inspect_refuse_a_bare_file_until_given_a_pattern(
    bare_cl100k: Path, cs336_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for args in (("encode", "-t", bare_cl100k, TEXT), ("inspect", bare_cl100k)):
        code, out, err = _run(capsys, *args)
        assert code == 2 and out == ""
        assert err.startswith("bpe-studio: error: ") and err.count("\n") == 1, err
        assert str(bare_cl100k) in err and "--pattern gpt2|cl100k|o200k|llama3|qwen2|qwen35|nemo|REGEX" in err
    code, out, _ = _run(capsys, "encode", "-t", bare_cl100k, "--pattern", "cl100k", "--json", TEXT)
    assert code == 0 and json.loads(out) == trained_tokenizer(cs336_data, "cl100k").encode(TEXT)
    code, out, _ = _run(capsys, "inspect", bare_cl100k, "--pattern", "cl100k", "--json")
    assert code == 0 and json.loads(out)["pattern_preset"] == "cl100k"


def test_compare_names_the_side_that_needs_a_pattern(
    bare_cl100k: Path, r50k: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(capsys, "compare", r50k, bare_cl100k, "--text", TEXT)
    assert code == 2 and "--pattern-b" in err
    code, out, _ = _run(
        capsys, "compare", r50k, bare_cl100k, "--text", TEXT, "--pattern-b", "cl100k", "--json"
    )
    assert code == 0 and json.loads(out)["same_pattern"] is False


def test_decode_needs_no_pattern(
    bare_cl100k: Path, cs336_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = trained_tokenizer(cs336_data, "cl100k").encode(TEXT)
    code, out, _ = _run(capsys, "decode", "-t", bare_cl100k, *ids)
    assert code == 0 and out == TEXT + "\n"


def test_openai_files_need_no_pattern(r50k: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "encode", "-t", r50k, "Hello world<|endoftext|>")
    assert code == 0 and out == "15496 995 50256\n"
    code, out, _ = _run(capsys, "inspect", r50k, "--json")
    info = json.loads(out)
    assert info["pattern_preset"] == "gpt2" and info["merges"] == 50_000


def test_a_bad_pattern_is_one_line(r50k: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "encode", "-t", r50k, "--pattern", "(", "x")
    assert code == 2 and err.startswith("bpe-studio: error: ") and "pattern" in err and err.count("\n") == 1
