"""Hugging Face ``tokenizers``' decoders: how a ``tokenizer.json`` turns tokens back into text.

``tokenizers`` decodes ids by spelling each token (an ordinary token in GPT-2's characters, an added token
as its text), passing the list through the ``decoder``'s steps (each one maps a list of strings to a list of
strings) and joining the result. :class:`Decoder` runs the same steps: ``ByteLevel`` (GPT-2's characters
back to bytes, read as UTF-8 with U+FFFD for invalid bytes), ``Metaspace``, ``Replace``, ``Strip``,
``Fuse``, ``ByteFallback`` (``<0x41>`` tokens to bytes) and ``Sequence``.

Example:
    >>> decoder = Decoder.from_json({"type": "Sequence", "decoders": [
    ...     {"type": "ByteLevel"}, {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
    ...     {"type": "Strip", "content": " ", "start": 1, "stop": 0}]})
    >>> decoder.decode(["▁Hello", "Ġworld"])
    'Hello world'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

from ..bytes_unicode import char_to_byte
from ..pretokenize.hf import PipelineError, compile_step_pattern, sequence_children

DecodeStep = Callable[[list[str]], list[str]]


def _byte_level(tokens: list[str]) -> list[str]:
    table = char_to_byte()
    data = bytearray()
    for token in tokens:
        try:
            data += bytes(table[c] for c in token)
        except KeyError:  # a token outside GPT-2's alphabet (an added token) is its own UTF-8
            data += token.encode("utf-8")
    return [data.decode("utf-8", errors="replace")]


def _metaspace(tokens: list[str], replacement: str, prepend: bool) -> list[str]:
    # The first token loses its replacement characters when the pre-tokenizer prepends one.
    return [token.replace(replacement, "" if (n == 0 and prepend) else " ") for n, token in enumerate(tokens)]


def _strip(tokens: list[str], content: str, start: int, stop: int) -> list[str]:
    out: list[str] = []
    for token in tokens:
        chars = list(token)
        head = 0
        while head < start and head < len(chars) and chars[head] == content:
            head += 1
        tail = len(chars)
        while len(chars) - tail < stop and tail > head and chars[tail - 1] == content:
            tail -= 1
        out.append("".join(chars[head:tail]))
    return out


@cache
def _byte_token() -> Any:
    """``<0xNN>``, compiled (and ``regex`` imported) when first decoding one, not on opening a file."""
    import regex

    return regex.compile(r"<0x([0-9A-Fa-f]{2})>")


def _byte_fallback(tokens: list[str]) -> list[str]:
    out: list[str] = []
    pending = bytearray()

    def flush() -> None:
        if pending:
            try:
                out.append(pending.decode("utf-8"))
            except UnicodeDecodeError:  # tokenizers writes one U+FFFD per byte of an invalid run
                out.extend("\ufffd" * len(pending))
            pending.clear()

    for token in tokens:
        m = _byte_token().fullmatch(token)
        if m is not None:
            pending.append(int(m.group(1), 16))
        else:
            flush()
            out.append(token)
    flush()
    return out


def _steps(node: object, where: str) -> list[DecodeStep]:
    if not isinstance(node, Mapping):
        raise PipelineError(where, "expected an object with a 'type'")
    kind = node.get("type")
    if kind == "Sequence":
        return [s for child, at in sequence_children(node, where, "decoders") for s in _steps(child, at)]
    if kind == "ByteLevel":
        return [_byte_level]
    if kind == "Fuse":
        return [lambda tokens: ["".join(tokens)]]
    if kind == "ByteFallback":
        return [_byte_fallback]
    if kind == "Replace":
        compiled = compile_step_pattern(f"{where}.pattern", node.get("pattern"))
        content = node.get("content")
        if not isinstance(content, str):
            raise PipelineError(f"{where}.content", "expected a string")
        return [lambda tokens: [compiled.sub(lambda _: content, token) for token in tokens]]
    if kind == "Strip":
        content, start, stop = node.get("content"), node.get("start", 0), node.get("stop", 0)
        if not (isinstance(content, str) and len(content) == 1 and type(start) is int and type(stop) is int):
            raise PipelineError(where, "expected 'content' (one character), 'start' and 'stop' (integers)")
        return [lambda tokens: _strip(tokens, content, start, stop)]
    if kind == "Metaspace":
        replacement = node.get("replacement", "▁")
        if not isinstance(replacement, str) or len(replacement) != 1:
            raise PipelineError(f"{where}.replacement", "expected one character")
        scheme = node.get("prepend_scheme")
        prepend = scheme != "never" if scheme is not None else bool(node.get("add_prefix_space", True))
        return [lambda tokens: _metaspace(tokens, replacement, prepend)]
    raise PipelineError(
        where,
        f"decoder {kind!r} is not supported (bpe-studio reads ByteLevel, Metaspace, Replace, Strip, Fuse, "
        "ByteFallback and Sequence)",
    )


class Decoder:
    """A ``tokenizer.json``'s ``decoder``: token spellings -> text, as ``tokenizers.Tokenizer.decode``.

    :attr:`json` keeps the entry it was read from.
    """

    def __init__(self, json: Any, steps: list[DecodeStep]) -> None:
        self.json = json
        self._steps = steps

    @classmethod
    def from_json(cls, node: object) -> Decoder:
        """Read a ``decoder`` entry.

        Raises:
            PipelineError: A step is malformed or not supported.
        """
        return cls(node, _steps(node, "decoder"))

    def decode(self, tokens: list[str]) -> str:
        """The text of the tokens, spelled as ``tokenizers`` spells them (GPT-2's characters, added tokens
        as their text)."""
        for step in self._steps:
            tokens = step(tokens)
        return "".join(tokens)
