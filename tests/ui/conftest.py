"""Fixtures of the desktop-app tests: offscreen Qt, Qt warnings fail a test, settings and caches in temporary
folders, small corpora, and a check that no training thread or worker process outlives a test."""

from __future__ import annotations

import gc
import multiprocessing
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

psutil = pytest.importorskip("psutil")

from bpe_studio.demo import CACHE_DIR_ENV, DEMO_SPECIAL_TOKEN  # noqa: E402
from bpe_studio.ui.app.settings import CONFIG_DIR_ENV, Settings  # noqa: E402

#: Qt messages that say nothing about the app: the offscreen platform cannot resize native windows.
IGNORED_QT_MESSAGES = ("This plugin does not support propagateSizeHints",)


def worker_processes() -> list[psutil.Process]:
    """Live child processes of this test process (counting workers are its only children)."""
    children = []
    for child in psutil.Process().children(recursive=True):
        try:
            if child.status() != psutil.STATUS_ZOMBIE:
                children.append(child)
        except psutil.NoSuchProcess:
            continue
    return children


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Any Qt warning (e.g. a model misuse or a thread destroyed while running) fails a UI test."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.path).parents:
            item.add_marker(pytest.mark.qt_log_level_fail("WARNING"))
            item.add_marker(pytest.mark.qt_log_ignore(*IGNORED_QT_MESSAGES))


@pytest.fixture(scope="session", autouse=True)
def _collect_on_the_gui_thread(qapp) -> Iterator[None]:  # type: ignore[no-untyped-def]
    """Collect garbage as the app does (``create_application`` installs this collector): on the GUI thread
    only, so that a worker thread never destroys Qt objects; put back as it was after the session."""
    from bpe_studio.ui.app.tasks import install_main_thread_gc

    was_enabled = gc.isenabled()
    collector = install_main_thread_gc()
    yield
    if collector is not None:
        collector.timer.stop()
        collector.deleteLater()
    gc.unfreeze()
    if was_enabled:
        gc.enable()


@pytest.fixture(scope="session")
def shared_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache folder for the whole session, so the demo corpus is built once."""
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(autouse=True)
def _app_look_restored(qapp) -> Iterator[None]:  # type: ignore[no-untyped-def]
    """A test that changes the theme (View ▸ Theme, apply_style) leaves the app's look as it found it."""
    from PySide6.QtGui import QPalette

    style, palette, sheet = qapp.style().name(), QPalette(qapp.palette()), qapp.styleSheet()
    yield
    if qapp.style().name() != style or qapp.styleSheet() != sheet or qapp.palette() != palette:
        qapp.setStyle(style)
        qapp.setStyleSheet(sheet)
        qapp.setPalette(palette)


@pytest.fixture(autouse=True)
def _isolated_dirs(tmp_path: Path, shared_cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Settings go to a fresh temporary folder; caches to the session's."""
    monkeypatch.setenv(CONFIG_DIR_ENV, str(tmp_path / "config"))
    monkeypatch.setenv(CACHE_DIR_ENV, str(shared_cache_dir))
    # tiktoken's cache: empty, so that a file on this computer cannot change what a test opens.
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tiktoken-cache"))


@pytest.fixture(autouse=True)
def _no_leftover_workers() -> Iterator[None]:
    """Fail a test that leaves a worker process running."""
    yield
    assert multiprocessing.active_children() == []
    left = worker_processes()
    for proc in left:
        proc.kill()
    assert left == [], f"worker processes left running: {[p.cmdline() for p in left]}"


def _documents() -> list[str]:
    from pydoc_data.topics import topics

    return [topics[name].strip() for name in sorted(topics)]


@pytest.fixture(scope="session")
def small_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """About 150 kB of English prose, documents joined by the special token."""
    text = DEMO_SPECIAL_TOKEN.join(_documents())[:150_000]
    path = tmp_path_factory.mktemp("corpora") / "small.txt"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def big_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """About 9 MB (several 4 MiB chunks, so two workers are really used)."""
    text = DEMO_SPECIAL_TOKEN.join(_documents())
    path = tmp_path_factory.mktemp("corpora") / "big.txt"
    with open(path, "w", encoding="utf-8") as handle:
        while handle.tell() < 9_000_000:
            handle.write(text + DEMO_SPECIAL_TOKEN)
    return path


@pytest.fixture
def settings() -> Settings:
    """Default settings."""
    return Settings()


@pytest.fixture
def window(qtbot, settings: Settings) -> Iterator:  # type: ignore[no-untyped-def]
    """The main window, shown; at the end its training is stopped and its thread must be gone."""
    from bpe_studio.ui.app.main_window import MainWindow

    win = MainWindow(settings, persist=False)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    yield win
    view = win.train_view
    view.shutdown()
    assert not view.runner.is_busy(), "the training thread outlived the test"
    if view.error_box is not None:
        view.error_box.close()
