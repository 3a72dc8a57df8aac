"""``bpe-studio convert``: write a tokenizer in another format, then prove the result encodes the same."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings
from pathlib import Path
from typing import Any

from ..engine import FORMATS, FormatError, FormatWarning, detect_format
from ..engine.formats import sample_texts, save_plan, save_tokenizer, source_files
from ..engine.formats.hf import not_carried_over
from ..engine.formats.saving import other_readers
from ..engine.write_plan import WritePlan
from .common import EXIT_FAILURE, CliError, add_special_token_option, text_arg
from .loading import load_tokenizer
from .signals import stoppable
from .warn import print_format_warnings


def register(subparsers: Any) -> None:
    """Add the ``convert`` subcommand."""
    p = subparsers.add_parser(
        "convert",
        help="convert a tokenizer to another file format",
        description="Load a tokenizer (any format), write it in another, re-load the result and check that "
        "it encodes a sample text identically (and in tokenizers / tiktoken, when installed).",
    )
    p.add_argument("input", metavar="INPUT", help="tokenizer file or folder (any format)")
    p.add_argument("--to", required=True, choices=FORMATS, dest="format", help="the output format")
    p.add_argument(
        "output",
        metavar="OUTPUT",
        help="output file (a folder for gpt2; an existing folder, or one written DIR/, gets tokenizer.json / "
        "tokenizer.tiktoken)",
    )
    p.add_argument(
        "--pattern",
        type=text_arg,
        default=None,
        help="pattern of an input that does not store one (.tiktoken without sidecar): preset or regex",
    )
    add_special_token_option(p)
    p.add_argument(
        "--sample-file", type=Path, metavar="F", help="also check that this UTF-8 file encodes the same"
    )
    p.set_defaults(handler=stoppable(run), plan=plan)


def plan(args: argparse.Namespace) -> WritePlan:
    """What ``convert`` writes (the format's files, their temporary files, the staging folder) and reads
    (the input tokenizer's files, ``--sample-file``). ``DIR/`` (a trailing slash) names a folder to write
    into, created if missing."""
    output: str = args.output
    into_folder = output.endswith(("/", os.sep))
    writes = WritePlan()
    save_plan(writes, "OUTPUT", output, format=args.format, folder=True if into_folder else None)
    if into_folder or args.format == "gpt2":
        writes.allow_new_folder("OUTPUT")
    with contextlib.suppress(OSError, ValueError):  # FormatError too: run() reports an unreadable input
        for path in source_files(args.input):
            writes.read("the input tokenizer file", path)
    if args.sample_file is not None:
        writes.read("the sample file (--sample-file)", args.sample_file)
    return writes


def _prepare_output(output: str) -> Path:
    """The target, its folder created for ``DIR/`` (the write plan was checked before the command ran)."""
    target = Path(output)
    if output.endswith(("/", os.sep)):
        try:
            target.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CliError(f"OUTPUT: cannot create folder {target} ({exc.strerror or exc})") from None
    return target


def run(args: argparse.Namespace) -> int:
    """Run ``bpe-studio convert``."""
    tok = load_tokenizer(args.input, pattern=args.pattern, special_tokens=args.special_token)
    extra = None
    if args.sample_file is not None:
        try:
            extra = args.sample_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CliError(f"--sample-file: {args.sample_file}: {exc}") from None
    output = _prepare_output(args.output)
    try:
        with print_format_warnings():  # e.g. a BOS/EOS template the output format cannot store
            # Written into a staging folder, loaded back and compared on the sample, then renamed into place.
            report = save_tokenizer(tok, output, format=args.format, verify_texts=sample_texts(tok, extra))
            # What transformers, tokenizers and tiktoken will do with the files alone (no sidecar).
            for note in other_readers(tok, args.format):
                warnings.warn(f"{report.path}: {note}", FormatWarning, stacklevel=1)
    except FormatError as exc:  # also VerificationError: the file does not encode the sample identically
        raise CliError(str(exc), EXIT_FAILURE) from None
    except OSError as exc:  # checked writable above, so not the user's mistake (e.g. a full disk)
        raise CliError(
            f"{args.output}: cannot write ({exc.strerror or exc}); nothing was changed there",
            EXIT_FAILURE,
        ) from None
    if detect_format(args.input) == "hf":  # say what the target does not keep, one line each
        source = Path(args.input)
        for line in not_carried_over(
            source / "tokenizer.json" if source.is_dir() else source, tok, args.format
        ):
            print(f"bpe-studio: warning: {args.input}: {line}", file=sys.stderr)
    files = report.files if args.format != "gpt2" else (report.path,)
    also = [name for name in report.checked_in if name != "bpe_studio"]
    where = f" and in {' and '.join(also)}" if also else ""
    print(
        f"converted {args.input} to {args.format}: {', '.join(str(f) for f in files)}\n"
        f"{tok.vocab_size:,} tokens, {len(tok.merges):,} merges, special tokens: {len(tok.special_tokens)}; "
        f"re-loaded and checked on {report.checked_characters:,} characters of sample text{where}: "
        "identical ids"
    )
    return 0
