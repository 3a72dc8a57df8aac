"""Pieces shared by the subcommands: errors, exit codes and number formatting."""

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


def human_bytes(n: float) -> str:
    """Format a byte count for people.

    Example:
        >>> human_bytes(1_500_000)
        '1.5 MB'
    """
    for unit in ("B", "kB", "MB", "GB"):
        if abs(n) < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    raise AssertionError("unreachable")  # pragma: no cover


def human_seconds(seconds: float) -> str:
    """Format a duration for people.

    Example:
        >>> human_seconds(75)
        '1m15s'
    """
    if seconds < 10:
        return f"{seconds:.1f}s"
    if seconds < 60:
        return f"{seconds:.0f}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
