"""Run a few lines of Python in a fresh process and read what it prints: for tests of what a command or a
run imports (each module left out saves milliseconds of every start), which only a new interpreter shows."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import bpe_studio
from bpe_studio.engine import native

#: The folder that holds the ``bpe_studio`` package being tested (the checkout, or site-packages).
PACKAGE_ROOT = Path(bpe_studio.__file__).resolve().parent.parent


def printed_by(code: str, *, cwd: Path) -> list[str]:
    """The words ``code`` prints, run by this Python in a new process with only the package on its path
    and a minimal ``PATH``; the test fails with the child's stderr if it does not exit 0."""
    env = {"PYTHONPATH": str(PACKAGE_ROOT), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def run_isolated(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -I -c code ARGS`` run to its end (as the app starts its children), with the native kernel on
    whatever the suite runs: its exit code, stdout and stderr."""
    return subprocess.run(
        [sys.executable, "-I", "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=PACKAGE_ROOT,
        env=os.environ | {native.PURE_ENV: "0"},
    )


def printed_by_isolated(code: str, *args: str) -> list[str]:
    """The words ``code`` prints, run by :func:`run_isolated`; the test fails with the child's stderr if it
    does not exit 0."""
    done = run_isolated(code, *args)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def modules_after_training(
    tmp_path: Path, text: str = "low lower lowest newer wider " * 50, **config: object
) -> set[str]:
    """The modules a fresh process has imported once it trained on ``text`` (written to a corpus file in
    ``tmp_path``) with ``TrainConfig(vocab_size=270, **config)``, as ``from bpe_studio.engine import train``
    users run it."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(text, encoding="utf-8")
    options = {"vocab_size": 270, **config}
    code = (
        "import sys\n"
        "from bpe_studio.engine import TrainConfig, train\n"
        f"train(TrainConfig(inputs=[{str(corpus)!r}], **{options!r}))\n"
        "print(' '.join(sys.modules))\n"
    )
    return set(printed_by(code, cwd=tmp_path))
