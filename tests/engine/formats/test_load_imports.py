"""Opening a tokenizer file and encoding ASCII in a fresh process imports no more than it needs: not the
``regex`` module (7 ms of a 40-200 ms load, issue 20), which is imported when a custom pattern is compiled,
a text holds a character beyond ASCII, or a Python pre-tokenizer runs."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from bpe_studio.engine import Tokenizer, native
from bpe_studio.engine.formats import save
from tests.engine.backends import needs_native
from tests.engine.formats.test_sentencepiece_native import _field
from tests.fresh_python import printed_by_isolated

_PROBE = (
    "import sys; from bpe_studio.engine import load; t = load(sys.argv[1]); "
    "assert t.decode(t.encode('x y')) == 'x y'; print('regex' in sys.modules)"
)


def _imports_regex(path: Path) -> bool:
    """Whether opening ``path`` and encoding ASCII imports ``regex``, in a fresh ``python -I``."""
    return printed_by_isolated(_PROBE, str(path)) == ["True"]


def _model(path: Path) -> Path:
    """A SentencePiece BPE ``.model`` with byte fallback: the 256 byte pieces, then x, y, ▁ and ▁y."""
    pieces = [(f"<0x{b:02X}>", 0.0, 6) for b in range(256)]
    pieces += [("x", -1.0, 1), ("y", -2.0, 1), ("▁", -3.0, 1), ("▁y", -4.0, 1)]
    data = b"".join(
        _field(1, 2, _field(1, 2, t.encode()) + _field(2, 5, struct.pack("<f", s)) + _field(3, 0, k))
        for t, s, k in pieces
    )
    data += _field(2, 2, _field(3, 0, 2) + _field(35, 0, 1))
    data += _field(3, 2, _field(1, 2, b"identity") + _field(4, 0, 0))
    path.write_bytes(data)
    return path


@needs_native
@pytest.mark.parametrize("kind", ["tokenizer.json", ".model"])
def test_opening_a_file_and_encoding_ascii_does_not_import_regex(kind: str, tmp_path: Path) -> None:
    assert native.built()
    if kind == ".model":
        path = _model(tmp_path / "tokenizer.model")
    else:
        vocab = {i: bytes([i]) for i in range(256)} | {256: b" y"}
        path = save(
            Tokenizer(vocab, [(b" ", b"y")], pattern="gpt2"), tmp_path / "tokenizer.json", format="hf"
        )
    assert not _imports_regex(path)


def test_the_ascii_class_table_is_the_one_regex_makes() -> None:
    assert native._ascii_classes() == native._class_table(128)


@needs_native
def test_inspect_does_not_import_regex(tmp_path: Path) -> None:
    vocab = {i: bytes([i]) for i in range(256)} | {256: b" y"}
    path = save(Tokenizer(vocab, [(b" ", b"y")], pattern="gpt2"), tmp_path / "tokenizer.json", format="hf")
    probe = (
        "import sys; from bpe_studio.cli import main; code = main(['inspect', sys.argv[1]]); "
        "print('regex' in sys.modules, code, file=sys.stderr)"
    )
    found = subprocess.run(
        [sys.executable, "-I", "-c", probe, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        cwd=Path(__file__).resolve().parents[3],
        env=os.environ | {native.PURE_ENV: "0"},  # (the native kernel's path, whatever the suite runs)
    )
    assert found.stderr.strip().splitlines()[-1] == "False 0", found.stderr


# Modules that only writing (formats/atomic.py, saving.py, write_plan.py's probe), a digest (a rank file's
# or a sidecar's), a name or a download need: 4-8 ms of a fresh process that opens a file.
NOT_FOR_OPENING = (
    "tempfile",
    "shutil",
    "hashlib",
    "bz2",
    "lzma",
    "bpe_studio.engine.formats.hub",
    "bpe_studio.engine.formats.named",
)


@needs_native
@pytest.mark.parametrize("kind", ["tokenizer.json", ".model"])
def test_opening_a_file_imports_nothing_for_writing_or_names(kind: str, tmp_path: Path) -> None:
    if kind == ".model":
        path = _model(tmp_path / "tokenizer.model")
    else:
        vocab = {i: bytes([i]) for i in range(256)} | {256: b" y"}
        path = save(
            Tokenizer(vocab, [(b" ", b"y")], pattern="gpt2"), tmp_path / "tokenizer.json", format="hf"
        )
    probe = (
        "import sys; from bpe_studio.engine import load; load(sys.argv[1]).encode('x y'); "
        f"print(' '.join(m for m in {NOT_FOR_OPENING!r} if m in sys.modules))"
    )
    assert printed_by_isolated(probe, str(path)) == []


# What opening any file must leave out (issue 20: a fresh process's load within the reference library's
# time): ``dataclasses`` imports ``inspect``, ``ast``, ``dis`` and ``tokenize`` (5-6 ms), the writers and the
# training config import ``dataclasses``, and the other formats' modules are read only for their files.
NOT_FOR_ANY_FILE = (
    "dataclasses",
    "numbers",  # (only a fault's message in decode needs it)
    "inspect",
    "ast",
    "argparse",
    "regex",
    "bpe_studio.engine.write_plan",
    "bpe_studio.engine.config",
    "bpe_studio.engine.corpus.plan",
    "bpe_studio.engine.formats.saving",
    "bpe_studio.engine.formats.gpt2",
    "bpe_studio.engine.formats.tekken",
    "bpe_studio.engine.formats.tiktoken_format",
)
# A ``.model`` is protobuf: no JSON parser, and no JSON format's module.
NOT_FOR_A_MODEL = (
    "json",
    "bpe_studio.engine.formats.atomic",
    "bpe_studio.engine.formats.hf",
    "bpe_studio.engine.formats.studio",
)


@needs_native
@pytest.mark.parametrize("kind", ["tokenizer.json", ".model", "studio", "gpt2"])
def test_opening_a_file_imports_no_dataclasses_and_no_other_format(kind: str, tmp_path: Path) -> None:
    # (A .tiktoken file is left out: tiktoken_format.py still defines a dataclass.)
    tokenizer = Tokenizer({i: bytes([i]) for i in range(256)} | {256: b" y"}, [(b" ", b"y")], pattern="gpt2")
    unwanted = NOT_FOR_ANY_FILE
    if kind == ".model":
        path = _model(tmp_path / "tokenizer.model")
        unwanted = NOT_FOR_ANY_FILE + NOT_FOR_A_MODEL
    elif kind == "gpt2":
        path = save(tokenizer, tmp_path / "gpt2", format="gpt2")
        unwanted = tuple(m for m in NOT_FOR_ANY_FILE if m != "bpe_studio.engine.formats.gpt2")
    else:
        path = save(tokenizer, tmp_path / f"{kind}.json", format="hf" if kind == "tokenizer.json" else kind)
    probe = (
        "import sys; from bpe_studio.engine import load; load(sys.argv[1]).encode('x y'); "
        f"print(' '.join(m for m in {unwanted!r} if m in sys.modules))"
    )
    assert printed_by_isolated(probe, str(path)) == []


@needs_native
def test_opening_a_rank_file_imports_no_dataclasses_and_does_not_hash_it(tmp_path: Path) -> None:
    # A bare .tiktoken file that is not one of OpenAI's (theirs begin with rank 0, '!'): no hashlib for a
    # digest, and tiktoken_format.py's KnownEncoding is no dataclass; no normalizer pipeline either.
    tokenizer = Tokenizer({i: bytes([i]) for i in range(256)} | {256: b" y"}, [(b" ", b"y")], pattern="gpt2")
    path = save(tokenizer, tmp_path / "t.tiktoken", format="tiktoken")
    for sidecar in tmp_path.glob("*.json"):
        sidecar.unlink()
    leaner = ("bpe_studio.engine.formats.tiktoken_format",)
    unwanted = tuple(m for m in NOT_FOR_ANY_FILE if m not in leaner) + NOT_FOR_OPENING
    unwanted += ("bpe_studio.engine.pretokenize.hf", "json")  # (a pipeline; gpt2.py's sidecar reader)
    probe = (
        "import sys; from bpe_studio.engine import load; load(sys.argv[1], pattern='gpt2').encode('x y'); "
        f"print(' '.join(m for m in {unwanted!r} if m in sys.modules))"
    )
    assert printed_by_isolated(probe, str(path)) == []
