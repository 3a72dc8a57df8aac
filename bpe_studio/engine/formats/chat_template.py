"""Chat templates: chat messages rendered into a model's prompt text, as Hugging Face's ``transformers`` does.

A model's ``tokenizer_config.json`` (beside its ``tokenizer.json``) may hold a ``chat_template``: a Jinja2
template that turns a list of messages (``{"role": "user", "content": "Hi"}``) into the text the model was
trained on, with its special tokens (``<|im_start|>``, ``<|eot_id|>``...). Newer models keep it in a file of
its own, ``chat_template.jinja``, which then wins, as in ``transformers``.

:func:`render_chat` renders one exactly as ``transformers``' ``apply_chat_template(tokenize=False)``
does: Jinja2's ``ImmutableSandboxedEnvironment`` with ``trim_blocks`` and ``lstrip_blocks``, the
``loopcontrols`` extension, a ``{% generation %}`` block that only marks text, the ``tojson`` filter (no
ASCII escapes), the ``raise_exception`` and ``strftime_now`` globals, and the variables ``messages``,
``add_generation_prompt``, ``tools``, ``documents`` and the tokenizer's special tokens (``bos_token``,
``eos_token``...). The text is then encoded without the tokenizer's own BOS/EOS
(``add_special_tokens=False``), as ``transformers`` does.

Models without a template (GPT-2) can use :data:`CHATML`, the plain ChatML layout.

Example:
    >>> template = ChatTemplate(CHATML, name="ChatML")
    >>> render_chat(template, [{"role": "user", "content": "Hi"}], add_generation_prompt=True)
    '<|im_start|>user\\nHi<|im_end|>\\n<|im_start|>assistant\\n'
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from .base import FormatError

#: The file beside a ``tokenizer.json`` that holds the chat template and the special tokens' names.
CONFIG_FILE = "tokenizer_config.json"
#: The file that holds the template itself in newer models (it wins over the config's).
TEMPLATE_FILE = "chat_template.jinja"

#: The plain ChatML layout (OpenAI's, used by Qwen and many others), for a tokenizer without a template.
CHATML = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)

#: The special tokens ``transformers`` passes to a template by name (``SPECIAL_TOKENS_ATTRIBUTES``).
SPECIAL_TOKEN_NAMES = (
    "bos_token",
    "eos_token",
    "unk_token",
    "sep_token",
    "pad_token",
    "cls_token",
    "mask_token",
)

#: A ``model_max_length`` above this is ``transformers``' placeholder for "no limit" (1e30), not a length.
MAX_SANE_CONTEXT = 100_000_000

#: The largest config or template file read (real ones are a few kB to a few MB).
MAX_FILE_BYTES = 64 * 1024 * 1024

#: Seconds a rendering may take: real templates take milliseconds, a hostile one (nested loops over
#: ``range(100000)``) would take hours.
RENDER_SECONDS = 10.0


class ChatTemplateError(FormatError):
    """A chat template that cannot be read or rendered; the message is one line naming the file."""


@dataclass(frozen=True)
class ChatTemplate:
    """A chat template and what a template sees of its tokenizer.

    Attributes:
        source: The Jinja2 template text.
        name: Where it came from, for messages (a file's path, or ``"ChatML"``).
        special_tokens: The tokenizer's named special tokens (``bos_token`` → ``<s>``), as templates see them.
        model_max_length: The context length the config states, when sane; else None.
    """

    source: str
    name: str = "template"
    special_tokens: Mapping[str, str] = field(default_factory=dict)
    model_max_length: int | None = None


def _config_folder(path: str | os.PathLike[str]) -> Path:
    target = Path(path)
    return target if target.is_dir() else target.parent


def _read(path: Path) -> str:
    if path.stat().st_size > MAX_FILE_BYTES:
        raise ChatTemplateError(
            f"{path}: larger than {MAX_FILE_BYTES // 2**20} MiB, not a tokenizer configuration; remove it"
        )
    return path.read_text(encoding="utf-8")


def _token_text(value: object) -> str | None:
    """A special token as a config states it: a string, or an ``AddedToken`` object with ``content``."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("content"), str):
        return str(value["content"])
    return None


def _template_text(config_path: Path, value: object) -> str | None:
    """The config's ``chat_template``: a string, or a list of named ones (the ``default`` is used)."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        named = {
            item.get("name"): item.get("template")
            for item in value
            if isinstance(item, Mapping) and isinstance(item.get("template"), str)
        }
        found = named.get("default") or next(iter(named.values()), None)
        if isinstance(found, str):
            return found
    raise ChatTemplateError(
        f"{config_path}: key 'chat_template': expected a string or a list of {{name, template}} objects; "
        "fix the file"
    )


def find_chat_template(path: str | os.PathLike[str]) -> ChatTemplate | None:
    """The chat template of a tokenizer file or folder: from ``chat_template.jinja`` or the
    ``chat_template`` of ``tokenizer_config.json`` beside it, with the config's special tokens and context
    length. None when there is no template (GPT-2, a trained tokenizer).

    Raises:
        ChatTemplateError: The config is not JSON, or its ``chat_template`` has the wrong shape (one line
            naming the file).
    """
    folder = _config_folder(path)
    config_path = folder / CONFIG_FILE
    config: dict[str, Any] = {}
    try:
        document = json.loads(_read(config_path))
    except FileNotFoundError:
        document = {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ChatTemplateError(f"{config_path}: cannot be read ({exc}); check the file") from None
    except json.JSONDecodeError as exc:
        raise ChatTemplateError(
            f"{config_path}: line {exc.lineno}, column {exc.colno}: not JSON ({exc.msg}); fix the file"
        ) from None
    if isinstance(document, dict):
        config = document
    source = _template_text(config_path, config.get("chat_template"))
    name = os.fspath(config_path)
    template_path = folder / TEMPLATE_FILE
    if template_path.is_file():
        try:
            source, name = _read(template_path), os.fspath(template_path)
        except (OSError, UnicodeDecodeError) as exc:
            raise ChatTemplateError(f"{template_path}: cannot be read ({exc}); check the file") from None
    if source is None:
        return None
    tokens = {key: text for key in SPECIAL_TOKEN_NAMES if (text := _token_text(config.get(key))) is not None}
    length = config.get("model_max_length")
    sane = isinstance(length, int) and not isinstance(length, bool) and 0 < length <= MAX_SANE_CONTEXT
    return ChatTemplate(source, name=name, special_tokens=tokens, model_max_length=length if sane else None)


def _environment() -> Any:
    """Jinja2's sandbox set up as ``transformers`` sets it up for chat templates."""
    try:
        import jinja2
        from jinja2 import nodes
        from jinja2.ext import Extension, loopcontrols
        from jinja2.sandbox import ImmutableSandboxedEnvironment
    except ImportError:  # pragma: no cover - a dependency of bpe-studio
        raise ChatTemplateError(
            "chat templates need Jinja2, a dependency of bpe-studio; install it with `pip install jinja2`"
        ) from None

    class GenerationBlock(Extension):
        """``{% generation %}…{% endgeneration %}``: marks the assistant's text in ``transformers`` (for
        training masks); rendering keeps the text as it is."""

        tags = {"generation"}  # noqa: RUF012 - Jinja2's class attribute

        def parse(self, parser: Any) -> Any:
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            return nodes.CallBlock(self.call_method("_render", []), [], [], body).set_lineno(lineno)

        def _render(self, caller: Any) -> Any:
            return caller()

    def raise_exception(message: str) -> None:
        raise jinja2.exceptions.TemplateError(message)

    def tojson(
        value: Any,
        ensure_ascii: bool = False,
        indent: int | None = None,
        separators: tuple[str, str] | None = None,
        sort_keys: bool = False,
    ) -> str:
        # Jinja's own tojson escapes HTML characters; transformers overrides it with plain json.dumps.
        return json.dumps(
            value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
        )

    def strftime_now(format: str) -> str:
        return datetime.now().strftime(format)

    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[GenerationBlock, loopcontrols]
    )
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


class _TookTooLongError(BaseException):
    """Raised by the trace function; a BaseException, so that no ``except Exception`` on the way swallows it
    (Python unsets a trace function that raised: a swallowed one would let the template run on)."""


@contextmanager
def _watched(seconds: float, check: Callable[[], None] | None) -> Iterator[None]:
    """Stop the code run inside (in this thread) once ``seconds`` passed, or when ``check`` raises.

    A template is code from a file: its loops never call back, so the only way to stop one is a trace
    function, which Python calls at every line of the template's compiled code (and of Jinja's runtime).
    """
    deadline = time.monotonic() + seconds
    count = 0

    def tracer(frame: Any, event: str, _arg: Any) -> Any:
        nonlocal count
        if event == "call" and frame.f_code.co_filename != "<template>":
            return None  # only the template's own code (its loops) is watched: Jinja's runtime runs untraced
        count += 1
        if count % 1024 == 0:
            if check is not None:
                check()
            if time.monotonic() > deadline:
                raise _TookTooLongError
        return tracer

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        yield
    finally:
        sys.settrace(previous)


def render_chat(
    template: ChatTemplate,
    messages: Sequence[Mapping[str, Any]],
    *,
    add_generation_prompt: bool = False,
    tools: Sequence[Mapping[str, Any]] | None = None,
    documents: Sequence[Mapping[str, Any]] | None = None,
    seconds: float = RENDER_SECONDS,
    check: Callable[[], None] | None = None,
    **extra: Any,
) -> str:
    """Render messages through a chat template, as ``apply_chat_template(tokenize=False)`` does.

    Args:
        template: The template and its tokenizer's special tokens.
        messages: Each ``{"role": ..., "content": ...}``, in order.
        add_generation_prompt: End with the start of an assistant's turn (for generation).
        tools, documents: Passed to the template as ``transformers`` passes them (None: none).
        seconds: How long the rendering may take (see :data:`RENDER_SECONDS`).
        check: Called now and then while rendering; whatever it raises stops the rendering (a cancelled
            task's check).
        extra: More variables for the template (``enable_thinking=False``...).

    Raises:
        ChatTemplateError: The template has a syntax error (its line), calls ``raise_exception`` (its
            message), does something the sandbox forbids, or takes longer than ``seconds``.

    Example:
        >>> source = "{{ bos_token }}{% for m in messages %}[{{ m.role }}] {{ m.content }}{% endfor %}"
        >>> tpl = ChatTemplate(source, special_tokens={"bos_token": "<s>"})
        >>> render_chat(tpl, [{"role": "user", "content": "Hi"}])
        '<s>[user] Hi'
    """
    import jinja2

    env = _environment()
    try:
        compiled = env.from_string(template.source)
    except jinja2.TemplateSyntaxError as exc:
        raise ChatTemplateError(
            f"{template.name}: chat template line {exc.lineno}: {exc.message}; fix the template"
        ) from None
    variables = {
        **template.special_tokens,
        **extra,
        "messages": [dict(message) for message in messages],
        "tools": None if tools is None else [dict(tool) for tool in tools],
        "documents": None if documents is None else [dict(doc) for doc in documents],
        "add_generation_prompt": add_generation_prompt,
    }
    try:
        with _watched(seconds, check):
            return str(compiled.render(**variables))
    except _TookTooLongError:
        raise ChatTemplateError(
            f"{template.name}: the chat template took longer than {seconds:g} s to render; it is not a "
            "chat template (they take milliseconds)"
        ) from None
    except jinja2.exceptions.SecurityError as exc:
        raise ChatTemplateError(f"{template.name}: the chat template did something unsafe: {exc}") from None
    except jinja2.TemplateError as exc:
        lineno = getattr(exc, "lineno", None)
        where = f" (line {lineno})" if lineno else ""
        message = exc.message or type(exc).__name__
        raise ChatTemplateError(
            f"{template.name}: the chat template refused the messages{where}: {message}"
        ) from None
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, ZeroDivisionError) as exc:
        raise ChatTemplateError(f"{template.name}: the chat template failed: {exc}") from None


__all__ = [
    "CHATML",
    "CONFIG_FILE",
    "MAX_SANE_CONTEXT",
    "SPECIAL_TOKEN_NAMES",
    "TEMPLATE_FILE",
    "ChatTemplate",
    "ChatTemplateError",
    "find_chat_template",
    "render_chat",
]
