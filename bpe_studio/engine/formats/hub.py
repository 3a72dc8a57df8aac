"""Tokenizers by Hugging Face model id (``Qwen/Qwen2.5-7B``), from the local Hugging Face cache.

The cache is the folder ``$HF_HUB_CACHE``, else ``$HF_HOME/hub``, else ``~/.cache/huggingface/hub``, laid
out as ``huggingface_hub`` keeps it: ``models--ORG--NAME/refs/main`` names a revision, and
``models--ORG--NAME/snapshots/<revision>/`` holds its files. A model's tokenizer is that snapshot's
``tokenizer.json``, else its ``tekken.json`` (Mistral's).

Nothing is downloaded unless asked: :func:`download_model` (the CLI's ``--download``) fetches only the
tokenizer files from ``$HF_ENDPOINT`` (default ``https://huggingface.co``) as
``ENDPOINT/MODEL/resolve/main/FILE``, with ``$HF_TOKEN`` as a bearer token when set, within the deadline and
size cap of every download (:mod:`~bpe_studio.engine.formats.named`), and writes them atomically into the
cache layout (plain files in the snapshot named by the answer's ``X-Repo-Commit``, then ``refs/main``), so
``huggingface_hub`` finds them too. ``HF_HUB_OFFLINE`` forbids it, as it does for ``huggingface_hub``.

Example:
    >>> is_model_id("meta-llama/Llama-3.1-8B"), is_model_id("out/tokenizer.json"), is_model_id("gpt2")
    (True, False, False)
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from pathlib import Path

from .atomic import atomic_write, atomic_write_set
from .base import FormatError
from .named import (
    DOWNLOAD_LIMIT,
    TIMEOUT_ENV,
    DeadlinePassedError,
    TooLargeError,
    TruncatedError,
    download_timeout,
    fetch_by,
    network_reason,
)

#: The files a model's tokenizer is read from, in the order they are looked for.
TOKENIZER_FILES = ("tokenizer.json", "tekken.json")
#: The files :func:`download_model` fetches: the tokenizer's, its configuration, and when a model has no
#: ``tokenizer.json``, Mistral's ``tekken.json`` or SentencePiece's ``tokenizer.model``.
_MAIN_FILE = "tokenizer.json"
_CONFIG_FILE = "tokenizer_config.json"
_FALLBACK_FILES = ("tekken.json", "tokenizer.model")

#: Where models are fetched from unless ``HF_ENDPOINT`` says otherwise (as for ``huggingface_hub``).
DEFAULT_ENDPOINT = "https://huggingface.co"

_PART = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9_-])?"
_MODEL_ID = re.compile(rf"{_PART}/{_PART}")
# A path to a file that does not exist is not a model id, whatever its shape.
_FILE_SUFFIXES = (".json", ".tiktoken", ".txt", ".model")
_REVISION = re.compile(r"[A-Za-z0-9._-]{1,100}")


class HubModelMissingError(FormatError):
    """A model id that is not in the local Hugging Face cache; the message says where it looked and how to
    fetch it."""


class HubModelUnavailableError(FormatError):
    """The Hub refused the model: gated or private (401, 403) or no such model or file (404)."""


def is_model_id(name: str) -> bool:
    """Whether ``name`` has the shape of a Hugging Face model id, ``ORG/NAME`` (and is not a file's name).

    Example:
        >>> is_model_id("Qwen/Qwen2.5-7B"), is_model_id("a/../b"), is_model_id("/abs/path")
        (True, False, False)
    """
    return (
        _MODEL_ID.fullmatch(name) is not None
        and ".." not in name
        and not name.lower().endswith(_FILE_SUFFIXES)
    )


def hub_cache_dir() -> Path:
    """The Hugging Face cache: ``$HF_HUB_CACHE``, else ``$HF_HOME/hub``, else ``~/.cache/huggingface/hub``.

    Example:
        >>> os.environ["HF_HUB_CACHE"] = "hub"
        >>> hub_cache_dir()
        PosixPath('hub')
        >>> del os.environ["HF_HUB_CACHE"]
    """
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    return Path("~/.cache/huggingface/hub").expanduser()


def offline() -> bool:
    """Whether ``HF_HUB_OFFLINE`` forbids downloads (1, true, yes or on, as ``huggingface_hub`` reads it)."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def endpoint() -> str:
    """Where models are fetched from: ``$HF_ENDPOINT`` or :data:`DEFAULT_ENDPOINT` (no trailing slash)."""
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def model_folder(model_id: str) -> Path:
    """The cache folder of a model: ``models--ORG--NAME``.

    Example:
        >>> model_folder("Qwen/Qwen2.5-7B").name
        'models--Qwen--Qwen2.5-7B'
    """
    return hub_cache_dir() / ("models--" + model_id.replace("/", "--"))


def _tokenizer_in(snapshot: Path) -> Path | None:
    return next((snapshot / name for name in TOKENIZER_FILES if (snapshot / name).is_file()), None)


def find_model(model_id: str) -> Path | None:
    """The tokenizer file of a cached model's ``main`` revision (``refs/main``), or None.

    Without ``refs/main`` (a cache filled by hand), the most recently changed snapshot that holds one.
    """
    folder = model_folder(model_id)
    try:
        revision = (folder / "refs" / "main").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        revision = ""
    if _REVISION.fullmatch(revision):
        found = _tokenizer_in(folder / "snapshots" / revision)
        if found is not None:
            return found
    try:
        snapshots = sorted(
            (p for p in (folder / "snapshots").iterdir() if p.is_dir()),
            key=lambda p: p.stat().st_mtime,
            reverse=True,
        )
    except OSError:
        return None
    return next((f for f in map(_tokenizer_in, snapshots) if f is not None), None)


def cached_models() -> list[str]:
    """The model ids in the cache that hold a tokenizer, sorted case-insensitively."""
    try:
        folders = list(hub_cache_dir().iterdir())
    except OSError:
        return []
    ids = []
    for folder in folders:
        if folder.name.startswith("models--") and folder.name.count("--") == 2:
            model_id = folder.name.removeprefix("models--").replace("--", "/")
            if is_model_id(model_id) and find_model(model_id) is not None:
                ids.append(model_id)
    return sorted(ids, key=str.lower)


def _missing(model_id: str) -> HubModelMissingError:
    return HubModelMissingError(
        f"{model_id}: no such file, and no tokenizer of the Hugging Face model {model_id} in the cache "
        f"{model_folder(model_id)} (HF_HUB_CACHE or HF_HOME); fetch it with --download, or with "
        f"`huggingface-cli download {model_id} tokenizer.json`"
    )


def resolve_model(model_id: str) -> Path:
    """The cached tokenizer file of a model id.

    Raises:
        HubModelMissingError: The model (or its tokenizer) is not in the cache; the message says where it
            looked and how to fetch it.
    """
    found = find_model(model_id)
    if found is None:
        raise _missing(model_id)
    return found


def _get(model_id: str, name: str, *, deadline: float, seconds: float) -> tuple[bytes, dict[str, str]] | None:
    """One file of the model's ``main`` revision and the answer's headers; None when the Hub has no such file
    (404). Raises one-sentence :class:`FormatError` for the rest."""
    import urllib.error  # see named._fetch: only a download needs it

    source = f"{endpoint()}/{model_id}/resolve/main/{name}"
    headers = {"User-Agent": "bpe-studio"}
    token = os.environ.get("HF_TOKEN", "").strip()
    if token:
        headers["Authorization"] = f"Bearer {token}"
    answer: dict[str, str] = {}
    try:
        data = fetch_by(
            source, deadline=deadline, limit=DOWNLOAD_LIMIT, headers=headers, answer_headers=answer
        )
    except DeadlinePassedError:
        raise FormatError(
            f"{model_id}: downloading {source} did not finish within the {seconds:g} s deadline; nothing was "
            f"written; retry, or allow more time with {TIMEOUT_ENV}=SECONDS"
        ) from None
    except TooLargeError as exc:
        raise FormatError(
            f"{model_id}: {source} sent or declared {exc.args[0]:,} bytes, more than the {DOWNLOAD_LIMIT:,} "
            "a tokenizer file may have; nothing was written"
        ) from None
    except TruncatedError as exc:
        got, expected = exc.args
        raise FormatError(
            f"{model_id}: the connection to {source} closed after {got:,} of {expected:,} bytes; nothing "
            "was written; retry"
        ) from None
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return None
        if exc.code in (401, 403):
            how = "HF_TOKEN is set but does not grant access" if token else "set HF_TOKEN to an access token"
            raise HubModelUnavailableError(
                f"{model_id}: the Hub refused {name} (HTTP {exc.code}): the model is gated or private; "
                f"accept its terms at {endpoint()}/{model_id} and {how}"
            ) from None
        raise FormatError(f"{model_id}: could not download {source} (HTTP {exc.code}); retry later") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = network_reason(exc, source)
        raise FormatError(f"{model_id}: could not download {source} ({reason}); check the network") from None
    return data, {key.lower(): value for key, value in answer.items()}


def download_model(model_id: str, *, timeout: float | None = None) -> Path:
    """Fetch a model's tokenizer files into the Hugging Face cache (only when the user asked for it).

    Fetches ``tokenizer.json`` and ``tokenizer_config.json`` (if the model has one); for a model without a
    ``tokenizer.json``, ``tekken.json`` or ``tokenizer.model``. The whole download must end within
    ``timeout`` seconds. The files go, atomically and together, into the snapshot named by the Hub's
    ``X-Repo-Commit`` header (else by the SHA-1 of the files), then ``refs/main`` names it.

    Args:
        model_id: ``ORG/NAME``.
        timeout: Seconds the whole download may take (default: :func:`~.named.download_timeout`).

    Returns:
        The tokenizer file to load (what :func:`resolve_model` now finds).

    Raises:
        HubModelUnavailableError: Gated or private (401/403), or no such model or tokenizer file (404).
        FormatError: Not a model id, ``HF_HUB_OFFLINE`` is set, the network failed, the deadline passed or
            a file was too large; or the cache cannot be written.

    Example (fetches from huggingface.co)::

        download_model("Qwen/Qwen2.5-7B")
        # PosixPath('~/.cache/huggingface/hub/models--Qwen--Qwen2.5-7B/snapshots/<commit>/tokenizer.json')
    """
    if not is_model_id(model_id):
        raise FormatError(
            f"{model_id}: not a Hugging Face model id; write it as ORG/NAME, e.g. Qwen/Qwen2.5-7B"
        )
    if offline():
        raise FormatError(
            f"{model_id}: HF_HUB_OFFLINE is set, so nothing is downloaded; unset it, or fetch the model "
            f"where you are online (`huggingface-cli download {model_id} tokenizer.json`)"
        )
    seconds = download_timeout() if timeout is None else timeout
    deadline = time.monotonic() + seconds
    files: dict[str, bytes] = {}
    commit = ""
    for name in (_MAIN_FILE, *_FALLBACK_FILES):
        got = _get(model_id, name, deadline=deadline, seconds=seconds)
        if got is not None:
            files[name], headers = got
            commit = headers.get("x-repo-commit", "")
            break
    if not files:
        raise HubModelUnavailableError(
            f"{model_id}: the Hub has no such model, or it has none of {_MAIN_FILE}, "
            f"{', '.join(_FALLBACK_FILES)} (HTTP 404 at {endpoint()}/{model_id}); check the model id"
        )
    config = _get(model_id, _CONFIG_FILE, deadline=deadline, seconds=seconds)
    if config is not None:
        files[_CONFIG_FILE] = config[0]
    if not _REVISION.fullmatch(commit):
        digest = hashlib.sha1(usedforsecurity=False)
        for name in sorted(files):
            digest.update(name.encode() + b"\0" + files[name])
        commit = digest.hexdigest()
    folder = model_folder(model_id)
    snapshot = folder / "snapshots" / commit
    try:
        snapshot.mkdir(parents=True, exist_ok=True)
        (folder / "refs").mkdir(exist_ok=True)
        atomic_write_set({snapshot / name: data for name, data in files.items()})
        atomic_write(folder / "refs" / "main", commit)
    except OSError as exc:
        raise FormatError(f"{folder}: cannot write the downloaded files ({exc.strerror or exc})") from None
    return snapshot / next(iter(files))  # the tokenizer's file (a tokenizer.model, too, for load to judge)


__all__ = [
    "DEFAULT_ENDPOINT",
    "TOKENIZER_FILES",
    "HubModelMissingError",
    "HubModelUnavailableError",
    "cached_models",
    "download_model",
    "endpoint",
    "find_model",
    "hub_cache_dir",
    "is_model_id",
    "model_folder",
    "offline",
    "resolve_model",
]
