"""A ``.model`` read natively in one call (``native.sentencepiece_model``: tables, encoder and the pairs'
source at once, issue 20's load time) opens the same tokenizer as the reader's steps (``parse``, ``tables``,
``pairs``, ``encoder``, each natively) and as the pure-Python reference (``BPE_STUDIO_PURE=1``): the same
vocab, pieces, user-defined pieces, byte ids, ranks, merges, merge ids, ``describe()`` and ids of any text,
equal to ``sentencepiece``'s on a real model when the zoo has it; and where a step gives None (a byte
piece that is not ``<0xNN>``, a NaN score) the same one-line error or the same tokenizer."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_studio.cli.inspect_cmd import describe
from bpe_studio.engine import native
from bpe_studio.engine.formats import FormatError, load
from tests.engine.backends import needs_native, use_backend
from tests.engine.formats.test_sentencepiece_native import _field
from tests.zoo import zoo_file

pytestmark = needs_native


def _model_bytes(pieces: list[tuple[str, float, int]], *, prefix: bool = True) -> bytes:
    """A ``.model`` of type BPE with byte fallback, ``identity`` normalizer, holding ``pieces``."""
    data = b"".join(
        _field(1, 2, _field(1, 2, t.encode()) + _field(2, 5, struct.pack("<f", s)) + _field(3, 0, k))
        for t, s, k in pieces
    )
    data += _field(2, 2, _field(3, 0, 2) + _field(35, 0, 1))
    return data + _field(3, 2, _field(1, 2, b"identity") + _field(3, 0, int(prefix)) + _field(4, 0, 0))


def _opened(path: Path, how: str) -> Any:
    """What loading ``path`` gives ``how``: in one call, in native steps, or in Python; or the error."""
    steps = mock.patch.object(native, "sentencepiece_model", return_value=None)
    try:
        if how == "python":
            with use_backend("python"):
                tok = load(path)
        elif how == "steps":
            with use_backend("native"), steps:
                tok = load(path)
        else:
            with use_backend("native"):
                tok = load(path)
    except FormatError as exc:
        return str(exc)
    model = tok.piece_model
    assert model is not None
    # (First, as inspect does: its merge figures from the merges' ids alone, before anything is derived.)
    described_first = describe(tok)
    texts = ["", "a b", " ab  ba\n", "abc▁é😀 a\tb", "b" * 40, "é a é"]
    return (
        described_first,
        dict(tok.vocab),
        model.pieces,
        model.frozen,
        model.byte_ids,
        [tok.encode(text) for text in texts],
        model.ranks,
        tok.merges,
        tok.merge_ids(),
        describe(tok),
    )


_TEXT = st.text(alphabet="ab▁é ", min_size=1, max_size=4)
_BYTE = st.integers(0, 255).map(lambda b: f"<0x{b:02X}>")


@settings(max_examples=150, deadline=None)
@given(
    pieces=st.lists(
        st.tuples(
            _TEXT,
            st.sampled_from([0.0, -0.0, -1.0, -2.0, -2.5, 1.0]),
            st.sampled_from([1, 1, 1, 1, 4, 2, 3, 5]),
        ),
        max_size=14,
    ),
    bad_bytes=st.lists(
        st.tuples(st.one_of(_BYTE, st.just("<0xZZ>"), _TEXT), st.just(0.0), st.just(6)), max_size=2
    ),
    prefix=st.booleans(),
)
def test_one_call_opens_what_the_steps_and_python_open(
    pieces: list[tuple[str, float, int]],
    bad_bytes: list[tuple[str, float, int]],
    prefix: bool,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    byte_pieces = [(f"<0x{b:02X}>", 0.0, 6) for b in range(256)]
    path = tmp_path_factory.mktemp("m") / "tokenizer.model"
    path.write_bytes(_model_bytes([*byte_pieces, *pieces, *bad_bytes], prefix=prefix))
    one, steps, python = (_opened(path, how) for how in ("one", "steps", "python"))
    assert one == steps == python


def test_a_nan_score_leaves_the_model_to_the_steps() -> None:
    # (Python derives the ranks then, as before: the kernel's ranks have no order for NaN.)
    byte_pieces = [(f"<0x{b:02X}>", 0.0, 6) for b in range(256)]
    assert native.sentencepiece_model(_model_bytes([*byte_pieces, ("a", 0.0, 1)])) is not None
    assert native.sentencepiece_model(_model_bytes([*byte_pieces, ("a", float("nan"), 1)])) is None
    assert native.sentencepiece_model(_model_bytes([*byte_pieces, ("a", float("nan"), 2)])) is not None


def test_one_call_gives_sentencepiece_s_ids_on_mistral_7b() -> None:
    path = zoo_file("mistral-common", "mistral_common/data/tokenizer.model.v1")
    if path is None:
        pytest.skip("Mistral 7B's tokenizer.model is not here (python tools/fetch_zoo.py mistral-common)")
    spm = pytest.importorskip("sentencepiece")
    reference = spm.SentencePieceProcessor(model_file=str(path))
    with use_backend("native"):
        tok = load(path)
    texts = ["Hello world", "  two  spaces", "naïve café 日本語 😀", "x.:.:;\n\tend"]
    assert [tok.encode(t) for t in texts] == [reference.encode(t) for t in texts]


def test_opening_and_encoding_make_no_table_of_the_pieces(tmp_path: Path) -> None:
    # The pieces' text -> id (32k strs of Mistral 7B's) is made from the file's bytes when first used.
    byte_pieces = [(f"<0x{b:02X}>", 0.0, 6) for b in range(256)]
    path = tmp_path / "tokenizer.model"
    path.write_bytes(_model_bytes([*byte_pieces, ("a", 0.0, 1), ("b", -1.0, 1), ("ab", -2.0, 1)]))
    with use_backend("native"):
        tok = load(path)
    model = tok.piece_model
    assert model is not None
    ids = tok.encode("ab ba")  # (▁ is no piece here: its three bytes)
    assert model._pieces is None
    assert model.pieces == {"a": 256, "b": 257, "ab": 258}
    with use_backend("python"):
        reference = load(path)
    assert reference.piece_model is not None and reference.piece_model.pieces == model.pieces
    assert ids == reference.encode("ab ba") == [226, 150, 129, 258, 226, 150, 129, 257, 256]


def test_opening_and_encoding_make_no_bytes_to_id_table(tmp_path: Path) -> None:
    # Every byte has its <0xNN> piece, so none lacks a token: bytes -> id (32k entries of Mistral 7B's) is
    # made when first used, the same as made at once (the smallest id of equal bytes: "a" beside <0x61>).
    byte_pieces = [(f"<0x{b:02X}>", 0.0, 6) for b in range(256)]
    path = tmp_path / "tokenizer.model"
    path.write_bytes(
        _model_bytes([("a", 0.0, 1), *byte_pieces, ("b", -1.0, 1), ("ab", -2.0, 1), ("a", 1.0, 1)])
    )
    for backend in ("native", "python"):
        with use_backend(backend):
            tok = load(path)
            ids = tok.encode("ab ba")
        # (The reference's merges by id look the pieces' bytes up at once.) inspect's figures need none.
        described = describe(tok)
        assert (tok._ids_of_made is None) == (backend == "native") and tok._missing_bytes == ()
        assert described["learned_tokens"] == described["merges"] == 1
        expected: dict[bytes, int] = {}
        for i in sorted(tok.vocab):
            expected.setdefault(tok.vocab[i], i)
        assert tok.token_id(b"a") == 0 and tok.token_id(b"b") == 98 + 1 and tok._ids_of == expected
        assert tok._byte_chars == {b: chr(expected[bytes([b])]) for b in range(256)}
        assert tok.encode("ab ba") == ids


def test_the_kernel_s_vocab_is_taken_as_it_is(tmp_path: Path) -> None:
    # The one native call's {id: bytes} (new, exact ints 0..n-1 and bytes) is the tokenizer's own: no copy
    # and no second check of its entries; the same vocab as the steps' and the pure engine's.
    byte_pieces = [(f"<0x{b:02X}>", 0.0, 6) for b in range(256)]
    path = tmp_path / "tokenizer.model"
    path.write_bytes(_model_bytes([*byte_pieces, ("a", 0.0, 1), ("b", -1.0, 1), ("ab", -2.0, 1)]))
    made: list[Any] = []
    real = native.sentencepiece_model

    def kept(data: bytes) -> Any:
        made.append(real(data))
        return made[-1]

    with use_backend("native"), mock.patch.object(native, "sentencepiece_model", kept):
        tok = load(path)
    assert tok._vocab is made[0][2]
    with use_backend("python"):
        assert dict(tok.vocab) == dict(load(path).vocab)
