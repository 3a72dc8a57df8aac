"""Byte-level ``tokenizer.json`` files as LLMs ship them (synthetic files in their shape): Llama 3 (Split +
ByteLevel, ``ignore_merges``, BOS template, reserved added tokens), Qwen 2/3 (NFC normalizer, chat added
tokens), a Split regex that does not match every character; encoded as ``tokenizers`` does. What is not
byte-level BPE (WordPiece, Unigram, byte_fallback, Metaspace) is refused with one sentence saying why."""

from __future__ import annotations

import functools
import itertools
import json
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_studio.engine import FormatError, FormatWarning, load, save
from bpe_studio.engine.bytes_unicode import bytes_to_text

from ..reference_encoder import SPECIAL, trained_tokenizer

LLAMA3_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
    r"|\s+(?!\S)|\s+"
)
QWEN_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
    r"|\s+(?!\S)|\s+"
)
#: A word no merge of the trained tokenizer makes, added to the vocab: only ignore_merges gives it one id.
WHOLE_WORD = " zyzzyva"

_PIECES = [
    *"aeéèoxyzAEÉ日本😀",
    "e\u0301",  # decomposed é: NFC composes it
    "A\u030a",  # decomposed Å
    "\u0301",
    *" \t\n\r",
    *"0123456789",
    *"',.!?-<|>",
    "'s",
    "'LL",
    " the",
    " and",
    WHOLE_WORD,
    "<|begin_of_text|>",
    "<|im_start|>",
    "<|im_end|>",
]
texts = st.one_of(st.lists(st.sampled_from(_PIECES), max_size=30).map("".join), st.text(max_size=30))
_settings = settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _added(content: str, i: int, *, special: bool = True) -> dict[str, Any]:
    return {
        "id": i,
        "content": content,
        "single_word": False,
        "lstrip": False,
        "rstrip": False,
        "normalized": not special,
        "special": special,
    }


def _byte_level(*, use_regex: bool) -> dict[str, Any]:
    return {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": use_regex}


def _base_document(cs336_data: Path, folder: Path) -> tuple[dict[str, Any], int]:
    """A trained tokenizer's tokenizer.json without its added tokens, plus WHOLE_WORD; the next free id."""
    tok = trained_tokenizer(cs336_data, "gpt2")
    document = json.loads(save(tok, folder / "base.json", format="hf").read_text(encoding="utf-8"))
    vocab = document["model"]["vocab"]
    for special in tok.special_tokens:
        del vocab[special]
    document["added_tokens"] = []
    free = max(vocab.values()) + 1
    assert bytes_to_text(WHOLE_WORD.encode()) not in vocab
    vocab[bytes_to_text(WHOLE_WORD.encode())] = free
    return document, free + 1


def _split(regex: str) -> dict[str, Any]:
    return {
        "type": "Sequence",
        "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": False},
            _byte_level(use_regex=False),
        ],
    }


def llama3_file(cs336_data: Path, folder: Path) -> Path:
    document, free = _base_document(cs336_data, folder)
    begin, end = free, free + 1
    document["added_tokens"] = [_added("<|begin_of_text|>", begin), _added("<|end_of_text|>", end)] + [
        _added(f"<|reserved_special_token_{n}|>", free + 2 + n) for n in range(4)
    ]
    document["pre_tokenizer"] = _split(LLAMA3_SPLIT)
    document["model"]["ignore_merges"] = True
    document["post_processor"] = {
        "type": "Sequence",
        "processors": [
            {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
            {
                "type": "TemplateProcessing",
                "single": [
                    {"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}},
                    {"Sequence": {"id": "A", "type_id": 0}},
                ],
                "pair": [
                    {"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}},
                    {"Sequence": {"id": "A", "type_id": 0}},
                    {"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 1}},
                    {"Sequence": {"id": "B", "type_id": 1}},
                ],
                "special_tokens": {
                    "<|begin_of_text|>": {
                        "id": "<|begin_of_text|>",
                        "ids": [begin],
                        "tokens": ["<|begin_of_text|>"],
                    }
                },
            },
        ],
    }
    path = folder / "llama3" / "tokenizer.json"
    path.parent.mkdir()
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def qwen_file(cs336_data: Path, folder: Path) -> Path:
    document, free = _base_document(cs336_data, folder)
    document["added_tokens"] = [
        _added("<|endoftext|>", free),
        _added("<|im_start|>", free + 1),
        _added("<|im_end|>", free + 2),
        _added("<tool_call>", free + 3, special=False),
    ]
    document["normalizer"] = {"type": "NFC"}
    document["pre_tokenizer"] = _split(QWEN_SPLIT)
    document["post_processor"] = _byte_level(use_regex=False)
    path = folder / "qwen" / "tokenizer.json"
    path.parent.mkdir()
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def gaps_file(cs336_data: Path, folder: Path) -> Path:
    """A Split regex that matches letters only: tokenizers keeps the text between matches as pieces."""
    document, _ = _base_document(cs336_data, folder)
    document["pre_tokenizer"] = _split(r"\p{L}+")
    path = folder / "gaps" / "tokenizer.json"
    path.parent.mkdir()
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


@functools.cache
def _pair(kind: str, cs336_data: Path, folder: Path) -> tuple[Any, Any]:
    tokenizers = pytest.importorskip("tokenizers")
    path = {"llama3": llama3_file, "qwen": qwen_file, "gaps": gaps_file}[kind](cs336_data, folder)
    return load(path), tokenizers.Tokenizer.from_file(str(path))


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("llm-files")


# ------------------------------------------------------------------------------------------------- Llama 3


def test_llama3_shape_loads_with_its_bos_as_a_special_token(cs336_data: Path, files: Path) -> None:
    ours, _ = _pair("llama3", cs336_data, files)
    begin = ours.special_tokens["<|begin_of_text|>"]
    assert ours.ignore_merges and ours.template is not None and ours.template.prefix == (begin,)
    assert len(ours.special_tokens) == 6
    ids = ours.encode("Hello" + WHOLE_WORD)
    assert ids[0] == begin and ids[-1] == ours.token_id(WHOLE_WORD.encode())  # taken whole
    assert ours.encode("x", add_special_tokens=False) == [ord("x")]


@_settings
@given(text=texts)
def test_llama3_shape_encodes_as_tokenizers(cs336_data: Path, files: Path, text: str) -> None:
    ours, theirs = _pair("llama3", cs336_data, files)
    assert ours.encode(text) == theirs.encode(text).ids


# ---------------------------------------------------------------------------------------------------- Qwen


@_settings
@given(text=texts)
def test_qwen_shape_encodes_as_tokenizers(cs336_data: Path, files: Path, text: str) -> None:
    ours, theirs = _pair("qwen", cs336_data, files)
    assert ours.normalizer == "NFC"
    assert ours.encode(text) == theirs.encode(text).ids


def test_nfc_is_applied_in_every_way_of_encoding(cs336_data: Path, files: Path) -> None:
    ours, _ = _pair("qwen", cs336_data, files)
    decomposed = "cafe\u0301 <|im_start|>A\u030angstro\u0308m e"
    composed = unicodedata.normalize("NFC", decomposed)
    ids = ours.encode(decomposed)
    assert ids == ours.encode(composed) and ours.encode_ordinary(decomposed) == ours.encode_ordinary(composed)
    # Streaming, with chunk ends between a letter and its combining accent.
    chunks = ["cafe", "\u0301 <|im", "_start|>A", "\u030angstro", "\u0308m e"]
    assert list(ours.encode_iterable(chunks)) == ids
    long_text = ("word cafe\u0301 " * 20_000) + "e"
    cut = [long_text[i : i + 4093] for i in range(0, len(long_text), 4093)]
    assert list(ours.encode_iterable(cut)) == ours.encode(long_text)
    # Offsets are in the text given: each token covers the original characters it came from.
    spans = ours.encode_with_offsets(decomposed)
    assert [s.id for s in spans] == ids
    assert spans[0].start == 0 and spans[-1].end == len(decomposed)
    assert all(a.end <= b.start or a.end == b.end for a, b in itertools.pairwise(spans))
    accent = decomposed.index("e\u0301")
    assert any(s.start <= accent and s.end >= accent + 2 for s in spans)


def test_hf_round_trip_keeps_nfc_and_ignore_merges(cs336_data: Path, files: Path, tmp_path: Path) -> None:
    for kind in ("llama3", "qwen"):
        ours, _ = _pair(kind, cs336_data, files)
        again = load(save(ours, tmp_path / f"{kind}.json", format="hf"))
        assert (again.normalizer, again.ignore_merges) == (ours.normalizer, ours.ignore_merges)
        assert again.pattern == ours.pattern
        text = "cafe\u0301 Hello" + WHOLE_WORD
        assert again.encode(text) == ours.encode(text)
    with pytest.warns(FormatWarning, match="NFC normalizer"):
        save(_pair("qwen", cs336_data, files)[0], tmp_path / "q.json", format="studio")


# ---------------------------------------------------------------------------------- text between matches


@_settings
@given(text=texts)
def test_text_a_split_regex_does_not_match_is_kept(cs336_data: Path, files: Path, text: str) -> None:
    ours, theirs = _pair("gaps", cs336_data, files)
    assert ours.encode(text) == theirs.encode(text).ids
    assert ours.decode(ours.encode(text)) == text


def test_the_split_regex_is_written_back_as_it_was(cs336_data: Path, files: Path, tmp_path: Path) -> None:
    ours, _ = _pair("gaps", cs336_data, files)
    document = json.loads(save(ours, tmp_path / "t.json", format="hf").read_text(encoding="utf-8"))
    assert document["pre_tokenizer"]["pretokenizers"][0]["pattern"] == {"Regex": r"\p{L}+"}


# ---------------------------------------------------------------------------------------------- refusals


def _refusal(cs336_data: Path, tmp_path: Path, change: Any) -> str:
    document, _ = _base_document(cs336_data, tmp_path)
    change(document)
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(FormatError) as caught:
        load(path)
    message = str(caught.value)
    assert message.startswith(str(path)) and "\n" not in message
    return message


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda d: d["model"].update(type="WordPiece"), "model.type: a WordPiece model (BERT style"),
        (lambda d: d["model"].update(type="Unigram"), "model.type: a Unigram model (SentencePiece"),
        (lambda d: d["model"].update(type="WordLevel"), "model.type: a WordLevel model"),
        (lambda d: d["model"].update(byte_fallback=True), "model.byte_fallback: true beside a ByteLevel"),
        (
            lambda d: d.update(pre_tokenizer={"type": "Metaspace", "replacement": "▁"}),
            "Metaspace (SentencePiece style",
        ),
        (
            lambda d: d.update(pre_tokenizer={"type": "WhitespaceSplit"}),
            "0 ByteLevel steps; byte-level BPE needs exactly one",
        ),
        (
            lambda d: d.update(normalizer={"type": "BertNormalizer"}),
            "normalizer: normalizer 'BertNormalizer' is not supported",
        ),
        (
            lambda d: d.update(
                pre_tokenizer={"type": "Sequence", "pretokenizers": [{"type": "BertPreTokenizer"}]}
            ),
            "pre_tokenizer.pretokenizers[0]: pre-tokenizer 'BertPreTokenizer' is not supported",
        ),
        (
            lambda d: d.update(
                pre_tokenizer={
                    "type": "Sequence",
                    "pretokenizers": [
                        {"type": "Split", "pattern": {"Regex": "a"}, "behavior": "Sideways", "invert": False},
                        _byte_level(use_regex=False),
                    ],
                }
            ),
            "pre_tokenizer.pretokenizers[0].behavior: 'Sideways' is not one of Removed, Isolated",
        ),
    ],
)
def test_what_is_not_byte_level_bpe_is_refused_saying_why(
    cs336_data: Path, tmp_path: Path, change: Any, expected: str
) -> None:
    assert expected in _refusal(cs336_data, tmp_path, change)


def test_the_base_document_itself_loads(cs336_data: Path, tmp_path: Path) -> None:
    document, _ = _base_document(cs336_data, tmp_path)
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    assert load(path).special_tokens == {}
    assert SPECIAL not in load(path).special_tokens
