"""The launcher of child processes: isolated from the working folder and ``PYTHONPATH``, same ``bpe_studio``.

Trap modules (``regex.py``, ``numpy.py``, ``bpe_studio.py``) that write a marker file when imported are put
in the working folder, next to the corpus and on ``PYTHONPATH``; no child process may import them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from bpe_studio.engine import TrainConfig, train
from bpe_studio.engine.corpus.plan import Chunk
from bpe_studio.engine.workers import launch
from bpe_studio.engine.workers.launch import child_command, package_dir, start_child
from bpe_studio.engine.workers.protocol import read_message, write_message
from bpe_studio.ui.train.process import TrainingProcess

from ...processes import assert_no_leftover_processes

ENDOFTEXT = "<|endoftext|>"
TRAPS = ("regex", "numpy", "bpe_studio")


def _plant_traps(folder: Path, markers: Path) -> None:
    """Modules that record their import (with the importing pid) in ``markers``."""
    folder.mkdir(parents=True, exist_ok=True)
    markers.mkdir(parents=True, exist_ok=True)
    for name in TRAPS:
        (folder / f"{name}.py").write_text(
            f"import os\nopen(os.path.join({str(markers)!r}, '{name}-' + str(os.getpid())), 'w').close()\n",
            "utf-8",
        )


def _corpus(path: Path, docs: int = 400) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        ENDOFTEXT.join(f"doc {i}: the cat sat on the mat, naïvely {i * 7}.\n" * 3 for i in range(docs)),
        "utf-8",
    )
    return path


@pytest.fixture(autouse=True)
def _no_leftover_processes() -> object:
    yield
    assert_no_leftover_processes(10)


def test_command_is_isolated_and_names_this_copy() -> None:
    command = child_command("bpe_studio.engine.workers.count_worker:main")
    assert command[:3] == [sys.executable, "-I", "-c"]
    assert "-m" not in command
    assert Path(package_dir()) == Path(__file__).resolve().parents[3] / "bpe_studio"
    assert command[4] == package_dir()
    assert command[5] == ""  # this venv does not use the user's site-packages


def test_the_users_site_packages_is_appended_when_the_parent_uses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `pip install --user`: the dependencies live in the user's site-packages, which -I leaves out.
    folder = tmp_path / "user-site"
    folder.mkdir()
    (folder / "user_probe.py").write_text(
        "import json, signal, sys\n"
        "def main():\n"
        "    ignored = lambda signum: signal.getsignal(signum) == signal.SIG_IGN\n"
        "    print(json.dumps({'path': sys.path, 'sigint': ignored(signal.SIGINT),\n"
        "                      'sighup': ignored(signal.SIGHUP)}))\n",
        "utf-8",
    )
    monkeypatch.setattr(launch.site, "getusersitepackages", lambda: str(folder))
    monkeypatch.setattr(launch.site, "ENABLE_USER_SITE", True)
    monkeypatch.setattr(launch.sys, "path", [*sys.path, str(folder)])
    assert launch.user_site() == str(folder)
    child = start_child("user_probe:main", stdin=subprocess.DEVNULL)
    out, _ = child.communicate(timeout=60)
    assert child.returncode == 0
    seen = json.loads(out)
    assert seen["path"][-1] == str(folder)  # appended: it never shadows the standard library
    assert seen["sigint"] and seen["sighup"]  # the parent decides what Ctrl-C and a hang-up do


@pytest.mark.parametrize("entry_point", ["nomodule", "mod:", ":main", ""])
def test_entry_point_must_name_a_function(entry_point: str) -> None:
    with pytest.raises(ValueError, match="module:function"):
        child_command(entry_point)


def test_engine_workers_do_not_import_from_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work, markers = tmp_path / "work", tmp_path / "markers"
    _plant_traps(work, markers)
    corpus = _corpus(work / "corpus.txt")
    monkeypatch.chdir(work)
    result = train(
        TrainConfig(
            inputs=(str(corpus),), vocab_size=300, workers=2, chunk_size=4096, special_tokens=(ENDOFTEXT,)
        )
    )
    assert result.stats.documents == 400
    assert sorted(p.name for p in markers.iterdir()) == []


def test_pythonpath_does_not_reach_the_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    evil, markers = tmp_path / "evil", tmp_path / "markers"
    _plant_traps(evil, markers)
    corpus = _corpus(tmp_path / "data" / "corpus.txt")
    monkeypatch.setenv("PYTHONPATH", str(evil))
    monkeypatch.chdir(tmp_path)
    train(TrainConfig(inputs=(str(corpus),), vocab_size=300, workers=2, chunk_size=4096))
    assert sorted(p.name for p in markers.iterdir()) == []


def test_the_apps_training_child_does_not_import_from_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work, markers = tmp_path / "work", tmp_path / "markers"
    _plant_traps(work, markers)
    corpus = _corpus(work / "corpus.txt")
    monkeypatch.chdir(work)
    monkeypatch.setenv("PYTHONPATH", str(work))
    config = TrainConfig(inputs=(str(corpus),), vocab_size=300, workers=2, chunk_size=4096)
    with TrainingProcess(config) as child:
        kinds = [message[0] for message in child.messages()]
    assert kinds[-1] == "finished"
    assert sorted(p.name for p in markers.iterdir()) == []


def _copy_of_the_package(root: Path) -> Path:
    """A copy of this bpe_studio under ``root``, with a probe module that reports what a child sees."""
    shutil.copytree(package_dir(), root / "bpe_studio", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "bpe_studio" / "_probe.py").write_text(
        "import json, os, sys\n"
        "import bpe_studio, bpe_studio.engine.training.counting\n"
        # regex is imported when a pattern is first compiled (as a counting worker does), not at import.
        "from bpe_studio.engine.pretokenize.patterns import compile_pattern\n"
        "compile_pattern(r'\\w+|\\s+')\n"
        "def main():\n"
        "    regex = sys.modules['regex'].__file__ if 'regex' in sys.modules else None\n"
        "    print(json.dumps({'package': bpe_studio.__file__, 'path': sys.path, 'regex': regex,\n"
        "                      'counting': bpe_studio.engine.training.counting.__file__,\n"
        "                      'isolated': sys.flags.isolated, 'argv': sys.argv}))\n"
        "    return 7\n",
        "utf-8",
    )
    return root


def test_child_runs_the_parents_copy_of_bpe_studio_and_nothing_from_cwd_or_pythonpath(tmp_path: Path) -> None:
    # The parent imports a copy of the package (as an editable install or a checkout on PYTHONPATH would);
    # the interpreter's site-packages holds another (this venv's editable install): the child must run the
    # parent's copy, while the working folder and PYTHONPATH (both full of traps) stay out of its sys.path.
    copy = _copy_of_the_package(tmp_path / "src")
    work, evil, markers = tmp_path / "work", tmp_path / "evil", tmp_path / "markers"
    _plant_traps(work, markers)
    _plant_traps(evil, markers)
    parent = (
        "import subprocess, sys\n"
        f"sys.path[:] = [{str(copy)!r}] + [p for p in sys.path if p not in ('', {str(evil)!r})]\n"
        "from bpe_studio.engine.workers.launch import start_child\n"
        "child = start_child('bpe_studio._probe:main', stdin=subprocess.DEVNULL)\n"
        "out, _ = child.communicate(timeout=60)\n"
        "print(child.returncode)\n"
        "sys.stdout.write(out.decode())\n"
    )
    env = {**os.environ, "PYTHONPATH": str(evil)}
    done = subprocess.run(
        [sys.executable, "-P", "-c", parent],
        check=False,
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    code, report = done.stdout.split("\n", 1)
    assert code == "7"
    seen = json.loads(report)
    assert Path(seen["package"]) == copy / "bpe_studio" / "__init__.py"
    assert Path(seen["counting"]) == copy / "bpe_studio" / "engine" / "training" / "counting.py"
    assert seen["isolated"] == 1
    assert seen["argv"] == ["-c"]
    for entry in seen["path"]:
        assert entry and Path(entry).resolve() not in {work.resolve(), evil.resolve(), copy.resolve()}
    assert seen["regex"] is not None and not seen["regex"].startswith(str(tmp_path))
    assert sorted(p.name for p in markers.iterdir()) == []


def test_cli_workers_do_not_import_from_the_working_folder(tmp_path: Path) -> None:
    work, markers = tmp_path / "work", tmp_path / "markers"
    _plant_traps(work, markers)
    corpus = _corpus(work / "corpus.txt")
    # -P: the CLI itself, like the installed `bpe-studio` script, does not look in the working folder.
    done = subprocess.run(
        [
            *(sys.executable, "-P", "-m", "bpe_studio", "train", corpus.name, "--vocab-size", "300"),
            *("--workers", "2", "--chunk-size", "4096", "--out", "out", "-q"),
        ],
        check=False,
        cwd=work,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(Path(package_dir()).parent)},
    )
    assert done.returncode == 0, done.stderr
    assert (work / "out" / "tokenizer.json").is_file()
    assert sorted(p.name for p in markers.iterdir()) == []


@pytest.mark.parametrize("die_with_thread", [False, True], ids=["pid-watch", "pdeathsig"])
@pytest.mark.parametrize("stdin", ["parents-pipe", "held-open"])
def test_a_child_whose_parent_is_killed_leaves_quietly(
    tmp_path: Path, die_with_thread: bool, stdin: str
) -> None:
    # The parent starts a counting worker and is killed while the worker waits for its next message.
    # "parents-pipe": the worker's input ends with its parent (EOFError, which must not print a traceback).
    # "held-open": this test holds the worker's pipes, so only the launcher's watch of the parent (or the
    # kernel's PR_SET_PDEATHSIG) can end it; the test first has it count a chunk, so that it is past its
    # start-up (where a parent already gone is noticed at once).
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    pipes = f", stdin={in_read}, stdout={out_write}" if stdin == "held-open" else ""
    parent = (
        "import time\n"
        "from bpe_studio.engine.workers.launch import start_child\n"
        "child = start_child('bpe_studio.engine.workers.count_worker:main',\n"
        f"                    die_with_thread={die_with_thread}{pipes})\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(120)\n"
    )
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the cat sat\n", "utf-8")
    try:
        with open(tmp_path / "stderr.txt", "wb") as stderr:
            proc = subprocess.Popen(
                [sys.executable, "-c", parent],
                cwd=tmp_path,
                env={**os.environ, "PYTHONPATH": str(Path(package_dir()).parent)},
                stdout=subprocess.PIPE,
                stderr=stderr,
                pass_fds=(in_read, out_write),
            )
            os.close(in_read)
            os.close(out_write)
            try:
                assert proc.stdout is not None
                child = psutil.Process(int(proc.stdout.readline()))
                if stdin == "held-open":
                    with open(in_write, "wb", buffering=0, closefd=False) as inbox:
                        write_message(inbox, ("gpt2", [], "error"))
                        write_message(inbox, Chunk(str(corpus), 0, corpus.stat().st_size, False))
                    with open(out_read, "rb", buffering=0, closefd=False) as outbox:
                        assert read_message(outbox)[0] == "progress"
                proc.kill()
                proc.wait(timeout=60)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait(timeout=60)
        try:
            child.wait(timeout=60)  # not our child: psutil polls until it is gone
        except psutil.TimeoutExpired:
            child.kill()
            raise
    finally:
        os.close(in_write)
        os.close(out_read)
    assert (tmp_path / "stderr.txt").read_text() == ""  # no traceback from the orphan


def test_a_local_dask_clusters_processes_do_not_import_from_the_working_folder(tmp_path: Path) -> None:
    # A LocalCluster's nannies, workers and resource tracker are started by multiprocessing, not by our
    # launcher: `python -c "from multiprocessing.spawn import ..."` in the working folder, which imported
    # a `multiprocessing.py` lying there before they were started with -I. The installed `bpe-studio`
    # script is used because `python -P` would pass -P on to them and hide the problem.
    pytest.importorskip("distributed", reason="Dask is optional: pip install 'bpe-studio[distributed]'")
    script = Path(sys.executable).with_name("bpe-studio")
    if not script.is_file():
        pytest.skip(f"no installed bpe-studio script beside {sys.executable} (pip install -e .)")
    work, markers = tmp_path / "work", tmp_path / "markers"
    _plant_traps(work, markers)
    marker = f"os.path.join({str(markers)!r}, 'multiprocessing-' + str(os.getpid()))"
    trap = f"import os\nopen({marker}, 'w').close()\n"
    (work / "multiprocessing.py").write_text(trap, "utf-8")
    corpus = _corpus(work / "corpus.txt", docs=50)
    done = subprocess.run(
        [str(script), "train", corpus.name, "--vocab-size", "300", "--cluster", "local:2", "--out", "out"],
        check=False,
        cwd=work,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    assert (work / "out" / "tokenizer.json").is_file()
    assert sorted(p.name for p in markers.iterdir()) == []
