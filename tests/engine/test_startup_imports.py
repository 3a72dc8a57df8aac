"""A fresh process that trains imports only what training needs: the network, event-loop and cluster
modules stay out of ``from bpe_studio.engine import train`` (each costs milliseconds of every run)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import bpe_studio

# Modules that only a download (formats/named.py) or a Dask cluster (distributed.py) needs.
NOT_AT_START = ("urllib.request", "http.client", "ssl", "asyncio", "uuid", "multiprocessing", "logging")


def test_importing_the_engine_leaves_out_download_and_cluster_modules(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from bpe_studio.engine import TrainConfig, train\n"
        f"print(' '.join(m for m in {NOT_AT_START!r} if m in sys.modules))\n"
    )
    root = Path(bpe_studio.__file__).resolve().parent.parent
    env = {"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"}
    command = [sys.executable, "-c", code]
    done = subprocess.run(
        command, check=False, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == []


def test_a_run_that_writes_no_counts_leaves_out_the_formats_package(tmp_path: Path) -> None:
    # bpe_studio.engine.formats loads every format on import (a quarter of the engine's import time); a run
    # needs it only to write a counts file or checkpoint (training/checkpoint.py, training/preflight.py).
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("low lower lowest newer wider " * 50, encoding="utf-8")
    code = (
        "import sys\n"
        "from bpe_studio.engine import TrainConfig, train\n"
        f"train(TrainConfig(inputs=[{str(corpus)!r}], vocab_size=270))\n"
        "print(' '.join(m for m in sys.modules if m.startswith('bpe_studio.engine.formats')))\n"
    )
    root = Path(bpe_studio.__file__).resolve().parent.parent
    env = {"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == []
