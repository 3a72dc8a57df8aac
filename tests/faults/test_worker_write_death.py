"""A worker killed from outside may be found dead by the parent's next *write* rather than its next read
(a race the signal tests met under load: "bpe-studio: error: Broken pipe"). Either way the death is said
the same way, naming the signal, for the counting pool and the encoding/evaluation pool."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from typing import Any

import psutil
import pytest

from bpe_studio.engine.config import InvalidUtf8Policy
from bpe_studio.engine.formats.detect import TokenizerSource
from bpe_studio.engine.training.counting import _Worker
from bpe_studio.engine.workers.protocol import WorkerCrashedError
from bpe_studio.engine.workers.task_pool import ordered_worker_map


def _terminate_children() -> None:
    """SIGTERM every child of this process and wait until each is gone (as `kill` from a shell would)."""
    children = psutil.Process().children(recursive=True)
    for child in children:
        child.send_signal(signal.SIGTERM)
    _, alive = psutil.wait_procs(children, timeout=30)
    assert not alive


def test_a_counting_worker_found_dead_by_a_write() -> None:
    worker = _Worker(0, ("gpt2", [], InvalidUtf8Policy.ERROR.value, "text", False))
    try:
        worker.proc.send_signal(signal.SIGTERM)
        worker.proc.wait(30)
        with pytest.raises(WorkerCrashedError, match=r"stopped by SIGTERM, sent from outside"):
            worker.give(None)
    finally:
        worker.stop()


def test_a_pool_worker_found_dead_by_a_write() -> None:
    def items() -> Iterator[int]:
        _terminate_children()  # after the setup, before the first task is written to the worker
        yield 0

    results: Any = ordered_worker_map(
        "bpe_studio.engine.workers.encode_worker:main",
        (TokenizerSource("gpt2"), None, "uint16", InvalidUtf8Policy.ERROR.value, "text", False),
        items(),
        workers=1,
        cancelled=lambda: False,
        send=lambda item: item,
        receive=lambda item, answer: answer,
        role="encoding",
    )
    with pytest.raises(WorkerCrashedError, match=r"^an encoding worker process died \("):
        list(results)
