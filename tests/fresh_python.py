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


def printed_by_isolated(code: str, *args: str) -> list[str]:
    """The words ``code`` prints, run as ``python -I -c code ARGS`` (as the app starts its children) with
    the native kernel on whatever the suite runs; the test fails with the child's stderr if it does not
    exit 0."""
    done = subprocess.run(
        [sys.executable, "-I", "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=PACKAGE_ROOT,
        env=os.environ | {native.PURE_ENV: "0"},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()
