"""The models' own pre-tokenization patterns (Llama 3, Qwen 2 and 3.5, Mistral Nemo, tiktoken's r50k, the
ByteLevel regex) run on native scanners: every spelling that ``patterns.scanner_name`` recognises finds
exactly what the ``regex`` module finds with it, and anything else keeps the ``regex`` path."""

from __future__ import annotations

from collections import Counter

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_studio.engine import native
from bpe_studio.engine.config import InvalidUtf8Policy
from bpe_studio.engine.pretokenize.patterns import (
    MODEL_PATTERNS,
    NATIVE_SPELLINGS,
    PATTERNS,
    scanner_name,
)
from bpe_studio.engine.training.counter import ChunkCounter
from bpe_studio.engine.training.counting import counting_path

from ..backends import BACKENDS, needs_native, use_backend
from .test_native_pretokenize import CONTEXTS, PIECES, texts

# Every recognised spelling, by the scanner that runs it.
SPELLINGS: dict[str, list[str]] = {}
for _spelling, _name in NATIVE_SPELLINGS.items():
    SPELLINGS.setdefault(_name, []).append(_spelling)
NAMES = sorted(SPELLINGS)

# Texts where the parameters show: whitespace runs that end the text, digit runs, marks after punctuation and
# letters, contractions of every case, case changes, slashes and newlines after punctuation.
TRICKY = [
    "x \n\n  ",
    "x  ",
    "  \r\n",
    "1234567 12 x1234 ١٢٣٤ ½",
    "e\u0301 \u0301a . Áb\u0301c !\u0301\u0301 !!\u0301 \u0301",
    "I'm they're we've he'll she'd it's don't 'S 'LL 'Re 'ſ DON'T it's'sa",
    "HelloWorld ABCdef aBC JSONParser ǅx 日本語",
    "x!!\n\ny a/b//\n\t word 'x ,y  !? \r\n\r\nz",
    "a\u00a0b \u3000c \u2028\x85 \x0b",
    "".join(PIECES),
]


def _findall(pattern: str, text: str) -> tuple[dict[str, int], int]:
    tokens = regex.findall(pattern, text)
    return dict(Counter(tokens)), len(tokens)


def test_the_models_patterns_are_recognised() -> None:
    found = {name: scanner_name(pattern) for name, pattern in MODEL_PATTERNS.items()}
    assert found == {
        "llama3": "llama3",
        "qwen2": "qwen2",
        "qwen35": "qwen35",
        "nemo": "nemo",
        "r50k": "gpt2",
        "byte_level": "gpt2",
    }
    assert {name: scanner_name(pattern) for name, pattern in PATTERNS.items()} == {n: n for n in PATTERNS}
    assert {*NAMES, "superbpe"} == set(native.NATIVE_SCANNERS)


@pytest.mark.parametrize(
    "pattern",
    [
        MODEL_PATTERNS["llama3"].replace(r"\p{N}{1,3}", r"\p{N}{1,2}"),  # another digit limit
        MODEL_PATTERNS["llama3"] + " ",  # not normalized: a space is a character of the pattern
        "(?x)" + MODEL_PATTERNS["llama3"],  # nor flags
        MODEL_PATTERNS["qwen2"].replace(r"\s+(?!\S)|", ""),  # an alternative less
        MODEL_PATTERNS["nemo"].replace(r"[\r\n/]*", r"[\r\n]*"),
        r"\w+|\s+|[^\w\s]+",
    ],
)
def test_other_patterns_keep_the_regex_path(pattern: str) -> None:
    assert scanner_name(pattern) is None
    assert counting_path(workers=2, pattern=pattern, plain_text_files=True) == "processes"


@needs_native
@pytest.mark.parametrize("name", NAMES)
def test_every_spelling_equals_the_regex_on_tricky_texts(name: str) -> None:
    for spelling in SPELLINGS[name]:
        for text in TRICKY:
            assert native.count_pretokens(name, [text]) == _findall(spelling, text), (spelling, text)


@needs_native
@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=300, deadline=None)
@given(data=st.data(), text=texts)
def test_equals_the_regex_on_random_unicode(name: str, data: st.DataObject, text: str) -> None:
    spelling = data.draw(st.sampled_from(SPELLINGS[name]))
    assert native.count_pretokens(name, [text]) == _findall(spelling, text)


@needs_native
@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=300, deadline=None)
@given(
    data=st.data(),
    runs=st.lists(
        st.one_of(
            st.text(alphabet=" \t\r\n\x0b\x0c\x85\u00a0\u2028\u3000", min_size=1, max_size=6),
            st.text(alphabet="0123456789٣½", min_size=1, max_size=8),
            st.sampled_from(["a", "A", "'s", "'S", "'LL", "'", "!", "/", "\u0301", "e\u0301", "日", "ǅ"]),
        ),
        max_size=20,
    ).map("".join),
)
def test_whitespace_newline_digit_and_apostrophe_runs(name: str, data: st.DataObject, runs: str) -> None:
    spelling = data.draw(st.sampled_from(SPELLINGS[name]))
    assert native.count_pretokens(name, [runs]) == _findall(spelling, runs)


@needs_native
def test_qwen35_classes_every_code_point_as_the_regex_does() -> None:
    # Qwen 3.5's is the one pattern with classes of its own ([\p{L}\p{M}], [^\s\p{L}\p{M}\p{N}]).
    text = "".join(
        context.format(chr(c))
        for c in range(0x110000)
        if not 0xD800 <= c < 0xE000
        for context in (CONTEXTS if c < 0x10000 else CONTEXTS[:3])
    )
    got = native.count_pretokens("qwen35", [text])
    assert got is not None
    expected = _findall(MODEL_PATTERNS["qwen35"], text)
    if got != expected:
        wrong = [t for t in got[0].keys() | expected[0].keys() if got[0].get(t) != expected[0].get(t)]
        assert wrong[:10] == [] and got[1] == expected[1]


@pytest.mark.parametrize("model", ["llama3", "qwen2", "qwen35", "nemo"])
def test_training_on_a_models_pattern_counts_on_native_threads(model: str) -> None:
    expected = "threads" if native.backend() == "native" else "processes"
    assert counting_path(workers=2, pattern=MODEL_PATTERNS[model], plain_text_files=True) == expected


@pytest.mark.parametrize("model", ["llama3", "qwen35", "nemo"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_chunk_counter_counts_a_models_pattern_the_same_with_either_backend(backend: str, model: str) -> None:
    pattern = MODEL_PATTERNS[model]
    text = "it's 2024 <s>  Hello\n\n world<s><s>日本語 'LL x CamelCase'S 1234567 e\u0301!\u0301 \r\n  "
    with use_backend(backend):
        counter = ChunkCounter(pattern=pattern, special_tokens=["<s>"], policy=InvalidUtf8Policy.ERROR)
        counter.count_text(text, continues_document=True)
    # The native kernel counts into its table: the model's pattern has a native scanner.
    assert (counter.table is None) == (backend == "python")
    tokens = [t for part in text.split("<s>") if part for t in regex.findall(pattern, part)]
    assert dict(counter.counts) == dict(Counter(tokens))
    assert counter.totals.pretokens == len(tokens)
