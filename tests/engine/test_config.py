"""TrainConfig validates every field with a ValueError that names the field and the fix."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bpe_studio.engine import PATTERNS, TrainConfig, compile_pattern


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "c.txt"
    path.write_text("hello world", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("changes", "field", "hint"),
    [
        ({"vocab_size": 255}, "vocab_size", "at least 256"),
        ({"vocab_size": 256, "special_tokens": ("<s>",)}, "vocab_size", "= 257"),
        ({"vocab_size": "300"}, "vocab_size", "not an integer"),
        ({"vocab_size": 0x110001}, "vocab_size", "too large"),
        ({"special_tokens": ("",)}, "special_tokens", "empty string"),
        ({"special_tokens": ("<s>", "<s>")}, "special_tokens", "listed twice"),
        ({"special_tokens": "<s>"}, "special_tokens", "not a single string"),
        ({"pattern": "(unclosed"}, "pattern", "does not compile"),
        ({"pattern": r"a*"}, "pattern", "empty string"),
        ({"pattern": r"\s*|\w+"}, "pattern", "empty string"),
        ({"pattern": ""}, "pattern", "preset name"),
        ({"workers": 0}, "workers", "positive integer"),
        ({"min_frequency": 0}, "min_frequency", "at least 1"),
        ({"max_token_length": 1}, "max_token_length", "at least 2"),
        ({"chunk_size": 0}, "chunk_size", "positive"),
        ({"invalid_utf8": "ignore"}, "invalid_utf8", "'error' or 'replace'"),
    ],
)
def test_invalid_values_name_the_field_and_the_fix(
    corpus: Path, changes: dict, field: str, hint: str
) -> None:
    options = {"inputs": [corpus], "vocab_size": 300, **changes}
    with pytest.raises(ValueError, match=field) as info:
        TrainConfig(**options)
    assert hint in str(info.value)
    assert str(info.value).startswith(f"{field}:")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"inputs: .*nope\.txt does not exist"):
        TrainConfig(inputs=[tmp_path / "nope.txt"], vocab_size=300)


def test_folder_instead_of_file(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a regular file"):
        TrainConfig(inputs=[tmp_path], vocab_size=300)


def test_unreadable_file(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Root (as in CI) can read any file whatever its mode, so the permission check is simulated.
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    with pytest.raises(ValueError, match="not readable"):
        TrainConfig(inputs=[corpus], vocab_size=300)


def test_empty_corpus(tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match="inputs: the corpus is empty"):
        TrainConfig(inputs=[empty], vocab_size=300)


def test_no_inputs() -> None:
    with pytest.raises(ValueError, match="inputs: no corpus file"):
        TrainConfig(inputs=[], vocab_size=300)


def test_defaults_and_normalisation(corpus: Path) -> None:
    cfg = TrainConfig(inputs=str(corpus), vocab_size=300, special_tokens=["<|endoftext|>"])  # type: ignore[arg-type]
    assert cfg.inputs == (corpus,)
    assert cfg.special_tokens == ("<|endoftext|>",)
    assert cfg.pattern == "gpt2" and cfg.pattern_regex == PATTERNS["gpt2"]
    assert cfg.effective_workers >= 1
    with pytest.raises(AttributeError):
        cfg.vocab_size = 5  # type: ignore[misc]
    assert cfg.replace(vocab_size=400).vocab_size == 400


def test_presets_compile() -> None:
    for name in PATTERNS:
        assert compile_pattern(name).findall("Hello world's 123!") != []
    assert compile_pattern(r"\w+|\s+").findall("a b") == ["a", " ", "b"]
