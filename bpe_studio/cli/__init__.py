"""The ``bpe-studio`` command: subcommands on the engine, or the desktop app (the default command).

Each subcommand lives in a module of this package with a ``register(subparsers)`` function that adds its
parser and sets ``handler`` to a function taking the parsed arguments and returning an exit code, and
``plan`` to a function returning its :class:`~bpe_studio.engine.write_plan.WritePlan` (every file it will
write, against every file it reads), which :func:`main` checks before the handler runs. The app's
options are defined here too (the ``app`` command), so ``--help`` shows them and one parser reads every
command line; Qt is imported only when the app runs.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from .. import __version__
from ..engine.notation import control_label
from .common import EXIT_CANCELLED, EXIT_FAILURE, EXIT_USAGE, CliError, check_plan, text_arg

TYPE_CHECKING = False  # (typing is for type checkers only: see bpe_studio/__init__.py)
if TYPE_CHECKING:
    from typing import Any, NoReturn

#: Each command and the module of this package that registers it, in the order `--help` lists them.
#: A command line that names one imports that module only: the others' imports (training, corpora,
#: analysis) would cost a command such as ``inspect`` more than it takes to open a file.
COMMAND_MODULES = {
    "train": "train",
    "encode": "encode",
    "encode-corpus": "encode_corpus",
    "decode": "decode",
    "convert": "convert",
    "inspect": "inspect_cmd",
    "compare": "compare",
    "eval": "eval_cmd",
}


def command_module(name: str) -> ModuleType:
    """The module that registers a command (imported now).

    Example:
        >>> command_module("inspect").__name__
        'bpe_studio.cli.inspect_cmd'
    """
    return importlib.import_module(f"{__name__}.{COMMAND_MODULES[name]}")


#: The command run when none is given.
APP_COMMAND = "app"


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line (``bpe-studio train: error: ...``), exit code 2.

    argparse prints the whole usage before the error; the one line says what is wrong, and ``--help``
    gives the usage. Subcommand parsers are of this class too (``add_subparsers`` uses the parent's class).
    """

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {control_label(message, keep='')}\n")

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse's own asks shutil for the terminal's width, at every add_argument; shutil imports bz2 and
        # lzma (1.5 ms of every command, a fresh `inspect` is measured against the reference's load).
        # The same width from os (argparse keeps two columns free).
        # (Every HelpFormatter takes width; typeshed's protocol for formatter_class names only prog.)
        return self.formatter_class(prog=self.prog, width=terminal_columns() - 2)  # type: ignore[call-arg]


def terminal_columns() -> int:
    """``shutil.get_terminal_size().columns`` without importing shutil: ``$COLUMNS`` when a positive
    number, else the width of the terminal on standard output, else 80.

    Example:
        >>> terminal_columns() > 0
        True
    """
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


def _register_app(subparsers: Any) -> Parser:
    """Add the ``app`` command: the desktop app's options (see :mod:`bpe_studio.ui.app.app`)."""
    p: Parser = subparsers.add_parser(
        APP_COMMAND,
        help="open the desktop app (the default when no command is given)",
        description="Open BPE Studio's desktop app. `bpe-studio [OPTIONS] [CORPUS ...]` is the same.",
    )
    p.add_argument("corpus", nargs="*", type=Path, metavar="CORPUS", help="corpus files to train on")
    p.add_argument("--demo", action="store_true", help="train on the demo corpus that ships with Python")
    p.add_argument(
        "--screenshot",
        type=Path,
        metavar="PATH",
        help="save a PNG of the window to PATH (in an existing folder) and exit (with --demo: once trained)",
    )
    p.add_argument(
        "--tokenizer", type=Path, metavar="PATH", help="open a tokenizer file or folder, or a name (gpt2)"
    )
    p.add_argument(
        "--text", type=text_arg, default="", metavar="TEXT", help="text for the playground (with --tokenizer)"
    )
    p.add_argument(
        "--download",
        action="store_true",
        help="with --tokenizer NAME (cl100k_base, o200k_base, p50k_base, r50k_base) not in tiktoken's cache: "
        "download it from OpenAI (checked against its published SHA-256) into that cache",
    )
    return p


def _build(only: str | None = None) -> tuple[Parser, list[str]]:
    """The parser and every command's name; with ``only`` (a command named on the command line), that
    command's parser alone is built (the names are all there, for messages)."""
    parser = Parser(
        prog="bpe-studio",
        description="Train, inspect and use byte-level BPE tokenizers. Without a command, opens the app.",
        formatter_class=argparse.RawDescriptionHelpFormatter,  # keeps the epilog's usage lines as they are
    )
    parser.add_argument("--version", action="version", version=f"bpe-studio {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        if only is None or only == name:
            command_module(name).register(subparsers)
    if only is None or only == APP_COMMAND:
        app = _register_app(subparsers)
        parser.epilog = (
            f"Without a command, the app opens; `{APP_COMMAND}` is the default:\n{app.format_usage()}"
        )
    return parser, [*COMMAND_MODULES, APP_COMMAND]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every command registered (the app's too).

    Example:
        >>> build_parser().parse_args(["app", "--demo"]).demo
        True
    """
    return _build()[0]


def _with_command(parser: Parser, names: Sequence[str], argv: list[str]) -> list[str]:
    """``argv`` with the command it runs first: the app unless a command is named.

    The first word is a command, an option (of the app, or ``--help``/``--version``), or a corpus file
    that exists (for the app); any other word is a mistyped command, refused with the closest name.
    """
    if argv and argv[0] in names:
        return argv
    if not argv or argv[0] in ("-h", "--help", "--version"):
        return argv if argv else [APP_COMMAND]
    first = argv[0]
    if first.startswith("-") or os.path.exists(first):
        return [APP_COMMAND, *argv]
    import difflib  # (only for a mistyped command)

    close = difflib.get_close_matches(first, names, n=1)
    word = ascii(first) if not first.isprintable() else repr(first)
    if close:
        parser.error(f"unknown command {word} (did you mean {close[0]!r}?)")
    parser.error(
        f"unknown command {word}; the commands are {', '.join(names)} (or give existing corpus files to "
        "open them in the app)"
    )


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """Parse a command line (without the program name); ``command`` is ``"app"`` when none is named.

    Example:
        >>> parse_args(["--demo"]).command
        'app'
    """
    words = list(argv)
    # A command named first: only its parser is built (and its module imported).
    parser, names = _build(words[0] if words and words[0] in (*COMMAND_MODULES, APP_COMMAND) else None)
    return parser.parse_args(_with_command(parser, names, words))


#: Exit code when stdout's reader closed the pipe: 128 + SIGPIPE, what a shell reports for tools killed by it.
EXIT_BROKEN_PIPE = 141


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``bpe-studio`` console script; returns the exit code."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.command == APP_COMMAND:
        from ..ui.app.startup import run_app as gui_main  # checks that Qt can start, then imports it

        return gui_main(args)
    try:
        check_plan(args)  # before any work: no file the command writes is one it reads
        code: int = args.handler(args)
        return code
    except CliError as exc:
        # One line, whatever it quotes (a file name, a special token): control characters as codes.
        print(f"bpe-studio: error: {control_label(str(exc), keep='')}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("\nbpe-studio: cancelled", file=sys.stderr)
        return EXIT_CANCELLED
    except OSError as exc:
        return _output_failed(exc)


#: The errors of a write that found no room: the disk (or its quota, or the largest file) is full.
_NO_ROOM = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def _output_failed(exc: OSError) -> int:
    """The exit code of a command whose output could not be written, after one line saying why; anything
    else than a reader that went away or a full disk is raised again (a bug, with its traceback).

    The reader went away (``bpe-studio encode ... | head``): stop quietly, as Unix tools do. Standard output
    then points at /dev/null, so that the final flush of what is left in its buffer does not fail again.
    """
    if not isinstance(exc, BrokenPipeError) and exc.errno not in _NO_ROOM:
        raise exc
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    if isinstance(exc, BrokenPipeError):
        return EXIT_BROKEN_PIPE
    where = f"{exc.filename}: " if exc.filename else ""
    print(
        f"bpe-studio: error: {where}the output could not be written: {exc.strerror}; free some space and "
        "run the command again",
        file=sys.stderr,
    )
    return EXIT_FAILURE


def run() -> NoReturn:
    """Entry point of the ``bpe-studio`` console script and of ``python -m bpe_studio``: :func:`main`, then
    the end of the process.

    A command's process ends without tearing the interpreter down, as mypy's does: freeing every object
    and module one by one took a tenth of an ``inspect`` of a 32k-piece model, and grows with what a
    command made (an encoded corpus's ids). Once :func:`main` has returned, the files a command wrote are
    closed, so what is left to do is the exit handlers (``atexit``: temporary files, pools) and the
    standard streams' buffers: both are done here, then ``os._exit``. The app, and a command that leaves a
    Python thread running, end the usual way (Qt's and the thread's own ending).
    """
    code = main()
    threading = sys.modules.get("threading")
    if "PySide6.QtCore" in sys.modules or (threading is not None and threading.active_count() > 1):
        sys.exit(code)
    import atexit

    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
    except OSError as exc:  # (what was left in the buffer: a reader gone, a full disk)
        code = _output_failed(exc) if code == 0 else code
    except ValueError:  # (the stream was closed: nothing to flush)
        pass
    try:  # noqa: SIM105 (not contextlib.suppress: a module more to import at every start)
        sys.stderr.flush()
    except (OSError, ValueError):  # (nowhere left to say anything)
        pass
    os._exit(code)


__all__ = ["EXIT_USAGE", "build_parser", "main", "parse_args", "run"]
