"""Child processes: the ones a test leaves behind, and waiting until one is ready for a signal (shared by the
tests that start workers, the CLI or the app)."""

from __future__ import annotations

import time
from pathlib import Path

import psutil
import pytest


def alive(processes: list[psutil.Process]) -> list[psutil.Process]:
    """The processes of ``processes`` that still run (zombies and the gone ones left out).

    Example:
        >>> alive([])
        []
    """
    running = []
    for process in processes:
        try:
            if process.status() != psutil.STATUS_ZOMBIE:
                running.append(process)
        except psutil.NoSuchProcess:
            continue
    return running


def live_children() -> list[psutil.Process]:
    """This process's descendants that still run."""
    return alive(psutil.Process().children(recursive=True))


def assert_no_leftover_processes(timeout: float) -> None:
    """Wait up to ``timeout`` s for this process's descendants to end; kill and fail on any left."""
    _, left = psutil.wait_procs(live_children(), timeout=timeout)
    for process in left:
        process.kill()
    assert left == [], f"processes left running: {left}"


def wait_until_caught(pid: int, signum: int, timeout: float) -> None:
    """Wait up to ``timeout`` s until process ``pid`` has a handler for ``signum`` (Linux /proc; else skip).

    A signal sent before the handler is set kills the process with the default action, so a test that
    checks what the handler does waits for this first, never by sleeping.
    """
    status = Path(f"/proc/{pid}/status")
    if not status.exists():
        pytest.skip("needs /proc to see when the process has set its signal handlers")
    deadline = time.monotonic() + timeout
    while True:
        fields = dict(line.split(":\t", 1) for line in status.read_text().splitlines() if ":\t" in line)
        if int(fields["SigCgt"], 16) >> (signum - 1) & 1:
            return
        assert time.monotonic() < deadline, f"process {pid} never set a handler for signal {signum}"
        time.sleep(0.02)


def wait_for_children(pid: int, count: int, timeout: float) -> list[psutil.Process]:
    """Process ``pid``'s running descendants, once there are ``count`` of them (within ``timeout`` s)."""
    deadline = time.monotonic() + timeout
    while True:
        children = alive(psutil.Process(pid).children(recursive=True))
        if len(children) >= count:
            return children
        assert time.monotonic() < deadline, f"no {count} processes under {pid} within {timeout} s"
        time.sleep(0.01)
