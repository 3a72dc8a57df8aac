"""Starting the app: checks that Qt can open a window on Linux before Qt is imported, then runs the app.

Without them, a fresh Debian desktop lacking two of the libraries Qt's X11 platform plugin (``xcb``) needs
gets Qt's abort (exit 134) with a hint naming a third, and a machine without any display gets the same
abort; no Python code runs in between that could explain. So, before Qt is imported (on Linux, when Qt
would use ``xcb``): is there a display, and does every library of the plugin load? ``ldd`` on the plugin
lists each missing library (also those of Qt's own libraries, e.g. ``libEGL.so.1``); without ``ldd`` the
known libraries are tried one by one. Each missing library is printed with its Debian/Ubuntu package, and
the app exits 1. A display that is named but has no server behind it (``DISPLAY=:99`` with no X server, a
Wayland socket that is gone) also ends in Qt's abort, so the server is asked too: libxcb's ``xcb_connect``
(the connection Qt would open, authentication included) in a thread given :data:`CONNECT_TIMEOUT` seconds,
or a connection to the Wayland compositor's socket. This module is Qt-free.

Example:
    >>> display_problem({"QT_QPA_PLATFORM": "xcb"})
    'no display: set DISPLAY, or use QT_QPA_PLATFORM=offscreen for screenshots'
"""

from __future__ import annotations

import argparse
import ctypes
import importlib.util
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from .refcounts import guard_singleton_refcounts

#: Exit code when the app cannot start on this machine (not the user's mistake, and nothing ran).
EXIT_CANNOT_START = 1

#: Seconds ``ldd`` may take.
LDD_TIMEOUT = 10

#: Seconds the display server may take to accept a connection (a remote X server over TCP may not answer).
CONNECT_TIMEOUT = 5.0

#: The Debian/Ubuntu package of each library Qt's xcb platform plugin (and Qt's GUI libraries) load.
DEBIAN_PACKAGES: dict[str, str] = {
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxcb.so.1": "libxcb1",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libX11.so.6": "libx11-6",
    "libXau.so.6": "libxau6",
    "libXdmcp.so.6": "libxdmcp6",
    "libEGL.so.1": "libegl1",
    "libGL.so.1": "libgl1",
    "libGLX.so.0": "libglx0",
    "libGLdispatch.so.0": "libglvnd0",
    "libOpenGL.so.0": "libopengl0",
    "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6",
    "libglib-2.0.so.0": "libglib2.0-0",
    "libgthread-2.0.so.0": "libglib2.0-0",
    "libdbus-1.so.3": "libdbus-1-3",
    "libpng16.so.16": "libpng16-16",
    "libwayland-client.so.0": "libwayland-client0",
    "libwayland-cursor.so.0": "libwayland-cursor0",
    "libwayland-egl.so.1": "libwayland-egl1",
}

#: What ``ldd`` prints for a library it cannot find: ``\tlibxcb-icccm.so.4 => not found``.
_NOT_FOUND = re.compile(r"^\s*(\S+)\s+=>\s+not found\s*$", re.MULTILINE)


def qt_platform(env: Mapping[str, str]) -> str:
    """The platform plugin Qt will try first: ``$QT_QPA_PLATFORM``'s, else ``wayland`` or ``xcb``.

    Qt takes ``wayland`` on a Wayland session (``XDG_SESSION_TYPE=wayland`` with ``WAYLAND_DISPLAY``), else
    ``xcb`` (X11) on Linux.

    Example:
        >>> qt_platform({}), qt_platform({"QT_QPA_PLATFORM": "offscreen"})
        ('xcb', 'offscreen')
        >>> qt_platform({"QT_QPA_PLATFORM": "xcb:dpi=96;wayland"})
        'xcb'
    """
    explicit = env.get("QT_QPA_PLATFORM", "").strip()
    if explicit:
        return explicit.split(";")[0].split(":")[0].strip()
    if env.get("XDG_SESSION_TYPE") == "wayland" and env.get("WAYLAND_DISPLAY"):
        return "wayland"
    return "xcb"


def display_problem(env: Mapping[str, str]) -> str | None:
    """What is wrong with the display for Qt's ``xcb`` platform (``DISPLAY`` unset), or None.

    Example:
        >>> display_problem({"DISPLAY": ":0"}) is None
        True
    """
    if qt_platform(env) != "xcb" or env.get("DISPLAY"):
        return None
    if env.get("WAYLAND_DISPLAY"):
        return (
            "no X display: set DISPLAY, use QT_QPA_PLATFORM=wayland on this Wayland session, "
            "or QT_QPA_PLATFORM=offscreen for screenshots"
        )
    return "no display: set DISPLAY, or use QT_QPA_PLATFORM=offscreen for screenshots"


def xcb_connection_error(display: str) -> int | None:
    """What libxcb's ``xcb_connect`` gives for ``display``: 0 when the X server accepted the connection, an
    ``XCB_CONN_*`` error code when not, None when libxcb cannot be loaded (the library check says so).

    Example (on a machine with libxcb and no X server on display 12345)::

        xcb_connection_error(":12345")  # 1
    """
    try:
        xcb = ctypes.CDLL("libxcb.so.1")
    except OSError:
        return None
    xcb.xcb_connect.restype = ctypes.c_void_p
    xcb.xcb_connect.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    xcb.xcb_connection_has_error.restype = ctypes.c_int
    xcb.xcb_connection_has_error.argtypes = [ctypes.c_void_p]
    xcb.xcb_disconnect.argtypes = [ctypes.c_void_p]
    connection = xcb.xcb_connect(display.encode(), None)
    try:
        return int(xcb.xcb_connection_has_error(connection))
    finally:
        xcb.xcb_disconnect(connection)  # also frees the error object xcb returns on failure


def _within(timeout: float, call: Callable[[], int | None]) -> tuple[bool, int | None]:
    """``(True, result)`` of ``call()`` if it returns within ``timeout`` s, else ``(False, None)``.

    The call runs in a daemon thread (a ctypes call releases the GIL): a connection that hangs is left
    behind and cannot keep the process alive.

    Example:
        >>> _within(1.0, lambda: 7)
        (True, 7)
    """
    result: list[int | None] = []
    thread = threading.Thread(target=lambda: result.append(call()), name="display check", daemon=True)
    thread.start()
    thread.join(timeout)
    return (True, result[0]) if result else (False, None)


def x_server_problem(
    env: Mapping[str, str],
    *,
    timeout: float = CONNECT_TIMEOUT,
    connect: Callable[[str], int | None] = xcb_connection_error,
) -> str | None:
    """What is wrong with the X server ``DISPLAY`` names (none answers, or it refuses us), or None.

    Example:
        >>> x_server_problem({"DISPLAY": ":99"}, connect=lambda display: 1)[:37]
        'no X server answers on DISPLAY=:99 (n'
    """
    display = env.get("DISPLAY", "")
    if qt_platform(env) != "xcb" or not display:
        return None
    finished, error = _within(timeout, lambda: connect(display))
    fix = "or use QT_QPA_PLATFORM=offscreen for screenshots"
    if not finished:
        return f"the X server on DISPLAY={display} did not answer within {timeout:g} s: check DISPLAY, {fix}"
    if error is None or error == 0:
        return None
    if error == 5:  # XCB_CONN_CLOSED_PARSE_ERR
        return f"DISPLAY={display} is not a display name (e.g. :0 or host:0.0): fix DISPLAY, {fix}"
    if error == 6:  # XCB_CONN_CLOSED_INVALID_SCREEN
        return f"the X server on DISPLAY={display} has no such screen: fix DISPLAY, {fix}"
    return (
        f"no X server answers on DISPLAY={display} (none runs there, or it refuses this user): start one "
        f"or fix DISPLAY, {fix}"
    )


def wayland_socket(env: Mapping[str, str]) -> Path | None:
    """The Wayland compositor's socket Qt would connect to, or None without ``XDG_RUNTIME_DIR`` (needed
    for a relative name).

    Example:
        >>> wayland_socket({"XDG_RUNTIME_DIR": "/run/user/1000"})
        PosixPath('/run/user/1000/wayland-0')
    """
    name = env.get("WAYLAND_DISPLAY") or "wayland-0"
    if os.path.isabs(name):
        return Path(name)
    runtime = env.get("XDG_RUNTIME_DIR")
    return Path(runtime) / name if runtime else None


def _unix_connects(path: Path, timeout: float) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        try:
            sock.connect(os.fspath(path))
        except OSError:
            return False
    return True


def wayland_problem(
    env: Mapping[str, str],
    *,
    timeout: float = CONNECT_TIMEOUT,
    connects: Callable[[Path, float], bool] = _unix_connects,
) -> str | None:
    """What is wrong with the Wayland compositor Qt's ``wayland`` platform would use, or None.

    Example:
        >>> wayland_problem({"QT_QPA_PLATFORM": "wayland"})[:47]
        'no Wayland socket: XDG_RUNTIME_DIR is not set; '
    """
    if qt_platform(env) != "wayland":
        return None
    fix = "QT_QPA_PLATFORM=xcb (X11) or offscreen"
    path = wayland_socket(env)
    if path is None:
        return f"no Wayland socket: XDG_RUNTIME_DIR is not set; log in to a Wayland session, or use {fix}"
    if not path.exists():
        return f"no Wayland compositor: {path} does not exist; check WAYLAND_DISPLAY, or use {fix}"
    if not connects(path, timeout):
        return f"no Wayland compositor answers on {path}; check WAYLAND_DISPLAY, or use {fix}"
    return None


def server_problem(env: Mapping[str, str]) -> str | None:
    """What is wrong with the display server Qt would use (X or Wayland), or None."""
    return x_server_problem(env) or wayland_problem(env)


def xcb_plugin(env: Mapping[str, str]) -> Path | None:
    """The path of Qt's xcb platform plugin (``libqxcb.so``) that PySide6 will load, found without Qt."""
    folders = [Path(env["QT_QPA_PLATFORM_PLUGIN_PATH"])] if env.get("QT_QPA_PLATFORM_PLUGIN_PATH") else []
    spec = importlib.util.find_spec("PySide6")  # finds the package without importing it
    for location in (spec.submodule_search_locations or []) if spec is not None else []:
        folders.append(Path(location) / "Qt" / "plugins" / "platforms")
    for folder in folders:
        if (folder / "libqxcb.so").is_file():
            return folder / "libqxcb.so"
    return None


def missing_by_ldd(library: Path, *, ldd: str | None = None) -> list[str] | None:
    """The libraries ``ldd`` cannot find for ``library`` (its dependencies' too), or None without ``ldd``.

    Example:
        >>> missing_by_ldd(Path("/bin/sh")) or []
        []
    """
    ldd = ldd or shutil.which("ldd")
    if ldd is None:
        return None
    try:
        done = subprocess.run(
            [ldd, os.fspath(library)],
            capture_output=True,
            text=True,
            errors="replace",
            env={**os.environ, "LC_ALL": "C"},
            timeout=LDD_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return list(dict.fromkeys(_NOT_FOUND.findall(done.stdout)))


def _loads(soname: str) -> bool:
    try:
        ctypes.CDLL(soname)
    except OSError:
        return False
    return True


def missing_by_loading(sonames: Iterable[str], *, loads: Callable[[str], bool] = _loads) -> list[str]:
    """The libraries of ``sonames`` that the dynamic loader cannot load (used where there is no ``ldd``).

    Example:
        >>> missing_by_loading(["libxcb.so.1", "libxcb-icccm.so.4"], loads=lambda name: name == "libxcb.so.1")
        ['libxcb-icccm.so.4']
    """
    return [soname for soname in sonames if not loads(soname)]


def library_problems(
    env: Mapping[str, str],
    *,
    find_plugin: Callable[[Mapping[str, str]], Path | None] = xcb_plugin,
    ldd: Callable[[Path], list[str] | None] = missing_by_ldd,
    load: Callable[[Iterable[str]], list[str]] = missing_by_loading,
) -> list[str]:
    """The libraries Qt's xcb platform needs that are missing (none when Qt will not use xcb)."""
    if qt_platform(env) != "xcb":
        return []
    plugin = find_plugin(env)
    if plugin is None:
        return []  # not PySide6's usual layout: Qt will say what it misses
    missing = ldd(plugin)
    if missing is None:
        missing = load(DEBIAN_PACKAGES)
    return missing


def describe_missing_libraries(missing: list[str]) -> list[str]:
    """The lines printed for missing libraries: one per library with its package, then the apt command.

    Example:
        >>> for line in describe_missing_libraries(["libxcb-icccm.so.4"]): print(line)
        bpe-studio: error: Qt's X11 platform (xcb) needs libraries that are not installed:
        bpe-studio:   libxcb-icccm.so.4: install the Debian/Ubuntu package libxcb-icccm4
        bpe-studio: e.g. sudo apt-get install libxcb-icccm4
    """
    lines = ["bpe-studio: error: Qt's X11 platform (xcb) needs libraries that are not installed:"]
    packages: list[str] = []
    for soname in missing:
        package = DEBIAN_PACKAGES.get(soname)
        if package is None:
            lines.append(f"bpe-studio:   {soname}: find its package with `apt-file search {soname}`")
        else:
            lines.append(f"bpe-studio:   {soname}: install the Debian/Ubuntu package {package}")
            packages.append(package)
    if packages:
        lines.append(f"bpe-studio: e.g. sudo apt-get install {' '.join(dict.fromkeys(packages))}")
    return lines


def startup_problems(
    env: Mapping[str, str] | None = None,
    *,
    platform: str = sys.platform,
    missing: Callable[[Mapping[str, str]], list[str]] = library_problems,
    server: Callable[[Mapping[str, str]], str | None] = server_problem,
) -> list[str]:
    """The lines to print when Qt cannot open a window here (empty when it can, or off Linux)."""
    env = os.environ if env is None else env
    if not platform.startswith("linux"):
        return []
    lines = []
    libraries = missing(env)
    if libraries:
        lines.extend(describe_missing_libraries(libraries))
    problem = display_problem(env) or server(env)
    if problem is not None:
        lines.append(f"bpe-studio: error: {problem}")
    return lines


def run_app(args: argparse.Namespace) -> int:
    """Check that the app can start here, then import Qt and run it (:func:`bpe_studio.ui.app.app.main`)."""
    problems = startup_problems()
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return EXIT_CANNOT_START
    guard_singleton_refcounts()  # before Qt is imported and used (PySide6 6.12 on CPython 3.11)
    try:
        from .app import main
    except ImportError as exc:
        # Qt's own libraries need system libraries too (e.g. libEGL.so.1 on a minimal system).
        found = re.match(r"(\S+\.so[.\d]*): cannot open shared object file", str(exc))
        if found is None:
            raise
        lines = describe_missing_libraries([found.group(1)])
        lines[0] = "bpe-studio: error: the app cannot start: Qt needs a library that is not installed:"
        print("\n".join(lines), file=sys.stderr)
        return EXIT_CANNOT_START
    return main(args)


__all__ = [
    "DEBIAN_PACKAGES",
    "EXIT_CANNOT_START",
    "describe_missing_libraries",
    "display_problem",
    "library_problems",
    "missing_by_ldd",
    "missing_by_loading",
    "qt_platform",
    "run_app",
    "server_problem",
    "startup_problems",
    "wayland_problem",
    "wayland_socket",
    "x_server_problem",
    "xcb_connection_error",
    "xcb_plugin",
]
