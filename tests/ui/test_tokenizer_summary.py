"""The one-line summary the app shows of a tokenizer (``LoadedTokenizer.summary``): a SentencePiece-style BPE
has no regex, and the line says so as ``bpe-studio inspect`` does, not the placeholder pattern its
``Tokenizer.pattern`` holds."""

from __future__ import annotations

from pathlib import Path

from bpe_studio.engine import Tokenizer
from bpe_studio.engine.encoding.summary import SENTENCEPIECE_STYLE
from bpe_studio.ui.present.tokenizer_info import LoadedTokenizer, load_file
from tests.engine.formats.test_sentencepiece_one_call import _model_bytes


def test_a_sentencepiece_model_is_summed_up_without_a_pattern(tmp_path: Path) -> None:
    byte_pieces = [(f"<0x{b:02X}>", 0.0, 6) for b in range(256)]
    path = tmp_path / "tokenizer.model"
    path.write_bytes(_model_bytes([*byte_pieces, ("a", 0.0, 1), ("b", -1.0, 1), ("ab", -2.0, 1)]))
    line = load_file(path).summary()
    assert line == f"259 tokens · 1 merges · 0 special tokens · {SENTENCEPIECE_STYLE} · SentencePiece file"
    assert SENTENCEPIECE_STYLE == "SentencePiece-style BPE, no regex"


def test_a_byte_level_bpe_names_its_pattern() -> None:
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"ab"}
    line = LoadedTokenizer(Tokenizer(vocab, [(b"a", b"b")]), "t").summary()
    assert line == "257 tokens · 1 merges · 0 special tokens · gpt2 pattern"
