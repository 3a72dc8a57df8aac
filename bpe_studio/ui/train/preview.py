"""Corpus preview: the start of the first document, and how many special tokens the corpus holds.

The start is read at once (a few kilobytes). Counting special tokens reads the whole corpus, so
:class:`CorpusScanner` does it a block at a time from a zero-delay ``QTimer`` on the GUI thread: each step
takes a few milliseconds, a new request abandons the old one, and no thread is involved.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from ...engine.corpus.sources import head_documents, is_plain_text
from ...engine.humanize import error_message

#: How much of the first file is read for the start of the first document.
HEAD_BYTES = 16 * 1024
#: Characters of the first document shown.
HEAD_CHARS = 600
#: Bytes read per scanning step.
BLOCK_BYTES = 4 * 1024 * 1024
#: The corpus picker's file filter: text, JSON Lines, Parquet and compressed files.
CORPUS_FILTER = (
    "Corpus files (*.txt *.text *.md *.csv *.jsonl *.ndjson *.parquet *.gz *.bz2 *.xz *.zst);;All files (*)"
)


@dataclass
class CorpusPreview:
    """What the preview shows.

    Attributes:
        files: The corpus files.
        total_bytes: Their size.
        head: The start of the first document (at most :data:`HEAD_CHARS` characters).
        head_truncated: Whether the first document goes on after ``head``.
        head_problem: Why the head could not be read (e.g. not UTF-8), or empty.
        special_tokens: Occurrences of special tokens, or None while not counted yet.
        scanned_bytes: Bytes counted so far.
    """

    files: list[Path] = field(default_factory=list)
    total_bytes: int = 0
    head: str = ""
    head_truncated: bool = False
    head_problem: str = ""
    special_tokens: int | None = None
    scanned_bytes: int = 0


def _special_regex(special_tokens: Sequence[str]) -> re.Pattern[bytes] | None:
    tokens = sorted({t.encode("utf-8") for t in special_tokens if t}, key=lambda s: (-len(s), s))
    return re.compile(b"|".join(re.escape(t) for t in tokens)) if tokens else None


def read_head(
    paths: Sequence[Path], special_tokens: Sequence[str], *, text_field: str = "text"
) -> tuple[str, bool, str]:
    """Return the start of the first non-empty document, whether it goes on, and a problem (or "").

    The text of JSON Lines and Parquet records is their ``text_field``.

    Example:
        >>> read_head([Path("corpus.txt")], ["<|endoftext|>"])
        ('The cat sat on the mat. The cat saw the hat, and the hat was on the mat.', False, '')
    """
    specials = [t for t in special_tokens if t]
    for path in paths:
        if not is_plain_text(path):  # JSON Lines, Parquet, compressed: the first record's text
            try:
                records = head_documents(path, text_field=text_field, count=20)
            except (OSError, ValueError, EOFError) as exc:
                return "", False, f"{path.name}: {error_message(exc) if isinstance(exc, OSError) else exc}"
            for record in records:
                if record.strip():
                    return record[:HEAD_CHARS], len(record) > HEAD_CHARS, ""
            continue
        try:
            with open(path, "rb") as handle:
                data = handle.read(HEAD_BYTES)
        except OSError as exc:
            return "", False, error_message(exc, path=path)
        if not data:
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            if exc.start < len(data) - 3:  # not merely a character cut at the end of the read
                return "", False, f"{path.name}: not valid UTF-8 at byte {exc.start}"
            text = data[: exc.start].decode("utf-8")
        # Skip empty documents (e.g. a file that starts with a special token).
        ordered = sorted(specials, key=len, reverse=True)
        documents = re.split("|".join(re.escape(t) for t in ordered), text) if ordered else [text]
        for i, doc in enumerate(documents):
            if doc.strip():
                more = len(doc) > HEAD_CHARS or (i == len(documents) - 1 and len(data) == HEAD_BYTES)
                return doc[:HEAD_CHARS], more, ""
    return "", False, ""


class SpecialTokenCounter:
    """Counts special-token occurrences (leftmost, longest first, as the engine splits) over blocks.

    Example:
        >>> c = SpecialTokenCounter(["<|endoftext|>"])
        >>> c.feed(b"a<|endo"); c.feed(b"ftext|>b"); c.finish()
        1
    """

    def __init__(self, special_tokens: Sequence[str]) -> None:
        self._regex = _special_regex(special_tokens)
        self._keep = max((len(t.encode("utf-8")) for t in special_tokens if t), default=1) - 1
        self._carry = b""
        self.count = 0

    def feed(self, block: bytes, *, final: bool = False) -> None:
        """Count the occurrences in a block (the next bytes of the same stream of files)."""
        if self._regex is None:
            return
        data = self._carry + block if self._carry else block
        # A match starting in the last `keep` bytes may go on into the next block: leave it for then.
        limit = len(data) if final else len(data) - self._keep
        end = 0
        for match in self._regex.finditer(data):
            if match.start() >= limit:
                break
            self.count += 1
            end = match.end()
        self._carry = b"" if final else data[max(end, limit) :]

    def end_file(self) -> None:
        """A file ended: a special token never spans two files."""
        self.feed(b"", final=True)

    def finish(self) -> int:
        """End the stream and return the count."""
        self.end_file()
        return self.count


class CorpusScanner(QObject):
    """Builds a :class:`CorpusPreview` step by step on the GUI thread.

    Signals:
        updated(CorpusPreview): The preview changed (the head is known, or more bytes were counted).
        done(CorpusPreview): The special tokens are counted.
    """

    updated = Signal(object)
    done = Signal(object)

    def __init__(self, parent: QObject | None = None, *, block_bytes: int = BLOCK_BYTES) -> None:
        super().__init__(parent)
        self.block_bytes = block_bytes
        self.preview = CorpusPreview()
        self._timer = QTimer(self)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._on_timer_timeout)
        self._queue: list[Path] = []
        self._handle: BinaryIO | None = None
        self._counter = SpecialTokenCounter(())

    def is_scanning(self) -> bool:
        """Whether special tokens are still being counted."""
        return self._timer.isActive() or bool(self._queue) or self._handle is not None

    def start(
        self, paths: Sequence[Path], special_tokens: Sequence[str], *, text_field: str = "text"
    ) -> None:
        """Start over for new files, special tokens or text field (abandoning a scan in progress)."""
        self.stop()
        files = [Path(p) for p in paths]
        sizes = []
        for path in files:
            try:
                sizes.append(path.stat().st_size)
            except OSError:
                sizes.append(0)
        head, truncated, problem = read_head(files, special_tokens, text_field=text_field)
        self.preview = CorpusPreview(files, sum(sizes), head, truncated, problem)
        self._counter = SpecialTokenCounter(special_tokens)
        if not files:
            self.preview.special_tokens = 0
            self.updated.emit(self.preview)
            self.done.emit(self.preview)
            return
        # Special tokens are counted in plain text files only (the bytes of the others are compressed or
        # hold records).
        self._queue = [p for p in files if is_plain_text(p)]
        self.updated.emit(self.preview)
        self._timer.start()

    def stop(self) -> None:
        """Abandon the scan in progress, if any."""
        self._timer.stop()
        self._queue = []
        self._close()

    def pause(self) -> None:
        """Stop scanning for now (e.g. while training); :meth:`resume` goes on where it stopped."""
        self._timer.stop()

    def resume(self) -> None:
        """Go on after :meth:`pause`."""
        if self._queue or self._handle is not None:
            self._timer.start()

    def _close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    @Slot()
    def _on_timer_timeout(self) -> None:
        try:
            if self._handle is None:
                path = self._queue.pop(0)
                self._handle = open(path, "rb")  # noqa: SIM115 - kept open across timer steps
            block = self._handle.read(self.block_bytes)
        except (OSError, IndexError):
            block = b""
            self._queue = []
        if block:
            self._counter.feed(block)
            self.preview.scanned_bytes += len(block)
        else:
            self._close()
            self._counter.end_file()
            if not self._queue:
                self._timer.stop()
                self.preview.special_tokens = self._counter.count
                self.updated.emit(self.preview)
                self.done.emit(self.preview)
                return
        self.updated.emit(self.preview)


def total_size(paths: Sequence[str | os.PathLike[str]]) -> int:
    """The summed size of files that exist."""
    size = 0
    for path in paths:
        with contextlib.suppress(OSError):
            size += os.stat(path).st_size
    return size


__all__ = ["CorpusPreview", "CorpusScanner", "SpecialTokenCounter", "read_head", "total_size"]
