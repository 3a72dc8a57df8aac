"""Run a test on both merge loops: the native kernel (bpe_studio._native) and the pure-Python one.

Example:
    @pytest.mark.parametrize("backend", BACKENDS)
    def test_something(backend: str) -> None:
        with use_backend(backend):
            result = train(...)  # MergeLoop(...) inside picks ``backend``
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from unittest import mock

import pytest

from bpe_studio.engine import backend, native

# Off CI, a checkout where the kernel is not built skips the native half; in CI (CI=true) it must be built,
# so the native half runs and fails in use_backend() if the kernel is missing.
NATIVE_NOT_BUILT = not native.built() and os.environ.get("CI") != "true"

#: Marks a test that needs the native kernel: skipped off CI when it is not built, run (and failing) in CI.
needs_native = pytest.mark.skipif(
    NATIVE_NOT_BUILT, reason="native kernel not built (pip install -e . with Rust)"
)

BACKENDS = [
    pytest.param("python", id="python"),
    pytest.param(
        "native",
        id="native",
        marks=needs_native,
    ),
]


@contextmanager
def use_backend(name: str) -> Iterator[None]:
    """Make ``MergeLoop(...)`` (and so ``train``) use ``name`` inside the block, through BPE_STUDIO_PURE."""
    with mock.patch.dict(os.environ, {native.PURE_ENV: "1" if name == "python" else "0"}):
        assert backend() == name, f"asked for the {name} merge loop, but {backend()} is active"
        yield
