"""Reading a corpus: where it can be cut into chunks without changing the result, and decoding chunks.

A chunk boundary is *certain* when the full-text scan would be in a fresh state there, so counting the
chunks separately gives exactly the counts of the whole. These positions qualify:

* the start of a special token that no other special-token occurrence covers from the left, since the
  special-token scan (leftmost, longest first) must then start a match exactly there; and, for the patterns
  with a native scanner only (the presets and the models' patterns of ``pretokenize.patterns.scanner_name``,
  called "the presets" below), when no special token covers the position or ends at it:
* the position between ``"\\n"`` and an ASCII letter when the byte before the ``"\\n"`` is a printable
  ASCII character. Every preset pattern ends a pre-token after such a newline and starts one at the letter,
  and a single ``"\\n"`` at the end of a chunk is matched the same way as inside the text (this is why a
  whitespace run before it is excluded: ``\\s+(?!\\S)`` would take ``"  \\n"`` whole at the end of a chunk
  but not before a letter);
* the position of a space ``" "`` after any character that is not whitespace (``"the cat"``, ``"end. Then"``
  and ``"это кот"`` are cut before their spaces), so text without newlines (a corpus on one line) is cut
  into chunks as small as wanted;
* between two printable ASCII characters of different kinds: a letter before a digit or before punctuation
  other than ``'``; a digit before a letter or punctuation; punctuation before a digit (``"x1"``, ``"7a"``,
  ``"a,"``, ``"2;"``, ``":3"``). This cuts minified JSON, base64 and similar text without spaces.

Why these cuts are certain, for gpt2, cl100k and o200k, and the models' patterns, which are theirs with
other parameters (their alternatives are listed below beside the presets'). Call the position ``p``,
``c = text[p - 1]`` and ``d = text[p]``. Counting ``text[:p]`` and ``text[p:]`` separately gives the
pre-tokens of ``text`` if (a) the scan of ``text`` never matches across ``p`` and every match attempt it
makes before ``p`` ends the same way when the text stops at ``p``, and (b) the scan of ``text`` from ``p``
is the scan of ``text[p:]`` from its start.

(b) holds at every position a scan reaches: the presets look only forwards (no look-behind, ``^``, ``\\b``
or ``\\G``); their one end anchor, cl100k's ``\\s++$``, sees the same end in both (applying (a) at the
next cut handles a chunk's end).

(a) A match attempt that starts before ``p`` and reads ``d`` must first have consumed ``c``, so it is
enough that every test the presets can make right after consuming ``c`` fails on ``d``, as it fails at the
end of the text. In every cut above ``c`` is not whitespace, so only these alternatives can consume it, and
this is what each can test next:

* ``'(?:[sdmt]|ll|ve|re)`` (gpt2; cl100k with ``(?i:...)``; the models' ``(?i:'s|'t|'re|'ve|'m|'ll|'d)``):
  after ``'``, a letter; after a letter, a letter or the end of the match;
* ``\\p{L}+`` (gpt2), ``[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++`` (cl100k; Llama 3 and Qwen 2 without ``+``):
  after the optional prefix (any character but ``\\r``, ``\\n``, letters and digits) a letter; after a
  letter, a letter; Qwen 3.5's ``[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+``: a letter or a mark after either;
* o200k's two letter alternatives (Nemo's the same without the suffix): after the prefix or a letter, a
  letter or mark (``\\p{Lu}``, ``\\p{Ll}``, ``\\p{Lt}``, ``\\p{Lm}``, ``\\p{Lo}``, ``\\p{M}``) or the suffix
  ``(?i:'s|'t|'re|'ve|'m|'ll|'d)``: ``'``, and after it, letters only;
* ``\\p{N}+`` (gpt2), ``\\p{N}{1,3}`` (cl100k, o200k, Llama 3): after a digit, a digit; ``\\p{N}`` (Qwen,
  Nemo): nothing;
* ``[^\\s\\p{L}\\p{N}]+`` (gpt2), ``[^\\s\\p{L}\\p{N}]++[\\r\\n]*+`` (cl100k),
  ``[^\\s\\p{L}\\p{N}]+[\\r\\n/]*`` (o200k), ``[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*`` (Qwen 3.5): after
  punctuation, punctuation (the class excludes whitespace, letters and digits), ``\\r``, ``\\n`` or ``/``;
* the whitespace alternatives (``\\s+(?!\\S)``, ``\\s++$``, ``\\s*[\\r\\n]``, ``\\s+``, ...) never consume
  ``c``.

So after a letter only a letter, a mark or ``'`` can follow; after a digit, a digit; after punctuation,
punctuation, ``\\r``, ``\\n``, a letter or a mark; and never a space after any of them (the tests that
accept a space, ``\\s``, `` ?``, the prefix classes, ``(?!\\S)`` and ``$``, come only at the start of an
alternative or after whitespace). Each cut pairs a ``c`` with a ``d`` outside its list, so every test at
``p`` fails, as it does at the end of ``text[:p]``; the attempt runs identically (also when it backtracks)
and never passes ``p``. The match covering ``c`` therefore ends at ``p`` in both, and the scan reaches
``p`` (the presets match every character, so none is skipped).

The cuts are found on bytes. ``d`` is always ASCII, a whole character in UTF-8 at which a decoder is in its
initial state, so decoding the chunks (also with ``invalid_utf8="replace"``) gives the text's characters.
For the space cut after a non-ASCII character, "not whitespace" is checked on the bytes: the character
ends in a continuation byte and is none of the UTF-8 encodings of Unicode whitespace (U+0085, U+00A0,
U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000: what ``\\s`` matches beyond ASCII).
tests/engine/corpus/test_chunking.py checks all of this with property tests, for each preset and model
pattern.

For a custom pattern only special tokens and file ends cut a file. Where no certain boundary comes for a
while (one long word, a run of digits or of punctuation, text in a script without spaces, or a custom
pattern without special tokens), a chunk grows until one does, but by at most ``MAX_UNCUT_BYTES`` (64 MiB)
past its target size, which bounds the memory a chunk takes: beyond that, planning stops with
:class:`UncuttableTextError`, which says how to fix the corpus (newlines or a special token between
documents).

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
from typing import BinaryIO, Protocol

from ..config import InvalidUtf8Policy
from ..pretokenize.boundary import PRESET_BOUNDARIES, may_hold_preset_boundary

#: How far past its target size a chunk may grow while no certain boundary comes (see the docstring).
MAX_UNCUT_BYTES = 64 << 20
# How much of a file the boundary search reads at a time.
_WINDOW = 1 << 16


class CorpusDecodeError(ValueError):
    """A corpus file holds bytes that are not valid UTF-8 (and the policy is ``error``).

    Attributes:
        path: The file.
        offset: Byte offset of the first invalid byte in the file (in a record's value for a Parquet row).
        reason: What is wrong, e.g. ``"invalid start byte"``.
        where: The record, ``"line 12"`` or ``"row 12"``, or ``""`` for a text file.
    """

    def __init__(self, path: str | os.PathLike[str], offset: int, reason: str, where: str = "") -> None:
        self.path = str(path)
        self.offset = offset
        self.reason = reason
        self.where = where
        place = f"{self.path}, {where}" if where else self.path
        super().__init__(
            f"{place}: invalid UTF-8 at byte offset {offset} ({reason}); fix the file, or train with "
            "invalid_utf8='replace' (CLI: --invalid-utf8 replace) to read such bytes as U+FFFD"
        )

    def __reduce__(self) -> tuple[type[CorpusDecodeError], tuple[str, int, str, str]]:
        # Travels pickled from the app's training process; rebuild it from its arguments.
        return (type(self), (self.path, self.offset, self.reason, self.where))


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


class UncuttableTextError(ValueError):
    """A stretch of a file longer than the limit holds no certain chunk boundary, so it cannot be read in
    bounded memory (see the module docstring).

    Attributes:
        path: The file.
        offset: Byte offset where the uncut stretch begins.
    """

    def __init__(self, path: str, offset: int, limit: int, preset: bool) -> None:
        self.path, self.offset, self.limit, self.preset = path, offset, limit, preset
        # ``preset``: whether the cuts of a preset pattern were allowed. They are not with a custom pattern,
        # nor in a superword run, whose stage-2 chunks run across spaces and newlines.
        where = (
            "a space, a newline before a letter, a letter next to a digit or punctuation, a special token"
            if preset
            else "only at a special token, with a custom pattern or in a superword run"
        )
        amount = f"{limit >> 20:,} MiB" if limit >= 1 << 20 else f"{limit:,} bytes"
        super().__init__(
            f"{path}: the {amount} after byte offset {offset:,} hold no place where the "
            f"text can be cut without changing its pre-tokens ({where}), and a chunk may not grow past that, "
            "to bound memory; "
            + (
                "put newlines or a special token (CLI: --special-token '<|endoftext|>') between documents"
                if preset
                else "put a special token (CLI: --special-token '<|endoftext|>') between documents, or "
                "use a preset pattern (for a custom one)"
            )
        )

    def __reduce__(self) -> tuple[type[UncuttableTextError], tuple[str, int, int, bool]]:
        # Travels pickled from the app's training process; rebuild it from its arguments.
        return (type(self), (self.path, self.offset, self.limit, self.preset))


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
        >>> states = snapshot(["corpus.txt"])
    """
    return {str(p): state(str(p)) for p in paths}


def check_unchanged(
    states: Mapping[str, FileState], *, state: Callable[[str], FileState] = local_file_state
) -> None:
    """Raise :class:`CorpusChangedError` for the first file whose size or stamp is not what it was.

    Example:
        >>> check_unchanged(snapshot(["corpus.txt"]))
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


class _Seekable(Protocol):
    """What the boundary search reads: an open file, or a buffer in memory (``sources._BufferHandle``)."""

    def seek(self, pos: int, /) -> int: ...

    def read(self, size: int, /) -> bytes: ...


class _BoundaryFinder:
    """Finds the first certain chunk boundary at or after a position of one open file.

    ``size`` may grow between searches (a stream decompressed into a growing buffer): each search reads
    only the window it needs, so a caller that resumes where the last search stopped reads every byte a
    bounded number of times.
    """

    def __init__(self, handle: _Seekable, size: int, special_tokens: Sequence[str], newline_cuts: bool):
        self._handle = handle
        self.size = size
        self._specials = sorted({s.encode("utf-8") for s in special_tokens}, key=len, reverse=True)
        self._overlap = max((len(s) for s in self._specials), default=0)
        alternatives = [b"(?=" + re.escape(s) + b")" for s in self._specials]
        self._newline_cuts = newline_cuts
        if newline_cuts:
            alternatives += PRESET_BOUNDARIES  # (pretokenize.boundary; see the module docstring)
        self._candidates = re.compile(b"|".join(alternatives)) if alternatives else None

    def _may_hold(self, buf: bytes, start: int, stop: int) -> bool:
        """False when no boundary can be at a position in ``[start, stop)`` of ``buf``: no special token
        starts there, and (for the presets) the bytes around are all of one class
        (:func:`~bpe_studio.engine.pretokenize.boundary.may_hold_preset_boundary`). Without this test the
        look-behind patterns run at every byte of a stretch without boundaries (~50 ns a byte, most of a
        plan of 12 MB of Chinese or of one repeated letter)."""
        if any(buf.find(s, start, stop + len(s) - 1) != -1 for s in self._specials):
            return True
        return self._newline_cuts and may_hold_preset_boundary(memoryview(buf)[max(0, start - 1) : stop])

    def _covered(self, buf: bytes, p: int, *, allow_end: bool) -> bool:
        """True if a special-token occurrence in ``buf`` spans ``p`` (or ends there, unless allowed)."""
        for s in self._specials:
            j = buf.find(s, max(0, p - len(s)), p + len(s))
            while j != -1 and j < p:
                if j + len(s) > p or (j + len(s) == p and not allow_end):
                    return True
                j = buf.find(s, j + 1, p + len(s))
        return False

    def find(self, pos: int, *, until: int | None = None) -> tuple[int, bool] | None:
        """``(position, at_special)`` of the first certain boundary ``>= pos`` (and ``< until`` if given),
        or None if there is none before the end of the file (or ``until``)."""
        if self._candidates is None:
            return None
        end = self.size if until is None else min(self.size, until)
        while pos < end:
            # 3 bytes before pos for the look-behinds, and the length of a special token that may cover pos.
            lo = max(0, pos - self._overlap - 3)
            self._handle.seek(lo)
            buf = self._handle.read(pos - lo + _WINDOW + self._overlap + 2)
            stop = min(pos - lo + _WINDOW, end - lo)
            if not self._may_hold(buf, pos - lo, stop):
                pos = lo + stop  # one letter repeated, a digit run, text without ASCII...: nothing here
                continue
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
    max_uncut: int | None = MAX_UNCUT_BYTES,
) -> list[Chunk]:
    """Cut the files into chunks of about ``chunk_size`` bytes at certain boundaries.

    Args:
        paths: The corpus files, in order.
        chunk_size: Target chunk size in bytes; a chunk is longer when no certain boundary comes sooner.
        special_tokens: The special tokens (their starts are boundaries).
        newline_cuts: Whether the preset-pattern positions (a newline before a letter, a space after a
            character that is not whitespace, ASCII letter / digit / punctuation changes) are boundaries:
            true for the preset patterns only.
        open_file: Opens a file for binary reading with ``seek``/``read`` (default: the built-in ``open``);
            give another to plan files on other file systems, e.g. fsspec URLs.
        file_size: A file's size in bytes (default: ``os.stat``, which also refuses what is not a file).
        max_uncut: How many bytes past ``chunk_size`` a chunk may grow while no certain boundary comes
            (None: no limit).

    Raises:
        NotRegularFileError: A local path is a folder, FIFO or device (without ``file_size``).
        UncuttableTextError: A chunk would grow more than ``max_uncut`` bytes past ``chunk_size``.

    Example:
        >>> chunks = plan_chunks(["corpus.txt"], chunk_size=1 << 22, special_tokens=[], newline_cuts=True)
        >>> [c.size for c in chunks]
        [2299]
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
                target = start + chunk_size
                until = None if max_uncut is None else target + max_uncut
                found = finder.find(target, until=until) if target < size else None
                if found is None and until is not None and until < size:
                    raise UncuttableTextError(name, start, chunk_size + until - target, newline_cuts)
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
