"""Process-wide state has one owner: the application installs the garbage collector and the GIL switch
interval at start-up, nothing else in ui changes them, and a training run leaves them as the app set them."""

from __future__ import annotations

import gc
import os
import re
import subprocess
import sys
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from PySide6.QtWidgets import QApplication

import bpe_studio
from bpe_studio.ui.app import tasks
from bpe_studio.ui.app.app import create_application
from bpe_studio.ui.app.main_window import MainWindow
from bpe_studio.ui.app.tasks import MainThreadGarbageCollector, TaskContext, TaskRunner

UI_DIR = Path(bpe_studio.__file__).parent / "ui"
RUN_TIMEOUT = 60_000

#: Calls that change how the process collects garbage or switches threads.
PROCESS_STATE_CALLS = re.compile(
    r"\bgc\.(disable|enable|set_threshold|freeze|unfreeze)\(|\bsetswitchinterval\("
)


def _state() -> tuple[Any, ...]:
    app = QApplication.instance()
    collectors = app.findChildren(MainThreadGarbageCollector) if app is not None else []
    return (
        gc.isenabled(),
        gc.get_threshold(),
        sys.getswitchinterval(),
        [(id(c), c.timer.isActive()) for c in collectors],
    )


def test_one_place_in_ui_changes_garbage_collection() -> None:
    changes = {
        f"{path.name}:{number}"
        for path in sorted(UI_DIR.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if PROCESS_STATE_CALLS.search(line.split("#")[0])
    }
    # Only the collector itself switches automatic collection off and freezes the start-up objects, and
    # one function sets the switch interval (issue 21: the GUI thread waited for a busy worker's lock).
    assert {name.split(":")[0] for name in changes} == {"tasks.py"}, changes
    assert len(changes) == 3, changes
    for installer in ("install_main_thread_gc", "install_gui_switch_interval"):
        installers = {
            path.name
            for path in UI_DIR.rglob("*.py")
            if re.search(rf"(?<!def )\b{installer}\(\)", path.read_text(encoding="utf-8"))
        }
        assert installers == {"app.py"}, installer


def test_the_collector_freezes_start_up_objects_once(qtbot) -> None:  # type: ignore[no-untyped-def]
    app = create_application()
    (collector,) = app.findChildren(MainThreadGarbageCollector)
    qtbot.waitUntil(lambda: collector.frozen, timeout=5_000)  # its first tick, once the event loop runs
    frozen = gc.get_freeze_count()
    assert frozen > 10_000  # the modules and Qt wrappers of start-up: out of every full collection's scan
    collector.check()
    collector.check()
    assert gc.get_freeze_count() == frozen  # once: later objects stay collectable


def test_a_training_leaves_the_apps_collector_as_it_was(qtbot, settings: Any, small_corpus: Path) -> None:  # type: ignore[no-untyped-def]
    app = create_application()
    (collector,) = app.findChildren(MainThreadGarbageCollector)
    assert collector.timer.isActive() and not gc.isenabled()  # collected on the GUI thread's timer
    before = _state()
    window = MainWindow(settings, persist=False)
    qtbot.addWidget(window)
    view = window.train_view
    view.set_corpus_files([small_corpus])
    view.vocab_spin.setValue(600)
    during: list[tuple[Any, ...]] = []
    view.runner.progress.connect(lambda _events: during.append(_state()))
    with qtbot.waitSignal(view.training_ended, timeout=RUN_TIMEOUT) as ended:
        assert view.start_training()
    assert ended.args == ["finished"]
    assert during and all(state == before for state in during)
    assert _state() == before
    view.shutdown()
    assert _state() == before


def test_a_runner_alone_leaves_garbage_collection_on(tmp_path: Path) -> None:
    """Without the application's start-up, nothing (not a task runner, not a training view) turns it off."""
    root = Path(bpe_studio.__file__).parent.parent
    script = f"""
import gc, sys
sys.path.insert(0, {os.fspath(root)!r})
from bpe_studio.ui.app.refcounts import guard_singleton_refcounts
guard_singleton_refcounts()
from PySide6.QtWidgets import QApplication
app = QApplication(["test"])
from bpe_studio.ui.app.tasks import TaskRunner
from bpe_studio.ui.train.view import TrainView
runner = TaskRunner("t")
view = TrainView()
runner.start(lambda ctx: 1)
runner.shutdown(10_000)
view.shutdown()
print(gc.isenabled())
"""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", BPE_STUDIO_CONFIG_DIR=os.fspath(tmp_path))
    done = subprocess.run(
        [sys.executable, "-I", "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"


def test_the_collector_waits_for_large_tasks_and_collects_between_them(qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Issue 21: typing into 400,000 Chinese characters stalled the window 160 ms now and then. One encoding
    task followed another for longer than the collector's 10 s of patience, so it collected in the middle
    of one, visiting the task's 400,000 live token objects. Now it waits while such tasks run and
    collects when one ends, before the next starts: at every keystroke, when little is alive."""
    app = create_application()
    (collector,) = app.findChildren(MainThreadGarbageCollector)
    qtbot.waitUntil(lambda: collector.frozen, timeout=5_000)
    collected: list[int] = []
    clock = [1_000.0]
    # Every generation is due, and the clock is the test's: what is collected when is all that is seen.
    fake_gc = SimpleNamespace(get_count=lambda: (10**6, 10**3, 10**3), collect=collected.append)
    monkeypatch.setattr(tasks, "gc", fake_gc)
    monkeypatch.setattr(tasks, "time", SimpleNamespace(monotonic=lambda: clock[0]))
    release = threading.Event()
    started: list[str] = []

    def typed(name: str) -> tasks.Task:
        def task(ctx: TaskContext) -> str:
            started.append(name)
            while not ctx.cancelled and not release.wait(0.005):
                pass
            return name

        return task

    runner = TaskRunner("bpe-studio-test", defer_gc=True)
    runner.start(typed("first"))
    qtbot.waitUntil(lambda: started == ["first"], timeout=5_000)
    for _ in range(5):  # a minute of one task after another, as the collector's timer sees it
        collector.check()
        clock[0] += 12.0
    collector.check()
    assert collected == []  # never in the middle of a task
    runner.start(typed("second"))  # the next keystroke: the first task is cancelled and ends
    qtbot.waitUntil(lambda: started == ["first", "second"], timeout=5_000)
    assert collected == [0, 1, 2]  # between the two tasks
    collector.check()
    assert collected == [0, 1, 2]
    with qtbot.waitSignal(runner.idle, timeout=5_000):
        release.set()
    assert collected == [0, 1, 2] * 2  # and after the last
    runner.shutdown()
