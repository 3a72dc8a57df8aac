"""Tokenizer file formats. Every write is atomic."""

from .atomic import atomic_write
from .studio import FormatError, StudioFile, dumps_studio, load_studio, save_studio

__all__ = ["FormatError", "StudioFile", "atomic_write", "dumps_studio", "load_studio", "save_studio"]
