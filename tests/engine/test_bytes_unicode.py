"""GPT-2's byte <-> character mapping: bytes_to_text (a translate over latin-1, issue 22) spells every byte as
the mapping's table does, and text_to_bytes inverts it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bpe_studio.engine.bytes_unicode import byte_to_char, bytes_to_text, text_to_bytes


def test_every_byte_is_spelled_by_the_table() -> None:
    table = byte_to_char()
    assert [bytes_to_text(bytes([b])) for b in range(256)] == list(table)
    assert bytes_to_text(bytes(range(256))) == "".join(table)
    assert bytes_to_text(b"") == ""
    assert bytes_to_text(b" hi\n") == "ĠhiĊ"


@given(st.binary(max_size=64))
def test_spelling_is_per_byte_and_reversible(data: bytes) -> None:
    table = byte_to_char()
    assert bytes_to_text(data) == "".join(table[b] for b in data)
    assert text_to_bytes(bytes_to_text(data)) == data
