"""Reading a corpus: where it can be cut into chunks without changing the result, and decoding chunks.

A chunk boundary is *certain* when the full-text scan would be in a fresh state there, so counting the
chunks separately gives exactly the counts of the whole. Two kinds of positions qualify:

* the start of a special token that no other special-token occurrence covers from the left, since the
  special-token scan (leftmost, longest first) must then start a match exactly there; and
* for the preset patterns, the position between ``"\\n"`` and an ASCII letter when the byte before the
  ``"\\n"`` is a printable ASCII character, and no special token covers or ends at it. Every preset pattern
  ends a pre-token after such a newline and starts one at the letter, and a single ``"\\n"`` at the end of a
  chunk is matched the same way as inside the text (this is why a whitespace run before it is excluded:
  ``\\s+(?!\\S)`` would take ``"  \\n"`` whole at the end of a chunk but not before a letter).

For a custom pattern only special tokens and file ends cut a file, so without special tokens a file is read
in one piece.

Planning sees each file's size and modification time; a file that changes before counting ends (a short
read, or a different size or time at the end) stops the run with :class:`CorpusChangedError`.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from .config import InvalidUtf8Policy

# Zero-width match before "<letter>" when preceded by "<printable ASCII>\n" (see the module docstring).
_NEWLINE_BOUNDARY = rb"(?<=[!-~]\n)(?=[A-Za-z])"
# How much of a file the boundary search reads at a time.
_WINDOW = 1 << 16


class CorpusDecodeError(ValueError):
    """A corpus file holds bytes that are not valid UTF-8 (and the policy is ``error``).

    Attributes:
        path: The file.
        offset: Byte offset of the first invalid byte in the file.
    """

    def __init__(self, path: str | os.PathLike[str], offset: int, reason: str) -> None:
        self.path = str(path)
        self.offset = offset
        self.reason = reason
        super().__init__(
            f"{self.path}: invalid UTF-8 at byte offset {offset} ({reason}); fix the file, or train with "
            "invalid_utf8='replace' (CLI: --invalid-utf8 replace) to read such bytes as U+FFFD"
        )


class CorpusChangedError(RuntimeError):
    """A corpus file changed (grew, shrank or was rewritten) between planning and the end of counting.

    The counts would mix two versions of the file, so the run stops instead.

    Attributes:
        path: The file.
        detail: What was seen, e.g. ``"size 1,000,000 → 999,000 bytes"``.
    """

    def __init__(self, path: str | os.PathLike[str], detail: str) -> None:
        self.path = str(path)
        self.detail = detail
        super().__init__(
            f"{self.path} changed while it was being read ({detail}); train again once it is complete"
        )

    def __reduce__(self) -> tuple[type[CorpusChangedError], tuple[str, str]]:
        # Travels pickled from the app's training process; rebuild it from its arguments.
        return (type(self), (self.path, self.detail))


class NotRegularFileError(ValueError):
    """A corpus path is a folder, FIFO or device: its size, which planning needs, is unknown."""


@dataclass(frozen=True, slots=True)
class FileState:
    """What planning saw of a file: its size and a stamp that changes when it is rewritten.

    Example:
        >>> FileState(1_000, "1700000000000000000").size
        1000
    """

    size: int
    stamp: str


def local_file_state(path: str) -> FileState:
    """Size and modification time (ns) of a local file, from one ``os.stat``."""
    st = os.stat(path)
    return FileState(st.st_size, str(st.st_mtime_ns))


def snapshot(
    paths: Sequence[str | os.PathLike[str]], *, state: Callable[[str], FileState] = local_file_state
) -> dict[str, FileState]:
    """The state of each file, taken before planning, for :func:`check_unchanged` after counting.

    Example:
        >>> states = snapshot(["corpus.txt"])  # doctest: +SKIP
    """
    return {str(p): state(str(p)) for p in paths}


def check_unchanged(
    states: Mapping[str, FileState], *, state: Callable[[str], FileState] = local_file_state
) -> None:
    """Raise :class:`CorpusChangedError` for the first file whose size or stamp is not what it was.

    Example:
        >>> check_unchanged(snapshot(["corpus.txt"]))  # doctest: +SKIP
    """
    for path, before in states.items():
        try:
            now = state(path)
        except FileNotFoundError:
            raise CorpusChangedError(path, "it was removed") from None
        if now.size != before.size:
            raise CorpusChangedError(path, f"size {before.size:,} → {now.size:,} bytes")
        if now.stamp != before.stamp:
            raise CorpusChangedError(path, f"rewritten: same size, {now.size:,} bytes, new modification time")


def check_read(chunk: Chunk, data: bytes) -> None:
    """Raise :class:`CorpusChangedError` if reading a chunk returned fewer bytes than planned (it shrank).

    Example:
        >>> check_read(Chunk("a.txt", 0, 4, False), b"abcd")
    """
    if len(data) != chunk.size:
        raise CorpusChangedError(
            chunk.path, f"size at least {chunk.end:,} → {chunk.start + len(data):,} bytes"
        )


@dataclass(frozen=True, slots=True)
class Chunk:
    """A byte range of one file that can be counted on its own.

    Attributes:
        path: The file.
        start: First byte.
        end: One past the last byte.
        continues_document: True when the chunk starts inside a document that began in the previous chunk.
    """

    path: str
    start: int
    end: int
    continues_document: bool

    @property
    def size(self) -> int:
        """The chunk's length in bytes."""
        return self.end - self.start


def special_token_regex(special_tokens: Sequence[str]) -> re.Pattern[str] | None:
    """A regex matching any special token, longest first so overlapping specials match whole.

    Example:
        >>> special_token_regex(["<a>", "<a><a>"]).split("x<a><a>y")
        ['x', 'y']
    """
    if not special_tokens:
        return None
    ordered = sorted(special_tokens, key=lambda s: (-len(s), s))
    return re.compile("|".join(re.escape(s) for s in ordered))


def decode(data: bytes, policy: InvalidUtf8Policy, *, path: str, offset: int) -> str:
    """Decode a chunk's bytes, raising :class:`CorpusDecodeError` with the file offset under ``error``.

    Example:
        >>> decode(b"caf\\xc3\\xa9", InvalidUtf8Policy.ERROR, path="x.txt", offset=0)
        'café'
    """
    if policy is InvalidUtf8Policy.REPLACE:
        return data.decode("utf-8", errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorpusDecodeError(path, offset + exc.start, exc.reason) from None


class _BoundaryFinder:
    """Finds the first certain chunk boundary at or after a position of one open file."""

    def __init__(self, handle: BinaryIO, size: int, special_tokens: Sequence[str], newline_cuts: bool):
        self._handle = handle
        self._size = size
        self._specials = sorted({s.encode("utf-8") for s in special_tokens}, key=len, reverse=True)
        self._overlap = max((len(s) for s in self._specials), default=0)
        alternatives = [b"(?=" + re.escape(s) + b")" for s in self._specials]
        if newline_cuts:
            alternatives.append(_NEWLINE_BOUNDARY)
        self._candidates = re.compile(b"|".join(alternatives)) if alternatives else None

    def _covered(self, buf: bytes, p: int, *, allow_end: bool) -> bool:
        """True if a special-token occurrence in ``buf`` spans ``p`` (or ends there, unless allowed)."""
        for s in self._specials:
            j = buf.find(s, max(0, p - len(s)), p + len(s))
            while j != -1 and j < p:
                if j + len(s) > p or (j + len(s) == p and not allow_end):
                    return True
                j = buf.find(s, j + 1, p + len(s))
        return False

    def find(self, pos: int) -> tuple[int, bool] | None:
        """``(position, at_special)`` of the first certain boundary ``>= pos``, or None at end of file."""
        if self._candidates is None:
            return None
        while pos < self._size:
            lo = max(0, pos - self._overlap - 2)
            self._handle.seek(lo)
            buf = self._handle.read(pos - lo + _WINDOW + self._overlap + 2)
            stop = pos - lo + _WINDOW
            for m in self._candidates.finditer(buf, pos - lo):
                p = m.start()
                if p >= stop:
                    break
                at_special = any(buf.startswith(s, p) for s in self._specials)
                # A special-token start may directly follow another special token (that is a fresh scan
                # position); a newline cut may not, as the chunk would then start a new document.
                if not self._covered(buf, p, allow_end=at_special) and lo + p > 0:
                    return lo + p, at_special
            pos = lo + stop
        return None


def plan_chunks(
    paths: Sequence[str | os.PathLike[str]],
    *,
    chunk_size: int,
    special_tokens: Sequence[str],
    newline_cuts: bool,
    open_file: Callable[[str], AbstractContextManager[BinaryIO]] | None = None,
    file_size: Callable[[str], int] | None = None,
) -> list[Chunk]:
    """Cut the files into chunks of about ``chunk_size`` bytes at certain boundaries.

    Args:
        paths: The corpus files, in order.
        chunk_size: Target chunk size in bytes; a chunk is longer when no certain boundary comes sooner.
        special_tokens: The special tokens (their starts are boundaries).
        newline_cuts: Whether newline-before-letter positions are boundaries (true for the preset patterns).
        open_file: Opens a file for binary reading with ``seek``/``read`` (default: the built-in ``open``);
            give another to plan files on other file systems, e.g. fsspec URLs.
        file_size: A file's size in bytes (default: ``os.stat``, which also refuses what is not a file).

    Raises:
        NotRegularFileError: A local path is a folder, FIFO or device (without ``file_size``).

    Example:
        >>> [c.size for c in plan_chunks(["a.txt"], chunk_size=1 << 22, special_tokens=[], newline_cuts=True)]
        ... # doctest: +SKIP
        [133027]
    """
    chunks: list[Chunk] = []
    for path in paths:
        name = str(path)
        if file_size is None:
            st = Path(path).stat()
            if not stat.S_ISREG(st.st_mode):
                raise NotRegularFileError(
                    f"{name} is not a regular file (a folder, pipe or device); training reads files whose "
                    "size is known: save the text to a file first"
                )
            size = st.st_size
        else:
            size = file_size(name)
        if size == 0:
            continue
        start, continues = 0, False
        with open(path, "rb") if open_file is None else open_file(name) as handle:
            finder = _BoundaryFinder(handle, size, special_tokens, newline_cuts)
            while start < size:
                found = finder.find(start + chunk_size) if start + chunk_size < size else None
                end, at_special = found if found is not None else (size, True)
                chunks.append(Chunk(name, start, end, continues))
                start, continues = end, not at_special
    return chunks


def read_chunk(chunk: Chunk) -> bytes:
    """Read a chunk's bytes from its file; :class:`CorpusChangedError` if the file no longer holds them."""
    with open(chunk.path, "rb") as handle:
        handle.seek(chunk.start)
        data = handle.read(chunk.size)
    check_read(chunk, data)
    return data
