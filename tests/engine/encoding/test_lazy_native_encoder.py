"""A tokenizer's native encoder of merges is built when it first encodes, not when the file is opened
(``bpe-studio inspect`` encodes nothing, and building 50k merges into the kernel's tables took 3 ms of its
load): the same ids as the Python encoder's once built, and nothing to clear or count before."""

from __future__ import annotations

from pathlib import Path

from bpe_studio.engine import Tokenizer, load, native, save
from tests.engine.backends import needs_native, use_backend

TEXTS = ["hello world", "  spaced  out ", "naïve café 日本語 😀", ""]


@needs_native
def test_a_tokenizer_json_builds_its_encoder_at_its_first_encode(tmp_path: Path) -> None:
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"he", 257: b"hel", 258: b" w"}
    tok = Tokenizer(vocab, [(b"h", b"e"), (b"he", b"l"), (b" ", b"w")], pattern="gpt2")
    path = save(tok, tmp_path / "tokenizer.json", format="hf")
    with use_backend("native"):
        opened = load(path)
    encoder = opened._encoder
    assert isinstance(encoder, native.NativeEncoder)
    assert encoder._made is None and len(encoder) == 0
    encoder.clear_cache()  # (nothing to clear yet)
    assert encoder._made is None
    ids = [opened.encode(text) for text in TEXTS]
    assert encoder._made is not None
    with use_backend("python"):
        assert ids == [load(path).encode(text) for text in TEXTS]
    assert ids[0] == [257, 108, 111, 258, 111, 114, 108, 100]
