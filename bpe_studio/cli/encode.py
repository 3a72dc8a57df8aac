"""``bpe-studio encode``: text to token ids, or (``--show``) the text with its token boundaries coloured."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

from ..engine import FormatError, Tokenizer, TokenSpan, load
from ..engine.analysis import compression
from ..engine.humanize import error_message
from .common import CliError, text_arg

# Background colours (xterm 256-colour palette) that alternate between tokens; dark text on top stays legible.
_PALETTE = (153, 223, 194, 225, 229, 189)
# Tokens that hold only part of a character's bytes share that character; it is drawn in this colour.
_PARTIAL = 210
_RESET = "\x1b[0m"
# Without colours, tokens are separated by this character.
SEPARATOR = "│"
# Ids are written in lines of this many.
_IDS_PER_LINE = 1000


def load_tokenizer(
    path: str | os.PathLike[str], *, pattern: str | None = None, option: str = "--tokenizer"
) -> Tokenizer:
    """Load a tokenizer for a subcommand, turning file problems into one-line errors (naming ``option``).

    Example:
        >>> tok = load_tokenizer("out/tokenizer.json")  # doctest: +SKIP
    """
    try:
        return load(path, pattern=pattern)
    except FileNotFoundError:
        raise CliError(f"{option}: {path} does not exist; give a tokenizer file or folder") from None
    except (FormatError, ValueError) as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(error_message(exc, path=path)) from None


def register(subparsers: Any) -> None:
    """Add the ``encode`` subcommand."""
    p = subparsers.add_parser(
        "encode",
        help="encode text to token ids",
        description="Encode text with a tokenizer and print the token ids (or, with --show, the token "
        "boundaries). Reads TEXT, or --file, or standard input.",
    )
    p.add_argument(
        "--tokenizer", "-t", required=True, metavar="PATH", help="tokenizer file or folder (any format)"
    )
    p.add_argument("text", nargs="?", type=text_arg, metavar="TEXT", help="the text to encode")
    p.add_argument("--file", "-f", type=Path, metavar="F", help="encode this UTF-8 file instead (streamed)")
    p.add_argument("--show", action="store_true", help="print the text with coloured token boundaries")
    p.add_argument(
        "--color",
        choices=["auto", "always", "never"],
        default="auto",
        help=f"with --show: colours on a terminal (auto), always, or never ({SEPARATOR!r} between tokens)",
    )
    p.add_argument("--json", action="store_true", help="print the ids as a JSON list")
    p.add_argument(
        "--no-special", action="store_true", help="encode special tokens as ordinary text (encode_ordinary)"
    )
    p.set_defaults(handler=run)


def _source(args: argparse.Namespace) -> Iterable[str]:
    if args.text is not None and args.file is not None:
        raise CliError("give either TEXT or --file, not both")
    if args.text is not None:
        return [args.text]
    if args.file is not None:
        try:
            # newline="": keep "\r\n" as it is in the file, so the ids are those of the exact text.
            handle = open(args.file, encoding="utf-8", newline="")  # noqa: SIM115 - closed by _lines
        except FileNotFoundError:
            raise CliError(f"--file: {args.file} does not exist") from None
        except OSError as exc:
            raise CliError(f"--file: {error_message(exc, path=args.file)}") from None
        return _lines(handle, str(args.file))
    return _lines(sys.stdin, "standard input")


def _lines(handle: TextIO, name: str) -> Iterator[str]:
    try:
        with handle:
            yield from handle
    except UnicodeDecodeError as exc:
        raise CliError(f"{name}: not valid UTF-8 ({exc.reason}); encode UTF-8 text") from None


def render(text: str, spans: list[TokenSpan], *, color: bool) -> str:
    """The text with token boundaries marked: alternating background colours, or separators.

    Characters split across tokens (their bytes are in several tokens) are drawn once, in the partial colour.
    Newlines and tabs are shown as ``↵`` and ``→`` (a newline still ends the line).

    Example:
        >>> render("ab", [TokenSpan(0, 0, 1), TokenSpan(1, 1, 2)], color=False)
        'a│b'
    """
    parts: list[str] = []
    done = 0  # characters already drawn
    for index, span in enumerate(spans):
        if span.end <= done:
            continue  # a later piece of a character already drawn
        piece = text[max(span.start, done) : span.end]
        done = span.end
        shown = piece.replace("\t", "→").replace("\r", "␍").replace("\n", "↵\n")
        if color:
            colour = _PARTIAL if span.partial else _PALETTE[index % len(_PALETTE)]
            # Colour each line separately so that the background does not spill to the line's end.
            shown = "\n".join(
                f"\x1b[48;5;{colour}m\x1b[38;5;16m{line}{_RESET}" if line else ""
                for line in shown.split("\n")
            )
            parts.append(shown)
        else:
            parts.append(shown)
    return ("" if color else SEPARATOR).join(parts)


def run(args: argparse.Namespace) -> int:
    """Run ``bpe-studio encode``."""
    tok = load_tokenizer(args.tokenizer)
    special: dict[str, Any] = {"allowed_special": set(), "disallowed_special": ()} if args.no_special else {}
    chunks = _source(args)
    out = sys.stdout
    if args.show:
        text = "".join(chunks)
        spans = tok.encode_with_offsets(text, **special)
        color = args.color == "always" or (
            args.color == "auto" and out.isatty() and not os.environ.get("NO_COLOR")
        )
        out.write(render(text, spans, color=color) + "\n")
        figures = compression(text, len(spans))
        per_token = figures.bytes_per_token
        ratio = f", {per_token:.2f} bytes per token" if per_token is not None else ""
        out.write(f"{len(spans):,} tokens, {figures.characters:,} characters{ratio}\n")
        return 0
    ids = tok.encode_iterable(chunks, **special)
    if args.json:
        out.write(json.dumps(list(ids)) + "\n")
        return 0
    batch: list[str] = []
    first = True
    for i in ids:
        batch.append(str(i))
        if len(batch) == _IDS_PER_LINE:
            out.write(("" if first else " ") + " ".join(batch))
            first = False
            batch.clear()
    out.write(("" if first or not batch else " ") + " ".join(batch) + "\n")
    return 0
