"""Corpus files given by local path or by fsspec URL: open, size, identity, and counting them in-process.

A URL is anything that starts with ``scheme://`` (``s3://bucket/corpus.txt``, ``gs://...``,
``memory://...``, ``file:///data/corpus.txt``); it is read through `fsspec <https://filesystem-spec.readthedocs.io>`_,
which must be installed with the package of that file system (``s3fs``, ``gcsfs``, ...). Local paths are
read with the built-in ``open``. Both are read by byte ranges (``seek`` then ``read``), so a worker reads
only its own part of a file.

fsspec is optional: ``pip install "bpe-studio[distributed]"``. Nothing here imports it until a URL is used.
"""

from __future__ import annotations

import importlib
import os
import re
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, BinaryIO, cast

#: How to install the optional distributed extra (Dask and fsspec).
INSTALL_HINT = 'pip install "bpe-studio[distributed]"'

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")


def is_url(path: str | os.PathLike[str]) -> bool:
    """True for ``scheme://...`` strings (read through fsspec); False for local paths and ``Path`` objects.

    Example:
        >>> is_url("s3://bucket/a.txt"), is_url("data/a.txt"), is_url(Path("a.txt"))
        (True, False, False)
    """
    return isinstance(path, str) and _URL.match(path) is not None


def _filesystem(url: str) -> tuple[Any, str]:
    """The fsspec file system of a URL and the path inside it; ``ImportError`` says what to install."""
    try:
        fsspec: Any = importlib.import_module("fsspec")  # optional; typed Any (it has no type hints)
    except ImportError:
        raise ImportError(f"reading {url} needs fsspec; install it with {INSTALL_HINT}") from None
    fs, inner = fsspec.core.url_to_fs(url)
    return fs, cast(str, inner)


def open_binary(path: str) -> AbstractContextManager[BinaryIO]:
    """Open a local path or a URL for binary reading with ``seek``/``read``."""
    if not is_url(path):
        return open(path, "rb")
    fs, inner = _filesystem(path)
    return cast(AbstractContextManager[BinaryIO], fs.open(inner, "rb"))


def file_size(path: str) -> int:
    """The size in bytes of a local path or a URL."""
    if not is_url(path):
        return Path(path).stat().st_size
    fs, inner = _filesystem(path)
    return int(fs.info(inner)["size"])


def file_stamp(path: str) -> str:
    """A string that changes when the file changes without its size changing, as far as one can tell cheaply.

    Local files: the modification time in nanoseconds. URLs: fsspec's ``ukey`` (a hash of the file's
    metadata: modification time, ETag or generation, depending on the file system).
    """
    if not is_url(path):
        return str(Path(path).stat().st_mtime_ns)
    fs, inner = _filesystem(path)
    return str(fs.ukey(inner))


def check_url(url: str) -> int:
    """Check that a URL names a readable file and return its size; ``ValueError`` says what is wrong."""
    try:
        fs, inner = _filesystem(url)
    except ImportError as exc:
        raise ValueError(f"{exc}") from None
    except ValueError as exc:
        raise ValueError(f"{url} is not a URL fsspec can read ({exc})") from None
    try:
        info = fs.info(inner)
    except FileNotFoundError:
        raise ValueError(f"{url} does not exist; check the URL") from None
    except Exception as exc:  # network, permissions, ... : fsspec back-ends raise many kinds
        raise ValueError(f"{url} cannot be read ({type(exc).__name__}: {exc})") from None
    if info.get("type") != "file":
        raise ValueError(f"{url} is not a file; give text files, not folders")
    return int(info["size"])


def read_range(handle: BinaryIO, start: int, end: int) -> bytes:
    """Read bytes ``[start, end)`` of an open file."""
    handle.seek(start)
    return handle.read(end - start)
