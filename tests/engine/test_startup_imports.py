"""A fresh process that trains imports only what training needs: the network, event-loop and cluster
modules stay out of ``from bpe_studio.engine import train`` (each costs milliseconds of every run)."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from tests.fresh_python import modules_after_training, printed_by

# Modules that only a download (formats/named.py) or a Dask cluster (distributed.py) needs.
NOT_AT_START = ("urllib.request", "http.client", "ssl", "asyncio", "uuid", "multiprocessing", "logging")


def test_importing_the_engine_leaves_out_download_and_cluster_modules(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from bpe_studio.engine import TrainConfig, train\n"
        f"print(' '.join(m for m in {NOT_AT_START!r} if m in sys.modules))\n"
    )
    assert printed_by(code, cwd=tmp_path) == []


def test_a_run_that_writes_no_counts_leaves_out_the_formats_package(tmp_path: Path) -> None:
    # bpe_studio.engine.formats loads every format on import (a quarter of the engine's import time); a run
    # needs it only to write a counts file or checkpoint (training/checkpoint.py, training/preflight.py).
    found = modules_after_training(tmp_path)
    assert {m for m in found if m.startswith("bpe_studio.engine.formats")} == set()


def test_training_ascii_with_a_preset_leaves_out_regex(tmp_path: Path) -> None:
    # Checking the config compiled the preset's regex: `regex` costs 7-10 ms of every CLI run, and the
    # native scanners split an ASCII corpus without it (native.py's ASCII class table).
    from bpe_studio.engine.native import backend

    if backend() != "native":
        pytest.skip("the pure-Python engine pre-tokenizes with regex")
    assert "regex" not in modules_after_training(
        tmp_path, "low lower lowest newer wider 12 345 " * 50, pattern="cl100k"
    )


def test_every_native_scanners_pattern_passes_the_check_the_config_skips() -> None:
    # TrainConfig compiles only patterns without a native scanner: the others must be valid by construction.
    from bpe_studio.engine.pretokenize.patterns import (
        MODEL_PATTERNS,
        NATIVE_SPELLINGS,
        PATTERNS,
        SUPERWORD_PATTERN,
        compile_pattern,
        scanner_name,
    )

    spellings = [
        *PATTERNS,
        *PATTERNS.values(),
        *MODEL_PATTERNS.values(),
        *NATIVE_SPELLINGS,
        SUPERWORD_PATTERN,
    ]
    for pattern in spellings:
        assert scanner_name(pattern) is not None
        compile_pattern(pattern)


def test_a_run_from_scratch_leaves_out_hashlib(tmp_path: Path) -> None:
    # hashlib loads OpenSSL's library (2 ms and more): only a counts file, a checkpoint or a base to extend
    # is hashed (training/checkpoint.py, training/extend.py import it where they hash).
    assert "hashlib" not in modules_after_training(tmp_path)


def test_a_plain_text_run_leaves_out_decompression_json_and_worker_processes(tmp_path: Path) -> None:
    # Issue 22: gzip/bz2/lzma/json (compressed and JSON Lines inputs, counts files), pickle and the launcher
    # of worker processes (subprocess, ctypes, selectors) were imported by every run, 8-10 ms of
    # its start-up; a small plain-text run uses none of them.
    unneeded = {"gzip", "bz2", "lzma", "json", "pickle", "selectors", "subprocess", "ctypes"}
    unneeded.add("bpe_studio.engine.workers.launch")
    assert unneeded & modules_after_training(tmp_path, workers=2) == set()


def test_a_cli_run_without_a_cluster_leaves_out_dask_support(tmp_path: Path) -> None:
    # Issue 22: the CLI imported corpus.distributed (and socket) for the one except clause naming
    # ClusterError: 3 ms of every `bpe-studio train`.
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("low lower lowest newer wider " * 50, encoding="utf-8")
    args = ["train", str(corpus), "--vocab-size", "270", "--out", str(tmp_path / "tok")]
    unneeded = ("bpe_studio.engine.corpus.distributed", "socket")
    code = (
        "import sys\n"
        "from bpe_studio.cli import main\n"
        f"code = main({args!r})\n"
        f"print('IMPORTED', code, ' '.join(m for m in {unneeded!r} if m in sys.modules))\n"
    )
    printed = printed_by(code, cwd=tmp_path)  # the run's report, then the marker
    assert printed[printed.index("IMPORTED") + 1 :] == ["0"]


def test_opening_a_rank_file_with_a_models_pattern_leaves_out_regex(tmp_path: Path) -> None:
    # A model's pattern (Llama 3's) has a native scanner, so it is known to compile: opening a file with it
    # and encoding natively compiled it anyway, importing `regex` (8 ms of `inspect --pattern llama3`).
    from bpe_studio.engine.native import backend

    if backend() != "native":
        pytest.skip("the pure-Python engine pre-tokenizes with regex")
    ranks = tmp_path / "ranks.tiktoken"
    ranks.write_bytes(b"".join(base64.b64encode(bytes([b])) + b" %d\n" % b for b in range(256)))
    code = (
        "import sys\n"
        "from bpe_studio.engine import load\n"
        f"tok = load({str(ranks)!r}, pattern='llama3')\n"
        "assert tok.encode('Hello 123 world!') == list(b'Hello 123 world!')\n"
        "print('regex' in sys.modules)\n"
    )
    assert printed_by(code, cwd=tmp_path) == ["False"]
