"""A tokenizer.json's vocab and merges are read in C-speed passes (``hf._byte_level_vocab``,
``hf._byte_level_merges``) and a tokenizer's merges ranked so too (``Tokenizer._rank_merges``): the same
tables as one entry at a time, and anything malformed left to the one-by-one reading that names it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_studio.engine import Tokenizer
from bpe_studio.engine.bytes_unicode import bytes_to_text, text_to_bytes
from bpe_studio.engine.formats.hf import _byte_level_merges, _byte_level_vocab

_TOKENS = st.lists(st.binary(min_size=1, max_size=6), min_size=1, max_size=40, unique=True)


@settings(max_examples=200, deadline=None)
@given(_TOKENS, st.data())
def test_vocab_and_merges_equal_the_one_by_one_reading(tokens: list[bytes], data: st.DataObject) -> None:
    ids = data.draw(st.permutations(range(len(tokens))))
    raw = {bytes_to_text(t): i for t, i in zip(tokens, ids, strict=True)}
    assert _byte_level_vocab(raw, {}) == {i: text_to_bytes(key) for key, i in raw.items()}
    pairs = data.draw(st.lists(st.tuples(st.sampled_from(tokens), st.sampled_from(tokens)), min_size=1))
    as_strings = [f"{bytes_to_text(a)} {bytes_to_text(b)}" for a, b in pairs]
    as_lists = [[bytes_to_text(a), bytes_to_text(b)] for a, b in pairs]
    assert _byte_level_merges(as_strings) == _byte_level_merges(as_lists) == pairs


def test_special_tokens_in_the_vocab_are_their_utf8() -> None:
    raw = {"Ġthe": 0, "<|endoftext|>": 1, "a": 2}
    assert _byte_level_vocab(raw, {"<|endoftext|>": 1}) == {0: b" the", 1: b"<|endoftext|>", 2: b"a"}


@pytest.mark.parametrize(
    "raw",
    [{"a b": 0}, {"a": -1}, {"a": True}, {"a": 0, "b": 0}, {"é€": 0}, {"a": "0"}],
    ids=["space", "negative", "bool", "twice", "outside", "string id"],
)
def test_a_malformed_vocab_is_left_to_the_slow_reading(raw: dict[str, object]) -> None:
    assert _byte_level_vocab(raw, {}) is None


@pytest.mark.parametrize(
    "raw",
    [["a b c"], ["ab"], [["a"]], [["a", 1]], ["a €"], [1], ["a b", ["a", "b"]]],
    ids=["three", "one", "short list", "number", "outside", "not text", "mixed"],
)
def test_malformed_merges_are_left_to_the_slow_reading(raw: list[object]) -> None:
    assert _byte_level_merges(raw) is None


def test_ranking_keeps_a_pair_listed_twice_at_its_first_rank() -> None:
    base = {i: bytes([i]) for i in range(256)}
    tok = Tokenizer(base | {256: b"ab", 257: b"abc"}, [(b"a", b"b"), (b"ab", b"c"), (b"a", b"b")])
    ranks, new_chars = tok._rank_tables()
    assert ranks == {chr(97) + chr(98): 0, chr(256) + chr(99): 1}
    assert new_chars == [chr(256), chr(257), chr(256)]
    assert tok.encode("abc") == [257]
    with pytest.raises(ValueError, match=r"merge 1 \(b'x', b'y'\) uses or makes b'xy'"):
        Tokenizer(base | {256: b"ab"}, [(b"a", b"b"), (b"x", b"y")])
    assert Tokenizer(base | {256: b"ab"}, iter([(b"a", bytearray(b"b"))])).merges == ((b"a", b"b"),)


def _vocab_one_by_one(raw: dict[str, int], specials: dict[str, int]) -> dict[int, bytes]:
    """_byte_level_vocab as it was, one key at a time: a special listed under its own id is its UTF-8."""
    return {
        i: key.encode("utf-8") if specials.get(key) == i else text_to_bytes(key) for key, i in raw.items()
    }


@settings(max_examples=200, deadline=None)
@given(_TOKENS, st.data())
def test_specials_in_the_vocab_read_as_one_by_one_in_the_same_order(
    tokens: list[bytes], data: st.DataObject
) -> None:
    ids = data.draw(st.permutations(range(len(tokens))))
    raw = {bytes_to_text(t): i for t, i in zip(tokens, ids, strict=True)}
    # Specials: some vocab keys under their own id, some under another id, some not in the vocab at all.
    keys = data.draw(st.lists(st.sampled_from(sorted(raw)), unique=True, max_size=5))
    specials = {key: raw[key] if data.draw(st.booleans()) else raw[key] + 1000 for key in keys}
    specials["<|not in the vocab|>"] = 7
    found = _byte_level_vocab(raw, specials)
    assert found is not None
    expected = _vocab_one_by_one(raw, specials)
    assert list(found.items()) == list(expected.items())
