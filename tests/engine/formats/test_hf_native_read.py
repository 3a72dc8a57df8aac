"""A ``tokenizer.json`` opened with the native kernel (rust/src/hfjson.rs reads the vocab and merges into the
encoder's tables; ``json`` parses only the rest) gives the tokenizer the Python reading gives
(``BPE_STUDIO_PURE=1``): the same vocab, merges, merge ids, special tokens, pattern and ids on random text;
and a malformed file fails with the same one-line message."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_studio.cli.inspect_cmd import describe
from bpe_studio.engine import load
from bpe_studio.engine.bytes_unicode import bytes_to_text
from bpe_studio.engine.formats.hf import NativeDocument, read_tokenizer_json
from bpe_studio.engine.formats.studio import FormatError
from tests.engine.backends import needs_native, use_backend

pytestmark = needs_native

_BYTES = [bytes([b]) for b in range(256)]
_TEXT = "the cat sat on the mat, 12345 café 世界 🙂\n\tthe end <|endoftext|> ab abc"


def _document(
    tokens: list[bytes], merges: list[Any], *, specials: list[tuple[str, int]] = (), **model: Any
) -> dict[str, Any]:
    """A byte-level ``tokenizer.json`` document: ``tokens`` (ids in order), ``merges`` as written."""
    vocab = {bytes_to_text(t): i for i, t in enumerate(tokens)}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {
                "id": i,
                "content": text,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
            for text, i in specials
        ],
        "normalizer": None,
        "pre_tokenizer": {
            "type": "ByteLevel",
            "add_prefix_space": False,
            "trim_offsets": True,
            "use_regex": True,
        },
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "vocab": vocab,
            "merges": merges,
            **model,
        },
    }


def _both(path: Path) -> tuple[Any, Any]:
    """What loading ``path`` gives with the kernel and in Python: a tokenizer, or the error's message."""
    found = []
    for backend in ("native", "python"):
        with use_backend(backend):
            try:
                found.append(load(path))
            except FormatError as exc:
                found.append(str(exc))
    return found[0], found[1]


def _assert_same(native_tok: Any, python_tok: Any, text: str) -> None:
    assert not isinstance(native_tok, str) and not isinstance(python_tok, str), (native_tok, python_tok)
    # (First: the native summary is the merge table's, before merge_ids() is asked for.)
    assert describe(native_tok) == describe(python_tok)
    assert native_tok.vocab == python_tok.vocab
    assert list(native_tok.vocab) == list(python_tok.vocab)  # (the same order)
    assert list(native_tok.merge_ids()) == list(python_tok.merge_ids())
    assert native_tok.merges == python_tok.merges
    assert native_tok.special_tokens == python_tok.special_tokens
    assert native_tok.pattern == python_tok.pattern
    assert native_tok.rule == python_tok.rule
    assert repr(native_tok) == repr(python_tok)
    assert native_tok.encode(text, allowed_special="all") == python_tok.encode(text, allowed_special="all")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_files_give_the_same_tokenizer(tmp_path: Path, data: st.DataObject) -> None:
    rng = random.Random(data.draw(st.integers(0, 2**32)))
    tokens = list(_BYTES)
    rng.shuffle(tokens)
    pairs: list[tuple[bytes, bytes]] = []
    for _ in range(data.draw(st.integers(0, 60))):
        left, right = rng.choice(tokens), rng.choice(tokens)
        if left + right not in tokens:
            tokens.append(left + right)
        pairs.append((left, right))
    form = data.draw(st.sampled_from(["str", "list", "mixed"]))
    merges = [
        f"{bytes_to_text(a)} {bytes_to_text(b)}"
        if form == "str" or (form == "mixed" and rng.random() < 0.5)
        else [bytes_to_text(a), bytes_to_text(b)]
        for a, b in pairs
    ]
    specials = [("<|endoftext|>", len(tokens))]
    if data.draw(st.booleans()):
        specials.append(("é€", 5))  # a special over an ordinary id: refused alike
    if data.draw(st.booleans()):
        tokens.append(b"<|endoftext|>")  # the special's bytes, also under an ordinary id
    document = _document(tokens, merges, specials=specials, ignore_merges=data.draw(st.booleans()))
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(document, ensure_ascii=data.draw(st.booleans())), encoding="utf-8")
    native_tok, python_tok = _both(path)
    if isinstance(python_tok, str):
        assert native_tok == python_tok
        return
    text = _TEXT + "".join(rng.choice("abcdeé世 \n") for _ in range(200))
    _assert_same(native_tok, python_tok, text)


def _good() -> dict[str, Any]:
    return _document([*_BYTES, b"ab", b"abc"], ["a b", "ab c"], specials=[("<|endoftext|>", 258)])


def _spelled(replace: str, by: str) -> str:
    text = json.dumps(_good())
    assert replace in text
    return text.replace(replace, by, 1)


# Each a tokenizer.json's text that one of the two readings may not take as the other does.
MALFORMED = {
    "vocab key twice": _spelled('"ab": 256', '"ab": 256, "ab": 257'),
    "id twice": _spelled('"ab": 256', '"ab": 257'),
    "negative id": _spelled('"ab": 256', '"ab": -1'),
    "float id": _spelled('"ab": 256', '"ab": 256.0'),
    "huge id": _spelled('"ab": 256', '"ab": 1099511627776'),
    "string id": _spelled('"ab": 256', '"ab": "256"'),
    "outside the alphabet": _spelled('"ab": 256', '"a b": 256'),
    "merge of two spaces": _spelled('"ab c"', '"ab c d"'),
    "merge of no space": _spelled('"ab c"', '"abc"'),
    "merge of three parts": _spelled('"ab c"', '["ab", "c", "d"]'),
    "merge of one part": _spelled('"ab c"', '["ab"]'),
    "merge not text": _spelled('"ab c"', "7"),
    "merge of no token": _spelled('"ab c"', '"b c"'),
    "vocab not an object": _spelled('"vocab": {', '"vocab": [{').replace('"abc": 257}', '"abc": 257}]', 1),
    "merges not a list": _spelled('"merges": [', '"merges": {"x": [').replace('"ab c"]', '"ab c"]}', 1),
    "no merges": _spelled('"merges": [', '"merges_": ['),
    "model key twice": _spelled('"type": "BPE"', '"type": "BPE", "type": "BPE"'),
    "top key twice": _spelled('"version": "1.0"', '"version": "1.0", "version": "2"'),
    "NaN": _spelled('"dropout": null', '"dropout": NaN'),
    "lone surrogate": _spelled('"ab": 256', '"\\ud800": 256'),
    "long integer": _spelled('"version": "1.0"', '"version": ' + "9" * 5000),
    "deep nesting": _spelled('"version": "1.0"', '"version": "1.0", "notes": ' + "[" * 200 + "]" * 200),
    "trailing text": json.dumps(_good()) + " x",
    "byte order mark": "\ufeff" + json.dumps(_good()),
    "not an object": "[" + json.dumps(_good()) + "]",
    "byte fallback": _spelled('"dropout": null', '"dropout": null, "byte_fallback": true'),
    "added token over another id": _spelled('"id": 258', '"id": 256'),
    "well formed": json.dumps(_good()),
}


@pytest.mark.parametrize("text", MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_file_fails_alike(tmp_path: Path, text: str) -> None:
    path = tmp_path / "tokenizer.json"
    path.write_text(text, encoding="utf-8")
    native_tok, python_tok = _both(path)
    if isinstance(python_tok, str) or isinstance(native_tok, str):
        assert native_tok == python_tok
        assert "\n" not in python_tok and python_tok.startswith(str(path))
    else:
        _assert_same(native_tok, python_tok, _TEXT)


def test_a_tokenizer_json_is_opened_without_json_load(tmp_path: Path) -> None:
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(_good()), encoding="utf-8")
    with use_backend("native"), mock.patch("json.load", side_effect=AssertionError("json.load called")):
        assert isinstance(read_tokenizer_json(path), NativeDocument)
        tok = load(path)
    assert tok.encode("abc") == [257]
    assert tok.merges == ((b"a", b"b"), (b"ab", b"c"))
    assert list(tok.merge_ids()) == [(97, 98, 256), (256, 99, 257)]
