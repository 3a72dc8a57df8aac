"""``bpe-studio decode``: token ids back to text."""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

from ..engine import UnknownTokenIdError
from .common import CliError, add_tokenizer_options, no_writes
from .loading import load_tokenizer

# Ids may be separated by spaces, commas or newlines, and wrapped in brackets (a JSON list).
_SEPARATORS = re.compile(r"[\s,\[\]]+")


def register(subparsers: Any) -> None:
    """Add the ``decode`` subcommand."""
    p = subparsers.add_parser(
        "decode",
        help="decode token ids to text",
        description="Decode token ids with a tokenizer. Ids come from the arguments or standard input, "
        "separated by spaces or commas (a JSON list works too). Invalid UTF-8 is shown as U+FFFD.",
    )
    add_tokenizer_options(p)
    p.add_argument("ids", nargs="*", metavar="IDS", help="token ids (default: read from standard input)")
    p.add_argument("--bytes", action="store_true", help="write the raw bytes instead of text")
    p.add_argument("-n", "--no-newline", action="store_true", help="do not end the output with a newline")
    p.set_defaults(handler=run, plan=no_writes)  # prints only: writes no file


def parse_ids(texts: list[str]) -> list[int]:
    """Token ids from command-line words or input text.

    Example:
        >>> parse_ids(["[15496,", "995]", "0"])
        [15496, 995, 0]
    """
    ids: list[int] = []
    for word in _SEPARATORS.split(" ".join(texts)):
        if not word:
            continue
        try:
            ids.append(int(word))
        except ValueError:
            raise CliError(f"{word!r} is not a token id; give integers such as: 15496 995") from None
    return ids


def run(args: argparse.Namespace) -> int:
    """Run ``bpe-studio decode``."""
    tok = load_tokenizer(
        args.tokenizer,
        pattern=args.pattern,
        decode_only=True,
        download=args.download,
        special_tokens=args.special_token,
    )
    ids = parse_ids(args.ids if args.ids else [sys.stdin.read()])
    try:
        data = tok.decode_bytes(ids)
    except UnknownTokenIdError as exc:
        raise CliError(str(exc)) from None
    end = b"" if args.no_newline else b"\n"
    if args.bytes:
        sys.stdout.flush()
        sys.stdout.buffer.write(data + end)
        sys.stdout.buffer.flush()
    else:
        sys.stdout.write(data.decode("utf-8", errors="replace") + end.decode())
    return 0
