"""Encoding and decoding: exact against tiktoken, the CS336 reference ids and the slow reference encoder."""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_studio.engine import (
    DisallowedSpecialTokenError,
    Tokenizer,
    TokenSpan,
    UnknownTokenIdError,
    native,
)
from bpe_studio.engine.config import MAX_VOCAB_SIZE
from bpe_studio.engine.encoding import tokenizer as tokenizer_module

from ..backends import BACKENDS, needs_native, use_backend
from ..reference_encoder import (
    SAMPLE_TEXTS,
    SPECIAL,
    gpt2_tokenizer,
    make_tiktoken_cache,
    merge_word,
    reference_encode,
    trained_tokenizer,
)

PATTERNS = ("gpt2", "cl100k", "o200k")

# Characters around which pre-tokenization and merging go wrong if anything does.
_PIECES = [
    *"aAbeEhlorstTxyzé日本😀🙃ßÆΣσ\u0301",
    *"0123456789٣",
    *" \t\n\r\x0b\x0c\u00a0\u2003\u3000\x1c\x85",
    *"',.!?-_/<|>()[]{}\"",
    "'s",
    "'ll",
    "'LL",
    "'ve",
    "  ",
    "\n\n",
    "\r\n",
    " the",
    " hello",
    "ing",
    "HTTPServer",
    "camelCase",
    SPECIAL,
    "<|endof",
    "text|>",
]
texts = st.one_of(
    st.lists(st.sampled_from(_PIECES), max_size=40).map("".join),
    st.text(max_size=40),
)
fast = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module", params=BACKENDS)
def gpt2(cs336_data: Path, request: pytest.FixtureRequest) -> Tokenizer:
    """GPT-2's tokenizer with each encoder: the native one (rust/src/encode.rs) and the Python one."""
    with use_backend(request.param):
        tok = Tokenizer(gpt2_tokenizer(cs336_data).vocab, gpt2_tokenizer(cs336_data).merges, [SPECIAL])
    assert tok.backend == request.param
    return tok


@pytest.fixture(scope="module")
def tiktoken_gpt2(cs336_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """tiktoken's ``gpt2`` encoding, loaded offline from the shared files."""
    tiktoken = pytest.importorskip("tiktoken")
    folder = make_tiktoken_cache(cs336_data, tmp_path_factory.mktemp("tiktoken-cache"))
    before = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
    try:
        yield tiktoken.get_encoding("gpt2")
    finally:
        if before is None:
            os.environ.pop("TIKTOKEN_CACHE_DIR", None)
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = before


def _reference_cases(data: Path) -> list[tuple[str, dict[str, Any]]]:
    document = json.loads((data / "tiktoken_gpt2_reference_ids.json").read_text(encoding="utf-8"))
    return [(case["tests"][0], case) for case in document["cases"]]


def _case_text(data: Path, case: dict[str, Any]) -> str:
    source = case["input"]
    if "literal" in source:
        return str(source["literal"])
    # As the reference was made: text mode, universal newlines.
    return (data / source["file"]).read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------- GPT-2 exactness


def test_gpt2_matches_reference_ids(gpt2: Tokenizer, cs336_data: Path) -> None:
    cases = _reference_cases(cs336_data)
    assert len(cases) >= 10
    for name, case in cases:
        text = _case_text(cs336_data, case)
        ids = gpt2.encode(text, allowed_special=set(case["allowed_special"]))
        assert ids == case["ids"], name
        assert gpt2.decode(ids) == text, name
        allowed = set(case["allowed_special"])
        assert list(gpt2.encode_iterable(text.splitlines(keepends=True), allowed_special=allowed)) == ids, (
            name
        )
        if "file" in case["input"]:
            with open(cs336_data / case["input"]["file"], encoding="utf-8") as lines:
                assert list(gpt2.encode_iterable(lines, allowed_special=allowed)) == ids, name


def test_special_token_fixtures(gpt2: Tokenizer, cs336_data: Path) -> None:
    trailing = (cs336_data / "special_token_trailing_newlines.txt").read_text(encoding="utf-8")
    assert gpt2.encode(trailing) == [50256, 628]
    double = (cs336_data / "special_token_double_newlines_non_whitespace.txt").read_text(encoding="utf-8")
    assert gpt2.encode(double) == [50256, 198, 198, 33407, 0]


def test_overlapping_special_tokens_match_longest_first(cs336_data: Path) -> None:
    base = gpt2_tokenizer(cs336_data)
    double = SPECIAL + SPECIAL
    tok = Tokenizer(dict(base.vocab), list(base.merges), [SPECIAL, double])
    assert tok.special_tokens == {SPECIAL: 50256, double: 50257}  # the new one is appended
    text = f"Hello, how {double} are you?{SPECIAL}"
    ids = tok.encode(text)
    assert ids.count(50257) == 1 and ids.count(50256) == 1
    assert tok.decode(ids) == text
    assert tok.encode(SPECIAL * 3) == [50257, 50256]


def test_matches_tiktoken_on_fixture_files(gpt2: Tokenizer, tiktoken_gpt2: Any, cs336_data: Path) -> None:
    for name in ("corpus.en", "tinystories_sample.txt", "german.txt", "address.txt"):
        text = (cs336_data / name).read_text(encoding="utf-8")
        assert gpt2.encode(text) == tiktoken_gpt2.encode(text, allowed_special="all"), name
        assert gpt2.encode_ordinary(text) == tiktoken_gpt2.encode_ordinary(text), name
    for text in SAMPLE_TEXTS:
        assert gpt2.encode(text) == tiktoken_gpt2.encode(text, allowed_special="all")


@fast
@given(text=texts)
def test_matches_tiktoken(gpt2: Tokenizer, tiktoken_gpt2: Any, text: str) -> None:
    ids = gpt2.encode(text)
    assert ids == tiktoken_gpt2.encode(text, allowed_special="all")
    assert gpt2.encode_ordinary(text) == tiktoken_gpt2.encode_ordinary(text)
    assert gpt2.decode(ids) == text
    assert gpt2.decode_bytes(ids) == text.encode("utf-8")


def test_lone_surrogates_are_encoded_as_tiktoken_does(gpt2: Tokenizer, tiktoken_gpt2: Any) -> None:
    for text in ("a\ud83d\ude43b", "x\udc00y", "\ud800"):
        assert gpt2.encode(text) == tiktoken_gpt2.encode(text)
        assert list(gpt2.encode_iterable([text[:2], text[2:]])) == gpt2.encode(text)
    assert gpt2.encode("\ud83d\ude43") == gpt2.encode("🙃")


# ------------------------------------------------------------------------------- trained tokenizers


@pytest.mark.parametrize("pattern", PATTERNS)
def test_trained_matches_reference_on_samples(cs336_data: Path, pattern: str) -> None:
    tok = trained_tokenizer(cs336_data, pattern)
    corpus = (cs336_data / "corpus.en").read_text(encoding="utf-8")[:20000]
    for text in (*SAMPLE_TEXTS, corpus):
        expected = reference_encode(text, tok.vocab, tok.merges, tok.special_tokens, pattern)
        assert tok.encode(text) == expected
        assert tok.decode(expected) == text


@fast
@given(text=texts, pattern=st.sampled_from(PATTERNS))
def test_trained_matches_reference(cs336_data: Path, text: str, pattern: str) -> None:
    tok = trained_tokenizer(cs336_data, pattern)
    ids = tok.encode(text)
    assert ids == reference_encode(text, tok.vocab, tok.merges, tok.special_tokens, pattern)
    assert tok.decode(ids) == text


@fast
@given(text=texts)
def test_long_word_merging_matches_reference(
    cs336_data: Path, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    # Send every pre-token through the heap-based merge used for long pre-tokens.
    tok = trained_tokenizer(cs336_data, "gpt2")
    with monkeypatch.context() as patch:
        patch.setattr(tokenizer_module, "_LONG_WORD", 1)
        fresh = Tokenizer(tok.vocab, tok.merges, tok.special_tokens)
        ids = fresh.encode(text)
    assert ids == reference_encode(text, tok.vocab, tok.merges, tok.special_tokens)


def test_long_pretokens(cs336_data: Path, gpt2: Tokenizer) -> None:
    tok = trained_tokenizer(cs336_data, "gpt2")
    for text in ("a" * 3000, "the" * 700 + " " * 900 + "x", "1234567890" * 200, "🙃" * 400):
        assert tok.encode(text) == reference_encode(text, tok.vocab, tok.merges, tok.special_tokens)
        assert gpt2.decode(gpt2.encode(text)) == text


def test_merge_reusing_existing_bytes() -> None:
    """A merge may yield bytes that already have an id (the trainer reuses it); ranks stay list indices."""
    vocab = {i: bytes([i]) for i in range(256)}
    vocab |= {256: b"ab", 257: b"bc", 258: b"abc", 259: b"abcab"}
    merges = [(b"a", b"b"), (b"b", b"c"), (b"ab", b"c"), (b"a", b"bc"), (b"abc", b"ab")]
    tok = Tokenizer(vocab, merges, pattern=r"\S+|\s+")
    for text in ("abc", "abcab", "aabcbc abcabc babc", "bcab"):
        assert tok.encode(text) == reference_encode(text, vocab, merges, {}, r"\S+|\s+")
    assert tok.encode("abc") == [258]


def test_bytes_with_other_ids_and_gaps() -> None:
    # Single bytes under shuffled ids, an unused id range: the ids of the file are kept.
    vocab = {1000 + (b * 7) % 256: bytes([b]) for b in range(256)}
    vocab[5000] = b"hi"
    tok = Tokenizer(vocab, [(b"h", b"i")], ["<s>"])
    assert tok.special_tokens == {"<s>": 5001}
    ids = tok.encode("hi<s>h")
    assert ids == [5000, 5001, 1000 + (ord("h") * 7) % 256]
    assert tok.decode(ids) == "hi<s>h"


# ---------------------------------------------------------------------------------------- streaming


def _cuts(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts})
    bounds = [0, *points, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=texts,
    cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=12),
    pattern=st.sampled_from(PATTERNS),
)
def test_encode_iterable_equals_encode_for_every_chunking(
    cs336_data: Path, monkeypatch: pytest.MonkeyPatch, text: str, cuts: list[int], pattern: str
) -> None:
    tok = trained_tokenizer(cs336_data, pattern)
    chunks = _cuts(text, cuts)
    with monkeypatch.context() as patch:
        patch.setattr(tokenizer_module, "_STREAM_BLOCK", 1)  # work after every chunk
        streamed = list(tok.encode_iterable(chunks))
    assert streamed == tok.encode(text)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=texts,
    cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=12),
    pattern=st.sampled_from([r"[a-z]+", r"(\w)+|\s+|[^\w\s]+"]),
)
def test_encode_iterable_custom_patterns(
    cs336_data: Path, monkeypatch: pytest.MonkeyPatch, text: str, cuts: list[int], pattern: str
) -> None:
    # A pattern that skips characters, and one with a capture group (findall would return the group).
    base = trained_tokenizer(cs336_data, "gpt2")
    tok = Tokenizer(base.vocab, base.merges, base.special_tokens, pattern=pattern)
    assert tok.encode(text) == reference_encode(text, tok.vocab, tok.merges, tok.special_tokens, pattern)
    with monkeypatch.context() as patch:
        patch.setattr(tokenizer_module, "_STREAM_BLOCK", 1)
        assert list(tok.encode_iterable(_cuts(text, cuts))) == tok.encode(text)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_encode_iterable_single_characters(
    cs336_data: Path, monkeypatch: pytest.MonkeyPatch, pattern: str
) -> None:
    tok = trained_tokenizer(cs336_data, pattern)
    text = "".join(SAMPLE_TEXTS) + (cs336_data / "tinystories_sample.txt").read_text(encoding="utf-8")
    monkeypatch.setattr(tokenizer_module, "_STREAM_BLOCK", 1)
    assert list(tok.encode_iterable(iter(text))) == tok.encode(text)


def test_encode_iterable_is_lazy(gpt2: Tokenizer) -> None:
    consumed = 0

    def lines() -> Iterator[str]:
        nonlocal consumed
        for i in range(1_000_000):
            consumed += 1
            yield f"line {i}: the quick brown fox jumps over the lazy dog\n"

    stream = gpt2.encode_iterable(lines())
    first = [next(stream) for _ in range(10)]
    assert first == gpt2.encode("line 0: the quick brown fox jumps over the lazy dog\nline 1: the")[:10]
    assert consumed < 10_000  # about one block of text, not the whole million lines
    stream.close()


def test_encode_iterable_holds_a_bounded_tail(gpt2: Tokenizer, monkeypatch: pytest.MonkeyPatch) -> None:
    # Record every buffer the stream encodes: none grows with the input.
    sizes: list[int] = []
    original = Tokenizer._encode_certain

    def spy(self: Tokenizer, buffer: str, *args: Any) -> Any:
        sizes.append(len(buffer))
        return original(self, buffer, *args)

    monkeypatch.setattr(Tokenizer, "_encode_certain", spy)
    text_line = "It's 12:00 -- time for tea!  Ünïcödé  \n"
    total = sum(1 for _ in gpt2.encode_iterable(text_line for _ in range(20_000)))
    assert total == len(gpt2.encode(text_line * 20_000))
    assert len(sizes) > 5 and max(sizes) < 2 * tokenizer_module._STREAM_BLOCK


def test_encode_iterable_rejects_disallowed_special(gpt2: Tokenizer) -> None:
    with pytest.raises(DisallowedSpecialTokenError):
        list(gpt2.encode_iterable(["abc <|endof", "text|> d"], allowed_special=set()))
    with pytest.raises(TypeError, match="str chunks"):
        list(gpt2.encode_iterable([b"bytes"]))  # type: ignore[list-item]


# ------------------------------------------------------------------------------------------ offsets


@fast
@given(text=texts)
def test_offsets(gpt2: Tokenizer, text: str) -> None:
    spans = gpt2.encode_with_offsets(text)
    assert [s.id for s in spans] == gpt2.encode(text)
    # Tokens in order cover the text: whole tokens exactly their characters; a run of partial tokens on
    # the same characters holds exactly their bytes.
    position = 0
    index = 0
    while index < len(spans):
        span = spans[index]
        assert span.start == position
        group = [span]
        end = span.end
        while index + len(group) < len(spans) and spans[index + len(group)].start < end:
            group.append(spans[index + len(group)])
            end = max(end, group[-1].end)
        assert b"".join(gpt2.token_bytes(s.id) for s in group) == text[position:end].encode("utf-8")
        assert all(s.partial for s in group) or len(group) == 1
        position = end
        index += len(group)
    assert position == len(text)


def test_offsets_mark_partial_characters(gpt2: Tokenizer) -> None:
    spans = gpt2.encode_with_offsets("a🙃<|endoftext|>é")
    assert spans[0] == TokenSpan(64, 0, 1, False)
    assert [(s.start, s.end, s.partial) for s in spans[1:4]] == [(1, 2, True)] * 3
    assert spans[4] == TokenSpan(50256, 2, 15, False)
    assert all(not s.partial for s in gpt2.encode_with_offsets("plain ascii text, no partial tokens"))
    assert [s.partial for s in gpt2.encode_with_offsets(" ü")] == [True, True]  # " \\xc3" + "\\xbc"


# ----------------------------------------------------------------------------------- special tokens


def test_allowed_and_disallowed_special_follow_tiktoken(gpt2: Tokenizer, tiktoken_gpt2: Any) -> None:
    text = f"a {SPECIAL} b"
    assert gpt2.encode(text) == tiktoken_gpt2.encode(text, allowed_special="all")
    with pytest.raises(DisallowedSpecialTokenError) as caught:
        gpt2.encode(text, allowed_special=set())
    error = caught.value
    assert isinstance(error, ValueError) and error.token == SPECIAL and error.position == 2
    assert "allowed_special" in str(error) and "disallowed_special=()" in str(error)
    with pytest.raises(ValueError):
        tiktoken_gpt2.encode(text)  # tiktoken's default, the same as ours with allowed_special=set()
    ordinary = gpt2.encode(text, allowed_special=set(), disallowed_special=())
    assert ordinary == gpt2.encode_ordinary(text) == tiktoken_gpt2.encode(text, disallowed_special=())
    # Any string can be disallowed, as in tiktoken.
    with pytest.raises(DisallowedSpecialTokenError):
        gpt2.encode("x <b> y", disallowed_special={"<b>"})
    with pytest.raises(ValueError, match="allowed_special"):
        gpt2.encode(text, allowed_special="some")  # type: ignore[arg-type]


# ----------------------------------------------------------------------------------------- decoding


def test_decode(gpt2: Tokenizer) -> None:
    assert gpt2.decode([8582, 247]) == "\ufffd"  # the first two of 🙃's three bytes
    assert gpt2.decode_bytes([8582, 247, 225]) == "🙃".encode()
    assert gpt2.token_bytes(50256) == SPECIAL.encode()
    assert gpt2.decode(iter([15496, 995])) == "Hello world"
    assert gpt2.decode([]) == ""
    for bad in (50257, -1, 10**9):
        with pytest.raises(UnknownTokenIdError, match=f"token id {bad} is not in"):
            gpt2.decode([15496, bad])
        with pytest.raises(ValueError):
            gpt2.token_bytes(bad)
    with pytest.raises(KeyError):
        gpt2.decode_bytes(x for x in [1, 2, 99999999])
    assert gpt2.token_id("Hello") == 15496 and gpt2.token_id(b"\xff\xfe\xfd") is None


# ------------------------------------------------------------------------------------- construction


def test_cache_is_bounded(cs336_data: Path) -> None:
    base = trained_tokenizer(cs336_data, "gpt2")
    tok = Tokenizer(base.vocab, base.merges, base.special_tokens, cache_size=50)
    text = " ".join(f"w{i}x{i * 7}" for i in range(2000))
    ids = tok.encode(text)
    assert len(tok._cache) <= 50
    assert ids == base.encode(text)
    tok.clear_cache()
    assert len(tok._cache) == 0 and tok.cache_size == 50


def test_constructor_errors() -> None:
    vocab = {i: bytes([i]) for i in range(256)}
    with pytest.raises(ValueError, match="single byte"):
        Tokenizer({i: bytes([i]) for i in range(1, 256)}, [])
    with pytest.raises(ValueError, match="merge 0"):
        Tokenizer(vocab, [(b"a", b"b")])  # b"ab" is not a token
    with pytest.raises(ValueError, match="id 65"):
        Tokenizer(vocab, [], {"<s>": 65})
    with pytest.raises(ValueError, match="single string"):
        Tokenizer(vocab, [], "<s>")
    with pytest.raises(ValueError, match="twice"):
        Tokenizer(vocab, [], ["<s>", "<s>"])
    with pytest.raises(ValueError, match="pattern"):
        Tokenizer(vocab, [], pattern="(")
    with pytest.raises(ValueError, match="cache_size"):
        Tokenizer(vocab, [], cache_size=0)


def test_properties_and_from_result(cs336_data: Path) -> None:
    tok = trained_tokenizer(cs336_data, "cl100k")
    assert tok.vocab_size == 1000 and tok.pattern_name == "cl100k"
    assert tok.special_tokens == {SPECIAL: 998, SPECIAL + SPECIAL: 999}
    assert len(tok.merges) >= 1000 - 256 - 2
    with pytest.raises(TypeError):
        tok.vocab[5] = b"x"  # type: ignore[index]
    assert "1000 tokens" in repr(tok)


def test_merge_word_reference_sanity() -> None:
    merges = [(b"a", b"b"), (b"ab", b"ab")]
    assert merge_word(b"abab", merges) == [b"abab"]
    assert merge_word(b"aab", merges) == [b"a", b"ab"]


class _Id(int):
    """An int subclass: not a plain vocab key (checked one by one, and stored as an int)."""


class _Token(bytes):
    """A bytes subclass: not a plain vocab value (stored as bytes)."""


_keys = st.one_of(
    st.integers(0, MAX_VOCAB_SIZE - 1),
    st.integers(-3, MAX_VOCAB_SIZE + 3),
    st.booleans(),
    st.integers(0, 9).map(_Id),
    st.sampled_from([2**64, -(2**64), "7", 1.0]),
)
_values = st.one_of(
    st.binary(max_size=3), st.binary(max_size=3).map(_Token), st.sampled_from(["a", bytearray(b"a"), 3])
)


@needs_native
@settings(max_examples=300, deadline=None)
@given(vocab=st.dictionaries(_keys, _values, max_size=6))
def test_the_native_vocab_check_takes_what_the_python_one_takes(vocab: dict[Any, Any]) -> None:
    """The kernel checks a vocab in one pass (issue 20); the same vocabs are plain (returned as they are)
    as by Python's passes, and any other is checked item by item, with the same table or error either way."""
    python_plain = (
        set(map(type, vocab)) <= {int}
        and set(map(type, vocab.values())) <= {bytes}
        and (not vocab or (min(vocab) >= 0 and max(vocab) < MAX_VOCAB_SIZE))
    )
    assert native.plain_vocab(vocab, MAX_VOCAB_SIZE) in (python_plain, None)
    found = []
    for backend in ("native", "python"):
        with use_backend(backend):
            try:
                found.append(Tokenizer._checked_vocab(vocab))
            except ValueError as exc:
                found.append(str(exc))
    assert all(f == found[0] and type(f) is type(found[0]) for f in found)
