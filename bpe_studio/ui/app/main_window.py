"""The main window: a tab per task ("Train", then the tokenizer views "Playground", "Vocabulary", "Compare").

Other views plug in with :meth:`MainWindow.add_tab`; a trained or loaded tokenizer is announced with
:meth:`MainWindow.open_tokenizer`, which emits :attr:`MainWindow.tokenizer_opened` for the tokenizer views to
pick up.
"""

from __future__ import annotations

import contextlib
import logging
import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, Qt, Signal, Slot
from PySide6.QtGui import QAction, QActionGroup, QCloseEvent, QKeySequence
from PySide6.QtWidgets import QApplication, QMainWindow, QMenu, QMessageBox, QTabWidget, QWidget

from ... import __version__
from ...engine import TrainResult
from ...engine.formats import display_names
from ...engine.formats.named import GPT2_FOLDER
from ..train.form import NO_CORPUS
from ..train.view import TrainView
from .help_guide import HelpGuide, menu_shortcuts
from .settings import THEME_CHOICES, Settings, save_settings
from .style import apply_style
from .tokenizer_views import TokenizerViews
from .workspace import WorkspaceKeeper

log = logging.getLogger(__name__)

#: The window's size when no geometry was saved.
DEFAULT_SIZE = (1360, 860)


#: How File ▸ Recent tokenizers names the GPT-2 that ships with BPE Studio (not by its folder inside the
#: installed package).
BUILT_IN_GPT2 = "GPT-2 (built in)"


def recent_names(paths: list[str]) -> list[str]:
    """The Recent tokenizers menu's texts: each file's display name (``out`` for ``out/tokenizer.json``),
    told apart by parent folders when two differ only there, and the built-in GPT-2 by that name.

    Example:
        >>> recent_names(["/a/out/tokenizer.json", "/b/out/tokenizer.json", "/c/mine.tiktoken"])
        ['a/out', 'b/out', 'mine.tiktoken']
    """
    names: list[str] = display_names(list(paths))
    for i, path in enumerate(paths):
        with contextlib.suppress(OSError):
            if Path(path).resolve() == GPT2_FOLDER.resolve():
                names[i] = BUILT_IN_GPT2
    return names


class MainWindow(QMainWindow):
    """BPE Studio's main window.

    Args:
        settings: The app's settings; restored into the window and written back when it closes.
        persist: Whether to save the settings when the window closes (off for screenshots).

    Signals:
        tokenizer_opened(object, str): A tokenizer should be shown in the tokenizer views: its source (a
            ``pathlib.Path`` of a tokenizer file, or a :class:`~bpe_studio.engine.TrainResult`) and a text to
            put in the playground (may be empty).
    """

    tokenizer_opened = Signal(object, str)

    def __init__(self, settings: Settings, *, persist: bool = True, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.persist = persist
        self.setWindowTitle("BPE Studio")
        self.setObjectName("main_window")

        #: Help ▸ Guide's window, made when first asked for.
        self.help_guide: HelpGuide | None = None
        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        self.setCentralWidget(self.tabs)

        self.train_view = TrainView(settings, self)
        self.add_tab(self.train_view, "Train")
        self.train_view.tokenizer_saved.connect(self._on_train_view_tokenizer_saved)
        self.train_view.open_requested.connect(self._on_train_view_open_requested)
        self.train_view.corpora_chosen.connect(self._on_train_view_corpora_chosen)
        self.train_view.status_message.connect(self._on_train_view_status_message)

        self._build_menus()
        self.tokenizer_views = TokenizerViews(self)  # the tokenizer tabs and the Tokenizer menu
        # File ▸ Save/Open workspace…, and the tokenizer views' text, tokenizers, slider and tab kept between
        # sessions (restored last, below; not for screenshots, which neither read nor write the settings).
        self.workspace = WorkspaceKeeper(self)
        self._restore_geometry()
        self.train_view.form.start_problem_changed.connect(self._on_start_problem_changed)
        self.train_view.form.start_enabled_changed.connect(self.start_action.setEnabled)
        self._on_start_problem_changed(self.train_view.form.start_problem)
        if persist:
            self.workspace.restore_saved(settings.workspace)

    # ----------------------------------------------------------------------------------------------
    # Extension points for the tokenizer views
    # ----------------------------------------------------------------------------------------------

    def add_tab(self, widget: QWidget, title: str) -> int:
        """Add a view as a tab; returns its index."""
        return self.tabs.addTab(widget, title)

    @Slot(object, str)
    def open_tokenizer(self, source: Path | TrainResult, text: str = "") -> None:
        """Show a tokenizer (a file's path or a fresh training result) in the tokenizer views.

        Emits :attr:`tokenizer_opened`; the tokenizer views load a file in the background and, once it
        loaded, put it in the recent list (:meth:`remember_tokenizer`). A file that fails to load shows an
        error and is not remembered.
        """
        if isinstance(source, (str, os.PathLike)):
            source = Path(source)
        self.tokenizer_opened.emit(source, text)

    def remember_tokenizer(self, path: Path) -> None:
        """Put a tokenizer file first in the recent list."""
        self.settings.add_recent_tokenizer(path)
        self._refresh_recent_menus()

    # ----------------------------------------------------------------------------------------------
    # Menus
    # ----------------------------------------------------------------------------------------------

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        self.add_corpus_action = file_menu.addAction("&Add corpus files…")
        self.add_corpus_action.setShortcut(QKeySequence.StandardKey.Open)
        self.add_corpus_action.triggered.connect(self.train_view.choose_corpus_files)
        self.demo_action = file_menu.addAction("Open &demo corpus")
        self.demo_action.triggered.connect(self._on_demo_action_triggered)
        self.recent_corpora_menu = QMenu("Recent &corpora", self)
        self.recent_tokenizers_menu = QMenu("Recent &tokenizers", self)
        file_menu.addMenu(self.recent_corpora_menu)
        file_menu.addMenu(self.recent_tokenizers_menu)
        file_menu.addSeparator()
        self.save_action = file_menu.addAction("&Save tokenizer…")
        self.save_action.setShortcut(QKeySequence.StandardKey.Save)
        self.save_action.setEnabled(False)
        self.save_action.triggered.connect(self.train_view.ask_and_save_tokenizer)
        self.train_view.result_ready.connect(self._on_train_view_result_ready)
        file_menu.addSeparator()
        quit_action = file_menu.addAction("&Quit")
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.close)

        train_menu = self.menuBar().addMenu("&Training")
        train_menu.setToolTipsVisible(True)  # a disabled Start says why
        self.start_action = train_menu.addAction("&Start")
        self.start_action.setShortcut(QKeySequence("Ctrl+Return"))
        self.start_action.setEnabled(self.train_view.start_button.isEnabled())
        self.start_action.triggered.connect(self.train_view.start_training)
        self.cancel_action = train_menu.addAction("&Cancel")
        self.cancel_action.setShortcut(QKeySequence("Ctrl+."))
        self.cancel_action.triggered.connect(self.train_view.cancel_training)
        train_menu.addSeparator()
        show_train = train_menu.addAction("Show &Train")  # Ctrl+2.. show the tokenizer tabs
        show_train.setShortcut(QKeySequence("Ctrl+1"))
        show_train.triggered.connect(lambda: self.tabs.setCurrentWidget(self.train_view))
        # While a run goes on, its corpus is fixed and Cancel is what can be done; else the other way round.
        self.train_view.training_started.connect(self._on_train_view_running_changed)
        self.train_view.training_ended.connect(self._on_train_view_running_changed)
        self._on_train_view_running_changed()

        view_menu = self.menuBar().addMenu("&View")
        theme_menu = view_menu.addMenu("&Theme")
        themes = QActionGroup(self)
        themes.setExclusive(True)
        #: View ▸ Theme's actions by choice ("system", "light", "dark").
        self.theme_actions: dict[str, QAction] = {}
        for choice, text in zip(THEME_CHOICES, ("&System", "&Light", "&Dark"), strict=True):
            action = theme_menu.addAction(text)
            action.setCheckable(True)
            action.setChecked(choice == self.settings.theme)
            action.triggered.connect(lambda _checked=False, c=choice: self.set_theme(c))
            themes.addAction(action)
            self.theme_actions[choice] = action

        help_menu = self.menuBar().addMenu("&Help")
        self.guide_action = help_menu.addAction("&Guide to the views")
        self.guide_action.setShortcut(QKeySequence(Qt.Key.Key_F1))
        self.guide_action.triggered.connect(self._on_guide_action_triggered)
        about = help_menu.addAction("&About BPE Studio")
        about.triggered.connect(self._on_about_action_triggered)
        self._refresh_recent_menus()

    def set_theme(self, choice: str) -> None:
        """Use a theme ("system" follows the desktop), check its menu action and keep it in the settings."""
        self.settings.theme = choice
        self.theme_actions[choice].setChecked(True)
        app = QApplication.instance()
        if isinstance(app, QApplication):
            apply_style(app, choice)

    def _refresh_recent_menus(self) -> None:
        tokenizers = self.settings.recent_tokenizers
        for menu, items, texts, handler in (
            (
                self.recent_corpora_menu,
                self.settings.recent_corpora,
                self.settings.recent_corpora,
                self._open_recent_corpus,
            ),
            (self.recent_tokenizers_menu, tokenizers, recent_names(tokenizers), self._open_recent_tokenizer),
        ):
            menu.clear()
            menu.setToolTipsVisible(True)
            for item, text in zip(items, texts, strict=True):
                # "&" would underline the next letter; the full path is the tooltip (and the status tip).
                action = QAction(text.replace("&", "&&"), menu)
                action.setToolTip(item)
                action.setStatusTip(item)
                action.triggered.connect(lambda _checked=False, path=item, h=handler: h(path))
                menu.addAction(action)
            menu.setEnabled(bool(items))
        # The Train form offers the recent tokenizers under "Start from".
        self.train_view.form.set_recent_tokenizers(self.settings.recent_tokenizers)

    def _open_recent_corpus(self, path: str) -> None:
        self.tabs.setCurrentWidget(self.train_view)
        self.train_view.add_corpus_files([Path(path)])

    def _open_recent_tokenizer(self, path: str) -> None:
        self.open_tokenizer(Path(path))

    # ----------------------------------------------------------------------------------------------
    # Slots
    # ----------------------------------------------------------------------------------------------

    @Slot()
    def _on_demo_action_triggered(self) -> None:
        self.tabs.setCurrentWidget(self.train_view)
        self.train_view.load_demo()

    @Slot()
    def _on_guide_action_triggered(self) -> None:
        if self.help_guide is None:
            self.help_guide = HelpGuide(self, shortcuts=menu_shortcuts(self.menuBar()))
        self.help_guide.show_section(self.tabs.tabText(self.tabs.currentIndex()))

    @Slot()
    def _on_about_action_triggered(self) -> None:
        QMessageBox.about(
            self,
            "About BPE Studio",
            f"<b>BPE Studio {__version__}</b><p>Train, inspect and use byte-level BPE tokenizers.</p>",
        )

    @Slot(object)
    def _on_train_view_tokenizer_saved(self, path: Path) -> None:
        self.settings.add_recent_tokenizer(path)
        self._refresh_recent_menus()
        self.statusBar().showMessage(f"Saved {path}", 8000)

    @Slot(object)
    def _on_train_view_open_requested(self, result: TrainResult) -> None:
        self.open_tokenizer(result)

    @Slot(object)
    def _on_train_view_corpora_chosen(self, paths: list[Path]) -> None:
        for path in reversed(paths):
            self.settings.add_recent_corpus(path)
        self._refresh_recent_menus()

    @Slot(str)
    def _on_train_view_status_message(self, text: str) -> None:
        self.statusBar().showMessage(text, 8000)

    @Slot(str)
    def _on_start_problem_changed(self, problem: str) -> None:
        """Say in the status bar what to do next: add a corpus (or fix a setting), or press Start."""
        self.start_action.setToolTip(problem or "Start training (Ctrl+Return)")
        if problem == NO_CORPUS:
            self.statusBar().showMessage(
                "Add a corpus and press Start training, or try File ▸ Open demo corpus."
            )
        elif problem:
            self.statusBar().showMessage(problem)
        else:
            self.statusBar().showMessage("Ready: press Start training (Ctrl+Return).")

    @Slot()
    def _on_train_view_running_changed(self, *_args: Any) -> None:
        running = self.train_view.is_running()
        self.cancel_action.setEnabled(running)
        self.add_corpus_action.setEnabled(not running)
        self.demo_action.setEnabled(not running)
        self.recent_corpora_menu.setEnabled(not running and bool(self.settings.recent_corpora))

    @Slot(object)
    def _on_train_view_result_ready(self, result: Any) -> None:
        self.save_action.setEnabled(result is not None)

    # ----------------------------------------------------------------------------------------------
    # Geometry and closing
    # ----------------------------------------------------------------------------------------------

    def _restore_geometry(self) -> None:
        self.resize(*DEFAULT_SIZE)
        for name, text, restore in (
            ("geometry", self.settings.geometry, self.restoreGeometry),
            ("state", self.settings.window_state, self.restoreState),
        ):
            if not text:
                continue
            try:
                data = QByteArray.fromBase64(text.encode("ascii"))
            except UnicodeEncodeError:
                data = QByteArray()
            if data.isEmpty() or not restore(data):
                log.warning("ignoring the saved window %s: it is not valid", name)

    def store_settings(self) -> None:
        """Copy the window's geometry and the training form into the settings object."""
        self.settings.geometry = bytes(self.saveGeometry().toBase64().data()).decode("ascii")
        self.settings.window_state = bytes(self.saveState().toBase64().data()).decode("ascii")
        self.settings.train = self.train_view.form_settings()
        self.settings.workspace = self.workspace.capture().to_json()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt's name
        """Stop a running training (waiting for its thread) and save the settings."""
        self.train_view.shutdown()
        self.tokenizer_views.shutdown()
        self.workspace.shutdown()
        if self.persist:
            self.store_settings()
            save_settings(self.settings)
        super().closeEvent(event)


__all__ = ["BUILT_IN_GPT2", "DEFAULT_SIZE", "MainWindow", "recent_names"]
