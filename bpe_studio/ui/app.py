"""Starting the desktop app: ``bpe-studio`` without a subcommand, or ``python -m bpe_studio``.

Options (defined with the other commands' in :mod:`bpe_studio.cli`, as the ``app`` command):
    CORPUS ...            corpus files to put in the training form
    --demo                open on the demo corpus (Python's own documentation) and start training
    --screenshot PATH     wait until the window is ready (with --demo: until training ends), save a PNG of the
                          main window to PATH and exit
    --tokenizer PATH      open a tokenizer file in the tokenizer views
    --text TEXT           text for the playground (with --tokenizer)
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal, Slot
from PySide6.QtWidgets import QApplication

from .. import __version__
from .main_window import DEFAULT_SIZE, MainWindow
from .settings import Settings, load_settings
from .style import apply_style
from .tasks import install_main_thread_gc

log = logging.getLogger(__name__)

#: Exit code when the screenshot could not be taken (training failed, or the file could not be written).
EXIT_SCREENSHOT_FAILED = 1

#: Exit code when ``--screenshot PATH`` cannot be written, found before the window opens (a user mistake).
EXIT_SCREENSHOT_PATH = 2

#: Seconds ``--screenshot`` waits for the demo training before giving up.
SCREENSHOT_TIMEOUT = 600


def screenshot_path_problem(path: Path) -> str | None:
    """Why a PNG cannot be written to ``path`` (its folder is missing or not writable), or None when it can.

    Checked before the window opens, so a wrong path is a one-line error rather than a run that ends
    without a screenshot. The folder is probed by creating (and removing) a temporary file in it, which
    also catches read-only mounts and root's bypass of permission bits.

    Example:
        >>> screenshot_path_problem(Path("/no/such/folder/shot.png"))
        'the folder /no/such/folder does not exist; create it first or choose another PATH'
    """
    folder = path.parent
    if path.is_dir():
        return f"{path} is a folder; give the PNG file's path, e.g. {path / 'screenshot.png'}"
    if not folder.exists():
        return f"the folder {folder} does not exist; create it first or choose another PATH"
    if not folder.is_dir():
        return f"{folder} is not a folder; choose another PATH"
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        return f"cannot write in the folder {folder} ({exc.strerror or exc}); choose another PATH"
    return None


def create_application(argv: Sequence[str] = ()) -> QApplication:
    """The ``QApplication`` (created once), named and styled."""
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(["bpe-studio", *argv])
    app.setApplicationName("BPE Studio")
    app.setApplicationVersion(__version__)
    app.setOrganizationName("bpe-studio")
    apply_style(app)
    install_main_thread_gc()  # the one place that changes how this process collects garbage
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
        views = window.tokenizer_views
        if wait_for_training and not window.train_view.is_running():
            # The demo did not start (its corpus could not be written, or the form was refused): a picture
            # of the error would not be the screenshot that was asked for.
            QTimer.singleShot(0, self._on_training_not_started)
        elif wait_for_training:
            window.train_view.training_ended.connect(self._on_train_view_training_ended)
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
        box = self.window.train_view.error_box
        why = f": {box.text()}" if box is not None else ""
        print(f"bpe-studio: the demo training did not start{why}; no screenshot taken", file=sys.stderr)
        self._quit()

    @Slot(str)
    def _on_train_view_training_ended(self, how: str) -> None:
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

    def _quit(self) -> None:
        self.finished = True
        self.window.close()
        self.done.emit(self.exit_code)


def _install_sigint_handler(app: QApplication) -> QTimer:
    """Let Ctrl-C in the terminal close the app: Python handles signals only when it runs, hence the timer."""

    def on_sigint(_signum: int, _frame: object) -> None:
        for widget in app.topLevelWidgets():
            if isinstance(widget, MainWindow):
                widget.close()
        app.quit()

    signal.signal(signal.SIGINT, on_sigint)
    timer = QTimer(app)
    timer.setInterval(250)
    timer.timeout.connect(lambda: None)
    timer.start()
    return timer


def open_window(args: argparse.Namespace) -> tuple[MainWindow, Screenshotter | None]:
    """Create and show the main window as the options ask (the QApplication must exist)."""
    screenshot = args.screenshot is not None
    # The demo and screenshots leave the user's settings alone (and screenshots do not depend on them).
    settings = Settings() if screenshot else load_settings()
    window = MainWindow(settings, persist=not (args.demo or screenshot))
    if screenshot:
        window.resize(*DEFAULT_SIZE)
    window.show()
    if args.corpus:
        window.train_view.add_corpus_files(args.corpus)
    if args.tokenizer is not None:
        window.open_tokenizer(args.tokenizer, args.text)
    if args.demo:
        window.train_view.load_demo(start=True)
    shooter = None
    if screenshot:
        wait_for_tokenizer = args.tokenizer is not None
        shooter = Screenshotter(
            window, args.screenshot, wait_for_training=args.demo, wait_for_tokenizer=wait_for_tokenizer
        )
    return window, shooter


def main(args: argparse.Namespace) -> int:
    """Open the main window as ``args`` ask and run the app until it closes; returns the exit code.

    ``args`` come from the command line's one parser: ``bpe_studio.cli.parse_args``, which defines these
    options (the ``app`` command).
    """
    if args.screenshot is not None and (problem := screenshot_path_problem(args.screenshot)) is not None:
        print(f"bpe-studio: error: --screenshot: {problem}", file=sys.stderr)
        return EXIT_SCREENSHOT_PATH
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    app = create_application()
    window, shooter = open_window(args)
    if shooter is not None:
        shooter.done.connect(app.exit)
    sigint_timer = _install_sigint_handler(app)
    code = app.exec()
    sigint_timer.stop()
    window.train_view.shutdown()
    if shooter is not None and (not shooter.finished or shooter.exit_code != 0):
        # The app also ends when its window is closed (or Ctrl-C) before the shot: that is no success.
        if not shooter.finished:
            print("bpe-studio: the window closed before the screenshot was taken", file=sys.stderr)
        return int(code) or EXIT_SCREENSHOT_FAILED
    return int(code)


__all__ = ["Screenshotter", "create_application", "main", "open_window", "screenshot_path_problem"]
