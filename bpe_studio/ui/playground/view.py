"""The "Playground" tab: type text and see what the tokenizer does to it.

Left: the text, coloured by token as you type (encoding runs on a worker thread, debounced), counts, the
decoded-bytes view of the tokens and the id sequence. Right: the hovered or selected token's details, the
vocab-size slider with the curve of token count against vocab size, and a box that decodes pasted ids.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QAction, QFont, QKeySequence
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from ...engine import Tokenizer
from ...engine.encoding.analysis import Compression
from ..app.tasks import TaskContext, TaskRunner
from ..present.token_copy import IdsText, ids_text
from ..present.token_layout import (
    Curve,
    Encoding,
    SpecialMode,
    encode_text,
    int_array,
    token_count_curve,
    word_count,
)
from ..present.tokenizer_info import LoadedTokenizer
from ..widgets.common import VerticalScroll, delay_timer
from ..widgets.file_drop import FileDropWidget
from ..widgets.token_details import TokenDetails
from ..widgets.token_text import TokenTextEdit, with_label_breaks
from .decode_box import DecodeBox
from .ids_box import IdsBox
from .vocab_size_box import VocabSizeBox

#: Milliseconds of quiet typing before the text is encoded again.
ENCODE_DELAY_MS = 150
#: Milliseconds the slider must rest before the text is encoded with the new cut.
SLIDER_DELAY_MS = 60
#: Milliseconds of quiet before the curve is computed again (it encodes the text at every vocab size).
CURVE_DELAY_MS = 400

#: Points the text views may grow and shrink by with Ctrl+= and Ctrl+- (smaller, larger).
ZOOM_LIMIT = (6, 24)
#: The largest text file a drop on the text loads (bytes): beyond, the playground is the wrong tool.
MAX_DROPPED_TEXT = 20_000_000
#: File name endings a drop on the text loads as text (a tokenizer's merges.txt or vocab.txt excepted).
TEXT_SUFFIXES = frozenset({".txt", ".text", ".md", ".rst", ".csv", ".tsv", ".log", ".py", ".html", ".xml"})


def is_text_file(path: Path) -> bool:
    """Whether a dropped file is text to load into the playground rather than a tokenizer to open.

    Example:
        >>> is_text_file(Path("notes.txt")), is_text_file(Path("merges.txt")), is_text_file(Path("tok.json"))
        (True, False, False)
    """
    name = path.name.lower()
    return path.suffix.lower() in TEXT_SUFFIXES and "merges" not in name and "vocab" not in name


_MODE_LABELS = {
    SpecialMode.RECOGNISED: "Recognised",
    SpecialMode.ORDINARY: "Ordinary text",
    SpecialMode.DISALLOWED: "Disallowed",
}
_MODE_TIPS = {
    SpecialMode.RECOGNISED: "Each special token in the text is one token",
    SpecialMode.ORDINARY: "Special tokens are encoded like any other text",
    SpecialMode.DISALLOWED: "A special token in the text is an error (tiktoken's default)",
}


class PlaygroundView(FileDropWidget):
    """The playground tab.

    Signals:
        encoded(): A new encoding of the text is shown (also after an error message replaced it).
        curve_changed(): The curve of token count against vocab size was recomputed.
        settled(): Nothing is waiting to be encoded or computed.
        token_link_activated(int): A token link in the details was clicked (to show it elsewhere).
        token_selected(int): The selected token's id changed (-1: none), to select it in other tabs.
        files_dropped(list): Tokenizer files were dropped on the tab.
        text_loaded(object): A text file dropped on the text became the text (its ``Path``).
    """

    encoded = Signal()
    curve_changed = Signal()
    settled = Signal()
    token_link_activated = Signal(int)
    token_selected = Signal(int)
    text_loaded = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("playground")
        self.loaded: LoadedTokenizer | None = None
        self.encoding: Encoding | None = None
        self._selected_token = -1  # index of the selected token in the encoding (-1: none)
        self._hover: tuple[str, int] | None = None  # ("text", unit) or ("tokens", token)
        self._linked_id = -1  # the selected token's id, as last reported by token_selected
        self._curve_waiting = False  # the curve is due once the encoding on its way is shown
        self._encoding_due = False  # an encoding was started and not shown yet

        self.encode_runner = TaskRunner("bpe-studio-encode", self, defer_gc=True)
        self.encode_runner.finished.connect(self._on_encode_runner_finished)
        self.encode_runner.errored.connect(self._on_encode_runner_errored)
        self.encode_runner.idle.connect(self._on_runner_idle)
        self.curve_runner = TaskRunner("bpe-studio-curve", self, defer_gc=True)
        self.curve_runner.finished.connect(self._on_curve_runner_finished)
        self.curve_runner.errored.connect(self._on_curve_runner_errored)
        self.curve_runner.idle.connect(self._on_runner_idle)

        self.encode_timer = delay_timer(self, ENCODE_DELAY_MS, self._on_encode_timer_timeout)
        self.curve_timer = delay_timer(self, CURVE_DELAY_MS, self._on_curve_timer_timeout)

        self._build()
        self._show_tokenizer()

    # ==============================================================================================
    # Layout
    # ==============================================================================================

    def _build(self) -> None:
        outer = QHBoxLayout(self)
        outer.setContentsMargins(8, 8, 8, 8)
        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.setChildrenCollapsible(False)
        outer.addWidget(splitter)

        # ---- left: header, text, counts, tokens, ids --------------------------------------------------
        left = QWidget(splitter)
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 4, 0)

        header = QFrame(left)
        header.setObjectName("status")
        header_layout = QVBoxLayout(header)
        header_layout.setContentsMargins(8, 6, 8, 6)
        header_layout.setSpacing(2)
        self.title_label = QLabel(header)
        self.title_label.setObjectName("phase")
        title_font = QFont(self.title_label.font())
        title_font.setBold(True)
        title_font.setPointSizeF(title_font.pointSizeF() * 1.15)
        self.title_label.setFont(title_font)
        self.title_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary_label = QLabel(header)
        self.summary_label.setObjectName("caption")
        header_layout.addWidget(self.title_label)
        header_layout.addWidget(self.summary_label)
        left_layout.addWidget(header)

        options = QHBoxLayout()
        options.addWidget(QLabel("Special tokens:", left))
        self.special_combo = QComboBox(left)
        for mode, label in _MODE_LABELS.items():
            self.special_combo.addItem(label, mode.value)
            self.special_combo.setItemData(
                self.special_combo.count() - 1, _MODE_TIPS[mode], Qt.ItemDataRole.ToolTipRole
            )
        self.special_combo.setToolTip("How special tokens in the text are treated")
        self.special_combo.currentIndexChanged.connect(self._on_special_combo_changed)
        options.addWidget(self.special_combo)
        self.whitespace_check = QCheckBox("Show whitespace", left)
        self.whitespace_check.setToolTip("Draw spaces as ·, tabs as → and line ends inside tokens as ↵")
        self.whitespace_check.setChecked(True)
        self.whitespace_check.toggled.connect(self._on_whitespace_check_toggled)
        options.addSpacing(12)
        options.addWidget(self.whitespace_check)
        options.addStretch(1)
        self.sample_button = QPushButton("Sample text", left)
        self.sample_button.setToolTip("Put a short multilingual sample in the text box")
        self.sample_button.clicked.connect(self._on_sample_button_clicked)
        options.addWidget(self.sample_button)
        left_layout.addLayout(options)

        vertical = QSplitter(Qt.Orientation.Vertical, left)
        vertical.setChildrenCollapsible(False)

        text_box = QGroupBox("Text", vertical)
        text_layout = QVBoxLayout(text_box)
        self.editor = TokenTextEdit(text_box)
        self.editor.setObjectName("playground_editor")
        self.editor.setPlaceholderText(
            "Type or paste text here, or drop a .txt file. Each token gets its own colour."
        )
        # Tab and Shift+Tab move to the next and previous control, so the keyboard can leave the text; a
        # tab character still comes in by pasting.
        self.editor.setTabChangesFocus(True)
        self.editor.text_edited.connect(self._on_editor_text_edited)
        self.editor.unit_hovered.connect(self._on_editor_unit_hovered)
        self.editor.cursorPositionChanged.connect(self._on_editor_cursor_moved)
        self.editor.files_dropped.connect(self._on_editor_files_dropped)
        text_layout.addWidget(self.editor)
        self.stats_label = QLabel(text_box)
        self.stats_label.setObjectName("stats")
        self.stats_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # Wraps: the figures of a pasted megabyte made the line 636 px wide and the window wider than a
        # 1024 px screen (issue 21.3).
        self.stats_label.setWordWrap(True)
        text_layout.addWidget(self.stats_label)
        self.error_label = QLabel(text_box)
        self.error_label.setObjectName("error")
        self.error_label.setWordWrap(True)
        self.error_label.setVisible(False)
        text_layout.addWidget(self.error_label)

        tokens_box = QGroupBox(
            "Tokens (decoded bytes: <0xE2> is a byte that is not a whole character)", vertical
        )
        tokens_layout = QVBoxLayout(tokens_box)
        self.strip = TokenTextEdit(tokens_box, read_only=True)
        self.strip.setObjectName("playground_tokens")
        self.strip.setToolTip("Each token spelled from its bytes; click one to select it")
        self.strip.feed_in_slices = True  # a pasted megabyte's tokens go in over several turns
        self.strip.fed.connect(self._on_runner_idle)
        self.strip.unit_hovered.connect(self._on_strip_unit_hovered)
        self.strip.cursorPositionChanged.connect(self._on_strip_cursor_moved)
        self.strip.files_dropped.connect(self.files_dropped)
        tokens_layout.addWidget(self.strip)

        self.ids_box = IdsBox(vertical)
        self.ids_box.id_clicked.connect(self._on_ids_box_id_clicked)
        # The box's widgets, by the names the rest of the app and the tests know them by.
        self.ids_view = self.ids_box.view
        self.copy_button = self.ids_box.copy_button
        self.copy_text_action = self.ids_box.copy_text_action
        self.copy_tsv_action = self.ids_box.copy_tsv_action

        vertical.addWidget(text_box)
        vertical.addWidget(tokens_box)
        vertical.addWidget(self.ids_box)
        vertical.setStretchFactor(0, 5)
        vertical.setStretchFactor(1, 3)
        vertical.setStretchFactor(2, 1)
        vertical.setSizes([380, 220, 90])
        left_layout.addWidget(vertical, 1)

        # ---- right: details, vocab size, decode --------------------------------------------------------
        right = QWidget(splitter)
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(4, 0, 0, 0)

        details_box = QGroupBox("Token", right)
        details_layout = QVBoxLayout(details_box)
        self.details = TokenDetails(details_box)
        self.details.linkActivated.connect(self._on_details_link_activated)
        scroll = QScrollArea(details_box)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(self.details)
        scroll.setMinimumHeight(90)
        details_layout.addWidget(scroll)
        right_layout.addWidget(details_box, 2)

        self.size_box = VocabSizeBox(right)
        self.size_box.merges_changed.connect(self._on_size_box_merges_changed)
        # The box's widgets, by the names the rest of the app and the tests know them by.
        self.size_slider = self.size_box.slider
        self.full_button = self.size_box.full_button
        self.size_label = self.size_box.label
        self.curve_plot = self.size_box.curve_plot
        right_layout.addWidget(self.size_box, 3)

        self.decode_box = DecodeBox(right)
        self.decode_edit = self.decode_box.edit
        self.decode_output = self.decode_box.output
        self.decode_status = self.decode_box.status
        right_layout.addWidget(self.decode_box, 0)

        splitter.addWidget(left)
        splitter.addWidget(VerticalScroll(right, parent=splitter))  # scrolls in a short window (issue 21)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        right.setMinimumWidth(340)
        splitter.setSizes([820, 480])
        self.editor.set_whitespace_visible(True)
        self.strip.set_whitespace_visible(False)
        self._build_zoom()

    def _build_zoom(self) -> None:
        """Ctrl+= / Ctrl+- / Ctrl+0 make the text views' font larger, smaller, or as it was (anywhere in
        the tab)."""
        self.text_views: tuple[QWidget, ...] = (
            self.editor,
            self.strip,
            self.ids_view,
            self.decode_edit,
            self.decode_output,
        )
        self._base_sizes = [view.font().pointSizeF() for view in self.text_views]
        self.zoom_steps = 0
        self.zoom_in_action = QAction("Larger text", self)
        self.zoom_in_action.setShortcuts([QKeySequence("Ctrl+="), QKeySequence("Ctrl++")])
        self.zoom_in_action.triggered.connect(self._on_zoom_in_action_triggered)
        self.zoom_out_action = QAction("Smaller text", self)
        self.zoom_out_action.setShortcut(QKeySequence("Ctrl+-"))
        self.zoom_out_action.triggered.connect(self._on_zoom_out_action_triggered)
        self.zoom_reset_action = QAction("Text at normal size", self)
        self.zoom_reset_action.setShortcut(QKeySequence("Ctrl+0"))
        self.zoom_reset_action.triggered.connect(self._on_zoom_reset_action_triggered)
        for action in (self.zoom_in_action, self.zoom_out_action, self.zoom_reset_action):
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            self.addAction(action)

    def zoom_text(self, steps: int) -> None:
        """Make the text views' font ``steps`` points larger than normal (negative: smaller; 0: normal)."""
        self.zoom_steps = max(-ZOOM_LIMIT[0], min(steps, ZOOM_LIMIT[1]))
        for view, size in zip(self.text_views, self._base_sizes, strict=True):
            font = view.font()
            font.setPointSizeF(max(size + self.zoom_steps, 4.0))
            view.setFont(font)

    @Slot()
    def _on_zoom_in_action_triggered(self) -> None:
        self.zoom_text(self.zoom_steps + 1)

    @Slot()
    def _on_zoom_out_action_triggered(self) -> None:
        self.zoom_text(self.zoom_steps - 1)

    @Slot()
    def _on_zoom_reset_action_triggered(self) -> None:
        self.zoom_text(0)

    # ==============================================================================================
    # Public API
    # ==============================================================================================

    def set_tokenizer(self, loaded: LoadedTokenizer | None, text: str | None = None) -> None:
        """Show a tokenizer (None: none), and optionally replace the text; the text is encoded again."""
        self.loaded = loaded
        self.encoding = None
        self._show_tokenizer()
        if text is not None and text != self.text():
            self.set_text(text)  # schedules the encoding
        else:
            self.schedule_encode(0)
        self.schedule_curve(0)

    def text(self) -> str:
        """The text as encoded: the editor's characters, with its line breaks as ``\\n``."""
        return self.editor.plain_text()

    def set_text(self, text: str) -> None:
        """Replace the text (it is encoded right away)."""
        self.editor.setPlainText(text)
        self.schedule_encode(0)
        self.schedule_curve()

    def special_mode(self) -> SpecialMode:
        """How special tokens are treated."""
        return SpecialMode(self.special_combo.currentData())

    def set_special_mode(self, mode: SpecialMode) -> None:
        """Choose how special tokens are treated (the text is encoded again)."""
        self.special_combo.setCurrentIndex(self.special_combo.findData(mode.value))

    @property
    def merges_used(self) -> int:
        """How many merges the tokenizer in use has (set with the vocab-size slider)."""
        return self.size_box.merges

    @property
    def curve(self) -> Curve | None:
        """The curve of token count against vocab size for the text (None: not computed yet)."""
        return self.size_box.curve

    def set_merges_used(self, merges: int) -> None:
        """Cut the tokenizer to its first ``merges`` merges (moves the slider)."""
        self.size_box.set_merges(merges)

    def effective_tokenizer(self) -> Tokenizer | None:
        """The tokenizer of the shown encoding (a cut of the loaded one), or the loaded one."""
        if self.encoding is not None and self.encoding.tokenizer is not None:
            return self.encoding.tokenizer
        return self.loaded.tokenizer if self.loaded is not None else None

    def is_busy(self) -> bool:
        """Whether an encoding or the curve is waiting or being computed."""
        return (
            self._curve_waiting
            or self.strip.is_feeding()
            or self.encode_timer.isActive()
            or self.curve_timer.isActive()
            or self.encode_runner.is_busy()
            or self.curve_runner.is_busy()
        )

    def shutdown(self) -> None:
        """Stop the timers and the worker threads (when the window closes)."""
        self._curve_waiting = False
        self.encode_timer.stop()
        self.curve_timer.stop()
        self.encode_runner.shutdown()
        self.curve_runner.shutdown()

    @Slot()
    def copy_ids(self) -> None:
        """Copy the ids of the shown encoding to the clipboard as a JSON list."""
        self.ids_box.copy_ids()

    def copy_tokens(self, *, tsv: bool = False) -> None:
        """Copy the tokens of the shown encoding: one per line as the Tokens view spells them, or as TSV."""
        self.ids_box.copy_tokens(tsv=tsv)

    # ==============================================================================================
    # Encoding
    # ==============================================================================================

    def schedule_encode(self, delay_ms: int = ENCODE_DELAY_MS) -> None:
        """Encode the text after ``delay_ms`` of quiet."""
        self.encode_timer.start(delay_ms)

    def schedule_curve(self, delay_ms: int = CURVE_DELAY_MS) -> None:
        """Recompute the curve after ``delay_ms`` of quiet."""
        if self.loaded is None:
            self.curve_timer.stop()
            return
        self.curve_timer.start(delay_ms)

    @Slot()
    def _on_encode_timer_timeout(self) -> None:
        loaded, text, mode, merges = self.loaded, self.text(), self.special_mode(), self.merges_used
        colours = len(self.editor.token_palette.backgrounds)

        def task(ctx: TaskContext) -> _Shown:
            tokenizer = loaded.cut(merges) if loaded is not None else None
            ctx.check()
            encoding = encode_text(tokenizer, text, mode, merges=merges, check=ctx.check)
            return _prepare(encoding, colours, ctx.check)

        self._encoding_due = True
        self.encode_runner.start(task)

    @Slot(object)
    def _on_encode_runner_finished(self, shown: _Shown) -> None:
        if shown.encoding.text != self.text() or self.encode_timer.isActive():
            return  # the text changed meanwhile; the next encoding is on its way
        self._apply_encoding(shown.encoding, shown)

    @Slot(object)
    def _on_encode_runner_errored(self, exc: BaseException) -> None:
        self.encoding = None
        self.editor.clear_units()
        self.strip.set_text_and_units("", [], [], [])
        self._show_error(f"Cannot encode the text: {exc}")
        self._resume_curve()
        self.encoded.emit()

    def _apply_encoding(self, encoding: Encoding, shown: _Shown | None = None) -> None:
        if shown is None or shown.encoding is not encoding:
            shown = _prepare(encoding, len(self.editor.token_palette.backgrounds))
        self.encoding = encoding
        self._selected_token = -1
        self._hover = None
        self.editor.mark_error(None, None)
        if encoding.error:
            self.editor.clear_units()
            self.strip.set_text_and_units("", [], [], [])
            if encoding.error_span is not None:
                start, end = encoding.error_span
                self.editor.mark_error(*self._text_positions(encoding, start, end))
            self._show_error(encoding.error)
        else:
            self._show_error("")
            self.editor.set_units(encoding.unit_start, encoding.unit_end, encoding.unit_kind, shown.colours)
            self.strip.set_broken_labels_and_units(
                shown.strip_text, shown.strip_starts, shown.strip_ends, encoding.token_kind
            )
        self.ids_box.set_encoding(encoding, shown.ids)
        self._link(-1, emit=False)
        self._update_stats()
        self.size_box.update_label()
        self._show_details()
        self.decode_box.refresh()
        self._resume_curve()
        self.encoded.emit()

    def _resume_curve(self) -> None:
        """Compute the curve that waited for the encoding to be shown (see ``_on_curve_timer_timeout``)."""
        self._encoding_due = False
        if self._curve_waiting:
            self._curve_waiting = False
            self.schedule_curve(0)

    @staticmethod
    def _text_positions(encoding: Encoding, start: int, end: int) -> tuple[int, int]:
        from ..present.token_layout import utf16_positions

        pos16 = utf16_positions(encoding.text)
        if pos16 is None:
            return start, end
        return pos16[start], pos16[end]

    def _show_error(self, message: str) -> None:
        self.error_label.setText(message)
        self.error_label.setVisible(bool(message))

    def _update_stats(self) -> None:
        encoding = self.encoding
        known = self.loaded is not None and encoding is not None and not encoding.error
        n = len(encoding.spans) if encoding is not None and known else 0
        if encoding is not None:  # counted on the worker thread (a pasted megabyte takes a while)
            # No words in Chinese or Thai text (``words`` is None): whitespace does not separate them there.
            figures = Compression(len(encoding.text), encoding.byte_count, encoding.words or 0, n)
        else:
            text = self.text()
            words = word_count(text)
            figures = Compression(len(text), len(text.encode("utf-8", "replace")), words or 0, n)
        chars, size, per_token = figures.characters, figures.bytes, figures.chars_per_token
        if not known:
            tokens = "–"
            ratio = ""
        else:
            tokens = f"<b>{n:,}</b> token{'s' if n != 1 else ''}"
            ratio = f" · <b>{per_token:.2f}</b> characters per token" if per_token is not None else ""
            if figures.tokens_per_word is not None:
                ratio += f" · <b>{figures.tokens_per_word:.2f}</b> tokens per word"
        self.stats_label.setText(
            f"{tokens} · {chars:,} character{'s' if chars != 1 else ''} · "
            f"{size:,} byte{'s' if size != 1 else ''}{ratio}"
        )

    # ==============================================================================================
    # Curve and slider
    # ==============================================================================================

    @Slot()
    def _on_curve_timer_timeout(self) -> None:
        loaded, text, mode = self.loaded, self.text(), self.special_mode()
        if loaded is None:
            self._on_runner_idle()
            return
        if self.encode_timer.isActive() or self._encoding_due:
            # After the encoding is shown: run together, the two threads took turns holding Python's lock,
            # and the GUI thread, showing the encoding, waited for it at each call into Python.
            self._curve_waiting = True
            return

        def task(ctx: TaskContext) -> tuple[LoadedTokenizer, str, Curve]:
            return loaded, text, token_count_curve(loaded, text, mode, check=ctx.check)

        self.curve_runner.start(task)

    @Slot(object)
    def _on_curve_runner_finished(self, found: tuple[LoadedTokenizer, str, Curve]) -> None:
        loaded, text, curve = found
        if loaded is not self.loaded or self.curve_timer.isActive():
            return
        if curve.error:
            title = "No curve: the text holds a disallowed special token"
        elif text == self.text():
            title = "Tokens in this text by vocab size"
        else:
            title = "Tokens by vocab size (updating…)"
        self.size_box.show_curve(curve, title)
        self.curve_changed.emit()

    @Slot(object)
    def _on_curve_runner_errored(self, exc: BaseException) -> None:
        self.size_box.show_curve(None, f"No curve: {exc}")
        self.curve_changed.emit()

    @Slot()
    def _on_runner_idle(self) -> None:
        if not self.encode_runner.is_busy() and not self.encode_timer.isActive():
            self._resume_curve()  # the encoding ended unshown (cancelled): the curve waits no more
        if not self.is_busy():
            self.settled.emit()

    @Slot(int)
    def _on_size_box_merges_changed(self, _merges: int) -> None:
        if self.loaded is not None:
            self.schedule_encode(SLIDER_DELAY_MS)

    # ==============================================================================================
    # Tokenizer header
    # ==============================================================================================

    def _show_tokenizer(self) -> None:
        loaded = self.loaded
        if loaded is None:
            self.title_label.setText("No tokenizer")
            self.summary_label.setText(
                "Train one in the Train tab, or open a tokenizer file (Tokenizer ▸ Open tokenizer…, or drop "
                "it here)."
            )
            self.details.show_message("Open a tokenizer to see its tokens here.")
        else:
            self.title_label.setText(loaded.shown_name)
            self.title_label.setToolTip(loaded.source_text)
            self.summary_label.setText(loaded.summary())
            self.details.show_legend(self.editor.token_palette)
        self.size_box.set_tokenizer(loaded)
        # The decode box ignores the slider: ids come from the whole tokenizer (e.g. copied elsewhere).
        self.decode_box.set_tokenizer(loaded.tokenizer if loaded is not None else None)
        self._update_stats()

    # ==============================================================================================
    # Hover, selection and details
    # ==============================================================================================

    @Slot()
    def _on_editor_text_edited(self) -> None:
        self.schedule_encode()
        self.schedule_curve()

    @Slot(object)
    def _on_editor_files_dropped(self, paths: list[Path]) -> None:
        """A text file dropped on the text is loaded as the text; anything else is opened as a tokenizer."""
        if len(paths) != 1 or not is_text_file(paths[0]):
            self.files_dropped.emit(paths)
            return
        path = paths[0]
        try:
            size = path.stat().st_size
            if size > MAX_DROPPED_TEXT:
                raise ValueError(
                    f"{path.name}: it is {size / 1e6:.0f} MB; the playground takes text files of up to "
                    f"{MAX_DROPPED_TEXT // 1_000_000} MB (cut a part of it, or compare tokenizers on it in "
                    "Compare ▸ Corpus)"
                )
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError as exc:
            self._show_error(
                f"Cannot load {path.name} as text: byte {exc.start:,} is not UTF-8; save it as UTF-8 first."
            )
            return
        except OSError as exc:
            self._show_error(f"Cannot read {path.name}: {exc.strerror or exc}.")
            return
        except ValueError as exc:
            self._show_error(f"Cannot load {exc}.")
            return
        self.set_text(text)
        self.text_loaded.emit(path)

    @Slot(int)
    def _on_special_combo_changed(self, _index: int) -> None:
        self.schedule_encode(0)
        self.schedule_curve(0)

    @Slot(bool)
    def _on_whitespace_check_toggled(self, checked: bool) -> None:
        self.editor.set_whitespace_visible(checked)

    @Slot()
    def _on_sample_button_clicked(self) -> None:
        self.set_text(SAMPLE_TEXT)

    @Slot(int)
    def _on_editor_unit_hovered(self, unit: int) -> None:
        self._hover = ("text", unit) if unit >= 0 else None
        self._show_details()

    @Slot(int)
    def _on_strip_unit_hovered(self, token: int) -> None:
        self._hover = ("tokens", token) if token >= 0 else None
        self._show_details()

    @Slot()
    def _on_editor_cursor_moved(self) -> None:
        encoding = self.encoding
        if encoding is None or not encoding.spans:
            return
        unit = self.editor.unit_at_cursor()
        self._select(encoding.unit_first[unit] if unit >= 0 else -1, from_strip=False)

    @Slot()
    def _on_strip_cursor_moved(self) -> None:
        encoding = self.encoding
        if encoding is None or not encoding.spans:
            return
        self._select(self.strip.unit_at_cursor(), from_strip=True)

    def select_token(self, token: int) -> None:
        """Select a token of the encoding by index (-1: none): outline it in both views and describe it."""
        self._select(token, from_strip=True)

    @property
    def selected_token(self) -> int:
        """The index of the selected token (-1: none)."""
        return self._selected_token

    def show_token_id(self, token_id: int) -> None:
        """Select the first token of the text with this id (the Vocabulary's selection); none: no selection.

        Nothing changes when the selected token already has this id (the Vocabulary following a click here).
        """
        encoding = self.encoding
        if encoding is None or not encoding.spans:
            return
        selected = self._selected_token
        if 0 <= selected < len(encoding.spans) and encoding.spans[selected].id == token_id:
            return
        found = next((i for i, span in enumerate(encoding.spans) if span.id == token_id), -1)
        self._select(found, from_ids=True)

    def _select(self, token: int, *, from_strip: bool = False, from_ids: bool = False) -> None:
        """Select a token in every view: outline it in the text and Tokens views, mark its id, describe it,
        and tell the other tabs (``from_*``: where the user clicked, which needs no scrolling)."""
        encoding = self.encoding
        if encoding is None or token >= len(encoding.spans):
            token = -1
        self._selected_token = token
        if token < 0 or encoding is None:
            self.editor.set_current_units(range(0))
            self.strip.set_current_units(range(0))
        else:
            unit = encoding.unit_of_token(token)
            self.editor.set_current_units(range(unit, unit + 1), scroll=from_strip or from_ids)
            self.strip.set_current_units(range(token, token + 1), scroll=not from_strip)
        self.ids_box.mark(token, scroll=not from_ids)
        self._show_details()
        self._link(encoding.spans[token].id if encoding is not None and token >= 0 else -1)

    def _link(self, token_id: int, *, emit: bool = True) -> None:
        """Report the selected token's id to the other tabs when it changes."""
        if token_id != self._linked_id:
            self._linked_id = token_id
            if emit:
                self.token_selected.emit(token_id)

    @Slot(int)
    def _on_ids_box_id_clicked(self, token: int) -> None:
        self._select(token, from_ids=True)

    def _show_details(self) -> None:
        encoding, loaded = self.encoding, self.loaded
        if loaded is None:
            self.details.show_message("Open a tokenizer to see its tokens here.")
            return
        if encoding is None or encoding.tokenizer is None or not encoding.spans:
            self.details.show_legend(self.editor.token_palette)
            return
        tokens: list[int] = []
        if self._hover is not None:
            where, number = self._hover
            if where == "text" and 0 <= number < encoding.unit_count:
                tokens = list(encoding.unit_tokens(number))
            elif where == "tokens" and 0 <= number < len(encoding.spans):
                tokens = [number]
        if not tokens and self._selected_token >= 0:
            tokens = [self._selected_token]
        if not tokens:
            self.details.show_legend(self.editor.token_palette)
            return
        first = encoding.spans[tokens[0]]
        place = f"Token {tokens[0] + 1:,} of {len(encoding.spans):,}"
        if len(tokens) > 1:
            place = f"Tokens {tokens[0] + 1:,}–{tokens[-1] + 1:,} of {len(encoding.spans):,}"
        place += f" · characters {first.start:,}–{first.end:,} of the text"
        self.details.show_tokens(
            encoding.tokenizer, loaded.index, [encoding.spans[t].id for t in tokens], where=place
        )

    @Slot(str)
    def _on_details_link_activated(self, link: str) -> None:
        if link.startswith("token:"):
            self.token_link_activated.emit(int(link.removeprefix("token:")))


@dataclass(frozen=True)
class _Shown:
    """An encoding with what its views show, made on the worker thread (for a long text, seconds of work
    that would otherwise freeze the window)."""

    encoding: Encoding
    colours: list[int]
    strip_text: str
    strip_starts: list[int]
    strip_ends: list[int]
    ids: IdsText


def _prepare(encoding: Encoding, colours: int, check: Callable[[], None] = lambda: None) -> _Shown:
    """What the views show of an encoding: unit colours, the Tokens view's text and the ids' text."""
    if encoding.error or not encoding.spans:
        return _Shown(encoding, [], "", [], [], IdsText("", [], []))
    unit_colours = encoding.unit_colours(colours)
    check()
    text, starts, ends = with_label_breaks(encoding.strip_text, encoding.label_start, encoding.label_end)
    check()
    # Arrays, not lists: no containers for the GUI thread's garbage collector to visit (see IntArray).
    return _Shown(
        encoding, int_array(unit_colours), text, int_array(starts), int_array(ends), ids_text(encoding.ids)
    )


#: A short text with English, code, whitespace runs, accents, CJK and an emoji, for the Sample button.
SAMPLE_TEXT = (
    "Byte-level BPE merges the most frequent pair of tokens, again and again.\n"
    "    def tokenize(text: str) -> list[int]:  # indented code\n"
    "Naïve café, “smart quotes” — and 日本語 too. 🙃\n"
    "<|endoftext|>"
)


__all__ = ["SAMPLE_TEXT", "PlaygroundView"]
