"""Desktop-app benchmark: how long the GUI event loop stalls while training, and what the GUI costs.

It drives the real main window (offscreen) on the ~100 MB natural corpus of ``bench/corpora.py``:

* **event-loop stall**: a 10 ms ``QTimer`` on the GUI thread records when it fires; the longest gap between
  two ticks while training runs is the longest time the window could not react to input (moving,
  resizing, Cancel). The gaps' 99th percentile and the count of gaps over 50 ms are reported too.
* **cost of the GUI**: wall time of a run through the window (from pressing Start to the end signal, with
  the live charts and merges table updating) against ``train()`` alone with the same configuration, in the
  same process. Runs alternate in ABBA order (engine, GUI, GUI, engine, ...) so that drift in machine load
  and the order hit both alike; medians are compared. CPU seconds (this process, and its reaped children:
  the counting workers, and for the GUI the training process) are reported too.
* **cancel latency**: Cancel pressed during counting, while the merge loop indexes pairs, and during
  merging; the time until the run has ended (thread finished) and the worker processes left.

Run it on a quiet machine::

    QT_QPA_PLATFORM=offscreen python bench/gui.py                  # the 100 MB corpus, 2 rounds
    QT_QPA_PLATFORM=offscreen python bench/gui.py --corpus FILE --rounds 1
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/, for `corpora`
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for `bpe_studio`

from bpe_studio.ui.app.refcounts import guard_singleton_refcounts

guard_singleton_refcounts()  # before Qt is imported and used (PySide6 6.12 on CPython 3.11)

from PySide6.QtCore import QElapsedTimer, QEventLoop, QTimer  # noqa: E402

from bpe_studio.engine import TrainConfig, train  # noqa: E402

PROBE_MS = 10


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def engine_run(config: TrainConfig) -> dict[str, Any]:
    """Train with the engine alone; wall seconds, and CPU seconds of this process and of its children.

    With Python's automatic garbage collection on, as in a fresh interpreter: once a main window exists,
    the app collects on the GUI thread's timer instead (see ``bpe_studio.ui.app.tasks``), and ``train()`` run
    here outside an event loop would then never collect, which makes the merge loop some 15% faster.
    """
    was_enabled = gc.isenabled()
    gc.enable()
    start, cpu, children = time.perf_counter(), time.process_time(), _children_cpu()
    try:
        result = train(config)
    finally:
        if not was_enabled:
            gc.disable()
    wall = time.perf_counter() - start
    return {
        "wall": wall,
        "merges": len(result.merges),
        "timings": result.timings,
        "cpu": time.process_time() - cpu,
        "children_cpu": _children_cpu() - children,
    }


_FRESH_TRAIN = """
import json, sys, time
from bpe_studio.engine import TrainConfig, train
config = TrainConfig(inputs=tuple(sys.argv[1:2]), vocab_size=int(sys.argv[2]),
                     special_tokens=("<|endoftext|>",), workers=int(sys.argv[3]))
result = train(config)
print(json.dumps({"merges": len(result.merges), "timings": result.timings}))
"""


def fresh_engine_run(config: TrainConfig) -> dict[str, Any]:
    """Train with the engine alone in a fresh interpreter, as ``bpe-studio train`` does (the GUI's training
    process is fresh too); wall seconds from starting the interpreter to its end."""
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    args = [os.fspath(config.inputs[0]), str(config.vocab_size), str(config.workers)]
    start, children = time.perf_counter(), _children_cpu()
    done = subprocess.run(
        [sys.executable, "-c", _FRESH_TRAIN, *args], env=env, capture_output=True, text=True, check=True
    )
    wall = time.perf_counter() - start
    report = json.loads(done.stdout)
    return {**report, "wall": wall, "cpu": 0.0, "children_cpu": _children_cpu() - children}


def gui_run(config: TrainConfig) -> dict[str, Any]:
    """Train through the main window; wall seconds and the event-loop gaps while training."""
    from bpe_studio.ui.app.app import create_application
    from bpe_studio.ui.app.main_window import DEFAULT_SIZE, MainWindow
    from bpe_studio.ui.app.settings import Settings, TrainSettings

    create_application()
    window = MainWindow(Settings(), persist=False)
    window.resize(*DEFAULT_SIZE)
    window.show()
    view = window.train_view
    view.apply_settings(
        TrainSettings(
            inputs=[os.fspath(p) for p in config.inputs],
            vocab_size=config.vocab_size,
            special_tokens=list(config.special_tokens),
            pattern=config.pattern,
            workers=config.workers,
            min_frequency=config.min_frequency,
        )
    )
    assert view.build_config() == config, "the form does not reproduce the configuration"
    # Let the window settle and the corpus preview finish (as a user would see it) before starting.
    settle = QEventLoop()
    QTimer.singleShot(300, settle.quit)
    settle.exec()
    while view.scanner.is_scanning():
        settle = QEventLoop()
        view.scanner.done.connect(settle.quit)
        QTimer.singleShot(100, settle.quit)
        settle.exec()

    ticks: list[int] = []
    clock = QElapsedTimer()
    clock.start()
    probe = QTimer()
    probe.setInterval(PROBE_MS)
    probe.timeout.connect(lambda: ticks.append(clock.nsecsElapsed()))
    ended: list[str] = []
    loop = QEventLoop()

    def on_ended(how: str) -> None:
        ended.append(how)
        loop.quit()

    view.training_ended.connect(on_ended)
    probe.start()
    ticks.append(clock.nsecsElapsed())
    start, cpu_start = time.perf_counter(), time.thread_time()
    process_cpu, children = time.process_time(), _children_cpu()
    assert view.start_training()
    loop.exec()
    # The last tick is taken when the app has handled the end of training, before the bench's own
    # blocking wait for the child below (the app never waits like that on the GUI thread).
    ticks.append(clock.nsecsElapsed())
    probe.stop()
    wall = time.perf_counter() - start
    gui_cpu = time.thread_time() - cpu_start
    process_cpu = time.process_time() - process_cpu
    view.runner.wait()  # the child has been reaped: its CPU time is counted
    children = _children_cpu() - children
    assert ended == ["finished"], ended
    result = view.result
    assert result is not None
    gaps = [(b - a) / 1e6 for a, b in itertools.pairwise(ticks)]
    # When the long gaps happened (seconds since Start, and the gap in ms), to tell the phases apart.
    start_ns = ticks[0]
    long_gaps = [
        (round((a - start_ns) / 1e9, 2), round((b - a) / 1e6))
        for a, b in itertools.pairwise(ticks)
        if b - a > 50e6
    ]
    window.close()
    window.deleteLater()
    return {
        "wall": wall,
        "merges": len(result.merges),
        "timings": result.timings,
        "gui_thread_cpu": gui_cpu,
        "cpu": process_cpu,
        "children_cpu": children,
        "max_gap_ms": max(gaps),
        "p99_gap_ms": statistics.quantiles(gaps, n=100)[98],
        "gaps_over_50ms": sum(g > 50 for g in gaps),
        "ticks": len(gaps),
        "long_gaps": long_gaps,
        "table_rows": view.merges_model.rowCount(),
    }


def cancel_run(config: TrainConfig, phase: str, delay: float) -> dict[str, Any]:
    """Start a run through the window and press Cancel ``delay`` seconds after ``phase`` began; returns
    how long Cancel took to end the run and how many counting processes were left."""
    from bpe_studio.engine import PhaseStarted
    from bpe_studio.ui.app.app import create_application
    from bpe_studio.ui.app.main_window import MainWindow
    from bpe_studio.ui.app.settings import Settings, TrainSettings

    create_application()
    window = MainWindow(Settings(), persist=False)
    window.show()
    view = window.train_view
    view.apply_settings(
        TrainSettings(
            inputs=[os.fspath(p) for p in config.inputs],
            vocab_size=config.vocab_size,
            special_tokens=list(config.special_tokens),
            workers=config.workers,
        )
    )
    pressed: list[float] = []
    ended: list[str] = []
    loop = QEventLoop()

    def press() -> None:
        pressed.append(time.perf_counter())
        view.cancel_button.click()

    def on_progress(events: list[Any]) -> None:
        if not pressed and any(isinstance(e, PhaseStarted) and e.phase.value == phase for e in events):
            QTimer.singleShot(int(delay * 1000), press)

    def on_ended(how: str) -> None:
        ended.append(how)
        loop.quit()

    view.runner.progress.connect(on_progress)
    view.training_ended.connect(on_ended)
    assert view.start_training()
    loop.exec()
    latency = time.perf_counter() - pressed[0] if pressed else float("nan")
    import psutil

    left = [p for p in psutil.Process().children(recursive=True) if p.status() != psutil.STATUS_ZOMBIE]
    window.close()
    window.deleteLater()
    return {
        "phase": phase,
        "delay": delay,
        "ended": ended[0],
        "latency_s": latency,
        "processes_left": len(left),
    }


def _phases(run: dict[str, Any]) -> str:
    phases = ", ".join(f"{name} {seconds:.2f} s" for name, seconds in run["timings"].items())
    return f"{phases}; CPU: this process {run['cpu']:.2f} s, children {run['children_cpu']:.2f} s"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, help="corpus file (default: the ~100 MB natural corpus)")
    parser.add_argument("--vocab-size", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2, help="engine+GUI pairs to run")
    parser.add_argument(
        "--fresh", action="store_true", help="also time train() in a fresh interpreter (as the CLI runs it)"
    )
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    parser.add_argument("--no-cancel", action="store_true", help="skip the cancel-latency runs")
    args = parser.parse_args()
    if args.corpus is None:
        from corpora import natural

        args.corpus = natural()
    config = TrainConfig(
        inputs=(args.corpus,),
        vocab_size=args.vocab_size,
        special_tokens=("<|endoftext|>",),
        workers=args.workers,
    )
    size = args.corpus.stat().st_size
    print(f"corpus {args.corpus} ({size / 1e6:.1f} MB), vocab {args.vocab_size}, {args.workers} workers")
    engine: list[dict[str, Any]] = []
    fresh: list[dict[str, Any]] = []
    gui: list[dict[str, Any]] = []

    def run_engine(i: int) -> None:
        engine.append(engine_run(config))
        print(f"round {i + 1}: engine {engine[-1]['wall']:.2f} s ({_phases(engine[-1])})", flush=True)
        if args.fresh:
            fresh.append(fresh_engine_run(config))
            print(f"round {i + 1}: fresh  {fresh[-1]['wall']:.2f} s ({_phases(fresh[-1])})", flush=True)

    def run_gui(i: int) -> None:
        gui.append(gui_run(config))
        g = gui[-1]
        print(
            f"round {i + 1}: GUI    {g['wall']:.2f} s, longest event-loop gap {g['max_gap_ms']:.1f} ms "
            f"(p99 {g['p99_gap_ms']:.1f} ms, {g['gaps_over_50ms']} gaps > 50 ms of {g['ticks']}) "
            f"({_phases(g)})",
            flush=True,
        )

    for i in range(args.rounds):
        # ABBA order (engine, GUI, GUI, engine, ...), so that neither always runs first or second.
        for run in (run_engine, run_gui) if i % 2 == 0 else (run_gui, run_engine):
            run(i)
        assert gui[-1]["merges"] == engine[-1]["merges"] == gui[-1]["table_rows"]
    cancels: list[dict[str, Any]] = []
    if not args.no_cancel:
        # Cancel 1 s into counting, as soon as the merge loop starts indexing pairs, and 1 s into merging.
        for phase, delay in (("counting", 1.0), ("merging", 0.0), ("merging", 3.0)):
            cancels.append(cancel_run(config, phase, delay))
            c = cancels[-1]
            print(
                f"cancel {delay:.0f} s into {phase}: {c['ended']} after {c['latency_s'] * 1000:.0f} ms, "
                f"{c['processes_left']} worker processes left",
                flush=True,
            )
    engine_wall = statistics.median(r["wall"] for r in engine)
    fresh_wall = statistics.median(r["wall"] for r in fresh) if fresh else None
    gui_wall = statistics.median(r["wall"] for r in gui)
    summary = {
        "corpus_bytes": size,
        "vocab_size": args.vocab_size,
        "workers": args.workers,
        "rounds": args.rounds,
        "engine_wall_s": [round(r["wall"], 3) for r in engine],
        "gui_wall_s": [round(r["wall"], 3) for r in gui],
        "engine_wall_median_s": round(engine_wall, 3),
        "gui_wall_median_s": round(gui_wall, 3),
        "gui_overhead_pct": round(100 * (gui_wall / engine_wall - 1), 2),
        "fresh_wall_s": [round(r["wall"], 3) for r in fresh],
        "fresh_wall_median_s": round(fresh_wall, 3) if fresh_wall else None,
        "gui_overhead_vs_fresh_pct": round(100 * (gui_wall / fresh_wall - 1), 2) if fresh_wall else None,
        "fresh_timings": [{k: round(v, 2) for k, v in r["timings"].items()} for r in fresh],
        "fresh_children_cpu_s": [round(r["children_cpu"], 2) for r in fresh],
        "max_gap_ms": round(max(r["max_gap_ms"] for r in gui), 1),
        "p99_gap_ms": round(max(r["p99_gap_ms"] for r in gui), 1),
        "gaps_over_50ms": [r["gaps_over_50ms"] for r in gui],
        "long_gaps_at_s_ms": [r["long_gaps"] for r in gui],
        "gui_timings": [{k: round(v, 2) for k, v in r["timings"].items()} for r in gui],
        "engine_timings": [{k: round(v, 2) for k, v in r["timings"].items()} for r in engine],
        "gui_thread_cpu_s": [round(r["gui_thread_cpu"], 2) for r in gui],
        "engine_cpu_s": [round(r["cpu"], 2) for r in engine],
        "engine_children_cpu_s": [round(r["children_cpu"], 2) for r in engine],
        "gui_process_cpu_s": [round(r["cpu"], 2) for r in gui],
        "gui_children_cpu_s": [round(r["children_cpu"], 2) for r in gui],
        "cancel": [{k: (round(v, 3) if isinstance(v, float) else v) for k, v in c.items()} for c in cancels],
        "load_average": os.getloadavg(),
    }
    print(json.dumps(summary, indent=1))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
