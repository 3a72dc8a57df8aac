"""Bare ``.tiktoken`` files: OpenAI's are recognised by their SHA-256, others need a pattern; merges derived
as tiktoken applies them (GPT-2's 50,256 ranks are its 50,000 merges), encoding equal to tiktoken's."""

from __future__ import annotations

import base64
import functools
import hashlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_studio.engine import PATTERNS, FormatError, load, save
from bpe_studio.engine.encoding.rank_rule import derive_merges
from bpe_studio.engine.formats import tiktoken_format
from bpe_studio.engine.formats.tiktoken_format import (
    KNOWN_ENCODINGS,
    PatternRequiredError,
    known_encoding,
    sidecar_path,
)

from ..reference_encoder import gpt2_tokenizer, trained_tokenizer

_settings = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture(scope="module")
def gpt2_ranks(cs336_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """GPT-2's ranks as a bare ``.tiktoken`` file (no sidecar): byte for byte OpenAI's r50k_base file."""
    folder = tmp_path_factory.mktemp("ranks")
    path = save(gpt2_tokenizer(cs336_data), folder / "r50k_base.tiktoken", format="tiktoken")
    sidecar_path(path).unlink()
    return path


def _bare(tok: Any, path: Path) -> Path:
    saved = save(tok, path, format="tiktoken")
    sidecar_path(saved).unlink()
    return saved


def test_gpt2_ranks_are_recognised_as_r50k_with_its_50000_merges(gpt2_ranks: Path) -> None:
    assert known_encoding(gpt2_ranks.read_bytes()) == KNOWN_ENCODINGS["r50k_base"]
    tok = load(gpt2_ranks)
    assert len(tok.merges) == 50_000  # was 108,299: every split of a token into two tokens
    assert tok.vocab_size == 50_257
    assert tok.special_tokens == {"<|endoftext|>": 50256}
    assert tok.pattern_name == "gpt2"
    assert tok.encode("Hello world<|endoftext|>") == [15496, 995, 50256]


def test_each_known_encoding_gets_its_pattern_and_special_tokens(
    cs336_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stand a trained tokenizer's file in for each OpenAI file (its hash registered under that name)."""
    path = _bare(trained_tokenizer(cs336_data, "gpt2"), tmp_path / "t.tiktoken")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    # (Its first line stands in for theirs too: a file that begins otherwise is not hashed.)
    monkeypatch.setattr(tiktoken_format, "_OPENAI_HEAD", path.read_bytes().split(b"\n")[0] + b"\n")
    for name, encoding in KNOWN_ENCODINGS.items():
        monkeypatch.setitem(KNOWN_ENCODINGS, name, encoding.replaced(sha256=digest))
        tok = load(path)
        assert tok.pattern == PATTERNS[encoding.pattern], name
        assert dict(tok.special_tokens) == dict(encoding.special_tokens), name
        monkeypatch.setitem(KNOWN_ENCODINGS, name, encoding)


def test_an_unknown_bare_file_needs_a_pattern(cs336_data: Path, tmp_path: Path) -> None:
    tok = trained_tokenizer(cs336_data, "cl100k")
    path = _bare(tok, tmp_path / "mine.tiktoken")
    with pytest.raises(PatternRequiredError, match="pattern=") as caught:
        load(path)
    assert isinstance(caught.value, FormatError) and str(path) in str(caught.value)
    again = load(path, pattern="cl100k")
    text = "Hello, world! It's 2024 -- naïve café  \n\n\t x_y 日本語 😀"
    assert again.encode_ordinary(text) == tok.encode_ordinary(text)
    assert load(path, pattern=PATTERNS["cl100k"]).pattern_name == "cl100k"


def test_a_sidecar_still_gives_the_pattern(cs336_data: Path, tmp_path: Path) -> None:
    tok = trained_tokenizer(cs336_data, "o200k")
    path = save(tok, tmp_path / "with-sidecar.tiktoken", format="tiktoken")
    assert load(path).pattern_name == "o200k"


def _tiktoken_encoding(ranks: dict[bytes, int], pattern: str, specials: dict[str, int]) -> Any:
    tiktoken = pytest.importorskip("tiktoken")
    return tiktoken.Encoding(name="t", pat_str=pattern, mergeable_ranks=ranks, special_tokens=specials)


def test_a_token_tiktoken_cannot_merge_into_is_taken_whole(tmp_path: Path) -> None:
    # BPE on "abcd" with the lower ranks stops at ab|c|d, so "abcd" has no merge; tiktoken still gives a
    # pre-token "abcd" its one id (it looks pre-tokens up first), and so must we.
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"bc": 257, b"abcd": 258}
    path = tmp_path / "odd.tiktoken"
    path.write_bytes(b"".join(base64.b64encode(t) + b" %d\n" % r for t, r in ranks.items()))
    pattern = r"\S+|\s+"
    tok = load(path, pattern=pattern)
    assert derive_merges({r: t for t, r in ranks.items()}) == [(b"a", b"b"), (b"b", b"c")]
    theirs = _tiktoken_encoding(ranks, pattern, {})
    for text in ("abcd", "abcd abc", "xabcd abcdabcd bcd"):
        assert tok.encode(text) == theirs.encode(text), text
    assert tok.encode("abcd") == [258]


@functools.cache
def _both(path: Path) -> tuple[Any, Any]:
    """Ours and tiktoken's encoding of one rank file (built once: 50,000 merges take a moment)."""
    ranks = {t: r for r, t in tiktoken_format.read_tiktoken(path).items()}
    return load(path), _tiktoken_encoding(ranks, PATTERNS["gpt2"], {"<|endoftext|>": 50256})


@_settings
@given(text=st.text(max_size=60))
def test_a_loaded_rank_file_encodes_as_tiktoken(gpt2_ranks: Path, text: str) -> None:
    ours, theirs = _both(gpt2_ranks)
    assert ours.encode(text) == theirs.encode(text, allowed_special="all")


def test_only_a_file_that_begins_as_openai_s_is_hashed(
    gpt2_ranks: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # OpenAI's four files begin with rank 0, '!' (GPT-2's byte order); any other file is not one of theirs.
    data = gpt2_ranks.read_bytes()
    assert data.startswith(tiktoken_format._OPENAI_HEAD)
    hashed: list[bytes] = []
    real = hashlib.sha256
    monkeypatch.setattr(hashlib, "sha256", lambda d: hashed.append(d) or real(d))
    assert known_encoding(data) == KNOWN_ENCODINGS["r50k_base"] and hashed == [data]
    lines = data.split(b"\n")
    other = b"\n".join([lines[1].split()[0] + b" 0", lines[0].split()[0] + b" 1", *lines[2:]])
    assert known_encoding(other) is None and hashed == [data]
