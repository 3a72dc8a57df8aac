"""BPE Studio: train, inspect and use byte-level BPE tokenizers."""

__version__ = "0.1.0"
