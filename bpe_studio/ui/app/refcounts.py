"""A guard against reference-counting bugs of PySide6 6.12 on CPython 3.11 (see
:func:`guard_singleton_refcounts`). Qt-free: it must run before Qt is used, so it imports none of it.

Every process that uses Qt calls it first: the app (:func:`bpe_studio.ui.app.startup.run_app` and
:func:`bpe_studio.ui.app.app.create_application`), the tests (``tests/conftest.py``), ``bench/gui.py`` and
``tools/readme_screenshot.py``. Importing :mod:`bpe_studio.ui` does not: that changes nothing in the process.
"""

from __future__ import annotations

import sys

#: How much :func:`guard_singleton_refcounts` raises each singleton's reference count by.
REFCOUNT_BOOST = 1 << 48


#: The first shiboken6 release found to drop references to ``None``/``True``/``False`` (6.12.0).
FIRST_AFFECTED_SHIBOKEN = (6, 12)


def _installed_shiboken() -> str | None:
    """The installed shiboken6's version, read from its metadata (without importing Qt)."""
    from importlib import metadata

    try:
        return metadata.version("shiboken6")
    except metadata.PackageNotFoundError:
        return None


def shiboken_affected(version: str | None) -> bool:
    """Whether a shiboken6 version needs :func:`guard_singleton_refcounts` (unknown versions: yes).

    Example:
        >>> shiboken_affected("6.12.0"), shiboken_affected("6.7.3"), shiboken_affected(None)
        (True, False, True)
    """
    if version is None:
        return True  # cannot tell: the patch is harmless, the bug is an abort
    parts: list[int] = []
    for piece in version.split(".")[:2]:
        digits = "".join(c for c in piece if c.isdigit())
        if not digits:
            return True
        parts.append(int(digits))
    return tuple(parts) >= FIRST_AFFECTED_SHIBOKEN


def guard_singleton_refcounts() -> bool:
    """Make ``None``, ``True`` and ``False`` effectively immortal on CPython before 3.12.

    PySide6 6.12.0 (shiboken6 6.12.0) returns these singletons without taking a reference: every call of
    a C++ method that returns ``void`` (``setText``, ``setValue``, ``QPainter.drawLine``, ...) drops a
    reference to ``None``, and every ``Signal.emit()`` one to ``True``. From CPython 3.12 the singletons are
    immortal (PEP 683) and this is harmless; on 3.11 a count reaches zero after some thousands of calls and
    the interpreter aborts ("none_dealloc: deallocating None", "bool_dealloc: deallocating True or False").
    Immortality amounts to a reference count so high that it never reaches zero, which is what this gives
    them; they are never deallocated anyway, so nothing else changes.

    Only shiboken6 releases from :data:`FIRST_AFFECTED_SHIBOKEN` on are patched for (older ones take their
    references; no fixed release is known yet, so later ones are treated as affected).

    Returns whether it changed anything (False on 3.12+, on other interpreters, with an unaffected
    shiboken6, or when done already).
    """
    if sys.version_info >= (3, 12) or sys.implementation.name != "cpython" or hasattr(sys, "getobjects"):
        return False  # immortal already, or not the usual object layout (Py_TRACE_REFS builds)
    if not shiboken_affected(_installed_shiboken()):
        return False
    import ctypes

    changed = False
    for singleton in (None, True, False):
        if sys.getrefcount(singleton) > REFCOUNT_BOOST // 2:
            continue  # done already
        # ob_refcnt, a Py_ssize_t, is the first field of every object in CPython's release and debug builds.
        ctypes.c_ssize_t.from_address(id(singleton)).value += REFCOUNT_BOOST
        changed = True
    return changed
