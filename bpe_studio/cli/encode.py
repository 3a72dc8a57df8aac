"""``bpe-studio encode``: text to token ids, or (``--show``) the text with its token boundaries coloured."""

from __future__ import annotations

import argparse
import codecs
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from ..engine import Tokenizer, TokenSpan
from ..engine.encoding.analysis import compression
from ..engine.formats import TokenizerSource
from ..engine.notation import control_label
from .common import (
    CliError,
    add_tokenizer_options,
    no_writes,
    text_arg,
)
from .loading import load_tokenizer
from .signals import stoppable

# Background colours (xterm 256-colour palette) that alternate between tokens; dark text on top stays legible.
_PALETTE = (153, 223, 194, 225, 229, 189)
# Tokens that hold only part of a character's bytes share that character; it is drawn in this colour.
_PARTIAL = 210
_RESET = "\x1b[0m"
# Without colours, tokens are separated by this character.
SEPARATOR = "│"
# Ids are written in lines of this many.
_IDS_PER_LINE = 1000


def given_tokenizers(args: argparse.Namespace) -> list[tuple[TokenizerSource, Tokenizer]]:
    """The tokenizers of :func:`~.common.add_tokenizer_options`' options (one, or each ``-t`` of a command
    that repeats it), loaded with the pattern and special tokens given for them, each beside the
    :class:`~bpe_studio.engine.formats.TokenizerSource` a worker process loads it again from.

    Raises:
        CliError: A tokenizer cannot be loaded (one line naming the option, exit 2).
    """
    if hasattr(args, "tokenizers"):
        paths, patterns, specials = args.tokenizers, args.patterns, args.special_tokens
    else:
        paths, patterns, specials = [args.tokenizer], [args.pattern], [args.special_token]
    return [
        (
            TokenizerSource(os.fspath(path), pattern, tuple(special)),
            load_tokenizer(path, pattern=pattern, download=args.download, special_tokens=special),
        )
        for path, pattern, special in zip(paths, patterns, specials, strict=True)
    ]


def register(subparsers: Any) -> None:
    """Add the ``encode`` subcommand."""
    p = subparsers.add_parser(
        "encode",
        help="encode text to token ids",
        description="Encode text with a tokenizer and print the token ids (or, with --show, the token "
        "boundaries). Reads TEXT, or --file, or standard input.",
    )
    add_tokenizer_options(p)
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
    p.set_defaults(handler=stoppable(run), plan=no_writes)  # prints only: writes no file


def _source(args: argparse.Namespace) -> Iterable[str]:
    if args.text is not None and args.file is not None:
        raise CliError("give either TEXT or --file, not both")
    if args.text is not None:
        return [args.text]
    if args.file is not None:
        try:
            handle = open(args.file, "rb")  # noqa: SIM115 - closed by _blocks
        except FileNotFoundError:
            raise CliError(f"--file: {args.file} does not exist") from None
        except OSError as exc:
            from ..engine.humanize import error_message

            raise CliError(f"--file: {error_message(exc, path=args.file)}") from None
        return _blocks(handle, str(args.file), close=True)
    stdin = getattr(sys.stdin, "buffer", None)
    if stdin is None:  # a text stream without bytes below it (an embedding program's): already decoded
        return iter(lambda: sys.stdin.read(BLOCK_BYTES), "")
    return _blocks(stdin, "standard input", close=False)


#: Text is read and decoded in blocks of this many bytes, whatever its lines: memory stays flat.
BLOCK_BYTES = 1 << 20
#: The most characters the tokenizer may hold while it waits for the end of a token (bounds memory).
MAX_PENDING_CHARS = 64 << 20


def _blocks(handle: BinaryIO, name: str, *, close: bool) -> Iterator[str]:
    """Decode a byte stream as UTF-8, block by block: one decoding path for ``--file`` and standard input.

    The blocks are cut anywhere (inside a word, a ``"\\r\\n"`` or a special token): ``encode_iterable`` gives
    the ids of the whole text however it is cut. ``"\\r\\n"`` is kept as it is, so the ids are those of the
    exact bytes.
    """
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = 0  # bytes read so far
    try:
        while True:
            data = handle.read1(BLOCK_BYTES) if hasattr(handle, "read1") else handle.read(BLOCK_BYTES)
            held = len(decoder.getstate()[0])  # an incomplete character kept from the previous block
            try:
                text = decoder.decode(data, final=not data)
            except UnicodeDecodeError as exc:
                raise CliError(
                    f"{name}: not valid UTF-8 at byte offset {offset - held + exc.start:,} ({exc.reason}); "
                    "encode UTF-8 text"
                ) from None
            offset += len(data)
            if text:
                yield text
            if not data:
                return
    finally:
        if close:
            handle.close()


def _bounded(blocks: Iterable[str], name: str, given_out: Callable[[], int]) -> Iterator[str]:
    """Pass text blocks on to the tokenizer, refusing to let it hold too much text.

    ``encode_iterable`` holds back the text after the last certain token boundary: about one pre-token, as
    long as the longest pre-token. Text that never ends a pre-token (``/dev/zero``, a binary file) would make
    it grow without bound, so once ``MAX_PENDING_CHARS`` characters have gone in while no id came out
    (``given_out()``, the number of ids the caller has received, did not change), the command stops.
    """
    since_id = 0  # characters given to the tokenizer since it last gave an id
    last = given_out()
    for block in blocks:
        now = given_out()
        since_id = len(block) if now != last else since_id + len(block)
        last = now
        if since_id > MAX_PENDING_CHARS:
            raise CliError(
                f"{name}: more than {MAX_PENDING_CHARS:,} characters without the end of a token; "
                "encode text (not a device or a binary file), or cut such a run into smaller pieces"
            )
        yield block


def render(text: str, spans: list[TokenSpan], *, color: bool) -> str:
    """The text with token boundaries marked: alternating background colours, or separators.

    Characters split across tokens (their bytes are in several tokens) are drawn once, in the partial colour.
    Newlines and tabs are shown as ``↵`` and ``→`` (a newline still ends the line), other control characters
    in the app's notation (``<0x1B>``, ``<U+202E>``; :func:`~bpe_studio.engine.notation.control_label`).

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
        # Control characters (ESC, BEL, C1, bidi overrides) as codes: a token must not drive the terminal.
        shown = control_label(piece.replace("\t", "→").replace("\r", "␍")).replace("\n", "↵\n")
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
    ((_, tok),) = given_tokenizers(args)
    special: dict[str, Any] = {}
    if args.no_special:  # as encode_ordinary: special tokens are text, and no BOS/EOS template is added
        special = {"allowed_special": set(), "disallowed_special": (), "add_special_tokens": False}
    chunks = _source(args)
    name = "standard input" if args.file is None else str(args.file)
    out = sys.stdout
    if args.show:
        parts: list[str] = []
        size = 0
        for block in chunks:
            size += len(block)
            if size > MAX_PENDING_CHARS:
                raise CliError(
                    f"--show: {name} holds more than {MAX_PENDING_CHARS:,} characters, too many to show; "
                    "show a part of it (e.g. head -c 100000 FILE | bpe-studio encode --show -t TOKENIZER)"
                )
            parts.append(block)
        text = "".join(parts)
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
    # _bounded reads how many ids came out so far once per block: the loops below do nothing more per id.
    if args.json:
        collected: list[int] = []
        for i in tok.encode_iterable(_bounded(chunks, name, collected.__len__), **special):
            collected.append(i)
        out.write(json.dumps(collected) + "\n")
        return 0
    written = 0
    batch: list[str] = []
    ids = tok.encode_iterable(_bounded(chunks, name, lambda: written + len(batch)), **special)
    first = True
    for i in ids:
        batch.append(str(i))
        if len(batch) == _IDS_PER_LINE:
            out.write(("" if first else " ") + " ".join(batch))
            first = False
            written += len(batch)
            batch.clear()
    out.write(("" if first or not batch else " ") + " ".join(batch) + "\n")
    return 0
