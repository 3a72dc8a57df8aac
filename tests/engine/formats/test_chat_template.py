"""Chat templates render as transformers' ``apply_chat_template(tokenize=False)`` does.

transformers is not installed here: the expected strings are what it returns for these public templates
(Meta's Llama-3-8B-Instruct, Qwen2-7B-Instruct, HuggingFaceH4/zephyr-7b-beta, a Mistral-style check), worked
out by its rules (sandboxed Jinja2, ``trim_blocks``, ``lstrip_blocks``, its ``tojson`` and globals).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bpe_studio.engine.formats.chat_template import (
    CHATML,
    ChatTemplate,
    ChatTemplateError,
    find_chat_template,
    render_chat,
)

LLAMA3 = (
    "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = "
    "'<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + "
    "'<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}"
    "{{ content }}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}"
)

QWEN2 = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' }}{% endif %}"
    "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

# Written over lines: trim_blocks and lstrip_blocks remove the block tags' lines, not the expressions'.
ZEPHYR = """{% for message in messages %}
{% if message['role'] == 'user' %}
{{ '<|user|>\n' + message['content'] + eos_token }}
{% elif message['role'] == 'system' %}
{{ '<|system|>\n' + message['content'] + eos_token }}
{% elif message['role'] == 'assistant' %}
{{ '<|assistant|>\n'  + message['content'] + eos_token }}
{% endif %}
{% if loop.last and add_generation_prompt %}
{{ '<|assistant|>' }}
{% endif %}
{% endfor %}"""

ALTERNATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}"
    "{% endif %}{{ '[INST] ' + message['content'] + ' [/INST]' if message['role'] == 'user' "
    "else message['content'] + eos_token }}{% endfor %}"
)

CHAT = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "  Hi there!  "},
    {"role": "assistant", "content": "Hello."},
]


def test_llama3_with_generation_prompt() -> None:
    template = ChatTemplate(LLAMA3, special_tokens={"bos_token": "<|begin_of_text|>"})
    assert render_chat(template, CHAT, add_generation_prompt=True) == (
        "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are terse.<|eot_id|>"
        "<|start_header_id|>user<|end_header_id|>\n\nHi there!<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\nHello.<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\n"
    )


def test_qwen2_adds_its_default_system_message() -> None:
    template = ChatTemplate(QWEN2)
    assert render_chat(template, CHAT[1:2]) == (
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
        "<|im_start|>user\n  Hi there!  <|im_end|>\n"
    )


def test_zephyr_block_lines_are_trimmed() -> None:
    template = ChatTemplate(ZEPHYR, special_tokens={"eos_token": "</s>"})
    assert render_chat(template, CHAT, add_generation_prompt=True) == (
        "<|system|>\nYou are terse.</s>\n<|user|>\n  Hi there!  </s>\n<|assistant|>\nHello.</s>\n"
        "<|assistant|>\n"
    )


def test_chatml_builtin() -> None:
    assert render_chat(ChatTemplate(CHATML), CHAT[1:]) == (
        "<|im_start|>user\n  Hi there!  <|im_end|>\n<|im_start|>assistant\nHello.<|im_end|>\n"
    )


def test_raise_exception_becomes_one_line_error() -> None:
    template = ChatTemplate(
        ALTERNATE, name="cfg.json", special_tokens={"bos_token": "<s>", "eos_token": "</s>"}
    )
    assert render_chat(template, CHAT[1:]) == "<s>[INST]   Hi there!   [/INST]Hello.</s>"
    with pytest.raises(ChatTemplateError, match=r"^cfg\.json: .*roles must alternate") as caught:
        render_chat(template, CHAT)
    assert "\n" not in str(caught.value)


def test_tojson_keeps_non_ascii_and_html_characters() -> None:
    # Jinja's own tojson would give "\u003cé\u003e"-style escapes; transformers' gives json.dumps's text.
    template = ChatTemplate("{{ messages[0] | tojson }}|{{ tools | tojson(indent=1) }}")
    rendered = render_chat(template, [{"role": "user", "content": "<é>"}], tools=[{"name": "f"}])
    assert rendered == '{"role": "user", "content": "<é>"}|' + json.dumps([{"name": "f"}], indent=1)


def test_generation_block_loopcontrols_and_strftime() -> None:
    template = ChatTemplate(
        "{% for m in messages %}{% if loop.index > 1 %}{% break %}{% endif %}"
        "{% generation %}{{ m.content }}{% endgeneration %}{% endfor %}{{ strftime_now('%Y')|length }}"
    )
    assert render_chat(template, CHAT) == "You are terse.4"


@pytest.mark.parametrize(
    ("source", "match"),
    [
        ("{% if %}", r"^t\.jinja: chat template line 1: .*; fix the template$"),
        ("{{ messages.append(1) }}", r"^t\.jinja: the chat template did something unsafe"),
        ("{{ messages[0].content.__class__.__mro__ }}", r"^t\.jinja: "),
    ],
)
def test_broken_or_unsafe_templates_say_so_in_one_line(source: str, match: str) -> None:
    with pytest.raises(ChatTemplateError, match=match) as caught:
        rendered = render_chat(ChatTemplate(source, name="t.jinja"), CHAT)
        # An attribute the sandbox hides renders as nothing rather than failing: never the class itself.
        assert "object" not in rendered
        raise ChatTemplateError("t.jinja: rendered")
    assert "\n" not in str(caught.value)


def _model(folder: Path, config: object, *, jinja: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tokenizer.json").write_text("{}", encoding="utf-8")
    if config is not None:
        text = config if isinstance(config, str) else json.dumps(config)
        (folder / "tokenizer_config.json").write_text(text, encoding="utf-8")
    if jinja is not None:
        (folder / "chat_template.jinja").write_text(jinja, encoding="utf-8")
    return folder / "tokenizer.json"


def test_find_reads_the_config_beside_the_tokenizer(tmp_path: Path) -> None:
    path = _model(
        tmp_path / "llama",
        {
            "chat_template": LLAMA3,
            "bos_token": {"content": "<|begin_of_text|>", "lstrip": False},
            "eos_token": "<|eot_id|>",
            "model_max_length": 131072,
        },
    )
    for where in (path, path.parent):
        found = find_chat_template(where)
        assert found is not None
        assert found.source == LLAMA3
        assert found.special_tokens == {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"}
        assert found.model_max_length == 131072
        assert found.name.endswith("tokenizer_config.json")


def test_find_named_templates_jinja_file_and_no_limit(tmp_path: Path) -> None:
    named = {
        "chat_template": [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D"}],
        "model_max_length": 1000000000000000019884624838656,  # transformers' "no limit"
    }
    found = find_chat_template(_model(tmp_path / "a", named))
    assert found is not None and found.source == "D" and found.model_max_length is None
    found = find_chat_template(_model(tmp_path / "b", {"chat_template": "old"}, jinja="new"))
    assert found is not None and found.source == "new" and found.name.endswith("chat_template.jinja")


def test_find_without_template_is_none(tmp_path: Path) -> None:
    assert find_chat_template(_model(tmp_path / "a", None)) is None
    assert find_chat_template(_model(tmp_path / "b", {"bos_token": "<s>"})) is None


@pytest.mark.parametrize(
    ("config", "match"),
    [
        ("{not json", r"tokenizer_config\.json: line 1, column 2: not JSON .*; fix the file$"),
        ({"chat_template": 3}, r"tokenizer_config\.json: key 'chat_template': expected .*; fix the file$"),
    ],
)
def test_find_bad_config_is_one_line(tmp_path: Path, config: object, match: str) -> None:
    with pytest.raises(ChatTemplateError, match=match):
        find_chat_template(_model(tmp_path / "m", config))


def test_a_template_that_never_ends_is_stopped() -> None:
    endless = ChatTemplate(
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", name="t.jinja"
    )
    with pytest.raises(ChatTemplateError, match=r"^t\.jinja: the chat template took longer than 0\.2 s"):
        render_chat(endless, CHAT, seconds=0.2)

    class StopError(Exception):
        pass

    def check() -> None:
        raise StopError

    with pytest.raises(StopError):  # a cancelled task stops the rendering too
        render_chat(endless, CHAT, check=check)
