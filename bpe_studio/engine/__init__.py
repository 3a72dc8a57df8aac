"""BPE Studio's engine: train byte-level BPE tokenizers exactly and fast. It never imports Qt.

Example:
    >>> from bpe_studio.engine import TrainConfig, train
    >>> result = train(TrainConfig(inputs=["corpus.txt"], vocab_size=1000,
    ...                            special_tokens=("<|endoftext|>",)))

The names below are imported when first used (PEP 562): ``from bpe_studio.engine import TrainConfig,
train`` then loads only what training needs, not the tokenizer, the file formats or Dask support, which
keeps a small training run in a fresh process short (issue 12: ``corpus.en`` in <= 0.15 s).
"""

from __future__ import annotations

from .lazy import lazy_names

#: Public name -> the module (under ``bpe_studio.engine``) that defines it.
_WHERE = {
    "backend": "native",
    "CountsFileError": "training.checkpoint",
    "PATTERNS": "pretokenize.patterns",
    "InvalidUtf8Policy": "config",
    "TrainConfig": "config",
    "compile_pattern": "pretokenize.patterns",
    "CorpusChangedError": "corpus.plan",
    "CorpusDecodeError": "corpus.plan",
    "UncuttableTextError": "corpus.plan",
    "WorkerCrashedError": "workers.protocol",
    "ClusterError": "corpus.distributed",
    "CorpusStats": "events",
    "CountProgress": "events",
    "Finished": "events",
    "MergeMade": "events",
    "Phase": "events",
    "PhaseStarted": "events",
    "StopReason": "events",
    "TrainEvent": "events",
    "TrainResult": "events",
    "FORMATS": "formats",
    "FormatError": "formats",
    "FormatWarning": "formats",
    "detect_format": "formats",
    "load": "formats",
    "save": "formats",
    "iter_train_from_iterator": "training.from_iterator",
    "train_from_iterator": "training.from_iterator",
    "DisallowedSpecialTokenError": "encoding.tokenizer",
    "Template": "encoding.tokenizer",
    "Tokenizer": "encoding.tokenizer",
    "TokenSpan": "encoding.tokenizer",
    "UnknownTokenIdError": "encoding.tokenizer",
    "extend_base": "extending",
    "iter_train": "training.trainer",
    "train": "training.trainer",
    "train_bpe": "training.trainer",
    "preflight": "training.preflight",  # lazy too: engine.training.preflight, the module, sets no name here
}

#: What ``from bpe_studio.engine import *`` gives: every name of the table.
__all__ = sorted(_WHERE)


__getattr__, __dir__ = lazy_names(__name__, _WHERE)


TYPE_CHECKING = False  # (typing is for type checkers only: see bpe_studio/__init__.py)
if TYPE_CHECKING:  # what type checkers and editors see: the same names, imported eagerly
    from .config import InvalidUtf8Policy, TrainConfig
    from .corpus.distributed import ClusterError
    from .corpus.plan import CorpusChangedError, CorpusDecodeError, UncuttableTextError
    from .encoding.tokenizer import (
        DisallowedSpecialTokenError,
        Template,
        Tokenizer,
        TokenSpan,
        UnknownTokenIdError,
    )
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
    from .extending import extend_base
    from .formats import FORMATS, FormatError, FormatWarning, detect_format, load, save
    from .native import backend
    from .pretokenize.patterns import PATTERNS, compile_pattern
    from .training.checkpoint import CountsFileError
    from .training.from_iterator import iter_train_from_iterator, train_from_iterator
    from .training.preflight import preflight
    from .training.trainer import iter_train, train, train_bpe
    from .workers.protocol import WorkerCrashedError
