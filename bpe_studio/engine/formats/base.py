"""What every format module shares and telling formats apart needs: the errors and the file names.

It imports nothing: opening a file imports this module, :mod:`.detect` and the one format module that reads
the file (``load("tokenizer.model")`` neither parses JSON nor writes anything, so it imports neither
``json`` nor the writers' ``dataclasses``; tests/engine/formats/test_lean_load.py holds it to that).
"""

from __future__ import annotations


class FormatError(ValueError):
    """A tokenizer file is malformed; the message names the file and the line or key."""


class FormatWarning(UserWarning):
    """A tokenizer file holds something that is not applied or not carried over; the message says what."""


#: GPT-2's pair of files, and the sidecar BPE Studio writes beside them (see :mod:`.gpt2`).
VOCAB_FILE = "vocab.json"
MERGES_FILE = "merges.txt"
SIDECAR_FILE = "bpe_studio.json"
#: The ``format`` of a sidecar (a ``bpe_studio.json`` or a ``.tiktoken.json``).
SIDECAR_FORMAT = "bpe-studio-sidecar"
#: A Hugging Face tokenizer's file name (see :mod:`.hf`).
HF_FILE = "tokenizer.json"
#: Mistral's tekken file name (see :mod:`.tekken`).
TEKKEN_FILE = "tekken.json"
#: A tiktoken rank file's suffix (``tiktoken_format.SUFFIX``, which a test holds equal; that module is
#: imported only to read or write one).
TIKTOKEN_SUFFIX = ".tiktoken"
#: The ``format`` of a studio tokenizer file (see :mod:`.studio`).
STUDIO_FORMAT = "bpe-studio-tokenizer"
