"""Typed progress events of a training run, and its result.

A run is an iterator of events (see :func:`bpe_studio.engine.iter_train`). The CLI, the GUI and the tests
all consume the same events; the last one is always :class:`Finished`, carrying the :class:`TrainResult`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any, Literal


class Phase(StrEnum):
    """The phases of a training run, in order."""

    PLANNING = "planning"
    """Finding chunk boundaries in the input files."""
    COUNTING = "counting"
    """Pre-tokenizing the corpus and counting unique pre-tokens."""
    MERGING = "merging"
    """The merge loop."""


class StopReason(StrEnum):
    """Why the merge loop stopped."""

    VOCAB_SIZE = "vocab_size"
    """The vocabulary reached ``vocab_size``."""
    NO_PAIRS = "no_pairs"
    """No adjacent pair was left to merge (every pre-token is a single token)."""
    MIN_FREQUENCY = "min_frequency"
    """The most frequent pair occurred fewer than ``min_frequency`` times."""
    CANCELLED = "cancelled"
    """The caller cancelled the run."""


@dataclass(frozen=True, slots=True)
class PhaseStarted:
    """A phase began."""

    phase: Phase
    elapsed: float


@dataclass(frozen=True, slots=True)
class CountProgress:
    """Counting advanced.

    Attributes:
        bytes_done: Corpus bytes pre-tokenized so far.
        bytes_total: Corpus bytes in all.
        unique_pretokens: Unique pre-tokens seen so far; while several worker processes count, this is the
            largest of their own tables (a lower bound: it never exceeds the final figure), and exact in the
            last event of the phase.
        elapsed: Seconds since the run started.
    """

    bytes_done: int
    bytes_total: int
    unique_pretokens: int
    elapsed: float


@dataclass(frozen=True, slots=True)
class MergeMade:
    """One merge was made.

    Attributes:
        index: 0-based index of the merge in ``TrainResult.merges``.
        pair: The two merged tokens as bytes.
        count: How often the pair occurred when it was merged.
        token_id: Id of the resulting token.
        token: Bytes of the resulting token.
        total: How many merges the run aims for (the run may stop earlier).
        elapsed: Seconds since the run started.
    """

    index: int
    pair: tuple[bytes, bytes]
    count: int
    token_id: int
    token: bytes
    total: int
    elapsed: float


@dataclass(frozen=True, slots=True)
class CorpusStats:
    """What the corpus held.

    Attributes:
        files: Number of input files.
        bytes: Corpus size in bytes.
        documents: Non-empty documents (text between special tokens and file ends).
        special_tokens: Occurrences of special tokens.
        pretokens: Pre-token occurrences.
        unique_pretokens: Distinct pre-tokens.
        bad_records: JSON lines and Parquet rows skipped for holding no usable text
            (``skip_bad_records``).
    """

    files: int = 0
    bytes: int = 0
    documents: int = 0
    special_tokens: int = 0
    pretokens: int = 0
    unique_pretokens: int = 0
    bad_records: int = 0


@dataclass(frozen=True)
class TrainResult:
    """The outcome of a training run.

    Ids are laid out as GPT-2 and tiktoken do: 0–255 are the single bytes, then each new token in the order
    the merges created it, then the special tokens.

    Attributes:
        vocab: Token id to bytes.
        merges: The merges in the order they were made.
        merge_counts: How often each merge's pair occurred when it was merged (same order as ``merges``).
        special_tokens: The special tokens, in the order of their ids.
        pattern: The pre-tokenization regex used.
        stop_reason: Why the merge loop stopped.
        stats: Corpus statistics.
        timings: Seconds spent per phase (``Phase.value`` to seconds), plus ``"total"``.
        special_ids: Each special token's id when they are not the last ids (a run that extended a
            tokenizer keeps its ids, e.g. GPT-2's ``<|endoftext|>`` at 50256); None for the usual layout.
        rule: The merge rule of the result (``Tokenizer.rule``): ``"ranks"`` when it extends a rank file,
            whose users encode it with tiktoken's rule.
        ignore_merges: The extended tokenizer's ``ignore_merges`` (Llama 3's files), kept.
        base_merges: How many of ``merges`` are an extended tokenizer's own (their ``merge_counts`` are 0:
            they were not counted); 0 for a run from scratch.
        superword_transition: Of a superword run, the number of merges made before the transition (the
            merges after it may cross the spaces between words); None otherwise.
    """

    vocab: dict[int, bytes]
    merges: list[tuple[bytes, bytes]]
    merge_counts: list[int]
    special_tokens: tuple[str, ...]
    pattern: str
    stop_reason: StopReason
    stats: CorpusStats = field(default_factory=CorpusStats)
    timings: dict[str, float] = field(default_factory=dict)
    special_ids: dict[str, int] | None = None
    rule: Literal["merges", "ranks"] = "merges"
    ignore_merges: bool = False
    base_merges: int = 0
    superword_transition: int | None = None

    @property
    def special_token_ids(self) -> dict[str, int]:
        """Each special token's id (they take the last ids, unless ``special_ids`` says otherwise)."""
        if self.special_ids is not None:
            return dict(self.special_ids)
        first = len(self.vocab) - len(self.special_tokens)
        return {token: first + i for i, token in enumerate(self.special_tokens)}

    def summary(self) -> dict[str, Any]:
        """A JSON-ready account of the run: stop reason, statistics, timings and each merge's count."""
        return {
            "stop_reason": self.stop_reason.value,
            "stats": asdict(self.stats),
            "timings": {k: round(v, 6) for k, v in self.timings.items()},
            "merge_counts": list(self.merge_counts),
        }


@dataclass(frozen=True, slots=True)
class Finished:
    """The run ended (also when it was cancelled); the result is attached."""

    result: TrainResult
    elapsed: float


TrainEvent = PhaseStarted | CountProgress | MergeMade | Finished
"""Any event a training run yields."""
