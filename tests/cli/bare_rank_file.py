"""Shared by the CLI tests of bare ``.tiktoken`` files: a rank file with no sidecar (so no pattern and no
special tokens, as Llama 3's), and running the CLI in this process with its exit code and output."""

from __future__ import annotations

from pathlib import Path

import pytest

from bpe_studio.cli import main
from bpe_studio.engine import Tokenizer, save
from bpe_studio.engine.formats.tiktoken_format import sidecar_path

from ..engine.reference_encoder import trained_tokenizer


def run_cli(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    """``bpe-studio ARGS`` here: its exit code, standard output and standard error."""
    try:
        code = main([str(a) for a in args])
    except SystemExit as exc:  # argparse's own errors (a malformed option value)
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def ordinary(cs336_data: Path) -> Tokenizer:
    """The ordinary tokens of a cl100k-pattern tokenizer (no special tokens), as a bare rank file holds."""
    tok = trained_tokenizer(cs336_data, "cl100k")
    specials = set(tok.special_tokens.values())
    vocab = {i: t for i, t in tok.vocab.items() if i not in specials}
    return Tokenizer(vocab, tok.merges, pattern="cl100k", ignore_merges=True)


@pytest.fixture(scope="module")
def bare(ordinary: Tokenizer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """That tokenizer as a ``.tiktoken`` file without its sidecar."""
    path = save(ordinary, tmp_path_factory.mktemp("bare") / "llama.tiktoken", format="tiktoken")
    sidecar_path(path).unlink()
    return path
