"""``bpe-studio eval``: compare tokenizers' compression on corpus files (bytes per token, tokens per word)."""

from __future__ import annotations

import argparse
import csv
import json
import sys
from typing import Any

from ..engine.corpus.plan import CorpusChangedError, CorpusDecodeError, UncuttableTextError
from ..engine.corpus.sources import BadRecordError, CorruptStreamError, check_source, expand_inputs
from ..engine.encoding.evaluation import evaluate_files
from ..engine.formats import display_names
from ..engine.humanize import error_message
from ..engine.notation import control_label
from ..engine.pretokenize.patterns import SUPERWORD_PATTERN
from ..engine.workers.protocol import WorkerCrashedError
from .common import EXIT_FAILURE, CliError, add_tokenizer_options, no_writes, text_arg
from .encode import given_tokenizers
from .signals import stoppable


def register(subparsers: Any) -> None:
    """Add the ``eval`` subcommand."""
    p = subparsers.add_parser(
        "eval",
        help="compare tokenizers' compression on corpus files",
        description="For each corpus file and tokenizer: bytes per token, tokens per word and the token "
        "count relative to the first tokenizer (below 1: fewer tokens than it). Documents are encoded as "
        "ordinary text (special tokens in them too).",
    )
    add_tokenizer_options(p, repeat=True, help="a tokenizer file, folder or name; the first is the reference")
    p.add_argument("corpora", nargs="+", metavar="CORPUS", help="corpus files, folders or globs (any format)")
    p.add_argument("--text-field", default="text", metavar="FIELD", type=text_arg, help="JSON/Parquet field")
    p.add_argument("--skip-bad-records", action="store_true", help="skip JSON lines/rows without a text")
    p.add_argument(
        "--invalid-utf8", choices=["error", "replace"], default="error", help="invalid UTF-8: stop or U+FFFD"
    )
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        help="threads with the native kernel and preset patterns, else worker processes "
        "(default: all cores for corpora of 8 MB or more, else 1)",
    )
    output = p.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print the rows as a JSON list")
    output.add_argument("--csv", action="store_true", help="print the rows as CSV")
    p.set_defaults(handler=stoppable(run), plan=no_writes)  # prints only: writes no file


def _rows(args: argparse.Namespace) -> list[dict[str, Any]]:
    try:
        corpora = expand_inputs(args.corpora)
        for path in corpora:
            if not path.exists():
                raise ValueError(f"CORPUS: {path} does not exist; check the path")
            if not path.is_file():
                raise ValueError(f"CORPUS: {path} is not a regular file; give files, folders or globs")
            check_source(path)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    if args.workers is not None and args.workers < 1:
        raise CliError(f"--workers: {args.workers} must be at least 1")
    given = given_tokenizers(args)
    tokenizers = [tok for _, tok in given]
    try:
        # Every file with every tokenizer; in worker processes when asked (each loads the tokenizers by
        # name), else here. The figures are the same either way, in the same order.
        per_file = evaluate_files(
            tokenizers,
            corpora,
            names=[source for source, _ in given],
            workers=args.workers,
            text_field=args.text_field,
            skip_bad_records=args.skip_bad_records,
            invalid_utf8=args.invalid_utf8,
        )
    except (BadRecordError, CorruptStreamError, CorpusDecodeError, UncuttableTextError) as exc:
        raise CliError(str(exc)) from None
    except (WorkerCrashedError, CorpusChangedError) as exc:
        raise CliError(str(exc), EXIT_FAILURE) from None
    except OSError as exc:
        raise CliError(error_message(exc)) from None
    rows: list[dict[str, Any]] = []
    # Each tokenizer by a name that says which (a tokenizer.json by its folder), the path kept beside it.
    shown = display_names(args.tokenizers)
    # A superword (SuperBPE) tokenizer, told by its pattern (every format keeps it): its figures compare with
    # plain BPE of the same vocabulary size only when that is known.
    superwords = [t.pattern == SUPERWORD_PATTERN for t in tokenizers]
    for path, figures_of in zip(corpora, per_file, strict=True):
        first_tokens = figures_of[0].tokens
        for given, name, figures, superword in zip(
            args.tokenizers, shown, figures_of, superwords, strict=True
        ):
            rows.append(
                {
                    "corpus": str(path),
                    "tokenizer": given,
                    "name": name,
                    "bytes": figures.bytes,
                    "words": figures.words,
                    "tokens": figures.tokens,
                    "bytes_per_token": _round(figures.bytes_per_token),
                    "tokens_per_word": _round(figures.tokens_per_word),
                    "ratio": _round(figures.tokens / first_tokens if first_tokens else None),
                    "superwords": superword,
                }
            )
    return rows


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def run(args: argparse.Namespace) -> int:
    """Run ``bpe-studio eval``."""
    rows = _rows(args)
    columns = [
        "corpus",
        "tokenizer",
        "name",
        "bytes",
        "words",
        "tokens",
        "bytes_per_token",
        "tokens_per_word",
        "ratio",
        "superwords",
    ]
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    if args.csv:
        writer = csv.DictWriter(sys.stdout, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        return 0
    titles = ["corpus", "tokenizer", "bytes", "words", "tokens", "bytes/token", "tokens/word", "× first"]
    # The table names each tokenizer (a superword one says so); JSON/CSV add its path and the flag.
    shown = [c for c in columns if c not in ("tokenizer", "superwords")]
    table = [titles] + [
        # A file or tokenizer name's control characters as codes (a tab or newline would break the table).
        [_cell(row[c]) if c not in ("corpus", "name") else control_label(row[c], keep="") for c in shown]
        for row in rows
    ]
    for line, row in zip(table[1:], rows, strict=True):
        if row["superwords"]:
            line[1] += " (superwords)"
    widths = [max(len(line[i]) for line in table) for i in range(len(shown))]
    for line in table:
        cells = [cell.ljust(widths[i]) if i < 2 else cell.rjust(widths[i]) for i, cell in enumerate(line)]
        print("  ".join(cells).rstrip())
    return 0
