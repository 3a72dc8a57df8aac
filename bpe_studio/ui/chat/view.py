"""The "Chat" tab: system/user/assistant messages rendered through a model's chat template and tokenized.

Left: the messages (a table: role and text, edited in place), "Add generation prompt", the template in use
and the context length. Right: the rendered prompt in the tokenizer's tokens (special tokens outlined), the
special tokens the template put in with their counts, and the token count against the context length.

The template is the model's ``chat_template`` (``tokenizer_config.json`` or ``chat_template.jinja`` beside
its ``tokenizer.json``), rendered as ``transformers`` renders it
(:mod:`bpe_studio.engine.formats.chat_template`); a tokenizer without one (GPT-2, a trained one) gets the
built-in ChatML layout, and the tab says so. Rendering and encoding run on a worker thread (the newest
request wins); the rendered text is encoded without the tokenizer's own BOS/EOS, as ``transformers`` does.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
    Slot,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSpinBox,
    QSplitter,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ...engine.formats.chat_template import (
    CHATML,
    MAX_SANE_CONTEXT,
    ChatTemplate,
    ChatTemplateError,
    find_chat_template,
    render_chat,
)
from ..app.tasks import TaskContext, TaskRunner
from ..present.chat import DEFAULT_CONTEXT, ROLES, SAMPLE_MESSAGES, context_line, special_token_counts
from ..present.token_format import text_label
from ..present.token_layout import Encoding, SpecialMode, encode_text
from ..present.tokenizer_info import LoadedTokenizer
from ..widgets.common import delay_timer
from ..widgets.token_text import TokenTextEdit

#: Milliseconds of quiet typing before the chat is rendered and encoded again.
CHAT_DELAY_MS = 200

#: The template choices.
MODEL_TEMPLATE, CHATML_TEMPLATE = "model", "chatml"

Index = QModelIndex | QPersistentModelIndex


class MessagesModel(QAbstractTableModel):
    """The chat's messages: column 0 the role, column 1 the text; both editable.

    Signals:
        messages_changed(): A message was added, removed or edited.
    """

    messages_changed = Signal()
    HEADERS = ("Role", "Message")

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._messages: list[list[str]] = [[role, text] for role, text in SAMPLE_MESSAGES]

    def messages(self) -> list[dict[str, str]]:
        """The messages as chat templates take them."""
        return [{"role": role, "content": text} for role, text in self._messages]

    def set_messages(self, messages: list[tuple[str, str]]) -> None:
        """Replace every message."""
        self.beginResetModel()
        self._messages = [[role, text] for role, text in messages]
        self.endResetModel()
        self.messages_changed.emit()

    def add_message(self, role: str, text: str = "") -> int:
        """Append a message; returns its row."""
        row = len(self._messages)
        self.beginInsertRows(QModelIndex(), row, row)
        self._messages.append([role, text])
        self.endInsertRows()
        self.messages_changed.emit()
        return row

    def remove_message(self, row: int) -> None:
        """Remove the message at ``row``."""
        if not 0 <= row < len(self._messages):
            return
        self.beginRemoveRows(QModelIndex(), row, row)
        del self._messages[row]
        self.endRemoveRows()
        self.messages_changed.emit()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008 - Qt's name and default
        return 0 if parent.isValid() else len(self._messages)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008 - Qt's name and default
        return 0 if parent.isValid() else 2

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        value = self._messages[index.row()][index.column()]
        if role == Qt.ItemDataRole.DisplayRole and index.column() == 1:
            return value.replace("\n", " ⏎ ")  # one line per message in the table; the editor has them all
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return value
        if role == Qt.ItemDataRole.ToolTipRole and index.column() == 1:
            return value[:2000]
        return None

    def setData(self, index: Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:  # noqa: N802
        if not index.isValid() or role != Qt.ItemDataRole.EditRole or not isinstance(value, str):
            return False
        if index.column() == 0 and not value.strip():
            return False  # a message needs a role
        self._messages[index.row()][index.column()] = value.strip() if index.column() == 0 else value
        self.dataChanged.emit(index, index, [Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole])
        self.messages_changed.emit()
        return True

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return super().flags(index) | Qt.ItemFlag.ItemIsEditable

    def headerData(  # noqa: N802 - Qt's name
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return self.HEADERS[section]
        return None


class RoleDelegate(QStyledItemDelegate):
    """Edits a role with a combo box of the usual roles (editable: a template may know others)."""

    def createEditor(  # noqa: N802 - Qt's name
        self, parent: QWidget, _option: QStyleOptionViewItem, _index: Index
    ) -> QWidget:
        combo = QComboBox(parent)
        combo.setEditable(True)
        combo.addItems(ROLES)
        return combo

    def setEditorData(self, editor: QWidget, index: Index) -> None:  # noqa: N802 - Qt's name
        if isinstance(editor, QComboBox):
            editor.setCurrentText(str(index.data(Qt.ItemDataRole.EditRole)))

    def setModelData(self, editor: QWidget, model: Any, index: Index) -> None:  # noqa: N802 - Qt's name
        if isinstance(editor, QComboBox):
            model.setData(index, editor.currentText(), Qt.ItemDataRole.EditRole)


class ChatView(QWidget):
    """The chat tab.

    Signals:
        rendered(): The chat was rendered and encoded (or an error shown instead).
    """

    rendered = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chat")
        self.loaded: LoadedTokenizer | None = None
        #: The model's own template (None: it has none), and why it could not be read (empty: it could).
        self.model_template: ChatTemplate | None = None
        self.template_problem = ""
        self.encoding: Encoding | None = None
        self.rendered_text = ""
        self.error = ""
        self.specials: list[tuple[str, int]] = []
        self.runner = TaskRunner("bpe-studio-chat", self)
        self.runner.finished.connect(self._on_runner_finished)
        self.runner.errored.connect(self._on_runner_errored)
        self.timer = delay_timer(self, CHAT_DELAY_MS, self._on_timer_timeout)
        self._build()
        self._show_template()

    def _build(self) -> None:
        outer = QHBoxLayout(self)
        outer.setContentsMargins(8, 8, 8, 8)
        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.setChildrenCollapsible(False)
        outer.addWidget(splitter)

        left = QGroupBox("Messages", splitter)
        left_layout = QVBoxLayout(left)
        self.model = MessagesModel(self)
        self.model.messages_changed.connect(self._on_model_messages_changed)
        self.table = QTableView(left)
        self.table.setObjectName("chat_messages")
        self.table.setModel(self.model)
        self.table.setItemDelegateForColumn(0, RoleDelegate(self.table))
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked
            | QAbstractItemView.EditTrigger.EditKeyPressed
            | QAbstractItemView.EditTrigger.AnyKeyPressed
        )
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        left_layout.addWidget(self.table, 1)
        buttons = QHBoxLayout()
        self.add_button = QPushButton("&Add message", left)
        self.add_button.setToolTip("A user message after an assistant one, else an assistant one")
        self.add_button.clicked.connect(self._on_add_button_clicked)
        self.remove_button = QPushButton("&Remove message", left)
        self.remove_button.clicked.connect(self._on_remove_button_clicked)
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        left_layout.addLayout(buttons)
        form = QFormLayout()
        self.generation_check = QCheckBox("Add generation prompt", left)
        self.generation_check.setToolTip(
            "End with the start of the assistant's turn, as for generating a reply"
        )
        self.generation_check.setChecked(True)
        self.generation_check.toggled.connect(self._on_option_changed)
        form.addRow(self.generation_check)
        self.template_combo = QComboBox(left)
        self.template_combo.addItem("The model's chat template", MODEL_TEMPLATE)
        self.template_combo.addItem("ChatML (built in)", CHATML_TEMPLATE)
        self.template_combo.currentIndexChanged.connect(self._on_option_changed)
        form.addRow("Template:", self.template_combo)
        self.context_spin = QSpinBox(left)
        self.context_spin.setRange(1, MAX_SANE_CONTEXT)
        self.context_spin.setGroupSeparatorShown(True)
        self.context_spin.setValue(DEFAULT_CONTEXT)
        self.context_spin.setSuffix(" tokens")
        self.context_spin.valueChanged.connect(self._on_context_spin_changed)
        form.addRow("Context length:", self.context_spin)
        left_layout.addLayout(form)
        self.template_label = QLabel(left)
        self.template_label.setObjectName("caption")
        self.template_label.setWordWrap(True)
        self.template_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        left_layout.addWidget(self.template_label)

        right = QGroupBox("Rendered prompt", splitter)
        right_layout = QVBoxLayout(right)
        status = QFrame(right)
        status.setObjectName("status")
        status_layout = QVBoxLayout(status)
        status_layout.setContentsMargins(8, 6, 8, 6)
        self.count_label = QLabel(status)
        self.count_label.setObjectName("chat_count")
        self.specials_label = QLabel(status)
        self.specials_label.setObjectName("caption")
        self.specials_label.setWordWrap(True)
        self.specials_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        status_layout.addWidget(self.count_label)
        status_layout.addWidget(self.specials_label)
        right_layout.addWidget(status)
        self.error_label = QLabel(right)
        self.error_label.setObjectName("error")
        self.error_label.setWordWrap(True)
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label.hide()
        right_layout.addWidget(self.error_label)
        self.view = TokenTextEdit(right, read_only=True)
        self.view.setObjectName("chat_rendered")
        self.view.set_whitespace_visible(True)
        right_layout.addWidget(self.view, 1)
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 3)

    # ==============================================================================================
    # Public API
    # ==============================================================================================

    def set_tokenizer(self, loaded: LoadedTokenizer | None) -> None:
        """Use a tokenizer (None: none): its chat template, context length and tokens."""
        self.loaded = loaded
        self.model_template, self.template_problem = None, ""
        if loaded is not None and loaded.path is not None:
            try:
                self.model_template = find_chat_template(loaded.path)
            except ChatTemplateError as exc:
                self.template_problem = str(exc)
        blocked = self.template_combo.blockSignals(True)
        self.template_combo.setCurrentIndex(0 if self.model_template is not None else 1)
        self.template_combo.blockSignals(blocked)
        context = self.model_template.model_max_length if self.model_template is not None else None
        if context is not None:
            blocked = self.context_spin.blockSignals(True)
            self.context_spin.setValue(context)
            self.context_spin.blockSignals(blocked)
        self._show_template()
        self.timer.start(0)

    def template(self) -> ChatTemplate:
        """The template in use: the model's, or ChatML (chosen, or for a model without one)."""
        if self.template_combo.currentData() == MODEL_TEMPLATE and self.model_template is not None:
            return self.model_template
        tokens = self.model_template.special_tokens if self.model_template is not None else {}
        return ChatTemplate(CHATML, name="ChatML", special_tokens=tokens)

    def messages(self) -> list[dict[str, str]]:
        """The messages, as chat templates take them."""
        return self.model.messages()

    def set_messages(self, messages: list[tuple[str, str]]) -> None:
        """Replace the messages (``(role, text)`` pairs)."""
        self.model.set_messages(messages)

    def context_length(self) -> int:
        """The context length the count is measured against."""
        return self.context_spin.value()

    def is_busy(self) -> bool:
        """Whether a rendering waits or runs."""
        return self.timer.isActive() or self.runner.is_busy()

    def shutdown(self) -> None:
        """Stop the timer and the worker thread (when the window closes)."""
        self.timer.stop()
        self.runner.shutdown()

    # ==============================================================================================
    # Slots
    # ==============================================================================================

    @Slot()
    def _on_model_messages_changed(self) -> None:
        self.remove_button.setEnabled(self.model.rowCount() > 0)
        self.timer.start()

    @Slot()
    def _on_option_changed(self) -> None:
        self._show_template()
        self.timer.start(0)

    @Slot(int)
    def _on_context_spin_changed(self, _value: int) -> None:
        self._show_count()

    @Slot()
    def _on_add_button_clicked(self) -> None:
        messages = self.model.messages()
        role = "user" if not messages or messages[-1]["role"] != "user" else "assistant"
        row = self.model.add_message(role)
        index = self.model.index(row, 1)
        self.table.setCurrentIndex(index)
        self.table.edit(index)

    @Slot()
    def _on_remove_button_clicked(self) -> None:
        row = self.table.currentIndex().row()
        self.model.remove_message(row if row >= 0 else self.model.rowCount() - 1)

    # ==============================================================================================
    # Rendering
    # ==============================================================================================

    def _show_template(self) -> None:
        name = self.loaded.name if self.loaded is not None else "The tokenizer"
        has = self.model_template is not None
        item = self.template_combo.model().index(0, 0)
        self.template_combo.model().setData(
            item,
            0 if has else None,  # enabled / disabled item (Qt.ItemFlag via the UserRole - 1 trick)
            Qt.ItemDataRole.UserRole - 1,
        )
        if self.loaded is None:
            text = "Open a tokenizer (Tokenizer ▸ Open…) to render the chat with it."
        elif self.template_problem:
            text = f"{self.template_problem}. Shown with the built-in ChatML layout instead."
        elif not has:
            text = (
                f"{name} has no chat template (no chat_template in a tokenizer_config.json beside it): "
                "shown with the built-in ChatML layout."
            )
        elif self.template_combo.currentData() == CHATML_TEMPLATE:
            text = f"The built-in ChatML layout (the model's own: {self.model_template.name})."  # type: ignore[union-attr]
        else:
            text = f"The chat template of {self.model_template.name}, rendered as transformers does."  # type: ignore[union-attr]
        named = self.template().special_tokens
        if self.loaded is not None and named:
            text += " It names " + ", ".join(f"{key} = {value}" for key, value in named.items()) + "."
        self.template_label.setText(text)

    @Slot()
    def _on_timer_timeout(self) -> None:
        loaded, template, messages = self.loaded, self.template(), self.messages()
        generation = self.generation_check.isChecked()

        def task(ctx: TaskContext) -> tuple[str, Encoding | None, list[tuple[str, int]]]:
            text = render_chat(template, messages, add_generation_prompt=generation, check=ctx.check)
            ctx.check()
            if loaded is None:
                return text, None, []
            encoding = encode_text(
                loaded.tokenizer, text, SpecialMode.RECOGNISED, check=ctx.check, add_special_tokens=False
            )
            return text, encoding, special_token_counts(loaded.tokenizer, encoding.spans)

        self.runner.start(task)

    @Slot(object)
    def _on_runner_finished(self, found: tuple[str, Encoding | None, list[tuple[str, int]]]) -> None:
        if self.timer.isActive():
            return  # something changed meanwhile; the next rendering is on its way
        text, encoding, specials = found
        self.rendered_text, self.encoding, self.specials, self.error = text, encoding, specials, ""
        self.error_label.hide()
        if encoding is None:
            self.view.set_text_and_units(text, [], [], [])
        else:
            colours = len(self.view.token_palette.backgrounds)
            self.view.set_text_and_units(
                text,
                encoding.unit_start,
                encoding.unit_end,
                encoding.unit_kind,
                encoding.unit_colours(colours),
            )
        self._show_count()
        self.rendered.emit()

    @Slot(object)
    def _on_runner_errored(self, exc: BaseException) -> None:
        if self.timer.isActive():
            return
        self.encoding, self.specials, self.rendered_text = None, [], ""
        self.error = str(exc) if isinstance(exc, ChatTemplateError) else f"Cannot render the chat: {exc}"
        self.error_label.setText(self.error)
        self.error_label.show()
        self.view.set_text_and_units("", [], [], [])
        self._show_count()
        self.rendered.emit()

    def _show_count(self) -> None:
        encoding = self.encoding
        if encoding is None:
            self.count_label.setText("–")
            self.specials_label.setText("")
            return
        tokens = len(encoding.spans)
        line = context_line(tokens, self.context_length())
        over = tokens > self.context_length()
        self.count_label.setText(f"<b>{line}</b>" + (" — over the context length" if over else ""))
        if self.specials:
            ids = encoding.tokenizer.special_tokens if encoding.tokenizer is not None else {}
            listed = ", ".join(
                f"<code>{_escape(text_label(t))}</code> (id {ids.get(t, '?')}) ×{n:,}"
                for t, n in self.specials
            )
            self.specials_label.setText(f"Special tokens (outlined): {listed}")
        else:
            self.specials_label.setText(
                "No special tokens: the template's markers are not special tokens of this tokenizer, so "
                "they are split like text."
            )


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


__all__ = ["CHATML_TEMPLATE", "CHAT_DELAY_MS", "MODEL_TEMPLATE", "ChatView", "MessagesModel"]
