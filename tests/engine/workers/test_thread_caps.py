"""Thread pools are capped and a native panic is an ordinary exception (issue 18, item 2).

``encode_ordinary_batch(num_threads=20000)`` started 20,000 OS threads; a thread the system refused made
Rust print a backtrace and Python get ``PanicException``, a BaseException that ``except Exception`` misses.
That a panic becomes a one-line RuntimeError is the crate's unit test of its guard (rust/src/guard.rs): no
kernel input is known to panic, and the extension exports no entry point that panics on purpose.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from bpe_studio.engine import load
from bpe_studio.engine.config import InvalidUtf8Policy
from bpe_studio.engine.corpus.plan import plan_chunks
from bpe_studio.engine.training import counting as counting_module
from bpe_studio.engine.training.counting import CountOutcome, count_parallel, count_threads
from bpe_studio.engine.workers.threaded import ordered_map, pool_size

from ..backends import needs_native

#: The most threads a pool may start here: two per core.
CAP = 2 * len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 2 * (os.cpu_count() or 1)

TEXTS = [f"text {i}: it's 1234567 words, naïve 日本 {'x' * (i % 50)}\n" for i in range(300)]


@needs_native
def test_twenty_thousand_threads_asked_give_the_same_ids() -> None:
    tok = load("gpt2")
    expected = tok.encode_ordinary_batch(TEXTS, num_threads=1)
    before = threading.active_count()
    assert tok.encode_ordinary_batch(TEXTS, num_threads=20_000) == expected
    assert tok.encode_batch(TEXTS, num_threads=20_000) == expected
    assert threading.active_count() == before


@pytest.mark.parametrize("bad", [0, -1])
def test_fewer_than_one_thread_is_a_value_error(bad: int) -> None:
    with pytest.raises(ValueError, match="num_threads"):
        load("gpt2").encode_ordinary_batch(TEXTS, num_threads=bad)


@needs_native
def test_the_native_batch_refuses_zero_threads() -> None:
    tok = load("gpt2")
    with pytest.raises(ValueError, match="threads must be at least 1"):
        tok._encoder.encode_batch(TEXTS, threads=0)


def test_ordered_map_starts_no_more_threads_than_the_cap() -> None:
    seen: list[int] = []

    def run(n: int) -> int:
        seen.append(len([t for t in threading.enumerate() if t.name.startswith("capped")]))
        return n * n

    squares = list(ordered_map(run, iter(range(200)), workers=10_000, cancelled=lambda: False, name="capped"))
    assert squares == [n * n for n in range(200)]
    assert max(seen) <= CAP


def test_counting_threads_are_capped(tmp_path: Path) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text("some words here\n" * 2000, encoding="utf-8")
    chunks = plan_chunks([corpus], chunk_size=500, special_tokens=[], newline_cuts=True)
    started: list[int] = []
    real_start = threading.Thread.start

    def start(thread: threading.Thread) -> None:
        if thread.name.startswith("bpe-studio-count"):
            started.append(1)
        real_start(thread)

    options = {"pattern": "gpt2", "special_tokens": [], "policy": InvalidUtf8Policy.ERROR}
    threading.Thread.start = start  # type: ignore[method-assign]
    try:
        *_, outcome = count_threads(chunks, workers=10_000, cancelled=lambda: False, **options)  # type: ignore[arg-type]
    finally:
        threading.Thread.start = real_start  # type: ignore[method-assign]
    assert isinstance(outcome, CountOutcome)
    assert outcome.counts[" words"] == 2000
    assert 1 <= len(started) <= CAP


def test_counting_processes_are_capped(tmp_path: Path) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text("some words here\n" * 2000, encoding="utf-8")
    chunks = plan_chunks([corpus], chunk_size=5000, special_tokens=[], newline_cuts=True)
    started: list[int] = []
    real_worker = counting_module._Worker

    def worker(*args: Any) -> Any:
        started.append(1)
        return real_worker(*args)

    options: dict[str, Any] = {"pattern": "gpt2", "special_tokens": [], "policy": InvalidUtf8Policy.ERROR}
    with mock.patch.object(counting_module, "_Worker", worker):
        *_, outcome = count_parallel(chunks, workers=10_000, cancelled=lambda: False, **options)
    assert isinstance(outcome, CountOutcome)
    assert outcome.counts[" words"] == 2000
    assert 1 <= len(started) <= CAP


def test_pool_size_is_at_least_one_and_at_most_the_request() -> None:
    assert pool_size(1) == 1
    assert pool_size(0) == 1
    assert 1 <= pool_size(3) <= 3
