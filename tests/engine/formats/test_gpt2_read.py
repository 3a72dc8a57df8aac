"""GPT-2's ``merges.txt`` and ``vocab.json`` read in one native pass (the usual files) give what the reader
line by line and key by key gives (the pure-Python engine, and every file the native pass leaves to it),
and a fault is named at its line or key either way."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bpe_studio.engine import FormatError
from bpe_studio.engine.bytes_unicode import bytes_to_text
from bpe_studio.engine.formats.gpt2_read import read_merges_txt, read_vocab_json

from ..backends import needs_native, use_backend

pytestmark = needs_native  # (both engines, compared)

# Both engines, by name (the pure one reads every file line by line and key by key).
BACKENDS = ("python", "native")

_MERGES = [(b" ", b"t"), (b"h", b"e"), (b" t", b"he"), (b"\n", b"\n"), ("é".encode(), b"\xff")]
_LINES = [f"{bytes_to_text(a)} {bytes_to_text(b)}" for a, b in _MERGES]


@pytest.mark.parametrize(
    "text",
    [
        "#version: 0.2\n" + "\n".join(_LINES) + "\n",
        "\n".join(_LINES),  # no header, no last line end
        "#version: 0.2\r\n" + "\r\n".join(_LINES) + "\r\n\r\n",  # CRLF, blank lines at the end
        "\n".join(_LINES[:2]) + "\n\n" + "\n".join(_LINES[2:]) + "\n",  # a blank line between
        "#version: 0.2\n",
    ],
)
def test_merges_read_alike_on_both_engines(tmp_path: Path, text: str) -> None:
    path = tmp_path / "merges.txt"
    path.write_bytes(text.encode("utf-8"))
    found = {backend: _read(backend, read_merges_txt, path) for backend in BACKENDS}
    assert len(set(map(repr, found.values()))) == 1
    assert found[BACKENDS[0]] in (_MERGES, [])


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("\n".join(_LINES[:3]) + "\nĠa Ġb Ġc\n", "line 4"),  # three tokens
        ("\n".join(_LINES[:2]) + "\nĠa \n", "line 3"),  # an empty token
        ("Ġa Ġb\nĠa b c\u3000 Ġd\n", "line 2"),  # a character outside GPT-2's table
    ],
)
def test_a_bad_merges_line_is_named_on_both_engines(tmp_path: Path, text: str, where: str) -> None:
    path = tmp_path / "merges.txt"
    path.write_text(text, encoding="utf-8")
    for backend in BACKENDS:
        with use_backend(backend), pytest.raises(FormatError, match=where):
            read_merges_txt(path)


def test_a_vocab_reads_alike_on_both_engines_and_names_a_bad_key(tmp_path: Path) -> None:
    vocab = {bytes_to_text(bytes([b])): b for b in range(256)} | {"Ġthe": 256, "<pad token>": 257}
    path = tmp_path / "vocab.json"
    path.write_text(json.dumps(vocab), encoding="utf-8")
    found = {b: _read(b, lambda p: read_vocab_json(p, raw_tokens={"<pad token>"}), path) for b in BACKENDS}
    assert len(set(map(repr, found.values()))) == 1
    assert found[BACKENDS[0]][256] == b" the" and found[BACKENDS[0]][257] == b"<pad token>"
    path.write_text(json.dumps(vocab | {"a\u3000": 258}), encoding="utf-8")
    for backend in BACKENDS:
        with use_backend(backend), pytest.raises(FormatError, match=re.escape("key 'a\\u3000'")):
            read_vocab_json(path, raw_tokens={"<pad token>"})


def _read(backend: str, read: object, path: Path) -> object:
    with use_backend(backend):
        assert callable(read)
        return read(path)
