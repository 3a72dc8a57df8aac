"""GPT-2's tokenizer files: ``vocab.json`` (token -> id) and ``merges.txt`` (one ``left right`` per line).

Tokens are spelled in GPT-2's printable characters (see :mod:`bpe_studio.engine.bytes_unicode`). OpenAI's
``vocab.bpe`` starts with a ``#version: 0.2`` line; the header is optional when reading and written.

A saved folder holds ``vocab.json`` (special tokens included, as in GPT-2's own file), ``merges.txt`` and
``bpe_studio.json``, a small sidecar with the pattern and the special tokens. Without the sidecar (GPT-2's
own files), the pattern is ``gpt2`` and the special tokens are the vocab entries no merge can produce that
look like markup, ``<...>`` (GPT-2's ``<|endoftext|>``).

The sidecar also holds ``checksums`` of the files it describes and of its own pattern and special tokens
(``.tiktoken`` files use the same sidecar), so that a damaged, cut or swapped file is an error rather than
another tokenizer. A sidecar without them (older, or written by hand) is not checked.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ..bytes_unicode import bytes_to_text
from .atomic import atomic_write_set
from .base import MERGES_FILE, SIDECAR_FILE, SIDECAR_FORMAT, VOCAB_FILE, FormatError
from .gpt2_read import _fail, read_merges_txt, read_vocab_json
from .studio import content_digest, read_json

if TYPE_CHECKING:
    from ..encoding.tokenizer import Tokenizer

MERGES_HEADER = "#version: 0.2"

SIDECAR_VERSION = 1
_SIDECAR_KEYS = {"format", "version", "pattern", "special_tokens", "checksums"}


def file_digest(data: bytes) -> str:
    """The checksum a sidecar stores for a file's bytes.

    Example:
        >>> file_digest(b"")[:14]
        'sha256:e3b0c44'
    """
    import hashlib  # (here: see studio.content_digest)

    return "sha256:" + hashlib.sha256(data).hexdigest()


def _digest_of_file(path: str | os.PathLike[str]) -> str:
    import hashlib  # (here: see studio.content_digest)

    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return "sha256:" + digest.hexdigest()


def read_sidecar(path: str | os.PathLike[str]) -> tuple[str, dict[str, int]]:
    """Read a sidecar file: ``(pattern, special token -> id)``.

    Raises:
        FormatError: The file is not a BPE Studio sidecar, or its pattern or special tokens do not match
            its checksum; the message names the key.
    """
    document = read_json(path)
    if not isinstance(document, dict) or document.get("format") != SIDECAR_FORMAT:
        raise _fail(
            path, "key 'format'", f"expected {SIDECAR_FORMAT!r}; this is not a BPE Studio sidecar file"
        )
    if document.get("version") != SIDECAR_VERSION:
        raise _fail(path, "key 'version'", f"version {document.get('version')!r} is not supported")
    unknown = sorted(set(document) - _SIDECAR_KEYS)
    if unknown:  # e.g. a damaged 'checksums' key, which would otherwise turn the checks off unseen
        raise _fail(path, f"key {unknown[0]!r}", "is not part of a sidecar (damaged, or a typo); remove it")
    pattern = document.get("pattern")
    if not isinstance(pattern, str) or not pattern:
        raise _fail(path, "key 'pattern'", "expected a non-empty string")
    specials = document.get("special_tokens", {})
    if not isinstance(specials, dict) or not all(
        isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in specials.values()
    ):
        raise _fail(path, "key 'special_tokens'", "expected an object of token -> non-negative id")
    checksums = document.get("checksums")
    if checksums is not None:
        if not isinstance(checksums, dict) or "sidecar" not in checksums:
            raise _fail(path, "key 'checksums'", "expected an object of file -> checksum, 'sidecar' included")
        if checksums["sidecar"] != content_digest([pattern, specials]):
            raise _fail(
                path,
                "key 'checksums'",
                "the pattern or special tokens were changed or damaged since the file was written; restore "
                "it, or if it was edited on purpose, delete the 'checksums' key",
            )
    return pattern, dict(specials)


def check_sidecar_files(path: str | os.PathLike[str], files: Mapping[str, str | os.PathLike[str]]) -> None:
    """Check the files a sidecar describes against its checksums (a sidecar without them checks nothing).

    Called once the files have been read, so that a file's own error (its line, its key) comes first.

    Args:
        path: The sidecar, already read by :func:`read_sidecar`.
        files: The files by role: ``{"vocab": ..., "merges": ...}`` (gpt2) or ``{"ranks": ...}`` (tiktoken).

    Raises:
        FormatError: A file does not match (damaged, cut short at a line end, or replaced); the message
            names it and says how to accept an edit made on purpose.
    """
    document = read_json(path)
    checksums = document.get("checksums") if isinstance(document, dict) else None
    if not isinstance(checksums, dict):
        return
    if set(checksums) != {"sidecar", *files}:
        roles = ", ".join(sorted({"sidecar", *files}))
        raise _fail(
            path, "key 'checksums'", f"expected checksums of {roles}, got {', '.join(sorted(checksums))}"
        )
    for role, file in files.items():
        if checksums[role] != _digest_of_file(file):
            raise _fail(
                file,
                "checksum",
                f"does not match the one in {os.fspath(path)}: the file was damaged, cut short or replaced "
                "since it was written; restore it, or if it was edited on purpose, delete the 'checksums' "
                f"key from {os.fspath(path)}",
            )


def dumps_sidecar(
    *, pattern: str, special_tokens: Mapping[str, int], files: Mapping[str, bytes] | None = None
) -> str:
    """The sidecar text for a pattern and special tokens, with checksums of ``files`` (role -> bytes)."""
    document: dict[str, object] = {
        "format": SIDECAR_FORMAT,
        "version": SIDECAR_VERSION,
        "pattern": pattern,
        "special_tokens": dict(special_tokens),
    }
    if files is not None:
        document["checksums"] = {
            **{role: file_digest(data) for role, data in files.items()},
            "sidecar": content_digest([pattern, dict(special_tokens)]),
        }
    return json.dumps(document, ensure_ascii=False, indent=1) + "\n"


def _markup_specials(vocab: Mapping[int, bytes], merges: list[tuple[bytes, bytes]]) -> dict[str, int]:
    """GPT-2's convention: multi-byte entries no merge produces, shaped ``<...>``, are special tokens."""
    produced = {a + b for a, b in merges}
    specials: dict[str, int] = {}
    for i, token in sorted(vocab.items()):
        if len(token) > 2 and token not in produced and token.startswith(b"<") and token.endswith(b">"):
            try:
                specials[token.decode("utf-8")] = i
            except UnicodeDecodeError:
                continue
    return specials


def find_gpt2_files(path: str | os.PathLike[str]) -> tuple[Path, Path] | None:
    """The ``(vocab, merges)`` files that ``path`` names, or None if it names no GPT-2 style tokenizer.

    ``path`` is a folder holding ``vocab.json`` + ``merges.txt``, or one pair with a shared prefix such as
    ``gpt2_vocab.json`` + ``gpt2_merges.txt`` (as many downloads and course materials name them), or such a
    vocab file itself, which picks one pair where a folder holds several.

    Raises:
        FormatError: A folder holds several prefixed pairs; the message lists them.

    Example:
        >>> find_gpt2_files(".")
        (PosixPath('vocab.json'), PosixPath('merges.txt'))

        A prefixed pair, named by its vocab file::

            find_gpt2_files("data/gpt2_vocab.json")
            # (PosixPath('data/gpt2_vocab.json'), PosixPath('data/gpt2_merges.txt'))
    """
    target = Path(path)
    if target.is_file():
        merges = target.with_name(target.name[: -len(VOCAB_FILE)] + MERGES_FILE)
        return (target, merges) if target.name.endswith(VOCAB_FILE) and merges.is_file() else None
    if (target / VOCAB_FILE).is_file() and (target / MERGES_FILE).is_file():
        return target / VOCAB_FILE, target / MERGES_FILE
    pairs = [pair for vocab in sorted(target.glob("*" + VOCAB_FILE)) if (pair := find_gpt2_files(vocab))]
    if len(pairs) > 1:
        names = ", ".join(f"{v.name} + {m.name}" for v, m in pairs)
        raise FormatError(
            f"{target}: several GPT-2 style tokenizers ({names}); give the path of one vocab file"
        )
    return pairs[0] if pairs else None


def load_gpt2(folder: str | os.PathLike[str], *, pattern: str | None = None) -> Tokenizer:
    """Load a folder holding ``vocab.json``, ``merges.txt`` and, if present, the ``bpe_studio.json`` sidecar.

    Args:
        folder: The folder, or a ``PREFIXvocab.json`` file beside its ``PREFIXmerges.txt``
            (see :func:`find_gpt2_files`).
        pattern: Overrides the pattern (default: the sidecar's, else ``gpt2``).

    Example:
        >>> save_gpt2(small, "out/gpt2")
        PosixPath('out/gpt2')
        >>> load_gpt2("out/gpt2").merges == small.merges
        True
    """
    from ..encoding.tokenizer import Tokenizer

    root = Path(folder)
    files = find_gpt2_files(root)
    if files is None:
        raise FormatError(
            f"{root}: no {VOCAB_FILE} + {MERGES_FILE}, nor a PREFIX{VOCAB_FILE} + PREFIX{MERGES_FILE} pair"
        )
    vocab_path, merges_path = files
    root = vocab_path.parent
    sidecar = root / SIDECAR_FILE
    specials: dict[str, int] | None = None
    stored_pattern = "gpt2"
    if sidecar.is_file():
        stored_pattern, specials = read_sidecar(sidecar)
    vocab = read_vocab_json(vocab_path, raw_tokens=specials or ())
    merges = read_merges_txt(merges_path)
    if specials is not None:
        check_sidecar_files(sidecar, {"vocab": vocab_path, "merges": merges_path})
    if specials is None:
        specials = _markup_specials(vocab, merges)
    try:
        return Tokenizer(vocab, merges, specials, pattern=pattern or stored_pattern)
    except ValueError as exc:
        raise FormatError(f"{vocab_path}: {exc}") from None


def save_gpt2(tokenizer: Tokenizer, folder: str | os.PathLike[str]) -> Path:
    """Write ``vocab.json``, ``merges.txt`` (with the ``#version`` header) and the sidecar into ``folder``.

    Returns:
        The folder (what :func:`load_gpt2` reads).

    Raises:
        FormatError: A special token's id or spelling collides with an ordinary token in ``vocab.json``.

    Example:
        >>> save_gpt2(small, "out/gpt2")
        PosixPath('out/gpt2')
    """
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    special_ids = {i: token for token, i in tokenizer.special_tokens.items()}
    entries: dict[str, int] = {}
    for i, token in sorted(tokenizer.vocab.items()):
        # GPT-2's own file spells <|endoftext|> like any token; a special token that has characters outside
        # the table (a space, say) is written as it is and read back literally through the sidecar.
        key = bytes_to_text(token)
        if i in special_ids and key != special_ids[i]:
            key = special_ids[i]
        if key in entries:
            raise _fail(root / VOCAB_FILE, f"key {key!r}", f"ids {entries[key]} and {i} would share this key")
        entries[key] = i
    seen: set[tuple[bytes, bytes]] = set()
    lines = [MERGES_HEADER]
    for left, right in tokenizer.merges:
        if (left, right) in seen:
            continue  # a repeated pair never applies (the first rank wins); other readers may keep the last
        seen.add((left, right))
        lines.append(f"{bytes_to_text(left)} {bytes_to_text(right)}")
    vocab_data = (json.dumps(entries, ensure_ascii=False) + "\n").encode("utf-8")
    merges_data = ("\n".join(lines) + "\n").encode("utf-8")
    files = {"vocab": vocab_data, "merges": merges_data}
    # One set: a reader (or a failed write) never pairs a new vocab.json with an old merges.txt.
    atomic_write_set(
        {
            root / VOCAB_FILE: vocab_data,
            root / MERGES_FILE: merges_data,
            root / SIDECAR_FILE: dumps_sidecar(
                pattern=tokenizer.pattern, special_tokens=tokenizer.special_tokens, files=files
            ),
        }
    )
    return root
