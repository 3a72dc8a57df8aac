"""Corpus formats beyond plain text: JSON Lines, Parquet, and compressed files, read as documents.

A file's format is told by its suffixes (:func:`source_kind`): ``.jsonl``/``.ndjson`` (one JSON object per
line, the text in a field), ``.parquet`` (the text in a column), anything else is UTF-8 text; a last
suffix ``.gz``, ``.bz2``, ``.xz`` or ``.zst`` says it is compressed. Each JSON record and Parquet row is one
document, exactly as if the texts were written to a text file joined by a special token (special tokens
inside a text still split it).

Counting is cut into *tasks* that a worker process counts on its own, as the plain-text chunks of
:mod:`~bpe_studio.engine.corpus.plan` are:

* an uncompressed JSON Lines file is cut into byte ranges ending at line ends (:class:`LineRange`), which
  the workers read themselves;
* a Parquet file is cut into its row groups (:class:`RowGroup`);
* a compressed file is decompressed once, here, into :class:`Block` s of at most about
  ``chunk_size`` bytes (JSON Lines cut at line ends, text at a certain boundary as in
  :func:`~bpe_studio.engine.corpus.plan.plan_chunks`) handed to the workers in turn;
* documents given in memory (``train_from_iterator``) go in :class:`Documents` batches.

Memory stays bounded: a block is never larger than ``chunk_size`` plus the longest uncut stretch
(``MAX_UNCUT_BYTES`` for text; :data:`MAX_RECORD_BYTES` for one JSON line), and decompression reads a fixed
amount at a time, so a small file that inflates enormously (a "zip bomb") costs time, not memory.

Example:
    >>> source_kind("shard-0001.jsonl.zst")
    SourceKind(format='jsonl', compression='zstd')
"""

from __future__ import annotations

import codecs
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from ..config import InvalidUtf8Policy
from .plan import MAX_UNCUT_BYTES, Chunk, CorpusDecodeError, UncuttableTextError, _BoundaryFinder, decode

if TYPE_CHECKING:
    # Imported where used: a run on plain text needs none of them (3 ms of every fresh process, issue 22).
    import bz2
    import gzip
    import lzma

#: Compression suffixes and the codec each names.
COMPRESSIONS = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz", ".zst": "zstd"}
#: Format suffixes (after any compression suffix); every other file is read as UTF-8 text.
FORMAT_SUFFIXES = {".txt": "text", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet"}
#: The suffixes a folder is searched for (every format, plain or compressed).
CORPUS_SUFFIXES = tuple(
    sorted(list(FORMAT_SUFFIXES) + [f + c for f in FORMAT_SUFFIXES if f != ".parquet" for c in COMPRESSIONS])
)
#: The longest JSON line read (a line longer than this is an error): bounds one record's memory.
MAX_RECORD_BYTES = 64 << 20
#: How much decompressed data is read at a time.
_READ = 1 << 20
#: How much compressed zstd data is decompressed at a time (see _ZstdStream).
_ZSTD_FEED = 1 << 10
#: The largest zstd window accepted (128 MiB, the library's default limit): a frame asking for more
#: would make the decompressor allocate it, so it is refused as corrupt.
_ZSTD_MAX_WINDOW = 1 << 27


class MissingPackageError(ValueError):
    """An optional package that a corpus format needs is not installed."""


class BadRecordError(ValueError):
    """A JSON line or Parquet row holds no usable text.

    Attributes:
        path: The file.
        where: ``"line 12"`` or ``"row 12"`` (1-based).
        reason: What is wrong, e.g. ``'no field "text"'``.
    """

    def __init__(self, path: str, where: str, reason: str, fix: str) -> None:
        self.path, self.where, self.reason, self.fix = path, where, reason, fix
        super().__init__(
            f"{path}, {where}: {reason}; {fix}, or skip such records with skip_bad_records=True "
            "(CLI: --skip-bad-records)"
        )

    def __reduce__(self) -> tuple[type[BadRecordError], tuple[str, str, str, str]]:
        return (type(self), (self.path, self.where, self.reason, self.fix))


class CorruptStreamError(ValueError):
    """A compressed file cannot be decompressed (truncated or damaged)."""

    def __init__(self, path: str, offset: int, detail: str) -> None:
        self.path, self.offset, self.detail = path, offset, detail
        super().__init__(
            f"{path}: the compressed data is damaged or truncated after {offset:,} decompressed bytes "
            f"({detail}); download or compress the file again"
        )

    def __reduce__(self) -> tuple[type[CorruptStreamError], tuple[str, int, str]]:
        return (type(self), (self.path, self.offset, self.detail))


@dataclass(frozen=True, slots=True)
class SourceKind:
    """A corpus file's format (``text``, ``jsonl``, ``parquet``) and compression (None or a codec)."""

    format: str
    compression: str | None


def source_kind(path: str | os.PathLike[str]) -> SourceKind:
    """The format and compression of a corpus file, from its suffixes (case-insensitive).

    Example:
        >>> source_kind("corpus.txt.gz"), source_kind("data.en")
        (SourceKind(format='text', compression='gzip'), SourceKind(format='text', compression=None))
    """
    suffixes = [s.lower() for s in Path(path).suffixes]
    compression = COMPRESSIONS.get(suffixes[-1]) if suffixes else None
    if compression is not None:
        suffixes.pop()
    fmt = FORMAT_SUFFIXES.get(suffixes[-1], "text") if suffixes else "text"
    return SourceKind(fmt, compression)


def is_plain_text(path: str | os.PathLike[str]) -> bool:
    """True for an uncompressed text file, which :func:`~bpe_studio.engine.corpus.plan.plan_chunks` reads."""
    return source_kind(path) == SourceKind("text", None)


def expand_inputs(names: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Expand folders (every corpus file under them, by suffix, sorted) and glob patterns into files.

    A name that exists is kept as it is (a file of any suffix is read as text); a folder gives its files
    with a :data:`CORPUS_SUFFIXES` suffix, recursively, in sorted order; a name with ``*``, ``?`` or ``[``
    that does not exist is a glob (``**`` crosses folders). Nothing matching is an error.

    Example:
        >>> expand_inputs(["corpus.txt", "*.jsonl"])
        [PosixPath('corpus.txt'), PosixPath('corpus.jsonl')]

        A folder (``shards/`` holding ``a.parquet`` and ``b.parquet``) and a glob that crosses folders::

            expand_inputs(["shards/", "extra/**/*.jsonl.gz"])
            # [PosixPath('shards/a.parquet'), PosixPath('shards/b.parquet'), PosixPath('extra/a/x.jsonl.gz')]
    """
    out: list[Path] = []
    for name in names:
        path = Path(name)
        if path.is_dir():
            found = sorted(
                p for p in path.rglob("*") if p.is_file() and p.name.lower().endswith(CORPUS_SUFFIXES)
            )
            if not found:
                raise ValueError(
                    f"inputs: the folder {path} holds no corpus file ({', '.join(CORPUS_SUFFIXES)}); "
                    "name the files instead"
                )
            out += found
        elif not path.exists() and any(c in str(name) for c in "*?["):
            anchor = Path(path.anchor) if path.is_absolute() else Path()
            pattern = str(path.relative_to(anchor)) if path.is_absolute() else str(name)
            found = sorted(p for p in anchor.glob(pattern) if p.is_file())
            if not found:
                raise ValueError(f"inputs: no file matches {name}; check the pattern")
            out += found
        else:
            out.append(path)
    return out


def missing_package(kind: SourceKind) -> str | None:
    """Why files of this kind cannot be read here (an optional package is missing), or None.

    Example:
        >>> missing_package(SourceKind("text", "gzip")) is None
        True
    """
    needs = []
    if kind.format == "parquet":
        needs.append(("pyarrow", "parquet", "Parquet files"))
    if kind.compression == "zstd":
        needs.append(("zstandard", "zstd", ".zst files"))
    for module, extra, what in needs:
        try:
            __import__(module)
        except ImportError:
            return (
                f'reading {what} needs {module}: pip install "bpe-studio[{extra}]" (or: pip install {module})'
            )
    return None


def check_source(path: str | os.PathLike[str]) -> None:
    """Raise ``ValueError`` (with the fix) if this file's format cannot be read here."""
    kind = source_kind(path)
    if kind.format == "parquet" and kind.compression is not None:
        raise ValueError(
            f"inputs: {path} is a compressed Parquet file; Parquet compresses inside the file and is read "
            "by row groups, which needs the file itself: decompress it first"
        )
    problem = missing_package(kind)
    if problem is not None:
        raise MissingPackageError(f"inputs: {path}: {problem}")


def open_decompressed(raw: BinaryIO, compression: str) -> gzip.GzipFile | bz2.BZ2File | lzma.LZMAFile:
    """The decompressed stream of a file opened for binary reading (gzip, bz2 or xz)."""
    import bz2
    import gzip
    import lzma

    if compression == "gzip":
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if compression == "bz2":
        return bz2.BZ2File(raw, "rb")
    return lzma.LZMAFile(raw, "rb")


class _ZstdStream:
    """Decompress a zstd file frame by frame, noticing a last frame that ends early.

    zstandard's ``stream_reader`` returns the data it has and then ``b""`` when a file is cut short, which
    would count a truncated download as a shorter corpus; a ``decompressobj`` says whether its frame
    ended. It is fed ``_ZSTD_FEED`` bytes at a time: zstd inflates at most a few ten thousand times, so one
    piece of output stays within tens of MiB whatever the file.
    """

    def __init__(self, raw: BinaryIO) -> None:
        import zstandard  # optional: checked by check_source before a run

        self._raw = raw
        self._dctx = zstandard.ZstdDecompressor(max_window_size=_ZSTD_MAX_WINDOW)

    def pieces(self) -> Iterator[bytes]:
        outs: list[bytes] = []
        try:
            yield from self._pieces(outs)
        except Exception:  # not GeneratorExit: a closed generator may not yield
            if outs:  # what was decompressed before the damage still counts (the error's offset says so)
                yield b"".join(outs)
            raise

    def _pieces(self, outs: list[bytes]) -> Iterator[bytes]:
        dobj = self._dctx.decompressobj()
        started = False
        # Small outputs are gathered into pieces of about _READ bytes: a reader does some work per piece,
        # which would dominate at a few hundred bytes a piece (data that does not compress).
        held = 0
        while piece := self._raw.read(_ZSTD_FEED):
            while piece:
                out = dobj.decompress(piece)
                started = True
                if out:
                    outs.append(out)
                    held += len(out)
                    if held >= _READ:
                        joined = b"".join(outs)
                        outs.clear()
                        held = 0
                        yield joined
                if not dobj.eof:
                    break
                # A frame ended; what follows it starts the next one.
                piece, dobj, started = dobj.unused_data, self._dctx.decompressobj(), False
        if outs:
            joined = b"".join(outs)
            outs.clear()
            yield joined
        if started:
            raise EOFError("the last zstd frame ends early")


def _corrupt_errors() -> tuple[type[BaseException], ...]:
    import lzma
    import zlib

    errors: list[type[BaseException]] = [EOFError, OSError, lzma.LZMAError, zlib.error]
    try:
        import zstandard

        errors.append(zstandard.ZstdError)
    except ImportError:
        pass
    return tuple(errors)


def read_decompressed(path: str, compression: str) -> Iterator[tuple[bytes, int]]:
    """Yield the decompressed data of a file in pieces of at most 1 MiB, each with the number of
    compressed bytes read meanwhile.

    Raises:
        CorruptStreamError: The data is damaged or ends early.
    """
    errors = _corrupt_errors()
    with open(path, "rb") as raw:
        if compression == "zstd":
            pieces = _ZstdStream(raw).pieces()
        else:
            stream = open_decompressed(raw, compression)
            pieces = iter(lambda: stream.read(_READ), b"")
        done, consumed = 0, 0
        while True:
            try:
                data = next(pieces, b"")
            except errors as exc:
                if isinstance(exc, FileNotFoundError | PermissionError):
                    raise
                raise CorruptStreamError(path, done, str(exc) or type(exc).__name__) from None
            position = raw.tell()
            if not data:
                return
            done += len(data)
            yield data, position - consumed
            consumed = position


# ---- tasks --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LineRange:
    """Lines ``[start, end)`` (byte offsets at line starts) of an uncompressed JSON Lines file."""

    path: str
    start: int
    end: int

    @property
    def size(self) -> int:
        """Bytes of the file this task covers (for progress)."""
        return self.end - self.start


@dataclass(frozen=True, slots=True)
class RowGroup:
    """One row group of a Parquet file; ``first_row`` is the 0-based index of its first row in the file."""

    path: str
    index: int
    first_row: int
    size: int


@dataclass(frozen=True, slots=True)
class Block:
    """A piece of a decompressed file: JSON lines (cut at line ends) or text (cut at a certain boundary).

    Attributes:
        path: The file.
        format: ``"jsonl"`` or ``"text"``.
        offset: Decompressed byte offset of ``data`` in the file (for error messages).
        line: 1-based number of its first line (JSON Lines).
        data: The bytes.
        continues_document: Text only: it starts inside a document begun in the previous block.
        size: Compressed bytes read for it (for progress).
    """

    path: str
    format: str
    offset: int
    line: int
    data: bytes
    continues_document: bool
    size: int


@dataclass(frozen=True, slots=True)
class Documents:
    """A batch of documents given in memory; ``size`` is their length in UTF-8 bytes (for progress)."""

    texts: list[str]
    size: int


Task = Chunk | LineRange | RowGroup | Block | Documents
"""One piece of counting work: a plain-text chunk, or a piece of another format."""


# ---- planning -----------------------------------------------------------------------------------------


def plan_line_ranges(path: str, *, chunk_size: int) -> list[LineRange]:
    """Cut an uncompressed JSON Lines file into ranges of about ``chunk_size`` bytes ending at line ends.

    Raises:
        BadRecordError: A line is longer than :data:`MAX_RECORD_BYTES` (a range holding it could not be
            read in bounded memory).

    Example:
        >>> plan_line_ranges("corpus.jsonl", chunk_size=1 << 22)
        [LineRange(path='corpus.jsonl', start=0, end=305)]
    """
    size = os.path.getsize(path)
    ranges: list[LineRange] = []
    start = 0
    with open(path, "rb") as handle:
        while start < size:
            pos = start + chunk_size
            end = size
            while pos < size:
                handle.seek(pos)
                window = handle.read(1 << 16)
                newline = window.find(b"\n")
                if newline != -1:
                    end = pos + newline + 1
                    break
                pos += len(window)
                if pos - (start + chunk_size) > MAX_RECORD_BYTES:
                    handle.seek(0)
                    before = handle.read(start + chunk_size).count(b"\n")  # an error only
                    raise BadRecordError(
                        path,
                        f"line {before + 1:,}",
                        f"the line is longer than {MAX_RECORD_BYTES >> 20} MiB",
                        "split the record",
                    )
            ranges.append(LineRange(path, start, end))
            start = end
    return ranges


def plan_row_groups(path: str) -> list[RowGroup]:
    """One task per row group of a Parquet file (their sizes share the file's size, for progress)."""
    size = os.path.getsize(path)
    meta = open_parquet(path).metadata
    total = max(1, meta.num_rows)
    groups: list[RowGroup] = []
    first = 0
    for i in range(meta.num_row_groups):
        rows = meta.row_group(i).num_rows
        groups.append(RowGroup(path, i, first, size * (first + rows) // total - size * first // total))
        first += rows
    return groups


def plan_blocks(
    path: str,
    fmt: str,
    compression: str,
    *,
    chunk_size: int,
    special_tokens: Sequence[str],
    newline_cuts: bool,
) -> Iterator[Block]:
    """Decompress a file once, yielding blocks of about ``chunk_size`` bytes that can be counted alone.

    Raises:
        CorruptStreamError: The compressed data is damaged or truncated.
        UncuttableTextError: Text with no certain boundary for ``MAX_UNCUT_BYTES`` past ``chunk_size``.
        BadRecordError: A JSON line longer than :data:`MAX_RECORD_BYTES` (raised whatever the policy: its
            end cannot be found within bounded memory).
    """
    # One growing buffer, appended to in place; blocks are cut from it by index and the consumed front is
    # dropped once per piece. Each search resumes where the last one stopped (``searched``), so every
    # decompressed byte is scanned a bounded number of times however long a stretch without a cut place
    # is, and the limit on such a stretch is checked as the bytes arrive.
    buf = bytearray()
    start = 0  # where the next block begins in buf
    searched = 0  # [start + chunk_size, searched) of buf holds no cut place (no line end, for JSON Lines)
    line_start = -1  # JSON Lines: where the unterminated line at the end of buf begins (-1: not known)
    offset, line, continues, pending = 0, 1, False, 0
    finder = _BoundaryFinder(_BufferHandle(buf), 0, special_tokens, newline_cuts)
    # Leave the longest special token and a few bytes after a text candidate unread, so that the finder
    # sees what follows it as it would in the whole text.
    margin = max((len(s.encode()) for s in special_tokens), default=0) + 8
    for data, consumed in read_decompressed(path, compression):
        buf += data
        pending += consumed
        finder.size = len(buf)
        while len(buf) - start >= chunk_size:
            target = start + chunk_size
            if fmt == "jsonl":
                newline = buf.find(b"\n", max(target - 1, searched))
                if newline == -1:
                    if line_start < 0:  # no line end in [target - 1, len(buf)): the line began before
                        line_start = max(start, buf.rfind(b"\n", start, target - 1) + 1)
                    searched = len(buf)
                    if len(buf) - line_start > MAX_RECORD_BYTES:
                        lines_before = buf.count(b"\n", start, line_start)
                        raise BadRecordError(
                            path,
                            f"line {line + lines_before:,}",
                            f"the line is longer than {MAX_RECORD_BYTES >> 20} MiB",
                            "split the record",
                        )
                    break
                cut, at_special = newline + 1, True
                line_start = -1
            else:
                until = len(buf) - margin
                resume = max(target, searched)
                found = finder.find(resume, until=until) if until > resume else None
                if found is None:
                    searched = max(resume, until)
                    if len(buf) - start > chunk_size + MAX_UNCUT_BYTES + margin:
                        raise UncuttableTextError(path, offset, chunk_size + MAX_UNCUT_BYTES, newline_cuts)
                    break
                cut, at_special = found
            piece = bytes(buf[start:cut])
            start = cut
            yield Block(path, fmt, offset, line, piece, continues, pending)
            pending = 0
            offset += len(piece)
            if fmt == "jsonl":
                line += piece.count(b"\n")
            continues = not at_special
        if start:
            del buf[:start]
            searched = max(0, searched - start)
            line_start = line_start - start if line_start >= 0 else -1
            start = 0
            finder.size = len(buf)
    if buf or pending:
        yield Block(path, fmt, offset, line, bytes(buf), continues, pending)


class _BufferHandle:
    """``seek`` and ``read`` over a growing ``bytearray``, for :class:`_BoundaryFinder` (a read copies only
    the window asked for, where ``io.BytesIO`` would copy the whole buffer)."""

    def __init__(self, buf: bytearray) -> None:
        self._buf = buf
        self._pos = 0

    def seek(self, pos: int) -> int:
        self._pos = pos
        return pos

    def read(self, size: int) -> bytes:
        # A memoryview only while copying: one held would stop the buffer from growing.
        with memoryview(self._buf) as view:
            data = view[self._pos : self._pos + size].tobytes()
        self._pos += len(data)
        return data


def plan_sources(
    paths: Sequence[str | os.PathLike[str]],
    *,
    chunk_size: int,
    special_tokens: Sequence[str],
    newline_cuts: bool,
    plan_text: Callable[[list[str]], Sequence[Chunk]],
) -> tuple[Iterator[Task], int]:
    """All counting tasks of the files, in file order, and how many are known in advance.

    Plain text files go through ``plan_text`` (the chunks of
    :func:`~bpe_studio.engine.corpus.plan.plan_chunks`);
    compressed files are decompressed lazily, as the tasks are taken.
    """
    known: list[Sequence[Task] | Callable[[], Iterator[Block]]] = []
    count = 0
    for p in paths:
        name = str(p)
        kind = source_kind(name)
        if kind.compression is not None:
            known.append(
                lambda name=name, kind=kind: plan_blocks(  # type: ignore[misc]
                    name,
                    kind.format,
                    kind.compression,
                    chunk_size=chunk_size,
                    special_tokens=special_tokens,
                    newline_cuts=newline_cuts,
                )
            )
            count += max(1, os.path.getsize(name) // max(1, chunk_size // 4))
            continue
        if kind.format == "jsonl":
            tasks: Sequence[Task] = plan_line_ranges(name, chunk_size=chunk_size)
        elif kind.format == "parquet":
            tasks = plan_row_groups(name)
        else:
            tasks = plan_text([name])
        known.append(tasks)
        count += len(tasks)

    def tasks_in_order() -> Iterator[Task]:
        for item in known:
            yield from item() if callable(item) else item

    return tasks_in_order(), count


# ---- reading records ----------------------------------------------------------------------------------


def _field(record: object, field: str) -> object:
    """The value at ``field`` in a JSON record: the key itself, or a dotted path through objects."""
    if not isinstance(record, dict):
        raise LookupError(f"the line is a JSON {type(record).__name__}, not an object")
    if field in record:
        return record[field]
    value: object = record
    for part in field.split("."):
        if not isinstance(value, dict) or part not in value:
            raise LookupError(f'no field "{field}"')
        value = value[part]
    return value


#: A lone surrogate (a ``"\\ud800"`` escape without its pair): JSON can spell it, UTF-8 cannot hold it.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(text: str) -> int:
    """The index of the first lone surrogate in ``text``, or -1 (a valid str for UTF-8 has none).

    Example:
        >>> lone_surrogate("ok"), lone_surrogate("a" + chr(0xD800) + "b")
        (-1, 1)
    """
    found = _LONE_SURROGATE.search(text)
    return -1 if found is None else found.start()


def replace_lone_surrogates(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (as ``invalid_utf8="replace"`` reads a byte).

    Example:
        >>> replace_lone_surrogates("a" + chr(0xD800) + "b")
        'a\ufffdb'
    """
    return _LONE_SURROGATE.sub("\ufffd", text)


def _json_failure(exc: ValueError | RecursionError) -> str:
    """Why ``json.loads`` refused a line, in a few words."""
    import json

    if isinstance(exc, json.JSONDecodeError):
        return f"not JSON ({exc.msg} at column {exc.colno})"
    if isinstance(exc, RecursionError):
        return "JSON nested too deeply to read"
    # Python refuses to convert an integer of more than sys.get_int_max_str_digits() digits.
    return f"a JSON number longer than {sys.get_int_max_str_digits():,} digits"


class RecordReader:
    """Turns JSON lines and Parquet row groups into document texts, checking each record.

    The one place where a record becomes a document, for every command (``train``, ``eval``,
    ``encode-corpus``) and the app's preview, so the rules cannot drift: a record that cannot be read (not
    JSON, nested too deeply, a number too long, no text field, not a string, null, a damaged Parquet row
    group) is a :class:`BadRecordError` naming the file and the line or row, or is skipped and counted with
    ``skip_bad``; invalid UTF-8, and a lone surrogate escape (``"\\ud800"``), follow ``policy`` as an
    invalid byte of a text file does (``error``: :class:`~bpe_studio.engine.corpus.plan.CorpusDecodeError`
    naming the line or row; ``replace``: U+FFFD). A UTF-8 byte order mark before a file's first line is
    passed over.

    Example:
        >>> reader = RecordReader(text_field="meta.body", policy=InvalidUtf8Policy.ERROR, skip_bad=False)
        >>> list(reader.json_lines(b'{"meta": {"body": "hi"}}\\n', path="a.jsonl", offset=0, line=1))
        ['hi']
    """

    def __init__(self, *, text_field: str, policy: InvalidUtf8Policy, skip_bad: bool) -> None:
        self.text_field = text_field
        self.policy = policy
        self.skip_bad = skip_bad
        self.bad_records = 0

    def _bad(self, path: str, where: Callable[[], str], reason: str, fix: str) -> None:
        if not self.skip_bad:
            raise BadRecordError(path, where(), reason, fix)
        self.bad_records += 1

    def _valid_text(self, value: str, *, path: str, where: Callable[[], str]) -> str:
        """``value`` with any lone surrogate handled by the policy (U+FFFD, or an error)."""
        at = lone_surrogate(value)
        if at < 0:
            return value
        if self.policy is InvalidUtf8Policy.REPLACE:
            return replace_lone_surrogates(value)
        offset = len(value[:at].encode("utf-8"))
        raise CorpusDecodeError(path, offset, f"a lone surrogate \\u{ord(value[at]):04x}", where())

    def json_lines(self, data: bytes, *, path: str, offset: int, line: int | None) -> Iterator[str]:
        """The texts of the JSON lines in ``data`` (blank lines are skipped).

        ``line`` is the number of the first line, or None when unknown (a byte range of a file: it is then
        counted from the file, only if an error needs it).
        """
        import json  # here: a run on plain text never needs it

        field = self.text_field
        position = 0
        for index, raw in enumerate(data.split(b"\n")):
            here = position
            position += len(raw) + 1
            if offset + here == 0 and raw.startswith(codecs.BOM_UTF8):  # Windows tools write one
                raw, here = raw[len(codecs.BOM_UTF8) :], len(codecs.BOM_UTF8)
            if not raw or raw.isspace():  # blank (isspace does not copy a long line, as strip would)
                continue

            def where(index: int = index, here: int = here) -> str:
                if line is not None:
                    return f"line {line + index:,}"
                with open(path, "rb") as handle:  # an error only: count the lines before it
                    before = handle.read(offset + here).count(b"\n")
                return f"line {before + 1:,}"

            try:
                text = decode(raw, self.policy, path=path, offset=offset + here)
            except CorpusDecodeError as exc:
                raise CorpusDecodeError(path, exc.offset, exc.reason, where()) from None
            try:
                record = json.loads(text)
            except (ValueError, RecursionError) as exc:
                self._bad(path, where, _json_failure(exc), "fix the line")
                continue
            try:
                value = _field(record, field)
            except LookupError as exc:
                fix = f"give the field that holds the text with text_field (CLI: --text-field; now {field!r})"
                self._bad(path, where, str(exc), fix)
                continue
            if not isinstance(value, str):
                self._bad(
                    path,
                    where,
                    f'the field "{field}" is {type(value).__name__}, not a string',
                    "fix the record",
                )
                continue
            # A surrogate can only come from a \\u escape: look for one only then.
            yield self._valid_text(value, path=path, where=where) if b"\\u" in raw else value

    def row_group(self, task: RowGroup) -> Iterator[str]:
        """The texts of one Parquet row group (the column ``text_field``; a dotted path enters structs)."""
        parquet = open_parquet(task.path)
        first, rows = task.first_row, parquet.metadata.row_group(task.index).num_rows
        top = self._top_column(task.path, parquet.schema_arrow.names)
        try:
            column = parquet.read_row_group(task.index, columns=[top]).column(0)
        except _arrow_errors() as exc:
            raise BadParquetError(
                task.path, f"rows {first + 1:,}-{first + rows:,} (row group {task.index + 1:,})", exc
            ) from None
        yield from self.column_texts(column, path=task.path, first_row=first)

    def _top_column(self, path: str, names: Sequence[str]) -> str:
        field = self.text_field
        top = field if field in names else field.split(".")[0]
        if top not in names:
            raise BadRecordError(
                path,
                "schema",
                f'no column "{field}" (columns: {", ".join(names)})',
                "give the column that holds the text with text_field (CLI: --text-field)",
            )
        return top

    def column_texts(self, column: Any, *, path: str, first_row: int) -> Iterator[str]:
        """The texts of a pyarrow column read from the top-level column of ``text_field``: strings of any
        layout (plain, large, view, dictionary-encoded), or binary decoded as UTF-8 by the policy."""
        import pyarrow as pa
        import pyarrow.compute as pc

        field = self.text_field
        if field.split(".")[0] != field:
            for part in field.split(".")[1:]:
                if not pa.types.is_struct(column.type) or column.type.get_field_index(part) < 0:
                    raise BadRecordError(path, "schema", f'no column "{field}"', "give a column of text")
                column = pc.struct_field(column, part)
        kind = column.type
        if pa.types.is_dictionary(kind):  # the values are what counts (parquet writes strings this way)
            kind = kind.value_type
            column = column.cast(kind)
        types = pa.types
        is_text = types.is_string(kind) or types.is_large_string(kind) or _is(types, "string_view", kind)
        is_binary = (
            types.is_binary(kind)
            or types.is_large_binary(kind)
            or types.is_fixed_size_binary(kind)
            or _is(types, "binary_view", kind)
        )
        if not (is_text or is_binary):
            raise BadRecordError(
                path,
                "schema",
                f'the column "{field}" holds {column.type}, not strings',
                "give a column of text with text_field (CLI: --text-field)",
            )
        if is_text:
            # Decoded here, as bytes, so that one UTF-8 rule (the policy, the row named) holds for every
            # column, whatever a writer put in a string column.
            column = column.cast(pa.large_binary())
        for i, value in enumerate(column.to_pylist()):

            def where(i: int = i) -> str:
                return f"row {first_row + i + 1:,}"

            if value is None:
                self._bad(path, where, f'"{field}" is null', "fill in the text or drop the row")
                continue
            try:
                yield decode(value, self.policy, path=path, offset=0)
            except CorpusDecodeError as exc:
                raise CorpusDecodeError(
                    path, exc.offset, exc.reason, f"{where()}, column {field!r}"
                ) from None


def _is(types: Any, name: str, kind: Any) -> bool:
    """``pa.types.is_<name>(kind)``, False where this pyarrow has no such type."""
    check = getattr(types, f"is_{name}", None)
    return bool(check(kind)) if check is not None else False


def _arrow_errors() -> tuple[type[BaseException], ...]:
    import pyarrow as pa

    return (pa.ArrowException, OSError)


class BadParquetError(CorruptStreamError):
    """A Parquet file (or one of its row groups) cannot be read: damaged, truncated or not Parquet."""

    def __init__(self, path: str, where: str, detail: BaseException | str) -> None:
        # pyarrow's messages can run over several lines: keep the first.
        first = str(detail).strip().splitlines()[0] if str(detail).strip() else type(detail).__name__
        self.path, self.where, self.detail = path, where, first
        self.offset = 0
        ValueError.__init__(
            self,
            f"{path}, {where}: cannot be read as Parquet ({first}); the file is damaged or truncated: "
            "download or write it again",
        )

    def __reduce__(self) -> tuple[type[BadParquetError], tuple[str, str, str]]:  # type: ignore[override]
        return (type(self), (self.path, self.where, self.detail))


def open_parquet(path: str) -> Any:
    """``pyarrow.parquet.ParquetFile(path)``, a :class:`BadParquetError` naming the file if it is damaged."""
    import pyarrow.parquet as pq  # optional: checked by check_source before a run

    try:
        return pq.ParquetFile(path)
    except _arrow_errors() as exc:
        if isinstance(exc, FileNotFoundError | PermissionError | IsADirectoryError):
            raise
        raise BadParquetError(path, "footer", exc) from None


def head_documents(
    path: str | os.PathLike[str], *, text_field: str = "text", count: int = 3, max_bytes: int = 1 << 16
) -> list[str]:
    """The first few documents of a corpus file of any format, reading little of it (for previews).

    Reads at most ``max_bytes`` of (decompressed) JSON Lines or text, or the first rows of a Parquet
    file; records without a text are passed over. Raises what reading the file raises (``OSError``,
    :class:`CorruptStreamError`, :class:`MissingPackageError`, ``UnicodeDecodeError``...).

    Example:
        >>> head_documents("corpus.jsonl", count=1)
        ['The cat sat on the mat. The cat saw the hat, and the hat was on the mat.']
    """
    name = str(path)
    kind = source_kind(name)
    check_source(name)
    reader = RecordReader(text_field=text_field, policy=InvalidUtf8Policy.REPLACE, skip_bad=True)
    if kind.format == "parquet":
        parquet = open_parquet(name)
        top = reader._top_column(name, parquet.schema_arrow.names)
        batch = next(parquet.iter_batches(batch_size=count, columns=[top]), None)
        if batch is None:
            return []
        return list(reader.column_texts(batch.column(0), path=name, first_row=0))[:count]
    data = _head_bytes(name, kind, max_bytes)
    if kind.format == "text":
        return [data.decode("utf-8", errors="replace")] if data else []
    return list(reader.json_lines(data, path=name, offset=0, line=1))[:count]


def _head_bytes(name: str, kind: SourceKind, max_bytes: int) -> bytes:
    """The first ``max_bytes`` (decompressed) bytes of a text or JSON Lines file; for JSON Lines cut after
    the last whole line when the file goes on."""
    if kind.compression is None:
        with open(name, "rb") as handle:
            data = handle.read(max_bytes)
    else:
        pieces, have = [], 0
        for piece, _ in read_decompressed(name, kind.compression):
            pieces.append(piece)
            have += len(piece)
            if have >= max_bytes:
                break
        data = b"".join(pieces)[:max_bytes]
    if kind.format == "jsonl" and len(data) == max_bytes:
        data = data[: data.rfind(b"\n") + 1]
    return data


#: The pyarrow types the engine reads a text column from (binary ones as UTF-8).
_TEXT_TYPES = ("string", "large_string", "string_view", "binary", "large_binary", "binary_view")
#: The most fields :func:`record_fields` lists, and how deep it enters nested objects (structs).
MAX_RECORD_FIELDS = 200
_MAX_FIELD_DEPTH = 3


def record_fields(
    path: str | os.PathLike[str], *, count: int = 20, max_bytes: int = 1 << 16
) -> list[tuple[str, bool]]:
    """The fields of a JSON Lines or Parquet file's first records, for choosing ``text_field``.

    Each is ``(name, holds_text)``: a key or column, or a dotted path into nested objects (structs), as
    ``text_field`` takes it, in the order first seen; ``holds_text`` is True when every one of the first
    ``count`` records (at most ``max_bytes`` read) that has it holds a string there (for Parquet: a string
    or binary column, which the engine reads as UTF-8). A plain text file has no fields (``[]``). Raises
    what reading the file raises, as :func:`head_documents` does.

    Example:
        >>> record_fields("corpus.jsonl")
        [('text', True)]
        >>> _ = Path("nested.jsonl").write_text('{"id": 1, "meta": {"body": "hi"}}\\n')
        >>> record_fields("nested.jsonl")
        [('id', False), ('meta', False), ('meta.body', True)]
    """
    name = str(path)
    kind = source_kind(name)
    if kind.format == "text":
        return []
    check_source(name)
    found: dict[str, bool] = {}
    if kind.format == "parquet":
        import pyarrow as pa

        def visit_type(prefix: str, kind_: Any, depth: int) -> None:
            for i in range(kind_.num_fields):
                child = kind_.field(i)
                add_type(f"{prefix}.{child.name}", child.type, depth)

        def add_type(key: str, type_: Any, depth: int) -> None:
            if len(found) >= MAX_RECORD_FIELDS:
                return
            if pa.types.is_dictionary(type_):
                type_ = type_.value_type
            found[key] = any(
                _is(pa.types, name_, type_) for name_ in _TEXT_TYPES
            ) or pa.types.is_fixed_size_binary(type_)
            if pa.types.is_struct(type_) and depth < _MAX_FIELD_DEPTH:
                visit_type(key, type_, depth + 1)

        for column in open_parquet(name).schema_arrow:
            add_type(column.name, column.type, 1)
        return list(found.items())

    def add_value(key: str, value: object, depth: int) -> None:
        if len(found) >= MAX_RECORD_FIELDS and key not in found:
            return
        found[key] = found.get(key, True) and isinstance(value, str)
        if isinstance(value, dict) and depth < _MAX_FIELD_DEPTH:
            for child, inner in value.items():
                add_value(f"{key}.{child}", inner, depth + 1)

    import json

    seen = 0
    for raw in _head_bytes(name, kind, max_bytes).split(b"\n"):
        if seen >= count:
            break
        if not raw.strip():
            continue
        try:
            record = json.loads(raw.decode("utf-8", errors="replace"))
        except (ValueError, RecursionError):
            continue  # a bad line is the run's to report (or skip), not the field list's
        seen += 1
        if isinstance(record, dict):
            for key, value in record.items():
                add_value(str(key), value, 1)
    return list(found.items())
