"""``bpe-studio train --extend`` and ``--superword-transition``: results, and mistakes refused in one line
(exit 2) before any work."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bpe_studio.cli import main
from bpe_studio.engine import TrainConfig, extend_base, load, train
from bpe_studio.engine.formats.named import GPT2_FOLDER

WORDS = [a + b + c for a in ("zq", "xv", "kj") for b in ("uu", "ee", "oi") for c in ("pt", "rk")]


def _corpus(path: Path) -> Path:
    path.write_text("<|endoftext|>".join(" ".join(WORDS) + f" line {i}\n" for i in range(40)), "utf-8")
    return path


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_extend_gpt2_writes_its_ids_and_the_new_tokens_after_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = _corpus(tmp_path / "c.txt")
    out = tmp_path / "o"
    code = main(["train", str(corpus), "--extend", "gpt2", "--vocab-size", "50280", "--out", str(out)])
    assert code == 0
    assert "extended a tokenizer of 50,000 merges: trained 50,280 tokens" in capsys.readouterr().out
    saved = load(out / "tokenizer.json")
    gpt2 = load("gpt2")
    assert all(saved.vocab[i] == token for i, token in gpt2.vocab.items())
    assert saved.special_tokens == {"<|endoftext|>": 50256}
    expected = train(TrainConfig(inputs=(corpus,), vocab_size=50280, extend=extend_base("gpt2")))
    assert saved.vocab == expected.vocab
    assert list(saved.merges) == expected.merges


def test_extend_mistakes_are_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = _corpus(tmp_path / "c.txt")
    out = str(tmp_path / "o")
    base = ["train", str(corpus), "--out", out]
    assert main([*base, "--extend", "gpt2", "--vocab-size", "50000"]) == 2
    assert "vocab_size: 50000 is not larger than the 50257 tokens" in _error(capsys)
    # Below the 256 bytes too, the message is about the tokenizer's size, not "at least 256 + 0".
    assert main([*base, "--extend", "gpt2", "--vocab-size", "100"]) == 2
    assert "vocab_size: 100 is not larger than the 50257 tokens" in _error(capsys)
    assert main([*base, "--extend", str(tmp_path / "missing.json"), "--vocab-size", "300"]) == 2
    assert "--extend: " in _error(capsys)
    assert main([*base, "--extend", "gpt2", "--pattern", "cl100k", "--vocab-size", "50300"]) == 2
    assert "--pattern: an --extend run pre-tokenizes with the tokenizer's own pattern" in _error(capsys)
    assert main([*base, "--extend", "gpt2", "--special-token", "<s>", "--vocab-size", "50300"]) == 2
    assert "special_tokens: an extend run keeps the tokenizer's special tokens" in _error(capsys)
    assert main([*base, "--superword-transition", "300", "--vocab-size", "300"]) == 2
    assert "superword_transition: 300 must be at least 256 and below vocab_size (300)" in _error(capsys)


def test_the_extended_tokenizer_is_never_written_over(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = _corpus(tmp_path / "c.txt")
    folder = tmp_path / "gpt2"
    shutil.copytree(GPT2_FOLDER, folder)
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    options = ["--vocab-size", "50300", "--format", "gpt2", "--out", str(folder)]
    code = main(["train", str(corpus), "--extend", str(folder), *options])
    assert code == 2
    assert "--extend" in _error(capsys)
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} == before


def test_superword_transition_trains_superwords_after_t(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = _corpus(tmp_path / "c.txt")
    out = tmp_path / "o"
    options = ["--superword-transition", "330", "--format", "hf", "--special-token", "<|endoftext|>"]
    code = main(["train", str(corpus), "--vocab-size", "400", *options, "--out", str(out)])
    assert code == 0
    assert "superwords after merge 73:" in capsys.readouterr().out
    saved = load(out / "tokenizer.json")
    assert saved.special_tokens == {"<|endoftext|>": max(saved.vocab)}  # the last id, as in every run
    assert any(b" " in token.strip(b" ") for token in saved.vocab.values())  # a token across a space


def test_eval_reports_a_superword_tokenizer_against_plain_bpe_of_the_same_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = _corpus(tmp_path / "c.txt")
    common = ["--vocab-size", "360", "--format", "hf", "--special-token", "<|endoftext|>", "-q"]
    assert main(["train", str(corpus), *common, "--out", str(tmp_path / "plain")]) == 0
    superword = ["--superword-transition", "300", "--out", str(tmp_path / "super")]
    assert main(["train", str(corpus), *common, *superword]) == 0
    capsys.readouterr()
    tokenizers = [str(tmp_path / name / "tokenizer.json") for name in ("plain", "super")]
    assert main(["eval", "-t", tokenizers[0], "-t", tokenizers[1], str(corpus), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    text = corpus.read_text("utf-8")
    for row, path in zip(rows, tokenizers, strict=True):
        assert row["tokens"] == len(load(path).encode_ordinary(text))
    assert rows[1]["ratio"] < 1  # superwords: fewer tokens than plain BPE of the same vocabulary size
    # The rows say which tokenizer has superwords; the table names it so.
    assert [row["superwords"] for row in rows] == [False, True]
    assert main(["eval", "-t", tokenizers[0], "-t", tokenizers[1], str(corpus)]) == 0
    table = capsys.readouterr().out.splitlines()
    assert "(superwords)" in table[2] and "(superwords)" not in table[1]
