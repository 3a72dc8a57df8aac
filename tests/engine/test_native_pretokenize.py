"""The native gpt2 pre-tokenizer (rust/src/pretok.rs) counts exactly what the ``regex`` pattern finds."""

from __future__ import annotations

from collections import Counter
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_studio.engine import _native
from bpe_studio.engine.config import InvalidUtf8Policy, compile_pattern
from bpe_studio.engine.counting import ChunkCounter

from .backends import BACKENDS, needs_native, use_backend

pytestmark = needs_native

GPT2 = compile_pattern("gpt2")

# Pieces the pattern treats specially: contractions (and near misses), digits, whitespace runs of every
# kind before letters, numbers and punctuation, and characters of several scripts and planes.
PIECES = [
    "'s",
    "'t",
    "'re",
    "'ve",
    "'m",
    "'ll",
    "'d",
    "'S",
    "'l",
    "'x",
    "''",
    "'",
    " ",
    "  ",
    "\t",
    "\n",
    "\r\n",
    " \n",
    "\u00a0",
    "\u3000",
    "\u2028",
    "\x1c",
    "\x85",
    "\x0b",
    "a",
    "Zz",
    "é",
    "日本",
    "𝐀",
    "ǅ",
    "0",
    "42",
    "½",
    "٣",
    "Ⅻ",
    "!",
    "?!",
    "—",
    "😀",
    "\x00",
    "\ufffd",
]

texts = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=8)), max_size=30).map("".join)


def _expected(parts: list[str]) -> tuple[dict[str, int], int]:
    tokens = [t for part in parts for t in GPT2.findall(part)]
    return dict(Counter(tokens)), len(tokens)


@settings(max_examples=500, deadline=None)
@given(texts)
def test_equals_the_regex_on_random_unicode(text: str) -> None:
    assert _native.count_gpt2([text]) == _expected([text])


@settings(max_examples=100, deadline=None)
@given(st.lists(texts, max_size=5))
def test_several_documents_in_one_call(parts: list[str]) -> None:
    assert _native.count_gpt2(parts) == _expected(parts)


def test_every_code_point_is_classed_as_the_regex_does() -> None:
    # One run over all of Unicode, each code point between two letters so that its class decides the cut.
    text = "".join(f"a{chr(c)}a" for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    got = _native.count_gpt2([text])
    assert got is not None
    expected = _expected([text])
    # Named, not diffed: pytest's diff of two dicts of a million entries would take minutes.
    wrong = [t for t in got[0].keys() | expected[0].keys() if got[0].get(t) != expected[0].get(t)]
    assert wrong[:10] == [] and got[1] == expected[1]


def test_the_class_table_grows_when_a_character_beyond_it_comes() -> None:
    with mock.patch.object(_native, "_classes", [b""]):
        assert _native.count_gpt2(["ab 12"]) == ({"ab": 1, " 12": 1}, 2)
        assert len(_native._classes[0]) == 128
        assert _native.count_gpt2(["x é"]) == ({"x": 1, " é": 1}, 2)
        assert len(_native._classes[0]) == 0x10000
        assert _native.count_gpt2(["𝐀𝐁 𝟏"]) == ({"𝐀𝐁": 1, " 𝟏": 1}, 2)
        assert len(_native._classes[0]) == 0x110000


def test_text_the_native_side_cannot_take_falls_back_to_python() -> None:
    assert _native.count_gpt2(["a\ud800b"]) is None
    with mock.patch.dict("os.environ", {_native.PURE_ENV: "1"}):
        assert _native.count_gpt2(["ab"]) is None


@pytest.mark.parametrize("backend", BACKENDS)
def test_chunk_counter_counts_the_same_with_either_backend(backend: str) -> None:
    text = "it's 2024 <s>  Hello\n\n world<s><s>日本語 'll x"
    with use_backend(backend):
        counter = ChunkCounter(pattern="gpt2", special_tokens=["<s>"], policy=InvalidUtf8Policy.ERROR)
        counter.count_text(text, continues_document=True)
    parts = [p for p in text.split("<s>") if p]
    assert dict(counter.counts) == _expected(parts)[0]
    assert counter.totals.pretokens == _expected(parts)[1]
    assert (counter.totals.documents, counter.totals.special_tokens) == (len(parts) - 1, 3)
