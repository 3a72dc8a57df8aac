"""Pieces shared by the subcommands: errors, exit codes and number formatting."""

from __future__ import annotations

import argparse

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
    from ..engine.distributed import ClusterError, connect_timeout, parse_cluster

    try:
        spec = parse_cluster(value)
        if spec.address is not None:
            connect_timeout()
    except (ValueError, ClusterError) as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value
