"""Tokenizer file formats. Every write is atomic.

The names below are imported when first used (PEP 562), as :mod:`bpe_studio.engine`'s are: opening a file
(``load``) imports :mod:`.detect` and the one format module that reads it, not the writers (``saving``,
``atomic``, which import ``dataclasses``: 5-10 ms of a fresh process).
"""

from __future__ import annotations

from ..lazy import lazy_names

#: Public name -> the module (under ``bpe_studio.engine.formats``) that defines it.
_WHERE = {
    "atomic_plan": "atomic",
    "atomic_write": "atomic",
    "FORMATS": "detect",
    "FormatName": "detect",
    "TokenizerSource": "detect",
    "detect_format": "detect",
    "display_name": "detect",
    "display_names": "detect",
    "load": "detect",
    "save": "detect",
    "save_targets": "detect",
    "source_files": "detect",
    "SaveReport": "saving",
    "VerificationError": "saving",
    "sample_texts": "saving",
    "save_plan": "saving",
    "save_result": "saving",
    "save_tokenizer": "saving",
    "training_record": "saving",
    "FormatError": "base",
    "FormatWarning": "base",
    "StudioFile": "studio",
    "dumps_studio": "studio",
    "load_studio": "studio",
    "save_studio": "studio",
}

# (Spelled out, not sorted(_WHERE): mypy reads a literal list; test_lazy_api.py holds them equal.)
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


__getattr__, __dir__ = lazy_names(__name__, _WHERE)


TYPE_CHECKING = False  # (typing is for type checkers only: see bpe_studio/__init__.py)
if TYPE_CHECKING:  # what type checkers and editors see: the same names, imported eagerly
    from .atomic import atomic_plan, atomic_write
    from .base import FormatError, FormatWarning
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
    from .studio import StudioFile, dumps_studio, load_studio, save_studio
