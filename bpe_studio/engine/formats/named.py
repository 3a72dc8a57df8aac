"""Tokenizers by name: ``gpt2`` (shipped with BPE Studio) and OpenAI's encodings from tiktoken's cache.

``load("gpt2")`` reads GPT-2's ``vocab.json`` + ``merges.txt``, which ship as package data (MIT; see
``bpe_studio/resources/gpt2/LICENSE``). ``load("cl100k_base")`` (also ``r50k_base``, ``p50k_base``,
``o200k_base``, and the short names ``cl100k`` ...) reads the file tiktoken keeps in its cache: the folder
``$TIKTOKEN_CACHE_DIR``, else ``$DATA_GYM_CACHE_DIR``, else ``data-gym-cache`` in the temporary folder, under
the SHA-1 of the file's address as tiktoken names it, or as ``NAME.tiktoken``. A file is used only if its
SHA-256 is the one tiktoken publishes. Nothing is downloaded unless asked: :func:`download_encoding` (the
CLI's ``--download``) fetches the file, with a timeout, checks it and writes it atomically into the cache.

Example:
    >>> resolve_name("gpt2").name
    'gpt2'
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from .atomic import atomic_write
from .studio import FormatError
from .tiktoken_format import KNOWN_ENCODINGS, KnownEncoding

#: The folder of GPT-2's files shipped with BPE Studio.
GPT2_FOLDER = Path(__file__).resolve().parent.parent.parent / "resources" / "gpt2"

#: Seconds a download may take to answer and to deliver each block (``--download`` only).
DOWNLOAD_TIMEOUT = 60.0

# The most bytes a download may bring: o200k_base.tiktoken is 3.6 MB; this bounds a wrong answer.
_DOWNLOAD_LIMIT = 16 << 20

_ALIASES = {name.removesuffix("_base"): name for name in KNOWN_ENCODINGS}


class NamedTokenizerMissingError(FormatError):
    """A known name whose file is not on this computer; the message says where to put it."""


def tokenizer_names() -> list[str]:
    """The names :func:`resolve_name` knows.

    Example:
        >>> tokenizer_names()[:2]
        ['gpt2', 'r50k_base']
    """
    return ["gpt2", *KNOWN_ENCODINGS]


def encoding_of(name: str) -> KnownEncoding | None:
    """The OpenAI encoding a name stands for (``cl100k`` and ``cl100k_base`` alike), or None.

    Example:
        >>> encoding_of("o200k").name
        'o200k_base'
    """
    return KNOWN_ENCODINGS.get(_ALIASES.get(name, name))


def tiktoken_cache_dir() -> Path | None:
    """The folder tiktoken caches its files in (None when ``TIKTOKEN_CACHE_DIR`` is empty: no cache).

    Example:
        >>> os.environ["TIKTOKEN_CACHE_DIR"]
        'tiktoken-cache'
        >>> tiktoken_cache_dir()
        PosixPath('tiktoken-cache')

        With neither variable set::

            tiktoken_cache_dir()  # PosixPath('/tmp/data-gym-cache')
    """
    for variable in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if variable in os.environ:
            value = os.environ[variable]
            return Path(value) if value else None
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def cache_key(encoding: KnownEncoding) -> str:
    """The file name tiktoken gives an encoding in its cache: the SHA-1 of its address.

    Example:
        >>> cache_key(KNOWN_ENCODINGS["cl100k_base"])
        '9b5ad71b2ce5302211f9c61530b329a4922fc6a4'
    """
    return hashlib.sha1(encoding.url.encode()).hexdigest()  # tiktoken's file name, not for security


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def find_cached(encoding: KnownEncoding) -> Path | None:
    """The cached file of an encoding whose SHA-256 is right, or None.

    Example:
        >>> find_cached(KNOWN_ENCODINGS["cl100k_base"]) is None  # an empty cache
        True

        Once :func:`download_encoding` has fetched it::

            find_cached(KNOWN_ENCODINGS["cl100k_base"])
            # PosixPath('/tmp/data-gym-cache/9b5ad71b2ce5302211f9c61530b329a4922fc6a4')
    """
    folder = tiktoken_cache_dir()
    if folder is None:
        return None
    for candidate in (folder / cache_key(encoding), folder / f"{encoding.name}.tiktoken"):
        try:
            if candidate.is_file() and _sha256_of(candidate) == encoding.sha256:
                return candidate
        except OSError:
            continue
    return None


def _missing(name: str, encoding: KnownEncoding) -> NamedTokenizerMissingError:
    folder = tiktoken_cache_dir()
    where = (
        f"put {encoding.name}.tiktoken (from {encoding.url}) in {folder}"
        if folder is not None
        else f"set TIKTOKEN_CACHE_DIR to a folder holding {encoding.name}.tiktoken (from {encoding.url})"
    )
    return NamedTokenizerMissingError(
        f"{name}: OpenAI's {encoding.name} is not in tiktoken's cache on this computer and is never "
        f"downloaded unasked; {where}, or pass --download (download_encoding() in Python) to fetch it"
    )


def resolve_name(name: str) -> Path:
    """The file or folder a tokenizer name stands for.

    Raises:
        NamedTokenizerMissingError: An OpenAI encoding that is not in tiktoken's cache (the message says
            where to put the file).
        KeyError: Not a known name.

    Example:
        >>> resolve_name("gpt2") == GPT2_FOLDER
        True
    """
    if name == "gpt2":
        return GPT2_FOLDER
    encoding = encoding_of(name)
    if encoding is None:
        raise KeyError(name)
    found = find_cached(encoding)
    if found is None:
        raise _missing(name, encoding)
    return found


def download_encoding(name: str, *, timeout: float = DOWNLOAD_TIMEOUT, url: str | None = None) -> Path:
    """Fetch an OpenAI encoding's file into tiktoken's cache (only when the user asked for it).

    The file is checked against the SHA-256 tiktoken publishes before it is written (atomically, under the
    name tiktoken gives it, so tiktoken finds it too).

    Args:
        name: ``cl100k_base``, ``cl100k``, ...
        timeout: Seconds to wait for the server to answer and for each block.
        url: Where to fetch it from (default: OpenAI's address).

    Raises:
        FormatError: Unknown name, no cache folder, the download failed or timed out, or the file is not
            the published one.

    Example (fetches 1.7 MB from openaipublic.blob.core.windows.net)::

        download_encoding("cl100k_base")
        # PosixPath('/tmp/data-gym-cache/9b5ad71b2ce5302211f9c61530b329a4922fc6a4')
    """
    encoding = encoding_of(name)
    if encoding is None:
        raise FormatError(f"{name}: not an OpenAI encoding; known: {', '.join(KNOWN_ENCODINGS)}")
    found = find_cached(encoding)
    if found is not None:
        return found
    folder = tiktoken_cache_dir()
    if folder is None:
        raise FormatError(
            f"{name}: TIKTOKEN_CACHE_DIR is empty (no cache); set it to a folder to download into"
        )
    source = url or encoding.url
    # Imported here: urllib.request (http.client, ssl, email) costs ~15 ms that training never needs.
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(source, timeout=timeout) as answer:
            data = answer.read(_DOWNLOAD_LIMIT + 1)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise FormatError(f"{name}: could not download {source} ({reason}); check the network") from None
    if len(data) > _DOWNLOAD_LIMIT or hashlib.sha256(data).hexdigest() != encoding.sha256:
        raise FormatError(
            f"{name}: the file downloaded from {source} is not OpenAI's {encoding.name} (its SHA-256 "
            "differs); nothing was written"
        )
    try:
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / cache_key(encoding)
        atomic_write(target, data)
    except OSError as exc:
        raise FormatError(f"{folder}: cannot write the downloaded file ({exc.strerror or exc})") from None
    return target


__all__ = [
    "GPT2_FOLDER",
    "NamedTokenizerMissingError",
    "cache_key",
    "download_encoding",
    "encoding_of",
    "find_cached",
    "resolve_name",
    "tiktoken_cache_dir",
    "tokenizer_names",
]
