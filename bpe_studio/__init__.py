"""BPE Studio: train, inspect and use byte-level BPE tokenizers.

The modules a command such as ``bpe-studio inspect tokenizer.model`` imports say ``TYPE_CHECKING = False``
instead of importing it from ``typing`` (which type checkers read as the same guard): ``typing`` itself is
imported only under that guard, as its import is a millisecond of a command that should start as fast as
the reference library opens the file (tests/cli/test_inspect_imports.py checks it).
"""

__version__ = "0.1.0"
