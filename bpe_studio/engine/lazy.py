"""Public names imported on first use (PEP 562): a package's ``__getattr__`` and ``__dir__`` made from a
table of which module holds each name, so that importing the package imports none of them (opening a file
must not pay for training, writing or every other format: issue 20).

Example (at the end of a package's ``__init__.py``)::

    __getattr__, __dir__ = lazy_names(__name__, {"load": "formats.detect"})
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping

TYPE_CHECKING = False  # (typing is for type checkers only: see bpe_studio/__init__.py)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["lazy_names"]


def lazy_names(
    package: str, where: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, whose public name ``name`` lives in its module
    ``where[name]`` (relative to the package); a name imported once is kept in the package for next time.

    Example:
        >>> getattr_, dir_ = lazy_names("bpe_studio.engine", {"backend": "native"})
        >>> getattr_("backend").__name__
        'backend'
    """
    namespace = sys.modules[package].__dict__

    def getattr_(name: str) -> Any:
        """Import a public name's module on first use (and keep the name here for the next time)."""
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{module}", package), name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted({*namespace, *where})

    return getattr_, dir_
