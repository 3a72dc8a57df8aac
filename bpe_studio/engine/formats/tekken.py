"""Mistral's tekken files (``tekken.json``, ``tekken_240911.json``): ranks, pattern and specials in one JSON.

The file holds ``config`` (``pattern``, ``default_vocab_size``, ``default_num_special_tokens``, ``version``),
``vocab`` (a list of ``{"rank", "token_bytes" (base64), "token_str"}``) and, from version v7 on,
``special_tokens`` (a list of ``{"rank", "token_str", "is_control"}``). mistral-common's ``Tekkenizer``
(``mistral_common/tokens/tokenizers/tekken.py``) gives the ids this module reproduces:

- the special tokens take the first ``default_num_special_tokens`` ids, each its ``rank``; files that list
  none (v7 and older) get Mistral's twenty historical ones (``<unk>``, ``<s>``, ``</s>``, ``[INST]``...),
  and the ids after those listed are fillers ``<SPECIAL_{id}>``;
- only the first ``default_vocab_size - default_num_special_tokens`` ranks are kept (Nemo's file lists
  150,000 and uses 130,072), and rank ``r`` is id ``r + default_num_special_tokens``.

``Tekkenizer.encode`` runs tiktoken with no special tokens, so ``encode_ordinary`` gives its ids
(``encode(text, bos=False, eos=False)``). The tokenizer encodes by tiktoken's rule, as for any rank file
(no merges are derived unless a view asks for them).

Example:
    >>> tok = load_tekken(write_tekken(small, "out/tekken.json", num_special=3))
    >>> tok.encode_ordinary("the") == [i + 3 for i in small.encode_ordinary("the")]
    True
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .base import TEKKEN_FILE, FormatError
from .studio import read_json

if TYPE_CHECKING:
    from ..encoding.tokenizer import Tokenizer

#: The name Mistral's model repositories give the file.
FILE_NAME = TEKKEN_FILE

#: mistral-common's special tokens for files that list none (versions up to v7), ``Tekkenizer``'s
#: ``DEPRECATED_SPECIAL_TOKENS``, by id.
LEGACY_SPECIAL_TOKENS: tuple[str, ...] = (
    "<unk>",
    "<s>",
    "</s>",
    "[INST]",
    "[/INST]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
    "[TOOL_CALLS]",
    "[IMG]",
    "<pad>",
    "[IMG_BREAK]",
    "[IMG_END]",
    "[PREFIX]",
    "[MIDDLE]",
    "[SUFFIX]",
    "[SYSTEM_PROMPT]",
    "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
)

#: The last version whose files may omit ``special_tokens`` (mistral-common refuses later ones without).
_LAST_LEGACY_VERSION = 7

_FILLER = "<SPECIAL_{id}>"
_VERSION = re.compile(r"v(\d+)")


def _fail(path: str | os.PathLike[str], where: str, problem: str) -> FormatError:
    return FormatError(f"{os.fspath(path)}: {where}: {problem}")


def is_tekken_document(document: object) -> bool:
    """True when a parsed JSON document looks like a tekken file (a ``config`` object and a ``vocab`` list).

    Example:
        >>> is_tekken_document({"config": {"pattern": "x"}, "vocab": []}), is_tekken_document({"model": {}})
        (True, False)
    """
    return (
        isinstance(document, dict)
        and isinstance(document.get("config"), dict)
        and isinstance(document.get("vocab"), list)
        and "model" not in document
    )


def _count(path: Path, config: Mapping[str, Any], key: str) -> int:
    value = config.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise _fail(path, f"key 'config.{key}'", f"expected a non-negative integer, got {value!r}")
    return value


def _special_tokens(
    path: Path, document: Mapping[str, Any], count: int, version: int | None
) -> dict[str, int]:
    """The special tokens by id as ``Tekkenizer`` places them: those listed (or the legacy ones), then
    fillers up to ``count``."""
    listed = document.get("special_tokens")
    if listed is None:
        if version is not None and version > _LAST_LEGACY_VERSION:
            raise _fail(
                path,
                "key 'special_tokens'",
                f"missing; a v{version} tekken file must list its special tokens (only v7 and older may not)",
            )
        pairs = list(enumerate(LEGACY_SPECIAL_TOKENS))
    elif isinstance(listed, list):
        pairs = []
        for n, entry in enumerate(listed):
            rank = entry.get("rank") if isinstance(entry, dict) else None
            text = entry.get("token_str") if isinstance(entry, dict) else None
            if not isinstance(rank, int) or isinstance(rank, bool) or not isinstance(text, str):
                raise _fail(
                    path, f"special_tokens[{n}]", "expected an object with an integer 'rank' and 'token_str'"
                )
            pairs.append((rank, text))
    else:
        raise _fail(path, "key 'special_tokens'", f"expected a list, got {type(listed).__name__}")
    if len(pairs) > count:
        raise _fail(
            path,
            "key 'special_tokens'",
            f"{len(pairs)} special tokens but config.default_num_special_tokens is {count}",
        )
    specials: dict[str, int] = {}
    taken: set[int] = set()
    for n, (rank, text) in enumerate(pairs):
        if not 0 <= rank < count or rank in taken or text in specials:
            raise _fail(
                path,
                f"special_tokens[{n}]",
                f"{text!r} (rank {rank}) repeats a token or rank, or is not below "
                f"default_num_special_tokens ({count})",
            )
        specials[text] = rank
        taken.add(rank)
    for i in range(len(pairs), count):
        filler = _FILLER.format(id=i)
        if filler in specials or i in taken:
            raise _fail(path, "key 'special_tokens'", f"the filler {filler!r} clashes with a listed token")
        specials[filler] = i
    return specials


def load_tekken(path: str | os.PathLike[str]) -> Tokenizer:
    """Load a tekken file with the ids mistral-common's ``Tekkenizer`` gives (see the module docstring).

    Raises:
        FormatError: The file is malformed; the message names the file and the key or entry.

    Example:
        >>> load_tekken(write_tekken(small, "out/tekken.json", num_special=3)).special_tokens["<s>"]
        1
    """
    from ..encoding.tokenizer import Tokenizer

    source = Path(path)
    document = read_json(source)
    if not is_tekken_document(document):
        raise _fail(source, "key 'config'/'vocab'", "missing; this is not a tekken file")
    config = document["config"]
    pattern = config.get("pattern")
    if not isinstance(pattern, str) or not pattern:
        raise _fail(source, "key 'config.pattern'", "expected the pre-tokenization regex")
    num_special = _count(source, config, "default_num_special_tokens")
    vocab_size = _count(source, config, "default_vocab_size")
    entries: list[Any] = document["vocab"]
    kept = vocab_size - num_special
    if not 0 <= kept <= len(entries):
        raise _fail(
            source,
            "key 'config.default_vocab_size'",
            f"{vocab_size} is not between default_num_special_tokens ({num_special}) and that plus the "
            f"{len(entries)} vocab entries",
        )
    version_text = config.get("version")
    match = _VERSION.fullmatch(version_text) if isinstance(version_text, str) else None
    specials = _special_tokens(source, document, num_special, int(match.group(1)) if match else None)
    ranks: dict[int, bytes] = {}
    for rank, entry in enumerate(entries[:kept]):
        stated = entry.get("rank") if isinstance(entry, dict) else None
        encoded = entry.get("token_bytes") if isinstance(entry, dict) else None
        if stated != rank or not isinstance(encoded, str):
            raise _fail(
                source, f"vocab[{rank}]", f"expected an object with rank {rank} and base64 'token_bytes'"
            )
        try:
            ranks[rank] = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise _fail(source, f"vocab[{rank}].token_bytes", f"{encoded[:40]!r} is not base64") from None
    try:
        return Tokenizer(
            {rank + num_special: token for rank, token in ranks.items()},
            None,  # tiktoken's rule, as mistral-common's Tekkenizer (ids shifted alike keep their order)
            specials,
            pattern=pattern,
            ignore_merges=True,
        )
    except ValueError as exc:
        raise FormatError(f"{source}: {exc}") from None


def write_tekken(
    tokenizer: Tokenizer, path: str | os.PathLike[str], *, num_special: int = 20, legacy: bool = False
) -> Path:
    """Write a tekken file of a tokenizer's ordinary tokens in id order (for tests and examples).

    With ``legacy`` the file lists no special tokens (version v3, as Nemo's: the twenty legacy ones and
    fillers, so ``num_special`` must be at least 20); otherwise it lists the first ``num_special`` legacy
    names (version v7).
    """
    import json

    from .atomic import atomic_write

    specials = set(tokenizer.special_tokens.values())
    tokens = [token for i, token in sorted(tokenizer.vocab.items()) if i not in specials]
    document: dict[str, Any] = {
        "config": {
            "pattern": tokenizer.pattern,
            "num_vocab_tokens": len(tokens),
            "default_vocab_size": len(tokens) + num_special,
            "default_num_special_tokens": num_special,
            "version": "v3" if legacy else "v7",
        },
        "vocab": [
            {"rank": r, "token_bytes": base64.b64encode(t).decode("ascii"), "token_str": None}
            for r, t in enumerate(tokens)
        ],
    }
    if not legacy:
        document["special_tokens"] = [
            {"rank": i, "token_str": name, "is_control": True}
            for i, name in enumerate(LEGACY_SPECIAL_TOKENS[:num_special])
        ]
    target = Path(path)
    atomic_write(target, json.dumps(document).encode("utf-8"))
    return target
