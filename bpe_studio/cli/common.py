"""Pieces shared by the subcommands: errors, exit codes and the ``--text``/``--file`` options (numbers and
messages for people are formatted by :mod:`bpe_studio.engine.humanize`, shared with the app)."""

from __future__ import annotations

import argparse
import sys

TYPE_CHECKING = False  # (typing is for type checkers only: see bpe_studio/__init__.py)

if TYPE_CHECKING:  # (imported by the commands that write: write_plan imports dataclasses, 5-6 ms)
    from typing import Any

    from ..engine.write_plan import WritePlan

#: A user mistake (bad option, missing file, invalid input).
EXIT_USAGE = 2
#: A run failed for another reason (e.g. a worker process died).
EXIT_FAILURE = 1
#: The user pressed Ctrl-C (128 + SIGINT, as shells report it).
EXIT_CANCELLED = 130


class CliError(Exception):
    """A problem to report as one line, without a traceback."""

    def __init__(self, message: str, exit_code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def no_writes(args: argparse.Namespace) -> WritePlan:
    """The write plan of a command that writes no file (it prints to standard output only)."""
    from ..engine.write_plan import WritePlan

    return WritePlan()


def check_plan(args: argparse.Namespace) -> None:
    """Check the command's write plan (its ``plan`` default, set by ``register``) before it runs: every file
    it will write, sidecars and temporary files included, against every file it reads.

    Raises:
        CliError: One line naming the files (exit 2); nothing was written.
    """
    if args.plan is no_writes:
        return  # an empty plan: nothing to check (and inspect, encode... need not import write_plan)
    try:
        args.plan(args).check()
    except ValueError as exc:
        raise CliError(str(exc)) from None


def add_text_options(parser: argparse.ArgumentParser, *, required: bool, purpose: str) -> None:
    """Add ``--text T`` and ``--file F`` (one of them, ``-`` reads standard input) to a subcommand.

    Example:
        >>> p = argparse.ArgumentParser()
        >>> add_text_options(p, required=True, purpose="the text to encode")
        >>> read_text(p.parse_args(["--text", "hi"]))
        'hi'
    """
    group = parser.add_mutually_exclusive_group(required=required)
    group.add_argument("--text", metavar="T", type=text_arg, help=purpose)
    group.add_argument(
        "--file", "-f", metavar="F", help="read that text from a UTF-8 file ('-': standard input)"
    )


def read_text(args: argparse.Namespace) -> str | None:
    """The text given by :func:`add_text_options`' options (None if neither was given).

    Raises:
        CliError: The file cannot be read or is not UTF-8 (exit 2, a user mistake).
    """
    if args.text is not None:
        return str(args.text)
    if args.file is None:
        return None
    name = "standard input" if args.file == "-" else str(args.file)
    try:
        if args.file == "-":
            return sys.stdin.read()
        # newline="": keep "\r\n" as it is in the file, so the figures are those of the exact text.
        with open(args.file, encoding="utf-8", newline="") as handle:
            return handle.read()
    except FileNotFoundError:
        raise CliError(f"--file: {args.file} does not exist") from None
    except UnicodeDecodeError as exc:
        raise CliError(
            f"--file: {name}: not valid UTF-8 ({exc.reason} at byte {exc.start:,}); give UTF-8 text"
        ) from None
    except OSError as exc:
        from ..engine.humanize import error_message  # (only for a message: it imports the events, 3 ms)

        raise CliError(f"--file: {error_message(exc, path=args.file)}") from None


#: What ``-t/--tokenizer`` accepts, for its help.
TOKENIZER_HELP = "tokenizer file or folder (any format), or a name: gpt2, cl100k_base, o200k_base, ..."


def add_tokenizer_options(parser: argparse.ArgumentParser, *, repeat: bool = False, help: str = "") -> None:
    """Add ``-t/--tokenizer PATH`` and the options that complete a tokenizer file: ``--pattern``,
    ``--special-token`` (both for a bare ``.tiktoken`` file, see :func:`add_pattern_option` and
    :func:`add_special_token_option`) and ``--download``: the same options for every subcommand that takes
    ``-t``.

    With ``repeat``, ``-t`` may be given several times (``args.tokenizers``), and ``--pattern`` and
    ``--special-token`` belong to the ``-t`` before them (``args.patterns[i]``, ``args.special_tokens[i]``
    for ``args.tokenizers[i]``): ``-t llama3.tiktoken --pattern cl100k -t gpt2`` leaves GPT-2's own pattern
    alone. Without it: ``args.tokenizer``, ``args.pattern`` and ``args.special_token``.

    Example:
        >>> p = argparse.ArgumentParser()
        >>> add_tokenizer_options(p, repeat=True)
        >>> a = p.parse_args(["-t", "a.tiktoken", "--pattern", "cl100k", "-t", "gpt2"])
        >>> a.tokenizers, a.patterns
        (['a.tiktoken', 'gpt2'], ['cl100k', None])
    """
    what = help or TOKENIZER_HELP
    if not repeat:
        parser.add_argument("--tokenizer", "-t", required=True, metavar="PATH", help=what)
        add_pattern_option(parser)
        add_special_token_option(parser)
    else:
        parser.add_argument(
            "--tokenizer",
            "-t",
            action=_NewTokenizer,
            required=True,
            dest="tokenizers",
            metavar="PATH",
            help=what + " (repeat for several)",
        )
        parser.add_argument(
            "--pattern",
            action=_OfLastTokenizer,
            type=text_arg,
            dest="patterns",
            metavar="P",
            help="pre-tokenization pattern of the -t before it: gpt2, cl100k, o200k, a model's (llama3, "
            "qwen2, qwen35, nemo) or a regex; needed for a .tiktoken file without sidecar that is not one of "
            "OpenAI's (for other files it replaces the stored pattern)",
        )
        parser.add_argument(
            "--special-token",
            action=_OfLastTokenizer,
            type=special_token_arg,
            dest="special_tokens",
            metavar="TOKEN[=ID]",
            help="a special token of the -t before it, a .tiktoken file (which names none of its own), with "
            "its id, or alone for the next id after the ranks and the special tokens before it; repeat for "
            "several, e.g. --special-token '<|begin_of_text|>=128000'",
        )
    add_download_option(parser)


class _NewTokenizer(argparse.Action):
    """``-t PATH`` when repeatable: a new tokenizer, with no pattern or special tokens of its own yet."""

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any, option: Any = None
    ) -> None:
        # New lists on every parse: argparse would share a list default between parses.
        namespace.tokenizers = [*(getattr(namespace, "tokenizers", None) or []), values]
        namespace.patterns = [*(getattr(namespace, "patterns", None) or []), None]
        namespace.special_tokens = [*(getattr(namespace, "special_tokens", None) or []), []]


class _OfLastTokenizer(argparse.Action):
    """``--pattern`` or ``--special-token`` when ``-t`` is repeatable: an option of the ``-t`` before it."""

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any, option: Any = None
    ) -> None:
        paths = getattr(namespace, "tokenizers", None) or []
        if not paths:
            parser.error(f"{option}: give it after the -t/--tokenizer it is for (-t PATH {option} ...)")
        if self.dest == "patterns":
            if namespace.patterns[-1] is not None:
                parser.error(f"{option}: given twice for -t {paths[-1]}; give one pattern per tokenizer")
            namespace.patterns = [*namespace.patterns[:-1], values]
        else:
            *earlier, last = namespace.special_tokens
            namespace.special_tokens = [*earlier, [*last, values]]


def add_pattern_option(parser: argparse.ArgumentParser, flag: str = "--pattern", *, of: str = "") -> None:
    """Add ``--pattern`` (a preset or regex) for a tokenizer file that does not store its pattern.

    Example:
        >>> p = argparse.ArgumentParser()
        >>> add_pattern_option(p)
        >>> p.parse_args(["--pattern", "cl100k"]).pattern
        'cl100k'
    """
    parser.add_argument(
        flag,
        type=text_arg,
        default=None,
        metavar="P",
        help=f"pre-tokenization pattern{of}: gpt2, cl100k, o200k, a model's (llama3, qwen2, qwen35, nemo) "
        "or a regex; needed for a .tiktoken file without sidecar that is not one of OpenAI's (for other "
        "files it replaces the stored pattern)",
    )


def add_special_token_option(
    parser: argparse.ArgumentParser, flag: str = "--special-token", *, of: str = ""
) -> None:
    """Add ``--special-token TOKEN=ID`` (or ``TOKEN``: the next free id), repeatable, for a ``.tiktoken``
    file, which names no special tokens of its own (Llama 3's ``<|begin_of_text|>``).

    Example:
        >>> p = argparse.ArgumentParser()
        >>> add_special_token_option(p)
        >>> p.parse_args(["--special-token", "<|begin_of_text|>=128000", "--special-token", "<|x|>"])
        Namespace(special_token=[('<|begin_of_text|>', 128000), ('<|x|>', None)])
    """
    parser.add_argument(
        flag,
        action="append",
        type=special_token_arg,
        default=[],
        metavar="TOKEN[=ID]",
        help=f"a special token{of} for a .tiktoken file (which names none of its own), with its id, or alone "
        "for the next id after the ranks and the special tokens before it; repeat for several, e.g. "
        "--special-token '<|begin_of_text|>=128000'. Recognised in the text like other formats' special "
        "tokens",
    )


def special_token_arg(value: str) -> tuple[str, int | None]:
    """``argparse`` type of ``--special-token``: ``TOKEN=ID`` or ``TOKEN``, as ``(token, id or None)``.

    Example:
        >>> special_token_arg("<|eot_id|>=128009")
        ('<|eot_id|>', 128009)
    """
    from ..engine.formats.tiktoken_format import parse_special_token

    try:
        return parse_special_token(text_arg(value))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_download_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--download``: fetch an OpenAI encoding or a Hugging Face model's tokenizer named as the tokenizer
    when it is not cached."""
    parser.add_argument(
        "--download",
        action="store_true",
        help="for a tokenizer named cl100k_base, o200k_base, p50k_base or r50k_base that is not in "
        "tiktoken's cache: download it from OpenAI (checked against its published SHA-256) into that cache; "
        "for a Hugging Face model id (ORG/NAME) not in the Hugging Face cache: download only its tokenizer "
        "files into that cache (HF_TOKEN for gated models, HF_ENDPOINT for a mirror); within 60 s in all "
        "(BPE_STUDIO_DOWNLOAD_TIMEOUT=SECONDS for another deadline)",
    )


def text_arg(value: str) -> str:
    """``argparse`` type of every option that takes text: refuses text that is not valid UTF-8.

    Python reads the command line's bytes as UTF-8 and keeps a byte that is not (``$'\\xff'``) as a
    lone surrogate, which no encoder, file or tokenizer accepts; refusing it here gives one line, exit 2.

    Example:
        >>> text_arg("café")
        'café'
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raw = value.encode("utf-8", "surrogateescape")
        raise argparse.ArgumentTypeError(
            f"{raw!r} is not valid UTF-8 text; give the text in UTF-8 (check the terminal's encoding, "
            "or the script that builds the command)"
        ) from None
    return value


def cluster_arg(value: str) -> str:
    """``argparse`` type of ``--cluster``: ``local:N`` or a scheduler address, checked as the option is read.

    A scheduler address also checks ``$BPE_STUDIO_CLUSTER_TIMEOUT`` (the seconds to wait for it), so a
    mistake in either stops the command before any work, with exit code 2.

    Example:
        >>> cluster_arg("tcp://10.0.0.5:8786")
        'tcp://10.0.0.5:8786'
    """
    from ..engine.corpus.distributed import ClusterError, connect_timeout, parse_cluster

    try:
        spec = parse_cluster(value)
        if spec.address is not None:
            connect_timeout()
    except (ValueError, ClusterError) as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value
