"""A tokenizer as the tokenizer views hold it, loaded off the GUI thread. Qt-free.

* :class:`LoadedTokenizer`: a tokenizer with where it came from and how it was trained (when known), its
  :class:`~bpe_studio.engine.encoding.analysis.MergeIndex` (built once) and its cuts to the first ``k``
  merges.
* :func:`load_file`, :func:`from_result`: make one from a file or a training result.

How a text is laid out in tokens (special-token modes, display units, the token-count curve) is in
:mod:`bpe_studio.ui.present.token_layout`.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...engine import FormatError, Tokenizer, TrainConfig, TrainResult, detect_format, load
from ...engine.encoding import analysis
from ...engine.encoding.analysis import MergeIndex
from ...engine.encoding.summary import SENTENCEPIECE_STYLE
from ...engine.formats import display_name, display_names, training_record
from ...engine.formats.tiktoken_format import SpecialTokenSpec, add_special_tokens
from ...engine.pretokenize.patterns import SUPERWORD_PATTERN

#: How the views name the engine's file formats.
FORMAT_NAMES = {
    "studio": "BPE Studio",
    "gpt2": "GPT-2",
    "tiktoken": "tiktoken",
    "hf": "Hugging Face",
    "sentencepiece": "SentencePiece",
}


# ----------------------------------------------------------------------------------------------------------
# A loaded tokenizer
# ----------------------------------------------------------------------------------------------------------


@dataclass(eq=False)
class LoadedTokenizer:
    """A tokenizer shown by the views.

    Attributes:
        tokenizer: The tokenizer.
        name: A short name for menus and titles.
        path: The file or folder it was loaded from, if any.
        format: The file's format name (``studio``, ``gpt2``, ``tiktoken``, ``hf``), if loaded from a file.
        result: The training result, for a tokenizer trained in this session.
        training: How it was trained, when known: a studio file's ``training`` object, the engine's
            :func:`~bpe_studio.engine.formats.training_record` (``inputs``, ``vocab_size``,
            ``special_tokens``, ``pattern``, ``min_frequency``, ``max_token_length``, ``stop_reason``,
            ``stats``, ``merge_counts``; files of older versions also have ``timings``).
    """

    tokenizer: Tokenizer
    name: str
    path: Path | None = None
    format: str | None = None
    result: TrainResult | None = None
    training: dict[str, Any] = field(default_factory=dict)
    #: The name shown when it must differ from another open tokenizer's (``a/out`` beside ``b/out``): set by
    #: the window from :func:`listed_names`; empty until then.
    listed_name: str = field(default="", compare=False)
    _index: MergeIndex | None = field(default=None, repr=False)
    _cuts: dict[int, Tokenizer] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def merge_counts(self) -> list[int] | None:
        """Each merge's pair count when it was merged, when known."""
        if self.result is not None:
            return list(self.result.merge_counts)
        counts = self.training.get("merge_counts")
        if isinstance(counts, list) and all(isinstance(c, int) for c in counts):
            return counts
        return None

    @property
    def has_superwords(self) -> bool:
        """Whether it is a superword (SuperBPE) tokenizer, whose tokens may span the spaces between words:
        its pattern is the superword stage's (every format keeps the pattern), or its training says so."""
        return (
            self.tokenizer.pattern == SUPERWORD_PATTERN
            or "superword_transition" in self.training
            or (self.result is not None and self.result.superword_transition is not None)
        )

    @property
    def superwords_after(self) -> int | None:
        """Of a superword tokenizer whose training is known, the vocabulary size where superwords start."""
        value = self.training.get("superword_transition")
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    @property
    def index(self) -> MergeIndex:
        """The merges by token id (built on first use)."""
        with self._lock:
            if self._index is None:
                self._index = MergeIndex(self.tokenizer, self.merge_counts)
            return self._index

    @property
    def shown_name(self) -> str:
        """The name for titles and lists: :attr:`listed_name` when set, else :attr:`name`."""
        return self.listed_name or self.name

    @property
    def source_text(self) -> str:
        """Where the tokenizer came from, for titles and tooltips."""
        if self.path is not None:
            return os.fspath(self.path)
        return "trained in this session" if self.result is not None else "built in memory"

    def summary(self) -> str:
        """One line: tokens, merges, special tokens and pattern (for a SentencePiece-style BPE, that it has
        none, as ``inspect`` says: its ``Tokenizer.pattern`` is a placeholder no encode uses)."""
        tok = self.tokenizer
        if tok.piece_model is not None:
            pattern = SENTENCEPIECE_STYLE
        else:
            pattern = f"{tok.pattern_name or 'custom'} pattern"
        specials = len(tok.special_tokens)
        text = (
            f"{tok.vocab_size:,} tokens · {len(tok.merges):,} merges · {specials} special "
            f"token{'s' if specials != 1 else ''} · {pattern}"
        )
        if self.format is not None:
            text += f" · {FORMAT_NAMES.get(self.format, self.format)} file"
        elif self.result is not None:
            text += " · trained in this session"
        return text

    def cut(self, merges: int) -> Tokenizer:
        """The tokenizer of the first ``merges`` merges (the tokenizer itself for all of them).

        The vocabulary is the single bytes and the tokens those merges make, with their ids, then the
        special tokens numbered right after the largest of those ids. For a tokenizer trained by the engine
        this equals training the same corpus to ``index.vocab_size_at(merges)`` tokens whenever the last
        kept merge made a new token.
        """
        if merges >= self.index.merge_count:
            return self.tokenizer
        merges = max(merges, 0)
        with self._lock:
            found = self._cuts.get(merges)
        if found is not None:
            return found
        cut = analysis.cut_to_merges(self.tokenizer, merges, index=self.index)
        with self._lock:
            if len(self._cuts) >= 4:
                self._cuts.pop(next(iter(self._cuts)))
            self._cuts[merges] = cut
        return cut


def from_result(result: TrainResult, config: TrainConfig | None = None) -> LoadedTokenizer:
    """A tokenizer trained in this session."""
    name = "Trained tokenizer"
    if config is not None and config.inputs:
        first = Path(config.inputs[0]).name
        more = f" +{len(config.inputs) - 1}" if len(config.inputs) > 1 else ""
        name = f"Trained on {first}{more}"
    return LoadedTokenizer(
        Tokenizer.from_result(result),
        name,
        result=result,
        training=training_record(result, config),
    )


def load_file(
    path: Path, *, pattern: str | None = None, special_tokens: Sequence[SpecialTokenSpec] = ()
) -> LoadedTokenizer:
    """Load a tokenizer file or folder (any format the engine reads), with a studio file's training record.

    Args:
        path: The file or folder.
        pattern: The pattern of a file that states none (a bare ``.tiktoken``), as the user chose it.
        special_tokens: Special tokens to add to a ``.tiktoken`` file's, as the user listed them (see
            :func:`~bpe_studio.engine.formats.tiktoken_format.add_special_tokens`).

    Raises:
        FormatError: The file is malformed or not a tokenizer (the engine's message);
            ``PatternRequiredError`` when it needs ``pattern``; a special token's id is taken.
        OSError: The file cannot be read.
    """
    path = Path(path)
    kind = detect_format(path)
    tokenizer = load(path, pattern=pattern)
    try:
        tokenizer = add_special_tokens(tokenizer, special_tokens)
    except ValueError as exc:
        raise FormatError(f"{path}: special tokens: {exc}") from None
    training: dict[str, Any] = {}
    if kind == "studio" and path.is_file():
        try:
            with open(path, encoding="utf-8") as handle:
                document = json.load(handle)
            found = document.get("training") if isinstance(document, dict) else None
            if isinstance(found, dict):
                training = found
        except (OSError, ValueError):  # pragma: no cover - load() above read the same file
            training = {}
    name = display_name(path)  # the folder's name for a tokenizer.json, as the CLI shows it
    return LoadedTokenizer(tokenizer, name, path=path, format=kind, training=training)


def listed_names(tokenizers: Sequence[LoadedTokenizer]) -> list[str]:
    """Each tokenizer's name in a list or legend that shows them together, all different: those loaded from
    files as :func:`~bpe_studio.engine.formats.display_names` tells them apart (``a/out`` and ``b/out``),
    and a name still repeated (two runs of this session) numbered from its second time, ``name (2)``.

    Example:
        >>> listed_names([LoadedTokenizer(small, "Trained tokenizer")] * 2)
        ['Trained tokenizer', 'Trained tokenizer (2)']
    """
    names = [t.name for t in tokenizers]
    with_paths = [i for i, t in enumerate(tokenizers) if t.path is not None]
    for i, name in zip(
        with_paths, display_names([tokenizers[i].path or "" for i in with_paths]), strict=True
    ):
        names[i] = name
    seen: dict[str, int] = {}
    listed: list[str] = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        listed.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
    return listed


__all__ = ["FORMAT_NAMES", "LoadedTokenizer", "from_result", "listed_names", "load_file"]
