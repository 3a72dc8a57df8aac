"""The ``bpe-studio`` command: subcommands on the engine, or the desktop app when none is given.

Each subcommand lives in a module of this package with a ``register(subparsers)`` function that adds its
parser and sets ``handler`` to a function taking the parsed arguments and returning an exit code.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn

from .. import __version__
from . import convert as convert_command
from . import decode as decode_command
from . import encode as encode_command
from . import inspect_cmd as inspect_command
from . import train as train_command
from .common import EXIT_CANCELLED, EXIT_USAGE, CliError

# Subcommand modules, in the order `--help` lists them.
COMMANDS = [train_command, encode_command, decode_command, convert_command, inspect_command]


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line (``bpe-studio train: error: ...``), exit code 2.

    argparse prints the whole usage before the error; the one line says what is wrong, and ``--help``
    gives the usage. Subcommand parsers are of this class too (``add_subparsers`` uses the parent's class).
    """

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand registered."""
    parser = Parser(
        prog="bpe-studio",
        description="Train, inspect and use byte-level BPE tokenizers. Without a subcommand, opens the app.",
    )
    parser.add_argument("--version", action="version", version=f"bpe-studio {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMANDS:
        module.register(subparsers)
    return parser


def _is_cli(argv: Sequence[str]) -> bool:
    if not argv:
        return False
    names = {"-h", "--help", "--version"}
    for action in build_parser()._subparsers._group_actions:  # type: ignore[union-attr]
        names.update(getattr(action, "choices", None) or {})
    return argv[0] in names


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``bpe-studio`` console script; returns the exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if not _is_cli(args_list):
        from ..ui.app import main as gui_main  # Qt is imported only when the app is asked for

        return gui_main(args_list)
    parser = build_parser()
    args = parser.parse_args(args_list)
    try:
        code: int = args.handler(args)
        return code
    except CliError as exc:
        print(f"bpe-studio: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("\nbpe-studio: cancelled", file=sys.stderr)
        return EXIT_CANCELLED


__all__ = ["EXIT_USAGE", "build_parser", "main"]
