"""Counts files and merge-loop checkpoints: reuse a counted corpus, and resume an interrupted run.

A **counts file** holds the table of unique pre-tokens of a corpus with what decided it: the pattern, the
special tokens, the invalid-UTF-8 policy, the corpus's identity, and for JSON Lines and Parquet files the
field the text was read from (``text_field``) and how many bad records were skipped. Training from it
skips reading the corpus, so several vocab sizes or merge settings can be tried on one counting pass. A
**checkpoint** is a counts file that also holds the merges made so far and the setting the merges depend
on (``max_token_length``); resuming replays those merges onto the counts, which puts the merge loop in the
state an uninterrupted run has at that point, then goes on.

Corpus identity is a list of ``(path, size, stamp)``: for local files the absolute path, the size and the
modification time in nanoseconds, for URLs fsspec's ``ukey`` (a hash of the file's metadata). A content
hash would also survive copying the corpus elsewhere, but checking it means reading the whole corpus again,
which is what a counts file exists to avoid (hashing hundreds of gigabytes on object storage costs as much
as counting them). Metadata is checked in microseconds and errs on the safe side: a corpus that was only
touched or copied must be counted again.

File layout (integers little-endian)::

    magic      15 bytes  b"\\x89BPE-STUDIO\\r\\n\\x1a\\n" (catches text-mode and non-studio files)
    length     4 bytes   size of the header
    crc        4 bytes   CRC-32 of the header (so that reading only the header still checks it)
    header     JSON      format, version, kind, settings, corpus identity, totals, sections
    sections             zlib-compressed arrays: pre-token lengths and bytes, counts; for checkpoints also
                         the merges' left and right tokens and their counts
    digest     32 bytes  BLAKE2b of everything before it

A truncated or corrupt file is detected before anything is used and reported with the file's name, as a
:class:`CountsFileError`. Files are written atomically, so an interrupted write leaves the old file.

A file may come from anyone, and its checksums are no proof of origin (anyone can compute them), so reading
never trusts the sizes it declares further than the file itself allows: all sections together may declare
at most ``MAX_RATIO`` times the file's size (the writer stores a table uncompressed in the rare case it would
compress better), each section is inflated with a bound of its declared size and refused the moment it would
give more, and impossible values (negative sizes or counts, empty pre-tokens) are refused with what is wrong.
"""

from __future__ import annotations

import dataclasses
import os
import struct
import sys
import zlib
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path
from typing import Any

from ..corpus.remote import file_size, file_stamp, is_url
from ..corpus.sources import source_kind
from ..pretokenize.patterns import preset_name
from .counter import CountTotals
from .merge import COUNT_LIMIT, MAX_PAIR_COUNT, pair_count_bound

#: The ``format`` field of the header.
FORMAT = "bpe-studio-counts"
#: The newest file version this code reads and the one it writes. Version 2 records ``text_field`` and
#: ``totals.bad_records``; a version 1 reader would ignore them and accept counts of the wrong text, so the
#: version says it must not read these files.
VERSION = 2
MAGIC = b"\x89BPE-STUDIO\r\n\x1a\n"
_LENGTH = struct.Struct("<II")  # header length, CRC-32 of the header
_DIGEST_SIZE = 32
# zlib level 1: the tables are mostly short strings and small integers; higher levels save little and cost
# several times the time (a checkpoint rewrites the table every few thousand merges).
_LEVEL = 1
_KINDS = ("counts", "checkpoint")
#: The most data (all sections' declared raw sizes together) a file may declare per byte of its size. Real
#: tables compress 3-10 times; a file declaring far more is a decompression bomb, not a table.
MAX_RATIO = 100
# ... plus this much, so that a tiny file (an almost empty table) is never refused for its ratio.
_RATIO_SLACK = 1 << 16


class CountsFileError(ValueError):
    """A counts or checkpoint file cannot be used: unreadable, truncated, corrupt or from other settings.

    Attributes:
        path: The file.
    """

    def __init__(self, path: str | os.PathLike[str], problem: str) -> None:
        self.path = str(path)
        super().__init__(f"{self.path}: {problem}")


@dataclass(frozen=True, slots=True)
class CorpusFile:
    """One corpus file's identity: path (absolute) or URL, size in bytes, and modification stamp."""

    path: str
    size: int
    stamp: str


def corpus_identity(paths: Iterable[str | os.PathLike[str]]) -> tuple[CorpusFile, ...]:
    """The identity of corpus files (local paths made absolute), in a canonical (sorted) order.

    The order of the files does not change the counts, so it does not change the identity either.
    """
    files = []
    for path in paths:
        name = str(path) if is_url(path) else os.path.abspath(path)
        files.append(CorpusFile(name, file_size(name), file_stamp(name)))
    return tuple(sorted(files, key=lambda f: f.path))


@dataclass(frozen=True)
class CountsHeader:
    """What a counts or checkpoint file says about itself (its header).

    Attributes:
        kind: ``"counts"`` or ``"checkpoint"``.
        pattern: The pre-tokenization regex the corpus was counted with.
        special_tokens: The special tokens (their order does not change counts).
        invalid_utf8: The invalid-UTF-8 policy (``"error"`` or ``"replace"``).
        corpus: The corpus identity.
        totals: Documents, special tokens and pre-token occurrences counted.
        unique_pretokens: Entries in the counts table.
        training: Checkpoints only: ``vocab_size``, ``min_frequency``, ``max_token_length``, ``merges``
            (how many the file holds) and ``stop_reason`` of the run that wrote it.
        text_field: The field (column) of JSON Lines and Parquet records that was counted; None in a
            version 1 file, which did not record it.
    """

    kind: str
    pattern: str
    special_tokens: tuple[str, ...]
    invalid_utf8: str
    corpus: tuple[CorpusFile, ...]
    totals: CountTotals
    unique_pretokens: int
    training: dict[str, Any] = field(default_factory=dict)
    sections: tuple[tuple[str, int, int], ...] = ()
    text_field: str | None = None

    @property
    def corpus_bytes(self) -> int:
        """Total size of the corpus files."""
        return sum(f.size for f in self.corpus)


@dataclass
class CountsData:
    """A loaded counts or checkpoint file.

    Attributes:
        header: Its header.
        counts: Pre-token (bytes as latin-1 code points) -> occurrences, as the counting phase makes it.
        merges: Checkpoints: the merges made so far, in order (empty for counts files).
        merge_counts: How often each merge's pair occurred.
    """

    header: CountsHeader
    counts: dict[str, int]
    merges: list[tuple[bytes, bytes]] = field(default_factory=list)
    merge_counts: list[int] = field(default_factory=list)


def reads_records(corpus: Iterable[CorpusFile]) -> bool:
    """True if a corpus holds JSON Lines or Parquet files, whose text depends on ``text_field``.

    URLs are read as plain text, whatever their suffix.

    Example:
        >>> reads_records([CorpusFile("/data/a.jsonl.zst", 10, "1")])
        True
        >>> reads_records([CorpusFile("/data/a.txt", 10, "1"), CorpusFile("https://h/b.jsonl", 5, "k")])
        False
    """
    return any(not is_url(f.path) and source_kind(f.path).format != "text" for f in corpus)


def mismatch(
    header: CountsHeader,
    *,
    pattern: str,
    special_tokens: Sequence[str],
    invalid_utf8: str,
    corpus: Sequence[CorpusFile] | None,
    text_field: str,
    skip_bad_records: bool,
) -> str | None:
    """Why counts with this header cannot stand for a run with these settings, or None if they can.

    ``corpus`` is None when the run names no corpus (it then trains on the file's corpus).

    The text field matters only when the counted corpus holds JSON Lines or Parquet files. A version 1
    file of such a corpus did not record its field, and is refused: its counts may be of any field, and
    training on the wrong text without a word is worse than counting again. Skipped bad records matter
    only when there were some: a run that does not skip them would have stopped at the first one.
    """
    if header.pattern != pattern:
        return f"it was counted with pattern {header.pattern!r}, and this run uses {pattern!r}"
    if sorted(header.special_tokens) != sorted(special_tokens):
        return (
            f"it was counted with special tokens {list(header.special_tokens)!r}, and this run uses "
            f"{list(special_tokens)!r}"
        )
    if header.invalid_utf8 != invalid_utf8:
        return f"it was counted with invalid_utf8={header.invalid_utf8!r}, and this run uses {invalid_utf8!r}"
    if reads_records(header.corpus):
        if header.text_field is None:
            return (
                "it was written by an older BPE Studio, which did not record the field its JSON Lines or "
                "Parquet text was read from (text_field, CLI: --text-field), so what it counted is unknown"
            )
        if header.text_field != text_field:
            field_then = header.text_field
            return (
                f"it was counted with text_field {field_then!r} (CLI: --text-field {field_then}), and this "
                f"run uses {text_field!r}"
            )
        if header.totals.bad_records and not skip_bad_records:
            return (
                f"it was counted skipping {header.totals.bad_records:,} bad records (skip_bad_records, CLI: "
                "--skip-bad-records), and this run does not skip them"
            )
    if corpus is None:
        return None
    theirs = {f.path: f for f in header.corpus}
    ours = {f.path: f for f in corpus}
    if theirs.keys() != ours.keys():
        missing = sorted(theirs.keys() - ours.keys())
        extra = sorted(ours.keys() - theirs.keys())
        parts = []
        if extra:
            parts.append(f"it was not counted from {', '.join(extra)}")
        if missing:
            parts.append(f"it was also counted from {', '.join(missing)}")
        return "a different corpus: " + "; ".join(parts)
    for name, then in theirs.items():
        now = ours[name]
        if then.size != now.size:
            return f"{name} changed since it was counted (size {then.size:,} then, {now.size:,} now)"
        if then.stamp != now.stamp:
            return f"{name} changed since it was counted (it was modified)"
    return None


# --------------------------------------------------------------------------------------------------
# Encoding


def _le(arr: array[int]) -> bytes:
    if sys.byteorder == "big":  # pragma: no cover - every supported platform is little-endian
        arr = array(arr.typecode, arr)
        arr.byteswap()
    return arr.tobytes()


def _from_le(typecode: str, data: bytes) -> array[int]:
    arr = array(typecode)
    if len(data) % arr.itemsize:
        raise ValueError(f"an array of {len(data)} bytes does not hold whole {arr.itemsize}-byte items")
    arr.frombytes(data)
    if sys.byteorder == "big":  # pragma: no cover
        arr.byteswap()
    return arr


def _strings_sections(prefix: str, strings: Sequence[str]) -> list[tuple[str, bytes]]:
    """Latin-1 strings as a ``<prefix>lengths`` (uint32) and a ``<prefix>bytes`` section, uncompressed."""
    return [
        (prefix + "lengths", _le(array("I", map(len, strings)))),
        (prefix + "bytes", "".join(strings).encode("latin-1")),
    ]


def _strings(lengths: array[int], data: bytes) -> list[str]:
    text = data.decode("latin-1")
    if sum(lengths) != len(text):
        raise ValueError("the string lengths do not add up to the string bytes")
    ends = list(accumulate(lengths))
    starts = [0, *ends[:-1]]
    return [text[a:b] for a, b in zip(starts, ends, strict=True)]


@dataclass(frozen=True)
class EncodedSections:
    """Compressed sections ready to be written: ``(name, raw size, compressed bytes)``."""

    items: tuple[tuple[str, int, bytes], ...]


def encode_counts(counts: dict[str, int]) -> EncodedSections:
    """Compress a counts table once, so that a run can write several checkpoints without redoing it."""
    raw = [*_strings_sections("", list(counts)), ("counts", _le(array("q", counts.values())))]
    return EncodedSections(tuple((name, len(data), zlib.compress(data, _LEVEL)) for name, data in raw))


def _within_ratio(items: list[tuple[str, int, bytes]]) -> list[tuple[str, int, bytes]]:
    """The sections as they are, or stored uncompressed (level 0) if they would declare more than
    ``MAX_RATIO`` times their size, which the reader refuses (e.g. runs of one letter of every length)."""
    if sum(raw for _, raw, _ in items) <= MAX_RATIO * sum(len(data) for _, _, data in items):
        return items
    return [(name, raw, zlib.compress(zlib.decompress(data), 0)) for name, raw, data in items]


def _encode_merges(merges: Sequence[tuple[bytes, bytes]], merge_counts: Sequence[int]) -> EncodedSections:
    raw = [
        *_strings_sections("merge_left_", [a.decode("latin-1") for a, _ in merges]),
        *_strings_sections("merge_right_", [b.decode("latin-1") for _, b in merges]),
        ("merge_counts", _le(array("q", merge_counts))),
    ]
    return EncodedSections(tuple((name, len(data), zlib.compress(data, _LEVEL)) for name, data in raw))


def _header_json(header: CountsHeader, sections: Sequence[tuple[str, int, bytes]]) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "kind": header.kind,
        "pattern": header.pattern,
        "special_tokens": list(header.special_tokens),
        "invalid_utf8": header.invalid_utf8,
        "text_field": header.text_field,
        "corpus": [{"path": f.path, "size": f.size, "stamp": f.stamp} for f in header.corpus],
        "totals": {
            "documents": header.totals.documents,
            "special_tokens": header.totals.special_tokens,
            "pretokens": header.totals.pretokens,
            "bad_records": header.totals.bad_records,
        },
        "unique_pretokens": header.unique_pretokens,
        "training": header.training,
        "sections": [{"name": n, "raw_size": r, "size": len(d)} for n, r, d in sections],
    }


def _write(path: str | os.PathLike[str], header: CountsHeader, sections: Sequence[EncodedSections]) -> None:
    import json  # here: a run that writes and reads no counts file needs none of it (3 ms, issue 22)

    items = _within_ratio([item for group in sections for item in group.items])
    head = json.dumps(_header_json(header, items), ensure_ascii=False).encode("utf-8")
    parts = [MAGIC, _LENGTH.pack(len(head), zlib.crc32(head)), head, *(data for _, _, data in items)]
    import hashlib  # (here: a run that writes no counts file needs none of its import, issue 22)

    digest = hashlib.blake2b(digest_size=_DIGEST_SIZE)
    for part in parts:
        digest.update(part)
    # Imported here: importing bpe_studio.engine.formats (its __init__ loads every format) was a quarter of
    # `from bpe_studio.engine import train`'s import time, for runs that write no counts (issue 22).
    from ..formats.atomic import atomic_write

    atomic_write(path, b"".join([*parts, digest.digest()]))


def save_counts(
    path: str | os.PathLike[str],
    counts: dict[str, int] | EncodedSections,
    header: CountsHeader,
) -> None:
    """Write a counts file atomically (``header.kind`` must be ``"counts"``)."""
    assert header.kind == "counts"
    encoded = counts if isinstance(counts, EncodedSections) else encode_counts(counts)
    _write(path, header, [encoded])


def save_checkpoint(
    path: str | os.PathLike[str],
    counts: dict[str, int] | EncodedSections,
    header: CountsHeader,
    merges: Sequence[tuple[bytes, bytes]],
    merge_counts: Sequence[int],
) -> None:
    """Write a checkpoint atomically: the counts, the merges so far and ``header.training``."""
    assert header.kind == "checkpoint" and len(merges) == len(merge_counts)
    encoded = counts if isinstance(counts, EncodedSections) else encode_counts(counts)
    header = dataclasses.replace(header, training={**header.training, "merges": len(merges)})
    _write(path, header, [encoded, _encode_merges(merges, merge_counts)])


# --------------------------------------------------------------------------------------------------
# Decoding


def _parse_header(path: str | os.PathLike[str], prefix: bytes, total_size: int) -> tuple[CountsHeader, int]:
    """Parse the header from the file's first bytes; returns it and where the sections start."""
    if not prefix.startswith(MAGIC):
        if len(prefix) < len(MAGIC) and MAGIC.startswith(prefix):
            raise CountsFileError(path, f"is truncated ({total_size} bytes); write it again")
        raise CountsFileError(
            path,
            "is not a BPE Studio counts or checkpoint file (write one with --counts-out or --checkpoint)",
        )
    start = len(MAGIC) + _LENGTH.size
    if len(prefix) < start:
        raise CountsFileError(path, f"is truncated ({total_size} bytes); write it again")
    length, crc = _LENGTH.unpack_from(prefix, len(MAGIC))
    if len(prefix) < start + length:
        raise CountsFileError(
            path, f"is truncated ({total_size:,} bytes, the header alone needs {start + length:,})"
        )
    head = prefix[start : start + length]
    if zlib.crc32(head) != crc:
        raise CountsFileError(path, "has a corrupt header (its checksum does not match); write it again")
    import json

    try:
        raw = json.loads(head.decode("utf-8"))
        if not isinstance(raw, dict) or raw.get("format") != FORMAT:
            raise ValueError("not a counts header")
        version = raw["version"]
        if not isinstance(version, int) or version > VERSION:
            raise CountsFileError(
                path,
                f"was written by a newer BPE Studio (file version {version}, this one reads up to "
                f"{VERSION}); upgrade bpe-studio",
            )
        if raw["kind"] not in _KINDS:
            raise ValueError(f"unknown kind {raw['kind']!r}")
        totals = raw["totals"]
        header = CountsHeader(
            kind=raw["kind"],
            pattern=str(raw["pattern"]),
            special_tokens=tuple(str(s) for s in raw["special_tokens"]),
            invalid_utf8=str(raw["invalid_utf8"]),
            corpus=tuple(CorpusFile(str(f["path"]), int(f["size"]), str(f["stamp"])) for f in raw["corpus"]),
            totals=CountTotals(
                int(totals["documents"]),
                int(totals["special_tokens"]),
                int(totals["pretokens"]),
                int(totals.get("bad_records", 0)),  # version 1 did not record it
            ),
            unique_pretokens=int(raw["unique_pretokens"]),
            training=dict(raw.get("training") or {}),
            sections=tuple((str(s["name"]), int(s["raw_size"]), int(s["size"])) for s in raw["sections"]),
            text_field=None if raw.get("text_field") is None else str(raw["text_field"]),
        )
        _check_header_values(header)
    except CountsFileError:
        raise
    except RecursionError:  # [[[[...]]]]: the CRC is no protection, anyone can compute it
        raise CountsFileError(path, "has a corrupt header (JSON nested too deeply); write it again") from None
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise CountsFileError(
            path, f"has a corrupt header ({type(exc).__name__}: {exc}); write it again"
        ) from None
    return header, start + length


def _check_header_values(header: CountsHeader) -> None:
    """Raise ValueError naming the first value no file written by BPE Studio can hold."""
    numbers = {
        "documents": header.totals.documents,
        "special_tokens": header.totals.special_tokens,
        "pretokens": header.totals.pretokens,
        "bad_records": header.totals.bad_records,
        "unique_pretokens": header.unique_pretokens,
    }
    numbers.update({f"size of corpus file {f.path}": f.size for f in header.corpus})
    for name, raw_size, size in header.sections:
        numbers[f"raw_size of section {name}"] = raw_size
        numbers[f"size of section {name}"] = size
    for what, value in numbers.items():
        if value < 0:
            raise ValueError(f"{what} is negative ({value})")
    names = [name for name, _, _ in header.sections]
    if len(set(names)) != len(names):
        raise ValueError("a section is listed twice")


def _section_size_problem(header: CountsHeader) -> str | None:
    """What is wrong with the sections' declared raw sizes, given the header's own counts (None if nothing).

    The arrays have a fixed item size, so their sizes follow from ``unique_pretokens`` and, in a
    checkpoint, the number of merges: checked before anything is inflated.
    """
    entries = header.unique_pretokens
    wanted: dict[str, int | None] = {"lengths": 4 * entries, "bytes": None, "counts": 8 * entries}
    if header.kind == "checkpoint":
        merges = header.training.get("merges")
        if not isinstance(merges, int) or isinstance(merges, bool) or merges < 0:
            return f"the number of merges is {merges!r}"
        for side in ("left", "right"):
            wanted.update({f"merge_{side}_lengths": 4 * merges, f"merge_{side}_bytes": None})
        wanted["merge_counts"] = 8 * merges
    declared = {name: raw_size for name, raw_size, _ in header.sections}
    for name, size in wanted.items():
        if name not in declared:
            return f"section {name} is missing"
        if size is not None and declared[name] != size:
            return f"section {name} declares {declared[name]:,} bytes; the header's counts make it {size:,}"
    return None


def _inflate(path: str | os.PathLike[str], name: str, packed: memoryview, raw_size: int) -> bytes:
    """Inflate one section, never past the ``raw_size`` bytes the header declares for it.

    Example:
        >>> _inflate("f", "counts", memoryview(zlib.compress(b"abc")), 3)
        b'abc'
    """
    inflater = zlib.decompressobj()
    try:
        # At most one byte more than declared: enough to tell that the stream goes on (a max_length of 0
        # would mean "no limit", hence the +1 also for an empty section).
        raw = inflater.decompress(packed, raw_size + 1)
    except zlib.error as exc:
        raise CountsFileError(path, f"is corrupt (section {name}: {exc}); write it again") from None
    if len(raw) > raw_size:
        raise CountsFileError(
            path,
            f"is corrupt (section {name} inflates past the {raw_size:,} bytes its header declares); "
            "it is damaged or was not written by BPE Studio: write it again",
        )
    if not inflater.eof or inflater.unused_data or len(raw) != raw_size:
        raise CountsFileError(
            path, f"is corrupt (section {name} holds {len(raw):,} bytes, not {raw_size:,}); write it again"
        )
    return raw


def read_header(path: str | os.PathLike[str]) -> CountsHeader:
    """Read only the header of a counts or checkpoint file (cheap; the sections are not checked).

    Raises:
        CountsFileError: The file is missing, unreadable, not such a file, or its header is damaged.
    """
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            prefix = handle.read(len(MAGIC) + _LENGTH.size)
            if len(prefix) == len(MAGIC) + _LENGTH.size and prefix.startswith(MAGIC):
                length, _ = _LENGTH.unpack_from(prefix, len(MAGIC))
                prefix += handle.read(length)
    except OSError as exc:
        raise CountsFileError(path, f"cannot be read ({exc.strerror or exc})") from None
    return _parse_header(path, prefix, size)[0]


def load(path: str | os.PathLike[str], *, want_checkpoint: bool = False) -> CountsData:
    """Read and check a whole counts or checkpoint file.

    Args:
        path: The file.
        want_checkpoint: Refuse a counts file (resuming needs the merges of a checkpoint).

    Raises:
        CountsFileError: The file is missing, unreadable, truncated, corrupt, or of the wrong kind.
    """
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise CountsFileError(path, f"cannot be read ({exc.strerror or exc})") from None
    header, offset = _parse_header(path, data, len(data))
    if want_checkpoint and header.kind != "checkpoint":
        raise CountsFileError(path, "is a counts file, not a checkpoint; train from it with --counts-in")
    expected = offset + sum(size for _, _, size in header.sections) + _DIGEST_SIZE
    if len(data) != expected:
        what = "truncated" if len(data) < expected else "longer than its header says"
        raise CountsFileError(path, f"is {what} ({len(data):,} bytes, expected {expected:,}); write it again")
    declared = sum(raw_size for _, raw_size, _ in header.sections)
    if declared > MAX_RATIO * len(data) + _RATIO_SLACK:
        raise CountsFileError(
            path,
            f"declares {declared:,} bytes of data in {len(data):,} bytes (more than {MAX_RATIO} times its "
            "size, which BPE Studio never writes): it is damaged or was not written by BPE Studio; count "
            "the corpus again with --counts-out",
        )
    problem = _section_size_problem(header)
    if problem is not None:
        raise CountsFileError(path, f"is corrupt ({problem}); write it again")
    import hashlib

    body = memoryview(data)[:-_DIGEST_SIZE]
    if hashlib.blake2b(body, digest_size=_DIGEST_SIZE).digest() != data[-_DIGEST_SIZE:]:
        raise CountsFileError(path, "is corrupt (its checksum does not match); write it again")
    sections: dict[str, bytes] = {}
    for name, raw_size, size in header.sections:
        sections[name] = _inflate(path, name, body[offset : offset + size], raw_size)
        offset += size
    try:
        lengths = _from_le("I", sections["lengths"])
        if lengths and min(lengths) == 0:
            raise ValueError("the table holds an empty pre-token")
        keys = _strings(lengths, sections["bytes"])
        values = _from_le("q", sections["counts"])
        if len(keys) != len(values) or len(keys) != header.unique_pretokens:
            raise ValueError("the table's parts have different lengths")
        if values and min(values) < 1:
            bad = next(i for i, n in enumerate(values) if n < 1)
            raise ValueError(
                f"pre-token {keys[bad].encode('latin-1')!r} has count {values[bad]}; a count is at least 1"
            )
        counts = dict(zip(keys, values.tolist(), strict=True))
        if len(counts) != len(keys):
            raise ValueError("a pre-token is listed twice")
        merges: list[tuple[bytes, bytes]] = []
        merge_counts: list[int] = []
        if header.kind == "checkpoint":
            left = _strings(_from_le("I", sections["merge_left_lengths"]), sections["merge_left_bytes"])
            right = _strings(_from_le("I", sections["merge_right_lengths"]), sections["merge_right_bytes"])
            merge_counts = _from_le("q", sections["merge_counts"]).tolist()
            if not len(left) == len(right) == len(merge_counts) == int(header.training.get("merges", -1)):
                raise ValueError("the merges' parts have different lengths")
            if merge_counts and min(merge_counts) < 1:
                raise ValueError(f"a merge has count {min(merge_counts)}; a count is at least 1")
            if not all(left) or not all(right):
                raise ValueError("a merge has an empty side")
            merges = [(a.encode("latin-1"), b.encode("latin-1")) for a, b in zip(left, right, strict=True)]
    except (KeyError, ValueError) as exc:
        raise CountsFileError(path, f"is corrupt ({type(exc).__name__}: {exc}); write it again") from None
    problem = _totals_problem(header, sum(values))
    if problem is not None:
        raise CountsFileError(path, f"is corrupt ({problem}); write it again")
    if pair_count_bound(counts) > MAX_PAIR_COUNT:
        # Refused here, with the file's name, by both engines alike (the merge loop would refuse it too).
        raise CountsFileError(path, f"cannot be trained from: {COUNT_LIMIT}")
    return CountsData(header, counts, merges, merge_counts)


def _totals_problem(header: CountsHeader, pretokens: int) -> str | None:
    """What is wrong with the header's totals, given the ``pretokens`` its table holds (None if nothing).

    The totals are printed and carried into the next files, so they must be what the sections say: the
    pre-token total is the table's sum exactly; under a preset every document holds at least one pre-token
    (each pattern matches every character); with no special tokens none was counted.

    Example:
        >>> h = CountsHeader("counts", "gpt2", (), "error", (), CountTotals(5, 0, 3), 1)
        >>> _totals_problem(h, 3)
        'the header says 5 documents, more than its 3 pre-tokens, and every document holds at least one'
    """
    totals = header.totals
    if totals.pretokens != pretokens:
        return f"the header says {totals.pretokens:,} pre-tokens, its table holds {pretokens:,}"
    if preset_name(header.pattern) is not None and totals.documents > pretokens:
        return (
            f"the header says {totals.documents:,} documents, more than its {pretokens:,} pre-tokens, "
            "and every document holds at least one"
        )
    if not header.special_tokens and totals.special_tokens:
        return f"the header says {totals.special_tokens:,} special tokens were counted, and it names none"
    return None
