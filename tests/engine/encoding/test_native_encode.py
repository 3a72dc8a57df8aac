"""The native encoder (rust/src/encode.rs) against the Python one (Tokenizer._bpe): the same ids, offsets and
decoded bytes on random text, special tokens, long repetitive pre-tokens, ``ignore_merges`` and NFC
tokenizers. The GPT-2 reference ids run on both backends in test_tokenizer.py (its ``gpt2`` fixture)."""

from __future__ import annotations

import functools
import os
import threading
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_studio.engine import Tokenizer, UnknownTokenIdError, load, native

from ..backends import needs_native, use_backend
from ..formats.test_hf_llm_files import llama3_file, qwen_file
from ..reference_encoder import SAMPLE_TEXTS, gpt2_tokenizer, reference_encode, trained_tokenizer
from .test_tokenizer import _PIECES

pytestmark = needs_native

KINDS = ("gpt2", "cl100k", "o200k", "llama3", "qwen")

texts = st.one_of(
    st.lists(st.sampled_from(_PIECES), max_size=40).map("".join),
    st.text(max_size=40),
)
# Pre-tokens longer than 256 bytes take the heap-based merge on both sides.
_LETTERS = ["a", "b", "ab", "the", "é", "aaaa", "in", "ng", "e"]
long_texts = st.one_of(
    st.lists(st.sampled_from(_LETTERS), min_size=100, max_size=400).map("".join),  # one long word
    st.lists(st.sampled_from([*_LETTERS, "🙃", "1", " ", "  "]), max_size=400).map("".join),
)
check = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _rebuild(tok: Tokenizer, backend: str, **options: Any) -> Tokenizer:
    """``tok`` made again under ``backend`` (the encoder is chosen when a tokenizer is made)."""
    with use_backend(backend):
        made = Tokenizer(
            tok.vocab,
            tok.merges,
            dict(tok.special_tokens),
            pattern=tok.pattern,
            template=tok.template,
            ignore_merges=tok.ignore_merges,
            normalizer=tok.normalizer,
            **options,
        )
    assert made.backend == backend
    return made


@functools.cache
def _pair(kind: str, data: Path, folder: Path) -> tuple[Tokenizer, Tokenizer]:
    """(python, native) tokenizers of one kind."""
    if kind == "gpt2":
        base = gpt2_tokenizer(data)
    elif kind in ("llama3", "qwen"):
        (folder / kind).mkdir()
        path = {"llama3": llama3_file, "qwen": qwen_file}[kind](data, folder / kind)
        base = load(path)
    else:
        base = trained_tokenizer(data, kind)
    return _rebuild(base, "python"), _rebuild(base, "native")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("native-encode")


def _assert_same(python: Tokenizer, native: Tokenizer, text: str) -> None:
    ids = python.encode(text)
    assert native.encode(text) == ids
    assert native.encode_ordinary(text) == python.encode_ordinary(text)
    assert native.encode(text, allowed_special=set(), disallowed_special=()) == python.encode(
        text, allowed_special=set(), disallowed_special=()
    )
    assert native.encode_with_offsets(text) == python.encode_with_offsets(text)
    half = len(text) // 2
    assert list(native.encode_iterable([text[:half], text[half:]])) == ids
    assert native.decode_bytes(ids) == python.decode_bytes(ids)
    assert native.decode(ids) == python.decode(ids)


@check
@given(text=texts, kind=st.sampled_from(KINDS))
def test_native_equals_python_on_random_text(cs336_data: Path, folder: Path, text: str, kind: str) -> None:
    python, native = _pair(kind, cs336_data, folder)
    _assert_same(python, native, text)


@check
@given(text=long_texts, kind=st.sampled_from(("gpt2", "o200k", "llama3")))
def test_native_equals_python_on_long_pretokens(cs336_data: Path, folder: Path, text: str, kind: str) -> None:
    python, native = _pair(kind, cs336_data, folder)
    _assert_same(python, native, text)


@pytest.mark.parametrize("kind", KINDS)
def test_native_equals_python_on_samples_and_long_words(cs336_data: Path, folder: Path, kind: str) -> None:
    python, native = _pair(kind, cs336_data, folder)
    corpus = (cs336_data / "corpus.en").read_text(encoding="utf-8")[:20000]
    repetitive = ("a" * 5000, "ab" * 3000, " " * 3000 + "x", "1234567890" * 300, "🙃" * 2000, "\ud83d" * 5)
    for text in (*SAMPLE_TEXTS, corpus, *repetitive):
        _assert_same(python, native, text)


def test_native_equals_the_reference_encoder(cs336_data: Path, folder: Path) -> None:
    _, native = _pair("gpt2", cs336_data, folder)
    for text in (*SAMPLE_TEXTS, "a" * 5000, "the" * 700 + " " * 900 + "x"):
        expected = reference_encode(text, native.vocab, native.merges, native.special_tokens)
        assert native.encode(text) == expected


def test_ignore_merges_takes_a_token_whole_natively(cs336_data: Path, folder: Path) -> None:
    _, native = _pair("llama3", cs336_data, folder)
    whole = native.token_id(b" zyzzyva")
    assert whole is not None and native.encode(" zyzzyva", add_special_tokens=False) == [whole]
    without = _rebuild(native, "native", cache_size=10)
    assert without.ignore_merges
    plain = Tokenizer(native.vocab, native.merges, dict(native.special_tokens), pattern=native.pattern)
    assert plain.backend == "native" and plain.encode(" zyzzyva") != [whole]


@check
@given(data=st.data())
def test_native_decode_equals_python(cs336_data: Path, folder: Path, data: st.DataObject) -> None:
    python, native = _pair("gpt2", cs336_data, folder)
    ids = data.draw(st.lists(st.integers(0, python.vocab_size - 1), max_size=60))
    assert native.decode_bytes(ids) == python.decode_bytes(ids)
    assert native.decode_bytes(tuple(ids)) == python.decode_bytes(iter(ids))


@pytest.mark.parametrize("bad", [50257, -1, 10**30, "x", None, 1.5])
def test_native_decode_names_a_bad_id_as_python_does(cs336_data: Path, folder: Path, bad: Any) -> None:
    python, native = _pair("gpt2", cs336_data, folder)
    messages = []
    for tok in (python, native):
        with pytest.raises(UnknownTokenIdError) as caught:
            tok.decode_bytes([15496, bad, 995])
        messages.append(str(caught.value))
    assert messages[0] == messages[1] and repr(bad) in messages[0]


def test_native_cache_is_bounded_and_cleared(cs336_data: Path) -> None:
    base = trained_tokenizer(cs336_data, "gpt2")
    small = _rebuild(base, "native", cache_size=3)
    text = " ".join(f"w{i}x{i * 7}" for i in range(2000))
    expected = _rebuild(base, "python").encode(text)
    assert small.encode(text) == expected
    assert small.backend == "native" and 0 < len(small._encoder) <= 3
    small.clear_cache()
    assert len(small._encoder) == 0
    assert small.encode(text) == expected and small.cache_size == 3


def test_threads_share_one_native_tokenizer(cs336_data: Path, folder: Path) -> None:
    python, native = _pair("gpt2", cs336_data, folder)
    texts = [
        f"thread {n}: " + (cs336_data / "corpus.en").read_text(encoding="utf-8")[n * 997 :][:5000]
        for n in range(8)
    ]
    expected = [python.encode(t) for t in texts]
    found: dict[int, list[int]] = {}
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for _ in range(5):
                native.clear_cache()
                found[n] = native.encode(texts[n])
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(len(texts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors and [found[n] for n in range(len(texts))] == expected


def test_pure_env_chooses_the_python_encoder(cs336_data: Path) -> None:
    base = trained_tokenizer(cs336_data, "gpt2")
    with mock.patch.dict(os.environ, {native.PURE_ENV: "1"}):
        assert Tokenizer(base.vocab, base.merges).backend == "python"
    with mock.patch.dict(os.environ, {native.PURE_ENV: "0"}):
        assert Tokenizer(base.vocab, base.merges).backend == "native"
