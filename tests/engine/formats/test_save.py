"""The one save (``engine.formats.saving``): every format written, loaded back and checked before it is
published; a file that does not load back identically is an error and leaves nothing behind; one training
record with nothing of the machine or the clock in it."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from bpe_studio.engine import (
    FORMATS,
    FormatError,
    FormatWarning,
    Template,
    Tokenizer,
    TrainConfig,
    load,
    train,
)
from bpe_studio.engine.formats import (
    SaveReport,
    VerificationError,
    sample_texts,
    save_result,
    save_tokenizer,
    saving,
    training_record,
)

SPECIAL = "<|endoftext|>"
TEXT = "the cat sat on the mat; the cat ate the rat. " * 40 + SPECIAL + "naïve café 🙃 12345\n" * 20


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    path.write_text(TEXT, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def config(corpus: Path) -> TrainConfig:
    return TrainConfig(inputs=(corpus,), vocab_size=300, special_tokens=(SPECIAL,), workers=1)


@pytest.fixture(scope="module")
def tok(config: TrainConfig) -> Tokenizer:
    return Tokenizer.from_result(train(config))


def _target(folder: Path, fmt: str) -> Path:
    return folder / {"studio": "t.json", "hf": "t-hf.json", "tiktoken": "t.tiktoken", "gpt2": "t-gpt2"}[fmt]


def _everything(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_is_checked_and_published(tok: Tokenizer, tmp_path: Path, fmt: str) -> None:
    texts = sample_texts(tok, "extra text: the cat 🙃")
    report = save_tokenizer(tok, _target(tmp_path, fmt), format=fmt, verify_texts=texts)
    assert isinstance(report, SaveReport)
    assert report.path == _target(tmp_path, fmt) and report.format == fmt
    assert report.checked_characters == sum(len(t) for t in texts)
    assert report.checked_in[0] == "bpe_studio"
    expected_names = {
        "studio": ["t.json"],
        "hf": ["t-hf.json"],
        "tiktoken": ["t.tiktoken", "t.tiktoken.json"],
        "gpt2": ["t-gpt2/vocab.json", "t-gpt2/merges.txt", "t-gpt2/bpe_studio.json"],
    }[fmt]
    assert [f.relative_to(tmp_path).as_posix() for f in report.files] == expected_names
    # Only the set itself: the staging folder is gone.
    assert sorted(_everything(tmp_path)) == sorted(expected_names)
    again = load(report.path)
    for text in texts:
        assert again.encode(text) == tok.encode(text)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_file_that_loads_back_differently_is_an_error_and_nothing_changes(
    tok: Tokenizer, tmp_path: Path, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = Tokenizer({i: bytes([i]) for i in range(256)}, [], {SPECIAL: 256})  # no merges at all
    # An older set (another tokenizer) is already there: a failed save must leave it as it was.
    save_tokenizer(other, _target(tmp_path, fmt), format=fmt)
    before = _everything(tmp_path)

    def wrong_load(path: Any, **kwargs: Any) -> Tokenizer:
        return other

    monkeypatch.setattr(saving, "load", wrong_load)
    with pytest.raises(VerificationError) as caught:
        save_tokenizer(tok, _target(tmp_path, fmt), format=fmt, verify_texts=sample_texts(tok))
    message = str(caught.value)
    assert str(_target(tmp_path, fmt)) in message and ".bpe-studio-save-" not in message
    assert "encodes the sample text differently" in message and "first difference at token" in message
    assert "choose another format" in message  # how to fix it
    assert _everything(tmp_path) == before  # the old set, byte for byte; no staging folder left


def test_a_file_that_does_not_load_leaves_no_new_folder(
    tok: Tokenizer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_load(path: Any, **kwargs: Any) -> Tokenizer:
        raise FormatError(f"{path}: line 1: broken")

    monkeypatch.setattr(saving, "load", broken_load)
    with pytest.raises(VerificationError, match="does not load back"):
        save_tokenizer(tok, tmp_path / "new-folder", format="gpt2", verify_texts=["the cat"])
    assert list(tmp_path.iterdir()) == []


def test_the_check_in_tiktoken_runs_when_installed(tok: Tokenizer, tmp_path: Path) -> None:
    pytest.importorskip("tiktoken")
    report = save_tokenizer(tok, tmp_path / "t.tiktoken", format="tiktoken", verify_texts=["the cat"])
    assert report.checked_in == ("bpe_studio", "tiktoken")


@pytest.mark.parametrize("fmt", ["gpt2", "tiktoken"])
def test_a_dropped_template_is_expected_not_a_mismatch(tmp_path: Path, fmt: str) -> None:
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"he", 257: b"ll"}
    tok = Tokenizer(
        vocab, [(b"h", b"e"), (b"l", b"l")], {"<s>": 300, "</s>": 301}, template=Template((300,), (301,))
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FormatWarning)
        report = save_tokenizer(tok, _target(tmp_path, fmt), format=fmt, verify_texts=["hello <s> world"])
    assert load(report.path).template is None


def test_the_training_record_is_the_same_for_two_runs(config: TrainConfig, tmp_path: Path) -> None:
    first, second = train(config), train(config.replace(workers=2))
    record = training_record(first, config)
    assert record == training_record(second, config)
    assert record["pattern"] == config.pattern and record["special_tokens"] == [SPECIAL]
    assert record["merge_counts"] == first.merge_counts and "timings" not in record
    a = save_result(first, tmp_path / "a.json", config=config)
    b = save_result(second, tmp_path / "b.json", config=config)
    assert a.read_bytes() == b.read_bytes()
    assert json.loads(a.read_text(encoding="utf-8"))["training"] == record


@pytest.mark.parametrize("pattern", ["gpt2", r"\w+|\s+|[^\w\s]+"])
def test_a_studio_result_is_written_without_a_tokenizer_and_the_same_bytes(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pattern: str
) -> None:
    config = TrainConfig(
        inputs=(corpus,), vocab_size=300, special_tokens=(SPECIAL, "<|pad|>"), pattern=pattern, workers=1
    )
    result = train(config)
    slow = save_tokenizer(
        Tokenizer.from_result(result), tmp_path / "slow.json", training=training_record(result, config)
    ).path

    def no_tokenizer(*args: object, **kwargs: object) -> None:
        raise AssertionError("save_result built a Tokenizer to write a studio file")

    # Building one derived every merge's ids only to write the file: 15-30 ms of a CLI run (issue 22).
    monkeypatch.setattr(Tokenizer, "__init__", no_tokenizer)
    (tmp_path / "out").mkdir()
    fast = save_result(result, tmp_path / "out", config=config)
    assert fast == tmp_path / "out" / "tokenizer.json"
    assert fast.read_bytes() == slow.read_bytes()
