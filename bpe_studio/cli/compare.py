"""``bpe-studio compare A B --text T``: two tokenizers on the same text, the figures of the app's Compare tab.

Both tokenizers encode the text (special tokens recognised, as in the Compare tab); the command prints each
one's token count and compression, which uses fewer tokens, how many of A's tokens cover the same bytes as one
of B's, and the first merge where the two merge lists differ. The figures come from
:mod:`bpe_studio.engine.encoding.analysis`, as the app's do.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from ..engine import FormatError, Tokenizer, detect_format
from ..engine.encoding.analysis import (
    Comparison,
    Compression,
    compare,
    plain_token,
    same_tokenizer,
    shared_vocab,
)
from ..engine.formats import display_names
from ..engine.notation import control_label, json_text
from .common import (
    CliError,
    add_download_option,
    add_pattern_option,
    add_special_token_option,
    add_text_options,
    no_writes,
    read_text,
)
from .loading import load_tokenizer
from .signals import stoppable


def register(subparsers: Any) -> None:
    """Add the ``compare`` subcommand."""
    p = subparsers.add_parser(
        "compare",
        help="compare two tokenizers on a text (token counts, shared tokens, first differing merge)",
        description="Encode one text with two tokenizers (any formats; special tokens recognised) and print "
        "the figures of the app's Compare tab: each one's token count and compression, how many tokens "
        "they share, and the first merge where their merge lists differ.",
    )
    p.add_argument("a", metavar="A", help="first tokenizer file or folder")
    p.add_argument("b", metavar="B", help="second tokenizer file or folder")
    add_text_options(p, required=True, purpose="the text both tokenizers encode")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    add_pattern_option(p, "--pattern-a", of=" of A")
    add_pattern_option(p, "--pattern-b", of=" of B")
    add_special_token_option(p, "--special-token-a", of=" of A")
    add_special_token_option(p, "--special-token-b", of=" of B")
    add_download_option(p)
    p.set_defaults(handler=stoppable(run), plan=no_writes)  # prints only: writes no file


def _format_of(path: str) -> str:
    try:
        return detect_format(path)
    except (FormatError, OSError) as exc:  # the file loaded a moment ago, so this is not expected
        raise CliError(str(exc)) from None


def _figures(c: Compression) -> str:
    parts = [f"{c.tokens:,} tokens"]
    if c.bytes_per_token is not None:
        parts.append(f"{c.bytes_per_token:.2f} bytes/token")
    if c.tokens_per_word is not None:
        parts.append(f"{c.tokens_per_word:.2f} tokens/word")
    return ", ".join(parts)


def _side_json(path: str, name: str, fmt: str, tok: Tokenizer, c: Compression) -> dict[str, Any]:
    return {
        "path": path,
        "name": name,
        "format": fmt,
        "vocab_size": tok.vocab_size,
        "merges": len(tok.merges),
        "tokens": c.tokens,
        "bytes_per_token": c.bytes_per_token,
        "chars_per_token": c.chars_per_token,
        "tokens_per_word": c.tokens_per_word,
    }


def to_json(
    found: Comparison,
    a: tuple[str, str, Tokenizer],
    b: tuple[str, str, Tokenizer],
    *,
    same: bool,
    names: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The figures as a JSON-ready dict (``a`` and ``b``: path, format and tokenizer of each side; ``names``:
    their :func:`~bpe_studio.engine.formats.display_names`, by default made from the paths)."""
    name_a, name_b = names if names is not None else display_names([a[0], b[0]])
    diff = found.merges

    def merge(pair: tuple[bytes, bytes] | None) -> list[str] | None:
        return None if pair is None else [p.decode("utf-8", errors="backslashreplace") for p in pair]

    return {
        "text": {"characters": found.a.characters, "bytes": found.a.bytes, "words": found.a.words},
        "a": _side_json(a[0], name_a, a[1], a[2], found.a),
        "b": _side_json(b[0], name_b, b[1], b[2], found.b),
        "shared_tokens": found.shared,
        "same_split": found.agree,
        "same_tokenizer": same,
        "same_pattern": found.same_pattern,
        "shared_vocab": shared_vocab(a[2], b[2]),
        "merges": {
            "shared": diff.shared,
            "first_difference": diff.first,
            "a_merge": merge(diff.a_merge),
            "b_merge": merge(diff.b_merge),
        },
    }


def to_text(
    found: Comparison,
    a: tuple[str, str, Tokenizer],
    b: tuple[str, str, Tokenizer],
    *,
    same: bool,
    names: Sequence[str] | None = None,
) -> str:
    """The figures for people: the Compare tab's sentences, and each side's numbers (each side shown by its
    name, ``names`` as for :func:`to_json`, with its path when that says more)."""
    t = found.a
    lines = [f"text: {t.characters:,} characters, {t.bytes:,} bytes, {t.words:,} words"]
    shown = names if names is not None else display_names([a[0], b[0]])
    for side, name, (path, fmt, tok), figures in (("A", shown[0], a, found.a), ("B", shown[1], b, found.b)):
        size = f"{tok.vocab_size:,} tokens, {len(tok.merges):,} merges"
        where = f"{path}, " if path != name else ""
        lines.append(f"{side}: {name} ({where}{fmt}, {size}): {_figures(figures)}")
    lines.append(found.describe_counts())
    merges = found.merges.describe(token=plain_token)
    if same:
        merges = "A and B are the same tokenizer. " + merges
    if not found.same_pattern:
        merges += " Their pre-tokenization patterns differ too."
    lines.append(merges)
    shared = shared_vocab(a[2], b[2])
    ordinary = a[2].vocab_size - len(a[2].special_tokens)
    lines.append(f"{shared:,} of A's {ordinary:,} ordinary tokens are also tokens of B.")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Run ``bpe-studio compare``."""
    text = read_text(args)
    assert text is not None  # the options are required
    tok_a, tok_b = (
        load_tokenizer(
            path,
            pattern=pattern,
            option=side,
            pattern_option=f"--pattern-{side.lower()}",
            download=args.download,
            special_tokens=specials,
            special_option=f"--special-token-{side.lower()}",
        )
        for side, path, pattern, specials in (
            ("A", args.a, args.pattern_a, args.special_token_a),
            ("B", args.b, args.pattern_b, args.special_token_b),
        )
    )
    a = (str(args.a), _format_of(args.a), tok_a)
    b = (str(args.b), _format_of(args.b), tok_b)
    names = display_names([args.a, args.b])
    found = compare(a[2], b[2], text)
    same = same_tokenizer(a[2], b[2])
    if args.json:
        print(json_text(to_json(found, a, b, same=same, names=names)))  # control characters escaped
    else:
        print(
            control_label(to_text(found, a, b, same=same, names=names))
        )  # names and tokens must not drive the terminal
    return 0
