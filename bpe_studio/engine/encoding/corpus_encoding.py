"""Encode a corpus into one flat array of token ids for model training (``.npy`` or raw ``.bin``).

The ids are those of each document encoded with :meth:`Tokenizer.encode_ordinary`, in input order, the
separator's id between two documents (when a separator is given). A document is a JSON line or Parquet row
(see :mod:`~bpe_studio.engine.corpus.sources`), or the text of a text file between two separators (a file ends
a
document). So the array equals, document by document, what ``encode_ordinary`` gives.

The files are cut into the same tasks as for training (text at certain boundaries of the tokenizer's
pattern or at the separator, JSON Lines by line ranges, Parquet by row groups, compressed files in
decompressed blocks); threads of this process (with the native kernel and a pattern it scans: its encoder
releases the GIL) or else worker processes encode them, and the results are written in order, holding at
most a few tasks' ids at a time, so memory stays flat in the corpus size. The output is written to a
temporary file beside it and renamed once complete: an interrupted run leaves nothing behind.

``.npy`` files are written by hand (the format is a short header then the raw array; numpy is not needed
here) and load with ``numpy.load(path, mmap_mode="r")``. A ``.bin`` file holds the raw little-endian ids;
its dtype and length are in ``PATH.json`` beside it.

Example:
    >>> summary = encode_corpus("gpt2", ["corpus.jsonl"], "ids.npy", separator="<|endoftext|>")
    >>> summary.documents, summary.ids
    (3, 64)
    >>> import numpy
    >>> int((numpy.load("ids.npy") == 50256).sum())  # the separator, between two documents
    2
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import sys
import threading
from array import array
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import InvalidUtf8Policy
from ..corpus.plan import Chunk, check_read, decode, plan_chunks
from ..corpus.sources import RecordReader, Task, plan_sources
from ..pretokenize.patterns import newline_cuts_certain
from ..workers.task_pool import ordered_worker_map
from ..workers.threaded import ordered_map
from ..write_plan import WritePlan
from .analysis import Compression, compression
from .tokenizer import Tokenizer

if TYPE_CHECKING:
    from ..formats import TokenizerSource

#: Typecodes of ``array`` for each output dtype.
DTYPES = {"uint16": "H", "uint32": "I"}
_NPY_DESCR = {"uint16": "<u2", "uint32": "<u4"}
# How often the parent wakes up to check for cancellation while workers encode.
_POLL_SECONDS = 0.05


@dataclass(frozen=True, slots=True)
class EncodeProgress:
    """Encoding advanced: input bytes done of the total, and ids written so far."""

    bytes_done: int
    bytes_total: int
    ids: int


@dataclass(frozen=True, slots=True)
class EncodeSummary:
    """What was written: the file(s), the dtype, the number of ids and documents, bad records skipped."""

    path: Path
    dtype: str
    ids: int
    documents: int
    bad_records: int
    bytes_read: int


def choose_dtype(tokenizer: Tokenizer, dtype: str = "auto") -> str:
    """``uint16`` when every id fits (``auto``) or when asked and possible; else ``uint32``.

    Raises:
        ValueError: ``uint16`` was asked for and an id is 65,536 or more.
    """
    largest = max([*tokenizer.vocab, *tokenizer.special_tokens.values()])
    if dtype == "auto":
        return "uint16" if largest < 1 << 16 else "uint32"
    if dtype not in DTYPES:
        raise ValueError(f"dtype: {dtype!r} is not one of auto, uint16, uint32")
    if dtype == "uint16" and largest >= 1 << 16:
        raise ValueError(
            f"dtype: the tokenizer has ids up to {largest:,}, which do not fit uint16; use --dtype uint32 "
            "(or auto)"
        )
    return dtype


class TaskEncoder:
    """Encodes one task (see :mod:`~bpe_studio.engine.corpus.sources`) into the ids of its documents.

    Example:
        >>> enc = TaskEncoder(tok, separator="<|endoftext|>", dtype="uint16")
    """

    def __init__(
        self,
        tokenizer: Tokenizer,
        *,
        separator: str | None,
        dtype: str,
        policy: InvalidUtf8Policy = InvalidUtf8Policy.ERROR,
        text_field: str = "text",
        skip_bad_records: bool = False,
    ) -> None:
        self._encode = tokenizer.encode_ordinary
        # With the native kernel and a pattern it scans, a task's documents become its rows in one native
        # call (None otherwise: the ids are joined here).
        self._joined = tokenizer._encode_joined
        self._separator = separator
        self._split = re.compile(re.escape(separator)) if separator else None
        self._sep_ids = [tokenizer.special_tokens[separator]] if separator else []
        self._code = DTYPES[dtype]
        self._policy = policy
        self.records = RecordReader(text_field=text_field, policy=policy, skip_bad=skip_bad_records)

    def documents(self, task: Task) -> tuple[list[str], bool]:
        """The documents (or pieces of one) a task holds, and whether its first one starts a document."""
        if isinstance(task, Chunk):
            with open(task.path, "rb") as handle:
                handle.seek(task.start)
                data = handle.read(task.size)
            check_read(task, data)
            text = decode(data, self._policy, path=task.path, offset=task.start)
            # A chunk cut at a separator starts with it: the split gives the separator's id itself.
            parts = self._split.split(text) if self._split is not None else [text]
            return parts, task.start == 0
        from ..corpus.sources import Block, Documents, LineRange

        if isinstance(task, Block) and task.format == "text":
            text = decode(task.data, self._policy, path=task.path, offset=task.offset)
            parts = self._split.split(text) if self._split is not None else [text]
            return parts, task.offset == 0
        if isinstance(task, Documents):
            return task.texts, True
        if isinstance(task, LineRange):
            with open(task.path, "rb") as handle:
                handle.seek(task.start)
                data = handle.read(task.size)
            check_read(Chunk(task.path, task.start, task.end, False), data)
            return list(self.records.json_lines(data, path=task.path, offset=task.start, line=None)), True
        if isinstance(task, Block):
            return list(
                self.records.json_lines(task.data, path=task.path, offset=task.offset, line=task.line)
            ), True
        return list(self.records.row_group(task)), True

    def encode(self, task: Task) -> tuple[bytes, int, bool]:
        """``(ids as little-endian bytes, documents begun, starts a document)`` of one task."""
        documents, starts = self.documents(task)
        begun = len(documents) if starts else len(documents) - 1
        separator = self._sep_ids[0] if self._sep_ids else None
        rows = self._joined(documents, separator=separator, width=array(self._code).itemsize)
        if rows is not None:
            return rows, begun, starts
        ids = array(self._code)
        for i, document in enumerate(documents):
            if i:
                ids.extend(self._sep_ids)
            ids.extend(self._encode(document))
        if sys.byteorder == "big":
            ids.byteswap()
        return ids.tobytes(), begun, starts


def npy_header(dtype: str, count: int) -> bytes:
    """The header of a version-1.0 ``.npy`` file of ``count`` ids, padded to a fixed 128 bytes.

    The length is fixed (the shape is padded with spaces) so that the header can be written first and
    rewritten in place once the count is known.

    Example:
        >>> len(npy_header("uint16", 12)), npy_header("uint16", 12)[:6]
        (128, b'\\x93NUMPY')
    """
    text = f"{{'descr': '{_NPY_DESCR[dtype]}', 'fortran_order': False, 'shape': ({count},), }}"
    body = text.ljust(128 - 10 - 1) + "\n"
    return b"\x93NUMPY\x01\x00" + len(body).to_bytes(2, "little") + body.encode("latin-1")


def encode_corpus_plan(plan: WritePlan, option: str, out: str | os.PathLike[str]) -> None:
    """Add what :func:`iter_encode_corpus` writes for ``out`` to ``plan``: the file, the ``.json`` sidecar
    of a ``.bin`` (implied by ``out``) and the temporary files beside them.

    Example:
        >>> plan = WritePlan()
        >>> encode_corpus_plan(plan, "--out", "ids.bin")
        >>> [str(w.path) for w in plan.writes]
        ['ids.bin', 'ids.bin.json']
    """
    target = Path(out)
    plan.write(option, target)
    if target.suffix.lower() == ".bin":
        plan.write(option, str(target) + ".json", implied_by=target)
    plan.scratch_files(option, target.parent, f".{target.name}.", (".tmp",), implied_by=target)


def iter_encode_corpus(
    tokenizer_path: str | os.PathLike[str] | TokenizerSource,
    inputs: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    *,
    dtype: str = "auto",
    separator: str | None = None,
    workers: int | None = None,
    chunk_size: int = 4 << 20,
    text_field: str = "text",
    skip_bad_records: bool = False,
    invalid_utf8: str = "error",
    cancel: Callable[[], bool] | None = None,
    tokenizer: Tokenizer | None = None,
) -> Iterator[EncodeProgress | EncodeSummary]:
    """Encode the corpus into ``out`` (``.npy`` or ``.bin``), yielding progress, then the summary.

    ``tokenizer_path`` is a file or name :func:`~bpe_studio.engine.formats.load` takes, or a
    :class:`~bpe_studio.engine.formats.TokenizerSource` (a ``.tiktoken`` file with the pattern and special
    tokens given for it): worker processes load it again from there. ``tokenizer``: the tokenizer already
    loaded from it, if the caller has it (else it is loaded here).

    Raises:
        ValueError: A bad option (dtype, separator not a special token of the tokenizer, output suffix), or
            an output (``out``, its sidecar, a temporary file) is an input (see :func:`encode_corpus_plan`).
        BadRecordError, CorruptStreamError, CorpusDecodeError, CorpusChangedError: As in training.
        WorkerCrashedError: A worker process died.
    """
    from ..formats import TokenizerSource

    source = (
        tokenizer_path
        if isinstance(tokenizer_path, TokenizerSource)
        else TokenizerSource(os.fspath(tokenizer_path))
    )
    target = Path(out)
    kind = target.suffix.lower()
    if kind not in (".npy", ".bin"):
        raise ValueError(f"out: {target} must end in .npy (numpy) or .bin (raw ids and a .json sidecar)")
    plan = WritePlan()
    encode_corpus_plan(plan, "out", target)
    for path in inputs:
        plan.read("the input corpus", path)
    plan.check()  # before anything is read or written: no output (sidecar, temporary file) on an input
    if tokenizer is None:
        tokenizer = source.load()
    chosen = choose_dtype(tokenizer, dtype)
    if separator is not None and separator not in tokenizer.special_tokens:
        names = ", ".join(tokenizer.special_tokens) or "none"
        raise ValueError(
            f"separator: {separator!r} is not a special token of the tokenizer (it has: {names})"
        )
    policy = InvalidUtf8Policy(invalid_utf8)
    specials = [separator] if separator else []
    newline_cuts = newline_cuts_certain(tokenizer.pattern)
    tasks, known = plan_sources(
        inputs,
        chunk_size=chunk_size,
        special_tokens=specials,
        newline_cuts=newline_cuts,
        plan_text=lambda names: plan_chunks(
            names, chunk_size=chunk_size, special_tokens=specials, newline_cuts=newline_cuts
        ),
    )
    total = sum(os.path.getsize(p) for p in inputs)
    wanted = workers if workers is not None else (os.cpu_count() or 1)
    count = max(1, min(wanted, known))
    cancelled = cancel or (lambda: False)
    options = {
        "separator": separator,
        "dtype": chosen,
        "policy": policy,
        "text_field": text_field,
        "skip_bad_records": skip_bad_records,
    }
    header = npy_header(chosen, 0) if kind == ".npy" else b""
    temp = _temporary(target, ".tmp")
    sidecar_temp: str | None = None
    try:
        with open(temp, "xb") as handle:
            handle.write(header)
            ids = documents = bad = done = 0
            first = True
            sep = (chosen, tokenizer.special_tokens[separator]) if separator else None
            if count == 1:
                results = _encode_serial(tokenizer, tasks, options)
            elif tokenizer._encoder.preset is not None:
                # The native encoder releases the GIL: threads of this process share one tokenizer, with
                # no worker start-up and no ids piped back.
                results = _encode_threaded(tokenizer, tasks, count, options, cancelled)
            else:
                results = _encode_parallel(source, tasks, count, options, cancelled)
            with contextlib.closing(results):
                for data, docs, starts, size, skipped in results:
                    if cancelled():
                        return
                    if starts and not first and sep is not None:
                        handle.write(array(DTYPES[sep[0]], [sep[1]]).tobytes())
                        ids += 1
                    first = False
                    handle.write(data)
                    ids += len(data) // (2 if chosen == "uint16" else 4)
                    documents += docs
                    bad += skipped
                    done += size
                    yield EncodeProgress(done, total, ids)
            if kind == ".npy":
                handle.seek(0)
                handle.write(npy_header(chosen, ids))
            handle.flush()
            os.fsync(handle.fileno())
        if kind == ".bin":
            side = {"dtype": chosen, "byteorder": "little", "count": ids, "separator": separator}
            sidecar_temp = _temporary(target, ".json.tmp")
            with open(sidecar_temp, "x", encoding="utf-8") as sh:
                json.dump(side, sh, indent=1)
            os.replace(sidecar_temp, str(target) + ".json")
            sidecar_temp = None
        os.replace(temp, target)
        temp = ""
        yield EncodeSummary(target, chosen, ids, documents, bad, done)
    finally:
        for leftover in (temp, sidecar_temp):
            if leftover:
                with contextlib.suppress(OSError):
                    os.unlink(leftover)


def _temporary(target: Path, suffix: str) -> str:
    """A new file's name beside ``target`` (created with ``open(..., "x")``: the umask's permissions, as
    the final file should have, unlike ``mkstemp``'s 0600)."""
    return str(target.parent / f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}{suffix}")


def encode_corpus(
    tokenizer_path: str | os.PathLike[str] | TokenizerSource,
    inputs: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    **options: Any,
) -> EncodeSummary:
    """Encode the corpus into ``out`` and return the summary (see :func:`iter_encode_corpus`)."""
    for item in iter_encode_corpus(tokenizer_path, inputs, out, **options):
        if isinstance(item, EncodeSummary):
            return item
    raise RuntimeError("encoding was cancelled")


Result = tuple[bytes, int, bool, int, int]


def _encode_serial(
    tokenizer: Tokenizer, tasks: Iterator[Task], options: dict[str, Any]
) -> Generator[Result, None, None]:
    encoder = TaskEncoder(tokenizer, **options)
    for task in tasks:
        before = encoder.records.bad_records
        data, docs, starts = encoder.encode(task)
        yield data, docs, starts, task.size, encoder.records.bad_records - before


def _encode_threaded(
    tokenizer: Tokenizer,
    tasks: Iterator[Task],
    workers: int,
    options: dict[str, Any],
    cancelled: Callable[[], bool],
) -> Generator[Result, None, None]:
    """Encode tasks on ``workers`` threads of this process (the native encoder runs without the GIL),
    yielding their results in task order (see :func:`~bpe_studio.engine.workers.threaded.ordered_map`:
    bounded,
    and no thread outlives the call).
    """
    local = threading.local()

    def run(task: Task) -> Result:
        encoder: TaskEncoder | None = getattr(local, "encoder", None)
        if encoder is None:  # one per thread: each counts its own bad records
            encoder = local.encoder = TaskEncoder(tokenizer, **options)
        before = encoder.records.bad_records
        data, docs, starts = encoder.encode(task)
        return data, docs, starts, task.size, encoder.records.bad_records - before

    return ordered_map(run, tasks, workers=workers, cancelled=cancelled, name="encode-corpus")


def _encode_parallel(
    source: TokenizerSource,
    tasks: Iterator[Task],
    workers: int,
    options: dict[str, Any],
    cancelled: Callable[[], bool],
) -> Generator[Result, None, None]:
    """Encode tasks in worker processes (:mod:`~bpe_studio.engine.workers.encode_worker`), yielding their
    results
    in task order (see :func:`~bpe_studio.engine.workers.task_pool.ordered_worker_map`: bounded, and every
    worker
    stopped on leaving).
    """
    setup = (
        # A file by its absolute path (the workers may not share our folder's meaning); a name such as
        # "gpt2" as it is.
        source.absolute(),
        options["separator"],
        options["dtype"],
        options["policy"].value,
        options["text_field"],
        options["skip_bad_records"],
    )
    return ordered_worker_map(
        "bpe_studio.engine.workers.encode_worker:main",
        setup,
        tasks,
        workers=workers,
        cancelled=cancelled,
        send=lambda task: task,
        receive=lambda task, answer: (answer[0], answer[1], answer[2], task.size, answer[3]),
        role="encoding",
    )


def corpus_compression(
    tokenizer: Tokenizer,
    path: str | os.PathLike[str],
    *,
    chunk_size: int = 4 << 20,
    text_field: str = "text",
    skip_bad_records: bool = False,
    invalid_utf8: str = "error",
) -> Compression:
    """The compression figures (:func:`~bpe_studio.engine.encoding.analysis.compression`) of one corpus file,
    read
    in pieces so that memory stays flat; every document is encoded with ``encode_ordinary``.

    A word cut between two pieces of one document is counted once.

    Example:
        >>> round(corpus_compression(tok, "corpus.jsonl").bytes_per_token, 2)
        4.03
    """
    specials: list[str] = []
    newline_cuts = newline_cuts_certain(tokenizer.pattern)
    tasks, _ = plan_sources(
        [path],
        chunk_size=chunk_size,
        special_tokens=specials,
        newline_cuts=newline_cuts,
        plan_text=lambda names: plan_chunks(
            names, chunk_size=chunk_size, special_tokens=specials, newline_cuts=newline_cuts
        ),
    )
    encoder = TaskEncoder(
        tokenizer,
        separator=None,
        dtype="uint32",
        policy=InvalidUtf8Policy(invalid_utf8),
        text_field=text_field,
        skip_bad_records=skip_bad_records,
    )
    characters = size = words = tokens = 0
    previous_ends_in_word = False
    for task in tasks:
        pieces, starts = encoder.documents(task)
        for i, piece in enumerate(pieces):
            figures = compression(piece, len(tokenizer.encode_ordinary(piece)))
            characters += figures.characters
            size += figures.bytes
            tokens += figures.tokens
            words += figures.words
            continues = i == 0 and not starts
            if continues and previous_ends_in_word and piece[:1] and not piece[:1].isspace():
                words -= 1  # one word cut in two by the piece boundary
            if piece:
                previous_ends_in_word = not piece[-1].isspace()
            elif not continues:
                previous_ends_in_word = False
    return Compression(characters=characters, bytes=size, words=words, tokens=tokens)
