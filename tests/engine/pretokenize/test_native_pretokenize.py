"""The presets' native pre-tokenizers (rust/src/pretok*.rs) count exactly what the ``regex`` patterns find."""

from __future__ import annotations

from collections import Counter
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_studio.engine import native
from bpe_studio.engine.config import InvalidUtf8Policy
from bpe_studio.engine.pretokenize.patterns import compile_pattern
from bpe_studio.engine.training.counter import ChunkCounter

from ..backends import BACKENDS, needs_native, use_backend

pytestmark = needs_native

PRESETS = list(native.NATIVE_PRESETS)
PATTERNS = {name: compile_pattern(name) for name in PRESETS}

# Pieces the patterns treat specially: contractions in every case (and near misses), digits, whitespace
# runs of every kind before letters, numbers and punctuation, letters of every case class and marks
# (o200k splits words by case), and characters of several scripts and planes.
PIECES = [
    *(
        f"'{c}"
        for c in ("s", "t", "re", "ve", "m", "ll", "d", "S", "T", "RE", "Ve", "vE", "M", "LL", "lL", "D")
    ),
    "'\u017f",
    "'K",
    "'l",
    "'x",
    "''",
    "'",
    "\r",
    "\r\n\r\n",
    " \r",
    "/",
    "//\n",
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
    "1234567",
    "Hello",
    "HELLO",
    "hELLo",
    "CamelCase",
    "ǅungla",
    "ʰ",
    "\u0301",
    "e\u0301",
    "E\u0301X",
    "\u0903",
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

# Characters of every general category (letters of each case, marks, numbers, separators, controls,
# symbols, punctuation), since the patterns' classes are built from them.
any_char = st.characters(codec="utf-8")
texts = st.lists(st.one_of(st.sampled_from(PIECES), st.text(alphabet=any_char, max_size=8)), max_size=30).map(
    "".join
)


def _expected(preset: str, parts: list[str]) -> tuple[dict[str, int], int]:
    tokens = [t for part in parts for t in PATTERNS[preset].findall(part)]
    return dict(Counter(tokens)), len(tokens)


@pytest.mark.parametrize("preset", PRESETS)
@settings(max_examples=500, deadline=None)
@given(text=texts)
def test_equals_the_regex_on_random_unicode(preset: str, text: str) -> None:
    assert native.count_pretokens(preset, [text]) == _expected(preset, [text])


@pytest.mark.parametrize("preset", PRESETS)
@settings(max_examples=100, deadline=None)
@given(parts=st.lists(texts, max_size=5))
def test_several_documents_in_one_call(preset: str, parts: list[str]) -> None:
    assert native.count_pretokens(preset, parts) == _expected(preset, parts)


@pytest.mark.parametrize("preset", PRESETS)
@settings(max_examples=300, deadline=None)
@given(
    runs=st.lists(
        st.one_of(
            st.text(alphabet=" \t\r\n\x0b\x0c\x85\u00a0\u2028\u3000", min_size=1, max_size=6),
            st.text(alphabet="0123456789٣½", min_size=1, max_size=8),
            st.sampled_from(["a", "A", "'s", "'S", "!", "/", "\u0301", "日"]),
        ),
        max_size=20,
    ).map("".join)
)
def test_whitespace_newline_and_digit_runs(preset: str, runs: str) -> None:
    assert native.count_pretokens(preset, [runs]) == _expected(preset, [runs])


# Each code point in contexts where its class decides the cut: between letters of each case, after
# punctuation (marks are not letters there), and in the place of a contraction's letters, in the Basic
# Multilingual Plane, where all the letters are that fold to theirs (the long s `ſ` matches `(?i:s)`).
CONTEXTS = ("a{}a", "A{}A", "!!{}", "'{}", "'{}e", "'l{} ")


@pytest.mark.parametrize("preset", PRESETS)
def test_every_code_point_is_classed_as_the_regex_does(preset: str) -> None:
    text = "".join(
        context.format(chr(c))
        for c in range(0x110000)
        if not 0xD800 <= c < 0xE000
        for context in (CONTEXTS if c < 0x10000 else CONTEXTS[:3])
    )
    got = native.count_pretokens(preset, [text])
    assert got is not None
    expected = _expected(preset, [text])
    # Named, not diffed: pytest's diff of two dicts of a million entries would take minutes.
    if got != expected:
        wrong = [t for t in got[0].keys() | expected[0].keys() if got[0].get(t) != expected[0].get(t)]
        assert wrong[:10] == [] and got[1] == expected[1]


def test_gpt2_counts_through_the_common_entry_point() -> None:
    assert native.count_pretokens("gpt2", ["it's 12"]) == ({"it": 1, "'s": 1, " 12": 1}, 3)


def test_an_unknown_preset_is_refused_by_the_kernel() -> None:
    with pytest.raises(ValueError, match="use one of gpt2, cl100k, o200k, llama3"):
        native.count_pretokens("r50k", ["ab"])


def test_the_class_table_grows_when_a_character_beyond_it_comes() -> None:
    with mock.patch.object(native, "_classes", [b""]):
        assert native.count_pretokens("gpt2", ["ab 12"]) == ({"ab": 1, " 12": 1}, 2)
        assert len(native._classes[0]) == 128
        assert native.count_pretokens("gpt2", ["x é"]) == ({"x": 1, " é": 1}, 2)
        assert len(native._classes[0]) == 0x10000
        assert native.count_pretokens("gpt2", ["𝐀𝐁 𝟏"]) == ({"𝐀𝐁": 1, " 𝟏": 1}, 2)
        assert len(native._classes[0]) == 0x110000


@pytest.mark.parametrize("preset", PRESETS)
def test_text_the_native_side_cannot_take_falls_back_to_python(preset: str) -> None:
    assert native.count_pretokens(preset, ["a\ud800b"]) is None
    with mock.patch.dict("os.environ", {native.PURE_ENV: "1"}):
        assert native.count_pretokens(preset, ["ab"]) is None


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("backend", BACKENDS)
def test_chunk_counter_counts_the_same_with_either_backend(backend: str, preset: str) -> None:
    text = "it's 2024 <s>  Hello\n\n world<s><s>日本語 'LL x CamelCase'S 1234567 \r\n"
    with use_backend(backend):
        counter = ChunkCounter(pattern=preset, special_tokens=["<s>"], policy=InvalidUtf8Policy.ERROR)
        returned: list[None] = []

        def spy(table: native.NativeCountTable, name: str, texts: list[str]) -> None:
            returned.append(real(table, name, texts))

        real = native.NativeCountTable.add
        with mock.patch.object(native.NativeCountTable, "add", spy):
            counter.count_text(text, continues_document=True)
    # The native scanner counts into the native table when the kernel is on; the Python backend has none.
    assert returned == ([] if backend == "python" else [None])
    assert (counter.table is None) == (backend == "python")
    parts = [p for p in text.split("<s>") if p]
    assert dict(counter.counts) == _expected(preset, parts)[0]
    assert counter.totals.pretokens == _expected(preset, parts)[1]
    assert (counter.totals.documents, counter.totals.special_tokens) == (len(parts) - 1, 3)
