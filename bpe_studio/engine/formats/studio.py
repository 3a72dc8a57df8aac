"""BPE Studio's own tokenizer file: one versioned JSON document.

Layout (version 1, or 2 when there is a template)::

    {
      "format": "bpe-studio-tokenizer",
      "version": 1,
      "pattern": "<pre-tokenization regex>",
      "special_tokens": {"<|endoftext|>": 500},
      "vocab": {"0": "Ā", ..., "256": "Ġt"},      # id -> bytes in GPT-2's printable characters
      "merges": ["Ġ t", ...],                       # in order; the two tokens in GPT-2 characters
      "template": {"prefix": [1], "suffix": []},    # version 2 only: ids added around every text (BOS/EOS)
      "training": {...},                            # optional: how it was trained (free-form)
      "checksum": "sha256:..."                      # optional: of the fields that decide the ids
    }

A file with a template (e.g. converted from a Llama-3 ``tokenizer.json``) is version 2, so that an older
reader refuses it rather than encode without the template. The checksum makes a damaged or cut file an error
rather than another tokenizer: :func:`content_digest` of the fields that decide the ids (read as JSON, so
formatting and ``training`` do not count). Files without one (written before it existed, or by hand) load
unchecked.

Bytes are spelled with GPT-2's byte-to-character table (see :mod:`bpe_studio.engine.bytes_unicode`), so
the file is readable and no character in a token is a space.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..bytes_unicode import bytes_to_text, text_to_bytes
from .atomic import atomic_write
from .base import STUDIO_FORMAT as FORMAT_NAME
from .base import FormatError as FormatError  # noqa: PLC0414  (re-exported: tiktoken_format imports it)

FORMAT_VERSION = 1
TEMPLATE_VERSION = 2  # a file with a template: older readers must refuse it, not drop the template


def read_json(path: str | os.PathLike[str]) -> Any:
    """Parse a JSON file; every way it can fail to parse is a :class:`FormatError` naming the file.

    Every JSON read of the formats goes through here, so that no parser error (a deeply nested
    ``[[[[...]]]]`` raises ``RecursionError``, a 5000-digit number ``ValueError``) escapes as another type.

    Example:
        >>> read_json("vocab.json")["<|endoftext|>"]
        50256
        >>> try:
        ...     read_json("corpus.jsonl")  # one JSON document per line: not one JSON document
        ... except FormatError as exc:
        ...     print(exc)
        corpus.jsonl: line 2 column 1: not valid JSON (Extra data)
    """
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except json.JSONDecodeError as exc:
        raise _fail(path, f"line {exc.lineno} column {exc.colno}", f"not valid JSON ({exc.msg})") from None
    except UnicodeDecodeError as exc:
        raise _fail(path, f"byte {exc.start}", "not UTF-8 text") from None
    except RecursionError:
        raise FormatError(f"{os.fspath(path)}: not a tokenizer file: JSON nested too deeply") from None
    except ValueError as exc:  # e.g. an integer too long to convert
        raise FormatError(f"{os.fspath(path)}: not a tokenizer file: {exc}") from None


def content_digest(value: Any) -> str:
    """A checksum of JSON-able data that ignores formatting and key order.

    Example:
        >>> content_digest({"b": 1, "a": [2]}) == content_digest({"a": [2], "b": 1})
        True
    """
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    import hashlib  # (here: opening a file needs no digest; importing it loads OpenSSL, 2 ms)

    return "sha256:" + hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()


_CHECKED = ("pattern", "special_tokens", "vocab", "merges", "template")
_KEYS = {"format", "version", "training", "checksum", *_CHECKED}


def utf8(path: str | os.PathLike[str], where: str, text: str) -> bytes:
    """A JSON string as UTF-8; a lone surrogate (``"\\ud800"`` is valid JSON) is a :class:`FormatError`.

    Example:
        >>> utf8("t.json", "key 'special_tokens'", "<|endoftext|>")
        b'<|endoftext|>'
    """
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _fail(path, where, f"{text!r} is not valid Unicode ({exc.reason})") from None


class StudioFile:
    """The contents of a studio tokenizer file.

    Attributes:
        vocab: Id -> the token's bytes.
        merges: The merges, in rank order.
        special_tokens: Text -> id.
        pattern: The pattern preset or regex.
        training: How the tokenizer was trained (free-form).
        template: ``(prefix, suffix)``: see ``Tokenizer.template``.
    """

    # (A plain class, not a dataclass: the Hugging Face reader imports this module, and dataclasses imports
    # inspect and ast, 5-6 ms of a fresh process.)
    __slots__ = ("merges", "pattern", "special_tokens", "template", "training", "vocab")

    def __init__(  # noqa: PLR0917  (positional, as the dataclass took them)
        self,
        vocab: dict[int, bytes],
        merges: list[tuple[bytes, bytes]],
        special_tokens: dict[str, int],
        pattern: str,
        training: dict[str, Any] | None = None,
        template: tuple[tuple[int, ...], tuple[int, ...]] | None = None,
    ) -> None:
        setter = object.__setattr__  # (frozen, as the dataclass was)
        setter(self, "vocab", vocab)
        setter(self, "merges", merges)
        setter(self, "special_tokens", special_tokens)
        setter(self, "pattern", pattern)
        setter(self, "training", {} if training is None else training)
        setter(self, "template", template)

    vocab: dict[int, bytes]
    merges: list[tuple[bytes, bytes]]
    special_tokens: dict[str, int]
    pattern: str
    training: dict[str, Any]
    template: tuple[tuple[int, ...], tuple[int, ...]] | None

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: a StudioFile is frozen")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StudioFile):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # (holds dicts, as the dataclass did)

    def __repr__(self) -> str:
        return (
            f"StudioFile(vocab=<{len(self.vocab)} tokens>, merges=<{len(self.merges)}>, "
            f"pattern={self.pattern!r})"
        )


def dumps_studio(
    *,
    vocab: Mapping[int, bytes],
    merges: Sequence[tuple[bytes, bytes]],
    special_tokens: Mapping[str, int],
    pattern: str,
    training: Mapping[str, Any] | None = None,
    template: tuple[Sequence[int], Sequence[int]] | None = None,
) -> str:
    """Serialise a tokenizer to the studio JSON text; a ``template`` (prefix, suffix ids) makes it version 2.

    Example:
        >>> text = dumps_studio(vocab={0: b"a"}, merges=[], special_tokens={}, pattern="gpt2")
    """
    special_ids = set(special_tokens.values())
    # Each token spelled once: a merge's two parts are tokens too, looked up instead of spelled again (two
    # thirds of the spelling of a 32k vocabulary, issue 22).
    spelled = {b: bytes_to_text(b) for b in vocab.values()}
    # A part that is no token (not in a trained result, but a hand-made file may have one) is spelled anew;
    # inlined: a function call per part was a third of the merges' spelling.
    get = spelled.get

    document: dict[str, Any] = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "pattern": pattern,
        "special_tokens": dict(special_tokens),
        "vocab": {str(i): spelled[b] for i, b in sorted(vocab.items()) if i not in special_ids},
        "merges": [f"{get(a) or bytes_to_text(a)} {get(b) or bytes_to_text(b)}" for a, b in merges],
    }
    if template is not None:
        document["version"] = TEMPLATE_VERSION
        document["template"] = {"prefix": list(template[0]), "suffix": list(template[1])}
    if training:
        document["training"] = dict(training)
    document["checksum"] = content_digest([document.get(key) for key in _CHECKED])
    return indented_json(document) + "\n"


def indented_json(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, indent=1)``, the same text, with the C encoder's speed.

    With ``indent``, :mod:`json` encodes in Python, a small string per token: a 32k tokenizer's file took
    150 ms and 24 MB at its peak, the largest part of a CLI run's output and of its peak memory (issue 22).
    Here each string, number and constant is spelled as :mod:`json` spells it and the lists and objects are
    joined; anything else is left to :func:`json.dumps` (tests/engine/formats/test_studio_json.py holds the
    two equal on any JSON value).

    Example:
        >>> print(indented_json({"a": [1, "é"], "b": {}}))
        {
         "a": [
          1,
          "é"
         ],
         "b": {}
        }
    """
    return _indented(value, "\n")


_ENCODE_STR: Callable[[str], str] = json.encoder.encode_basestring  # ensure_ascii=False's spelling of a str
_CONTAINERS = (dict, list, tuple)


def _indented(value: Any, newline: str) -> str:
    """``value`` spelled at the depth whose line break (with its indent) is ``newline``."""
    if not isinstance(value, _CONTAINERS):
        return json.dumps(value, ensure_ascii=False)  # (a value json cannot spell raises as json.dumps does)
    if not value:
        return "{}" if isinstance(value, dict) else "[]"
    inner = newline + " "
    items = value.values() if isinstance(value, dict) else value
    if not any(issubclass(kind, _CONTAINERS) for kind in set(map(type, items))):  # (the types: in C)
        # Flat (the vocab, the merges, the merge counts): the C encoder, with the line break and indent of
        # this depth as its item separator, then the brackets on lines of their own.
        text = json.dumps(value, ensure_ascii=False, separators=("," + inner, ": "))
        return text[0] + inner + text[1:-1] + newline + text[-1]
    if isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):
            # (json's spelling of other keys: left to it, indented to this depth)
            return json.dumps(value, ensure_ascii=False, indent=1).replace("\n", newline)
        body = ("," + inner).join(
            f"{_ENCODE_STR(key)}: {_indented(item, inner)}" for key, item in value.items()
        )
        return "{" + inner + body + newline + "}"
    return "[" + inner + ("," + inner).join(_indented(item, inner) for item in value) + newline + "]"


def save_studio(path: str | os.PathLike[str], **fields: Any) -> None:
    """Write a studio tokenizer file atomically; keyword arguments as for :func:`dumps_studio`."""
    atomic_write(path, dumps_studio(**fields))


def _fail(path: str | os.PathLike[str], where: str, problem: str) -> FormatError:
    return FormatError(f"{os.fspath(path)}: {where}: {problem}")


def load_studio(path: str | os.PathLike[str]) -> StudioFile:
    """Read a studio tokenizer file, raising :class:`FormatError` that names the file and the key."""
    document = read_json(path)
    if not isinstance(document, dict) or document.get("format") != FORMAT_NAME:
        raise _fail(
            path, "key 'format'", f"expected {FORMAT_NAME!r}; this is not a BPE Studio tokenizer file"
        )
    version = document.get("version")
    if version not in (FORMAT_VERSION, TEMPLATE_VERSION) or type(version) is not int:
        raise _fail(
            path,
            "key 'version'",
            f"version {version!r} is not supported (this BPE Studio reads {FORMAT_VERSION} and "
            f"{TEMPLATE_VERSION}); upgrade bpe-studio",
        )
    unknown = sorted(set(document) - _KEYS)
    if unknown:  # e.g. a damaged 'checksum' key, which would otherwise turn the check off unseen
        raise _fail(path, f"key {unknown[0]!r}", "is not part of the format (damaged, or a typo); remove it")
    pattern = document.get("pattern")
    if not isinstance(pattern, str):
        raise _fail(path, "key 'pattern'", "expected a string")
    raw_vocab = document.get("vocab")
    if not isinstance(raw_vocab, dict):
        raise _fail(path, "key 'vocab'", "expected an object of id -> token")
    vocab: dict[int, bytes] = {}
    for key, text in raw_vocab.items():
        try:
            vocab[int(key)] = text_to_bytes(text)
        except (ValueError, KeyError, TypeError):
            raise _fail(
                path, f"key 'vocab' entry {key!r}", "expected an integer id and GPT-2 characters"
            ) from None
    specials = document.get("special_tokens", {})
    if not isinstance(specials, dict) or not all(isinstance(v, int) for v in specials.values()):
        raise _fail(path, "key 'special_tokens'", "expected an object of token -> id")
    for token, i in specials.items():
        if i in vocab:
            raise _fail(path, f"key 'special_tokens' entry {token!r}", f"id {i} is also a vocab id")
        vocab[i] = utf8(path, f"key 'special_tokens' entry {token!r}", token)
    raw_merges = document.get("merges")
    if not isinstance(raw_merges, list):
        raise _fail(path, "key 'merges'", "expected a list of 'left right' strings")
    merges: list[tuple[bytes, bytes]] = []
    for n, line in enumerate(raw_merges):
        parts = line.split(" ") if isinstance(line, str) else []
        try:
            if len(parts) != 2:
                raise ValueError
            merges.append((text_to_bytes(parts[0]), text_to_bytes(parts[1])))
        except (ValueError, KeyError):
            raise _fail(
                path, f"key 'merges' item {n}", f"expected 'left right' in GPT-2 characters, got {line!r}"
            ) from None
    # Checked last, so that a file edited by hand gets the error of its line or key first.
    checksum = document.get("checksum")
    if checksum is not None and checksum != content_digest([document.get(key) for key in _CHECKED]):
        raise _fail(
            path,
            "key 'checksum'",
            "does not match the file's content: it was damaged or cut short (restore it), or edited by hand "
            "(if on purpose, delete the 'checksum' key)",
        )
    template = _read_template(path, document.get("template"), version)
    training = document.get("training", {})
    return StudioFile(
        vocab, merges, dict(specials), pattern, training if isinstance(training, dict) else {}, template
    )


def _read_template(
    path: str | os.PathLike[str], raw: object, version: int
) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """The ``template`` entry as (prefix, suffix), or None; present exactly in version 2 files."""
    if (raw is not None) != (version == TEMPLATE_VERSION):
        raise _fail(path, "key 'template'", f"a version {TEMPLATE_VERSION} file has one and only it")
    if raw is None:
        return None
    ends = [raw.get(end) if isinstance(raw, dict) else None for end in ("prefix", "suffix")]
    if not all(isinstance(ids, list) and all(type(i) is int for i in ids) for ids in ends):
        raise _fail(path, "key 'template'", "expected {'prefix': [ids], 'suffix': [ids]}")
    return tuple(ends[0]), tuple(ends[1])  # type: ignore[arg-type]
