"""The "Playground" tab: type text and see what the tokenizer does to it.

Left: the text, coloured by token as you type (encoding runs on a worker thread, debounced), counts, the
decoded-bytes view of the tokens and the id sequence. Right: the hovered or selected token's details, the
vocab-size slider with the curve of token count against vocab size, and a box that decodes pasted ids.
"""

from __future__ import annotations

import json
import re

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtGui import QFont, QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSlider,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from ..engine import Tokenizer, UnknownTokenIdError
from ..engine.analysis import compression
from .tasks import TaskContext, TaskRunner
from .token_charts import VocabCurvePlot
from .token_text import FileDropWidget, TokenDetails, TokenTextEdit
from .tokenizer_info import (
    NORMAL,
    Curve,
    Encoding,
    LoadedTokenizer,
    SpecialMode,
    encode_text,
    token_count_curve,
)

#: Milliseconds of quiet typing before the text is encoded again.
ENCODE_DELAY_MS = 150
#: Milliseconds the slider must rest before the text is encoded with the new cut.
SLIDER_DELAY_MS = 60
#: Milliseconds of quiet before the curve is computed again (it encodes the text at every vocab size).
CURVE_DELAY_MS = 400

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

_IDS_PATTERN = re.compile(r"[\s,;\[\]()]*")
_ID = re.compile(r"-?\d+")


def parse_ids(text: str) -> list[int]:
    """Token ids from pasted text: integers separated by spaces, commas or brackets.

    Raises:
        ValueError: Something else is in the text; the message quotes it.

    Example:
        >>> parse_ids("[15496, 995]")
        [15496, 995]
    """
    ids: list[int] = []
    position = 0
    while position < len(text):
        position = _IDS_PATTERN.match(text, position).end()  # type: ignore[union-attr]
        if position >= len(text):
            break
        found = _ID.match(text, position)
        if found is None:
            bad = text[position : position + 12]
            raise ValueError(f"not a token id: {bad!r} (paste numbers separated by spaces or commas)")
        ids.append(int(found.group()))
        position = found.end()
    return ids


#: The text whose ids the decode box's placeholder shows as an example.
DECODE_EXAMPLE = "Hello world"


def decode_placeholder(tokenizer: Tokenizer | None) -> str:
    """The decode box's placeholder: ids that this tokenizer really decodes (those of "Hello world").

    Example:
        >>> decode_placeholder(None)
        'Open a tokenizer, then paste token ids here'
    """
    if tokenizer is None:
        return "Open a tokenizer, then paste token ids here"
    try:
        ids = tokenizer.encode_ordinary(DECODE_EXAMPLE)
    except (ValueError, KeyError):  # a tokenizer without every byte: no example rather than a wrong one
        return "Paste token ids (full vocabulary)"
    return f"Paste ids (full vocabulary), e.g. {format_ids(ids)} for {DECODE_EXAMPLE!r}"


def format_ids(ids: list[int]) -> str:
    """The ids as a JSON list (what the Copy button copies).

    Example:
        >>> format_ids([1, 2])
        '[1, 2]'
    """
    return json.dumps(ids)


class PlaygroundView(FileDropWidget):
    """The playground tab.

    Signals:
        encoded(): A new encoding of the text is shown (also after an error message replaced it).
        curve_changed(): The curve of token count against vocab size was recomputed.
        settled(): Nothing is waiting to be encoded or computed.
        token_link_activated(int): A token link in the details was clicked (to show it elsewhere).
        files_dropped(list): Tokenizer files were dropped on the tab.
    """

    encoded = Signal()
    curve_changed = Signal()
    settled = Signal()
    token_link_activated = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("playground")
        self.loaded: LoadedTokenizer | None = None
        self.encoding: Encoding | None = None
        self.curve: Curve | None = None
        self._selected_token = -1  # index of the selected token in the encoding (-1: none)
        self._hover: tuple[str, int] | None = None  # ("text", unit) or ("tokens", token)

        self.encode_runner = TaskRunner("bpe-studio-encode", self)
        self.encode_runner.finished.connect(self._on_encode_runner_finished)
        self.encode_runner.errored.connect(self._on_encode_runner_errored)
        self.encode_runner.idle.connect(self._on_runner_idle)
        self.curve_runner = TaskRunner("bpe-studio-curve", self)
        self.curve_runner.finished.connect(self._on_curve_runner_finished)
        self.curve_runner.errored.connect(self._on_curve_runner_errored)
        self.curve_runner.idle.connect(self._on_runner_idle)

        self.encode_timer = QTimer(self)
        self.encode_timer.setSingleShot(True)
        self.encode_timer.setInterval(ENCODE_DELAY_MS)
        self.encode_timer.timeout.connect(self._on_encode_timer_timeout)
        self.curve_timer = QTimer(self)
        self.curve_timer.setSingleShot(True)
        self.curve_timer.setInterval(CURVE_DELAY_MS)
        self.curve_timer.timeout.connect(self._on_curve_timer_timeout)

        self._build()
        self._show_tokenizer()

    # ==============================================================================================
    # Layout
    # ==============================================================================================

    def _build(self) -> None:
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
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
        self.editor.setPlaceholderText("Type or paste text here. Each token gets its own colour.")
        self.editor.text_edited.connect(self._on_editor_text_edited)
        self.editor.unit_hovered.connect(self._on_editor_unit_hovered)
        self.editor.cursorPositionChanged.connect(self._on_editor_cursor_moved)
        self.editor.files_dropped.connect(self.files_dropped)
        text_layout.addWidget(self.editor)
        self.stats_label = QLabel(text_box)
        self.stats_label.setObjectName("stats")
        self.stats_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
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
        self.strip.unit_hovered.connect(self._on_strip_unit_hovered)
        self.strip.cursorPositionChanged.connect(self._on_strip_cursor_moved)
        self.strip.files_dropped.connect(self.files_dropped)
        tokens_layout.addWidget(self.strip)

        ids_box = QGroupBox("Token ids", vertical)
        ids_layout = QHBoxLayout(ids_box)
        self.ids_view = QPlainTextEdit(ids_box)
        self.ids_view.setObjectName("playground_ids")
        self.ids_view.setReadOnly(True)
        self.ids_view.setFont(mono)
        self.ids_view.setPlaceholderText("The ids of the tokens appear here.")
        ids_layout.addWidget(self.ids_view, 1)
        self.copy_button = QPushButton("Copy", ids_box)
        self.copy_button.setToolTip("Copy the ids as a JSON list")
        self.copy_button.clicked.connect(self.copy_ids)
        ids_layout.addWidget(self.copy_button, 0, Qt.AlignmentFlag.AlignTop)

        vertical.addWidget(text_box)
        vertical.addWidget(tokens_box)
        vertical.addWidget(ids_box)
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
        scroll.setMinimumHeight(150)
        details_layout.addWidget(scroll)
        right_layout.addWidget(details_box, 2)

        size_box = QGroupBox("Vocab size", right)
        size_layout = QVBoxLayout(size_box)
        slider_row = QHBoxLayout()
        self.size_slider = QSlider(Qt.Orientation.Horizontal, size_box)
        self.size_slider.setToolTip(
            "Use only the first merges: the tokenizer a training run would have given at that size"
        )
        self.size_slider.valueChanged.connect(self._on_size_slider_changed)
        slider_row.addWidget(self.size_slider, 1)
        self.full_button = QPushButton("All merges", size_box)
        self.full_button.setToolTip("Use the whole tokenizer")
        self.full_button.clicked.connect(self._on_full_button_clicked)
        slider_row.addWidget(self.full_button)
        size_layout.addLayout(slider_row)
        self.size_label = QLabel(size_box)
        self.size_label.setObjectName("size")
        size_layout.addWidget(self.size_label)
        self.curve_plot = VocabCurvePlot(size_box)
        self.curve_plot.setMinimumHeight(180)
        self.curve_plot.setToolTip("Tokens in the text at each vocab size; click to use that size")
        self.curve_plot.vocab_size_clicked.connect(self._on_curve_plot_clicked)
        size_layout.addWidget(self.curve_plot, 1)
        right_layout.addWidget(size_box, 3)

        decode_box = QGroupBox("Decode ids", right)
        decode_layout = QVBoxLayout(decode_box)
        self.decode_edit = QLineEdit(decode_box)
        self.decode_edit.setFont(mono)
        self.decode_edit.setPlaceholderText(decode_placeholder(None))
        self.decode_edit.setClearButtonEnabled(True)
        self.decode_edit.textChanged.connect(self._on_decode_edit_changed)
        decode_layout.addWidget(self.decode_edit)
        self.decode_output = QPlainTextEdit(decode_box)
        self.decode_output.setObjectName("decode_output")
        self.decode_output.setReadOnly(True)
        self.decode_output.setMaximumHeight(70)
        self.decode_output.setPlaceholderText("The decoded text appears here.")
        decode_layout.addWidget(self.decode_output)
        self.decode_status = QLabel(decode_box)
        self.decode_status.setObjectName("caption")
        self.decode_status.setWordWrap(True)
        decode_layout.addWidget(self.decode_status)
        right_layout.addWidget(decode_box, 0)

        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        right.setMinimumWidth(340)
        splitter.setSizes([820, 480])
        self.editor.set_whitespace_visible(True)
        self.strip.set_whitespace_visible(False)
        self.size_slider.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    # ==============================================================================================
    # Public API
    # ==============================================================================================

    def set_tokenizer(self, loaded: LoadedTokenizer | None, text: str | None = None) -> None:
        """Show a tokenizer (None: none), and optionally replace the text; the text is encoded again."""
        self.loaded = loaded
        self.encoding = None
        self.curve = None
        self.curve_plot.set_curve(None, None)
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
        """How many merges the tokenizer in use has (the slider's position)."""
        return self.size_slider.value()

    def set_merges_used(self, merges: int) -> None:
        """Cut the tokenizer to its first ``merges`` merges (moves the slider)."""
        self.size_slider.setValue(merges)

    def effective_tokenizer(self) -> Tokenizer | None:
        """The tokenizer of the shown encoding (a cut of the loaded one), or the loaded one."""
        if self.encoding is not None and self.encoding.tokenizer is not None:
            return self.encoding.tokenizer
        return self.loaded.tokenizer if self.loaded is not None else None

    def is_busy(self) -> bool:
        """Whether an encoding or the curve is waiting or being computed."""
        return (
            self.encode_timer.isActive()
            or self.curve_timer.isActive()
            or self.encode_runner.is_busy()
            or self.curve_runner.is_busy()
        )

    def shutdown(self) -> None:
        """Stop the timers and the worker threads (when the window closes)."""
        self.encode_timer.stop()
        self.curve_timer.stop()
        self.encode_runner.shutdown()
        self.curve_runner.shutdown()

    @Slot()
    def copy_ids(self) -> None:
        """Copy the ids of the shown encoding to the clipboard as a JSON list."""
        if self.encoding is not None:
            QGuiApplication.clipboard().setText(format_ids(self.encoding.ids))

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

        def task(ctx: TaskContext) -> Encoding:
            tokenizer = loaded.cut(merges) if loaded is not None else None
            ctx.check()
            return encode_text(tokenizer, text, mode, merges=merges, check=ctx.check)

        self.encode_runner.start(task)

    @Slot(object)
    def _on_encode_runner_finished(self, encoding: Encoding) -> None:
        if encoding.text != self.text() or self.encode_timer.isActive():
            return  # the text changed meanwhile; the next encoding is on its way
        self._apply_encoding(encoding)

    @Slot(object)
    def _on_encode_runner_errored(self, exc: BaseException) -> None:
        self.encoding = None
        self.editor.clear_units()
        self.strip.set_text_and_units("", [], [], [])
        self._show_error(f"Cannot encode the text: {exc}")
        self.encoded.emit()

    def _apply_encoding(self, encoding: Encoding) -> None:
        self.encoding = encoding
        self._selected_token = -1
        self._hover = None
        self.editor.mark_error(None, None)
        if encoding.error:
            self.editor.clear_units()
            self.strip.set_text_and_units("", [], [], [])
            self.ids_view.setPlainText("")
            if encoding.error_span is not None:
                start, end = encoding.error_span
                self.editor.mark_error(*self._text_positions(encoding, start, end))
            self._show_error(encoding.error)
        else:
            self._show_error("")
            colours = len(self.editor.token_palette.backgrounds)
            self.editor.set_units(
                encoding.unit_start, encoding.unit_end, encoding.unit_kind, encoding.unit_colours(colours)
            )
            kinds = [NORMAL] * len(encoding.spans)
            for unit in range(encoding.unit_count):
                kind = encoding.unit_kind[unit]
                for token in encoding.unit_tokens(unit):
                    kinds[token] = kind
            self.strip.set_text_and_units(
                encoding.strip_text, encoding.label_start, encoding.label_end, kinds
            )
            self.ids_view.setPlainText(format_ids(encoding.ids) if encoding.spans else "")
        self._update_stats()
        self._update_size_label()
        self._show_details()
        self._on_decode_edit_changed(self.decode_edit.text())
        self.encoded.emit()

    @staticmethod
    def _text_positions(encoding: Encoding, start: int, end: int) -> tuple[int, int]:
        from .tokenizer_info import utf16_positions

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
        figures = compression(self.text(), n)
        chars, size, per_token = figures.characters, figures.bytes, figures.chars_per_token
        if not known:
            tokens = "–"
            ratio = ""
        else:
            tokens = f"<b>{n:,}</b> token{'s' if n != 1 else ''}"
            ratio = f" · <b>{per_token:.2f}</b> characters per token" if per_token is not None else ""
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

        def task(ctx: TaskContext) -> tuple[LoadedTokenizer, str, Curve]:
            return loaded, text, token_count_curve(loaded, text, mode, check=ctx.check)

        self.curve_runner.start(task)

    @Slot(object)
    def _on_curve_runner_finished(self, found: tuple[LoadedTokenizer, str, Curve]) -> None:
        loaded, text, curve = found
        if loaded is not self.loaded or self.curve_timer.isActive():
            return
        self.curve = curve
        if curve.error:
            self.curve_plot.set_curve(None, None)
        else:
            self.curve_plot.set_curve(curve.vocab_sizes, curve.counts)
        if curve.error:
            title = "No curve: the text holds a disallowed special token"
        elif text == self.text():
            title = "Tokens in this text by vocab size"
        else:
            title = "Tokens by vocab size (updating…)"
        self.curve_plot.plot.setTitle(title, size="10pt")
        self._update_size_label()
        self.curve_changed.emit()

    @Slot(object)
    def _on_curve_runner_errored(self, exc: BaseException) -> None:
        self.curve = None
        self.curve_plot.set_curve(None, None)
        self.curve_plot.plot.setTitle(f"No curve: {exc}", size="10pt")
        self.curve_changed.emit()

    @Slot()
    def _on_runner_idle(self) -> None:
        if not self.is_busy():
            self.settled.emit()

    @Slot(int)
    def _on_size_slider_changed(self, _value: int) -> None:
        self._update_size_label()
        if self.loaded is not None:
            self.schedule_encode(SLIDER_DELAY_MS)

    @Slot()
    def _on_full_button_clicked(self) -> None:
        self.size_slider.setValue(self.size_slider.maximum())

    @Slot(int)
    def _on_curve_plot_clicked(self, vocab_size: int) -> None:
        if self.loaded is not None:
            self.size_slider.setValue(self.loaded.index.merges_for_vocab_size(vocab_size))

    def _update_size_label(self) -> None:
        loaded = self.loaded
        if loaded is None:
            self.size_label.setText("Open a tokenizer to try smaller vocabularies.")
            self.curve_plot.set_current(256, None)
            return
        index = loaded.index
        merges = self.merges_used
        size = index.vocab_size_at(merges)
        total = index.merge_count
        shown = f"<b>{size:,}</b> tokens: the first {merges:,} of {total:,} merges"
        if merges >= total:
            shown = f"<b>{size:,}</b> tokens: all {total:,} merges"
        count = None
        if self.curve is not None and not self.curve.error and merges < len(self.curve.counts):
            count = int(self.curve.counts[merges])
        self.size_label.setText(shown)
        self.curve_plot.set_current(size, count)

    # ==============================================================================================
    # Tokenizer header
    # ==============================================================================================

    def _show_tokenizer(self) -> None:
        loaded = self.loaded
        self.size_slider.blockSignals(True)
        if loaded is None:
            self.title_label.setText("No tokenizer")
            self.summary_label.setText(
                "Train one in the Train tab, or open a tokenizer file (Tokenizer ▸ Open tokenizer…, or drop "
                "it here)."
            )
            self.size_slider.setRange(0, 0)
            self.details.show_message("Open a tokenizer to see its tokens here.")
        else:
            self.title_label.setText(loaded.name)
            self.title_label.setToolTip(loaded.source_text)
            self.summary_label.setText(loaded.summary())
            total = loaded.index.merge_count
            self.size_slider.setRange(0, total)
            self.size_slider.setValue(total)
            self.size_slider.setPageStep(max(1, total // 20))
            self.size_slider.setSingleStep(1)
            self.details.show_legend(self.editor.token_palette)
        self.size_slider.blockSignals(False)
        # The decode box ignores the slider: ids come from the whole tokenizer (e.g. copied elsewhere).
        tokenizer = loaded.tokenizer if loaded is not None else None
        self.decode_edit.setPlaceholderText(decode_placeholder(tokenizer))
        self.decode_edit.setToolTip(
            ""
            if tokenizer is None
            else f"Decodes with the full tokenizer ({tokenizer.vocab_size:,} tokens), whatever the "
            "vocab-size slider is set to"
        )
        enabled = loaded is not None
        for widget in (self.size_slider, self.full_button, self.curve_plot):
            widget.setEnabled(enabled)
        self._update_size_label()
        self._update_stats()

    # ==============================================================================================
    # Hover, selection and details
    # ==============================================================================================

    @Slot()
    def _on_editor_text_edited(self) -> None:
        self.schedule_encode()
        self.schedule_curve()

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

    def _select(self, token: int, *, from_strip: bool) -> None:
        encoding = self.encoding
        if encoding is None or token >= len(encoding.spans):
            token = -1
        self._selected_token = token
        if token < 0 or encoding is None:
            self.editor.set_current_units(range(0))
            self.strip.set_current_units(range(0))
        else:
            unit = encoding.unit_of_token(token)
            self.editor.set_current_units(range(unit, unit + 1), scroll=from_strip)
            self.strip.set_current_units(range(token, token + 1), scroll=not from_strip)
        self._show_details()

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

    # ==============================================================================================
    # Decoding
    # ==============================================================================================

    @Slot(str)
    def _on_decode_edit_changed(self, text: str) -> None:
        # The full tokenizer, not the slider's cut: pasted ids may be any of its tokens.
        tokenizer = self.loaded.tokenizer if self.loaded is not None else None
        if not text.strip():
            self.decode_output.setPlainText("")
            self.decode_status.setText("")
            return
        if tokenizer is None:
            self.decode_output.setPlainText("")
            self.decode_status.setText("Open a tokenizer to decode ids.")
            return
        try:
            ids = parse_ids(text)
            data = tokenizer.decode_bytes(ids)
        except (ValueError, UnknownTokenIdError) as exc:
            self.decode_output.setPlainText("")
            self.decode_status.setText(f"⚠ {exc}")
            return
        decoded = data.decode("utf-8", errors="replace")
        self.decode_output.setPlainText(decoded)
        plural = "s" if len(ids) != 1 else ""
        note = f"{len(ids):,} id{plural} → {len(decoded):,} characters, {len(data):,} bytes"
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            note += " (some bytes are not whole UTF-8 characters: shown as �)"
        self.decode_status.setText(note)


#: A short text with English, code, whitespace runs, accents, CJK and an emoji, for the Sample button.
SAMPLE_TEXT = (
    "Byte-level BPE merges the most frequent pair of tokens, again and again.\n"
    "    def tokenize(text: str) -> list[int]:  # indented code\n"
    "Naïve café, “smart quotes” — and 日本語 too. 🙃\n"
    "<|endoftext|>"
)


__all__ = ["SAMPLE_TEXT", "PlaygroundView", "format_ids", "parse_ids"]
