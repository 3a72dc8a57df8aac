"""Child processes a test leaves behind (shared by the tests that start workers or the CLI)."""

from __future__ import annotations

import psutil


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
