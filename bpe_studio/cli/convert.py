"""``bpe-studio convert``: write a tokenizer in another format, then prove the result encodes the same."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..engine import FORMATS, FormatError, Tokenizer, detect_format, load, save
from ..engine.formats import save_targets, source_files
from ..engine.formats.hf import not_carried_over
from ..engine.formats.tiktoken_format import sidecar_path
from ..engine.preflight import check_outputs
from .common import EXIT_FAILURE, CliError, text_arg
from .encode import load_tokenizer
from .signals import stoppable
from .warn import print_format_warnings

#: Text the converted tokenizer must encode exactly as the original: contractions, whitespace runs, digits,
#: punctuation, accents, several scripts, emoji and control characters (special tokens are added to it).
SAMPLE_TEXT = (
    "Hello, world! It's 2024: we'll see -- they've said \"naïve café\" costs $3.14 (or 1,000,000 yen).\n"
    "  Indented  by two,\tthen a tab;   three spaces\n\n\nand blank lines.\r\nWindows line\r\n"
    "Ünïcödé: ΑΒΓ δεζ, абв где, עברית, العربية, हिन्दी, 日本語のテキスト, 한국어, ไทย 🙃😀👍🏽 ½ ² ٣\n"
    "CamelCaseWords HTTPServer snake_case kebab-case URLs https://example.com/a?b=c&d=e#f emails a@b.co\n"
    "0000 12345678 3.14159e-10 0x1F  'S 'LL 'Ve ''' \u200b\u00a0\u3000\x0b\x0c end"
)


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
    p.add_argument(
        "--sample-file", type=Path, metavar="F", help="also check that this UTF-8 file encodes the same"
    )
    p.set_defaults(handler=stoppable(run))


def sample_texts(tok: Tokenizer, extra: str | None = None) -> list[str]:
    """The texts a conversion is checked on: the sample with the special tokens woven in, and ``extra``."""
    specials = sorted(tok.special_tokens, key=tok.special_tokens.__getitem__)
    woven = SAMPLE_TEXT + "".join(f" {s}x{s}\n" for s in specials) + "".join(specials)
    return [woven, *([extra] if extra else [])]


def _first_difference(a: Sequence[int], b: Sequence[int]) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))


def _check(name: str, expected: list[int], got: list[int]) -> None:
    if got != expected:
        at = _first_difference(expected, got)
        raise CliError(
            f"{name} encodes the sample differently from the original (first difference at token {at}: "
            f"{expected[at : at + 5]} vs {got[at : at + 5]}); the output format cannot represent this "
            "tokenizer exactly; keep the original or choose another format",
            EXIT_FAILURE,
        )


def verify_elsewhere(tok: Tokenizer, path: Path, fmt: str, texts: list[str]) -> list[str]:
    """Check the written file in the library it is meant for, when installed; returns the libraries used."""
    used: list[str] = []
    if fmt == "hf":
        try:
            import tokenizers
        except ImportError:
            return used
        hf_tokenizer: Any = tokenizers.Tokenizer.from_file(str(path))
        for text in texts:
            _check(f"{path} (in tokenizers)", tok.encode(text), hf_tokenizer.encode(text).ids)
        used.append("tokenizers")
    elif fmt == "tiktoken":
        try:
            import tiktoken
            from tiktoken.load import load_tiktoken_bpe
        except ImportError:
            return used
        # An empty TIKTOKEN_CACHE_DIR makes tiktoken read the file directly and cache nothing.
        before = os.environ.get("TIKTOKEN_CACHE_DIR")
        os.environ["TIKTOKEN_CACHE_DIR"] = ""
        try:
            ranks = load_tiktoken_bpe(str(path))
        finally:
            if before is None:
                del os.environ["TIKTOKEN_CACHE_DIR"]
            else:
                os.environ["TIKTOKEN_CACHE_DIR"] = before
        try:
            encoding: Any = tiktoken.Encoding(
                name=path.stem,
                pat_str=tok.pattern,
                mergeable_ranks=ranks,
                special_tokens=dict(tok.special_tokens),
            )
        except ValueError as exc:  # e.g. a regex tiktoken's engine does not accept
            raise CliError(f"{path}: tiktoken cannot use this tokenizer ({exc})", EXIT_FAILURE) from None
        for text in texts:
            ids = tok.encode(text, add_special_tokens=False)  # tiktoken has no BOS/EOS template
            _check(f"{path} (in tiktoken)", ids, encoding.encode(text, allowed_special="all"))
        used.append("tiktoken")
    return used


def _prepare_output(source: str, output: str, fmt: str) -> Path:
    """Check the files to write against the files read (never the same file) and that they can be written;
    ``DIR/`` (a trailing slash) names a folder to write into, created if missing."""
    into_folder = output.endswith(("/", os.sep))
    target = Path(output)
    written = save_targets(target, format=fmt, folder=True if into_folder else None)
    try:
        read = source_files(source)
        new_folders = {"OUTPUT"} if into_folder or fmt == "gpt2" else set()
        check_outputs(
            [("OUTPUT", f) for f in written],
            inputs=[("the input tokenizer file", f) for f in read],
            new_folders=new_folders,
        )
    except (OSError, ValueError) as exc:
        raise CliError(str(exc)) from None
    if into_folder:
        try:
            target.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CliError(f"OUTPUT: cannot create folder {target} ({exc.strerror or exc})") from None
    return target


def run(args: argparse.Namespace) -> int:
    """Run ``bpe-studio convert``."""
    tok = load_tokenizer(args.input, pattern=args.pattern)
    extra = None
    if args.sample_file is not None:
        try:
            extra = args.sample_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CliError(f"--sample-file: {args.sample_file}: {exc}") from None
    output = _prepare_output(args.input, args.output, args.format)
    try:
        with print_format_warnings():  # e.g. a BOS/EOS template the output format cannot store
            written = save(tok, output, format=args.format)
    except FormatError as exc:
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
    texts = sample_texts(tok, extra)
    try:
        again = load(written)
    except FormatError as exc:
        raise CliError(f"the written file does not load: {exc}", EXIT_FAILURE) from None
    for text in texts:
        # A template (BOS/EOS) that the output format cannot store was reported by save()'s warning.
        kept = again.template is not None
        _check(str(written), tok.encode(text, add_special_tokens=kept), again.encode(text))
    also = verify_elsewhere(tok, written, args.format, texts)
    files = [written]
    if args.format == "tiktoken":
        files.append(sidecar_path(written))
    checked = sum(len(t) for t in texts)
    where = f" and in {' and '.join(also)}" if also else ""
    print(
        f"converted {args.input} to {args.format}: {', '.join(str(f) for f in files)}\n"
        f"{tok.vocab_size:,} tokens, {len(tok.merges):,} merges, special tokens: {len(tok.special_tokens)}; "
        f"re-loaded and checked on {checked:,} characters of sample text{where}: identical ids"
    )
    return 0
