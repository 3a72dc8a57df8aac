"""Hugging Face ``tokenizers``' ``tokenizer.json`` for byte-level BPE.

What is read: a ``BPE`` model (vocab in GPT-2 characters, merges as ``"left right"`` strings or pairs, and
``ignore_merges``, as Llama 3's files set it) with any normalizer and pre-tokenizer built of the steps
:mod:`bpe_studio.engine.pretokenize.hf` runs (``Split`` with every behaviour, ``Digits``, ``Punctuation``,
``Metaspace``, ``NFKC``, ``Lowercase``, ``Replace``, ... around one ``ByteLevel``), so OLMo 2, DeepSeek-V3
and the legacy Claude tokenizer load too. The common shapes (``ByteLevel`` with its GPT-2 regex, or a
``Sequence`` of one ``Split`` regex and ``ByteLevel``, with no normalizer or ``NFC``: Llama 3, Qwen 2/3/3.5,
OLMo, OLMo 2, Phi-4) become one pattern, which the native kernel splits (with a native scanner when the regex
is a preset's or a model's: ``patterns.scanner_name``); the others run as a
:class:`~bpe_studio.engine.pretokenize.hf.Pipeline` in Python before the BPE. A ``decoder`` other than
``ByteLevel`` is applied by ``decode``. Added tokens become special tokens. What is not byte-level BPE at
all (WordPiece, Unigram, SentencePiece-style BPE with ``byte_fallback``, a pre-tokenizer without
``ByteLevel``) is refused with one sentence saying why; a step this engine does not know, naming its key.

A ``Split`` keeps the text between two matches as a piece of its own, where this engine's pattern (like
tiktoken's) drops text it does not match: a regex that is not one of the presets is read with a second
alternative, "a run of characters where it does not match", which finds the same pieces.

A ``post_processor`` that adds tokens around a text (``TemplateProcessing``, as Llama-3's BOS, or
``BertProcessing`` / ``RobertaProcessing``) becomes the tokenizer's ``template``, so that ``encode`` gives
the ids of ``tokenizers``' ``encode(text).ids`` (where ``add_special_tokens=True`` is the default).
``ByteLevel`` (which only moves offsets) and a ``Sequence`` holding one of these are read too; any other
post-processor is not applied, with a :class:`FormatWarning`. ``truncation``, and a ``padding`` that would
change one text's ids, are not applied either: they cut or pad model inputs to a length, while this engine
encodes whole texts; a :class:`FormatWarning` says so.

What is written: the same shape, which ``tokenizers.Tokenizer.from_file`` loads and which encodes with the
same ids (``encode(text).ids``), the template included.
"""

from __future__ import annotations

import functools
import json
import os
import warnings
from collections.abc import Mapping
from itertools import accumulate, chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import native
from ..bytes_unicode import bytes_to_text, char_to_byte
from ..pretokenize.hf import Pipeline, PipelineError, from_oniguruma, to_oniguruma
from ..pretokenize.patterns import PATTERNS, compile_pattern, preset_name, scanner_name
from .atomic import atomic_write
from .base import HF_FILE, FormatError, FormatWarning
from .sentencepiece import OPENS
from .studio import read_json, utf8

if TYPE_CHECKING:
    from ..encoding.hf_decode import Decoder
    from ..encoding.tokenizer import Template, Tokenizer

__all__ = ["from_oniguruma", "load_hf", "save_hf", "to_oniguruma"]

FILE_NAME = HF_FILE

# ByteLevel(use_regex=False) alone does not split the text: the whole text is one pre-token.
_NO_SPLIT = r"[\s\S]+"

# A Split's pieces as one regex: R's matches, or else a run of characters where R does not match.
_GAPS = r"(?:{0})|(?:(?!(?:{0}))[\s\S])+"


def _with_gaps(pattern: str) -> str:
    r"""The pattern whose matches are a ``Split``'s pieces: its matches and the text between them.

    Presets and the patterns with a native scanner match every character already and stay as they are
    (so that they are still recognised, and split natively: Llama 3's, Qwen's).

    Example:
        >>> print(_with_gaps(r"\d+"))
        (?:\d+)|(?:(?!(?:\d+))[\s\S])+
        >>> _with_gaps(PATTERNS["gpt2"]) == PATTERNS["gpt2"]
        True
    """
    # (A preset's name is a regex here: "gpt2" matches the text "gpt2".)
    if scanner_name(pattern) is not None and pattern not in PATTERNS:
        return pattern
    return _GAPS.format(pattern)


def _without_gaps(pattern: str) -> str:
    r"""Undo :func:`_with_gaps` (for writing the ``Split`` back).

    Example:
        >>> print(_without_gaps(_with_gaps(r"\d+")))
        \d+
    """
    size = (len(pattern) - len(_GAPS.format(""))) // 2  # the wrapped regex holds R twice
    inner = pattern[3 : 3 + size]
    return inner if size > 0 and _GAPS.format(inner) == pattern else pattern


#: Why each kind of tokenizer that is not byte-level BPE cannot be read, in one sentence.
NOT_BYTE_LEVEL = {
    "WordPiece": (
        "a WordPiece model (BERT style: the longest vocabulary prefix of each word, '##' inside words, no "
        f"merges); {OPENS}"
    ),
    "Unigram": (
        f"a Unigram model (SentencePiece: the most probable split by token scores, no merges); {OPENS}"
    ),
    "WordLevel": f"a WordLevel model (whole words to ids, no merges); {OPENS}",
    "byte_fallback": (
        "byte_fallback BPE (SentencePiece style, as Llama 2 and Mistral) is not byte-level BPE: its tokens "
        "are pieces of text with '▁' for spaces, and only unknown characters fall back to bytes"
    ),
    "Metaspace": (
        "Metaspace (SentencePiece style, '▁' for spaces) is not byte-level BPE: the tokens are pieces of "
        "text, not bytes"
    ),
}


def _fail(path: str | os.PathLike[str], where: str, problem: str) -> FormatError:
    return FormatError(f"{os.fspath(path)}: {where}: {problem}")


def is_hf_document(document: object) -> bool:
    """True when a parsed JSON document looks like a ``tokenizers`` file (it has a ``model`` object)."""
    return isinstance(document, dict) and isinstance(document.get("model"), dict)


def _byte_level(path: Path, where: str, options: Mapping[str, Any], *, regex_expected: bool | None) -> bool:
    if options.get("add_prefix_space", False):
        raise _fail(
            path, f"{where}.add_prefix_space", "true is not supported (it inserts a space before the text)"
        )
    use_regex = bool(options.get("use_regex", True))
    if regex_expected is not None and use_regex != regex_expected:
        raise _fail(path, f"{where}.use_regex", f"expected {str(regex_expected).lower()} after a Split")
    return use_regex


def _pattern_of(path: Path, pre: object) -> str:
    """The pre-tokenization regex a ``pre_tokenizer`` entry amounts to."""
    if not isinstance(pre, dict):
        raise _fail(path, "key 'pre_tokenizer'", "expected ByteLevel, or Sequence[Split, ByteLevel]")
    kind = pre.get("type")
    if kind == "ByteLevel":
        return PATTERNS["gpt2"] if _byte_level(path, "pre_tokenizer", pre, regex_expected=None) else _NO_SPLIT
    if kind == "Sequence":
        steps = pre.get("pretokenizers")
        if (
            isinstance(steps, list)
            and len(steps) == 2
            and all(isinstance(s, dict) for s in steps)
            and steps[0].get("type") == "Split"
            and steps[1].get("type") == "ByteLevel"
        ):
            split = steps[0]
            pattern = split.get("pattern")
            if not isinstance(pattern, dict) or not isinstance(pattern.get("Regex"), str):
                raise _fail(path, "pre_tokenizer.pretokenizers[0].pattern", "expected {'Regex': '...'}")
            regex_text = from_oniguruma(pattern["Regex"])
            behavior, invert = split.get("behavior", "Isolated"), split.get("invert", False)
            # 'Removed' with invert keeps the matches and drops the text between them; the matches of a
            # pattern with a native scanner cover every character, so nothing is dropped: that is
            # 'Isolated' (OLMo 2's Split).
            inverted_whole = behavior == "Removed" and invert is True and scanner_name(regex_text) is not None
            if not inverted_whole and (behavior != "Isolated" or invert):
                raise _fail(
                    path,
                    "pre_tokenizer.pretokenizers[0]",
                    "only behavior 'Isolated' without invert is supported",
                )
            _byte_level(path, "pre_tokenizer.pretokenizers[1]", steps[1], regex_expected=False)
            return _with_gaps(regex_text)
        kinds = (
            [s.get("type") if isinstance(s, dict) else None for s in steps] if isinstance(steps, list) else []
        )
        if "Metaspace" in kinds:
            raise _fail(path, "pre_tokenizer", NOT_BYTE_LEVEL["Metaspace"])
        splits = kinds.count("Split")
        why = (
            f"; this one has {splits} Split steps (DeepSeek-V3 style), and bpe-studio pre-tokenizes with "
            "one regex"
            if splits > 1
            else f"; this one is {kinds}"
        )
        raise _fail(
            path,
            "key 'pre_tokenizer'",
            "a Sequence must be [Split(Regex, Isolated), ByteLevel(use_regex=false)]" + why,
        )
    if kind == "Metaspace":
        raise _fail(path, "pre_tokenizer", NOT_BYTE_LEVEL["Metaspace"])
    raise _fail(
        path, "key 'pre_tokenizer'", f"type {kind!r} is not supported; expected ByteLevel or Sequence"
    )


def _normalizer_of(path: Path, normalizer: object) -> str | None:
    """``"NFC"`` for an NFC normalizer (alone or as the only step of a Sequence), None for none.

    Raises:
        FormatError: Any other normalizer (it would change the text in a way this engine does not).
    """
    if normalizer is None:
        return None
    steps = [normalizer]
    if isinstance(normalizer, dict) and normalizer.get("type") == "Sequence":
        steps = normalizer.get("normalizers") or []
        if not steps:
            return None
    kinds = [step.get("type") if isinstance(step, dict) else None for step in steps]
    if kinds == ["NFC"]:
        return "NFC"
    if "Prepend" in kinds or "Replace" in kinds:
        raise _fail(path, "key 'normalizer'", NOT_BYTE_LEVEL["Metaspace"])
    raise _fail(
        path,
        "key 'normalizer'",
        f"{kinds[0] if len(kinds) == 1 else kinds} is not supported: only null or NFC (a normalizer changes "
        "the text before encoding)",
    )


def _pipeline_of(path: Path, document: Mapping[str, Any], shape_error: Exception) -> Pipeline:
    """The ``normalizer`` and ``pre_tokenizer`` as a :class:`Pipeline` of steps.

    Raises:
        FormatError: A step is malformed or not supported (naming it); ``shape_error`` (which says why it is
            not byte-level BPE) when there is no ``ByteLevel`` step but a ``Metaspace`` one.
    """
    try:
        return Pipeline.from_json(document.get("normalizer"), document.get("pre_tokenizer"))
    except PipelineError as exc:
        if "ByteLevel steps" in exc.problem and "Metaspace" in json.dumps(document.get("pre_tokenizer")):
            raise shape_error from None
        raise _fail(path, exc.where, exc.problem) from None


def _decoder_of(path: Path, decoder: object) -> Decoder | None:
    """The ``decoder`` as a :class:`~bpe_studio.engine.encoding.hf_decode.Decoder`, or None for none or
    ``ByteLevel`` alone (the tokens' bytes read as UTF-8, which is what ``decode`` does anyway).

    One that cannot be read is not applied, with a :class:`FormatWarning` (the ids stay exact; only the
    text of ``decode`` may differ).
    """
    from ..encoding.hf_decode import Decoder

    if decoder is None or (isinstance(decoder, dict) and decoder.get("type") == "ByteLevel"):
        return None
    try:
        return Decoder.from_json(decoder)
    except PipelineError as exc:
        warnings.warn(
            f"{path}: {exc.where}: {exc.problem} -- the decoder is not applied: decode joins the tokens' "
            "bytes",
            FormatWarning,
            stacklevel=4,
        )
        return None


class _NotAppliedError(Exception):
    """A post-processor whose effect on the ids this engine does not reproduce; the message says which."""


def _processor_ids(path: Path, where: str, step: object) -> tuple[list[int], list[int]]:
    """The ids one post-processor puts before and after a single text (``([], [])`` for ``ByteLevel``).

    Raises:
        FormatError: The entry is malformed (``tokenizers`` would not load it either).
        _NotAppliedError: A processor of another kind, or a template that is not ``[specials] $A [specials]``.
    """
    if not isinstance(step, dict):
        raise _fail(path, where, "expected an object with a 'type'")
    kind = step.get("type")
    if kind == "ByteLevel":
        return [], []  # it only adjusts offsets; the ids are unchanged
    if kind in ("BertProcessing", "RobertaProcessing"):
        cls, sep = step.get("cls"), step.get("sep")
        ends: list[int] = []
        for end in (cls, sep):
            if not (isinstance(end, list) and len(end) == 2 and type(end[1]) is int):
                raise _fail(path, where, "expected 'cls' and 'sep' as [token, id]")
            ends.append(end[1])
        return [ends[0]], [ends[1]]
    if kind == "TemplateProcessing":
        single, specials = step.get("single"), step.get("special_tokens")
        if not isinstance(single, list) or not isinstance(specials, dict):
            raise _fail(path, where, "expected 'single' (a list) and 'special_tokens' (an object)")
        before: list[int] = []
        after: list[int] | None = None  # None until the text's place ($A) is seen
        for n, piece in enumerate(single):
            sequence = piece.get("Sequence") if isinstance(piece, dict) else None
            if isinstance(sequence, dict):
                if sequence.get("id") != "A" or after is not None:
                    raise _NotAppliedError(
                        f"{where}: its single template holds {sequence.get('id')!r}, not $A once"
                    )
                after = []
                continue
            special = piece.get("SpecialToken") if isinstance(piece, dict) else None
            name = special.get("id") if isinstance(special, dict) else None
            entry = specials.get(name) if isinstance(name, str) else None
            ids = entry.get("ids") if isinstance(entry, dict) else None
            if not isinstance(ids, list) or not all(type(i) is int for i in ids):
                raise _fail(
                    path,
                    f"{where}.single[{n}]",
                    "expected the text ($A) or a special token listed in 'special_tokens' with its ids",
                )
            (before if after is None else after).extend(ids)
        if after is None:
            raise _NotAppliedError(f"{where}: its single template does not hold the text ($A)")
        return before, after
    raise _NotAppliedError(f"{where}: type {kind!r} is not one bpe-studio applies")


def _template_of(path: Path, processor: object) -> Template | None:
    """What a ``post_processor`` adds around a single text, as ``tokenizers.Tokenizer.encode`` applies it.

    One that cannot be reproduced is not applied, with a :class:`FormatWarning` (refusing it would make
    the file unusable even for looking at the text's own ids, which stay exact).
    """
    from ..encoding.tokenizer import Template

    if processor is None:
        return None
    steps: list[tuple[str, object]] = [("post_processor", processor)]
    if isinstance(processor, dict) and processor.get("type") == "Sequence":
        inner = processor.get("processors")
        if not isinstance(inner, list):
            raise _fail(path, "post_processor.processors", "expected a list")
        steps = [(f"post_processor.processors[{n}]", step) for n, step in enumerate(inner)]
    try:
        found = [(where, _processor_ids(path, where, step)) for where, step in steps]
        adding = [(where, ids) for where, ids in found if ids != ([], [])]
        if len(adding) > 1:
            # tokenizers' Sequence then gives ids that follow no simple rule (a second template is
            # dropped, a RobertaProcessing after a template adds its SEP twice): do not guess.
            raise _NotAppliedError(
                f"post_processor: a Sequence with {len(adding)} processors that add tokens"
            )
    except _NotAppliedError as exc:
        warnings.warn(
            f"{path}: {exc} -- the post-processor is not applied: tokenizers adds ids around each text "
            "that bpe-studio leaves out (the text's own ids are the same)",
            FormatWarning,
            stacklevel=4,
        )
        return None
    if not adding:
        return None
    before, after = adding[0][1]
    return Template(tuple(before), tuple(after))


def _warn_unapplied(path: Path, document: Mapping[str, Any]) -> None:
    """Warn about ``truncation`` / ``padding``: options for model inputs that this engine does not apply.

    Refusing would make many published files unusable for what this engine does (encode whole texts and
    look at the ids); the ids it gives are ``tokenizers``' ids before the cut or the padding.
    """
    truncation = document.get("truncation")
    if truncation is not None:
        length = truncation.get("max_length") if isinstance(truncation, dict) else None
        warnings.warn(
            f"{path}: key 'truncation' is not applied: tokenizers cuts each encoding to max_length {length} "
            "ids, bpe-studio encodes whole texts (longer texts get more ids); set it to null to silence this",
            FormatWarning,
            stacklevel=4,
        )
    padding = document.get("padding")
    if padding is not None and not (
        isinstance(padding, dict)
        and padding.get("strategy") == "BatchLongest"
        and padding.get("pad_to_multiple_of") is None
    ):
        # Padding to the longest text of a batch does nothing to one text; any other padding adds ids.
        pad_id = padding.get("pad_id") if isinstance(padding, dict) else None
        warnings.warn(
            f"{path}: key 'padding' is not applied: tokenizers pads encodings with id {pad_id} to a length, "
            "bpe-studio encodes texts without padding; set it to null to silence this",
            FormatWarning,
            stacklevel=4,
        )


class NativeDocument(dict[str, Any]):
    """A ``tokenizer.json`` as :func:`read_tokenizer_json` reads it with the native kernel: the document
    ``json.load`` gives, except that ``model.vocab`` and ``model.merges`` are None, their 50k-250k entries
    kept in :attr:`tables` (rust/src/hfjson.rs) until :func:`load_hf` takes them (:func:`full_document`
    puts them back as ``json.load`` gives them)."""

    __slots__ = ("tables",)

    def __init__(self, document: dict[str, Any], tables: native.HfJsonTables) -> None:
        super().__init__(document)
        self.tables = tables


def read_tokenizer_json(path: str | os.PathLike[str]) -> Any:
    """:func:`~.studio.read_json` of a JSON file, the same document and the same errors; with the native
    kernel on, a ``tokenizer.json``'s vocab and merges are read natively into a :class:`NativeDocument`
    (parsing 2 MB with ``json.load`` costs more than the rest of opening the file), the rest by ``json``."""
    if native.backend() == "native":
        with open(path, "rb") as handle:
            found = native.read_hf_json(handle.read())
        if found is not None:
            rest, tables = found
            try:
                document = json.loads(rest)
            except ValueError:  # (e.g. an integer too long to convert: read_json names it)
                pass
            else:
                return NativeDocument(document, tables)
    return read_json(path)


def full_document(document: Any) -> Any:
    """``document`` as ``json.load`` gives it: a :class:`NativeDocument`'s vocab and merges put back."""
    if isinstance(document, NativeDocument):
        model = document["model"]
        if model.get("vocab") is None:
            model["vocab"] = document.tables.raw_vocab()
            model["merges"] = document.tables.raw_merges()
    return document


def load_hf(path: str | os.PathLike[str], document: Any = None) -> Tokenizer:
    """Load a Hugging Face ``tokenizer.json`` holding a byte-level BPE.

    Args:
        path: The file.
        document: Its parsed JSON, if already read.

    Raises:
        FormatError: The file is not a byte-level BPE that this engine reproduces exactly; the message
            names the key.

    Warns:
        FormatWarning: ``truncation`` or ``padding`` is set, or a ``post_processor`` this engine does not
            reproduce; it is not applied (see the module's doc).

    Example:
        >>> save_hf(small, "out/tokenizer.json")
        PosixPath('out/tokenizer.json')
        >>> load_hf("out/tokenizer.json").encode("the cat") == small.encode("the cat")
        True
    """
    from ..encoding.tokenizer import Tokenizer

    source = Path(path)
    if document is None:
        document = read_tokenizer_json(source)
    if not is_hf_document(document):
        raise _fail(source, "key 'model'", "missing; this is not a Hugging Face tokenizer.json")
    model = document["model"]
    kind = model.get("type", "BPE")
    if kind != "BPE":
        reason = NOT_BYTE_LEVEL.get(kind, f"a {kind!r} model; {OPENS}")
        raise _fail(source, "model.type", reason)
    pieces = bool(model.get("byte_fallback"))  # SentencePiece style: formats/sentencepiece.py reads it
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key):
            raise _fail(source, f"model.{key}", f"{model[key]!r} is not supported by byte-level BPE")
    if model.get("dropout"):
        raise _fail(source, "model.dropout", "BPE dropout makes encoding random; set it to null")
    pipeline: Pipeline | None = None
    normalizer, pattern = None, _NO_SPLIT
    try:
        if pieces:
            raise FormatError("read by formats/sentencepiece.py")
        normalizer = _normalizer_of(source, document.get("normalizer"))
        pattern = _pattern_of(source, document.get("pre_tokenizer"))
        if preset_name(pattern) is None:  # (a preset compiles: not importing ``regex`` saves 7 ms)
            compile_pattern(pattern)  # a Split regex that can match the empty string is not one pattern
    except (FormatError, ValueError) as exc:
        # Not one regex (and NFC): the steps themselves, run as tokenizers runs them.
        if not pieces:
            pipeline = _pipeline_of(source, document, exc)
        normalizer, pattern = None, _NO_SPLIT
    decoder = _decoder_of(source, document.get("decoder"))
    template = _template_of(source, document.get("post_processor"))

    specials: dict[str, int] = {}
    added = document.get("added_tokens") or []
    if not isinstance(added, list):
        raise _fail(source, "key 'added_tokens'", "expected a list")
    for n, entry in enumerate(added):
        where = f"added_tokens[{n}]"
        if (
            not isinstance(entry, dict)
            or not isinstance(entry.get("content"), str)
            or not isinstance(entry.get("id"), int)
        ):
            raise _fail(source, where, "expected an object with 'id' and 'content'")
        for flag in ("lstrip", "rstrip", "single_word"):
            if entry.get(flag):
                raise _fail(source, f"{where}.{flag}", "true is not supported")
        specials[entry["content"]] = entry["id"]

    if pieces:
        from .sentencepiece import load_piece_hf

        tokenizer = load_piece_hf(source, full_document(document), specials, template)
        _warn_unapplied(source, document)
        return tokenizer
    # Read natively with the document (read_tokenizer_json) when every entry is well formed; else (and under
    # BPE_STUDIO_PURE=1) here, which names the entry at fault.
    native_found = document.tables.byte_level(specials) if isinstance(document, NativeDocument) else None
    vocab, merges = native_found or _byte_level_tables(source, full_document(document)["model"], specials)
    try:
        tokenizer = Tokenizer(
            vocab,
            merges,
            specials,
            pattern=pattern,
            template=template,
            ignore_merges=bool(model.get("ignore_merges")),
            normalizer=normalizer,
            pipeline=pipeline,
            decoder=decoder,
        )
    except ValueError as exc:
        raise FormatError(f"{source}: {exc}") from None
    _warn_unapplied(source, document)
    return tokenizer


def _byte_level_tables(
    source: Path, model: Mapping[str, Any], specials: Mapping[str, int]
) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    """``model.vocab`` (id -> bytes) and ``model.merges`` (pairs of bytes) read in GPT-2's byte-level
    alphabet, a vocab key that ``specials`` gives the same id read as its UTF-8.

    Raises:
        FormatError: An entry is malformed; the message names it.
    """
    raw_vocab = model.get("vocab")
    if not isinstance(raw_vocab, dict):
        raise _fail(source, "model.vocab", "expected an object of token -> id")
    table = char_to_byte()
    vocab: dict[int, bytes] = _byte_level_vocab(raw_vocab, specials) or {}
    for key, i in raw_vocab.items() if not vocab else ():  # one by one only for a message
        if not isinstance(i, int) or isinstance(i, bool) or i < 0:
            raise _fail(source, f"model.vocab[{key!r}]", f"expected a non-negative integer id, got {i!r}")
        if specials.get(key) == i:
            token = utf8(source, f"model.vocab[{key!r}]", key)
        else:
            try:
                token = bytes(table[c] for c in key)
            except KeyError:
                raise _fail(
                    source,
                    f"model.vocab[{key!r}]",
                    "holds a character outside the byte-level alphabet; only byte-level BPE is supported",
                ) from None
        if i in vocab:
            raise _fail(source, f"model.vocab[{key!r}]", f"id {i} is used twice")
        vocab[i] = token

    raw_merges = model.get("merges")
    if not isinstance(raw_merges, list):
        raise _fail(source, "model.merges", "expected a list")
    merges: list[tuple[bytes, bytes]] = _byte_level_merges(raw_merges) or []
    for n, item in enumerate(raw_merges if not merges else ()):  # one by one only for a message
        parts = item.split(" ") if isinstance(item, str) else item
        try:
            if not isinstance(parts, list) or len(parts) != 2:
                raise KeyError
            merges.append((bytes(table[c] for c in parts[0]), bytes(table[c] for c in parts[1])))
        except (KeyError, TypeError):
            raise _fail(
                source, f"model.merges[{n}]", f"expected 'left right' in byte-level characters, got {item!r}"
            ) from None
    return vocab, merges


@functools.cache
def _byte_level_table() -> dict[int, str]:
    """``str.translate`` table from GPT-2's byte-level characters to the code points 0-255 of their bytes;
    every other character of 0-255 to one beyond, so that ``encode("latin-1")`` refuses it."""
    found = {c: chr(c + 0x100) for c in range(256)}
    found.update({ord(c): chr(b) for c, b in char_to_byte().items()})
    return found


def _joined_bytes(texts: list[str], table: Mapping[int, str]) -> list[bytes] | None:
    """Each byte-level text's bytes, translated in one C-speed pass over them all (a character is one byte,
    so each text's bytes are its length); None when one holds a character outside the alphabet. The native
    kernel's reading first (rust/src/bytelevel.rs), when it is on and every text is in the alphabet."""
    found = native.byte_level_bytes(texts)
    if found is not None:
        return found
    try:
        joined = "".join(texts).translate(table).encode("latin-1")
    except UnicodeEncodeError:
        return None
    ends = list(accumulate(map(len, texts)))
    return list(map(joined.__getitem__, map(slice, [0, *ends[:-1]], ends)))


def _byte_level_vocab(raw_vocab: Mapping[str, Any], specials: Mapping[str, int]) -> dict[int, bytes] | None:
    """``model.vocab`` as id -> bytes when every entry is well formed (then checked in C-speed passes), else
    None: :func:`load_hf` reads it again one by one to name the entry at fault."""
    keys = list(raw_vocab)
    ids = list(raw_vocab.values())
    if not (set(map(type, ids)) <= {int} and min(ids, default=0) >= 0 and len(set(ids)) == len(ids)):
        return None
    # A special token listed in the vocab under its own text (not byte-level) is its UTF-8. (Found by
    # looking the few specials up, not by a Python pass over 50k-250k keys.)
    special = {key for key, i in specials.items() if key in raw_vocab and raw_vocab[key] == i}
    texts = keys if not special else [key for key in keys if key not in special]
    found = _joined_bytes(texts, _byte_level_table())
    if found is None:
        return None
    if not special:
        return dict(zip(ids, found, strict=True))
    try:
        spelled = {raw_vocab[key]: key.encode("utf-8") for key in special}
    except UnicodeEncodeError:  # a lone surrogate: the slow reading names it
        return None
    vocab: dict[int, bytes] = dict.fromkeys(ids, b"")  # (the vocab's order; each id written over below)
    vocab.update(zip([i for i in ids if i not in spelled], found, strict=True))
    vocab.update(spelled)
    return vocab


def _byte_level_merges(raw_merges: list[Any]) -> list[tuple[bytes, bytes]] | None:
    """``model.merges`` (``"left right"`` strings or ``[left, right]`` pairs) as pairs of bytes when every
    entry is well formed (checked in C-speed passes), else None (see :func:`_byte_level_vocab`)."""
    if not raw_merges:
        return None
    pairs = native.byte_level_merges(raw_merges)  # every merge a str, read natively
    if pairs is not None:
        return pairs
    kinds = set(map(type, raw_merges))
    if kinds == {str}:
        if set(map(str.count, raw_merges, [" "] * len(raw_merges))) != {1}:
            return None
        parts = " ".join(raw_merges).split(" ")
    elif kinds == {list}:
        if set(map(len, raw_merges)) != {2}:
            return None
        parts = list(chain.from_iterable(raw_merges))
        if set(map(type, parts)) != {str}:
            return None
    else:
        return None
    found = _joined_bytes(parts, _byte_level_table())
    if found is None:
        return None
    return list(zip(found[0::2], found[1::2], strict=True))


def dumps_hf(tokenizer: Tokenizer) -> str:
    """The ``tokenizer.json`` text of a tokenizer.

    Raises:
        FormatError: A special token's text collides with an ordinary token's spelling.
    """
    special_ids = {i: token for token, i in tokenizer.special_tokens.items()}
    vocab: dict[str, int] = {}
    for i, token in sorted(tokenizer.vocab.items()):
        # Special tokens are listed under their text, so that tokenizers gives them the same ids.
        key = special_ids.get(i) or bytes_to_text(token)
        if key in vocab:
            raise FormatError(
                f"cannot save as hf: ids {vocab[key]} and {i} would share the vocab key {key!r}"
            )
        vocab[key] = i
    merges: list[str] = []
    seen: set[tuple[bytes, bytes]] = set()
    for left, right in tokenizer.merges:
        if (left, right) not in seen:  # tokenizers keeps the last of a repeated pair; ours, the first
            seen.add((left, right))
            merges.append(f"{bytes_to_text(left)} {bytes_to_text(right)}")
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    pre_tokenizer: Any
    if tokenizer.pipeline is not None:
        pre_tokenizer = tokenizer.pipeline.pre_tokenizer
    elif preset_name(tokenizer.pattern) == "gpt2":
        pre_tokenizer = byte_level
    else:
        pre_tokenizer = {
            "type": "Sequence",
            "pretokenizers": [
                {
                    "type": "Split",
                    "pattern": {"Regex": to_oniguruma(_without_gaps(tokenizer.pattern))},
                    "behavior": "Isolated",
                    "invert": False,
                },
                {**byte_level, "use_regex": False},
            ],
        }
    document = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {
                "id": i,
                "content": token,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
            for token, i in sorted(tokenizer.special_tokens.items(), key=lambda item: item[1])
        ],
        "normalizer": (
            tokenizer.pipeline.normalizer
            if tokenizer.pipeline is not None
            else {"type": "NFC"}
            if tokenizer.normalizer == "NFC"
            else None
        ),
        "pre_tokenizer": pre_tokenizer,
        "post_processor": _dumps_template(tokenizer),
        "decoder": tokenizer.hf_decoder.json if tokenizer.hf_decoder is not None else byte_level,
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": tokenizer.ignore_merges,
            "vocab": vocab,
            "merges": merges,
        },
    }
    return json.dumps(document, ensure_ascii=False, indent=1) + "\n"


def _dumps_template(tokenizer: Tokenizer) -> dict[str, Any] | None:
    """The ``TemplateProcessing`` of a tokenizer's template (each text of a pair gets it too), or None."""
    template = tokenizer.template
    if template is None:
        return None
    names = {i: token for token, i in tokenizer.special_tokens.items()}
    name_of = {
        i: names.get(i) or bytes_to_text(tokenizer.vocab[i]) for i in (*template.prefix, *template.suffix)
    }

    def around(sequence: str, type_id: int) -> list[dict[str, Any]]:
        def special(i: int) -> dict[str, Any]:
            return {"SpecialToken": {"id": name_of[i], "type_id": type_id}}

        return [
            *map(special, template.prefix),
            {"Sequence": {"id": sequence, "type_id": type_id}},
            *map(special, template.suffix),
        ]

    return {
        "type": "TemplateProcessing",
        "single": around("A", 0),
        "pair": around("A", 0) + around("B", 1),
        "special_tokens": {name: {"id": name, "ids": [i], "tokens": [name]} for i, name in name_of.items()},
    }


def save_hf(tokenizer: Tokenizer, path: str | os.PathLike[str]) -> Path:
    """Write a ``tokenizer.json`` atomically; returns its path.

    Example:
        >>> save_hf(small, "out/tokenizer.json")
        PosixPath('out/tokenizer.json')
    """
    target = Path(path)
    atomic_write(target, dumps_hf(tokenizer))
    return target


def not_carried_over(path: str | os.PathLike[str], tokenizer: Tokenizer, fmt: str) -> list[str]:
    """What of a ``tokenizer.json`` a conversion to ``fmt`` does not keep, one line each (empty: nothing).

    The ids are checked separately (the ``convert`` command compares them), and a template the format
    cannot store is reported by :func:`~bpe_studio.engine.formats.save`; these are the other settings,
    which the format has no place for or which :func:`dumps_hf` writes differently.

    Args:
        path: The ``tokenizer.json``.
        tokenizer: What :func:`load_hf` made of it.
        fmt: The format converted to.

    Example:
        >>> document = json.loads(save_hf(small, "tokenizer.json").read_text(encoding="utf-8"))
        >>> document["truncation"] = {"max_length": 512}
        >>> _ = Path("tokenizer.json").write_text(json.dumps(document), encoding="utf-8")
        >>> not_carried_over("tokenizer.json", small, "gpt2")
        ["key 'truncation': not written (bpe-studio does not apply it)"]
    """
    document = read_json(path)
    if not is_hf_document(document):
        return []
    lines: list[str] = []
    processor = document.get("post_processor")
    kind = processor.get("type") if isinstance(processor, dict) else None
    written = _dumps_template(tokenizer)
    if processor is not None and fmt == "hf" and processor != written:
        if written is None:
            lines.append(f"key 'post_processor' ({kind}): not written (it adds no ids, or is not applied)")
        else:
            differ = [key for key in sorted({*processor, *written}) if processor.get(key) != written.get(key)]
            lines.append(
                f"key 'post_processor' ({kind}): written as a TemplateProcessing of the ids around a single "
                f"text; {', '.join(map(repr, differ))} differ (pairs of texts, type ids, offset options)"
            )
    elif processor is not None and fmt == "studio" and tokenizer.template is not None:
        lines.append(
            f"key 'post_processor' ({kind}): only the ids around a single text are kept (not its pair "
            "template, type ids or offset options)"
        )
    elif processor is not None and fmt != "hf" and tokenizer.template is None:
        lines.append(f"key 'post_processor' ({kind}): not kept; the {fmt} format has no place for it")
    for key in ("truncation", "padding"):
        if document.get(key) is not None:
            lines.append(f"key {key!r}: not written (bpe-studio does not apply it)")
    flags: dict[str, list[str]] = {}
    for entry in document.get("added_tokens") or []:
        if not isinstance(entry, dict):
            continue
        content = str(entry.get("content"))
        if entry.get("special") is False:
            flags.setdefault("'special': false", []).append(content)
        if entry.get("normalized") is True:
            flags.setdefault("'normalized': true", []).append(content)
    for flag, tokens in flags.items():
        lines.append(
            f"added_tokens: {flag} on {len(tokens)} token(s) (e.g. {tokens[0]!r}) is not kept: every added "
            "token is written as a special token"
        )
    decoder = document.get("decoder")
    applied = fmt == "hf" and tokenizer.hf_decoder is not None
    if (
        decoder is not None
        and not applied
        and not (isinstance(decoder, dict) and decoder.get("type") == "ByteLevel")
    ):
        kind = decoder.get("type") if isinstance(decoder, dict) else decoder
        lines.append(f"key 'decoder' ({kind!r}): not kept; decoding is byte-level")
    if tokenizer.pipeline is not None and fmt != "hf":
        lines.append(
            f"keys 'normalizer' and 'pre_tokenizer' ({tokenizer.pipeline.describe()}): not kept; the {fmt} "
            "format holds one regex"
        )
    model = document["model"]
    if model.get("unk_token") is not None:
        lines.append(
            f"model.unk_token {model['unk_token']!r}: not kept (byte-level BPE has no unknown token)"
        )
    return lines
