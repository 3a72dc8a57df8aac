"""Tokenizers by name: ``gpt2`` (shipped with BPE Studio) and OpenAI's encodings from tiktoken's cache.

``load("gpt2")`` reads GPT-2's ``vocab.json`` + ``merges.txt``, which ship as package data (MIT; see
``bpe_studio/resources/gpt2/LICENSE``). ``load("cl100k_base")`` (also ``r50k_base``, ``p50k_base``,
``o200k_base``, and the short names ``cl100k`` ...) reads the file tiktoken keeps in its cache: the folder
``$TIKTOKEN_CACHE_DIR``, else ``$DATA_GYM_CACHE_DIR``, else ``data-gym-cache`` in the temporary folder, under
the SHA-1 of the file's address as tiktoken names it, or as ``NAME.tiktoken``. A file is used only if its
SHA-256 is the one tiktoken publishes. Nothing is downloaded unless asked: :func:`download_encoding` (the
CLI's ``--download``) fetches the file within one deadline for the whole download (name lookup, connecting,
the headers and every block: a server that trickles a byte a second cannot hold it longer), refuses more
bytes than its ``Content-Length`` or :data:`DOWNLOAD_LIMIT`, checks the file and writes it atomically into
the cache.

Example:
    >>> resolve_name("gpt2").name
    'gpt2'
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import env_seconds
from .atomic import atomic_write
from .base import FormatError
from .tiktoken_format import KNOWN_ENCODINGS, KnownEncoding

if TYPE_CHECKING:  # socket is imported where a download runs: loading a tokenizer or training needs none
    import socket

#: The folder of GPT-2's files shipped with BPE Studio.
GPT2_FOLDER = Path(__file__).resolve().parent.parent.parent / "resources" / "gpt2"

#: Seconds a whole download may take, from looking up the server to the last byte (``--download`` only),
#: unless the environment variable ``BPE_STUDIO_DOWNLOAD_TIMEOUT`` gives another number of seconds.
DOWNLOAD_TIMEOUT = 60.0
#: The environment variable that overrides :data:`DOWNLOAD_TIMEOUT`.
TIMEOUT_ENV = "BPE_STUDIO_DOWNLOAD_TIMEOUT"

#: The most bytes a download may bring: o200k_base.tiktoken is 3.6 MB; this bounds a wrong answer.
DOWNLOAD_LIMIT = 16 << 20

# Bytes asked of the socket at a time (the deadline is checked, and the socket's timeout set, before each).
_BLOCK = 1 << 16

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


def download_timeout() -> float:
    """Seconds a download may take: ``$BPE_STUDIO_DOWNLOAD_TIMEOUT`` if set, else :data:`DOWNLOAD_TIMEOUT`.

    Raises:
        FormatError: The variable is set to something that is not a positive number.

    Example:
        >>> download_timeout()
        60.0
    """
    try:
        return env_seconds(TIMEOUT_ENV, DOWNLOAD_TIMEOUT, example=300)
    except ValueError as error:
        raise FormatError(str(error)) from None


class DeadlinePassedError(Exception):
    """The download's deadline passed (raised in the fetching thread, or by the caller that waits for it)."""


class TruncatedError(Exception):
    """The server closed the connection before the bytes its ``Content-Length`` declared."""


class TooLargeError(Exception):
    """The answer is, or declares itself, larger than allowed."""


def _fetch(
    source: str,
    *,
    deadline: float,
    limit: int,
    sockets: list[socket.socket],
    headers: Mapping[str, str] | None = None,
    answer_headers: dict[str, str] | None = None,
) -> bytes:
    """Fetch ``source`` (run in a thread of :func:`fetch_by`): every socket it opens is added to ``sockets``
    (so that the waiting caller can shut them down), and before every read the socket's timeout is set to the
    time left, so that no single read can outlast ``deadline``. ``headers`` go with the request only, never
    with a redirect (a bearer token stays with its host); ``answer_headers`` receives the answer's."""
    # Imported here: urllib.request (http.client, ssl, email) costs ~15 ms that training never needs.
    import http.client
    import urllib.request

    def left() -> float:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise DeadlinePassedError
        return remaining

    class Http(http.client.HTTPConnection):
        def connect(self) -> None:
            super().connect()
            sockets.append(self.sock)

    class Https(http.client.HTTPSConnection):
        def connect(self) -> None:
            super().connect()
            sockets.append(self.sock)

    class HttpHandler(urllib.request.HTTPHandler):
        def http_open(self, req: Any) -> Any:
            return self.do_open(Http, req)

    class HttpsHandler(urllib.request.HTTPSHandler):
        def https_open(self, req: Any) -> Any:
            return self.do_open(Https, req)

    opener = urllib.request.build_opener(HttpHandler, HttpsHandler)
    # The timeout bounds connecting and each read of the headers; the caller's deadline bounds their sum.
    request = urllib.request.Request(source)
    for key, value in (headers or {}).items():
        request.add_unredirected_header(key, value)
    with opener.open(request, timeout=left()) as answer:
        if answer_headers is not None:
            answer_headers.update(answer.headers.items())
        declared = answer.headers.get("Content-Length")
        expected = int(declared) if declared is not None and declared.strip().isdigit() else None
        if expected is not None and expected > limit:
            raise TooLargeError(expected)
        wanted = limit + 1 if expected is None else expected
        blocks: list[bytes] = []
        got = 0
        while got < wanted:
            sockets[-1].settimeout(left())  # the answer's connection (the last one, after any redirect)
            try:
                block = answer.read(min(_BLOCK, wanted - got))
            except http.client.IncompleteRead as exc:
                raise TruncatedError(got + len(exc.partial), expected) from None
            if not block:
                break
            blocks.append(block)
            got += len(block)
        left()  # the last block came, but after the deadline: refused all the same
        if got > limit:
            raise TooLargeError(got)
        if expected is not None and got < expected:
            raise TruncatedError(got, expected)
        return b"".join(blocks)


def fetch_by(
    source: str,
    *,
    deadline: float,
    limit: int,
    headers: Mapping[str, str] | None = None,
    answer_headers: dict[str, str] | None = None,
) -> bytes:
    """``_fetch(source)`` in a thread that the caller waits for only until ``deadline``.

    The socket timeouts bound each read, but not the name lookup (``getaddrinfo`` has no timeout) nor a
    server that trickles its headers; so the caller waits for the thread only until the deadline, then shuts
    its sockets down (which wakes any read it is blocked in) and gives up. A thread still stuck in a name
    lookup is a daemon that only returns bytes nobody takes: it writes nothing.
    """
    sockets: list[socket.socket] = []
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["data"] = _fetch(
                source,
                deadline=deadline,
                limit=limit,
                sockets=sockets,
                headers=headers,
                answer_headers=answer_headers,
            )
        except BaseException as exc:  # handed to the caller, which raises it in its own thread
            outcome["error"] = exc

    thread = threading.Thread(target=run, name="bpe-studio-download", daemon=True)
    thread.start()
    thread.join(max(0.0, deadline - time.monotonic()))
    if thread.is_alive():
        import socket

        for sock in list(sockets):
            with contextlib.suppress(OSError):
                # socket.socket's own shutdown, also for a TLS socket: wakes the blocked read without
                # touching the TLS state the other thread is using.
                socket.socket.shutdown(sock, socket.SHUT_RDWR)
        raise DeadlinePassedError
    error = outcome.get("error")
    if error is not None:
        # Every timeout set is the time left: a timed-out connect or read means the deadline passed.
        if isinstance(error, TimeoutError) or isinstance(getattr(error, "reason", None), TimeoutError):
            raise DeadlinePassedError
        raise error
    data: bytes = outcome["data"]
    return data


def network_reason(exc: BaseException, source: str) -> str:
    """Why a download failed, in words rather than the socket's ``[Errno -2] Name or service not known``.

    Example:
        >>> import socket
        >>> network_reason(socket.gaierror(-2, "Name or service not known"), "https://example.com/x")
        'cannot look up example.com: this computer seems to be offline'
    """
    import socket
    import urllib.parse

    reason = getattr(exc, "reason", exc)  # urllib's URLError wraps the socket's error
    host = urllib.parse.urlsplit(source).hostname or source
    if isinstance(reason, socket.gaierror):
        return f"cannot look up {host}: this computer seems to be offline"
    if isinstance(reason, ConnectionRefusedError):
        return f"{host} refused the connection"
    if isinstance(reason, (ConnectionResetError, ConnectionAbortedError)):
        return f"the connection to {host} was cut"
    if isinstance(reason, TimeoutError):
        return f"{host} did not answer"
    if isinstance(reason, OSError) and reason.strerror:
        return reason.strerror[:1].lower() + reason.strerror[1:]  # without the "[Errno N]"
    return str(reason)


def download_encoding(name: str, *, timeout: float | None = None, url: str | None = None) -> Path:
    """Fetch an OpenAI encoding's file into tiktoken's cache (only when the user asked for it).

    The whole download must end within ``timeout`` seconds (the name lookup, connecting, the headers and
    every block: the time left is computed before each read), and may bring no more than the
    ``Content-Length`` the server declares nor more than :data:`DOWNLOAD_LIMIT` bytes. The file is checked
    against the SHA-256 tiktoken publishes before it is written (atomically, under the name tiktoken gives
    it, so tiktoken finds it too); a failed download writes nothing.

    Args:
        name: ``cl100k_base``, ``cl100k``, ...
        timeout: Seconds the whole download may take (default: :func:`download_timeout`).
        url: Where to fetch it from (default: OpenAI's address).

    Raises:
        FormatError: Unknown name, no cache folder, the download failed, was cut short or did not end within
            the deadline, it was too large, or the file is not the published one.

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
    seconds = download_timeout() if timeout is None else timeout
    import urllib.error  # see _fetch

    try:
        data = fetch_by(source, deadline=time.monotonic() + seconds, limit=DOWNLOAD_LIMIT)
    except DeadlinePassedError:
        raise FormatError(
            f"{name}: downloading {source} did not finish within the {seconds:g} s deadline; nothing was "
            f"written; retry, or allow more time with {TIMEOUT_ENV}=SECONDS (timeout= in Python)"
        ) from None
    except TooLargeError as exc:
        raise FormatError(
            f"{name}: {source} sent or declared {exc.args[0]:,} bytes, more than the {DOWNLOAD_LIMIT:,} any "
            "OpenAI encoding needs; check the address; nothing was written"
        ) from None
    except TruncatedError as exc:
        got, expected = exc.args
        raise FormatError(
            f"{name}: the connection to {source} closed after {got:,} of {expected:,} bytes; nothing was "
            "written; retry"
        ) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = network_reason(exc, source)
        raise FormatError(f"{name}: could not download {source} ({reason}); check the network") from None
    if hashlib.sha256(data).hexdigest() != encoding.sha256:
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
    "DOWNLOAD_LIMIT",
    "DOWNLOAD_TIMEOUT",
    "GPT2_FOLDER",
    "NamedTokenizerMissingError",
    "cache_key",
    "download_encoding",
    "download_timeout",
    "encoding_of",
    "find_cached",
    "network_reason",
    "resolve_name",
    "tiktoken_cache_dir",
    "tokenizer_names",
]
