"""The studio file's JSON text (``formats/studio.py``'s ``indented_json``) is ``json.dumps(value,
ensure_ascii=False, indent=1)`` on any JSON value, the same bytes as the files written before (issue 22:
:mod:`json` encodes in Python with an indent, 150 ms and 24 MB for a 32k tokenizer)."""

from __future__ import annotations

import json
import math
import tracemalloc
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_studio.engine.bytes_unicode import bytes_to_text
from bpe_studio.engine.formats.studio import dumps_studio, indented_json

scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text()
values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4)
        | st.tuples(children, children)
        | st.dictionaries(st.text(max_size=5), children, max_size=4)
        | st.dictionaries(
            st.integers() | st.booleans() | st.floats(allow_nan=False) | st.none(), children, max_size=3
        )
    ),
    max_leaves=30,
)


@settings(max_examples=1000, deadline=None)
@given(values)
def test_the_text_is_json_dumps_with_an_indent_of_one(value: Any) -> None:
    assert indented_json(value) == json.dumps(value, ensure_ascii=False, indent=1)


def test_lists_of_one_kind_and_edge_values() -> None:
    for value in (
        ["a", 'b\n"\\', "\u2028é🙃", ""],
        [1, -2, 10**30, 0],
        [1, True, 2.5, None],
        {"x": [], "y": {}, "z": [[]], "w": [{}]},
        {"nan": math.nan, "inf": [math.inf, -math.inf]},
        {1: "int key", None: "null key", 2.5: "float key"},
        "\ud800",
        [],
        {},
    ):
        assert indented_json(value) == json.dumps(value, ensure_ascii=False, indent=1)


def test_a_value_json_cannot_spell_is_refused_as_json_refuses_it() -> None:
    for value in ({"a": [object()]}, [b"bytes"]):
        try:
            json.dumps(value, ensure_ascii=False, indent=1)
        except TypeError as exc:
            expected = str(exc)
        try:
            indented_json(value)
        except TypeError as exc:
            assert str(exc) == expected
        else:
            raise AssertionError("no TypeError")


def test_a_large_tokenizer_is_written_without_a_string_per_token() -> None:
    # json's indented encoder made a small string per token: 24 MB at the peak for 32k tokens.
    vocab = {i: bytes([i]) for i in range(256)} | {256 + i: b"tok%d" % i for i in range(32_000)}
    merges = [(b"t", b"ok%d" % i) for i in range(32_000)]
    training = {"merge_counts": list(range(32_000)), "stats": {"bytes": 10, "ratio": 0.5}}
    tracemalloc.start()
    try:
        text = dumps_studio(vocab=vocab, merges=merges, special_tokens={}, pattern="gpt2", training=training)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert json.loads(text)["merges"][5] == f"{bytes_to_text(b't')} {bytes_to_text(b'ok5')}"
    assert peak < 12 * len(text)
