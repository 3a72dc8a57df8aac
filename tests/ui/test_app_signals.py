"""Ctrl-C (SIGINT) and SIGTERM stop the app like every command: one line, exit 130 / 143, nothing left."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from PySide6.QtCore import QThread, QTimer

from bpe_studio.cli import parse_args
from bpe_studio.cli.signals import STOP_SIGNALS, cancelled_message
from bpe_studio.ui.app import app as app_module
from bpe_studio.ui.app.settings import load_settings

from ..processes import wait_for_children, wait_until_caught

REPO = Path(__file__).resolve().parents[2]

#: Seconds any wait on the child process may take.
TIMEOUT = 120


@pytest.fixture(autouse=True)
def _restore_handlers() -> Iterator[None]:
    handlers = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    yield
    for signum, handler in handlers.items():
        signal.signal(signum, handler)


@pytest.fixture(autouse=True)
def _no_quit_on_last_window(qapp) -> Iterator[None]:  # type: ignore[no-untyped-def]
    """main() closes its window itself; the Quit event Qt would post must not end the next test's loops."""
    qapp.setQuitOnLastWindowClosed(False)
    yield
    qapp.setQuitOnLastWindowClosed(True)


def _session(sid: int) -> list[psutil.Process]:
    """The live processes of session ``sid`` (the app and everything it started)."""
    found = []
    for process in psutil.process_iter():
        try:
            if os.getsid(process.pid) == sid and process.status() != psutil.STATUS_ZOMBIE:
                found.append(process)
        except (psutil.NoSuchProcess, ProcessLookupError, PermissionError):
            continue
    return found


@pytest.mark.parametrize("when", ["start-up", "training"])
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=lambda s: s.name)
def test_a_signal_during_a_demo_screenshot_exits_128_plus_signal(
    signum: signal.Signals, when: str, tmp_path: Path
) -> None:
    out = tmp_path / "shot.png"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "bpe_studio", "--demo", "--screenshot", str(out)]
    # Its own session, so that whatever the app starts can be found after it ended.
    proc = subprocess.Popen(
        command, env=env, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        # SIGHUP is the last of the handlers the app sets before its QApplication exists (Python catches
        # SIGINT from its start, so that one tells nothing).
        wait_until_caught(proc.pid, signal.SIGHUP, TIMEOUT)
        if when == "training":
            wait_for_children(proc.pid, 1, TIMEOUT)  # the training process
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(TIMEOUT)
    assert proc.returncode == 128 + signum, err
    lines = [line for line in err.splitlines() if "propagateSizeHints" not in line]  # offscreen's noise
    expected = "bpe-studio: cancelled" if signum == signal.SIGINT else "bpe-studio: cancelled by SIGTERM"
    assert lines == [expected], err
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []  # no temporary PNG either
    _, left = psutil.wait_procs(_session(proc.pid), timeout=TIMEOUT)
    assert left == [], f"processes left running: {left}"


def test_ctrl_c_in_the_event_loop_closes_the_window_and_exits_130(  # type: ignore[no-untyped-def]
    qapp, capsys: pytest.CaptureFixture[str]
) -> None:
    before = signal.getsignal(signal.SIGINT)
    loop_levels: list[int] = []

    def press_ctrl_c() -> None:
        loop_levels.append(QThread.currentThread().loopLevel())
        os.kill(os.getpid(), signal.SIGINT)

    QTimer.singleShot(0, press_ctrl_c)  # runs once main() runs the event loop
    assert app_module.main(parse_args([])) == 130
    assert loop_levels and loop_levels[0] >= 1  # the signal came while Qt's event loop ran
    assert capsys.readouterr().err.strip().splitlines()[-1] == "bpe-studio: cancelled"
    assert load_settings().geometry != ""  # the window was closed as by its close button: settings saved
    assert signal.getsignal(signal.SIGINT) == before  # main() restored the handlers


def test_the_app_words_a_stop_as_the_cli_does() -> None:
    # The app does not import the CLI (tests/engine/test_design.py): the two copies must agree.
    assert app_module.STOP_SIGNALS == STOP_SIGNALS
    for signum in STOP_SIGNALS:
        for tty in (False, True):
            assert app_module.stopped_message(signum, tty=tty) == cancelled_message(signum, tty=tty)
