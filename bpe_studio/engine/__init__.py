"""BPE Studio's engine: train byte-level BPE tokenizers exactly and fast. It never imports Qt.

Example:
    >>> from bpe_studio.engine import TrainConfig, train
    >>> result = train(TrainConfig(inputs=["corpus.txt"], vocab_size=1000,
    ...                            special_tokens=("<|endoftext|>",)))  # doctest: +SKIP
"""

from ._native import backend
from .checkpoint import CountsFileError
from .config import PATTERNS, InvalidUtf8Policy, TrainConfig, compile_pattern
from .corpus import CorpusChangedError, CorpusDecodeError, UncuttableTextError
from .counting import WorkerCrashedError
from .distributed import ClusterError
from .events import (
    CorpusStats,
    CountProgress,
    Finished,
    MergeMade,
    Phase,
    PhaseStarted,
    StopReason,
    TrainEvent,
    TrainResult,
)
from .formats import FORMATS, FormatError, FormatWarning, detect_format, load, save
from .from_iterator import iter_train_from_iterator, train_from_iterator
from .preflight import preflight
from .tokenizer import DisallowedSpecialTokenError, Template, Tokenizer, TokenSpan, UnknownTokenIdError
from .trainer import iter_train, train, train_bpe

__all__ = [
    "FORMATS",
    "PATTERNS",
    "ClusterError",
    "CorpusChangedError",
    "CorpusDecodeError",
    "CorpusStats",
    "CountProgress",
    "CountsFileError",
    "DisallowedSpecialTokenError",
    "Finished",
    "FormatError",
    "FormatWarning",
    "InvalidUtf8Policy",
    "MergeMade",
    "Phase",
    "PhaseStarted",
    "StopReason",
    "Template",
    "TokenSpan",
    "Tokenizer",
    "TrainConfig",
    "TrainEvent",
    "TrainResult",
    "UncuttableTextError",
    "UnknownTokenIdError",
    "WorkerCrashedError",
    "backend",
    "compile_pattern",
    "detect_format",
    "iter_train",
    "iter_train_from_iterator",
    "load",
    "preflight",
    "save",
    "train",
    "train_bpe",
    "train_from_iterator",
]
