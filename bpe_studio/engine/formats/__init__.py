"""Tokenizer file formats. Every write is atomic."""

from .atomic import atomic_write
from .detect import FORMATS, FormatName, detect_format, load, save, save_result, save_targets, source_files
from .studio import FormatError, StudioFile, dumps_studio, load_studio, save_studio

__all__ = [
    "FORMATS",
    "FormatError",
    "FormatName",
    "StudioFile",
    "atomic_write",
    "detect_format",
    "dumps_studio",
    "load",
    "load_studio",
    "save",
    "save_result",
    "save_studio",
    "save_targets",
    "source_files",
]
