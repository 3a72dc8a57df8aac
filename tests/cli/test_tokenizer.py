"""``bpe-studio encode``, ``decode``, ``convert``, ``inspect`` and ``train --format``."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from bpe_studio.cli import main
from bpe_studio.cli.encode import SEPARATOR
from bpe_studio.engine import FORMATS, Tokenizer, TrainConfig, load, save, train

from ..engine.reference_encoder import SPECIAL, gpt2_tokenizer, trained_tokenizer


@pytest.fixture(scope="module")
def studio_file(cs336_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save(trained_tokenizer(cs336_data, "gpt2"), tmp_path_factory.mktemp("tok") / "t.json")


@pytest.fixture(scope="module")
def gpt2_folder(cs336_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save(gpt2_tokenizer(cs336_data), tmp_path_factory.mktemp("gpt2"), format="gpt2")


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_help_lists_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert all(name in out for name in ("train", "encode", "decode", "convert", "inspect"))


# ---------------------------------------------------------------------------------------------------- encode


def test_encode_prints_ids(gpt2_folder: Path, cs336_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "encode", "--tokenizer", gpt2_folder, f"Hello world{SPECIAL}")
    assert code == 0 and out == "15496 995 50256\n"
    code, out, _ = _run(capsys, "encode", "-t", gpt2_folder, "--json", f"Hello world{SPECIAL}")
    assert json.loads(out) == [15496, 995, 50256]
    code, out, _ = _run(capsys, "encode", "-t", gpt2_folder, "--no-special", SPECIAL)
    assert [int(x) for x in out.split()] == gpt2_tokenizer(cs336_data).encode_ordinary(SPECIAL)


def test_encode_file_and_stdin(
    studio_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    tok = load(studio_file)
    text = "line one\r\nline two  \n\n" + SPECIAL + " the end" + " word" * 3000
    source = tmp_path / "in.txt"
    source.write_bytes(text.encode("utf-8"))  # "\r\n" kept as it is
    code, out, _ = _run(capsys, "encode", "-t", studio_file, "--file", source)
    assert code == 0 and [int(x) for x in out.split()] == tok.encode(text)
    monkeypatch.setattr("sys.stdin", io.StringIO("from stdin"))
    code, out, _ = _run(capsys, "encode", "-t", studio_file)
    assert [int(x) for x in out.split()] == tok.encode("from stdin")


def test_encode_show(gpt2_folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "encode", "-t", gpt2_folder, "--show", "--color", "never", "Hello world\t🙃")
    lines = out.splitlines()
    assert code == 0 and lines[0] == f"Hello{SEPARATOR} world{SEPARATOR}→{SEPARATOR}🙃"
    assert lines[1].startswith("6 tokens, 13 characters")
    code, out, _ = _run(capsys, "encode", "-t", gpt2_folder, "--show", "--color", "always", "Hi\n🙃")
    assert "\x1b[48;5;" in out and "\x1b[48;5;210m" in out  # the emoji's partial tokens have their own colour
    assert "↵\x1b[0m\n" in out  # a newline is shown, and still ends the line


def test_encode_errors(studio_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "encode", "-t", tmp_path / "missing.json", "x")
    assert code == 2 and "does not exist" in err
    code, _, err = _run(capsys, "encode", "-t", studio_file, "x", "--file", tmp_path / "f.txt")
    assert code == 2 and "not both" in err
    code, _, err = _run(capsys, "encode", "-t", studio_file, "--file", tmp_path / "f.txt")
    assert code == 2 and "does not exist" in err
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok \xff\xfe")
    code, _, err = _run(capsys, "encode", "-t", studio_file, "--file", bad)
    assert code == 2 and "UTF-8" in err
    broken = tmp_path / "broken.json"
    broken.write_text('{"format": "bpe-studio-tokenizer",', encoding="utf-8")
    code, _, err = _run(capsys, "encode", "-t", broken, "x")
    assert code == 2 and str(broken) in err and "line 1" in err


# ---------------------------------------------------------------------------------------------------- decode


def test_decode(gpt2_folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "decode", "-t", gpt2_folder, "15496", "995", "50256")
    assert code == 0 and out == f"Hello world{SPECIAL}\n"
    code, out, _ = _run(capsys, "decode", "-t", gpt2_folder, "[15496,", "995]", "-n")
    assert out == "Hello world"
    code, out, _ = _run(capsys, "decode", "-t", gpt2_folder, "8582", "247")
    assert out == "\ufffd\n"
    code, _, err = _run(capsys, "decode", "-t", gpt2_folder, "15496", "99999")
    assert code == 2 and "99999" in err and "not in this tokenizer's vocabulary" in err
    code, _, err = _run(capsys, "decode", "-t", gpt2_folder, "hello")
    assert code == 2 and "'hello' is not a token id" in err


def test_decode_bytes_and_stdin(
    gpt2_folder: Path, capfdbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["decode", "-t", str(gpt2_folder), "--bytes", "-n", "8582", "247"]) == 0
    assert capfdbinary.readouterr().out == b"\xf0\x9f\x99"
    monkeypatch.setattr("sys.stdin", io.StringIO("15496\n995\n"))
    assert main(["decode", "-t", str(gpt2_folder)]) == 0
    assert capfdbinary.readouterr().out == b"Hello world\n"


# ---------------------------------------------------------------------------------------------------- convert


@pytest.mark.parametrize("fmt", FORMATS)
def test_convert_checks_the_result(
    studio_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    target = tmp_path / ("out" if fmt == "gpt2" else f"out.{'tiktoken' if fmt == 'tiktoken' else 'json'}")
    code, out, err = _run(capsys, "convert", studio_file, "--to", fmt, target)
    assert code == 0, err
    assert f"to {fmt}" in out and "identical ids" in out
    if fmt == "hf":
        assert "in tokenizers" in out
    if fmt == "tiktoken":
        assert "in tiktoken" in out
    original = load(studio_file)
    converted = load(target)
    text = "Checking the converted file: it's fine! 123 🙃 " + SPECIAL
    assert converted.encode(text) == original.encode(text)


def test_convert_reports_formats_that_cannot_hold_the_tokenizer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"bc", 257: b"ab"}
    source = save(Tokenizer(vocab, [(b"a", b"b"), (b"b", b"c")]), tmp_path / "t.json")
    code, _, err = _run(capsys, "convert", source, "--to", "tiktoken", tmp_path / "t.tiktoken")
    assert code == 1 and "merge order" in err
    sample = tmp_path / "sample.txt"
    sample.write_text("abc abcbc", encoding="utf-8")
    code, _, err = _run(
        capsys, "convert", source, "--to", "hf", tmp_path / "t-hf.json", "--sample-file", sample
    )
    assert code == 0, err


# ---------------------------------------------------------------------------------------------------- inspect


def test_inspect(studio_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "inspect", studio_file, "--top", "3")
    assert code == 0
    assert "1,000 tokens" in out and "(studio)" in out and "gpt2 (preset)" in out
    assert f"'{SPECIAL}' = 998" in out and "longest tokens:" in out and "token lengths:" in out
    code, out, _ = _run(capsys, "inspect", studio_file, "--json")
    info = json.loads(out)
    tok = load(studio_file)
    assert info["vocab_size"] == 1000 and info["format"] == "studio" and info["pattern_preset"] == "gpt2"
    assert info["special_tokens"] == {SPECIAL: 998, SPECIAL + SPECIAL: 999}
    longest = info["longest_tokens"][0]
    assert longest["bytes"] == max(len(tok.token_bytes(i)) for i in range(998))
    assert sum(info["token_lengths"]["histogram"].values()) == 998


def test_inspect_lists_the_first_special_tokens_and_counts_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Mistral's tekken has 1,000 special tokens: one line of them all was unreadable; --json keeps them all.
    specials = [f"<SPECIAL_{n}>" for n in range(1000)]
    path = tmp_path / "many.json"
    save(Tokenizer({i: bytes([i]) for i in range(256)}, [], specials), path)
    code, out, _ = _run(capsys, "inspect", path)
    line = next(line for line in out.splitlines() if line.startswith("special tokens:"))
    assert code == 0 and "'<SPECIAL_0>' = 256" in line and line.endswith("… and 992 more")
    assert "<SPECIAL_8>" not in line and len(line) < 300
    code, out, _ = _run(capsys, "inspect", path, "--json")
    assert len(json.loads(out)["special_tokens"]) == 1000


# ---------------------------------------------------------------------------------------------------- train


@pytest.mark.parametrize("fmt", FORMATS)
def test_train_format(cs336_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    corpus = cs336_data / "tinystories_sample.txt"
    out_dir = tmp_path / "o"
    args = [
        "train",
        corpus,
        "--vocab-size",
        "300",
        "--special-token",
        SPECIAL,
        "--out",
        out_dir,
        "--format",
        fmt,
    ]
    code, out, err = _run(capsys, *args)
    assert code == 0, err
    expected = Tokenizer.from_result(
        train(TrainConfig(inputs=[corpus], vocab_size=300, special_tokens=(SPECIAL,), workers=1))
    )
    written = {
        "studio": "tokenizer.json",
        "hf": "tokenizer.json",
        "tiktoken": "tokenizer.tiktoken",
        "gpt2": "",
    }
    path = out_dir / written[fmt]
    assert f"wrote {path}" in out
    tok = load(path)
    text = corpus.read_text(encoding="utf-8")
    assert tok.encode(text) == expected.encode(text)
    assert dict(tok.vocab) == dict(expected.vocab)
