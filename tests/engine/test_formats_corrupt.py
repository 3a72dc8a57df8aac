"""Damaged tokenizer files: every format, truncated or bit-flipped, loads as it was or raises FormatError.

Also the two format findings of issue 9: deeply nested JSON (a RecursionError escaped) and the empty token of
``.tiktoken`` files (``= RANK``, which tiktoken reads and real files ship, was refused).
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from bpe_studio.engine import FormatError, Tokenizer, load, save
from bpe_studio.engine.formats.gpt2 import read_sidecar, read_vocab_json
from bpe_studio.engine.formats.hf import load_hf
from bpe_studio.engine.formats.studio import load_studio
from bpe_studio.engine.formats.tiktoken_format import read_tiktoken, sidecar_path

SPECIAL = "<|endoftext|>"


def small_tokenizer() -> Tokenizer:
    """Bytes, a few merges (so tiktoken's rank rule holds: ids follow the merges) and one special token."""
    vocab = {i: bytes([i]) for i in range(256)}
    merges = [(b"h", b"e"), (b"l", b"l"), (b"he", b"ll"), (b" ", b"w"), (b"o", b"r"), (b" w", b"or")]
    for n, (left, right) in enumerate(merges):
        vocab[256 + n] = left + right
    return Tokenizer(vocab, merges, {SPECIAL: 300}, pattern="cl100k")


# ------------------------------------------------------------------------------------ deeply nested JSON

NESTED = "[" * 100_000


@pytest.mark.parametrize(
    "document",
    [
        '{"format": "bpe-studio-tokenizer", "version": 1, "vocab": ' + NESTED,  # detect + studio
        '{"model": ' + '{"a": ' * 100_000,  # detect + hf (objects)
        '{"format": "bpe-studio-tokenizer", "version": 1, "vocab": {"0": ' + "1" * 5000 + "}}",  # huge int
    ],
)
def test_deeply_nested_json_is_a_format_error_naming_the_file(tmp_path: Path, document: str) -> None:
    path = tmp_path / "tokenizer.json"
    path.write_text(document, encoding="utf-8")
    for reader in (load, load_studio, load_hf):
        with pytest.raises(FormatError, match=str(path)):
            reader(path)


def test_deeply_nested_gpt2_and_sidecar_files_are_format_errors(tmp_path: Path) -> None:
    folder = save(small_tokenizer(), tmp_path / "gpt2", format="gpt2")
    for name in ("vocab.json", "bpe_studio.json"):
        path = folder / name
        original = path.read_bytes()
        path.write_text(NESTED, encoding="utf-8")
        with pytest.raises(FormatError, match=str(path)):
            load(folder)
        with pytest.raises(FormatError, match=str(path)):
            (read_vocab_json if name == "vocab.json" else read_sidecar)(path)
        path.write_bytes(original)
    written = save(small_tokenizer(), tmp_path / "t.tiktoken", format="tiktoken")
    sidecar_path(written).write_text('{"format": ' + NESTED, encoding="utf-8")
    with pytest.raises(FormatError, match=str(sidecar_path(written))):
        load(written)


# ----------------------------------------------------------------------------- the empty .tiktoken token


def _with_empty_token(tmp_path: Path) -> tuple[Path, dict[int, bytes]]:
    """A ``.tiktoken`` file of the 256 bytes with the empty token at rank 256 (as ``= 256``), first line."""
    ranks = {i: bytes([i]) for i in range(256)}
    lines = ["= 256", *(f"{base64.b64encode(t).decode()} {i}" for i, t in ranks.items())]
    path = tmp_path / "empty.tiktoken"
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    return path, {**ranks, 256: b""}


def test_tiktoken_file_with_the_empty_token_loads_and_round_trips(tmp_path: Path) -> None:
    path, ranks = _with_empty_token(tmp_path)
    assert read_tiktoken(path) == ranks
    tok = load(path)  # detected as tiktoken from its first line "= 256"
    assert tok.vocab[256] == b"" and tok.encode("hi") == [104, 105]
    again = save(tok, tmp_path / "again.tiktoken", format="tiktoken")
    assert "= 256\n" in again.read_text(encoding="ascii")
    assert dict(load(again).vocab) == dict(tok.vocab)


def test_tiktoken_reads_the_empty_token_as_we_write_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("tiktoken")
    from tiktoken.load import load_tiktoken_bpe

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    path, ranks = _with_empty_token(tmp_path)
    again = save(load(path), tmp_path / "again.tiktoken", format="tiktoken")
    assert load_tiktoken_bpe(str(path)) == {t: i for i, t in ranks.items()}
    assert load_tiktoken_bpe(str(again)) == {t: i for i, t in ranks.items()}
