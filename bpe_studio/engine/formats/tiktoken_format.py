"""tiktoken's ``.tiktoken`` files: one ``<base64 token bytes> <rank>`` line per ordinary token.

tiktoken ranks a pair by the rank of its concatenation and has no merges list, and the file holds neither
the pattern nor the special tokens. So a save writes, next to ``NAME.tiktoken``, the sidecar
``NAME.tiktoken.json`` (pattern and special tokens, as for the ``gpt2`` format). Ranks are token ids.

Reading one back, the merges are derived as tiktoken applies them: every split of a token into two tokens is
a merge, ordered by the token's rank (then by the split position). Two differences remain, both invisible
for GPT-2's files and for the tokenizers the tests train: tiktoken breaks a tie between two pairs that make
the same token by position, the derived list by split; and tiktoken takes a pre-token that is itself a token
as that token without merging, where the engine always merges (the convert command checks a sample).

Without a sidecar the pattern is ``gpt2`` and there are no special tokens; pass ``pattern=`` /
``special_tokens=`` to :func:`load_tiktoken` for the files of other encodings (``cl100k_base.tiktoken``
needs ``pattern="cl100k"``).
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from .atomic import atomic_write_set
from .gpt2 import dumps_sidecar, read_sidecar
from .studio import FormatError

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

SUFFIX = ".tiktoken"


def _fail(path: str | os.PathLike[str], where: str, problem: str) -> FormatError:
    return FormatError(f"{os.fspath(path)}: {where}: {problem}")


def sidecar_path(path: str | os.PathLike[str]) -> Path:
    """The sidecar of a ``.tiktoken`` file: the same name plus ``.json``.

    Example:
        >>> sidecar_path("out/gpt2.tiktoken").name
        'gpt2.tiktoken.json'
    """
    target = Path(path)
    return target.with_name(target.name + ".json")


def read_tiktoken(path: str | os.PathLike[str]) -> dict[int, bytes]:
    """Read a ``.tiktoken`` file into rank -> token bytes.

    Raises:
        FormatError: A line is not ``<base64> <rank>``, or a rank or token repeats; the message names
            the line.

    Example:
        >>> read_tiktoken("gpt2.tiktoken")[50255]  # doctest: +SKIP
        b' gazed'
    """
    ranks: dict[int, bytes] = {}
    seen: dict[bytes, int] = {}
    try:
        with open(path, "rb") as handle:
            for number, line in enumerate(handle, start=1):
                line = line.strip()
                if not line:
                    continue
                parts = line.split()
                try:
                    if len(parts) != 2:
                        raise ValueError
                    token = base64.b64decode(parts[0], validate=True)
                    rank = int(parts[1])
                    if rank < 0:
                        raise ValueError
                except (ValueError, binascii.Error):
                    shown = line[:60].decode("utf-8", errors="replace")
                    raise _fail(
                        path, f"line {number}", f"expected '<base64 token> <rank>', got {shown!r}"
                    ) from None
                if rank in ranks:
                    raise _fail(path, f"line {number}", f"rank {rank} is used twice")
                if token in seen:
                    raise _fail(
                        path,
                        f"line {number}",
                        f"token {token!r} is listed twice (ranks {seen[token]}, {rank})",
                    )
                ranks[rank] = token
                seen[token] = rank
    except OSError as exc:
        raise _fail(path, "file", exc.strerror or str(exc)) from None
    return ranks


def derive_merges(ranks: Mapping[int, bytes]) -> list[tuple[bytes, bytes]]:
    """The merges tiktoken applies implicitly: each split of a token into two tokens, by the token's rank.

    Example:
        >>> derive_merges({0: b"a", 1: b"b", 2: b"ab"})
        [(b'a', b'b')]
    """
    known = set(ranks.values())
    merges: list[tuple[bytes, bytes]] = []
    for _, token in sorted(ranks.items()):
        for k in range(1, len(token)):
            left, right = token[:k], token[k:]
            if left in known and right in known:
                merges.append((left, right))
    return merges


def load_tiktoken(
    path: str | os.PathLike[str],
    *,
    pattern: str | None = None,
    special_tokens: Mapping[str, int] | None = None,
) -> Tokenizer:
    """Load a ``.tiktoken`` file and its sidecar if present.

    Args:
        path: The ``.tiktoken`` file.
        pattern: Overrides the pattern (default: the sidecar's, else ``gpt2``).
        special_tokens: Overrides the special tokens (default: the sidecar's, else none).

    Example:
        >>> tok = load_tiktoken("cl100k_base.tiktoken", pattern="cl100k")  # doctest: +SKIP
    """
    from ..tokenizer import Tokenizer

    ranks = read_tiktoken(path)
    stored_pattern: str = "gpt2"
    stored_specials: dict[str, int] = {}
    sidecar = sidecar_path(path)
    if sidecar.is_file():
        stored_pattern, stored_specials = read_sidecar(sidecar)
    try:
        return Tokenizer(
            ranks,
            derive_merges(ranks),
            dict(special_tokens if special_tokens is not None else stored_specials),
            pattern=pattern or stored_pattern,
        )
    except ValueError as exc:
        raise FormatError(f"{os.fspath(path)}: {exc}") from None


def check_tiktoken_compatible(tokenizer: Tokenizer) -> None:
    """Raise :class:`FormatError` unless tiktoken's rank-by-id rule reproduces the tokenizer's merges.

    tiktoken merges the pair whose concatenation has the lowest id, so the tokens must get their ids in the
    order of the merges that make them, and every multi-byte ordinary token must be made by some merge.
    """
    specials = set(tokenizer.special_tokens.values())
    first_rank: dict[bytes, int] = {}
    for rank, (left, right) in enumerate(tokenizer.merges):
        first_rank.setdefault(left + right, rank)
    last_id = -1
    for token, _ in sorted(first_rank.items(), key=lambda item: item[1]):
        token_id = tokenizer.token_id(token)
        assert token_id is not None
        if token_id <= last_id:
            raise FormatError(
                f"cannot save as tiktoken: token {token!r} (id {token_id}) is made by a later merge than "
                "a token with a higher id; tiktoken ranks merges by token id, so the ids must follow the "
                "merge order. Save as studio, gpt2 or hf instead"
            )
        last_id = token_id
    seen: set[bytes] = set()
    for i, token in tokenizer.vocab.items():
        if i in specials:
            continue
        if token in seen:
            raise FormatError(
                f"cannot save as tiktoken: token {token!r} appears under two ids; tiktoken needs unique "
                "tokens. Save as studio, gpt2 or hf instead"
            )
        seen.add(token)
        if len(token) > 1 and token not in first_rank:
            raise FormatError(
                f"cannot save as tiktoken: token {token!r} (id {i}) is made by no merge, but tiktoken "
                "would merge into it. Save as studio, gpt2 or hf instead"
            )


def save_tiktoken(tokenizer: Tokenizer, path: str | os.PathLike[str]) -> Path:
    """Write ``path`` (``.tiktoken``) and its sidecar ``path + ".json"`` atomically.

    Returns:
        The ``.tiktoken`` path (what :func:`load_tiktoken` reads).

    Raises:
        FormatError: tiktoken cannot represent this tokenizer exactly (see :func:`check_tiktoken_compatible`).

    Example:
        >>> save_tiktoken(tok, "out/mine.tiktoken")  # doctest: +SKIP
    """
    check_tiktoken_compatible(tokenizer)
    target = Path(path)
    specials = set(tokenizer.special_tokens.values())
    lines = [
        f"{base64.b64encode(token).decode('ascii')} {i}"
        for i, token in sorted(tokenizer.vocab.items())
        if i not in specials
    ]
    atomic_write_set(
        {
            target: "\n".join(lines) + "\n",
            sidecar_path(target): dumps_sidecar(
                pattern=tokenizer.pattern, special_tokens=tokenizer.special_tokens
            ),
        }
    )
    return target
