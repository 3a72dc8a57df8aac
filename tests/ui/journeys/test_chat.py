"""Journey: a user renders chat messages through a model's chat template (issue 21): edits the messages,
the generation prompt and the context length, then opens GPT-2, which has no template."""

# ruff: noqa: F811, PLR0917 - fixtures (some imported from tokenizer_helpers) are test arguments

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QComboBox, QLineEdit

from bpe_studio.engine import Tokenizer, TrainConfig, load, save, train
from bpe_studio.ui.app.main_window import MainWindow
from bpe_studio.ui.app.tokenizer_views import TokenizerViews
from bpe_studio.ui.chat.view import ChatView

from ..tokenizer_helpers import WAIT_MS, tiny_corpus, views  # noqa: F401 - fixtures
from .conftest import ScriptedDialogs, click, shoot, trigger

# Qwen2-7B-Instruct's chat_template, as its tokenizer_config.json holds it.
QWEN2 = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' }}{% endif %}"
    "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
SPECIALS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")


@pytest.fixture
def model_folder(tiny_corpus: Path, tmp_path: Path) -> Path:
    """A model folder as the Hugging Face cache holds one: tokenizer.json and tokenizer_config.json."""
    folder = tmp_path / "qwen-like"
    folder.mkdir()
    result = train(TrainConfig(inputs=(tiny_corpus,), vocab_size=400, special_tokens=SPECIALS))
    save(Tokenizer.from_result(result), folder / "tokenizer.json", format="hf")
    config = {"chat_template": QWEN2, "eos_token": "<|im_end|>", "model_max_length": 32768}
    (folder / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


def _wait(qtbot, chat: ChatView) -> None:  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: not chat.is_busy(), timeout=WAIT_MS)


def _expected(messages: list[tuple[str, str]], *, generation: bool) -> str:
    text = "".join(f"<|im_start|>{role}\n{content}<|im_end|>\n" for role, content in messages)
    return text + ("<|im_start|>assistant\n" if generation else "")


def test_chat_through_the_models_template(  # type: ignore[no-untyped-def]
    qtbot,
    window: MainWindow,
    views: TokenizerViews,
    model_folder: Path,
    dialogs: ScriptedDialogs,
    shots: Path,
) -> None:
    chat = views.chat
    # 1. Open the model's folder; Ctrl+6 shows the Chat tab with the sample conversation rendered.
    dialogs.answer(model_folder)
    with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS):
        trigger(window, "Tokenizer", "Open tokenizer folder")
    qtbot.keyClick(window, Qt.Key.Key_6, Qt.KeyboardModifier.ControlModifier)
    assert window.tabs.currentWidget() is chat
    _wait(qtbot, chat)
    messages = [(m["role"], m["content"]) for m in chat.messages()]
    assert [role for role, _ in messages] == ["system", "user", "assistant"]
    assert chat.error == ""
    assert chat.rendered_text == _expected(messages, generation=True)
    assert "tokenizer_config.json" in chat.template_label.text()
    # Counted as transformers does: special tokens recognised, no BOS/EOS of the tokenizer's own.
    tokenizer = load(model_folder)
    ids = tokenizer.encode(chat.rendered_text, allowed_special="all", add_special_tokens=False)
    assert chat.encoding is not None and [s.id for s in chat.encoding.spans] == ids
    assert chat.specials == [("<|im_start|>", 4), ("<|im_end|>", 3)]
    assert chat.context_length() == 32768, "the context length comes from model_max_length"
    assert f"{len(ids):,} of 32,768 tokens" in chat.count_label.text()
    start_id = tokenizer.special_tokens["<|im_start|>"]
    assert f"&lt;|im_start|&gt;</code> (id {start_id}) ×4" in chat.specials_label.text()

    # 2. "Add message" adds a user turn and opens it for typing; Enter keeps it.
    with qtbot.waitSignal(chat.rendered, timeout=WAIT_MS):
        click(qtbot, chat, "Add message")
        editor = chat.table.findChild(QLineEdit)
        assert editor is not None, "the new message is open for typing"
        qtbot.keyClicks(editor, "Thanks! And the merges?")
        qtbot.keyClick(editor, Qt.Key.Key_Return)
    _wait(qtbot, chat)
    messages.append(("user", "Thanks! And the merges?"))
    assert chat.rendered_text == _expected(messages, generation=True)

    # 3. The role is a combo box of the usual roles.
    chat.table.edit(chat.model.index(3, 0))
    combo = chat.table.findChild(QComboBox)
    assert combo is not None and combo.findText("assistant") >= 0
    combo.setCurrentText("assistant")
    with qtbot.waitSignal(chat.rendered, timeout=WAIT_MS):
        qtbot.keyClick(combo, Qt.Key.Key_Return)
    _wait(qtbot, chat)
    messages[3] = ("assistant", messages[3][1])
    assert chat.rendered_text == _expected(messages, generation=True)

    # 4. Without the generation prompt; then a context length the chat does not fit in.
    check = chat.generation_check  # spans the form: a person clicks its box, at the left
    with qtbot.waitSignal(chat.rendered, timeout=WAIT_MS):
        qtbot.mouseClick(check, Qt.MouseButton.LeftButton, pos=QPoint(8, check.height() // 2))
    _wait(qtbot, chat)
    assert chat.rendered_text == _expected(messages, generation=False)
    chat.context_spin.setValue(20)
    assert "too many" in chat.count_label.text() and "over the context length" in chat.count_label.text()

    # 5. Remove message drops the selected one.
    chat.table.selectRow(0)
    with qtbot.waitSignal(chat.rendered, timeout=WAIT_MS):
        click(qtbot, chat, "Remove message")
    _wait(qtbot, chat)
    # Qwen's template adds its default system message when the first one is not a system message.
    assert chat.rendered_text.startswith("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n")
    chat.context_spin.setValue(32768)
    window.resize(1024, 640)
    shoot(window, shots, "chat-template")

    # 6. GPT-2 has no template: the built-in ChatML layout, said in one sentence; its markers are text.
    with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS):
        trigger(window, "Tokenizer", "Open GPT-2")
    _wait(qtbot, chat)
    assert window.tabs.currentWidget() is chat
    assert chat.template_combo.currentText().startswith("ChatML")
    assert "gpt2 has no chat template" in chat.template_label.text()
    assert chat.specials == []
    assert "not special tokens of this tokenizer" in chat.specials_label.text()
    assert chat.context_length() == 32768, "a tokenizer that states no length keeps the one set"
    shoot(window, shots, "chat-no-template")


def test_a_template_that_refuses_says_why_in_one_line(  # type: ignore[no-untyped-def]
    qtbot, window: MainWindow, views: TokenizerViews, model_folder: Path, dialogs: ScriptedDialogs
) -> None:
    config = {
        "chat_template": "{% if messages[0]['role'] == 'system' %}"
        "{{ raise_exception('System role not supported') }}{% endif %}",
        "model_max_length": 1000000000000000019884624838656,
    }
    (model_folder / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    dialogs.answer(model_folder)
    with qtbot.waitSignal(views.current_changed, timeout=WAIT_MS):
        trigger(window, "Tokenizer", "Open tokenizer folder")
    chat = views.chat
    _wait(qtbot, chat)
    assert chat.error.endswith("the chat template refused the messages: System role not supported")
    assert "tokenizer_config.json" in chat.error and "\n" not in chat.error
    assert chat.error_label.isVisibleTo(chat)
    assert chat.context_length() == 8192, "transformers' 'no limit' is not a context length"
    # The built-in ChatML renders the same messages.
    with qtbot.waitSignal(chat.rendered, timeout=WAIT_MS):
        chat.template_combo.setCurrentIndex(1)
    _wait(qtbot, chat)
    assert chat.error == "" and chat.rendered_text.startswith("<|im_start|>system\n")
    assert not chat.error_label.isVisibleTo(chat)
