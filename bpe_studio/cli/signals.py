"""Stopping a long-running subcommand on SIGINT, SIGTERM or SIGHUP, all three the same way.

Ctrl-C (SIGINT), ``timeout``/``kill``/systemd (SIGTERM) and a closed terminal (SIGHUP) all mean "stop
now". Python's default for SIGTERM and SIGHUP is to die on the spot, which skips every ``finally``: the
counting workers would keep running and temporary files would stay behind. :func:`stoppable` makes each of
them raise :class:`Stopped` in the main thread instead, so the run unwinds like after Ctrl-C (the engine
stops its workers, temporary files are removed), then prints one line and returns ``128 + signal``, the
code a shell reports for a process killed by that signal: 130 (SIGINT), 143 (SIGTERM), 129 (SIGHUP).

After the first signal the others are ignored until the command has returned, so a second Ctrl-C or a
``kill`` sent twice cannot interrupt the clean-up (every wait in it has a timeout).

Example:
    >>> @stoppable
    ... def run(args):
    ...     return 0
"""

from __future__ import annotations

import functools
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, TypeVar

#: The signals that stop a command: those present on this platform (Windows has no SIGHUP).
STOP_SIGNALS: tuple[signal.Signals, ...] = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)

_Handler = TypeVar("_Handler", bound=Callable[..., int])


class Stopped(KeyboardInterrupt):
    """A stop signal arrived. A ``KeyboardInterrupt``, so code that cleans up after Ctrl-C does here too."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        """``128 + signal``, as a shell reports it: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP.

        Example:
            >>> Stopped(signal.SIGTERM).exit_code
            143
        """
        return 128 + self.signum


def exit_code(signum: int) -> int:
    """The exit code of a command stopped by ``signum``.

    Example:
        >>> exit_code(signal.SIGINT)
        130
    """
    return 128 + signum


def cancelled_message(signum: int, *, tty: bool = False) -> str:
    """The line printed when ``signum`` stopped a command (Ctrl-C is the user's own: no name needed).

    Example:
        >>> cancelled_message(signal.SIGTERM)
        'bpe-studio: cancelled by SIGTERM'
    """
    if signum == signal.SIGINT:
        # On a terminal, "^C" is shown on the current line: start a fresh one.
        return ("\n" if tty else "") + "bpe-studio: cancelled"
    return f"bpe-studio: cancelled by {signal.Signals(signum).name}"


def _raise_stopped(signum: int, frame: FrameType | None) -> None:
    # Ignore the next ones: the clean-up this exception starts must run to its end.
    for other in STOP_SIGNALS:
        signal.signal(other, signal.SIG_IGN)
    raise Stopped(signum)


@contextmanager
def stop_signals_raise() -> Iterator[None]:
    """In the block, a stop signal raises :class:`Stopped` in the main thread; handlers are restored after.

    Outside the main thread (where Python cannot set handlers) this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, _raise_stopped) for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def stoppable(handler: _Handler) -> _Handler:
    """Wrap a subcommand's handler: a stop signal ends it cleanly with one line and exit ``128 + signal``.

    Example:
        >>> import argparse
        >>> @stoppable
        ... def run(args: argparse.Namespace) -> int:
        ...     return 0
        >>> run(argparse.Namespace())
        0

        In the CLI, ``parser.set_defaults(handler=stoppable(run))``.
    """

    @functools.wraps(handler)
    def run(*args: Any, **kwargs: Any) -> int:
        try:
            with stop_signals_raise():
                return handler(*args, **kwargs)
        except KeyboardInterrupt as exc:
            signum = exc.signum if isinstance(exc, Stopped) else signal.SIGINT
        print(cancelled_message(signum, tty=sys.stderr.isatty()), file=sys.stderr, flush=True)
        return exit_code(signum)

    return run  # type: ignore[return-value]


__all__ = ["STOP_SIGNALS", "Stopped", "cancelled_message", "exit_code", "stop_signals_raise", "stoppable"]
