"""The fast pre-tokenizer finds exactly what ``regex.findall`` with the preset finds."""

from __future__ import annotations

import re

import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_studio.engine.pretokenize.patterns import ASCII_PATTERNS, PATTERNS
from bpe_studio.engine.pretokenize.split import Pretokenizer

# Characters that decide pre-token boundaries: letters of both cases, digits, apostrophes and contraction
# letters, punctuation, every ASCII whitespace character (and the ASCII controls \x1c-\x1f, which str.isspace
# counts as whitespace but the patterns do not), and "/" (special in o200k).
ASCII_TRICKY = (
    "aAzZsStTdDmMlLvVeErR019'\"/.,!?-_()[]{}<>@#$%^&*+=~`|\\;: \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x00\x7f"
)
UNICODE_TRICKY = "éÉßſK日本語😀👍🏽\u00a0\u3000\u2028\u0085\u200b\u0301ǅʰ²½Ⅷ٣"

ascii_text = st.text(alphabet=st.sampled_from(ASCII_TRICKY), max_size=60) | st.text(
    alphabet=st.characters(max_codepoint=127), max_size=60
)
mixed_text = st.lists(
    st.one_of(
        ascii_text, st.text(alphabet=st.sampled_from(ASCII_TRICKY + UNICODE_TRICKY)), st.text(max_size=8)
    ),
    max_size=8,
).map("".join)


@settings(max_examples=600, deadline=None)
@given(st.sampled_from(sorted(PATTERNS)), ascii_text)
def test_ascii_twins_equal_the_presets_on_ascii(name: str, text: str) -> None:
    assert re.compile(ASCII_PATTERNS[name]).findall(text) == regex.compile(PATTERNS[name]).findall(text)


@settings(max_examples=600, deadline=None)
@given(st.sampled_from(sorted(PATTERNS)), mixed_text)
def test_pretokenizer_equals_regex_findall(name: str, text: str) -> None:
    assert Pretokenizer(name).findall(text) == regex.compile(PATTERNS[name]).findall(text)


def test_custom_pattern_uses_regex() -> None:
    assert Pretokenizer(r"\p{L}+|\s+").findall("héllo wörld!") == ["héllo", " ", "wörld"]
