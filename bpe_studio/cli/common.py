"""Pieces shared by the subcommands: errors and exit codes (numbers and messages for people are formatted
by :mod:`bpe_studio.engine.humanize`, shared with the app)."""

from __future__ import annotations

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
