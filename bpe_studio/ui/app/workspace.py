"""The workspace: what the tokenizer views hold, kept from one session to the next and in files.

A :class:`Workspace` is the Playground text, the opened tokenizers (files and folders, Hugging Face models
by id, the built-in GPT-2; one trained in this session has no file and is left out), which one is current,
the vocab-size slider, the Side by side rows and text, the Chat messages and the current tab. The main
window saves it in the settings when it closes and restores it when it opens (tokenizers that are gone are
skipped, with one status line); *File ▸ Save workspace…* and *File ▸ Open workspace…* write and read the
same JSON object as a file.

The texts are kept up to :data:`MAX_TEXT_BYTES` each (cut at a character), so that a pasted book does not
make the settings file huge; the status bar says so when a text was cut.

The file's form (version 1)::

    {"format": "bpe-studio-workspace", "version": 1,
     "tokenizers": [{"path": "/abs/tokenizer.json"}, {"model": "Qwen/Qwen2.5-7B"}, {"builtin": "gpt2"}],
     "current": 0,
     "side_by_side": [0, 1], "text": "...", "side_text": "...", "merges": null, "tab": "Playground",
     "chat": [["user", "Hi"]], "texts_cut": false}

Example:
    >>> workspace = Workspace(tokenizers=[TokenizerRef(builtin="gpt2")], current=0, text="Hi")
    >>> workspace_from_json(workspace.to_json()) == workspace
    True
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QMenu

from ...engine.formats import atomic_write
from ...engine.formats.atomic import atomic_plan
from ...engine.formats.detect import source_files
from ...engine.formats.hub import find_model, hub_cache_dir, is_model_id
from ...engine.formats.named import GPT2_FOLDER
from ...engine.humanize import error_message
from ...engine.write_plan import WritePlan
from ..present.tokenizer_info import LoadedTokenizer, load_file
from ..widgets.common import open_error_box
from .tasks import TaskContext, TaskRunner

if TYPE_CHECKING:
    from .main_window import MainWindow

log = logging.getLogger(__name__)

#: The ``format`` of a workspace file.
WORKSPACE_FORMAT = "bpe-studio-workspace"
_VERSION = 1

#: The most a workspace keeps of each text (the Playground's, Side by side's, the chat's messages together),
#: in UTF-8 bytes.
MAX_TEXT_BYTES = 1_000_000

#: The largest workspace file read (texts are capped, so real ones are far smaller).
MAX_FILE_BYTES = 64 * 1024 * 1024

#: File dialog filter for workspace files.
WORKSPACE_FILTER = "BPE Studio workspaces (*.json);;All files (*)"

#: The built-in tokenizers a workspace names rather than by path (their folder moves with the install).
BUILTINS = {"gpt2": GPT2_FOLDER}


class WorkspaceError(ValueError):
    """A file that is not a workspace, or a workspace that cannot be written; one line naming the file."""


@dataclass(frozen=True)
class TokenizerRef:
    """Where a workspace's tokenizer comes from: a file or folder (absolute path), a Hugging Face model id
    (its tokenizer in the local cache, whichever snapshot is current) or a built-in name."""

    path: str = ""
    builtin: str = ""
    model: str = ""

    def location(self) -> Path:
        """The file or folder to load (for a model missing from the cache: its cache folder, which does not
        hold it)."""
        if self.builtin:
            return BUILTINS[self.builtin]
        if self.model:
            found = find_model(self.model)
            return (
                found if found is not None else hub_cache_dir() / ("models--" + self.model.replace("/", "--"))
            )
        return Path(self.path)

    def to_json(self) -> dict[str, str]:
        """The JSON form: ``{"path": ...}``, ``{"model": ...}`` or ``{"builtin": ...}``."""
        if self.builtin:
            return {"builtin": self.builtin}
        return {"model": self.model} if self.model else {"path": self.path}


def ref_of(loaded: LoadedTokenizer) -> TokenizerRef | None:
    """How a workspace names a tokenizer; None for one trained in this session (it has no file)."""
    if loaded.path is None:
        return None
    for name, folder in BUILTINS.items():
        if _same(loaded.path, folder):
            return TokenizerRef(builtin=name)
    model = _model_id_of(loaded.path)
    if model:
        return TokenizerRef(model=model)
    return TokenizerRef(path=os.fspath(loaded.path.absolute()))


def _model_id_of(path: Path) -> str:
    """The model id of a tokenizer in the Hugging Face cache (``models--ORG--NAME/snapshots/REV/FILE``)."""
    try:
        relative = path.resolve().relative_to(hub_cache_dir().resolve())
    except (OSError, ValueError):
        return ""
    parts = relative.parts
    if len(parts) >= 3 and parts[0].startswith("models--") and parts[1] == "snapshots":
        model = parts[0].removeprefix("models--").replace("--", "/")
        if is_model_id(model) and find_model(model) is not None:
            return model
    return ""


@dataclass
class Workspace:
    """The tokenizer views' state (see the module's docstring).

    Attributes:
        tokenizers: The opened tokenizers, in the order they were opened.
        current: Index of the current tokenizer in ``tokenizers`` (-1: none).
        side_by_side: Indexes of the Side by side rows, top to bottom (None: every tokenizer).
        text: The Playground text.
        side_text: The Side by side text.
        merges: The vocab-size slider: the current tokenizer's first ``merges`` merges (None: all of them).
        tab: The current tab's title.
        chat: The Chat messages as ``(role, text)`` (None: the sample conversation).
        texts_cut: Whether a text was cut to :data:`MAX_TEXT_BYTES` when the workspace was taken.
    """

    tokenizers: list[TokenizerRef] = field(default_factory=list)
    current: int = -1
    side_by_side: list[int] | None = None
    text: str = ""
    side_text: str = ""
    merges: int | None = None
    tab: str = ""
    chat: list[tuple[str, str]] | None = None
    texts_cut: bool = False

    def to_json(self) -> dict[str, Any]:
        """The JSON object of a workspace file (and of the settings' ``workspace``)."""
        return {
            "format": WORKSPACE_FORMAT,
            "version": _VERSION,
            "tokenizers": [ref.to_json() for ref in self.tokenizers],
            "current": self.current,
            "side_by_side": self.side_by_side,
            "text": self.text,
            "side_text": self.side_text,
            "merges": self.merges,
            "tab": self.tab,
            "chat": None if self.chat is None else [list(message) for message in self.chat],
            "texts_cut": self.texts_cut,
        }


def cap_text(text: str, limit: int = MAX_TEXT_BYTES) -> tuple[str, bool]:
    """The text, cut at a character to at most ``limit`` UTF-8 bytes; and whether it was cut.

    Example:
        >>> cap_text("aé€", 4)
        ('aé', True)
    """
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text, False
    return data[:limit].decode("utf-8", "ignore"), True


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def workspace_from_json(document: Any, *, source: str = "workspace") -> Workspace:
    """A workspace from its JSON object.

    Raises:
        WorkspaceError: Not a workspace, or an entry of the wrong type (one line: the file and the key).
    """

    def fail(where: str, problem: str) -> WorkspaceError:
        return WorkspaceError(
            f"{source}: {where}: {problem}; choose a file saved with File ▸ Save workspace…"
        )

    if not isinstance(document, dict) or document.get("format") != WORKSPACE_FORMAT:
        raise fail("not a BPE Studio workspace", f'its "format" is not {WORKSPACE_FORMAT!r}')
    if document.get("version") != _VERSION:
        raise fail("key 'version'", f"version {document.get('version')!r} is not one this BPE Studio reads")
    refs: list[TokenizerRef] = []
    tokenizers = document.get("tokenizers", [])
    if not isinstance(tokenizers, list):
        raise fail("key 'tokenizers'", "expected a list")
    for n, item in enumerate(tokenizers):
        if isinstance(item, dict) and isinstance(item.get("path"), str) and item["path"]:
            refs.append(TokenizerRef(path=item["path"]))
        elif isinstance(item, dict) and item.get("builtin") in BUILTINS:
            refs.append(TokenizerRef(builtin=item["builtin"]))
        elif isinstance(item, dict) and isinstance(item.get("model"), str) and is_model_id(item["model"]):
            refs.append(TokenizerRef(model=item["model"]))
        else:
            raise fail(
                f"tokenizers[{n}]", 'expected {"path": "..."}, {"model": "ORG/NAME"} or {"builtin": "gpt2"}'
            )
    workspace = Workspace(tokenizers=refs)
    current = document.get("current", -1)
    if not _is_int(current) or not -1 <= current < len(refs):
        raise fail("key 'current'", f"expected -1 or an index of 'tokenizers', not {current!r}")
    workspace.current = current
    rows = document.get("side_by_side")
    if rows is not None:
        if not isinstance(rows, list) or not all(_is_int(i) and 0 <= i < len(refs) for i in rows):
            raise fail("key 'side_by_side'", "expected null or a list of indexes of 'tokenizers'")
        workspace.side_by_side = list(dict.fromkeys(rows))
    for key in ("text", "side_text", "tab"):
        value = document.get(key, "")
        if not isinstance(value, str):
            raise fail(f"key {key!r}", "expected a string")
        setattr(workspace, key, value)
    merges = document.get("merges")
    if merges is not None and not (_is_int(merges) and merges >= 0):
        raise fail("key 'merges'", f"expected null or a number of merges, not {merges!r}")
    workspace.merges = merges
    chat = document.get("chat")
    if chat is not None:
        if not isinstance(chat, list) or not all(
            isinstance(m, list) and len(m) == 2 and all(isinstance(p, str) for p in m) for m in chat
        ):
            raise fail("key 'chat'", 'expected null or a list of ["role", "text"] pairs')
        workspace.chat = [(role, text) for role, text in chat]
    workspace.texts_cut = document.get("texts_cut") is True
    return workspace


def read_workspace(path: str | os.PathLike[str]) -> Workspace:
    """Read a workspace file.

    Raises:
        WorkspaceError: The file cannot be read, is not JSON, or is not a workspace (one line).
    """
    path = Path(path)
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise WorkspaceError(
                f"{path}: larger than {MAX_FILE_BYTES // 2**20} MiB, not a BPE Studio workspace; choose a "
                "file saved with File ▸ Save workspace…"
            )
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise WorkspaceError(f"{path}: cannot be read ({exc}); check the file") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise WorkspaceError(
            f"{path}: line {exc.lineno}, column {exc.colno}: not JSON ({exc.msg}); choose a file saved with "
            "File ▸ Save workspace…"
        ) from None
    return workspace_from_json(document, source=os.fspath(path))


def workspace_plan(path: str | os.PathLike[str], workspace: Workspace) -> WritePlan:
    """What :func:`save_workspace` writes (the file and its temporary file beside it) and what it must
    leave alone: the files of the workspace's tokenizers.

    Example:
        >>> tok = TokenizerRef(path=os.path.abspath("tok.json"))
        >>> workspace_plan("tok.json", Workspace(tokenizers=[tok])).check()  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ValueError: Save workspace: tok.json implies tok.json, which is the tokenizer ...; choose another ...
    """
    plan = WritePlan()
    atomic_plan(plan, "Save workspace", path, implied_by=path)
    for ref in workspace.tokenizers:
        if ref.builtin or ref.model:  # BPE Studio's own file, or one in the Hugging Face cache
            continue
        try:
            files = source_files(ref.path)
        except (OSError, ValueError):
            files = [Path(ref.path)]
        for file in files or [Path(ref.path)]:
            plan.read("the tokenizer", file)
    return plan


def save_workspace(workspace: Workspace, path: str | os.PathLike[str]) -> None:
    """Write a workspace file atomically, never over one of its tokenizers' files.

    Raises:
        WorkspaceError: The path is a tokenizer's file, or cannot be written (one line).
    """
    try:
        workspace_plan(path, workspace).check()
    except ValueError as exc:
        raise WorkspaceError(str(exc)) from None
    try:
        atomic_write(path, json.dumps(workspace.to_json(), indent=1, ensure_ascii=False) + "\n")
    except OSError as exc:
        raise WorkspaceError(
            f"{path}: cannot be written ({exc.strerror or exc}); choose another file"
        ) from None


def _same(first: Path, second: Path) -> bool:
    try:
        return first.resolve() == second.resolve()
    except OSError:  # pragma: no cover - resolve() rarely fails
        return first == second


# ----------------------------------------------------------------------------------------------------------
# The keeper: takes the workspace from the window and puts it back
# ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Loaded:
    """What the restoring task found: the loaded tokenizers (None where one was skipped) and why."""

    workspace: Workspace
    tokenizers: list[LoadedTokenizer | None]
    skipped: list[str]
    replace: bool


class WorkspaceKeeper(QObject):
    """Takes the workspace from a main window's tokenizer views, and restores one (loading its tokenizers
    on a worker thread); adds *File ▸ Save workspace…* and *File ▸ Open workspace…*.

    Signals:
        restored(object): A workspace was restored (the list of skipped-tokenizer messages).
        error_shown(str, str): An error box was opened (title, message).
    """

    restored = Signal(object)
    error_shown = Signal(str, str)

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.views = window.tokenizer_views
        self.last_error = ""
        #: The workspace being restored (kept as it is if the window closes before its tokenizers load).
        self._restoring: Workspace | None = None
        self._tab_shown = -1
        self.runner = TaskRunner("bpe-studio-workspace", self)
        self.runner.finished.connect(self._on_runner_finished)
        self.runner.errored.connect(self._on_runner_errored)
        self._build_actions()

    def _build_actions(self) -> None:
        self.save_action = QAction("Save &workspace…", self)
        self.save_action.setToolTip(
            "The Playground text, the opened tokenizers, the slider and the tab, in a file"
        )
        self.save_action.triggered.connect(self._on_save_action_triggered)
        self.open_action = QAction("Open wor&kspace…", self)
        self.open_action.setToolTip("Put back a workspace saved with File ▸ Save workspace…")
        self.open_action.triggered.connect(self._on_open_action_triggered)
        bar = self.window.menuBar()
        file_menu = next((a.menu() for a in bar.actions() if a.text().replace("&", "") == "File"), None)
        if isinstance(file_menu, QMenu):  # before the recent files
            recent = next((a for a in file_menu.actions() if a.menu() is not None), None)
            for action in (self.open_action, self.save_action):
                if recent is not None:
                    file_menu.insertAction(recent, action)
                else:
                    file_menu.addAction(action)

    # ==============================================================================================
    # Taking
    # ==============================================================================================

    def capture(self) -> Workspace:
        """The workspace as the window shows it now (while one is being restored: that one)."""
        if self._restoring is not None:
            return self._restoring
        views = self.views
        refs: list[TokenizerRef] = []
        index_of: dict[int, int] = {}
        for loaded in views.opened:
            ref = ref_of(loaded)
            if ref is not None and ref not in refs:
                index_of[id(loaded)] = len(refs)
                refs.append(ref)
            elif ref is not None:
                index_of[id(loaded)] = refs.index(ref)
        current = views.current
        merges = None
        if current is not None and id(current) in index_of:
            used = views.playground.merges_used
            merges = used if used < current.index.merge_count else None
        text, cut = cap_text(views.playground.text())
        side_text, side_cut = cap_text(views.side_by_side.text())
        chat: list[tuple[str, str]] = []
        chat_cut = False
        budget = MAX_TEXT_BYTES  # for all the messages together: each is cut to what is left
        for message in views.chat.messages():
            content, was_cut = cap_text(message["content"], budget)
            chat.append((message["role"], content))
            chat_cut |= was_cut
            budget -= len(content.encode("utf-8", "surrogatepass"))
        rows = [index_of[id(t)] for t in views.side_by_side.tokenizers() if id(t) in index_of]
        return Workspace(
            tokenizers=refs,
            current=index_of.get(id(current), -1) if current is not None else -1,
            side_by_side=list(dict.fromkeys(rows)),
            text=text,
            side_text=side_text,
            merges=merges,
            tab=self.window.tabs.tabText(self.window.tabs.currentIndex()).replace("&", ""),
            chat=chat,
            texts_cut=cut or side_cut or chat_cut,
        )

    # ==============================================================================================
    # Restoring
    # ==============================================================================================

    def restore_saved(self, document: dict[str, Any]) -> None:
        """Restore the workspace kept in the settings at the last quit (nothing if there is none)."""
        if not document:
            return
        try:
            workspace = workspace_from_json(document, source="the saved workspace")
        except WorkspaceError as exc:
            log.warning("ignoring %s", exc)
            return
        self.restore(workspace, replace=False)

    def restore(self, workspace: Workspace, *, replace: bool) -> None:
        """Put a workspace back: its texts and tab at once, its tokenizers once they loaded (in the
        background; those that are gone are skipped). With ``replace`` its current tokenizer and rows replace
        the window's; otherwise a tokenizer opened meanwhile stays current."""
        self._restoring = workspace
        views = self.views
        if workspace.text and (replace or not views.playground.text()):
            views.playground.set_text(workspace.text)
        if workspace.side_text and (replace or not views.side_by_side.text()):
            views.side_by_side.set_text(workspace.side_text)
        if workspace.chat is not None:
            views.chat.set_messages(workspace.chat)
        self._show_tab(workspace.tab)
        # Opening the tokenizers may switch tabs: the workspace's tab is shown again once they are open,
        # unless the user (or --demo, which shows the training) chose another meanwhile.
        self._tab_shown = self.window.tabs.currentIndex()
        refs = list(workspace.tokenizers)

        def task(ctx: TaskContext) -> _Loaded:
            found: list[LoadedTokenizer | None] = []
            skipped: list[str] = []
            for ref in refs:
                ctx.check()
                location = ref.location()
                if not location.exists():
                    found.append(None)
                    where = (
                        f"{ref.model} (not in the Hugging Face cache)"
                        if ref.model
                        else f"{location} (not found)"
                    )
                    skipped.append(where)
                    continue
                try:
                    loaded = load_file(location)
                    _ = loaded.index  # index the merges here rather than on the GUI thread
                except Exception as exc:  # any failure skips that tokenizer; the message says why
                    found.append(None)
                    skipped.append(error_message(exc, path=location))
                    continue
                found.append(loaded)
            return _Loaded(workspace, found, skipped, replace)

        if refs:
            self.window.statusBar().showMessage(f"Restoring the workspace: opening {len(refs)} tokenizers…")
            self.runner.start(task)
        else:
            self._restoring = None
            self._finish(workspace, [])

    @Slot(object)
    def _on_runner_finished(self, found: _Loaded) -> None:
        self._restoring = None
        workspace, views = found.workspace, self.views
        for loaded in found.tokenizers:
            if loaded is not None:
                views.add_opened(loaded)
        if workspace.side_by_side is not None:
            wanted = [found.tokenizers[i] for i in workspace.side_by_side]
            for row in views.side_by_side.tokenizers():
                if row not in wanted and (found.replace or any(row is t for t in found.tokenizers)):
                    views.side_by_side.remove_tokenizer(row)
        current = found.tokenizers[workspace.current] if workspace.current >= 0 else None
        if current is not None and (found.replace or views.current is None or views.showing_default):
            views.set_current(current, workspace.text or views.playground.text() or None)
            if workspace.merges is not None:
                views.playground.set_merges_used(workspace.merges)
        self._finish(workspace, found.skipped)

    @Slot(object)
    def _on_runner_errored(self, exc: BaseException) -> None:  # pragma: no cover - the task catches all
        self._restoring = None
        log.warning("restoring the workspace failed: %s", exc)

    def _finish(self, workspace: Workspace, skipped: list[str]) -> None:
        if self.window.tabs.currentIndex() == self._tab_shown or self._tab_shown < 0:
            self._show_tab(workspace.tab)
        opened = len(workspace.tokenizers) - len(skipped)
        message = "Restored the workspace"
        if workspace.tokenizers:
            message += f": {opened} tokenizer{'s' if opened != 1 else ''}"
        if skipped:
            message += f"; skipped {len(skipped)} that could not be opened: {'; '.join(skipped)}"
        if workspace.texts_cut:
            message += f"; its texts were cut to their first {MAX_TEXT_BYTES // 1_000_000} MB when saved"
        self.window.statusBar().showMessage(message + ".", 15000)
        self.restored.emit(skipped)

    def _show_tab(self, title: str) -> None:
        tabs = self.window.tabs
        for i in range(tabs.count()):
            if title and tabs.tabText(i).replace("&", "") == title:
                tabs.setCurrentIndex(i)
                return

    def is_busy(self) -> bool:
        """Whether tokenizers of a workspace are being loaded."""
        return self.runner.is_busy()

    def shutdown(self) -> None:
        """Stop the worker thread (when the window closes)."""
        self.runner.shutdown()

    # ==============================================================================================
    # Files
    # ==============================================================================================

    @Slot()
    def _on_save_action_triggered(self) -> None:
        chosen, _ = QFileDialog.getSaveFileName(
            self.window, "Save workspace", os.fspath(Path.home() / "workspace.json"), WORKSPACE_FILTER
        )
        if chosen:
            self.save_to(Path(chosen))

    def save_to(self, path: Path) -> bool:
        """Save the workspace to a file; an error is shown in a box. Returns whether it was saved."""
        if not path.suffix:
            path = path.with_suffix(".json")
        workspace = self.capture()
        try:
            save_workspace(workspace, path)
        except WorkspaceError as exc:
            self._show_error("Cannot save the workspace", str(exc))
            return False
        left_out = sum(1 for t in self.views.opened if ref_of(t) is None)
        message = f"Saved the workspace to {path}"
        if left_out:
            message += (
                f" (without {left_out} tokenizer{'s' if left_out != 1 else ''} trained in this session)"
            )
        if workspace.texts_cut:
            message += f"; texts cut to their first {MAX_TEXT_BYTES // 1_000_000} MB"
        self.window.statusBar().showMessage(message + ".", 10000)
        return True

    @Slot()
    def _on_open_action_triggered(self) -> None:
        chosen, _ = QFileDialog.getOpenFileName(self.window, "Open workspace", "", WORKSPACE_FILTER)
        if chosen:
            self.open_from(Path(chosen))

    def open_from(self, path: Path) -> bool:
        """Restore a workspace file; an error is shown in a box. Returns whether it was read."""
        try:
            workspace = read_workspace(path)
        except WorkspaceError as exc:
            self._show_error("Cannot open the workspace", str(exc))
            return False
        self.restore(workspace, replace=True)
        return True

    def _show_error(self, title: str, message: str) -> None:
        self.last_error = message
        open_error_box(self.window, title, message, name="workspace_error_box")
        self.error_shown.emit(title, message)


__all__ = [
    "MAX_TEXT_BYTES",
    "WORKSPACE_FORMAT",
    "TokenizerRef",
    "Workspace",
    "WorkspaceError",
    "WorkspaceKeeper",
    "cap_text",
    "read_workspace",
    "ref_of",
    "save_workspace",
    "workspace_from_json",
    "workspace_plan",
]
