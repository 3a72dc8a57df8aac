"""tiktoken's rule for rank files, exactly: any two adjacent parts whose concatenation is a token merge, the
lowest rank first (tiktoken's ``byte_pair_merge``), on both engines. Random rank files that are not closed
under BPE are compared with ``tiktoken.Encoding`` itself; Llama 3's ``tokenizer.model`` (from the
``llama-models`` package, when installed) with the two texts where one merge per token differs; the native
rank-file reader and merge derivation against the Python ones."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_studio.engine import Tokenizer, load, native, save
from bpe_studio.engine.encoding.rank_rule import derive_merges
from bpe_studio.engine.formats.tiktoken_format import parse_tiktoken

from ...zoo import missing_reason, zoo_file
from ..backends import BACKENDS, needs_native, use_backend
from ..reference_encoder import SAMPLE_TEXTS, trained_tokenizer

_settings = settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

#: A pattern that keeps words whole, so that long words (the heap path, over 256 bytes) occur.
_WORDS = r"\S+|\s+"

# Tokens and texts from a small alphabet, so that random tokens overlap and chain: such a vocabulary is
# rarely closed under BPE (a token whose halves BPE never reaches first), which is what this is about.
_ALPHABET = "abcé "


@st.composite
def rank_files(draw: st.DrawFn) -> dict[bytes, int]:
    """All 256 bytes and random multi-byte tokens, under a random permutation of ranks (as tiktoken takes)."""
    words = draw(st.lists(st.text(_ALPHABET.strip(), min_size=2, max_size=6), min_size=1, max_size=40))
    tokens = [bytes([b]) for b in range(256)]
    tokens += sorted({w.encode("utf-8") for w in words} - set(tokens))
    ranks = draw(st.permutations(range(len(tokens))))
    return dict(zip(tokens, ranks, strict=True))


texts = st.one_of(
    st.text(_ALPHABET, max_size=40),
    st.text(_ALPHABET.strip(), min_size=257, max_size=600),  # one long word: the heap on both sides
)


def _tiktoken(ranks: dict[bytes, int], pattern: str) -> Any:
    tiktoken = pytest.importorskip("tiktoken")
    return tiktoken.Encoding(name="random", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})


def _write(ranks: dict[bytes, int], path: Path) -> Path:
    path.write_bytes(b"".join(base64.b64encode(t) + b" %d\n" % r for t, r in ranks.items()))
    return path


@pytest.mark.parametrize("backend", BACKENDS)
@_settings
@given(ranks=rank_files(), text=st.lists(texts, min_size=1, max_size=4))
def test_a_random_rank_file_encodes_as_tiktoken(
    backend: str, tmp_path: Path, ranks: dict, text: list
) -> None:
    theirs = _tiktoken(ranks, _WORDS)
    with use_backend(backend):
        ours = load(_write(ranks, tmp_path / "random.tiktoken"), pattern=_WORDS)
        assert ours.backend == backend and ours.rule == "ranks"
        for t in text:
            assert ours.encode(t) == theirs.encode(t), t


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_merge_per_token_differs_where_tiktoken_merges_any_concatenation(backend: str) -> None:
    """Why the rule matters. "bab" (256) ranks below "ba" (257): BPE on its own bytes with lower ranks finds
    nothing, so it gets no merge. tiktoken still makes it: b|a (257), then ba|b is "bab", a token."""
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"bab", 257: b"ba"}
    with use_backend(backend):
        ranked = Tokenizer(vocab, None, pattern=_WORDS)
        by_merges = Tokenizer(vocab, ranked.merges, pattern=_WORDS)
    assert ranked.merges == ((b"b", b"a"),)
    assert ranked.encode("babx bab") == [256, ord("x"), ord(" "), 256]
    assert by_merges.encode("babx bab") == [257, ord("b"), ord("x"), ord(" "), 257, ord("b")]
    assert ranked.encode("babx bab") == _tiktoken({t: i for i, t in vocab.items()}, _WORDS).encode("babx bab")


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k"])
def test_our_trained_tokenizers_encode_alike_by_either_rule(cs336_data: Path, pattern: str) -> None:
    """Training gives a vocabulary closed under BPE: both rules give the same ids (our tokenizers keep the
    merges rule, the faster one; a rank file of them gets the ranks rule)."""
    tok = trained_tokenizer(cs336_data, pattern)
    ranked = Tokenizer(tok.vocab, None, dict(tok.special_tokens), pattern=pattern)
    corpus = (cs336_data / "corpus.en").read_text(encoding="utf-8")[:200_000]
    for text in (*SAMPLE_TEXTS, corpus):
        assert ranked.encode(text) == tok.encode(text)
    assert ranked.merges == tok.merges


# ------------------------------------------------------------------------------------------- Llama 3


# Llama 3's tiktoken rank file as the ``llama-models`` package ships it: installed, or in the zoo folder
# (python tools/fetch_zoo.py llama-models), or None.
_LLAMA3 = zoo_file("llama-models", "llama_models/llama3/tokenizer.model")
needs_llama3 = pytest.mark.skipif(_LLAMA3 is None, reason=missing_reason("llama-models"))


@needs_llama3
@pytest.mark.parametrize("backend", BACKENDS)
def test_llama3_encodes_as_tiktoken_where_one_merge_per_token_did_not(backend: str) -> None:
    assert _LLAMA3 is not None
    with use_backend(backend):
        tok = load(_LLAMA3, pattern="cl100k")
    assert tok.encode("している日") == [103792, 9080]  # one merge per token: [39926, 107991, 9080]
    assert tok.encode("x.:.:;") == [87, 100421, 26]  # one merge per token: [87, 105051, 25, 26]


@needs_llama3
@_settings
# Characters Unicode 14 (Python's tables) leaves unassigned are left out: the `regex` module's newer tables
# call some of them letters where tiktoken's older ones do not (U+3D000 in '\U0003d000:A', which hypothesis
# found): a difference between the two libraries' Unicode versions, not of encoding (see the README).
@given(text=st.text(st.characters(blacklist_categories=("Cs", "Cn")), max_size=80))
def test_llama3_encodes_random_text_as_tiktoken(text: str) -> None:
    assert _LLAMA3 is not None
    ours, theirs = _llama3_pair()
    assert ours.encode(text) == theirs.encode(text, disallowed_special=())


_PAIRS: dict[str, tuple[Tokenizer, Any]] = {}


def _llama3_pair() -> tuple[Tokenizer, Any]:
    if not _PAIRS:
        assert _LLAMA3 is not None
        tok = load(_LLAMA3, pattern="cl100k")
        ranks = {t: i for i, t in tok.vocab.items()}
        _PAIRS["pair"] = (tok, _tiktoken(ranks, tok.pattern))
    return _PAIRS["pair"]


@needs_llama3
def test_llama3_converts_to_tiktoken_as_it_is(tmp_path: Path) -> None:
    """A rank file needs no merges: Llama 3's (678 tokens made by no merge) saves, byte for byte."""
    assert _LLAMA3 is not None
    tok = load(_LLAMA3, pattern="cl100k")
    saved = save(tok, tmp_path / "llama3.tiktoken", format="tiktoken")
    assert saved.read_bytes() == _LLAMA3.read_bytes()
    assert load(saved).encode("している日") == [103792, 9080]


# ------------------------------------------------------------------- the native reader and derivation


@needs_native
@_settings
@given(ranks=rank_files(), shuffle=st.booleans())
def test_the_native_reader_reads_what_the_python_one_does(ranks: dict, shuffle: bool) -> None:
    items = sorted(ranks.items(), key=lambda item: item[1] if not shuffle else item[0])
    data = b"".join(base64.b64encode(t) + b" %d\n" % r for t, r in items)
    with use_backend("python"):
        expected = parse_tiktoken(data, "x.tiktoken")
    with use_backend("native"):
        assert native.parse_ranks(data) == expected


@needs_native
@pytest.mark.parametrize(
    "data",
    [
        b"YQ== 0\nYQ== 1\n",
        b"YQ== 0\nYg== 0\n",
        b"YR== 0\n",
        b"YQ 0\n",
        b"YQ== +1\n",
        b"YQ==\n",
        b"= 0\n=== 1\n",
    ],
    ids=["token-twice", "rank-twice", "spare-bits", "unpadded", "sign", "no-rank", "empty-twice"],
)
def test_a_file_the_native_reader_leaves_gets_the_python_readers_answer(data: bytes) -> None:
    with use_backend("python"):
        try:
            expected: Any = parse_tiktoken(data, "x.tiktoken")
        except Exception as exc:
            expected = str(exc)
    with use_backend("native"):
        assert native.parse_ranks(data) is None
        try:
            found: Any = parse_tiktoken(data, "x.tiktoken")
        except Exception as exc:
            found = str(exc)
    assert found == expected


@needs_native
@_settings
@given(ranks=rank_files())
def test_native_merges_are_derived_as_in_python(ranks: dict) -> None:
    vocab = {r: t for t, r in ranks.items()}
    with use_backend("native"):
        tok = Tokenizer(vocab, None, pattern=_WORDS)
    assert list(tok.merges) == derive_merges(vocab)


def test_a_rank_tokenizer_says_so() -> None:
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"ab"}
    assert "tiktoken's rule" in repr(Tokenizer(vocab, None))
    assert Tokenizer(vocab, [(b"a", b"b")]).rule == "merges"


@st.composite
def untidy_vocabs(draw: st.DrawFn) -> tuple[dict[int, bytes], dict[str, int]]:
    """A random rank file as a vocab with unused ids (tokens dropped), bytes under two ids (the smaller one
    ranks), and special tokens, some spelled as an ordinary token (no merge makes a special token)."""
    ranks = draw(rank_files())
    vocab = {r: t for t, r in ranks.items() if len(t) == 1 or draw(st.integers(0, 5))}
    top = max(vocab) + 1
    multi = sorted(t for t in vocab.values() if len(t) > 1)
    again = draw(st.lists(st.sampled_from(multi), max_size=3)) if multi else []
    vocab |= {top + n: t for n, t in enumerate(again)}
    top += len(again)
    spelled = draw(st.lists(st.sampled_from(multi), max_size=2, unique=True)) if multi else []
    specials = {t.decode("utf-8"): top + n for n, t in enumerate(spelled)} | {"<|end|>": top + len(spelled)}
    return vocab, specials


@needs_native
@_settings
@given(untidy=untidy_vocabs())
def test_native_merges_and_summary_equal_the_pure_ones_on_untidy_vocabs(
    untidy: tuple[dict[int, bytes], dict[str, int]],
) -> None:
    """The kernel reads the tokens by rank from its arena of ids (issue 20); the same merges as the pure
    engine's derivation, with gaps, repeated bytes and special tokens, and the same inspect figures."""
    from bpe_studio.engine.encoding.analysis import merge_summary

    vocab, specials = untidy
    found = {}
    for backend in ("native", "python"):
        with use_backend(backend):
            tok = Tokenizer(vocab, None, specials, pattern=_WORDS)
            found[backend] = (merge_summary(tok), tok.merge_ids(), tok.merges)
    assert found["native"] == found["python"]
