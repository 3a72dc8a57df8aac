"""``bpe-studio encode-corpus``: a corpus to one flat array of token ids (``.npy`` or ``.bin``)."""

from __future__ import annotations

import argparse
import contextlib
import errno
import sys
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

from ..engine.corpus.plan import (
    CorpusChangedError,
    CorpusDecodeError,
    NotRegularFileError,
    UncuttableTextError,
)
from ..engine.corpus.sources import BadRecordError, CorruptStreamError, check_source, expand_inputs
from ..engine.encoding.corpus_encoding import (
    EncodeProgress,
    EncodeSummary,
    encode_corpus_plan,
    iter_encode_corpus,
)
from ..engine.formats import FormatError, source_files
from ..engine.humanize import bytes_rate, error_message, human_bytes, human_seconds
from ..engine.workers.protocol import WorkerCrashedError
from ..engine.write_plan import WritePlan
from .common import EXIT_FAILURE, CliError, add_tokenizer_options, text_arg
from .encode import given_tokenizers
from .signals import stoppable

#: errno values of an OSError without a file name that come from writing the output (a full disk, a quota).
_OUTPUT_FAILURES = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def register(subparsers: Any) -> None:
    """Add the ``encode-corpus`` subcommand."""
    p = subparsers.add_parser(
        "encode-corpus",
        help="encode a corpus into one array of token ids (.npy or .bin) for model training",
        description="Encode every document of the inputs (text files, JSON Lines, Parquet, compressed; "
        "folders and globs) with the tokenizer, in order, the separator's id between documents, into one "
        ".npy array (numpy.load(..., mmap_mode='r')) or raw little-endian .bin with a .bin.json sidecar.",
    )
    add_tokenizer_options(p)
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="corpus files, folders or globs")
    p.add_argument("--out", required=True, type=Path, metavar="FILE", help="output file: .npy or .bin")
    p.add_argument(
        "--dtype",
        choices=["auto", "uint16", "uint32"],
        default="auto",
        help="id type: auto (uint16 when every id fits, the default), uint16, uint32",
    )
    p.add_argument(
        "--separator",
        type=text_arg,
        default=None,
        metavar="TOKEN",
        help="a special token of the tokenizer put between documents (and splitting text files), e.g. "
        "'<|endoftext|>'; none by default",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        help="threads with the native kernel and a preset pattern, else worker processes "
        "(default: all cores)",
    )
    p.add_argument(
        "--chunk-size", type=int, default=4 << 20, help="bytes per task given to a worker (default: 4 MiB)"
    )
    p.add_argument("--text-field", default="text", metavar="FIELD", type=text_arg, help="JSON/Parquet field")
    p.add_argument("--skip-bad-records", action="store_true", help="skip JSON lines/rows without a text")
    p.add_argument(
        "--invalid-utf8", choices=["error", "replace"], default="error", help="invalid UTF-8: stop or U+FFFD"
    )
    p.add_argument(
        "--progress",
        choices=["auto", "bar", "none"],
        default="auto",
        help="progress display: auto (a live line on a terminal), bar, none",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    p.set_defaults(handler=stoppable(run), plan=plan)


def plan(args: argparse.Namespace) -> WritePlan:
    """What ``encode-corpus`` writes (``--out``, a ``.bin``'s sidecar, temporary files) and reads (the
    corpus, the tokenizer's files); inputs that cannot be listed are left to :func:`run` to report."""
    writes = WritePlan()
    encode_corpus_plan(writes, "--out", args.out)
    with contextlib.suppress(ValueError, OSError):
        for path in expand_inputs(args.inputs):
            writes.read("the input corpus", path)
    with contextlib.suppress(ValueError, OSError):
        for path in source_files(args.tokenizer):
            writes.read("the tokenizer file", path)
    return writes


def run(args: argparse.Namespace) -> int:
    """Run ``bpe-studio encode-corpus``."""
    if args.workers is not None and args.workers < 1:
        raise CliError(f"--workers: {args.workers} must be at least 1")
    if args.chunk_size < 1:
        raise CliError(f"--chunk-size: {args.chunk_size} must be a positive number of bytes")
    try:
        inputs = expand_inputs(args.inputs)
        for path in inputs:
            if not path.exists():
                raise ValueError(f"inputs: {path} does not exist; check the path")
            if not path.is_file():
                raise ValueError(f"inputs: {path} is not a regular file; give files, folders or globs")
            check_source(path)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    mode = "none" if args.quiet else args.progress
    if mode == "auto":
        mode = "bar" if sys.stderr.isatty() else "none"
    ((source, tokenizer),) = given_tokenizers(args)  # one-line errors naming -t, --pattern, --special-token
    start = time.monotonic()
    last = 0.0
    summary: EncodeSummary | None = None
    events = iter_encode_corpus(
        source,
        inputs,
        args.out,
        dtype=args.dtype,
        separator=args.separator,
        workers=args.workers,
        chunk_size=args.chunk_size,
        text_field=args.text_field,
        skip_bad_records=args.skip_bad_records,
        invalid_utf8=args.invalid_utf8,
        tokenizer=tokenizer,
    )
    try:
        for event in events:
            if isinstance(event, EncodeSummary):
                summary = event
            elif mode == "bar" and isinstance(event, EncodeProgress):
                now = time.monotonic()
                if now - last >= 0.1:
                    last = now
                    rate = event.bytes_done / max(now - start, 1e-9)
                    done, total = human_bytes(event.bytes_done), human_bytes(event.bytes_total)
                    sys.stderr.write(
                        f"\r\x1b[Kencoding  {done}/{total}  {bytes_rate(rate)}  {event.ids:,} ids"
                    )
                    sys.stderr.flush()
    except FileNotFoundError as exc:
        raise CliError(f"--tokenizer: {error_message(exc)}") from None
    except (
        BadRecordError,
        CorruptStreamError,
        CorpusDecodeError,
        UncuttableTextError,
        NotRegularFileError,
        FormatError,
        ValueError,
    ) as exc:
        message = str(exc)
        for name in ("out", "separator", "dtype"):  # the engine's names for the options
            if message.startswith(name + ":"):
                message = "--" + message
        raise CliError(message) from None
    except (WorkerCrashedError, CorpusChangedError) as exc:
        raise CliError(str(exc), EXIT_FAILURE) from None
    except OSError as exc:
        if exc.filename is None and exc.errno in _OUTPUT_FAILURES:  # writing the output: say which file
            raise CliError(
                f"--out: cannot write {args.out} ({exc.strerror}); free some space or choose another --out",
                EXIT_FAILURE,
            ) from None
        raise CliError(error_message(exc), EXIT_FAILURE) from None
    finally:
        if isinstance(events, Generator):
            events.close()  # stops the workers and removes the temporary output at once
        if mode == "bar":
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
    assert summary is not None
    if not args.quiet:
        elapsed = time.monotonic() - start
        skipped = f", {summary.bad_records:,} bad records skipped" if summary.bad_records else ""
        documents = "document" if summary.documents == 1 else "documents"
        sidecar = f" (+ {summary.path}.json)" if summary.path.suffix.lower() == ".bin" else ""
        print(
            f"encoded {human_bytes(summary.bytes_read)} ({summary.documents:,} {documents}{skipped}) into "
            f"{summary.ids:,} {summary.dtype} ids in {human_seconds(elapsed)} "
            f"({bytes_rate(summary.bytes_read / max(elapsed, 1e-9))})\nwrote {summary.path}{sidecar}"
        )
    return 0
