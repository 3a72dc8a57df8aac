"""The one worker abstraction (bpe_studio.ui.app.tasks): plain and generator tasks, cancelling, errors."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Generator
from typing import Any

import pytest

from bpe_studio.ui.app.tasks import TaskCancelledError, TaskContext, TaskRunner, TaskWorker

WAIT_MS = 10_000


@pytest.fixture
def runner(qtbot) -> Generator[TaskRunner, None, None]:  # type: ignore[no-untyped-def]
    runner = TaskRunner("bpe-studio-test")
    yield runner
    assert runner.shutdown(WAIT_MS)
    assert not runner.is_busy(), "the task's thread outlived the test"


def _record(runner: TaskRunner) -> dict[str, list[Any]]:
    seen: dict[str, list[Any]] = {"progress": [], "finished": [], "errored": [], "cancelled": []}
    for name, values in seen.items():
        getattr(runner, name).connect(values.append)
    return seen


def test_a_generator_task_yields_progress_and_returns_its_result(qtbot, runner: TaskRunner) -> None:  # type: ignore[no-untyped-def]
    seen = _record(runner)
    threads: list[threading.Thread] = []

    def count(ctx: TaskContext) -> Generator[int, None, str]:
        threads.append(threading.current_thread())
        yield from range(5)
        return "done"

    with qtbot.waitSignal(runner.idle, timeout=WAIT_MS):
        runner.start(count)
    assert seen == {"progress": [0, 1, 2, 3, 4], "finished": ["done"], "errored": [], "cancelled": []}
    assert threads and threads[0] is not threading.main_thread()
    assert not runner.is_busy()


def test_a_plain_task_reports_progress_and_its_result(qtbot, runner: TaskRunner) -> None:  # type: ignore[no-untyped-def]
    seen = _record(runner)

    def add(ctx: TaskContext) -> int:
        ctx.progress("half way")
        return 1 + 1

    with qtbot.waitSignal(runner.idle, timeout=WAIT_MS):
        runner.start(add)
    assert seen == {"progress": ["half way"], "finished": [2], "errored": [], "cancelled": []}


def test_an_exception_becomes_errored(qtbot, runner: TaskRunner) -> None:  # type: ignore[no-untyped-def]
    seen = _record(runner)

    def fail(ctx: TaskContext) -> Generator[int, None, None]:
        yield 1
        raise OSError("disk full")

    with qtbot.waitSignal(runner.idle, timeout=WAIT_MS):
        runner.start(fail)
    assert seen["progress"] == [1] and seen["finished"] == [] and seen["cancelled"] == []
    (error,) = seen["errored"]
    assert isinstance(error, OSError) and str(error) == "disk full"


def test_cancelling_a_generator_stops_it_at_its_yield(qtbot, runner: TaskRunner) -> None:  # type: ignore[no-untyped-def]
    seen = _record(runner)
    first_step = threading.Event()
    cleaned_up: list[threading.Thread] = []

    def endless(ctx: TaskContext) -> Generator[int, None, None]:
        try:
            step = 0
            while True:
                yield step
                first_step.set()
                step += 1
        finally:
            cleaned_up.append(threading.current_thread())

    runner.start(endless)
    assert first_step.wait(WAIT_MS / 1000)
    with qtbot.waitSignal(runner.idle, timeout=WAIT_MS):
        runner.cancel()
    assert seen["cancelled"] == [None] and seen["finished"] == [] and seen["errored"] == []
    # The generator's own clean-up ran, in the worker thread.
    assert len(cleaned_up) == 1 and cleaned_up[0] is not threading.main_thread()


def test_a_generator_that_winds_down_returns_what_it_has(qtbot, runner: TaskRunner) -> None:  # type: ignore[no-untyped-def]
    seen = _record(runner)
    told: list[str] = []
    started = threading.Event()
    child_done = threading.Event()  # stands for a child process that stops once it is told to

    def winding_down(ctx: TaskContext) -> Generator[int, None, list[int]]:
        ctx.on_cancel(lambda: (told.append("cancel"), child_done.set()))
        made: list[int] = []
        step = 0
        while not child_done.is_set() or step < 3:  # the "child" still reports a few steps after the cancel
            made.append(step)
            with contextlib.suppress(TaskCancelledError):
                yield step
            started.set()
            step += 1
        return made

    runner.start(winding_down)
    assert started.wait(WAIT_MS / 1000)
    with qtbot.waitSignal(runner.idle, timeout=WAIT_MS):
        runner.cancel()
    assert told == ["cancel"]
    (made,) = seen["cancelled"]
    assert made and made == seen["progress"]  # every step made was reported, in order, before the end
    assert seen["finished"] == [] and seen["errored"] == []


def test_on_cancel_after_cancel_runs_at_once(qtbot, runner: TaskRunner) -> None:  # type: ignore[no-untyped-def]
    seen = _record(runner)
    calls: list[bool] = []
    cancelled = threading.Event()

    def late(ctx: TaskContext) -> str:
        assert cancelled.wait(WAIT_MS / 1000)
        ctx.on_cancel(lambda: calls.append(ctx.cancelled))
        return "ignored"

    runner.start(late)
    with qtbot.waitSignal(runner.idle, timeout=WAIT_MS):
        runner.cancel()
        cancelled.set()
    assert calls == [True]
    assert seen["cancelled"] == ["ignored"] and seen["finished"] == []


def test_a_new_request_supersedes_the_running_one(qtbot, runner: TaskRunner) -> None:  # type: ignore[no-untyped-def]
    seen = _record(runner)
    started = threading.Event()

    def slow(ctx: TaskContext) -> str:
        stop = threading.Event()
        ctx.on_cancel(stop.set)
        started.set()
        assert stop.wait(WAIT_MS / 1000)
        ctx.check()
        return "first"

    runner.start(slow)
    assert started.wait(WAIT_MS / 1000)
    with qtbot.waitSignal(runner.idle, timeout=WAIT_MS):
        runner.start(lambda ctx: "second")
    # Only the newest request's end is reported; the superseded one says nothing.
    assert seen == {"progress": [], "finished": ["second"], "errored": [], "cancelled": []}


def test_a_worker_is_moved_between_threads_by_the_gui_thread_only(qtbot, runner, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """moveToThread from a worker thread holds the GIL while it waits for Qt's signal-slot lock; the GUI
    thread, disconnecting a collected slot's owner, holds that lock while PySide takes the GIL back: the
    side-by-side view froze that way under CI. Every move must be made on the GUI thread."""
    moved_on: list[threading.Thread] = []
    move = TaskWorker.moveToThread

    def spy(self: TaskWorker, *args: Any) -> None:
        moved_on.append(threading.current_thread())
        move(self, *args)

    monkeypatch.setattr(TaskWorker, "moveToThread", spy)
    seen = _record(runner)

    def fails(ctx: TaskContext) -> None:
        raise ValueError("no")

    def stops(ctx: TaskContext) -> Generator[None, None, None]:
        while True:
            yield None

    for task in (lambda ctx: "done", fails):
        with qtbot.waitSignal(runner.idle, timeout=WAIT_MS):
            runner.start(task)
    with qtbot.waitSignal(runner.idle, timeout=WAIT_MS):
        runner.start(stops)
        runner.cancel()
    assert seen["finished"] == ["done"] and len(seen["errored"]) == 1 and seen["cancelled"] == [None]
    assert moved_on and all(t is threading.main_thread() for t in moved_on), moved_on


def test_shutdown_waits_for_the_thread(qtbot) -> None:  # type: ignore[no-untyped-def]
    runner = TaskRunner("bpe-studio-test")
    ended = threading.Event()

    def endless(ctx: TaskContext) -> Generator[None, None, None]:
        try:
            while True:
                yield None
        finally:
            ended.set()

    runner.start(endless)
    assert runner.shutdown(WAIT_MS)
    assert ended.is_set() and not runner.is_busy()


def test_the_app_lets_the_gui_thread_wait_less_for_pythons_lock(qapp) -> None:  # type: ignore[no-untyped-def]
    # A worker busy in Python made the GUI thread wait up to 5 ms at each return from Qt (issue 21.1).
    import sys

    from bpe_studio.ui.app.app import create_application
    from bpe_studio.ui.app.tasks import GUI_SWITCH_INTERVAL

    before = sys.getswitchinterval()
    try:
        assert create_application() is qapp
        assert sys.getswitchinterval() == pytest.approx(GUI_SWITCH_INTERVAL)
        assert GUI_SWITCH_INTERVAL <= 0.001
    finally:
        sys.setswitchinterval(before)
