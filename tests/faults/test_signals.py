"""Signals to a running ``bpe-studio train`` and to its workers, in the counting and the merge phase.

Each case runs the real CLI as a subprocess with ``--progress json`` and waits for the phase it wants from
the events on stdout, never by sleeping. Then the test stops reading: once the pipe is full the CLI blocks
on its next event, so the run cannot slip past the phase before the signal lands. After the signal the
test checks the documented exit code, that stderr is one line and no traceback, that every process the CLI
had started is gone, that nothing was written to the output folder, and that the corpus is unchanged.

A worker can only be signalled in the counting phase: the workers are stopped once counting ends.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bpe_studio.cli.signals import STOP_SIGNALS, stoppable

from ..processes import alive, assert_no_leftover_processes, wait_until_caught

psutil = pytest.importorskip("psutil")

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX signals")

REPO = Path(__file__).resolve().parents[2]
#: Seconds any one wait of this file may take (a busy machine is slow, but a hang must still fail).
TIMEOUT = 60.0


@dataclass(frozen=True)
class Corpus:
    path: Path
    digest: str
    options: tuple[str, ...]


def _write_corpus(path: Path, *, lines: int, seed: int, options: tuple[str, ...]) -> Corpus:
    """Random words over a small alphabet: many distinct pairs, so thousands of merges are possible."""
    rng = random.Random(seed)
    words = ["".join(rng.choice("abcdefghijklmnop") for _ in range(rng.randint(2, 9))) for _ in range(8000)]
    path.write_text("".join(" ".join(rng.choices(words, k=10)) + "\n" for _ in range(lines)), "utf-8")
    return Corpus(path, hashlib.sha256(path.read_bytes()).hexdigest(), options)


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Corpus]:
    folder = tmp_path_factory.mktemp("corpora")
    # Counting: 1.3 MB in 2 KiB chunks gives ~650 count events (~75 kB of JSON), more than a pipe holds.
    counting = ("--vocab-size", "300", "--chunk-size", "2048")
    # Merging: a small corpus, counted at once; 1,700 merge events (~250 kB of JSON), more than a pipe holds.
    merging = ("--vocab-size", "2000", "--chunk-size", "65536")
    return {
        "counting": _write_corpus(folder / "counting.txt", lines=20_000, seed=1, options=counting),
        "merging": _write_corpus(folder / "merging.txt", lines=3_000, seed=2, options=merging),
    }


@pytest.fixture(autouse=True)
def _no_leftover_processes() -> Iterator[None]:
    yield
    assert_no_leftover_processes(TIMEOUT)


def _wait_for_event(proc: subprocess.Popen[bytes], kind: str) -> None:
    """Read JSON events from the CLI's stdout until one of type ``kind`` (within :data:`TIMEOUT`)."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    pending = b""
    deadline = time.monotonic() + TIMEOUT
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            assert left > 0, f"no {kind!r} event within {TIMEOUT} s"
            if not selector.select(timeout=left):
                continue
            # Small reads: stop reading as soon as the event is there, so the CLI's pipe fills up behind it.
            data = os.read(fd, 512)
            assert data, f"the CLI ended before a {kind!r} event (exit code {proc.wait(TIMEOUT)})"
            pending += data
            *lines, pending = pending.split(b"\n")
            if any(json.loads(line)["type"] == kind for line in lines):
                return


@dataclass(frozen=True)
class Case:
    """Send ``signum`` to ``target`` (the CLI, its process group, or one worker) during ``phase``."""

    target: str
    signum: int
    phase: str
    exit_code: int
    message: str

    def __str__(self) -> str:
        return f"{signal.Signals(self.signum).name}-to-{self.target}-in-{self.phase}"


def _cancelled(signum: int) -> str:
    name = signal.Signals(signum).name
    return "bpe-studio: cancelled" if signum == signal.SIGINT else f"bpe-studio: cancelled by {name}"


WORKER_DIED = "bpe-studio: error: a counting worker process died"

CASES = [
    *(
        Case("cli", signum, phase, 128 + signum, _cancelled(signum))
        for phase in ("counting", "merging")
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    ),
    # Ctrl-C or a closed terminal reach the whole foreground process group; `timeout` signals its group too.
    *(
        Case("group", signum, "counting", 128 + signum, _cancelled(signum))
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    ),
    # SIGKILL cannot be caught: the CLI dies at once, and its workers must die with it (nothing to print).
    Case("cli", signal.SIGKILL, "counting", -signal.SIGKILL, ""),
    Case("cli", signal.SIGKILL, "merging", -signal.SIGKILL, ""),
    # A worker killed (the out-of-memory killer sends SIGKILL) or stopped from outside: the run fails.
    Case("worker", signal.SIGKILL, "counting", 1, f"{WORKER_DIED} (killed by SIGKILL); this is often a lack"),
    Case("worker", signal.SIGTERM, "counting", 1, f"{WORKER_DIED} (stopped by SIGTERM, sent from outside"),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_a_signal_stops_the_run_cleanly(case: Case, corpora: dict[str, Corpus], tmp_path: Path) -> None:
    corpus = corpora[case.phase]
    out = tmp_path / "out"
    stderr_path = tmp_path / "stderr.txt"
    command = [
        *(sys.executable, "-m", "bpe_studio", "train", str(corpus.path), *corpus.options),
        *("--workers", "2", "--progress", "json", "--out", str(out)),
    ]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    if case.phase == "counting":
        # Worker processes count on the Python backend; the native one counts in threads of the CLI's own
        # process (signals to it: tests/engine/training/test_count_threads.py).
        env["BPE_STUDIO_PURE"] = "1"
    with open(stderr_path, "wb") as stderr:
        # Its own session: a signal to "the group" reaches the CLI and its workers, and nothing of pytest's.
        proc = subprocess.Popen(
            command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=stderr, start_new_session=True
        )
        try:
            _wait_for_event(proc, "count" if case.phase == "counting" else "merge")
            children = psutil.Process(proc.pid).children(recursive=True)
            if case.phase == "counting":
                assert len(children) == 2, "counting should run in 2 worker processes"
            if case.target == "cli":
                proc.send_signal(case.signum)
            elif case.target == "group":
                os.killpg(proc.pid, case.signum)
            else:
                children[0].send_signal(case.signum)
            # Reading the rest lets a CLI blocked on a full pipe go on (to notice a dead worker).
            proc.communicate(timeout=TIMEOUT)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(TIMEOUT)
    err = stderr_path.read_text("utf-8", errors="replace")
    assert proc.returncode == case.exit_code, err
    assert "Traceback" not in err and "Error:" not in err.replace("error:", ""), err
    if case.message:
        assert len(err.strip().splitlines()) == 1, err
        assert err.strip().startswith(case.message), err
        if case.target != "worker":
            assert err.strip() == case.message
    else:
        assert err == ""
    _, left = psutil.wait_procs(alive(children), timeout=TIMEOUT)
    assert left == [], f"processes left running: {left}"
    assert not out.exists() or list(out.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == (["out"] if out.exists() else []) + ["stderr.txt"]
    assert hashlib.sha256(corpus.path.read_bytes()).hexdigest() == corpus.digest


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_stoppable_unwinds_once_and_restores_the_handlers(
    signum: signal.Signals, capsys: pytest.CaptureFixture[str]
) -> None:
    # In this process: the signal raises where the command is, its clean-up runs to the end even when more
    # signals come (they are ignored meanwhile), and the handlers are as before afterwards.
    before = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    cleaned = []

    def command() -> int:
        try:
            os.kill(os.getpid(), signum)
            for _ in range(10_000_000):  # the handler runs before this loop can end
                pass
            return 0
        finally:
            for other in STOP_SIGNALS:
                os.kill(os.getpid(), other)
            cleaned.append(True)

    assert stoppable(command)() == 128 + signum
    assert cleaned == [True]
    assert capsys.readouterr().err == _cancelled(signum) + "\n"
    assert {s: signal.getsignal(s) for s in STOP_SIGNALS} == before


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_encode_waiting_on_stdin_stops_on_a_signal(signum: signal.Signals, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the cat sat on the mat\n" * 50, "utf-8")
    tokenizer = tmp_path / "tok"
    train = ("train", str(corpus), "--vocab-size", "270", "--out", str(tokenizer))
    trained = subprocess.run(
        [sys.executable, "-m", "bpe_studio", *train],
        check=False,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=TIMEOUT,
    )
    assert trained.returncode == 0, trained.stderr
    # stdin is a pipe this test keeps open: encode waits for the rest of its input.
    proc = subprocess.Popen(
        [sys.executable, "-m", "bpe_studio", "encode", "-t", str(tokenizer)],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdin is not None
        proc.stdin.write(b"the cat sat\n" * 100)
        proc.stdin.flush()
        # The command runs: a signal now is the command's business.
        wait_until_caught(proc.pid, signum, TIMEOUT)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(TIMEOUT)
    assert proc.returncode == 128 + signum, err
    assert err.decode() == _cancelled(signum) + "\n"
