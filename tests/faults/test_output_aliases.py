"""No output may be an input: ``--out`` files, ``--counts-out``, ``--checkpoint`` and ``convert``'s target are
refused (exit 2, one line naming both files) when they are an input, also through symlinks and hard links,
before any work starts; the input is left byte for byte as it was."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_studio.cli import main
from bpe_studio.engine import TrainConfig, preflight, save, train
from bpe_studio.engine.training.preflight import same_file

TEXT = "".join(f"doc {i}: the cat sat on the mat.\n" for i in range(200))


def _corpus(folder: Path) -> Path:
    path = folder / "corpus.txt"
    path.write_text(TEXT, encoding="utf-8")
    return path


def _same_path(corpus: Path, work: Path) -> Path:
    return corpus


def _dotted(corpus: Path, work: Path) -> Path:
    sub = corpus.parent / "sub"
    sub.mkdir(exist_ok=True)
    return sub / ".." / "." / corpus.name


def _symlink(corpus: Path, work: Path) -> Path:
    link = work / "link.txt"
    link.symlink_to(corpus)
    return link


def _symlinked_folder(corpus: Path, work: Path) -> Path:
    folder = work / "alias-folder"
    folder.symlink_to(corpus.parent, target_is_directory=True)
    return folder / corpus.name


def _hard_link(corpus: Path, work: Path) -> Path:
    link = work / "hard.txt"
    os.link(corpus, link)
    return link


SPELLINGS: dict[str, Callable[[Path, Path], Path]] = {
    "same path": _same_path,
    "dotted path": _dotted,
    "symlink": _symlink,
    "symlinked folder": _symlinked_folder,
    "hard link": _hard_link,
}


def _error_line(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("bpe-studio: error: ") and captured.err.count("\n") == 1, captured.err
    assert "Traceback" not in captured.err
    return captured.err


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
@pytest.mark.parametrize("option", ["--checkpoint", "--counts-out"])
def test_train_refuses_an_output_that_is_the_corpus(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, spelling: str
) -> None:
    corpus = _corpus(tmp_path)
    alias = SPELLINGS[spelling](corpus, tmp_path)
    out = tmp_path / "out"
    code = main(["train", str(corpus), "--vocab-size", "300", "--progress", "none", option, str(alias),
                 "--out", str(out)])  # fmt: skip
    assert code == 2
    err = _error_line(capsys)
    assert str(alias) in err and str(corpus) in err and "the same file" in err
    assert corpus.read_text(encoding="utf-8") == TEXT
    assert not out.exists(), "the run started although an output was the corpus"


@pytest.mark.parametrize("spelling", ["symlink", "hard link"])
@pytest.mark.parametrize("fmt", ["studio", "hf", "tiktoken", "gpt2"])
def test_train_refuses_a_corpus_in_place_of_an_out_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], spelling: str, fmt: str
) -> None:
    # The corpus sits in --out under the name the format writes: the save would replace it.
    source = _corpus(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    name = {"studio": "tokenizer.json", "hf": "tokenizer.json", "tiktoken": "tokenizer.tiktoken",
            "gpt2": "merges.txt"}[fmt]  # fmt: skip
    alias = out / name
    if spelling == "symlink":
        alias.symlink_to(source)
    else:
        os.link(source, alias)
    code = main(["train", str(source), "--vocab-size", "300", "--progress", "none", "--format", fmt,
                 "--out", str(out)])  # fmt: skip
    assert code == 2
    err = _error_line(capsys)
    assert f"--out: {alias} is the input corpus {source}" in err
    assert source.read_text(encoding="utf-8") == TEXT


def test_train_refuses_the_corpus_as_the_out_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = _corpus(tmp_path)
    assert main(["train", str(corpus), "--vocab-size", "300", "--out", str(corpus)]) == 2
    assert f"--out: {corpus} is a file" in _error_line(capsys)
    assert corpus.read_text(encoding="utf-8") == TEXT


def test_outputs_may_not_overwrite_each_other(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = _corpus(tmp_path)
    same = tmp_path / "x.bin"
    args = ["train", str(corpus), "--vocab-size", "300", "--out", str(tmp_path / "o")]
    assert main([*args, "--counts-out", str(same), "--checkpoint", str(same)]) == 2
    assert "give each output its own file" in _error_line(capsys)
    assert main([*args, "--format", "hf", "--counts-out", str(tmp_path / "o" / "tokenizer.json")]) == 2
    assert "--out:" in _error_line(capsys)
    assert not same.exists() and not (tmp_path / "o").exists()


def test_counts_in_is_an_input_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = _corpus(tmp_path)
    counts = tmp_path / "c.counts"
    train(TrainConfig(inputs=[corpus], vocab_size=260, counts_out=counts))
    before = counts.read_bytes()
    link = tmp_path / "c-link.counts"
    link.symlink_to(counts)
    code = main(["train", "--counts-in", str(counts), "--vocab-size", "300", "--counts-out", str(link),
                 "--out", str(tmp_path / "o")])  # fmt: skip
    assert code == 2
    assert "the counts file (counts_in)" in _error_line(capsys)
    assert counts.read_bytes() == before


def test_a_checkpoint_may_update_the_checkpoint_it_resumes(tmp_path: Path) -> None:
    # Documented: --resume X --checkpoint X keeps one checkpoint file up to date.
    corpus = _corpus(tmp_path)
    ckpt = tmp_path / "run.ckpt"
    config = TrainConfig(inputs=[corpus], vocab_size=280, checkpoint=ckpt)
    train(config)
    result = train(config.replace(vocab_size=300, resume=ckpt))
    assert result.merges == train(TrainConfig(inputs=[corpus], vocab_size=300)).merges


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_convert_refuses_its_source_as_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], spelling: str
) -> None:
    corpus = _corpus(tmp_path)
    source = tmp_path / "tok.json"
    save(train_tokenizer(corpus), source)
    before = source.read_bytes()
    alias = SPELLINGS[spelling](source, tmp_path)
    assert main(["convert", str(source), "--to", "hf", str(alias)]) == 2
    err = _error_line(capsys)
    assert "OUTPUT:" in err and str(alias) in err and str(source) in err and "the same file" in err
    assert source.read_bytes() == before


@pytest.mark.parametrize(("fmt", "read"), [("gpt2", "vocab.json"), ("tiktoken", "tokenizer.tiktoken.json")])
def test_convert_refuses_to_write_over_the_files_it_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str, read: str
) -> None:
    # A GPT-2 folder into itself; a .tiktoken's sidecar named as the target of another .tiktoken.
    folder = tmp_path / "tok"
    folder.mkdir()
    save(train_tokenizer(_corpus(tmp_path)), folder, format=fmt)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    target = folder if fmt == "gpt2" else folder / "tokenizer.tiktoken.json"
    assert main(["convert", str(folder), "--to", fmt, str(target)]) == 2
    assert f"the input tokenizer file {folder / read}" in _error_line(capsys)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def train_tokenizer(corpus: Path):  # type: ignore[no-untyped-def]
    from bpe_studio.engine import Tokenizer

    return Tokenizer.from_result(train(TrainConfig(inputs=[corpus], vocab_size=280)))


# A class of spellings: whatever way an output names the corpus, preflight refuses it and never writes.


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    steps=st.lists(st.sampled_from(sorted(SPELLINGS)), min_size=1, max_size=3),
    field=st.sampled_from(["counts_out", "checkpoint"]),
    absolute=st.booleans(),
)
def test_any_spelling_of_the_corpus_is_refused(
    tmp_path_factory: pytest.TempPathFactory, steps: list[str], field: str, absolute: bool
) -> None:
    work = tmp_path_factory.mktemp("alias")
    corpus = _corpus(work)
    alias = corpus
    for i, step in enumerate(steps):
        nested = work / f"step{i}"
        nested.mkdir()
        alias = SPELLINGS[step](alias, nested)
    if not absolute:
        alias = Path(os.path.relpath(alias))
    assert same_file(alias, corpus)
    config = TrainConfig(inputs=[corpus], vocab_size=300, **{field: alias})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=rf"^{field}: .* is the input corpus .*\(the same file\)"):
        preflight(config)
    assert corpus.read_text(encoding="utf-8") == TEXT


def test_different_files_are_not_the_same(tmp_path: Path) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("same bytes")
    b.write_text("same bytes")
    assert not same_file(a, b)
    assert not same_file(a, tmp_path / "missing.txt")
    assert same_file(tmp_path / "missing.txt", tmp_path / "x" / ".." / "missing.txt")
