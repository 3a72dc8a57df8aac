"""A ``.model`` encodes natively (rust/src/spmodel.rs, ``PieceEncoder``) without the table of every split's
rank that the Python encoder (the reference, ``BPE_STUDIO_PURE=1``) builds at its first encode: the same ids
as the Python encoder on random pieces (equal scores, texts listed twice, user-defined pieces) and random
text, and as ``sentencepiece`` on trained models and random text."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_studio.engine.encoding.tokenizer import Tokenizer
from bpe_studio.engine.formats import load, sentencepiece
from tests.engine.backends import needs_native, use_backend

pytestmark = needs_native

spm = pytest.importorskip("sentencepiece", reason="needs the sentencepiece package (the test extra)")


def _load_pieces(texts: list[str], scores: list[float], kinds: list[int]) -> Tokenizer:
    """load_sentencepiece on these pieces (and the 256 byte pieces), with add_dummy_prefix and spaces as
    ``▁``, read from no file (any file's bytes stand for them: this one's)."""
    byte_texts = [f"<0x{b:02X}>" for b in range(256)]
    columns = ([*byte_texts, *texts], [0.0] * 256 + scores, [6] * 256 + kinds, {3: 2, 35: 1}, {3: 1, 5: 1})
    with mock.patch.object(sentencepiece, "_read_model", return_value=columns):
        return sentencepiece.load_sentencepiece(Path(__file__))


_PIECE_TEXT = st.text(alphabet="ab▁cé", min_size=1, max_size=4)


@settings(max_examples=300, deadline=None)
@given(
    pieces=st.lists(
        st.tuples(
            _PIECE_TEXT,
            st.sampled_from([0.0, -0.0, -1.0, -2.0, -2.5, 1.0]),
            st.sampled_from([1, 1, 1, 1, 4, 2, 3, 5]),
        ),
        max_size=16,
    ),
    texts=st.lists(st.text(alphabet="ab cé▁\U0001f642", max_size=14), max_size=4),
)
def test_random_pieces_encode_the_same_natively_and_in_python(
    pieces: list[tuple[str, float, int]], texts: list[str]
) -> None:
    columns = ([t for t, _, _ in pieces], [s for _, s, _ in pieces], [k for _, _, k in pieces])
    found = []
    for backend in ("native", "python"):
        with use_backend(backend):
            tok = _load_pieces(*columns)
            model = tok.piece_model
            assert model is not None
            found.append([tok.encode(text) for text in texts] + [list(model.encode("a▁b"))])
            assert (model._native_encode is not None) == (backend == "native")
    assert found[0] == found[1]


_TRAINING = "\n".join(
    f"the {w} of {v} <b>in</b> a {u} was {n} and the {w}s were {v}ed, {n} times over." * 2
    for n, (w, v, u) in enumerate(
        zip(
            ["cat", "dog", "house", "river", "song", "light", "stone"] * 6,
            ["walk", "talk", "jump", "paint", "fold", "turn"] * 7,
            ["garden", "kitchen", "forest", "city", "valley", "boat", "field"] * 6,
            strict=False,
        )
    )
)


def _train(folder: Path, **options: Any) -> Path:
    corpus = folder / "corpus.txt"
    corpus.write_text(_TRAINING, encoding="utf-8")
    spm.SentencePieceTrainer.train(
        input=str(corpus),
        model_prefix=str(folder / "m"),
        model_type="bpe",
        vocab_size=300,
        byte_fallback=True,
        normalization_rule_name="identity",
        remove_extra_whitespaces=False,
        minloglevel=2,
        **options,
    )
    return folder / "m.model"


@pytest.fixture(scope="module", params=["plain", "user-defined"])
def model_file(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    options = {"user_defined_symbols": ["<b>", "</b>", "the cat"]} if request.param == "user-defined" else {}
    return _train(tmp_path_factory.mktemp("spm"), **options)


_TEXT = st.lists(
    st.one_of(
        st.sampled_from(["the", " cat", " ", "  ", "\n", "<b>", "</b>", "s", "ed", ",", "."]),
        st.characters(codec="utf-8"),
    ),
    max_size=30,
).map("".join)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_TEXT)
def test_a_model_encodes_natively_as_sentencepiece_and_in_python(model_file: Path, text: str) -> None:
    sp = spm.SentencePieceProcessor(model_file=str(model_file))
    with use_backend("native"):
        fast = load(model_file)
    with use_backend("python"):
        slow = load(model_file)
    expected = sp.encode(text)
    assert fast.encode(text) == expected
    assert fast.piece_model is not None and fast.piece_model.encode("▁a") is not None
    assert fast.piece_model._native_encode is not None
    assert slow.encode(text) == expected


def test_the_first_encode_builds_no_table_of_ranks() -> None:
    # (Before, the first encode of a fresh process made every split's rank: 60k-250k Python tuples.)
    texts, scores, kinds = ["a", "b", "ab", "abb", "▁"], [0.0, 0.0, -1.0, -2.0, 0.0], [1, 1, 1, 1, 1]
    with use_backend("native"):
        tok = _load_pieces(texts, scores, kinds)
    model = tok.piece_model
    assert model is not None
    assert tok.encode("abb ab") == [260, 259, 260, 258]
    assert model._ranks is None
    # The views' ranks are still made when asked for, and a cut model encodes in Python with them.
    assert model.ranks == {("a", "b"): 1, ("ab", "b"): 2}
    assert model.cut(1).encode("▁abb") == (260, 258, 257)


def test_a_lone_surrogate_is_encoded_in_python() -> None:
    texts, scores, kinds = ["a", "b", "ab"], [0.0, 0.0, -1.0], [1, 1, 1]
    found = []
    for backend in ("native", "python"):
        with use_backend(backend):
            found.append(_load_pieces(texts, scores, kinds).piece_model.encode("ab\ud800ab"))  # type: ignore[union-attr]
    assert found[0] == found[1]


def test_opening_and_encoding_derive_no_pairs_until_a_view_asks() -> None:
    # (Before, opening derived every split and the views' pairs, spmodel::pairs: 25 ms of Mistral 7B's.)
    texts, scores, kinds = ["a", "b", "ab", "abb", "▁"], [0.0, 0.0, -1.0, -2.0, 0.0], [1, 1, 1, 1, 1]
    with use_backend("native"):
        tok = _load_pieces(texts, scores, kinds)
    model = tok.piece_model
    assert model is not None
    source = getattr(model._make_ranks, "__self__", None)
    # Nor the native encoder: made at the first encode (inspect encodes nothing).
    assert model._native_encode is None and model._make_native_encode is not None
    assert tok.encode("abb ab") == [260, 259, 260, 258]
    assert model._native_encode is not None
    assert source is not None and not source.derived_yet()
    assert tok.merges == ((b"a", b"b"), (b"ab", b"b"))
    assert source.derived_yet()
    assert model.ranks == {("a", "b"): 1, ("ab", "b"): 2}
    assert tok.merge_ids() == [(256, 257, 258), (258, 257, 259)]
