"""Every wait on another process has a deadline: a worker (or the app's training process) that even SIGKILL
does not end at once, as one stuck in the kernel on a hung network file system, is left to the kernel after
the timeout instead of holding the run (or the app) forever."""

from __future__ import annotations

import subprocess
import threading
from typing import Any

import pytest

from bpe_studio.engine.workers import launch
from bpe_studio.engine.workers.launch import stop_process
from bpe_studio.ui.train.process import TrainingProcess


class _Unkillable:
    """A stand-in for a ``Popen`` whose process ignores SIGTERM and SIGKILL alike (never ends)."""

    def __init__(self) -> None:
        self.signals: list[str] = []
        self.stdin = self.stdout = None
        self.returncode = None

    def poll(self) -> None:
        return None

    def terminate(self) -> None:
        self.signals.append("TERM")

    def kill(self) -> None:
        self.signals.append("KILL")

    def wait(self, timeout: float | None = None) -> int:
        if timeout is None:
            threading.Event().wait(3600)  # what an unbounded wait would do; the test's join gives up first
            raise AssertionError("an unbounded wait")
        raise subprocess.TimeoutExpired("worker", timeout)


def _returns(call: Any) -> bool:
    """True when ``call()`` returns within 10 s (in a thread: an endless wait fails the test, no hang)."""
    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    thread.join(timeout=10)
    return not thread.is_alive()


def test_stopping_a_worker_that_will_not_die_gives_up_after_the_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(launch, "STOP_TIMEOUT", 0.01)
    proc = _Unkillable()
    assert _returns(lambda: stop_process(proc))  # type: ignore[arg-type]
    assert proc.signals == ["TERM", "KILL"]


def test_stopping_a_training_process_that_will_not_die_gives_up_after_the_timeout() -> None:
    child = TrainingProcess.__new__(TrainingProcess)  # not started: the stand-in is its process
    child._lock = threading.Lock()
    child.proc = _Unkillable()  # type: ignore[assignment]
    assert _returns(lambda: child.stop(timeout=0.01))
    assert child.proc.signals == ["KILL"]  # type: ignore[attr-defined]
