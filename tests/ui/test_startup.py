"""Start-up checks before Qt is imported: a missing display or missing system libraries of Qt's xcb platform
are explained (packages to install, one line each) with exit 1, never Qt's abort (exit 134)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import types
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

from bpe_studio.ui.app import startup
from bpe_studio.ui.app.startup import (
    DEBIAN_PACKAGES,
    describe_missing_libraries,
    display_problem,
    library_problems,
    missing_by_ldd,
    qt_platform,
    startup_problems,
    xcb_plugin,
)

REPO = Path(__file__).resolve().parents[2]
PLUGIN = Path("/fake/PySide6/Qt/plugins/platforms/libqxcb.so")
NO_DISPLAY = "bpe-studio: error: no display: set DISPLAY, or use QT_QPA_PLATFORM=offscreen for screenshots"

#: ``ldd``'s output on a Debian 12 desktop where the app did not start (abridged).
LDD_OUTPUT = """\
\tlinux-vdso.so.1 (0x00007ffd5b5e5000)
\tlibxcb-cursor.so.0 => /lib/x86_64-linux-gnu/libxcb-cursor.so.0 (0x00007f6d0c1f3000)
\tlibxcb-icccm.so.4 => not found
\tlibxcb-keysyms.so.1 => not found
\tlibxcb.so.1 => /lib/x86_64-linux-gnu/libxcb.so.1 (0x00007f6d0c1a2000)
\tlibxcb-icccm.so.4 => not found
\t/lib64/ld-linux-x86-64.so.2 (0x00007f6d0c22e000)
"""


def _server_fine(env: Mapping[str, str]) -> None:
    """Stands for the display server check: a server answers."""


class FakeFinders:
    """Stands for the plugin finder, ``ldd`` and the loader; records what was asked."""

    def __init__(self, *, ldd: list[str] | None, unloadable: Iterable[str] = ()) -> None:
        self.ldd_result = ldd
        self.unloadable = set(unloadable)
        self.asked: list[str] = []

    def find_plugin(self, env: Mapping[str, str]) -> Path:
        self.asked.append("plugin")
        return PLUGIN

    def ldd(self, plugin: Path) -> list[str] | None:
        assert plugin == PLUGIN
        self.asked.append("ldd")
        return self.ldd_result

    def load(self, sonames: Iterable[str]) -> list[str]:
        self.asked.append("load")
        return [name for name in sonames if name in self.unloadable]

    def problems(self, env: Mapping[str, str]) -> list[str]:
        return library_problems(env, find_plugin=self.find_plugin, ldd=self.ldd, load=self.load)


def test_missing_libraries_are_named_with_their_packages_one_line_each() -> None:
    fake = FakeFinders(ldd=["libxcb-icccm.so.4", "libxcb-keysyms.so.1"])
    lines = startup_problems({"DISPLAY": ":0"}, platform="linux", missing=fake.problems, server=_server_fine)
    assert lines == [
        "bpe-studio: error: Qt's X11 platform (xcb) needs libraries that are not installed:",
        "bpe-studio:   libxcb-icccm.so.4: install the Debian/Ubuntu package libxcb-icccm4",
        "bpe-studio:   libxcb-keysyms.so.1: install the Debian/Ubuntu package libxcb-keysyms1",
        "bpe-studio: e.g. sudo apt-get install libxcb-icccm4 libxcb-keysyms1",
    ]
    assert fake.asked == ["plugin", "ldd"]


def test_without_ldd_each_known_library_is_tried() -> None:
    fake = FakeFinders(ldd=None, unloadable=["libxcb-keysyms.so.1"])
    assert fake.problems({"DISPLAY": ":0"}) == ["libxcb-keysyms.so.1"]
    assert fake.asked == ["plugin", "ldd", "load"]


def test_an_unknown_library_says_how_to_find_its_package() -> None:
    lines = describe_missing_libraries(["libfoo.so.3", "libgthread-2.0.so.0", "libglib-2.0.so.0"])
    assert "bpe-studio:   libfoo.so.3: find its package with `apt-file search libfoo.so.3`" in lines
    assert lines[-1] == "bpe-studio: e.g. sudo apt-get install libglib2.0-0"  # once


def test_all_is_well_when_nothing_is_missing() -> None:
    fake = FakeFinders(ldd=[])
    assert (
        startup_problems({"DISPLAY": ":0"}, platform="linux", missing=fake.problems, server=_server_fine)
        == []
    )


@pytest.mark.parametrize(
    "env",
    [
        {"QT_QPA_PLATFORM": "offscreen"},
        {"QT_QPA_PLATFORM": "wayland", "WAYLAND_DISPLAY": "wayland-0"},
        {"XDG_SESSION_TYPE": "wayland", "WAYLAND_DISPLAY": "wayland-0"},
    ],
)
def test_other_platforms_are_not_checked(env: dict[str, str]) -> None:
    fake = FakeFinders(ldd=["libxcb-icccm.so.4"])
    assert startup_problems(env, platform="linux", missing=fake.problems, server=_server_fine) == []
    assert fake.asked == []


def test_off_linux_nothing_is_checked() -> None:
    fake = FakeFinders(ldd=["libxcb-icccm.so.4"])
    assert startup_problems({}, platform="darwin", missing=fake.problems, server=_server_fine) == []
    assert startup_problems({}, platform="win32", missing=fake.problems, server=_server_fine) == []
    assert fake.asked == []


def test_no_display() -> None:
    fake = FakeFinders(ldd=[])
    assert startup_problems({}, platform="linux", missing=fake.problems, server=_server_fine) == [NO_DISPLAY]
    xcb = {"QT_QPA_PLATFORM": "xcb"}
    assert startup_problems(xcb, platform="linux", missing=fake.problems, server=_server_fine) == [NO_DISPLAY]
    assert display_problem({"DISPLAY": ":1"}) is None
    assert display_problem({"QT_QPA_PLATFORM": "offscreen"}) is None
    # A Wayland session that Qt would not use by itself: say how to use it.
    wayland = display_problem({"WAYLAND_DISPLAY": "wayland-0"})
    assert wayland is not None and "QT_QPA_PLATFORM=wayland" in wayland


def test_both_problems_are_told() -> None:
    fake = FakeFinders(ldd=["libxcb-icccm.so.4"])
    lines = startup_problems({}, platform="linux", missing=fake.problems, server=_server_fine)
    assert lines[-1] == NO_DISPLAY
    assert "libxcb-icccm4" in lines[1]


def test_qt_platform_follows_qt() -> None:
    assert qt_platform({}) == "xcb"
    assert qt_platform({"QT_QPA_PLATFORM": " offscreen "}) == "offscreen"
    assert qt_platform({"QT_QPA_PLATFORM": "xcb:dpi=96;wayland"}) == "xcb"
    assert qt_platform({"XDG_SESSION_TYPE": "wayland"}) == "xcb"  # no Wayland display to use
    assert qt_platform({"XDG_SESSION_TYPE": "x11", "WAYLAND_DISPLAY": "w"}) == "xcb"


def _fake_ldd(folder: Path, output: str) -> Path:
    folder.mkdir(exist_ok=True)
    script = folder / "ldd"
    (folder / "ldd-output.txt").write_text(output, encoding="utf-8")
    script.write_text(f"#!/bin/sh\ncat '{folder / 'ldd-output.txt'}'\n", encoding="utf-8")
    script.chmod(0o755)
    return script


def test_ldd_output_is_read(tmp_path: Path) -> None:
    script = _fake_ldd(tmp_path / "bin", LDD_OUTPUT)
    assert missing_by_ldd(PLUGIN, ldd=str(script)) == ["libxcb-icccm.so.4", "libxcb-keysyms.so.1"]
    assert missing_by_ldd(PLUGIN, ldd=str(tmp_path / "no-such-ldd")) is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PySide6's Linux wheel layout")
def test_the_real_plugin_is_found_and_its_libraries_listed() -> None:
    plugin = xcb_plugin({})
    assert plugin is not None and plugin.name == "libqxcb.so" and plugin.is_file()
    missing = missing_by_ldd(plugin)
    if missing is None:
        pytest.skip("no ldd on this machine")
    assert all(name in DEBIAN_PACKAGES for name in missing), missing  # the table knows each one


def test_a_library_qt_itself_lacks_is_told_too(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Importing QtGui on a minimal system: "libEGL.so.1: cannot open shared object file: ...".
    broken = types.ModuleType("bpe_studio.ui.app.app")

    def missing_library(name: str) -> object:
        raise ImportError("libEGL.so.1: cannot open shared object file: No such file or directory")

    broken.__getattr__ = missing_library  # type: ignore[method-assign]
    monkeypatch.setitem(sys.modules, "bpe_studio.ui.app.app", broken)
    monkeypatch.setattr(startup, "startup_problems", lambda: [])
    assert startup.run_app(argparse.Namespace()) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "bpe-studio: error: the app cannot start: Qt needs a library that is not installed:"
    assert err[1:] == [
        "bpe-studio:   libEGL.so.1: install the Debian/Ubuntu package libegl1",
        "bpe-studio: e.g. sudo apt-get install libegl1",
    ]


def _run_app(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bpe_studio", "--demo"],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _base_env() -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM", "XDG_SESSION_TYPE"):
        env.pop(name, None)
    return env


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the check runs on Linux")
def test_without_a_display_the_app_says_so_and_exits_1() -> None:
    done = _run_app(_base_env())
    assert done.returncode == 1, done.stderr  # Qt's abort would be -6 (134 in a shell)
    assert done.stderr.splitlines()[-1] == NO_DISPLAY
    assert "Traceback" not in done.stderr and "qt.qpa" not in done.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the check runs on Linux")
def test_missing_xcb_libraries_are_told_before_qt_aborts(tmp_path: Path) -> None:
    env = _base_env()
    fake_bin = _fake_ldd(tmp_path / "bin", LDD_OUTPUT)
    env.update(DISPLAY=":99", PATH=f"{fake_bin.parent}{os.pathsep}{env.get('PATH', '')}")
    done = _run_app(env)
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines() == [
        "bpe-studio: error: Qt's X11 platform (xcb) needs libraries that are not installed:",
        "bpe-studio:   libxcb-icccm.so.4: install the Debian/Ubuntu package libxcb-icccm4",
        "bpe-studio:   libxcb-keysyms.so.1: install the Debian/Ubuntu package libxcb-keysyms1",
        "bpe-studio: e.g. sudo apt-get install libxcb-icccm4 libxcb-keysyms1",
        *([] if _x_server_on(99) else [NO_SERVER_99]),
    ]


# ---- a display that is named but has no server behind it -------------------------------------------------

NO_SERVER_99 = (
    "bpe-studio: error: no X server answers on DISPLAY=:99 (none runs there, or it refuses this user): start "
    "one or fix DISPLAY, or use QT_QPA_PLATFORM=offscreen for screenshots"
)


def _x_server_on(number: int) -> bool:
    return Path(f"/tmp/.X11-unix/X{number}").exists()


def test_x_server_problems_are_told_in_words() -> None:
    asked: list[str] = []

    def connect(display: str) -> int:
        asked.append(display)
        return {":99": 1, "nonsense": 5, ":0.7": 6}.get(display, 0)

    assert startup.x_server_problem({"DISPLAY": ":99"}, connect=connect) == NO_SERVER_99.split("error: ")[1]
    assert "is not a display name" in (
        startup.x_server_problem({"DISPLAY": "nonsense"}, connect=connect) or ""
    )
    assert "has no such screen" in (startup.x_server_problem({"DISPLAY": ":0.7"}, connect=connect) or "")
    assert startup.x_server_problem({"DISPLAY": ":0"}, connect=connect) is None
    assert (
        startup.x_server_problem({"DISPLAY": ":0", "QT_QPA_PLATFORM": "offscreen"}, connect=connect) is None
    )
    assert asked == [":99", "nonsense", ":0.7", ":0"]
    # No libxcb to ask: the library check names it; no second guess here.
    assert startup.x_server_problem({"DISPLAY": ":99"}, connect=lambda display: None) is None


def test_an_x_server_that_never_answers_is_given_up_on() -> None:
    import threading

    release = threading.Event()

    def hangs(display: str) -> int:
        release.wait(30)
        return 0

    try:
        problem = startup.x_server_problem({"DISPLAY": "far:0"}, connect=hangs, timeout=0.05)
    finally:
        release.set()
    assert problem == (
        "the X server on DISPLAY=far:0 did not answer within 0.05 s: check DISPLAY, or use "
        "QT_QPA_PLATFORM=offscreen for screenshots"
    )


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="libxcb on Linux")
def test_libxcb_reports_a_display_without_server() -> None:
    if _x_server_on(99):
        pytest.skip("an X server runs on :99")
    assert startup.xcb_connection_error(":99") in (None, 1)  # None: no libxcb on this machine


def test_wayland_socket_is_checked(tmp_path: Path) -> None:
    import socket

    env = {"QT_QPA_PLATFORM": "wayland", "XDG_RUNTIME_DIR": str(tmp_path), "WAYLAND_DISPLAY": "wayland-5"}
    assert startup.wayland_problem(env) == (
        f"no Wayland compositor: {tmp_path / 'wayland-5'} does not exist; check WAYLAND_DISPLAY, or use "
        "QT_QPA_PLATFORM=xcb (X11) or offscreen"
    )
    assert "XDG_RUNTIME_DIR is not set" in (startup.wayland_problem({"QT_QPA_PLATFORM": "wayland"}) or "")
    stale = tmp_path / "wayland-5"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(stale))
        assert "no Wayland compositor answers on" in (startup.wayland_problem(env) or "")  # not listening
        server.listen()
        assert startup.wayland_problem(env) is None
        # An absolute WAYLAND_DISPLAY needs no XDG_RUNTIME_DIR.
        assert startup.wayland_problem({"QT_QPA_PLATFORM": "wayland", "WAYLAND_DISPLAY": str(stale)}) is None
    assert startup.wayland_problem({"DISPLAY": ":0"}) is None  # xcb: not asked


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the check runs on Linux")
def test_a_display_without_a_server_exits_1_in_words(tmp_path: Path) -> None:
    if _x_server_on(99):
        pytest.skip("an X server runs on :99")
    env = _base_env()
    # Every library is there (a fake ldd finds them all): without the server check, Qt would abort.
    fake_bin = _fake_ldd(tmp_path / "bin", "\tlibxcb.so.1 => /lib/x86_64-linux-gnu/libxcb.so.1 (0x7f)\n")
    env.update(DISPLAY=":99", PATH=f"{fake_bin.parent}{os.pathsep}{env.get('PATH', '')}")
    done = _run_app(env)
    assert done.returncode == 1, done.stderr  # Qt's abort would be -6 (134 in a shell)
    assert done.stderr.splitlines() == [NO_SERVER_99]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the check runs on Linux")
def test_a_wayland_display_without_a_compositor_exits_1_in_words(tmp_path: Path) -> None:
    env = _base_env()
    env.update(QT_QPA_PLATFORM="wayland", WAYLAND_DISPLAY="wayland-9", XDG_RUNTIME_DIR=str(tmp_path))
    done = _run_app(env)
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines() == [
        f"bpe-studio: error: no Wayland compositor: {tmp_path / 'wayland-9'} does not exist; check "
        "WAYLAND_DISPLAY, or use QT_QPA_PLATFORM=xcb (X11) or offscreen"
    ]


def test_importing_the_app_changes_no_refcount_and_starting_it_guards() -> None:
    # Importing the ui package (or every module the app needs) has no side effect on the process; the app
    # guards it when it starts (create_application), where the guard is needed.
    code = (
        "import sys\n"
        "import bpe_studio.ui, bpe_studio.ui.app.app as app\n"
        "from bpe_studio.ui.app import refcounts\n"
        "half = refcounts.REFCOUNT_BOOST // 2\n"
        "boosted = lambda: [sys.getrefcount(s) > half for s in (None, True, False)]\n"
        "print(boosted())\n"
        "app.create_application()\n"
        "print(boosted())\n"
        "print(sys.version_info < (3, 12) and refcounts.shiboken_affected(refcounts._installed_shiboken()))\n"
    )
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True, env=env
    )
    imported, started, needed = done.stdout.split("\n")[:3]
    assert imported == "[False, False, False]", done.stdout
    assert started == str([needed == "True"] * 3), done.stdout
