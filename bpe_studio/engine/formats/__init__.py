"""Tokenizer file formats. Every write is atomic."""

from .atomic import atomic_plan, atomic_write
from .detect import (
    FORMATS,
    FormatName,
    TokenizerSource,
    detect_format,
    display_name,
    display_names,
    load,
    save,
    save_targets,
    source_files,
)
from .saving import (
    SaveReport,
    VerificationError,
    sample_texts,
    save_plan,
    save_result,
    save_tokenizer,
    training_record,
)
from .studio import FormatError, FormatWarning, StudioFile, dumps_studio, load_studio, save_studio

__all__ = [
    "FORMATS",
    "FormatError",
    "FormatName",
    "FormatWarning",
    "SaveReport",
    "StudioFile",
    "TokenizerSource",
    "VerificationError",
    "atomic_plan",
    "atomic_write",
    "detect_format",
    "display_name",
    "display_names",
    "dumps_studio",
    "load",
    "load_studio",
    "sample_texts",
    "save",
    "save_plan",
    "save_result",
    "save_studio",
    "save_targets",
    "save_tokenizer",
    "source_files",
    "training_record",
]
