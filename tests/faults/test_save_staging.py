"""``save_tokenizer`` with a check under faults: whichever file operation fails (a staged write, keeping an
old file, a rename), the folder holds the old set or the new one, never a mix, and no staging folder or
temporary file is left."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bpe_studio.engine import FORMATS, Tokenizer, TrainConfig, load, train
from bpe_studio.engine.formats import atomic, sample_texts, save_tokenizer

TEXT = "".join(f"doc {i}: the cat sat on the mat, naïvely; {i * 7919 % 1000} dogs.\n" for i in range(300))


@pytest.fixture(scope="module")
def two_tokenizers(tmp_path_factory: pytest.TempPathFactory) -> tuple[Tokenizer, Tokenizer]:
    path = tmp_path_factory.mktemp("corpus") / "c.txt"
    path.write_text(TEXT, encoding="utf-8")
    small = Tokenizer.from_result(train(TrainConfig(inputs=[path], vocab_size=280, special_tokens=("<s>",))))
    big = Tokenizer.from_result(train(TrainConfig(inputs=[path], vocab_size=400, special_tokens=("<s>",))))
    return small, big


def _everything(folder: Path) -> dict[str, bytes | None]:
    """Every entry under ``folder``, hidden ones included (a folder maps to None)."""
    return {
        p.relative_to(folder).as_posix(): (p.read_bytes() if p.is_file() else None)
        for p in sorted(folder.rglob("*"))
    }


def _failing_at(step: int, monkeypatch: pytest.MonkeyPatch) -> Callable[[], int]:
    """Make the ``step``-th file operation (temporary write, keeping an old file, rename) fail as on a full
    disk; returns a function that tells how many operations were made."""
    calls = 0

    def counted(original: Callable[..., Any]) -> Callable[..., Any]:
        def operation(*args: Any, **kwargs: Any) -> Any:
            nonlocal calls
            calls += 1
            if calls == step:
                raise OSError(errno.ENOSPC, "No space left on device")
            return original(*args, **kwargs)

        return operation

    monkeypatch.setattr(atomic, "_write_temporary", counted(atomic._write_temporary))
    monkeypatch.setattr(atomic, "_keep_old", counted(atomic._keep_old))
    monkeypatch.setattr(os, "replace", counted(os.replace))
    return lambda: calls


def _target(folder: Path, fmt: str) -> Path:
    return (
        folder
        if fmt == "gpt2"
        else folder / {"studio": "t.json", "hf": "t-hf.json", "tiktoken": "t.tiktoken"}[fmt]
    )


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_failure_at_any_step_of_a_checked_save_leaves_the_old_set_or_the_new_one(
    two_tokenizers: tuple[Tokenizer, Tokenizer], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    small, big = two_tokenizers
    texts = sample_texts(big)
    reference = tmp_path / "reference"
    reference.mkdir()
    save_tokenizer(big, _target(reference, fmt), format=fmt, verify_texts=texts)
    new_files = _everything(reference)
    step = 1
    while True:
        folder = tmp_path / f"tok{step}"
        folder.mkdir()
        save_tokenizer(small, _target(folder, fmt), format=fmt)
        old_files = _everything(folder)
        with monkeypatch.context() as patched:
            operations = _failing_at(step, patched)
            try:
                save_tokenizer(big, _target(folder, fmt), format=fmt, verify_texts=texts)
                failed = False
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
                failed = True
            done = operations()
        now = _everything(folder)
        if failed:
            assert now == old_files, f"a failure at step {step} left a mixed or partial set, or staging files"
            assert load(_target(folder, fmt)).merges == small.merges
        else:
            assert now == new_files
            assert step > done, "every step was tried"
            break
        step += 1
    assert step > (6 if fmt in ("gpt2", "tiktoken") else 2)
