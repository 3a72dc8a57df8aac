"""The native scanners (rust/src/pretok*.rs) still equal the ``regex`` patterns on hostile shapes of text
(issue 18, item 1).

cl100k's and o200k's ``\\p{N}{1,3}`` looked for the end of the digit run at every group of three: quadratic
on a long number (85 s to train on 1 MB of digits). That they stay linear is checked without timing in the
crate's unit tests (rust/src/pretok.rs: the scanners count the characters they read, and that count must
stay a small multiple of the text's length on these same shapes); bench/scaling_scanners.py times n against
8n. Here the same shapes go through the public entry point, ``count_pretokens``, against the patterns.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_studio.engine import native
from bpe_studio.engine.pretokenize.patterns import MODEL_PATTERNS, SUPERWORD_PATTERN, compile_pattern

from ..backends import needs_native

pytestmark = needs_native

# Every scanner: the presets', then the models' (named as their patterns in MODEL_PATTERNS), and the
# superword split.
PRESETS = list(native.NATIVE_SCANNERS)
PATTERNS = {
    name: compile_pattern(SUPERWORD_PATTERN if name == "superbpe" else MODEL_PATTERNS.get(name, name))
    for name in PRESETS
}

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


def _check(preset: str, text: str) -> None:
    """The native pre-tokens of ``text`` are the pattern's, counted (the order is the crate's tests' part)."""
    expected = PATTERNS[preset].findall(text)
    assert native.count_pretokens(preset, [text]) == (dict(Counter(expected)), len(expected))


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("shape", list(SHAPES))
def test_hostile_shapes_split_as_the_pattern(preset: str, shape: str) -> None:
    _check(preset, SHAPES[shape](N))


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
def test_runs_of_any_length_split_as_the_pattern(runs: list[tuple[str, int]], preset: str) -> None:
    _check(preset, "".join(c * k for c, k in runs))
