"""What the Chat tab shows about a rendered chat, as plain data. Qt-free.

* :func:`special_token_counts`: the special tokens of a rendered chat's encoding, in order of first use.
* :func:`context_line`: the token count against a context length, as one sentence.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...engine import Tokenizer, TokenSpan

#: The roles offered for a message (templates may know others: any text is kept).
ROLES = ("system", "user", "assistant", "tool")

#: The context length assumed when a tokenizer's configuration states none.
DEFAULT_CONTEXT = 8192

#: A conversation to start from.
SAMPLE_MESSAGES = (
    ("system", "You are a helpful assistant."),
    ("user", "What is byte-pair encoding?"),
    ("assistant", "A way to build a vocabulary: start from bytes and keep merging the most frequent pair."),
)


def special_token_counts(tokenizer: Tokenizer, spans: Sequence[TokenSpan]) -> list[tuple[str, int]]:
    """Each special token of an encoding and how often it occurs, in order of first occurrence.

    Example:
        >>> tok = Tokenizer({i: bytes([i]) for i in range(256)}, [], special_tokens={"<s>": 256})
        >>> special_token_counts(tok, tok.encode_with_offsets("<s>a<s>", allowed_special="all"))
        [('<s>', 2)]
    """
    names = {token_id: text for text, token_id in tokenizer.special_tokens.items()}
    counts: dict[str, int] = {}
    for span in spans:
        name = names.get(span.id)
        if name is not None:
            counts[name] = counts.get(name, 0) + 1
    return list(counts.items())


def context_line(tokens: int, context: int) -> str:
    """The token count against a context length, with what is left (or how far over it is).

    Example:
        >>> context_line(1200, 8192)
        '1,200 of 8,192 tokens of context (14.6%): 6,992 left'
        >>> context_line(9000, 8192)
        '9,000 of 8,192 tokens of context (109.9%): 808 too many'
    """
    share = 100 * tokens / context if context > 0 else 0.0
    rest = context - tokens
    tail = f"{rest:,} left" if rest >= 0 else f"{-rest:,} too many"
    return f"{tokens:,} of {context:,} tokens of context ({share:.1f}%): {tail}"


__all__ = ["DEFAULT_CONTEXT", "ROLES", "SAMPLE_MESSAGES", "context_line", "special_token_counts"]
