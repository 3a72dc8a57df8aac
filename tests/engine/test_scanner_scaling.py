"""The native scanners (rust/src/pretok*.rs) stay linear on hostile shapes of text and still equal the
``regex`` patterns there (issue 18, item 1).

cl100k's and o200k's ``\\p{N}{1,3}`` looked for the end of the digit run at every group of three: quadratic
on a long number (85 s to train on 1 MB of digits). No timing here: the scanners count the characters they
read (``pretokens_with_work``), and that count must stay a small multiple of the text's length whatever its
shape; bench/scaling_scanners.py times n against 8n.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_studio.engine import native
from bpe_studio.engine.config import compile_pattern

from .backends import needs_native

pytestmark = needs_native

PRESETS = list(native.NATIVE_PRESETS)
PATTERNS = {name: compile_pattern(name) for name in PRESETS}

#: Characters read per character of text (plus a few per text) that a linear scanner stays within; a
#: quadratic one reads about n/6 per character on the shapes below (over 800 at n = 5,000).
WORK_PER_CHAR = 8

N = 5_000

#: Text of about n characters in each hostile shape: one character repeated, long runs of digits,
#: whitespace, letters and punctuation, no ASCII, case changes that o200k splits on, one long line.
SHAPES = {
    "letters": lambda n: "a" * n,
    "upper": lambda n: "A" * n,
    "digits": lambda n: "7" * n,
    "digits then letter": lambda n: "7" * n + "x",
    "space digits": lambda n: " " + "7" * n,
    "spaces then letter": lambda n: " " * n + "x",
    "spaces at the end": lambda n: "x" + " " * n,
    "newlines": lambda n: "\n" * n,
    "space newline": lambda n: " \n" * (n // 2) + "x",
    "newline then spaces": lambda n: "\n" + " " * n + "x",
    "tabs and no-break spaces": lambda n: "\t\u00a0" * (n // 2) + "!",
    "punctuation": lambda n: "!" * n,
    "punctuation and slashes": lambda n: "!" + "/" * n,
    "contractions": lambda n: "'s" * (n // 2),
    "apostrophes": lambda n: "'" * n,
    "no ASCII": lambda n: "日" * n,
    "accents": lambda n: "é" * n,
    "marks": lambda n: "\u0301" * n,
    "letter and mark": lambda n: "A\u0301" * (n // 2),
    "mark and letter": lambda n: "\u0301A" * (n // 2),
    "camel": lambda n: "Aa" * (n // 2),
    "upper then caseless": lambda n: "A" * n + "日" + "!",
    "one line of words": lambda n: ("lorem ipsum 1234 dolor, sit! " * (n // 29 + 1))[:n],
}


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("shape", list(SHAPES))
def test_scanners_read_each_character_a_bounded_number_of_times(preset: str, shape: str) -> None:
    text = SHAPES[shape](N)
    pieces, work = native.pretokens_with_work(preset, text)
    assert pieces == PATTERNS[preset].findall(text)
    assert work <= WORK_PER_CHAR * (len(text) + 1), f"{work} characters read for {len(text)}"


# Runs of the characters that the patterns treat specially, in any order and length.
RUN_CHARS = [
    "a",
    "A",
    "s",
    "7",
    "\u0661",
    " ",
    "\n",
    "\r",
    "\t",
    "\u00a0",
    "!",
    "'",
    "/",
    "日",
    "é",
    "\u0301",
    "ǅ",
]
runs = st.lists(st.tuples(st.sampled_from(RUN_CHARS), st.integers(1, 400)), max_size=12)


@settings(max_examples=150, deadline=None)
@given(runs=runs, preset=st.sampled_from(PRESETS))
def test_runs_of_any_length_split_as_the_pattern_and_in_linear_work(
    runs: list[tuple[str, int]], preset: str
) -> None:
    text = "".join(c * k for c, k in runs)
    pieces, work = native.pretokens_with_work(preset, text)
    assert pieces == PATTERNS[preset].findall(text)
    assert work <= WORK_PER_CHAR * (len(text) + 1)


def test_an_unknown_preset_is_a_value_error() -> None:
    assert native._native is not None
    with pytest.raises(ValueError, match="no native pre-tokenizer"):
        native._native.pretokens_with_work("gpt5", "text", b"")
