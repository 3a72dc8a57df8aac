"""Vocabularies without the bytes UTF-8 never uses (0xC0, 0xC1, 0xF5-0xFF), as GPT-NeoX-20B and its
family (Pythia, OLMo 1, MPT) ship them: a text's UTF-8 never holds those bytes, so such a tokenizer encodes
every text exactly as ``tokenizers`` does, with either engine; any other missing byte is still refused."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_studio.engine import FormatError, Tokenizer, load, save
from bpe_studio.engine.bytes_unicode import bytes_to_text
from bpe_studio.engine.encoding.analysis import MergeIndex, cut_to_merges, token_count_curve
from bpe_studio.engine.encoding.tokenizer import UTF8_UNUSED_BYTES

from ..backends import BACKENDS, use_backend
from ..reference_encoder import trained_tokenizer

_SETTINGS = settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
_PIECES = [*"aeéoxyzAÉ日本😀\U0010fffd", *" \t\n\r", *"0123456789", "'s", " the", "<|endoftext|>"]
texts = st.one_of(st.lists(st.sampled_from(_PIECES), max_size=30).map("".join), st.text(max_size=40))


def neox_document(cs336_data: Path, folder: Path) -> dict[str, Any]:
    """A byte-level BPE ``tokenizer.json`` in GPT-NeoX-20B's shape: ``<|endoftext|>`` and ``<|padding|>``
    at ids 0 and 1, then the vocabulary without the 13 bytes UTF-8 never uses, numbered without gaps."""
    tok = trained_tokenizer(cs336_data, "gpt2")
    assert not any(bytes([b]) in (left, right) for left, right in tok.merges for b in UTF8_UNUSED_BYTES)
    document: dict[str, Any] = json.loads(save(tok, folder / "base.json", format="hf").read_text("utf-8"))
    specials = set(tok.special_tokens.values())
    unused = {bytes([b]) for b in UTF8_UNUSED_BYTES}
    kept = [token for i, token in sorted(tok.vocab.items()) if i not in specials and token not in unused]
    added = ["<|endoftext|>", "<|padding|>"]
    document["model"]["vocab"] = {
        **{token: i for i, token in enumerate(added)},
        **{bytes_to_text(token): len(added) + i for i, token in enumerate(kept)},
    }
    document["added_tokens"] = [
        {
            "id": i,
            "content": token,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": True,
        }
        for i, token in enumerate(added)
    ]
    document["post_processor"] = {
        "type": "ByteLevel",
        "add_prefix_space": False,
        "trim_offsets": True,
        "use_regex": True,
    }
    return document


@functools.cache
def neox_file(cs336_data: Path, folder: Path) -> Path:
    path = folder / "neox" / "tokenizer.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(neox_document(cs336_data, folder)), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("neox")


@functools.cache
def _theirs(path: Path) -> Any:
    tokenizers = pytest.importorskip("tokenizers")
    return tokenizers.Tokenizer.from_file(str(path))


def test_the_neox_shape_loads_and_names_its_missing_bytes(cs336_data: Path, files: Path) -> None:
    ours = load(neox_file(cs336_data, files))
    assert ours.missing_bytes == tuple(sorted(UTF8_UNUSED_BYTES)) and len(ours.missing_bytes) == 13
    assert dict(ours.special_tokens) == {"<|endoftext|>": 0, "<|padding|>": 1}


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_neox_shape_encodes_as_tokenizers(cs336_data: Path, files: Path, backend: str) -> None:
    path = neox_file(cs336_data, files)
    theirs = _theirs(path)
    with use_backend(backend):
        ours = load(path)
        assert ours.backend == backend

        @_SETTINGS
        @given(text=texts)
        def check(text: str) -> None:
            ids = ours.encode(text)
            assert ids == theirs.encode(text).ids
            assert ours.decode(ids) == text
            assert [s.id for s in ours.encode_with_offsets(text)] == ids
            assert list(ours.encode_iterable([text[:7], text[7:]])) == ids

        check()
        # Lone surrogates become U+FFFD (whose bytes are in the vocabulary), never a missing byte.
        assert ours.encode("a\ud800b") == ours.encode("a\ufffdb")


def test_any_other_missing_byte_is_still_refused() -> None:
    vocab = {i: bytes([i]) for i in range(256) if i not in UTF8_UNUSED_BYTES}
    assert Tokenizer(vocab, []).missing_bytes == tuple(sorted(UTF8_UNUSED_BYTES))
    del vocab[0x80]
    with pytest.raises(ValueError, match=r"14 single byte\(s\) have no token \(first: 0x80\)"):
        Tokenizer(vocab, [])


def test_analysis_and_cuts_work_without_those_bytes(cs336_data: Path, files: Path) -> None:
    ours = load(neox_file(cs336_data, files))
    index = MergeIndex(ours)
    assert index.vocab_sizes()[0] == 256 - 13 + 2 and index.vocab_sizes()[-1] == ours.vocab_size
    cut = cut_to_merges(ours, 10, index=index)
    assert cut.missing_bytes == ours.missing_bytes and cut.vocab_size == index.vocab_size_at(10)
    text = "the cat sat on the mat 日本 😀"
    curve = token_count_curve(ours, text, index=index)
    assert curve.counts[-1] == len(ours.encode(text)) and curve.counts[10] == len(cut.encode(text))
    top = max(index.rank_of, key=index.rank_of.__getitem__)
    assert bytes(b for i in index.merge_tree(top).leaves() for b in ours.token_bytes(i)) == ours.token_bytes(
        top
    )


@pytest.mark.parametrize("fmt", ["studio", "gpt2", "hf"])
def test_every_format_keeps_such_a_vocabulary(
    cs336_data: Path, files: Path, tmp_path: Path, fmt: str
) -> None:
    ours = load(neox_file(cs336_data, files))
    target = tmp_path / fmt / ("vocab.json" if fmt == "gpt2" else "tokenizer.json")
    target.parent.mkdir()
    again = load(save(ours, target if fmt != "gpt2" else target.parent, format=fmt))
    text = "Hello wörld 日本 😀 <|endoftext|>"
    assert again.encode(text) == ours.encode(text) and again.missing_bytes == ours.missing_bytes


def test_tiktoken_reads_such_a_rank_file(tmp_path: Path) -> None:
    """tiktoken needs no token for a byte no text holds: a rank file without them encodes as ours does."""
    tiktoken = pytest.importorskip("tiktoken")
    from bpe_studio.engine.formats.tiktoken_format import read_tiktoken

    vocab = {i: bytes([i]) for i in range(256) if i not in UTF8_UNUSED_BYTES}
    ids = sorted(vocab)
    vocab = {n: vocab[i] for n, i in enumerate(ids)}
    vocab[len(vocab)] = b"ab"
    vocab[len(vocab)] = b" ab"
    ours = Tokenizer(vocab, [(b"a", b"b"), (b" ", b"ab")], pattern="cl100k", ignore_merges=True)
    path = save(ours, tmp_path / "small.tiktoken", format="tiktoken")
    ranks = {token: rank for rank, token in read_tiktoken(path).items()}
    theirs = tiktoken.Encoding("small", pat_str=ours.pattern, mergeable_ranks=ranks, special_tokens={})
    for text in ("ab ab abc", "naïve café 🙃 日本", ""):
        assert ours.encode(text) == theirs.encode(text) == load(path).encode(text)


def test_a_missing_byte_outside_that_set_is_refused_on_load(cs336_data: Path, files: Path) -> None:
    document = neox_document(cs336_data, files)
    del document["model"]["vocab"][bytes_to_text(b"\x80")]
    path = files / "broken" / "tokenizer.json"
    path.parent.mkdir()
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(
        FormatError, match=r"tokenizer.json: .*14 single byte\(s\) have no token \(first: 0x80\)"
    ):
        load(path)
