"""The BPE Studio desktop app (PySide6 + pyqtgraph).

Importing this package first guards against reference-counting bugs of PySide6 6.12 on CPython 3.11 (see
:func:`guard_singleton_refcounts`).
"""

from __future__ import annotations

import sys

#: How much :func:`guard_singleton_refcounts` raises each singleton's reference count by.
REFCOUNT_BOOST = 1 << 48


def guard_singleton_refcounts() -> bool:
    """Make ``None``, ``True`` and ``False`` effectively immortal on CPython before 3.12.

    PySide6 6.12.0 (shiboken6 6.12.0) returns these singletons without taking a reference: every call of
    a C++ method that returns ``void`` (``setText``, ``setValue``, ``QPainter.drawLine``, ...) drops a
    reference to ``None``, and every ``Signal.emit()`` one to ``True``. From CPython 3.12 the singletons are
    immortal (PEP 683) and this is harmless; on 3.11 a count reaches zero after some thousands of calls and
    the interpreter aborts ("none_dealloc: deallocating None", "bool_dealloc: deallocating True or False").
    Immortality amounts to a reference count so high that it never reaches zero, which is what this gives
    them; they are never deallocated anyway, so nothing else changes.

    Returns whether it changed anything (False on 3.12+, on other interpreters, or when done already).
    """
    if sys.version_info >= (3, 12) or sys.implementation.name != "cpython" or hasattr(sys, "getobjects"):
        return False  # immortal already, or not the usual object layout (Py_TRACE_REFS builds)
    import ctypes

    changed = False
    for singleton in (None, True, False):
        if sys.getrefcount(singleton) > REFCOUNT_BOOST // 2:
            continue  # done already
        # ob_refcnt, a Py_ssize_t, is the first field of every object in CPython's release and debug builds.
        ctypes.c_ssize_t.from_address(id(singleton)).value += REFCOUNT_BOOST
        changed = True
    return changed


guard_singleton_refcounts()
