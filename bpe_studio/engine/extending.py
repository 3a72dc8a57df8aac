"""Opening a tokenizer to extend: :func:`extend_base` lays out a loaded tokenizer for the merge loop
(:class:`~bpe_studio.engine.training.extend.ExtendBase`), handing it the tokenizer's own encoder. It lives
above ``training`` and ``encoding``, since training never imports the encoder.

Example:
    >>> from bpe_studio.engine import TrainConfig, train
    >>> gpt2 = extend_base("gpt2")
    >>> result = train(TrainConfig(inputs=["corpus.txt"], vocab_size=50_257 + 1000, extend=gpt2))
    >>> result.vocab[50256]
    b'<|endoftext|>'
"""

from __future__ import annotations

import os

from .encoding.tokenizer import Tokenizer
from .formats import load
from .formats.base import FormatError
from .training.extend import ExtendBase, ExtendError


def extend_base(source: str | os.PathLike[str] | Tokenizer) -> ExtendBase:
    """A tokenizer laid out for extending (``TrainConfig(extend=...)``, the CLI's ``train --extend``).

    Args:
        source: A tokenizer, or what :func:`~bpe_studio.engine.formats.load` opens: a path (GPT-2 folder,
            ``.tiktoken``, ``tokenizer.json``) or a name (``gpt2``, ``cl100k_base`` ...).

    Raises:
        ExtendError: The tokenizer cannot be opened, or is not a byte-level BPE with a plain pattern (a
            SentencePiece-style model, a Hugging Face normalizer or pre-tokenizer pipeline); the message
            names it and says what to do.
    """
    if isinstance(source, Tokenizer):
        tokenizer, name = source, "<tokenizer>"
    else:
        name = os.fspath(source)
        try:
            tokenizer = load(name)
        except (FormatError, OSError) as exc:
            said = str(exc)  # (a format's message names the file already: not twice)
            raise ExtendError(f"extend: {said if said.startswith(name) else f'{name}: {said}'}") from None
    if tokenizer.piece_model is not None:
        raise ExtendError(
            f"extend: {name} is SentencePiece-style (it merges characters, not bytes); only byte-level BPE "
            "tokenizers (GPT-2 files, .tiktoken, byte-level tokenizer.json) can be extended"
        )
    if tokenizer.pipeline is not None or tokenizer.normalizer is not None:
        raise ExtendError(
            f"extend: {name} cuts text with a Hugging Face normalizer or pre-tokenizer pipeline that "
            "training cannot count with; only tokenizers that split text with one pattern can be extended"
        )
    # An existing path is recorded whole: the base may be opened again in a process with another folder.
    if name != "<tokenizer>" and os.path.exists(name):
        name = os.path.abspath(name)
    return ExtendBase.make(
        name,
        tokenizer.vocab,
        tokenizer.merges,
        tokenizer.special_tokens,
        pattern=tokenizer.pattern,
        rule=tokenizer.rule,
        ignore_merges=tokenizer.ignore_merges,
        encode_pieces=tokenizer._encode_each,
        encode_raw=tokenizer._bpe_raw,
        # A tokenizer opened from a path or name is pickled as that source (and opened again).
        reopen=None if isinstance(source, Tokenizer) else extend_base,
        encode_flat=getattr(tokenizer._encoder, "encode_flat", None),  # the native encoder's
        # The counting threads' native table encoded as it is (no str per pre-token): each key cut where no
        # token holds its two bytes side by side, which no merge crosses under either rule.
        encode_tables=getattr(tokenizer._encoder, "encode_tables", None),
    )


__all__ = ["extend_base"]
