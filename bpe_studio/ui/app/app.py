"""Starting the desktop app: ``bpe-studio`` without a subcommand, or ``python -m bpe_studio``.

Options (defined with the other commands' in :mod:`bpe_studio.cli`, as the ``app`` command):
    CORPUS ...            corpus files to put in the training form
    --demo                open on the demo corpus (Python's own documentation) and start training
    --screenshot PATH     wait until the window is ready (with --demo: until training ends), save a PNG of the
                          main window to PATH and exit
    --tokenizer PATH      open a tokenizer file or folder (or a name: gpt2, cl100k_base...) in the views
    --text TEXT           text for the playground (with --tokenizer)
    --download            with --tokenizer NAME: download OpenAI's encoding when tiktoken's cache lacks it
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal, Slot
from PySide6.QtWidgets import QApplication

from ... import __version__
from ...engine.formats import FormatError, source_files
from ...engine.formats.named import NamedTokenizerMissingError, encoding_of, resolve_name
from ...engine.write_plan import WritePlan
from .main_window import DEFAULT_SIZE, MainWindow
from .refcounts import guard_singleton_refcounts
from .settings import Settings, load_settings
from .style import apply_style
from .tasks import install_gui_switch_interval, install_main_thread_gc

log = logging.getLogger(__name__)

#: Exit code when the screenshot could not be taken (training failed, or the file could not be written).
EXIT_SCREENSHOT_FAILED = 1

#: Exit code when ``--screenshot PATH`` cannot be written, found before the window opens (a user mistake).
EXIT_SCREENSHOT_PATH = 2

#: Seconds ``--screenshot`` waits for the demo training before giving up.
SCREENSHOT_TIMEOUT = 600

#: The signals that stop the app as they stop every command (the CLI's ``bpe_studio.cli.signals``, which the
#: app does not import): those present on this platform.
STOP_SIGNALS: tuple[signal.Signals, ...] = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)


def stopped_message(signum: int, *, tty: bool = False) -> str:
    """The line printed when a signal stopped the app, worded as the CLI's.

    Example:
        >>> stopped_message(signal.SIGTERM)
        'bpe-studio: cancelled by SIGTERM'
    """
    if signum == signal.SIGINT:
        return ("\n" if tty else "") + "bpe-studio: cancelled"  # after the terminal's "^C"
    return f"bpe-studio: cancelled by {signal.Signals(signum).name}"


def screenshot_plan(args: argparse.Namespace) -> WritePlan:
    """What ``--screenshot PATH`` writes (the PNG and its temporary file beside it) and what the invocation
    reads (``--tokenizer``'s files, the CORPUS files), for :meth:`WritePlan.check` before the window opens.

    So a screenshot never replaces a file it shows, and a path that cannot be written (a missing folder, a
    folder in the way, a read-only place) is a one-line error rather than a run that ends without a picture.

    Example:
        >>> from bpe_studio.cli import parse_args
        >>> screenshot_plan(parse_args(["--screenshot", "/no/such/folder/shot.png"])).check()
        Traceback (most recent call last):
        ValueError: --screenshot: the folder /no/such/folder does not exist; create it first
    """
    plan = WritePlan()
    if args.screenshot is None:
        return plan
    path = Path(args.screenshot)
    plan.write("--screenshot", path)
    # Screenshotter.take writes .NAME.PID.tmp beside it, then renames it.
    plan.scratch_files("--screenshot", path.parent, f".{path.name}.", (".tmp",), implied_by=path)
    if args.tokenizer is not None:
        with contextlib.suppress(OSError, ValueError):  # not a file (a name not cached): nothing to keep
            for source in source_files(_tokenizer_source(Path(args.tokenizer))):
                plan.read("the --tokenizer file", source)
    for corpus in args.corpus or ():
        plan.read("a CORPUS file", corpus)
    return plan


def check_args(args: argparse.Namespace) -> None:
    """Refuse options that would be ignored or cannot be met, before the window opens (exit code 2).

    ``--text`` goes into the playground with ``--tokenizer``'s tokenizer, so alone it would be dropped
    without a word; an OpenAI encoding that tiktoken's cache lacks is downloaded only with ``--download``,
    so without it the line says where the file goes (as every command says), rather than the window
    showing "no such file".

    Raises:
        ValueError: The one-line reason, naming the option and saying what to do.

    Example:
        >>> from bpe_studio.cli import parse_args
        >>> check_args(parse_args(["--text", "hello"]))
        Traceback (most recent call last):
        ValueError: --text is the playground's text for --tokenizer's tokenizer: give --tokenizer PATH too
    """
    if args.tokenizer is None:
        if args.text:
            raise ValueError(
                "--text is the playground's text for --tokenizer's tokenizer: give --tokenizer PATH too"
            )
        if getattr(args, "download", False):
            raise ValueError(
                "--download fetches the encoding named by --tokenizer: give --tokenizer NAME too"
            )
        return
    path = Path(args.tokenizer)
    if path.exists() or getattr(args, "download", False):
        return
    try:
        resolve_name(os.fspath(path))
    except NamedTokenizerMissingError as exc:
        raise ValueError(f"--tokenizer {exc}") from None
    except (KeyError, FormatError):  # not a name: opening the path says what is wrong, in the window
        return


def create_application(argv: Sequence[str] = ()) -> QApplication:
    """The ``QApplication`` (created once), named and styled.

    Also guards this process against PySide6 6.12's reference-counting bugs (:mod:`.refcounts`), for a
    process that starts the app without :func:`~bpe_studio.ui.app.startup.run_app` (a script, a benchmark).
    """
    guard_singleton_refcounts()
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(["bpe-studio", *argv])
    app.setApplicationName("BPE Studio")
    app.setApplicationVersion(__version__)
    app.setOrganizationName("bpe-studio")
    apply_style(app)
    install_main_thread_gc()  # the one place that changes how this process collects garbage
    install_gui_switch_interval()  # the GUI thread waits less for Python's lock (a busy worker)
    return app


class Screenshotter(QObject):
    """Saves a PNG of the window once it is ready, closes the window and emits ``done`` with an exit code.

    Signals:
        done(int): 0 when the screenshot was written, else :data:`EXIT_SCREENSHOT_FAILED`.
    """

    done = Signal(int)

    def __init__(
        self, window: MainWindow, path: Path, *, wait_for_training: bool, wait_for_tokenizer: bool = False
    ) -> None:
        super().__init__(window)
        self.window = window
        self.path = path
        self.exit_code = EXIT_SCREENSHOT_FAILED
        #: True once the shooter has ended (with or without a screenshot); False if the window closed first.
        self.finished = False
        #: True once a stop signal gave up on the screenshot (see :meth:`cancel`): the shooter stays silent.
        self.cancelled = False
        views = window.tokenizer_views
        train = window.train_view
        if wait_for_training and not (train.is_running() or train.is_preparing_demo()):
            # The demo did not start (its corpus could not be written, or the form was refused): a picture
            # of the error would not be the screenshot that was asked for.
            QTimer.singleShot(0, self._on_training_not_started)
        elif wait_for_training:
            train.training_ended.connect(self._on_train_view_training_ended)
            # The demo corpus is built in a thread: it may yet fail, or the form refuse it.
            train.error_shown.connect(self._on_train_view_error_shown)
            QTimer.singleShot(SCREENSHOT_TIMEOUT * 1000, self._on_timeout)
        elif wait_for_tokenizer and views.is_busy():
            # --tokenizer: wait until the tokenizer loaded and the playground shows the text.
            views.settled.connect(self._on_tokenizer_views_settled)
            views.error_shown.connect(self._on_tokenizer_views_error_shown)
            QTimer.singleShot(SCREENSHOT_TIMEOUT * 1000, self._on_tokenizer_timeout)
        else:
            QTimer.singleShot(300, self.take)

    @Slot()
    def _on_training_not_started(self) -> None:
        if self.cancelled:
            return
        box = self.window.train_view.error_box
        why = f": {box.text()}" if box is not None else ""
        print(f"bpe-studio: the demo training did not start{why}; no screenshot taken", file=sys.stderr)
        self._quit()

    @Slot(str, str)
    def _on_train_view_error_shown(self, _title: str, _message: str) -> None:
        train = self.window.train_view
        if not (train.is_running() or train.progress.ended or self.finished):
            self._on_training_not_started()

    @Slot(str)
    def _on_train_view_training_ended(self, how: str) -> None:
        if self.cancelled:
            return  # the run was stopped with the app: "training cancelled" would be a second message
        if how != "finished":
            print(f"bpe-studio: training {how}; no screenshot taken", file=sys.stderr)
            self._quit()
            return
        # Let the last refresh and any layout changes reach the screen first.
        QTimer.singleShot(300, self.take)

    @Slot()
    def _on_tokenizer_views_settled(self) -> None:
        views = self.window.tokenizer_views
        if views.is_busy() or views.current is None:
            return
        views.settled.disconnect(self._on_tokenizer_views_settled)
        QTimer.singleShot(300, self.take)

    @Slot(str, str)
    def _on_tokenizer_views_error_shown(self, title: str, message: str) -> None:
        if self.cancelled:
            return
        print(f"bpe-studio: {title.lower()}: {message}; no screenshot taken", file=sys.stderr)
        self._quit()

    @Slot()
    def _on_tokenizer_timeout(self) -> None:
        if self.window.isVisible():  # not taken (nor given up) yet
            print(f"bpe-studio: the tokenizer did not load within {SCREENSHOT_TIMEOUT} s", file=sys.stderr)
            self._quit()

    @Slot()
    def _on_timeout(self) -> None:
        print(
            f"bpe-studio: training did not end within {SCREENSHOT_TIMEOUT} s; no screenshot taken",
            file=sys.stderr,
        )
        self._quit()

    @Slot()
    def take(self) -> None:
        """Grab the window and save it: to a temporary file next to ``path``, renamed once complete."""
        if self.cancelled:
            return
        tmp: str | None = None
        try:
            pixmap = self.window.grab()
            if pixmap.isNull():
                raise OSError("the window could not be grabbed")
            # Named by the process id and created by Qt (so with the usual permissions, unlike mkstemp's).
            tmp = os.fspath(self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp"))
            if not pixmap.save(tmp, "PNG"):
                raise OSError("the image could not be written")
            os.replace(tmp, self.path)
            tmp = None
        except OSError as exc:
            print(f"bpe-studio: cannot write the screenshot to {self.path} ({exc})", file=sys.stderr)
        else:
            self.exit_code = 0
            print(f"bpe-studio: saved a screenshot to {self.path}", file=sys.stderr)
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):  # the folder may be gone or not be one
                    os.unlink(tmp)
            self._quit()

    def cancel(self) -> None:
        """Give up on the screenshot without a word (a stop signal ends the app and says so itself)."""
        self.cancelled = True

    def _quit(self) -> None:
        self.finished = True
        self.window.close()
        self.done.emit(self.exit_code)


class StopSignals:
    """Ctrl-C (SIGINT), SIGTERM and SIGHUP close the app as they stop every command: exit ``128 + signal``.

    Installed before the ``QApplication`` exists, so a signal during start-up is no traceback either. The
    first signal closes the main windows (which stops a training run and saves the settings, as closing them
    does) and quits the event loop; later ones are ignored so that this clean-up runs to its end. Python runs
    a signal handler only between bytecodes, and Qt's event loop runs none: a timer wakes it (see
    :meth:`start_waking`).

    Example:
        >>> stops = StopSignals()
        >>> stops.signum is None
        True
    """

    #: How often (ms) the event loop lets Python run its signal handlers.
    WAKE_INTERVAL_MS = 200

    def __init__(self) -> None:
        #: The first stop signal that arrived, or None.
        self.signum: int | None = None
        self._previous: dict[int, Any] = {}
        self._timer: QTimer | None = None

    def install(self) -> None:
        """Handle the stop signals (from the main thread); :meth:`restore` puts the previous handlers back."""
        for signum in STOP_SIGNALS:
            self._previous[signum] = signal.signal(signum, self._on_signal)

    def restore(self) -> None:
        """Stop the wake-up timer and restore the handlers found by :meth:`install`."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous.clear()

    def start_waking(self, app: QApplication) -> None:
        """Run Python now and then while Qt's event loop runs, so that a signal is handled within 0.2 s."""
        self._timer = QTimer(app)
        self._timer.setInterval(self.WAKE_INTERVAL_MS)
        self._timer.timeout.connect(lambda: None)
        self._timer.start()

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        if self.signum is not None:
            return  # stopping already
        self.signum = signum
        # Not in the handler itself, which may run in the middle of any Qt call: from the event loop. Before
        # the loop runs (or the app exists), the caller sees ``signum`` and does not start it.
        if QApplication.instance() is not None:
            QTimer.singleShot(0, self.stop_app)

    def stop_app(self) -> None:
        """Close the main windows and quit the event loop."""
        app = QApplication.instance()
        if not isinstance(app, QApplication):
            return
        for widget in app.topLevelWidgets():
            if isinstance(widget, MainWindow):
                for shooter in widget.findChildren(Screenshotter):
                    shooter.cancel()
                widget.close()
        app.quit()


def open_window(args: argparse.Namespace) -> tuple[MainWindow, Screenshotter | None]:
    """Create and show the main window as the options ask (the QApplication must exist)."""
    screenshot = args.screenshot is not None
    # Screenshots neither depend on the user's settings nor change them. The demo is a normal session (it is
    # the README's first command): its window geometry and recent tokenizers are kept for the next start.
    settings = Settings() if screenshot else load_settings()
    app = QApplication.instance()
    if isinstance(app, QApplication):
        apply_style(app, settings.theme)
    window = MainWindow(settings, persist=not screenshot)
    if screenshot:
        window.resize(*DEFAULT_SIZE)
    window.show()
    if args.corpus:
        window.train_view.add_corpus_files(args.corpus)
    if args.tokenizer is not None:
        download = _to_download(args)
        if download is not None:  # not cached, and --download: fetched as Tokenizer ▸ OpenAI does, unasked
            window.tokenizer_views.open_encoding(download, text=args.text, ask=False)
        else:
            window.open_tokenizer(_tokenizer_source(Path(args.tokenizer)), args.text)
    if args.demo:
        window.tabs.setCurrentWidget(window.train_view)  # the training, whatever tab the workspace had
        window.train_view.load_demo(start=True)
    shooter = None
    if screenshot:
        wait_for_tokenizer = args.tokenizer is not None
        shooter = Screenshotter(
            window, args.screenshot, wait_for_training=args.demo, wait_for_tokenizer=wait_for_tokenizer
        )
    return window, shooter


def _tokenizer_source(path: Path) -> Path:
    """``--tokenizer``: a path, or a name the engine knows (``gpt2``; ``cl100k_base`` when cached).

    Example:
        >>> _tokenizer_source(Path("gpt2")).name
        'gpt2'
    """
    if path.exists():
        return path
    try:
        return resolve_name(os.fspath(path))
    except (KeyError, FormatError):  # not a name, or not cached: opening the path says what is wrong
        return path


def _to_download(args: argparse.Namespace) -> str | None:
    """The OpenAI encoding ``--tokenizer NAME --download`` fetches: a known name not in tiktoken's cache
    (and no file of that name here); else None."""
    path = Path(args.tokenizer)
    if not getattr(args, "download", False) or path.exists():
        return None
    encoding = encoding_of(os.fspath(path))
    if encoding is None:
        return None
    try:
        resolve_name(os.fspath(path))
    except NamedTokenizerMissingError:
        return encoding.name
    except (KeyError, FormatError):
        return None
    return None


def main(args: argparse.Namespace) -> int:
    """Open the main window as ``args`` ask and run the app until it closes; returns the exit code.

    ``args`` come from the command line's one parser: ``bpe_studio.cli.parse_args``, which defines these
    options (the ``app`` command).
    """
    try:
        check_args(args)
        screenshot_plan(args).check()  # before the window opens: the PNG must not replace an input
    except ValueError as exc:
        print(f"bpe-studio: error: {exc}", file=sys.stderr)
        return EXIT_SCREENSHOT_PATH
    stops = StopSignals()
    stops.install()
    try:
        return _run(args, stops)
    finally:
        stops.restore()


def _run(args: argparse.Namespace, stops: StopSignals) -> int:
    """:func:`main` once the stop signals are handled."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    app = create_application()
    window, shooter = open_window(args)
    if shooter is not None:
        shooter.done.connect(app.exit)
    stops.start_waking(app)
    # A signal during start-up: the window is closed below without running the event loop.
    if stops.signum is None:
        code = app.exec()
    else:
        code = 0
        if shooter is not None:
            shooter.cancel()
    if window.isVisible():
        window.close()
    window.train_view.shutdown()
    if stops.signum is not None:
        print(stopped_message(stops.signum, tty=sys.stderr.isatty()), file=sys.stderr, flush=True)
        return 128 + stops.signum  # as a shell reports a process the signal ended: 130, 143, 129
    if shooter is not None and (not shooter.finished or shooter.exit_code != 0):
        # The app also ends when its window is closed before the shot: that is no success.
        if not shooter.finished:
            print("bpe-studio: the window closed before the screenshot was taken", file=sys.stderr)
        return int(code) or EXIT_SCREENSHOT_FAILED
    return int(code)


__all__ = [
    "Screenshotter",
    "StopSignals",
    "check_args",
    "create_application",
    "main",
    "open_window",
    "screenshot_plan",
]
