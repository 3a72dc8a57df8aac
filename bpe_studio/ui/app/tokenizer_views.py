"""The tokenizer views of the main window: the Playground, Vocabulary and Compare tabs and the Tokenizer menu.

:class:`TokenizerViews` adds the tabs and the menu to a :class:`~bpe_studio.ui.app.main_window.MainWindow`,
listens to its ``tokenizer_opened`` signal, loads tokenizer files on a worker thread (a malformed file
shows an error and leaves the current tokenizer in place), and hands the loaded tokenizer to the tabs.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QMenu, QMessageBox

from ...engine import TrainConfig, TrainResult
from ...engine.formats.base import FormatError
from ...engine.formats.hub import download_model, find_model, resolve_model
from ...engine.formats.named import GPT2_FOLDER, download_encoding, find_cached, tiktoken_cache_dir
from ...engine.formats.tiktoken_format import (
    KNOWN_ENCODINGS,
    KnownEncoding,
    PatternRequiredError,
    SpecialTokenSpec,
)
from ...engine.humanize import error_message
from ..chat.view import ChatView
from ..compare.side_by_side import SideBySideView
from ..compare.view import CompareView
from ..export.dialog import ExportDialog
from ..export.job import default_folder
from ..playground.view import SAMPLE_TEXT, PlaygroundView
from ..present.tokenizer_info import LoadedTokenizer, from_result, listed_names, load_file
from ..vocabulary.view import VocabBrowser
from ..widgets.common import open_error_box
from ..widgets.hub_dialog import HubDialog
from ..widgets.pattern_dialog import PatternDialog
from .tasks import TaskContext, TaskRunner

if TYPE_CHECKING:
    from .main_window import MainWindow

log = logging.getLogger(__name__)

#: OpenAI's encodings offered in the Tokenizer menu, with what uses each.
OPENAI_ENCODINGS = (
    ("r50k_base", "GPT-3"),
    ("p50k_base", "Codex"),
    ("cl100k_base", "GPT-3.5, GPT-4"),
    ("o200k_base", "GPT-4o"),
)

#: File dialog filter for tokenizer files.
TOKENIZER_FILTER = (
    "Tokenizers (*.json *.tiktoken *.txt);;BPE Studio or Hugging Face (*.json);;tiktoken (*.tiktoken);;"
    "GPT-2 vocab.json (*vocab*.json);;All files (*)"
)

CURRENT, COMPARE_A, COMPARE_B, SIDE = "current", "a", "b", "side"


def describe_load_error(path: Path, exc: BaseException) -> str:
    """The message shown when a tokenizer cannot be opened: the engine's own where there is one."""
    return error_message(exc, path=path)


class TokenizerViews(QObject):
    """The tokenizer tabs, menu and loading of a main window.

    Signals:
        current_changed(object): The tokenizer shown changed (a :class:`LoadedTokenizer`).
        error_shown(str, str): An error dialog was opened (title, message).
        settled(): Nothing is loading, encoding or computing any more.
    """

    current_changed = Signal(object)
    error_shown = Signal(str, str)
    settled = Signal()

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.current: LoadedTokenizer | None = None
        self.opened: list[LoadedTokenizer] = []
        self.error_box: QMessageBox | None = None
        self.export_dialog: ExportDialog | None = None
        self.last_export_folder: Path | None = None  # where the last export went: the next one starts there
        self.last_error = ""
        self._pending_source: Path | TrainResult | None = None
        self._pending_request: tuple[str, str] = ("", CURRENT)  # the text and target of that opening

        self.playground = PlaygroundView(window)
        self.vocab_browser = VocabBrowser(window)
        self.compare = CompareView(window)
        window.add_tab(self.playground, "Playground")
        window.add_tab(self.vocab_browser, "Vocabulary")
        window.add_tab(self.compare, "Compare")
        # Issue 21: many tokenizers on one text, and chat messages through a model's template.
        self.side_by_side = SideBySideView(window)
        self.chat = ChatView(window)
        window.add_tab(self.side_by_side, "Side by side")
        window.add_tab(self.chat, "Chat")
        self.side_by_side.files_dropped.connect(self._on_side_by_side_files_dropped)
        self.side_by_side.open_file_requested.connect(self._on_side_by_side_open_file_requested)
        self.side_by_side.open_gpt2_requested.connect(self._on_side_by_side_open_gpt2_requested)
        self.side_by_side.open_hub_requested.connect(self._on_side_by_side_open_hub_requested)

        self._failed_message = ""  # the status bar's word on the last file that could not be opened
        self.loader = TaskRunner("bpe-studio-load", self)
        self.loader.finished.connect(self._on_loader_finished)
        self.loader.errored.connect(self._on_loader_errored)
        self.loader.idle.connect(self._on_busy_part_idle)
        self.playground.settled.connect(self._on_busy_part_idle)
        self.playground.files_dropped.connect(self._on_view_files_dropped)
        self.playground.token_link_activated.connect(self._on_playground_token_link_activated)
        # Linked views: a token selected in the playground is selected in the Vocabulary, and back.
        self.playground.token_selected.connect(self._on_playground_token_selected)
        self.vocab_browser.token_selected.connect(self.playground.show_token_id)
        self.vocab_browser.files_dropped.connect(self._on_view_files_dropped)
        self.compare.files_dropped.connect(self._on_compare_files_dropped)
        self.compare.open_requested.connect(self._on_compare_open_requested)
        window.tokenizer_opened.connect(self._on_window_tokenizer_opened)
        window.tabs.currentChanged.connect(self._on_tabs_current_changed)
        self._default_opening = False  # GPT-2 is being opened because nothing else was
        self._default_loaded: LoadedTokenizer | None = None  # that GPT-2, once opened
        self._build_menu()
        self._update_actions()

    # ==============================================================================================
    # Menu
    # ==============================================================================================

    def _build_menu(self) -> None:
        bar = self.window.menuBar()
        menu = QMenu("T&okenizer", bar)
        self.menu = menu
        self.open_action = menu.addAction("&Open tokenizer…")
        self.open_action.setShortcut(QKeySequence("Ctrl+Shift+O"))
        self.open_action.setToolTip(
            "A BPE Studio or Hugging Face tokenizer.json, a .tiktoken file or a GPT-2 vocab.json"
        )
        # Through a slot without parameters: triggered(bool) would pass ``checked`` into ``target``.
        self.open_action.triggered.connect(self._on_open_action_triggered)
        self.open_folder_action = menu.addAction("Open tokenizer &folder…")
        self.open_folder_action.triggered.connect(self.choose_tokenizer_folder)
        self.open_gpt2_action = menu.addAction("Open &GPT-2")
        self.open_gpt2_action.setToolTip("GPT-2's tokenizer, shipped with BPE Studio")
        self.open_gpt2_action.triggered.connect(self._on_open_gpt2_action_triggered)
        self.openai_menu = menu.addMenu("Open &OpenAI encoding")
        for name, used_by in OPENAI_ENCODINGS:
            action = self.openai_menu.addAction(f"{name} ({used_by})")
            action.setToolTip("From tiktoken's cache on this computer; downloaded only if you say so")
            action.triggered.connect(lambda _checked=False, n=name: self.open_encoding(n))
        self.open_hub_action = QAction("Open from &Hugging Face…", menu)
        self.open_hub_action.setToolTip("A model's tokenizer from the local Hugging Face cache, by model id")
        self.open_hub_action.triggered.connect(self._on_open_hub_action_triggered)
        menu.addAction(self.open_hub_action)
        file_menu = next((a.menu() for a in bar.actions() if a.text().replace("&", "") == "File"), None)
        if isinstance(file_menu, QMenu):  # File ▸ Open from Hugging Face…, before the recent files
            recent = next((a for a in file_menu.actions() if a.menu() is not None), None)
            if recent is not None:
                file_menu.insertAction(recent, self.open_hub_action)
            else:
                file_menu.addAction(self.open_hub_action)
        menu.addSeparator()
        self.side_add_action = menu.addAction("&Add to Side by side…")
        self.side_add_action.setShortcut(QKeySequence("Ctrl+Shift+A"))
        self.side_add_action.setToolTip("Open a tokenizer file as one more row of the Side by side tab")
        self.side_add_action.triggered.connect(self._on_side_by_side_open_file_requested)
        self.compare_action = menu.addAction("&Compare with…")
        self.compare_action.triggered.connect(lambda: self.choose_tokenizer_file(target=COMPARE_B))
        self.export_action = menu.addAction("&Export…")
        self.export_action.setShortcut(QKeySequence("Ctrl+E"))
        self.export_action.triggered.connect(self.show_export_dialog)
        menu.addSeparator()
        for title, widget, key in (
            ("&Playground", self.playground, "Ctrl+2"),
            ("&Vocabulary", self.vocab_browser, "Ctrl+3"),
            ("Co&mpare", self.compare, "Ctrl+4"),
            ("Side by si&de", self.side_by_side, "Ctrl+5"),
            ("C&hat", self.chat, "Ctrl+6"),
        ):
            action = QAction(f"Show {title}", menu)
            action.setShortcut(QKeySequence(key))
            action.triggered.connect(lambda _checked=False, w=widget: self.window.tabs.setCurrentWidget(w))
            menu.addAction(action)
        # Before the Help menu, which is the last one.
        actions = bar.actions()
        if actions and actions[-1].text().replace("&", "") == "Help":
            bar.insertMenu(actions[-1], menu)
        else:
            bar.addMenu(menu)

    def _update_actions(self) -> None:
        has = self.current is not None
        self.export_action.setEnabled(has)

    # ==============================================================================================
    # Opening
    # ==============================================================================================

    @Slot()
    def _on_open_action_triggered(self) -> None:
        self.choose_tokenizer_file()

    @Slot()
    def _on_open_gpt2_action_triggered(self) -> None:
        self.open(GPT2_FOLDER)

    def open_encoding(self, name: str, *, text: str = "", ask: bool = True) -> None:
        """Open one of OpenAI's encodings from tiktoken's cache; when it is missing, offer to download it
        (``ask=False``: download it at once, as ``bpe-studio --tokenizer NAME --download`` asked)."""
        encoding = KNOWN_ENCODINGS[name]
        found = find_cached(encoding)
        if found is not None:
            self.open(found, text)
            return
        if ask and not self._ask_download(encoding):
            self.window.statusBar().showMessage(f"{name} was not opened: it is not on this computer.", 8000)
            return
        self.last_error = ""

        def task(ctx: TaskContext) -> tuple[LoadedTokenizer, str, str]:
            path = download_encoding(name)  # its own timeout; the file is checked before it is kept
            ctx.check()
            loaded = load_file(path)
            _ = loaded.index
            return loaded, text, CURRENT

        self.loader.start(task)
        self.window.statusBar().showMessage(f"Downloading {name} from {encoding.url}…")
        self._pending_source = Path(f"{name}.tiktoken")
        self._pending_request = (text, CURRENT)

    @Slot()
    def _on_open_hub_action_triggered(self) -> None:
        answer = HubDialog.ask(self.window)
        if answer is not None:
            self.open_model(answer.model_id, download=answer.download)

    def open_model(self, model_id: str, *, download: bool = False, target: str = CURRENT) -> None:
        """Open a Hugging Face model's tokenizer from the local cache, as the CLI resolves ``ORG/NAME``;
        with ``download``, fetch its tokenizer files first when not cached (within the download deadline);
        ``target``: the current tokenizer, or a Side by side row."""
        found = find_model(model_id)
        if found is not None:
            self.open(found, target=target)
            return
        if not download:
            self.last_error = _hub_missing(model_id)
            self.window.statusBar().showMessage(self.last_error, 8000)
            open_error_box(self.window, "Not in the Hugging Face cache", self.last_error, name="hub_missing")
            return
        self.last_error = ""

        def task(ctx: TaskContext) -> tuple[LoadedTokenizer, str, str]:
            path = download_model(model_id)  # its own deadline; only the tokenizer files
            ctx.check()
            loaded = load_file(path)
            _ = loaded.index
            return loaded, "", target

        self.loader.start(task)
        self.window.statusBar().showMessage(f"Downloading the tokenizer of {model_id}…")
        self._pending_source = Path(model_id)
        self._pending_request = ("", target)

    def _ask_download(self, encoding: KnownEncoding) -> bool:
        folder = tiktoken_cache_dir()
        where = (
            f"put <b>{encoding.name}.tiktoken</b> in <code>{folder}</code>"
            if folder is not None
            else f"set TIKTOKEN_CACHE_DIR to a folder holding <b>{encoding.name}.tiktoken</b>"
        )
        answer = QMessageBox.question(
            self.window,
            f"Download {encoding.name}?",
            f"<p><b>{encoding.name}</b> is not in tiktoken's cache on this computer, and BPE Studio never "
            f"downloads anything unasked.</p><p>Download it now from <code>{encoding.url}</code>? The file "
            "is checked against the SHA-256 that tiktoken publishes before it is kept, in tiktoken's cache "
            f"(so tiktoken finds it too).</p><p>To use a copy you already have, {where}.</p>",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        return answer == QMessageBox.StandardButton.Yes

    def choose_tokenizer_file(self, *, target: str = CURRENT) -> None:
        """Ask for a tokenizer file and open it."""
        start = os.fspath(self.current.path.parent) if self.current and self.current.path else ""
        chosen, _ = QFileDialog.getOpenFileName(self.window, "Open tokenizer", start, TOKENIZER_FILTER)
        if chosen:
            self.open(Path(chosen), target=target)

    @Slot()
    def choose_tokenizer_folder(self) -> None:
        """Ask for a tokenizer folder (GPT-2 vocab.json + merges.txt, or a tokenizer.json) and open it."""
        start = os.fspath(self.current.path.parent) if self.current and self.current.path else ""
        chosen = QFileDialog.getExistingDirectory(self.window, "Open tokenizer folder", start)
        if chosen:
            self.open(Path(chosen))

    def open(
        self,
        source: Path | TrainResult,
        text: str = "",
        *,
        target: str = CURRENT,
        pattern: str | None = None,
        special_tokens: Sequence[SpecialTokenSpec] = (),
    ) -> None:
        """Load a tokenizer in the background and show it (``target``: the current one, or a compare side;
        ``pattern`` and ``special_tokens``: for a file that states none, see
        :class:`~.pattern_dialog.PatternDialog`)."""
        if self.loader.is_busy():
            self._default_opening = False  # a tokenizer asked for replaces the default one on its way
        config: TrainConfig | None = None
        if isinstance(source, TrainResult):
            train_view = self.window.train_view
            if train_view.result is source:
                config = train_view.result_config
        self.last_error = ""

        def task(ctx: TaskContext) -> tuple[LoadedTokenizer, str, str]:
            if isinstance(source, TrainResult):
                loaded = from_result(source, config)
            else:
                loaded = load_file(source, pattern=pattern, special_tokens=special_tokens)
            ctx.check()
            _ = loaded.index  # index the merges here rather than on the GUI thread
            return loaded, text, target

        self.loader.start(task)
        self.window.statusBar().showMessage(
            f"Opening {source}…" if isinstance(source, Path) else "Opening the trained tokenizer…"
        )
        self._pending_source = source
        self._pending_request = (text, target)

    @Slot(int)
    def _on_tabs_current_changed(self, _index: int) -> None:
        """A tokenizer tab shown with no tokenizer opened shows GPT-2, which ships with BPE Studio, rather
        than an empty "No tokenizer"."""
        if self.window.tabs.currentWidget() not in (self.playground, self.vocab_browser, self.compare):
            return
        if self.current is not None or self.loader.is_busy():
            return
        self._default_opening = True
        self.open(GPT2_FOLDER)

    @Slot(object, str)
    def _on_window_tokenizer_opened(self, source: Any, text: str) -> None:
        if isinstance(source, (str, os.PathLike)):
            source = Path(source)
        self.open(source, text)

    @Slot(object)
    def _on_loader_finished(self, found: tuple[LoadedTokenizer, str, str]) -> None:
        loaded, text, target = found
        default = self._default_opening and self._pending_source == GPT2_FOLDER
        self._default_opening = False
        if default and self.current is not None:
            # GPT-2 was opened because nothing was shown, and something is now (a workspace restored
            # meanwhile): it is not wanted any more.
            return
        if default:
            self._default_loaded = loaded
        self.add_opened(loaded, text=text)
        if target == CURRENT:
            if not text and not self.playground.text():
                text = SAMPLE_TEXT  # something to look at, rather than an empty box
            self.set_current(loaded, text or None)
            if self.window.tabs.currentWidget() not in (
                self.playground,
                self.vocab_browser,
                self.compare,
                self.side_by_side,
                self.chat,
            ):
                self.window.tabs.setCurrentWidget(self.playground)
        elif target == SIDE:
            self.window.tabs.setCurrentWidget(self.side_by_side)
        else:
            if not self.compare.text():
                self.compare.set_text(self.playground.text())
            self.compare.choose(target, loaded)
            self.window.tabs.setCurrentWidget(self.compare)
        if self.current is not None and target != CURRENT:
            self._show_title(self.current)  # its listed name may have changed
        self.window.statusBar().showMessage(f"Opened {loaded.shown_name}: {loaded.summary()}", 8000)

    def add_opened(self, loaded: LoadedTokenizer, *, text: str = "") -> None:
        """Keep a loaded tokenizer among the opened ones (the Compare choices, a Side by side row, the recent
        list) without showing it as the current one; ``text`` starts the Side by side text when it is empty.
        """
        # Opening the same file again replaces the earlier entry.
        for i, other in enumerate(self.opened):
            same_file = loaded.path is not None and other.path is not None and _same(loaded.path, other.path)
            same_run = loaded.result is not None and other.result is loaded.result
            if same_file or same_run:
                self.opened[i] = loaded
                break
        else:
            self.opened.append(loaded)
        # Two files named alike (three exports' tokenizer.json) are told apart by their folders everywhere.
        for other, name in zip(self.opened, listed_names(self.opened), strict=True):
            other.listed_name = name
        self.compare.set_tokenizers(self.opened)
        self.side_by_side.set_available(self.opened)
        self.side_by_side.add_tokenizer(loaded)  # every opened tokenizer gets a row; × drops it
        if not self.side_by_side.text():
            self.side_by_side.set_text(text or self.playground.text() or SAMPLE_TEXT)
        if loaded.path is not None and loaded is not self._default_loaded:
            # (the built-in GPT-2 shown unasked is no recent file)
            self.window.remember_tokenizer(loaded.path)

    @property
    def showing_default(self) -> bool:
        """Whether the current tokenizer is the built-in GPT-2 shown because nothing else was opened (a
        workspace being restored replaces it, as a tokenizer the user asked for would)."""
        return self.current is not None and self.current is self._default_loaded

    @Slot(object)
    def _on_loader_errored(self, exc: BaseException) -> None:
        source = self._pending_source
        path = source if isinstance(source, Path) else Path("tokenizer")
        if isinstance(exc, PatternRequiredError) and isinstance(source, Path):
            # The file does not say how it splits text: ask rather than guess (a wrong one gives other ids).
            answer = PatternDialog.ask(self.window, source)
            if answer is not None:
                text, target = self._pending_request
                self.open(
                    source, text, target=target, pattern=answer.pattern, special_tokens=answer.special_tokens
                )
                return
            self.window.statusBar().showMessage(f"{source.name} was not opened: no pattern chosen.", 8000)
            return
        message = describe_load_error(path, exc)
        self.last_error = message
        log.info("cannot open %s: %s", path, message)
        # Named, and saying what is still shown: a bare "could not be opened" over another tokenizer misleads.
        shown = f"; {self.current.shown_name} is still shown" if self.current is not None else ""
        self._failed_message = f"{path.name} could not be opened{shown}."
        self.window.statusBar().showMessage(self._failed_message, 8000)
        self.show_error("Cannot open the tokenizer", message)

    def set_current(self, loaded: LoadedTokenizer, text: str | None = None) -> None:
        """Show a loaded tokenizer in every tab."""
        bar = self.window.statusBar()
        if self._failed_message and bar.currentMessage() == self._failed_message:
            bar.clearMessage()  # it was about another tokenizer
        self.current = loaded
        self.playground.set_tokenizer(loaded, text)
        self.vocab_browser.set_tokenizer(loaded)
        self.chat.set_tokenizer(loaded)
        if not self.compare.text() and text:
            self.compare.set_text(text)
        self._show_title(loaded)
        self._update_actions()
        self.current_changed.emit(loaded)

    def _show_title(self, loaded: LoadedTokenizer) -> None:
        self.window.setWindowTitle(f"{loaded.shown_name} — BPE Studio")

    # ==============================================================================================
    # Other views' requests
    # ==============================================================================================

    @Slot(object)
    def _on_view_files_dropped(self, paths: list[Path]) -> None:
        self.window.open_tokenizer(paths[0])
        if len(paths) > 1:
            self.window.statusBar().showMessage("Opened the first of the dropped files.", 8000)

    @Slot(object)
    def _on_compare_files_dropped(self, paths: list[Path]) -> None:
        self.open(paths[0], target=COMPARE_B)

    @Slot(object)
    def _on_side_by_side_files_dropped(self, paths: list[Path]) -> None:
        self.open(paths[0], target=SIDE)
        if len(paths) > 1:
            self.window.statusBar().showMessage("Added the first of the dropped files.", 8000)

    @Slot()
    def _on_side_by_side_open_file_requested(self) -> None:
        self.choose_tokenizer_file(target=SIDE)

    @Slot()
    def _on_side_by_side_open_gpt2_requested(self) -> None:
        self.open(GPT2_FOLDER, target=SIDE)

    @Slot()
    def _on_side_by_side_open_hub_requested(self) -> None:
        answer = HubDialog.ask(self.window)
        if answer is not None:
            self.open_model(answer.model_id, download=answer.download, target=SIDE)

    @Slot(str)
    def _on_compare_open_requested(self, side: str) -> None:
        self.choose_tokenizer_file(target=side)

    @Slot(int)
    def _on_playground_token_selected(self, token_id: int) -> None:
        if token_id >= 0:
            self.vocab_browser.show_token(token_id)

    @Slot(int)
    def _on_playground_token_link_activated(self, token_id: int) -> None:
        self.window.tabs.setCurrentWidget(self.vocab_browser)
        self.vocab_browser.show_token(token_id)

    @Slot()
    def show_export_dialog(self) -> ExportDialog | None:
        """Open the export dialog for the current tokenizer (at the playground slider's size)."""
        if self.current is None:
            return None
        if self.export_dialog is not None:
            self.export_dialog.close()
        dialog = ExportDialog(
            self.current,
            merges=self.playground.merges_used,
            sample=self.playground.text(),
            folder=default_folder(self.current, last=self.last_export_folder),
            parent=self.window,
        )
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.destroyed.connect(self._on_export_dialog_destroyed)
        dialog.export_finished.connect(self._on_export_dialog_finished)
        self.export_dialog = dialog
        dialog.open()
        return dialog

    @Slot()
    def _on_export_dialog_destroyed(self) -> None:
        self.export_dialog = None

    @Slot(object)
    def _on_export_dialog_finished(self, results: list[Any]) -> None:
        ok = sum(1 for item in results if item.ok)
        if ok and self.export_dialog is not None:
            self.last_export_folder = self.export_dialog.options().folder
        self.window.statusBar().showMessage(f"Exported {ok} of {len(results)} files.", 8000)

    # ==============================================================================================
    # State
    # ==============================================================================================

    def is_busy(self) -> bool:
        """Whether a tokenizer is loading or the playground is encoding."""
        return self.loader.is_busy() or self.playground.is_busy()

    @Slot()
    def _on_busy_part_idle(self) -> None:
        if not self.is_busy():
            self.settled.emit()

    def show_error(self, title: str, message: str) -> None:
        """Show an error in a window-modal message box (without blocking) and emit :attr:`error_shown`."""
        box = open_error_box(self.window, title, message, name="tokenizer_error_box")
        box.finished.connect(self._on_error_box_finished)
        self.error_box = box
        self.error_shown.emit(title, message)

    @Slot()
    def _on_error_box_finished(self) -> None:
        self.error_box = None

    def shutdown(self) -> None:
        """Stop every worker thread (when the window closes)."""
        if self.export_dialog is not None:
            self.export_dialog.runner.shutdown()
        self.loader.shutdown()
        self.playground.shutdown()
        self.compare.shutdown()
        self.side_by_side.shutdown()
        self.chat.shutdown()
        if self.error_box is not None:
            self.error_box.close()


def _same(first: Path, second: Path) -> bool:
    try:
        return first.resolve() == second.resolve()
    except OSError:  # pragma: no cover - resolve() rarely fails
        return first == second


__all__ = ["TOKENIZER_FILTER", "TokenizerViews", "describe_load_error"]


def _hub_missing(model_id: str) -> str:
    """The sentence the CLI prints for a model id not in the cache (where it looked, how to fetch it)."""
    try:
        resolve_model(model_id)
    except FormatError as exc:
        return f"{exc}; or tick “Download” in File ▸ Open from Hugging Face…"
    return ""
