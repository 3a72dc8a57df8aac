"""SentencePiece-style BPE: a SentencePiece ``.model`` of type BPE, or a byte-fallback ``tokenizer.json``.

Llama 2, Mistral 7B, Gemma, TinyLlama and Yi ship these; they become a
:class:`~bpe_studio.engine.encoding.tokenizer.Tokenizer` with a
:class:`~bpe_studio.engine.encoding.pieces.PieceModel` (see that module for how they encode), equal to
``sentencepiece``'s ``encode(text)`` and ``tokenizers``' ``encode(text).ids``.

A ``.model`` is a protobuf ``ModelProto``, read here without the ``protobuf`` package: its pieces (text,
score, type), the trainer's ``model_type`` and ``byte_fallback``, and the normalizer's options. Its
normalizer is reproduced when it is ``identity`` (no character map) without ``remove_extra_whitespaces``, as
Llama 2's, Mistral's and Gemma's: the text's spaces become ``▁`` and (``add_dummy_prefix``) one ``▁`` goes
before it. A model with a character map (``nmt_nfkc``, SentencePiece's default) or that removes extra
whitespace is refused, saying so. Control pieces (``<s>``, ``</s>``) and ``<unk>`` keep their ids but are not
special tokens: ``sentencepiece`` encodes ``"<s>"`` in a text as characters too.

Not read, each with one sentence saying why: a Unigram, word or character ``.model``, a model without
``byte_fallback`` (its unknown characters become ``<unk>``, and a text's bytes must all have tokens here).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from .. import native
from ..encoding.pieces import PieceModel, byte_piece, piece_bytes, pieces_bytes
from .base import FormatError

TYPE_CHECKING = False  # (typing is for type checkers only: see bpe_studio/__init__.py)
if TYPE_CHECKING:
    from typing import Any

    from ..encoding.tokenizer import Tokenizer
    from ..pretokenize.hf import Pipeline

__all__ = ["is_sentencepiece_model", "load_piece_hf", "load_sentencepiece"]

#: Why each kind of tokenizer BPE Studio does not open cannot be opened, after ``"a ... model"``.
OPENS = (
    "BPE Studio opens BPE tokenizers only: byte-level (GPT-2, Llama 3, Qwen...) and SentencePiece-style BPE "
    "(Llama 2, Mistral...)"
)

_MODEL_TYPES = {1: "Unigram", 2: "BPE", 3: "word", 4: "character"}
_NORMAL, _UNKNOWN, _CONTROL, _USER_DEFINED, _UNUSED, _BYTE = 1, 2, 3, 4, 5, 6


def _fail(path: str | os.PathLike[str], where: str, problem: str) -> FormatError:
    return FormatError(f"{os.fspath(path)}: {where}: {problem}")


class _ProtoError(ValueError):
    """The bytes are not a protobuf message."""


def _fields(data: bytes) -> Iterator[tuple[int, int, Any]]:
    """The (field number, wire type, value) of a protobuf message: ints for varints and fixed numbers,
    bytes for length-delimited fields."""
    pos, end = 0, len(data)

    def varint() -> int:
        nonlocal pos
        value = shift = 0
        while True:
            if pos >= end or shift > 63:
                raise _ProtoError("a cut varint")
            byte = data[pos]
            pos += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return value

    while pos < end:
        key = varint()
        number, wire = key >> 3, key & 7
        if wire == 0:
            yield number, wire, varint()
        elif wire == 1:
            if pos + 8 > end:
                raise _ProtoError("a cut 64-bit field")
            yield number, wire, data[pos : pos + 8]
            pos += 8
        elif wire == 2:
            size = varint()
            if pos + size > end:
                raise _ProtoError("a cut length-delimited field")
            yield number, wire, data[pos : pos + size]
            pos += size
        elif wire == 5:
            if pos + 4 > end:
                raise _ProtoError("a cut 32-bit field")
            yield number, wire, data[pos : pos + 4]
            pos += 4
        else:
            raise _ProtoError(f"wire type {wire}")
        if number == 0:
            raise _ProtoError("field number 0")


def is_sentencepiece_model(data: bytes) -> bool:
    """True when ``data`` parses as a ``ModelProto`` holding pieces (field 1, each with a text).

    Example:
        >>> is_sentencepiece_model(b"\\x0a\\x05\\x0a\\x01a\\x18\\x01"), is_sentencepiece_model(b"{}")
        (True, False)
    """
    try:
        number, wire, first = next(_fields(data))  # the first field only: ``data`` may be a file's head
        return number == 1 and wire == 2 and any(n == 1 and w == 2 for n, w, _ in _fields(first))
    except (_ProtoError, StopIteration):
        return False


def load_sentencepiece(path: str | os.PathLike[str]) -> Tokenizer:
    """Load a SentencePiece ``.model`` of type BPE with ``byte_fallback``.

    Raises:
        FormatError: The file is not such a model; the message says what it is and why it is not read.

    Example:
        >>> load_sentencepiece("tokenizer.model").encode("Hello")  # needs a .model  # doctest: +SKIP
        [15043]
    """
    from ..encoding.tokenizer import Tokenizer

    source = Path(path)
    data = source.read_bytes()
    ready = native.sentencepiece_model(data)
    if ready is not None:
        return _ready_tokenizer(source, ready)
    # The reference (BPE_STUDIO_PURE=1), and the path that names a fault: each step natively when it can.
    texts, piece_scores, kinds, trainer, normalizer = _read_model(source, data)
    _check_specs(source, len(texts), trainer, normalizer)
    # The tables natively (the loop of _piece_tables in one pass: 32k-256k pieces), unless a byte piece is
    # at fault (then _piece_tables names it).
    found = native.sentencepiece_tables(texts, kinds)
    if found is not None:
        vocab, normal, frozen_texts, byte_id_list = found
        frozen = set(frozen_texts)
    else:
        vocab, normal, frozen, byte_id_list = _piece_tables(source, texts, kinds)

    # Every split of a piece into two symbols (pieces, or single characters) merges with the piece's rank:
    # the order of the scores, highest first, equal scores sharing a rank (then leftmost goes first). The
    # kernel derives them, and the pairs the views show, from the same pieces (rust/src/spmodel.rs).
    derived = native.sentencepiece_pairs(texts, piece_scores, kinds)
    piece_merges: Callable[[], list[tuple[str, str]]] | None = None
    merge_table: native.MergeTable | None = None
    ranks: dict[tuple[str, str], int] | Callable[[], dict[tuple[str, str], int]]
    if derived is not None:
        # (Each made when first asked for: the ranks by the first encode, the pairs by a view.)
        ranks, piece_merges, merge_table = derived
    else:
        scores = {  # (each text's last score, as normal keeps its last id)
            text: score
            for text, score, kind_id in zip(texts, piece_scores, kinds, strict=True)
            if kind_id in (_NORMAL, _USER_DEFINED)
        }
        order = {s: r for r, s in enumerate(sorted(set(scores.values()), reverse=True))}
        ranks = {}
        for text in normal:
            if text in frozen:
                continue
            for k in range(1, len(text)):
                left, right = text[:k], text[k:]
                if (len(left) == 1 or left in normal) and (len(right) == 1 or right in normal):
                    ranks[(left, right)] = order[scores[text]]

    model = PieceModel(
        normal,
        byte_ids=byte_id_list,
        ranks=ranks,
        frozen=frozen,
        pipeline=_pipeline(normalizer),
        prefix=bool(normalizer.get(3)),
        piece_merges=piece_merges,
        # (Natively, no ranks needed: the ranks above are made only if a view or a cut model asks.)
        native_encode=native.sentencepiece_encoder(texts, piece_scores, kinds, byte_id_list),
    )
    try:
        merges = merge_table if merge_table is not None else _merge_bytes(model)
        return Tokenizer(vocab, merges, pattern="gpt2", piece_model=model)
    except ValueError as exc:
        raise FormatError(f"{source}: {exc}") from None


def _ready_tokenizer(source: Path, ready: native.SentencepieceModel) -> Tokenizer:
    """The Tokenizer of a model read natively in one call (:func:`native.sentencepiece_model`): the same
    checks, tables and model as the steps of :func:`load_sentencepiece` make, the encoder made already and
    the pairs (for the views and ``inspect``) when first asked for."""
    from ..encoding.tokenizer import Tokenizer

    trainer_fields, normalizer_fields, vocab, frozen_texts, byte_id_list, encode, derived = ready
    normalizer: dict[int, Any] = {3: 1, 4: 1, 5: 1}  # (_read_model's defaults)
    normalizer.update(normalizer_fields)
    _check_specs(source, len(vocab), dict(trainer_fields), normalizer)
    ranks, piece_merges, merge_table, normal = derived
    model = PieceModel(
        normal,  # (text -> id made when first used: encoding natively needs none of the 32k strs)
        byte_ids=byte_id_list,
        ranks=ranks,
        frozen=frozen_texts,
        pipeline=_pipeline(normalizer),
        prefix=bool(normalizer.get(3)),
        piece_merges=piece_merges,
        native_encode=lambda: encode,
    )
    try:
        # (The kernel made the vocab, ids 0..n-1 and bytes, and hands it over: Tokenizer need not check it.)
        return Tokenizer(vocab, merge_table, pattern="gpt2", piece_model=model, _kernel_vocab=True)
    except ValueError as exc:
        raise FormatError(f"{source}: {exc}") from None


def _check_specs(
    source: Path, pieces: int, trainer: Mapping[int, int], normalizer: Mapping[int, Any]
) -> None:
    """Refuse a model this engine does not reproduce, saying why (its pieces' count and specs).

    Raises:
        FormatError: No pieces, not BPE, no byte fallback, '▁' as a suffix, a character map, or extra
            whitespace removed.
    """
    if not pieces:
        raise _fail(source, "pieces", "none; this is not a SentencePiece model")
    model_type = _MODEL_TYPES.get(trainer.get(3, 1), f"type {trainer.get(3)}")
    if model_type != "BPE":
        raise _fail(source, "model_type", f"a {model_type} model (SentencePiece); {OPENS}")
    if not trainer.get(35):
        raise _fail(
            source,
            "byte_fallback",
            "false: a SentencePiece BPE without byte fallback writes <unk> for characters it lacks, which "
            f"this engine does not reproduce; {OPENS} with byte_fallback",
        )
    if trainer.get(24):
        raise _fail(source, "treat_whitespace_as_suffix", "true is not supported ('▁' ends words here)")
    charsmap = normalizer.get(2, b"")
    if charsmap:
        name = normalizer.get(1, b"").decode("utf-8", errors="replace") or "a custom rule"
        raise _fail(
            source,
            "normalizer_spec",
            f"normalization rule {name!r} (a character map) is not reproduced; only 'identity' models "
            "(as Llama 2's) are read -- train with normalization_rule_name='identity'",
        )

    if normalizer.get(4):
        # sentencepiece also drops spaces beside newlines and tabs then, in a way not reproduced here.
        raise _fail(
            source,
            "normalizer_spec.remove_extra_whitespaces",
            "true is not reproduced; only models that keep spaces as they are (as Llama 2's, Mistral's and "
            "Gemma's) are read -- train with remove_extra_whitespaces=False",
        )


def _pipeline(normalizer: Mapping[int, Any]) -> Pipeline:
    """The normalizer of a model's specs: ``add_dummy_prefix`` puts one ``▁`` before the text,
    ``escape_whitespaces`` writes its spaces ``▁``."""
    # (Imported here: detect.py imports this module to tell a .model, and a rank file needs no pipeline.)
    from ..pretokenize.hf import Pipeline

    steps: list[dict[str, Any]] = []
    if normalizer.get(3):
        steps.append({"type": "Prepend", "prepend": "▁"})
    if normalizer.get(5):
        steps.append({"type": "Replace", "pattern": {"String": " "}, "content": "▁"})
    return Pipeline.from_json({"type": "Sequence", "normalizers": steps}, None, byte_level=False)


def _piece_tables(
    source: Path, texts: list[str], kinds: list[int]
) -> tuple[dict[int, bytes], dict[str, int], set[str], list[int]]:
    """A model's tables from its pieces: (id -> bytes: a byte piece's byte, any other piece's text with ``▁``
    read as a space; text -> id of the normal and user-defined pieces, a text listed twice under its last
    id; the user-defined texts; the id of each byte 0..255). The reference of
    ``native.sentencepiece_tables``.

    Raises:
        FormatError: A byte piece is not ``<0xNN>``, or a byte has no piece.
    """
    vocab: dict[int, bytes] = {}
    normal: dict[str, int] = {}
    frozen: set[str] = set()
    byte_ids: dict[int, int] = {}
    spelled = pieces_bytes(texts)  # (in one pass; a byte piece's is replaced below)
    for i, (text, kind_id) in enumerate(zip(texts, kinds, strict=True)):
        if kind_id == _BYTE:
            byte = _byte_of(text)
            if byte is None:
                raise _fail(source, f"piece {i}", f"{text!r} is a byte piece but not <0xNN>")
            vocab[i] = bytes([byte])
            byte_ids[byte] = i
            continue
        vocab[i] = spelled[i]
        if kind_id in (_NORMAL, _USER_DEFINED):
            normal[text] = i
            if kind_id == _USER_DEFINED:
                frozen.add(text)
    if len(byte_ids) != 256:
        raise _fail(source, "pieces", f"{len(byte_ids)} byte pieces <0xNN>; byte_fallback needs all 256")
    return vocab, normal, frozen, [byte_ids[b] for b in range(256)]


def _read_model(
    source: Path, data: bytes
) -> tuple[list[str], list[float], list[int], dict[int, int], dict[int, Any]]:
    """A ``.model``'s pieces (texts, scores, types) and its trainer and normalizer specs (number -> value,
    the last of a number kept), read natively (rust/src/spmodel.rs) or, when the kernel is off or finds a
    fault, here, which names it.

    Raises:
        FormatError: The bytes are not a protobuf message, or a piece's text is not UTF-8.
    """
    normalizer: dict[int, Any] = {3: 1, 4: 1, 5: 1}  # add_dummy_prefix, remove_extra_whitespaces, escape
    found = native.parse_sentencepiece(data)
    if found is not None:
        texts, scores, kinds, trainer_fields, normalizer_fields = found
        normalizer.update(normalizer_fields)
        return texts, scores, kinds, dict(trainer_fields), normalizer
    texts, scores, kinds = [], [], []
    trainer: dict[int, int] = {}
    try:
        for number, wire, value in _fields(data):
            if number == 1 and wire == 2:
                text, score, kind = "", 0.0, _NORMAL
                for n, w, v in _fields(value):
                    if n == 1 and w == 2:
                        text = v.decode("utf-8")
                    elif n == 2 and w == 5:
                        score = struct.unpack("<f", v)[0]
                    elif n == 3 and w == 0:
                        kind = v
                texts.append(text)
                scores.append(score)
                kinds.append(kind)
            elif number == 2 and wire == 2:
                trainer.update((n, v) for n, w, v in _fields(value) if w == 0)
            elif number == 3 and wire == 2:
                normalizer.update((n, v) for n, _, v in _fields(value))
    except (_ProtoError, UnicodeDecodeError) as exc:
        raise _fail(source, "byte 0", f"not a SentencePiece model ({exc}); give a .model file") from None
    return texts, scores, kinds, trainer, normalizer


def _byte_of(piece: str) -> int | None:
    if len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"):
        try:
            byte = int(piece[3:5], 16)
        except ValueError:
            return None
        return byte if byte_piece(byte) == piece.upper().replace("0X", "0x") else None
    return None


def _merge_bytes(model: PieceModel) -> list[tuple[bytes, bytes]]:
    """The model's merges as the Tokenizer holds them (the pieces' bytes), for the views' merge trees."""
    spelled = {piece: piece_bytes(piece) for piece in model.pieces}  # (a merge joins two pieces)
    return [(spelled[left], spelled[right]) for left, right in model.piece_merges()]


def load_piece_hf(
    path: Path, document: Mapping[str, Any], specials: dict[str, int], template: Any
) -> Tokenizer:
    """The Tokenizer of a ``tokenizer.json`` whose ``BPE`` model has ``byte_fallback`` (Llama 2 style).

    Args:
        path: The file (for messages).
        document: Its parsed JSON.
        specials: Its added tokens, text -> id.
        template: What its post-processor adds around a text (a ``Template`` or None).

    Raises:
        FormatError: Something this engine does not reproduce, naming the key.
    """
    from ..encoding.tokenizer import Tokenizer
    from ..pretokenize.hf import Pipeline, PipelineError

    model = document["model"]
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key):
            raise _fail(path, f"model.{key}", f"{model[key]!r} is not supported")
    if model.get("dropout"):
        raise _fail(path, "model.dropout", "BPE dropout makes encoding random; set it to null")
    try:
        pipeline = Pipeline.from_json(
            document.get("normalizer"), document.get("pre_tokenizer"), byte_level=False
        )
    except PipelineError as exc:
        if "ByteLevel in" in exc.problem:
            raise _fail(
                path,
                "model.byte_fallback",
                "true beside a ByteLevel pre-tokenizer: byte-level BPE has a token for every byte and needs "
                "no fallback; set it to false",
            ) from None
        raise _fail(path, exc.where, exc.problem) from None
    raw_vocab = model.get("vocab")
    if not isinstance(raw_vocab, dict):
        raise _fail(path, "model.vocab", "expected an object of token -> id")
    vocab: dict[int, bytes] = {}
    pieces: dict[str, int] = {}
    byte_ids: dict[int, int] = {}
    for key, i in raw_vocab.items():
        if not isinstance(i, int) or isinstance(i, bool) or i < 0:
            raise _fail(path, f"model.vocab[{key!r}]", f"expected a non-negative integer id, got {i!r}")
        if i in vocab:
            raise _fail(path, f"model.vocab[{key!r}]", f"id {i} is used twice")
        byte = _byte_of(key)
        if byte is not None:
            vocab[i] = bytes([byte])
            byte_ids[byte] = i
        else:
            vocab[i] = piece_bytes(key)
            pieces[key] = i
    for special, i in specials.items():
        vocab.setdefault(i, special.encode("utf-8"))
        if vocab[i] != special.encode("utf-8"):
            vocab[i] = special.encode("utf-8")  # an added token is its text (tokenizers matches it whole)
    missing = [b for b in range(256) if b not in byte_ids]
    if missing:
        raise _fail(
            path,
            "model.vocab",
            f"{len(missing)} byte tokens <0xNN> are missing (first: {byte_piece(missing[0])}); byte_fallback "
            "needs all 256",
        )
    raw_merges = model.get("merges")
    if not isinstance(raw_merges, list):
        raise _fail(path, "model.merges", "expected a list")
    merges: list[tuple[str, str]] = []
    for n, item in enumerate(raw_merges):
        parts = item.split(" ") if isinstance(item, str) else item
        if not (isinstance(parts, list) and len(parts) == 2 and all(isinstance(p, str) for p in parts)):
            raise _fail(path, f"model.merges[{n}]", f"expected 'left right', got {item!r}")
        merges.append((parts[0], parts[1]))
    prefix = "Prepend" in pipeline.normalizer_names() or any(
        isinstance(step, dict) and step.get("type") == "Metaspace" and step.get("prepend_scheme") != "never"
        for step in _steps(document.get("pre_tokenizer"))
    )
    try:
        piece_model = PieceModel(
            pieces,
            merges,
            byte_ids=[byte_ids[b] for b in range(256)],
            ignore_merges=bool(model.get("ignore_merges")),
            pipeline=pipeline,
            prefix=prefix,
        )
        return Tokenizer(
            vocab,
            _merge_bytes(piece_model),
            specials,
            pattern="gpt2",
            template=template,
            piece_model=piece_model,
        )
    except ValueError as exc:
        raise FormatError(f"{path}: {exc}") from None


def _steps(node: object) -> list[object]:
    if isinstance(node, dict) and node.get("type") == "Sequence":
        return list(node.get("pretokenizers") or [])
    return [node]
