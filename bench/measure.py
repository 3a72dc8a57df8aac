"""Run a benchmark child process and measure it: wall time and the peak RSS of its whole process tree.

Example:
    >>> wall, peak, code = measure(["python3", "-c", "pass"])  # doctest: +SKIP
"""

from __future__ import annotations

import subprocess
import threading
import time
from typing import Any

import psutil

__all__ = ["measure"]


def measure(args: list[str], **popen: Any) -> tuple[float, int, int]:
    """Run ``args`` (``popen`` goes to ``subprocess.Popen``); return wall seconds, peak RSS bytes of the
    process and its children (sampled every 10 ms: worker processes count), and the exit code."""
    start = time.perf_counter()
    proc = subprocess.Popen(args, **popen)
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        parent = psutil.Process(proc.pid)
        while not done.is_set():
            try:
                tree = [parent, *parent.children(recursive=True)]
                peak = max(peak, sum(p.memory_info().rss for p in tree))
            except psutil.Error:
                pass
            done.wait(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    code = proc.wait()
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    return wall, peak, code
