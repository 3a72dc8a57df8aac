"""The newline boundary (bpe_studio/engine/pretokenize/boundary.py) is one rule in every form: the ``str``
split, the ``bytes`` pattern of training's chunk boundaries and the last-boundary search of streaming encode
give the same positions on random text, and those of the case table that rust/src/encode.rs ``safe_cut``
(the fourth writing of the rule) is to be tested against."""

from __future__ import annotations

import json
import re
import string
from itertools import accumulate
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_studio.engine.pretokenize.boundary import (
    NEWLINE_BOUNDARY_BYTES,
    PRESET_BOUNDARIES,
    last_newline_boundary,
    may_hold_preset_boundary,
    split_at_newline_boundaries,
)

TABLE = Path(__file__).resolve().parents[2] / "data" / "newline_boundaries.json"
BYTES_BOUNDARY = re.compile(NEWLINE_BOUNDARY_BYTES)

texts = st.lists(
    st.one_of(
        st.sampled_from(["\n", "\n\n", "\r\n", " \n", ".\n", "a\n", "é\n", "\t\n", "\x7f\n", "~\n", "日\n"]),
        st.sampled_from(["A", "z", "é", "1", "_", "'", " ", "\n", "x.", "ab"]),
        st.text(max_size=3),
    ),
    max_size=30,
).map("".join)


def _by_the_words(text: str) -> list[int]:
    """The rule as its definition says it: after a printable ASCII character and "\\n", before an ASCII
    letter."""
    return [
        p
        for p in range(2, len(text))
        if "!" <= text[p - 2] <= "~" and text[p - 1] == "\n" and text[p] in string.ascii_letters
    ]


def _from_split(text: str) -> list[int]:
    return list(accumulate(len(piece) for piece in split_at_newline_boundaries(text)))[:-1]


def _from_bytes(text: str) -> list[int]:
    data = text.encode("utf-8", "surrogatepass")
    chars = {len(text[:i].encode("utf-8", "surrogatepass")): i for i in range(len(text) + 1)}
    return [chars[m.start()] for m in BYTES_BOUNDARY.finditer(data)]


@settings(max_examples=400, deadline=None)
@given(text=texts)
def test_every_form_of_the_rule_finds_the_same_positions(text: str) -> None:
    expected = _by_the_words(text)
    assert _from_split(text) == expected
    assert "".join(split_at_newline_boundaries(text)) == text
    assert _from_bytes(text) == expected
    for limit in range(-1, len(text) + 2):
        assert last_newline_boundary(text, limit) == max((p for p in expected if p <= limit), default=0)


def test_the_bytes_rule_is_the_first_chunk_boundary_of_training() -> None:
    assert PRESET_BOUNDARIES[0] == NEWLINE_BOUNDARY_BYTES


def test_the_python_rule_gives_the_table_that_the_rust_safe_cut_is_held_to() -> None:
    # rust/src/encode.rs safe_cut(text, at): the first boundary at or after byte `at`, or the text's length.
    # No public call shows where the native encoder cuts its blocks (a cut there changes no id, and the
    # blocks are 1 MiB), so the Rust side is to be tested against the same table in the crate's unit tests.
    cases = json.loads(TABLE.read_text(encoding="utf-8"))["cases"]
    assert len(cases) > 20
    for case in cases:
        data = case["text"].encode("utf-8")
        found = BYTES_BOUNDARY.search(data, case["at"]) if case["at"] < len(data) else None
        assert (found.start() if found else len(data)) == case["cut"], case
        # The same answer from the str forms, in characters.
        text, at = case["text"], len(data[: case["at"]].decode("utf-8", "ignore"))
        positions = [p for p in _from_split(text) if p >= at]
        assert (len(text[: positions[0]].encode("utf-8")) if positions else len(data)) == case["cut"], case


_ANY_PRESET_BOUNDARY = re.compile(b"|".join(PRESET_BOUNDARIES))

# Bytes of each class, and neighbours that form boundaries (the quick test must never hide one).
_BYTES = st.sampled_from(
    [b"a", b"Z", b"7", b" ", b"\n", b"\t", b".", b"'", b"\x00", *(c.encode() for c in "é中\u00a0\u3000")]
)


@settings(max_examples=400, deadline=None)
@given(pieces=st.lists(_BYTES, max_size=12), repeat=st.integers(1, 4))
def test_the_quick_test_never_hides_a_boundary(pieces: list[bytes], repeat: int) -> None:
    window = b"".join(piece * repeat for piece in pieces)
    inside = [m.start() for m in _ANY_PRESET_BOUNDARY.finditer(window) if 0 < m.start() < len(window)]
    if inside:
        assert may_hold_preset_boundary(window)


def test_stretches_of_one_class_hold_no_boundary() -> None:
    for window in (b"a" * 100, b"7" * 100, b" " * 100, b"\n" * 100, "中文字".encode() * 30):
        assert not may_hold_preset_boundary(window)
        assert not [m for m in _ANY_PRESET_BOUNDARY.finditer(window) if 0 < m.start() < len(window)]
