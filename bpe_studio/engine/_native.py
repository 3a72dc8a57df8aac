"""Which engine runs: the native kernel (``bpe_studio._native``, Rust through PyO3) or the pure-Python code.

The native kernel is built by ``pip install`` when a Rust toolchain is present; without one the package
installs and runs the pure-Python engine, which stays the readable reference. ``BPE_STUDIO_PURE=1`` forces
the Python path.

Example:
    >>> from bpe_studio.engine import backend
    >>> backend() in ("native", "python")
    True
"""

from __future__ import annotations

import os
import sys
from types import ModuleType
from typing import Literal

Backend = Literal["native", "python"]

#: Set to 1 (or any value but 0 and empty) to force the pure-Python engine.
PURE_ENV = "BPE_STUDIO_PURE"

MISSING_HINT = (
    "bpe-studio: note: the native kernel (bpe_studio._native) is not built, so training runs the slower "
    "pure-Python merge loop; to build it, install Rust (https://rustup.rs) and run `pip install -e .` again "
    f"(set {PURE_ENV}=1 to use the Python engine without this note)"
)


def _forced_pure() -> bool:
    return os.environ.get(PURE_ENV, "") not in ("", "0")


def _load() -> ModuleType | None:
    try:
        from .. import _native
    except ImportError:
        # Said once per process, at import, so that it never lands in the middle of a command's output.
        if not _forced_pure():
            print(MISSING_HINT, file=sys.stderr)
        return None
    return _native


native: ModuleType | None = _load()


def backend() -> Backend:
    """The engine that training uses now: ``"native"`` when the kernel is built and not switched off by
    ``BPE_STUDIO_PURE=1``, else ``"python"``.

    Example:
        >>> backend() in ("native", "python")
        True
    """
    return "python" if native is None or _forced_pure() else "native"


def resolve(requested: Backend | None) -> Backend:
    """The backend to use for ``requested`` (None: :func:`backend`).

    Raises:
        ValueError: ``"native"`` was asked for but the kernel is not built, or an unknown name was given.
    """
    if requested is None:
        return backend()
    if requested == "native" and native is None:
        raise ValueError(
            "the native kernel (bpe_studio._native) is not built: install Rust (https://rustup.rs) and run "
            "`pip install -e .`, or use backend='python'"
        )
    if requested not in ("native", "python"):
        raise ValueError(f"backend must be 'native' or 'python', not {requested!r}")
    return requested
