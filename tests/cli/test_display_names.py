"""Tokenizers are shown by a name that says which, never a bare ``tokenizer.json``: a file named for its
format by its folder (``out/tokenizer.json`` -> ``out``), two folders of the same name by their parents
too (``x/out``, ``y/out``), a Hugging Face cache file by its model id; in ``eval`` and ``compare``, with the
path kept in JSON (and CSV) beside the name."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from bpe_studio.cli import main
from bpe_studio.engine import save
from bpe_studio.engine.formats import display_name, display_names

from ..engine.reference_encoder import trained_tokenizer


def _run(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def exports(cs336_data: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Three exports named tokenizer.json (hf, studio, hf), in alpha/, beta/ and x/out/; and y/out/."""
    root = tmp_path_factory.mktemp("exports")
    paths = []
    for folder, pattern, fmt in (
        ("alpha", "gpt2", "hf"),
        ("beta", "cl100k", "studio"),
        ("x/out", "o200k", "hf"),
        ("y/out", "gpt2", "studio"),
    ):
        (root / folder).mkdir(parents=True)
        paths.append(
            save(trained_tokenizer(cs336_data, pattern), root / folder / "tokenizer.json", format=fmt)
        )
    return paths


def test_names(tmp_path: Path) -> None:
    assert display_name("out/tokenizer.json") == "out"
    assert display_name("out/vocab.json") == display_name("out/merges.txt") == "out"
    assert display_name("out/tokenizer.tiktoken") == "out"
    assert (
        display_name("out/mine.tiktoken") == "mine.tiktoken" and display_name("cl100k_base") == "cl100k_base"
    )
    cache = tmp_path / "hub" / "models--EleutherAI--pythia-160m" / "snapshots" / "50f5173" / "tokenizer.json"
    assert display_name(cache) == "EleutherAI/pythia-160m"
    (tmp_path / "model").mkdir()
    assert display_name(tmp_path / "model") == "model"
    same = ["a/out/tokenizer.json", "b/out/tokenizer.json", "a/out/tokenizer.json", "c/tokenizer.json"]
    assert display_names(same) == ["a/out", "b/out", "a/out", "c"]


def test_eval_rows_show_folder_names(
    exports: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat " * 50, encoding="utf-8")
    base = ["eval", *(a for p in exports for a in ("-t", p)), corpus]
    code, out, err = _run(capsys, *base)
    assert code == 0, err
    shown = [line.split()[1] for line in out.splitlines()[1:]]
    assert shown == ["alpha", "beta", "x/out", "y/out"]
    assert "tokenizer.json" not in out
    code, out, _ = _run(capsys, *base, "--json")
    rows = json.loads(out)
    assert [(r["name"], r["tokenizer"]) for r in rows] == list(
        zip(["alpha", "beta", "x/out", "y/out"], map(str, exports), strict=True)
    )
    code, out, _ = _run(capsys, *base, "--csv")
    assert [r["name"] for r in csv.DictReader(io.StringIO(out))] == ["alpha", "beta", "x/out", "y/out"]


def test_compare_names_each_side(exports: list[Path], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "compare", exports[0], exports[1], "--text", "Hello there")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[1].startswith(f"A: alpha ({exports[0]}, hf, ")
    assert lines[2].startswith(f"B: beta ({exports[1]}, studio, ")
    code, out, _ = _run(capsys, "compare", exports[2], exports[3], "--text", "Hi", "--json")
    found = json.loads(out)
    assert (found["a"]["name"], found["b"]["name"]) == ("x/out", "y/out")
    assert found["a"]["path"] == str(exports[2])
