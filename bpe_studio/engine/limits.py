"""Limits every part of the engine shares, in a module that imports nothing (the tokenizer needs them, and
opening a file must not import :mod:`.config`, which imports ``dataclasses`` and ``enum``: see
tests/engine/formats/test_lean_load.py)."""

from __future__ import annotations

#: The most code points a token id can use: ids are stored as code points of ``str`` objects.
MAX_VOCAB_SIZE = 0x110000
