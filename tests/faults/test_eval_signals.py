"""Ctrl-C, SIGTERM and SIGHUP to ``bpe-studio eval --workers 2``: the documented exit code, one line, no
traceback, and its worker processes gone (as for ``train``, see test_signals.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bpe_studio.engine import backend

from ..processes import alive, assert_no_leftover_processes, wait_for_children

psutil = pytest.importorskip("psutil")

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX signals")

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 60.0


@pytest.fixture(autouse=True)
def _no_leftover_processes() -> Iterator[None]:
    yield
    assert_no_leftover_processes(TIMEOUT)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """About 40 MB of JSON Lines: seconds of work for two workers, so the signal lands while they run."""
    path = tmp_path_factory.mktemp("eval") / "big.jsonl"
    line = "".join(
        json.dumps({"text": f"record {i}: the naïve cat sat on the mat 😀 " * 8}) + "\n" for i in range(1000)
    )
    with open(path, "w", encoding="utf-8") as handle:
        for _ in range(100):
            handle.write(line)
    return path


@pytest.mark.parametrize(
    ("signum", "to_group", "message"),
    [
        (signal.SIGINT, True, "bpe-studio: cancelled"),
        (signal.SIGTERM, False, "bpe-studio: cancelled by SIGTERM"),
        (signal.SIGHUP, True, "bpe-studio: cancelled by SIGHUP"),
    ],
    ids=["ctrl-c", "sigterm", "sighup"],
)
def test_a_signal_stops_eval_and_its_workers(
    corpus: Path, tmp_path: Path, signum: int, to_group: bool, message: str
) -> None:
    command = [sys.executable, "-m", "bpe_studio", "eval", "-t", "gpt2", "--workers", "2", str(corpus)]
    # The Python engine: worker processes (the native kernel evaluates presets on threads, tested below).
    env = {**os.environ, "PYTHONPATH": str(REPO), "BPE_STUDIO_PURE": "1"}
    proc = subprocess.Popen(
        command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        children = wait_for_children(proc.pid, 2, TIMEOUT)
        if to_group:
            os.killpg(proc.pid, signum)  # as a terminal sends Ctrl-C or a hang-up to the foreground group
        else:
            proc.send_signal(signum)
        out, err = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(TIMEOUT)
    text = err.decode("utf-8", "replace")
    assert proc.returncode == 128 + signum, text
    assert text.strip() == message and "Traceback" not in text
    assert out == b""  # no partial table
    _, left = psutil.wait_procs(alive(children), timeout=TIMEOUT)
    assert left == []


def test_a_worker_killed_fails_the_run_in_one_line(corpus: Path, tmp_path: Path) -> None:
    command = [sys.executable, "-m", "bpe_studio", "eval", "-t", "gpt2", "--workers", "2", str(corpus)]
    # The Python engine: worker processes (the native kernel evaluates presets on threads, tested below).
    env = {**os.environ, "PYTHONPATH": str(REPO), "BPE_STUDIO_PURE": "1"}
    proc = subprocess.Popen(
        command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        children = wait_for_children(proc.pid, 2, TIMEOUT)
        children[0].kill()  # as the out-of-memory killer would
        out, err = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(TIMEOUT)
    text = err.decode("utf-8", "replace")
    assert proc.returncode == 1, text
    assert text.startswith("bpe-studio: error: an evaluation worker process died (killed by SIGKILL)"), text
    assert len(text.strip().splitlines()) == 1 and out == b""
    _, left = psutil.wait_procs(alive(children), timeout=TIMEOUT)
    assert left == []


@pytest.mark.skipif(backend() != "native", reason="threads need the native kernel")
@pytest.mark.parametrize(
    ("signum", "message"),
    [(signal.SIGINT, "bpe-studio: cancelled"), (signal.SIGTERM, "bpe-studio: cancelled by SIGTERM")],
    ids=["ctrl-c", "sigterm"],
)
def test_a_signal_stops_eval_on_threads(corpus: Path, tmp_path: Path, signum: int, message: str) -> None:
    command = [sys.executable, "-m", "bpe_studio", "eval", "-t", "gpt2", "--workers", "2", str(corpus)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        process = psutil.Process(proc.pid)
        deadline = time.monotonic() + TIMEOUT
        while process.num_threads() < 3:  # the main thread and the two evaluating ones
            assert time.monotonic() < deadline and proc.poll() is None, "no evaluating threads"
            time.sleep(0.01)
        assert alive(process.children(recursive=True)) == []  # threads, not worker processes
        os.killpg(proc.pid, signum)
        out, err = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(TIMEOUT)
    text = err.decode("utf-8", "replace")
    assert proc.returncode == 128 + signum, text
    assert text.strip() == message and "Traceback" not in text
    assert out == b""
