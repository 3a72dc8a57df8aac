"""Hugging Face ``tokenizers``' ``tokenizer.json`` for byte-level BPE.

What is read: a ``BPE`` model (vocab in GPT-2 characters, merges as ``"left right"`` strings or pairs), no
normalizer, and a pre-tokenizer that is either ``ByteLevel`` with its GPT-2 regex, or a ``Sequence`` of one
``Split`` (a regex, ``Isolated``) and ``ByteLevel`` without regex. Added tokens become special tokens.
Anything else (``add_prefix_space``, ``ignore_merges``, a subword prefix, ...) would change the ids, so it is
refused with an error naming the key.

What is written: the same shape, which ``tokenizers.Tokenizer.from_file`` loads and which encodes with the
same ids (``encode(text).ids``; there is no post-processor, so nothing is added around the text).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..bytes_unicode import bytes_to_text, char_to_byte
from ..config import PATTERNS, preset_name
from .atomic import atomic_write
from .studio import FormatError

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

FILE_NAME = "tokenizer.json"

# ByteLevel(use_regex=False) alone does not split the text: the whole text is one pre-token.
_NO_SPLIT = r"[\s\S]+"

# tokenizers compiles Split regexes with Oniguruma (Ruby syntax), where "X{1,3}+" means "(X{1,3})+", not
# the possessive "X{1,3}" of the regex module and tiktoken (cl100k has "\p{N}{1,3}+"). An atomic group is
# possessive in both, so intervals on a single atom are written as "(?>X{1,3})" and read back.
_ATOM = r"(\\[pP]\{[^}]*\}|\\[pP][A-Za-z]|\\.|\[(?:\\.|[^\]\\])*\]|[^\\()\[\]{}|])"
_POSSESSIVE_INTERVAL = re.compile(_ATOM + r"(\{\d+(?:,\d*)?\})\+")
_ATOMIC_INTERVAL = re.compile(r"\(\?>" + _ATOM + r"(\{\d+(?:,\d*)?\})\)")


def to_oniguruma(pattern: str) -> str:
    r"""Rewrite possessive intervals for Oniguruma.

    Example:
        >>> print(to_oniguruma(r"\p{N}{1,3}+|\s++$"))
        (?>\p{N}{1,3})|\s++$
    """
    return _POSSESSIVE_INTERVAL.sub(r"(?>\1\2)", pattern)


def from_oniguruma(pattern: str) -> str:
    r"""Undo :func:`to_oniguruma` (an equivalent spelling), so that presets are recognised again.

    Example:
        >>> print(from_oniguruma(r"(?>\p{N}{1,3})"))
        \p{N}{1,3}+
    """
    return _ATOMIC_INTERVAL.sub(r"\1\2+", pattern)


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
            if split.get("behavior", "Isolated") != "Isolated" or split.get("invert", False):
                raise _fail(
                    path,
                    "pre_tokenizer.pretokenizers[0]",
                    "only behavior 'Isolated' without invert is supported",
                )
            _byte_level(path, "pre_tokenizer.pretokenizers[1]", steps[1], regex_expected=False)
            return from_oniguruma(pattern["Regex"])
        raise _fail(
            path,
            "key 'pre_tokenizer'",
            "a Sequence must be [Split(Regex, Isolated), ByteLevel(use_regex=false)]",
        )
    raise _fail(
        path, "key 'pre_tokenizer'", f"type {kind!r} is not supported; expected ByteLevel or Sequence"
    )


def load_hf(path: str | os.PathLike[str], document: Any = None) -> Tokenizer:
    """Load a Hugging Face ``tokenizer.json`` holding a byte-level BPE.

    Args:
        path: The file.
        document: Its parsed JSON, if already read.

    Raises:
        FormatError: The file is not a byte-level BPE that this engine reproduces exactly; the message
            names the key.

    Example:
        >>> tok = load_hf("tokenizer.json")  # doctest: +SKIP
    """
    from ..tokenizer import Tokenizer

    source = Path(path)
    if document is None:
        try:
            with open(source, encoding="utf-8") as handle:
                document = json.load(handle)
        except json.JSONDecodeError as exc:
            raise _fail(
                source, f"line {exc.lineno} column {exc.colno}", f"not valid JSON ({exc.msg})"
            ) from None
        except UnicodeDecodeError as exc:
            raise _fail(source, f"byte {exc.start}", "not UTF-8 text") from None
    if not is_hf_document(document):
        raise _fail(source, "key 'model'", "missing; this is not a Hugging Face tokenizer.json")
    model = document["model"]
    if model.get("type", "BPE") != "BPE":
        raise _fail(source, "model.type", f"{model.get('type')!r} is not supported; only BPE models are")
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key):
            raise _fail(source, f"model.{key}", f"{model[key]!r} is not supported by byte-level BPE")
    for key in ("byte_fallback", "ignore_merges"):
        if model.get(key):
            raise _fail(source, f"model.{key}", "true is not supported (it changes how words are merged)")
    if model.get("dropout"):
        raise _fail(source, "model.dropout", "BPE dropout makes encoding random; set it to null")
    if document.get("normalizer") is not None:
        raise _fail(source, "key 'normalizer'", "must be null: a normalizer changes the text before encoding")
    pattern = _pattern_of(source, document.get("pre_tokenizer"))

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

    raw_vocab = model.get("vocab")
    if not isinstance(raw_vocab, dict):
        raise _fail(source, "model.vocab", "expected an object of token -> id")
    table = char_to_byte()
    vocab: dict[int, bytes] = {}
    for key, i in raw_vocab.items():
        if not isinstance(i, int) or isinstance(i, bool) or i < 0:
            raise _fail(source, f"model.vocab[{key!r}]", f"expected a non-negative integer id, got {i!r}")
        if specials.get(key) == i:
            token = key.encode("utf-8")
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
    merges: list[tuple[bytes, bytes]] = []
    for n, item in enumerate(raw_merges):
        parts = item.split(" ") if isinstance(item, str) else item
        try:
            if not isinstance(parts, list) or len(parts) != 2:
                raise KeyError
            merges.append((bytes(table[c] for c in parts[0]), bytes(table[c] for c in parts[1])))
        except (KeyError, TypeError):
            raise _fail(
                source, f"model.merges[{n}]", f"expected 'left right' in byte-level characters, got {item!r}"
            ) from None
    try:
        return Tokenizer(vocab, merges, specials, pattern=pattern)
    except ValueError as exc:
        raise FormatError(f"{source}: {exc}") from None


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
    pre_tokenizer: dict[str, Any]
    if preset_name(tokenizer.pattern) == "gpt2":
        pre_tokenizer = byte_level
    else:
        pre_tokenizer = {
            "type": "Sequence",
            "pretokenizers": [
                {
                    "type": "Split",
                    "pattern": {"Regex": to_oniguruma(tokenizer.pattern)},
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
        "normalizer": None,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": None,
        "decoder": byte_level,
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,
            "vocab": vocab,
            "merges": merges,
        },
    }
    return json.dumps(document, ensure_ascii=False, indent=1) + "\n"


def save_hf(tokenizer: Tokenizer, path: str | os.PathLike[str]) -> Path:
    """Write a ``tokenizer.json`` atomically; returns its path.

    Example:
        >>> save_hf(tok, "out/tokenizer.json")  # doctest: +SKIP
    """
    target = Path(path)
    atomic_write(target, dumps_hf(tokenizer))
    return target
