"""How a ``bpe-studio`` process ends (``bpe_studio.cli.run``): without tearing the interpreter down once a
command is done, but with its exit handlers run, its output whole and its exit code kept; the usual way
while a Python thread still runs."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.fresh_python import run_isolated

# A command line run by `run()` (as the console script runs it), after registering an exit handler and
# making an object whose finalizer would speak only when the interpreter is torn down.
_PROBE = """
import atexit, sys
atexit.register(lambda: print("exit handler ran", file=sys.stderr))
class Loud:
    def __del__(self):
        print("torn down", file=sys.stderr)
kept = Loud()
{before}
sys.argv = ["bpe-studio", *sys.argv[1:]]
from bpe_studio.cli import {entry}
{call}
"""


def _run(
    *args: str, before: str = "", entry: str = "run", call: str = "run()"
) -> subprocess.CompletedProcess[str]:
    return run_isolated(_PROBE.format(before=before, entry=entry, call=call), *args)


def test_a_command_ends_without_teardown_with_its_exit_handlers_and_whole_output(tmp_path: Path) -> None:
    text = ("hello world, " * 8_000).rstrip()  # ids well past a pipe's buffer (64 kB)
    done = _run("encode", "-t", "gpt2", text)
    assert done.returncode == 0, done.stderr
    ids = done.stdout.split()
    assert len(ids) == 24_000 and ids[:3] == ["31373", "995", "11"] and ids[-1] == "11"
    assert "exit handler ran" in done.stderr
    assert "torn down" not in done.stderr  # the interpreter was not torn down

    # The usual ending, for comparison: main() returning and the interpreter ending.
    usual = _run("encode", "-t", "gpt2", "hello", entry="main", call="sys.exit(main())")
    assert usual.returncode == 0 and "torn down" in usual.stderr


def test_the_exit_code_of_a_failure_is_kept(tmp_path: Path) -> None:
    done = _run("inspect", str(tmp_path / "missing.json"))
    assert done.returncode == 2
    assert "bpe-studio: error:" in done.stderr and "exit handler ran" in done.stderr


def test_a_running_python_thread_makes_the_process_end_the_usual_way() -> None:
    # A thread started before the command, still running when it is done: the interpreter waits for it.
    before = (
        "import threading, time\n"
        "def late():\n"
        "    time.sleep(0.3)\n"
        "    print('thread finished', file=sys.stderr)\n"
        "threading.Thread(target=late).start()\n"
    )
    done = _run("encode", "-t", "gpt2", "hello", before=before)
    assert done.returncode == 0, done.stderr
    assert "thread finished" in done.stderr and "torn down" in done.stderr


def test_a_full_disk_under_standard_output_is_one_line_and_exit_code_1() -> None:
    # /dev/full: every write fails with ENOSPC, as on a full disk. Before, a traceback (exit 1) from the
    # write, or a quiet exit 141 (as if the reader had gone) from the last flush.
    for args in (("encode", "-t", "gpt2", "hello world"), ("inspect", "gpt2")):
        done = _run(*args, before="sys.stdout = open('/dev/full', 'w')")
        assert done.returncode == 1, done.stderr
        lines = [line for line in done.stderr.splitlines() if line.startswith("bpe-studio")]
        assert lines == [
            "bpe-studio: error: the output could not be written: No space left on device; free some "
            "space and run the command again"
        ], done.stderr
        assert "Traceback" not in done.stderr
