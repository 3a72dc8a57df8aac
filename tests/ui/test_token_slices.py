"""The playground worker's bulk operations on a long text go SLICE items per call into C (each such call holds
Python's lock, and the GUI thread waits for it: issue 21.1, 400,000 Chinese characters). Cut in slices,
their results are those of the single calls they replace, wherever the cuts fall."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_studio.ui.present import token_copy, token_layout
from bpe_studio.ui.present.token_copy import ids_text
from bpe_studio.ui.present.token_layout import IntArray, join_in_slices, word_count
from bpe_studio.ui.widgets import token_text
from bpe_studio.ui.widgets.token_text import with_label_breaks

#: A small slice, so that short examples cross many cuts.
SMALL = 3


@pytest.fixture
def small_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(token_layout, "SLICE", SMALL)
    monkeypatch.setattr(token_text, "SLICE", SMALL)


@given(parts=st.lists(st.text(max_size=3), max_size=20), separator=st.sampled_from(["", ", ", ",\n"]))
def test_join_in_slices_is_join(parts: list[str], separator: str) -> None:
    token_layout.SLICE, keep = SMALL, token_layout.SLICE
    try:
        assert join_in_slices(parts, separator) == separator.join(parts)
    finally:
        token_layout.SLICE = keep


@pytest.mark.usefixtures("small_slices")
@pytest.mark.parametrize("values", [[], [7], list(range(-5, 11)), [2**62, -(2**62), 0, 1]])
def test_int_array_in_slices(values: list[int]) -> None:
    assert IntArray(values) == values
    assert IntArray(iter(values)) == values
    assert IntArray(np.array(values, dtype=np.int64)) == values
    if all(abs(v) < 2**31 for v in values):
        assert IntArray(np.array(values, dtype=np.int32)) == values


@settings(max_examples=200)
@given(text=st.text(alphabet=st.sampled_from(["a", "b", " ", "\n", "\u3000", "我", "们", "é"]), max_size=30))
def test_word_count_in_slices(text: str) -> None:
    token_layout.SLICE, keep = SMALL, token_layout.SLICE
    try:
        found = word_count(text)
    finally:
        token_layout.SLICE = keep
    assert found == word_count(text)
    words = text.split()
    if not any(ch in "我们" for ch in text):
        assert found == len(words)


def reference_ids_text(ids: list[int], per_line: int) -> str:
    """The JSON list, a line break instead of the space after every ``per_line``-th id (the former way)."""
    chars = list(json.dumps(ids))
    position = 0
    for n, token_id in enumerate(ids[:-1], 1):
        position += 1 + len(str(token_id))  # "[" or " ", then the id; chars[position] is its ","
        if n % per_line == 0:
            chars[position + 1] = "\n"
        position += 1
    return "".join(chars)


@given(ids=st.lists(st.integers(0, 200_000), max_size=40))
def test_ids_text_in_slices(ids: list[int]) -> None:
    keep = token_copy.IDS_PER_LINE, token_layout.SLICE
    token_copy.IDS_PER_LINE, token_layout.SLICE = 4, SMALL
    try:
        found = ids_text(ids)
    finally:
        token_copy.IDS_PER_LINE, token_layout.SLICE = keep
    assert found.text == (reference_ids_text(ids, 4) if ids else "")
    assert [found.text[a:b] for a, b in zip(found.starts, found.ends, strict=True)] == [str(i) for i in ids]


@pytest.mark.usefixtures("small_slices")
@pytest.mark.parametrize(
    "labels",
    [
        ["a", "b", "<0xE2>"],
        ["我们", "<|endoftext|>", "·world", "🙃", "x"],
        ["<0xE4>"] * 9,
        ["🙃🙃", "a-b", "c"],
    ],
)
def test_with_label_breaks_in_slices(labels: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    text = "".join(labels)
    starts, ends, position = [], [], 0
    for label in labels:
        starts.append(position)
        position += len(label.encode("utf-16-le")) // 2
        ends.append(position)
    sliced = with_label_breaks(text, starts, ends)
    monkeypatch.setattr(token_text, "SLICE", 1 << 30)
    assert sliced == with_label_breaks(text, starts, ends)
    assert sliced[0].replace(token_text.LABEL_BREAK, "").replace(token_text.LABEL_JOIN, "") == text
