"""The native ``.model`` reader (rust/src/spmodel.rs, through ``native.parse_sentencepiece``) gives what the
Python wire-format reader gives: the same pieces and specs on random and real models, and on damaged bytes
the same one-line error naming the file (the kernel finds the fault, the Python reader names it)."""

from __future__ import annotations

import struct
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_studio.cli.inspect_cmd import describe
from bpe_studio.engine import native
from bpe_studio.engine.encoding.tokenizer import PythonEncoder, Tokenizer
from bpe_studio.engine.formats import FormatError, load, sentencepiece
from bpe_studio.engine.formats.sentencepiece import _read_model
from tests.engine.backends import needs_native, use_backend
from tests.zoo import zoo_file

pytestmark = needs_native

MISTRAL = ("mistral-common", "mistral_common/data/tokenizer.model.v1")


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        if not value:
            return bytes(out + bytes([byte]))
        out.append(byte | 0x80)


def _field(number: int, wire: int, body: bytes | int) -> bytes:
    key = _varint(number << 3 | wire)
    if wire == 0:
        assert isinstance(body, int)
        return key + _varint(body)
    assert isinstance(body, bytes)
    return key + (_varint(len(body)) + body if wire == 2 else body)


def _both(data: bytes) -> tuple[object, object]:
    """What the native and the Python reader make of ``data``: their result, or their error's message."""
    found: list[object] = []
    for backend in ("native", "python"):
        with use_backend(backend):
            try:
                found.append(_read_model(Path("m.model"), data))
            except FormatError as exc:
                found.append(str(exc))
    return found[0], found[1]


_NUMBERS = st.sampled_from([0, 1, 2, 3, 4, 5, 35, 24, 2**40, 2**61])
_VALUES = st.one_of(st.integers(0, 2**70 - 1), st.binary(max_size=6))


@st.composite
def _message(draw: st.DrawFn, depth: int = 0) -> bytes:
    """A protobuf-ish message: pieces, specs and stray fields of every wire type, some with faults."""
    parts: list[bytes] = []
    for _ in range(draw(st.integers(0, 6))):
        number = draw(_NUMBERS)
        wire = draw(st.sampled_from([0, 1, 2, 5, 3]))
        if wire == 0:
            parts.append(_field(number, 0, draw(st.integers(0, 2**70 - 1))))
        elif wire == 1:
            parts.append(_field(number, 1, draw(st.binary(min_size=8, max_size=8))))
        elif wire == 5:
            score = draw(st.floats(width=32, allow_nan=True))
            parts.append(_field(number, 5, struct.pack("<f", score)))
        elif wire == 2:
            body = (
                draw(_message(depth + 1))
                if depth < 2 and draw(st.booleans())
                else draw(st.one_of(st.text(max_size=5).map(str.encode), st.binary(max_size=5)))
            )
            parts.append(_field(number, 2, body))
        else:
            parts.append(_varint(number << 3 | 3))
    data = b"".join(parts)
    if draw(st.booleans()) and data:
        data = data[: draw(st.integers(0, len(data)))]  # cut anywhere
    return data


def _same(native_result: object, python_result: object) -> None:
    # NaN scores compare unequal to themselves: compare the floats' bits.
    def key(result: object) -> object:
        if isinstance(result, tuple):
            texts, scores, kinds, trainer, normalizer = result
            return texts, [struct.pack("<d", s) for s in scores], kinds, trainer, normalizer
        return result

    assert key(native_result) == key(python_result)


@settings(max_examples=400, deadline=None)
@given(data=_message())
def test_random_messages_read_the_same_natively_and_in_python(data: bytes) -> None:
    _same(*_both(data))


@given(
    pieces=st.lists(
        st.tuples(st.text(max_size=4), st.floats(width=32, allow_nan=False), st.integers(1, 6)), max_size=8
    ),
    trainer=st.lists(st.tuples(_NUMBERS.filter(bool), st.integers(0, 2**64)), max_size=4),
    normalizer=st.lists(st.tuples(_NUMBERS.filter(bool), _VALUES), max_size=4),
)
@settings(deadline=None)
def test_models_read_the_same_natively_and_in_python(
    pieces: list[tuple[str, float, int]],
    trainer: list[tuple[int, int]],
    normalizer: list[tuple[int, int | bytes]],
) -> None:
    data = b"".join(
        _field(
            1,
            2,
            _field(1, 2, text.encode("utf-8", "surrogatepass"))
            + _field(2, 5, struct.pack("<f", score))
            + _field(3, 0, kind),
        )
        for text, score, kind in pieces
    )
    data += _field(2, 2, b"".join(_field(n, 0, v) for n, v in trainer))
    data += _field(
        3, 2, b"".join(_field(n, 0, v) if isinstance(v, int) else _field(n, 2, v) for n, v in normalizer)
    )
    native_result, python_result = _both(data)
    _same(native_result, python_result)


def test_the_kernel_reads_a_model_and_leaves_faults_to_python() -> None:
    with use_backend("native"):
        ok = _field(1, 2, _field(1, 2, b"a") + _field(3, 0, 6))
        assert native.parse_sentencepiece(ok) == (["a"], [0.0], [6], [], [])
        for bad in (ok[:-1], _field(1, 2, _field(1, 2, b"\xff")), b"\x0b", b"\x00\x00"):
            assert native.parse_sentencepiece(bad) is None


def test_a_damaged_model_fails_with_the_same_line_on_both_paths(tmp_path: Path) -> None:
    path = tmp_path / "cut.model"
    path.write_bytes(_field(1, 2, _field(1, 2, "▁the".encode()) + _field(2, 5, b"\0\0\0\0"))[:-3])
    messages = []
    for backend in ("native", "python"):
        with use_backend(backend), pytest.raises(FormatError) as caught:
            load(path)
        messages.append(str(caught.value))
    assert messages[0] == messages[1]
    assert messages[0].startswith(f"{path}: byte 0: not a SentencePiece model (")
    assert "\n" not in messages[0]


def test_a_real_model_reads_the_same_natively_and_in_python() -> None:
    path = zoo_file(*MISTRAL)
    if path is None:
        pytest.skip("Mistral 7B's tokenizer.model is not here (python tools/fetch_zoo.py mistral-common)")
    data = path.read_bytes()
    native_result, python_result = _both(data)
    _same(native_result, python_result)
    # Damaged: cut, or a byte changed, at places spread over the file.
    for n in range(1, 24):
        at = len(data) * n // 24
        for damaged in (data[:at], data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :]):
            _same(*_both(damaged))
    with use_backend("native"):
        fast = load(path)
    with use_backend("python"):
        slow = load(path)
    assert fast.vocab == slow.vocab and fast.merges == slow.merges
    text = "Hello wörld, 你好 🙂"
    assert fast.encode(text) == slow.encode(text)


def _derive(texts: list[str], scores: list[float], kinds: list[int]) -> object:
    """What the loader derives from pieces: (ranks in order, the pairs the views show, their bytes, their
    ids, inspect's description, the vocab)."""
    found: list[object] = []
    for backend in ("native", "python"):
        with use_backend(backend):
            try:
                tok = _load_pieces(texts, scores, kinds)
            except FormatError as exc:
                found.append(str(exc))
                continue
            model = tok.piece_model
            assert model is not None
            # (The views' figures first: with the kernel, the merges and their ids are made when asked for.)
            summary = describe(tok)
            found.append(
                (
                    list(model.ranks.items()),
                    model.piece_merges(),
                    tok.merges,
                    tok.merge_ids(),
                    summary,
                    tok.vocab,
                )
            )
    assert found[0] == found[1]
    return found[0]


def _load_pieces(texts: list[str], scores: list[float], kinds: list[int]) -> Tokenizer:
    """load_sentencepiece on these pieces (and the 256 byte pieces), read from no file (any file's bytes
    stand for them: this one's)."""
    byte_texts = [f"<0x{b:02X}>" for b in range(256)]
    columns = ([*byte_texts, *texts], [0.0] * 256 + scores, [6] * 256 + kinds, {3: 2, 35: 1}, {4: 0})
    with mock.patch.object(sentencepiece, "_read_model", return_value=columns):
        return sentencepiece.load_sentencepiece(Path(__file__))


_PIECE_TEXT = st.text(alphabet="ab▁c ", min_size=1, max_size=4)  # (" a" and "▁a" share bytes)


@settings(max_examples=300, deadline=None)
@given(
    pieces=st.lists(
        st.tuples(
            _PIECE_TEXT,
            st.sampled_from([0.0, -0.0, -1.0, -2.0, -2.5, 1.0]),
            st.sampled_from([1, 1, 1, 4, 2, 3, 5]),
        ),
        max_size=14,
    )
)
def test_derived_pairs_are_the_same_natively_and_in_python(pieces: list[tuple[str, float, int]]) -> None:
    texts = [text for text, _, _ in pieces]
    scores = [score for _, score, _ in pieces]
    kinds = [kind for _, _, kind in pieces]
    _derive(texts, scores, kinds)


def test_the_kernel_derives_ranks_and_leaves_nan_scores_to_python() -> None:
    with use_backend("native"):
        texts, kinds = ["a", "b", "ab"], [1, 1, 1]
        found = native.sentencepiece_pairs(texts, [0.0, 0.0, -1.0], kinds)
        assert found is not None
        assert (found[0](), found[1](), found[2].pairs()) == ({("a", "b"): 1}, [("a", "b")], [(b"a", b"b")])
        assert native.sentencepiece_pairs(texts, [0.0, 0.0, float("nan")], kinds) is None
        found = native.sentencepiece_pairs(["▁a"], [0.0], [1])
        assert found is not None
        assert (found[0](), found[1](), found[2].pairs()) == ({("▁", "a"): 0}, [], [])


def test_opening_a_model_natively_leaves_its_ranks_for_the_first_encode() -> None:
    texts = ["a", "b", "ab", "abb"]
    with use_backend("native"):
        tok = _load_pieces(texts, [0.0, 0.0, -1.0, -2.0], [1, 1, 1, 1])
    model = tok.piece_model
    assert model is not None and model._ranks is None
    ab, abb = 256 + 2, 256 + 3
    assert tok.encode("abb") == [abb]  # (no ▁ before: the test model has no add_dummy_prefix)
    assert model.ranks == {("a", "b"): 1, ("ab", "b"): 2}
    with use_backend("python"):
        assert _load_pieces(texts, [0.0, 0.0, -1.0, -2.0], [1, 1, 1, 1]).encode("abab") == [ab, ab]


@needs_native
def test_opening_a_model_leaves_its_merges_and_the_decode_table_for_first_use() -> None:
    # (Twice before: once for the byte-level triples a piece model never uses, once by piece id; then once,
    # when opening; now made by the kernel with the pairs, when a view first asks for them, since the
    # piece model encodes with its own ranks.)
    texts, scores, kinds = ["a", "b", "ab", "abb"], [0.0, 0.0, -1.0, -2.0], [1, 1, 1, 1]
    with use_backend("native"), mock.patch.object(native, "merge_ids", wraps=native.merge_ids) as looked:
        tok = _load_pieces(texts, scores, kinds)
        assert looked.call_count == 0
        assert tok._merges is None and tok.piece_model is not None and tok.piece_model._piece_merges is None
        assert tok.merge_ids() == [(256, 257, 258), (258, 257, 259)]
        assert looked.call_count == 0  # (the pieces' ids come from the kernel with the pairs)
    encoder = tok._encoder
    # The id -> str table waits for the first decode.
    assert isinstance(encoder, PythonEncoder) and callable(encoder._by_id)
    ab, abb = 256 + 2, 256 + 3
    assert tok.encode("abb") == [abb] and tok.decode([ab, abb]) == "ababb"
    with use_backend("python"):
        slow = _load_pieces(texts, scores, kinds)
    assert tok.merge_ids() == slow.merge_ids() and tok.merges == slow.merges


def test_a_merge_without_its_token_fails_with_the_same_line_on_both_paths(tmp_path: Path) -> None:
    # A tokenizer.json of byte-fallback BPE whose merge makes a piece that is not in its vocab.
    import json

    vocab = {f"<0x{b:02X}>": b for b in range(256)} | {"a": 256, "b": 257}
    document = {
        "model": {"type": "BPE", "byte_fallback": True, "vocab": vocab, "merges": ["a b"]},
        "pre_tokenizer": None,
        "normalizer": None,
        "decoder": None,
    }
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    errors = []
    for backend in ("native", "python") if native.built() else ("python",):
        with use_backend(backend), pytest.raises(FormatError) as caught:
            load(path)
        errors.append(str(caught.value))
    assert len(set(errors)) == 1 and "\n" not in errors[0], errors


@needs_native
def test_a_model_s_pairs_are_derived_once_for_opening_and_its_first_encode() -> None:
    # (Twice before: the first encode derived them again, for the ranks the kernel now keeps.)
    from bpe_studio import _native

    texts, scores, kinds = ["a", "b", "ab", "abb"], [0.0, 0.0, -1.0, -2.0], [1, 1, 1, 1]
    derive = mock.patch.object(_native, "sentencepiece_pairs", wraps=_native.sentencepiece_pairs)
    with use_backend("native"), derive as derived:
        tok = _load_pieces(texts, scores, kinds)
        assert tok.encode("abbab") == [256 + 3, 256 + 2]
    assert derived.call_count == 1
    model = tok.piece_model
    assert model is not None and model.ranks == {("a", "b"): 1, ("ab", "b"): 2}


_BYTE_TEXT = st.one_of(
    st.integers(0, 255).map(lambda b: f"<0x{b:02X}>"),
    st.integers(0, 255).map(lambda b: f"<0x{b:02x}>"),
    st.sampled_from(["<0X0A>", "<0x0G>", "<0x+1>", "<0x 1>", "<0x٠A>", "<0xA>", "<0x0AA>", "a"]),
)


@settings(max_examples=300, deadline=None)
@given(
    pieces=st.lists(
        st.one_of(
            st.tuples(_BYTE_TEXT, st.just(6)), st.tuples(_PIECE_TEXT, st.sampled_from([1, 2, 3, 4, 5]))
        ),
        max_size=12,
    ),
    all_bytes=st.booleans(),
)
def test_piece_tables_are_the_same_natively_and_in_python(
    pieces: list[tuple[str, int]], all_bytes: bool
) -> None:
    byte_pieces = [(f"<0x{b:02X}>", 6) for b in range(256)] if all_bytes else []
    texts = [text for text, _ in [*byte_pieces, *pieces]]
    kinds = [kind for _, kind in [*byte_pieces, *pieces]]
    with use_backend("native"):
        found = native.sentencepiece_tables(texts, kinds)
    try:
        expected = sentencepiece._piece_tables(Path("x.model"), texts, kinds)
    except FormatError:
        assert found is None  # (the loop names the fault)
        return
    assert found is not None
    vocab, normal, frozen, byte_ids = found
    assert (vocab, list(vocab), normal, list(normal), set(frozen), byte_ids) == (
        expected[0],
        list(expected[0]),
        expected[1],
        list(expected[1]),
        expected[2],
        expected[3],
    )
