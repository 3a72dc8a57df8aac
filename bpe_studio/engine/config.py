"""Training configuration: one frozen, validated dataclass and the pre-tokenization pattern presets.

Example:
    >>> cfg = TrainConfig(inputs=("corpus.txt",), vocab_size=1000, special_tokens=("<|endoftext|>",))
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, cast

import regex

#: Pre-tokenization patterns by preset name.
#:
#: ``gpt2`` is the pattern of the GPT-2 paper's code as used by the Stanford CS336 handout;
#: ``cl100k`` and ``o200k`` are the patterns of tiktoken's encodings of the same names.
PATTERNS: dict[str, str] = {
    "gpt2": r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
    "cl100k": (
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
        r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
    ),
    "o200k": "|".join(
        [
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""\p{N}{1,3}""",
            r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        ]
    ),
}

# ASCII twins of the presets for the standard library's ``re``: on ASCII text they find exactly the same
# pre-tokens (tests/engine/test_patterns.py checks it), and ``re`` scans ASCII with small classes about
# 1.6x faster than ``regex`` with Unicode properties. In ASCII, \p{L} is [A-Za-z], \p{Lu} [A-Z], \p{Ll}
# [a-z], \p{N} [0-9], \p{Lt}, \p{Lm}, \p{Lo} and \p{M} are empty, and \s is [\t\n\x0b\x0c\r ].
_S = r"\t\n\x0b\x0c\r "
ASCII_PATTERNS: dict[str, str] = {
    "gpt2": rf"""'(?:[sdmt]|ll|ve|re)| ?[A-Za-z]+| ?[0-9]+| ?[^{_S}A-Za-z0-9]+|[{_S}]+(?![^{_S}])|[{_S}]+""",
    "cl100k": (
        rf"""'(?i:[sdmt]|ll|ve|re)|[^\r\nA-Za-z0-9]?+[A-Za-z]++|[0-9]{{1,3}}+| ?[^{_S}A-Za-z0-9]++[\r\n]*+"""
        rf"""|[{_S}]++$|[{_S}]*[\r\n]|[{_S}]+(?![^{_S}])|[{_S}]"""
    ),
    "o200k": "|".join(
        [
            r"""[^\r\nA-Za-z0-9]?[A-Z]*[a-z]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\nA-Za-z0-9]?[A-Z]+[a-z]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[0-9]{1,3}""",
            rf""" ?[^{_S}A-Za-z0-9]+[\r\n/]*""",
            rf"""[{_S}]*[\r\n]+""",
            rf"""[{_S}]+(?![^{_S}])""",
            rf"""[{_S}]+""",
        ]
    ),
}

#: The most code points a token id can use: ids are stored as code points of ``str`` objects.
MAX_VOCAB_SIZE = 0x110000

# A short text with letters, digits, punctuation, whitespace runs and newlines: a pattern that matches the
# empty string anywhere in it would make pre-tokenization loop without progress, so it is rejected.
_PROBE_TEXT = "Hello, world! It's 2024 -- naïve café  \n\n\t x_y 日本語 😀 '"


class InvalidUtf8Policy(StrEnum):
    """What to do with bytes that are not valid UTF-8."""

    ERROR = "error"
    """Stop with an error naming the file and the byte offset (the default)."""
    REPLACE = "replace"
    """Decode them as U+FFFD, as ``bytes.decode(errors="replace")`` does."""


def resolve_pattern(pattern: str) -> str:
    """Return the regex of a preset name, or ``pattern`` itself when it is not a preset.

    Example:
        >>> resolve_pattern("gpt2").startswith("'(?:[sdmt]")
        True
    """
    return PATTERNS.get(pattern, pattern)


def preset_name(pattern: str) -> str | None:
    """Return the preset name of a pattern given by name or by its regex, else ``None``.

    Example:
        >>> preset_name(PATTERNS["gpt2"])
        'gpt2'
    """
    if pattern in PATTERNS:
        return pattern
    for name, regex_text in PATTERNS.items():
        if regex_text == pattern:
            return name
    return None


def compile_pattern(pattern: str) -> Any:
    """Compile a preset name or regex, raising ``ValueError`` that says what is wrong and how to fix it.

    Example:
        >>> compile_pattern("gpt2").findall("Hello world")
        ['Hello', ' world']
    """
    text = resolve_pattern(pattern)
    try:
        compiled = regex.compile(text)
    except (regex.error, TypeError, ValueError) as exc:
        raise ValueError(
            f"pattern: {text!r} does not compile ({exc}); give a preset name "
            f"({', '.join(PATTERNS)}) or a valid regex for the `regex` module"
        ) from None
    if compiled.fullmatch("") is not None or any(
        m.start() == m.end() for m in compiled.finditer(_PROBE_TEXT)
    ):
        raise ValueError(
            f"pattern: {text!r} can match the empty string; every alternative must consume at least one "
            "character (use + instead of *, for example)"
        )
    if compiled.search(_PROBE_TEXT) is None:
        raise ValueError(
            f"pattern: {text!r} matches nothing in a sample of words, digits, spaces and punctuation, so "
            f"there would be nothing to train on; give a preset ({', '.join(PATTERNS)}) or a regex that "
            r"matches such text, e.g. \w+|\s+|[^\w\s]+"
        )
    return compiled


def _as_paths(inputs: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> tuple[Path, ...]:
    if isinstance(inputs, (str, os.PathLike)):
        return (Path(inputs),)
    return tuple(Path(p) for p in inputs)


@dataclass(frozen=True)
class TrainConfig:
    """Everything that decides a training run; validated on construction.

    Args:
        inputs: One or more corpus files. Each file ends a document, as a special token does.
        vocab_size: Size of the final vocabulary, counting the 256 single bytes and the special tokens.
        special_tokens: Strings that split documents and are never merged; they get the last ids.
        pattern: A preset name (``gpt2``, ``cl100k``, ``o200k``) or a regex for the ``regex`` module.
        workers: Worker processes for pre-tokenization; ``None`` means one per CPU core.
        min_frequency: Stop when the most frequent pair occurs fewer times than this.
        max_token_length: If set, never create a token longer than this many bytes.
        chunk_size: Target size in bytes of the pieces a corpus is read and counted in.
        invalid_utf8: What to do with bytes that are not valid UTF-8.
        urls: Corpus files given as fsspec URLs (``s3://...``, ``gs://...``, ``file://...``); read by byte
            ranges through fsspec (``pip install "bpe-studio[distributed]"`` and the file system's package,
            e.g. ``s3fs``). URL strings given in ``inputs`` are moved here. Without ``cluster`` they are
            counted in this process.
        cluster: Count on a Dask cluster: ``"local:N"`` starts a ``LocalCluster`` of N worker processes on
            this machine, ``"tcp://HOST:PORT"`` uses a running scheduler (its workers must see local inputs
            at the same paths, or read URLs). ``workers`` is then not used. Needs
            ``pip install "bpe-studio[distributed]"``.
        counts_in: Train from a counts file (written with ``counts_out``) instead of reading the corpus; its
            pattern, special tokens and invalid-UTF-8 policy must be this run's, and when ``inputs`` are
            also given they must be the corpus it was counted from, unchanged. ``inputs`` may be empty.
        counts_out: Write the counted pre-token table to this file, to train again with ``counts_in``.
        checkpoint: Write a checkpoint (the counts and the merges so far) to this file every
            ``checkpoint_every`` merges and when the merge loop stops.
        checkpoint_every: Merges between two checkpoints.
        resume: Continue from a checkpoint: its merges are replayed onto its counts, then training goes on
            (to a larger ``vocab_size``, or after a crash); the result equals an uninterrupted run. Its
            pattern, special tokens, invalid-UTF-8 policy and ``max_token_length`` must be this run's;
            ``inputs`` may be empty (when given, they must be the checkpoint's corpus, unchanged).

    Example:
        >>> TrainConfig(inputs=["a.txt"], vocab_size=100)  # doctest: +SKIP
        Traceback (most recent call last):
        ValueError: vocab_size: 100 is too small; it must be at least 256 (the single bytes) ...
    """

    inputs: tuple[Path, ...]
    vocab_size: int
    special_tokens: tuple[str, ...] = ()
    pattern: str = "gpt2"
    workers: int | None = None
    min_frequency: int = 1
    max_token_length: int | None = None
    chunk_size: int = 4 * 1024 * 1024
    invalid_utf8: InvalidUtf8Policy = InvalidUtf8Policy.ERROR
    urls: tuple[str, ...] = ()
    cluster: str | None = None
    counts_in: Path | None = None
    counts_out: Path | None = None
    checkpoint: Path | None = None
    checkpoint_every: int = 1000
    resume: Path | None = None
    # Derived in __post_init__: the resolved regex text (preset names are expanded).
    pattern_regex: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Normalise convenient argument types first; the dataclass is frozen, hence object.__setattr__.
        set_ = object.__setattr__
        from .remote import is_url  # here: remote imports this module

        given: Sequence[str | os.PathLike[str]] = (
            [self.inputs] if isinstance(self.inputs, (str, os.PathLike)) else list(self.inputs)
        )
        urls = [self.urls] if isinstance(cast(object, self.urls), str) else list(self.urls)
        set_(self, "inputs", _as_paths([p for p in given if not is_url(p)]))
        set_(self, "urls", tuple(urls) + tuple(str(p) for p in given if is_url(p)))
        for name in ("counts_in", "counts_out", "checkpoint", "resume"):
            value = getattr(self, name)
            if isinstance(value, (str, os.PathLike)):
                set_(self, name, Path(value))
        # Fields are typed as stored; at run time any sequence (or one path) is accepted and normalised.
        if isinstance(cast(object, self.special_tokens), str):
            raise ValueError(
                "special_tokens: give a sequence of strings, e.g. ('<|endoftext|>',), not a single string"
            )
        set_(self, "special_tokens", tuple(self.special_tokens))
        if isinstance(self.invalid_utf8, str):
            try:
                set_(self, "invalid_utf8", InvalidUtf8Policy(self.invalid_utf8))
            except ValueError:
                raise ValueError(
                    f"invalid_utf8: {self.invalid_utf8!r} is not a policy; use 'error' or 'replace'"
                ) from None
        self._validate()
        set_(self, "pattern_regex", resolve_pattern(self.pattern))

    def _validate(self) -> None:
        if not self.inputs and not self.urls and self.counts_in is None and self.resume is None:
            raise ValueError("inputs: no corpus file given; pass at least one path")
        for path in self.inputs:
            if not path.exists():
                raise ValueError(f"inputs: {path} does not exist; check the path")
            if not path.is_file():
                raise ValueError(f"inputs: {path} is not a regular file; pass text files, not folders")
            if not os.access(path, os.R_OK):
                raise ValueError(f"inputs: {path} is not readable; check its permissions")
        remote_bytes = self._validate_urls()
        if (self.inputs or self.urls) and sum(p.stat().st_size for p in self.inputs) + remote_bytes == 0:
            raise ValueError("inputs: the corpus is empty; give at least one non-empty file")
        for token in self.special_tokens:
            if not isinstance(token, str):
                raise ValueError(f"special_tokens: {token!r} is not a string; give special tokens as str")
            if token == "":
                raise ValueError("special_tokens: the empty string cannot be a special token; remove it")
        seen: set[str] = set()
        for token in self.special_tokens:
            if token in seen:
                raise ValueError(f"special_tokens: {token!r} is listed twice; list each special token once")
            seen.add(token)
        if not isinstance(self.vocab_size, int) or isinstance(self.vocab_size, bool):
            raise ValueError(f"vocab_size: {self.vocab_size!r} is not an integer")
        minimum = 256 + len(self.special_tokens)
        if self.vocab_size < minimum:
            raise ValueError(
                f"vocab_size: {self.vocab_size} is too small; it must be at least 256 (the single bytes) "
                f"+ {len(self.special_tokens)} (the special tokens) = {minimum}"
            )
        if self.vocab_size > MAX_VOCAB_SIZE:
            raise ValueError(
                f"vocab_size: {self.vocab_size} is too large; the most supported is {MAX_VOCAB_SIZE}"
            )
        if not isinstance(self.pattern, str) or not self.pattern:
            raise ValueError(f"pattern: give a preset name ({', '.join(PATTERNS)}) or a regex string")
        compile_pattern(self.pattern)
        if self.workers is not None and (not isinstance(self.workers, int) or self.workers < 1):
            raise ValueError(f"workers: {self.workers!r} must be a positive integer, or None for all cores")
        if not isinstance(self.min_frequency, int) or self.min_frequency < 1:
            raise ValueError(f"min_frequency: {self.min_frequency!r} must be an integer of at least 1")
        if self.max_token_length is not None and (
            not isinstance(self.max_token_length, int) or self.max_token_length < 2
        ):
            raise ValueError(
                f"max_token_length: {self.max_token_length!r} must be None or an integer of at least 2 bytes"
            )
        if not isinstance(self.chunk_size, int) or self.chunk_size < 1:
            raise ValueError(f"chunk_size: {self.chunk_size!r} must be a positive number of bytes")
        self._validate_cluster()
        self._validate_reuse()

    def _validate_urls(self) -> int:
        """Check the URL inputs and return their total size."""
        if not self.urls:
            return 0
        from .remote import check_url, is_url

        total = 0
        for url in self.urls:
            if not is_url(url):
                raise ValueError(f"urls: {url!r} is not a URL; give scheme://... (local files go in inputs)")
            try:
                total += check_url(url)
            except ValueError as exc:
                raise ValueError(f"inputs: {exc}") from None
        return total

    def _validate_cluster(self) -> None:
        if self.cluster is None:
            return
        from .distributed import dask_missing, parse_cluster

        try:
            parse_cluster(self.cluster)
        except ValueError as exc:
            raise ValueError(f"cluster: {exc}") from None
        missing = dask_missing()
        if missing is not None:
            raise ValueError(f"cluster: {missing}")

    def _validate_reuse(self) -> None:
        """Check the counts, checkpoint and resume options (file headers only; contents when used)."""
        if not isinstance(self.checkpoint_every, int) or self.checkpoint_every < 1:
            raise ValueError(
                f"checkpoint_every: {self.checkpoint_every!r} must be a positive number of merges"
            )
        for name in ("counts_out", "checkpoint"):
            target: Path | None = getattr(self, name)
            if target is None:
                continue
            if target.is_dir():
                raise ValueError(f"{name}: {target} is a folder; give a file name")
            if not target.parent.is_dir():
                raise ValueError(f"{name}: the folder {target.parent} does not exist; create it first")
        if self.counts_in is not None and self.resume is not None:
            raise ValueError(
                "resume: a checkpoint holds its own counts; give either counts_in or resume, not both"
            )
        source = self.resume if self.resume is not None else self.counts_in
        if source is None:
            return
        from .checkpoint import CountsFileError, corpus_identity, mismatch, read_header

        field_name = "resume" if self.resume is not None else "counts_in"
        try:
            header = read_header(source)
        except CountsFileError as exc:
            raise ValueError(f"{field_name}: {exc}") from None
        if self.resume is not None:
            if header.kind != "checkpoint":
                raise ValueError(
                    f"resume: {source} is a counts file, not a checkpoint; train from it with counts_in "
                    "(CLI: --counts-in)"
                )
            then = header.training.get("max_token_length")
            if then != self.max_token_length:
                raise ValueError(
                    f"resume: {source} was trained with max_token_length={then} and this run asks for "
                    f"{self.max_token_length}; the merges already made depend on it, so give the same value"
                )
        try:
            corpus = corpus_identity([*self.inputs, *self.urls]) if self.inputs or self.urls else None
        except OSError as exc:
            raise ValueError(f"inputs: cannot read a corpus file's details ({exc})") from None
        problem = mismatch(
            header,
            pattern=resolve_pattern(self.pattern),
            special_tokens=self.special_tokens,
            invalid_utf8=self.invalid_utf8.value,
            corpus=corpus,
        )
        if problem is not None:
            raise ValueError(
                f"{field_name}: {source} cannot be used for this run: {problem}. Train with the settings it "
                "was made with, or count the corpus again"
            )

    @property
    def sources(self) -> tuple[str, ...]:
        """Every corpus file as a string: the local ``inputs``, then the ``urls``."""
        return tuple(str(p) for p in self.inputs) + self.urls

    def describe(self) -> dict[str, Any]:
        """The settings that shaped a run, ready for JSON (studio files record them).

        Example:
            >>> TrainConfig(inputs=["a.txt"], vocab_size=300).describe()["vocab_size"]  # doctest: +SKIP
            300
        """
        described: dict[str, Any] = {
            "inputs": list(self.sources),
            "vocab_size": self.vocab_size,
            "special_tokens": list(self.special_tokens),
            "pattern": self.pattern,
            "min_frequency": self.min_frequency,
            "max_token_length": self.max_token_length,
        }
        if self.counts_in is not None:
            described["counts_in"] = str(self.counts_in)
        if self.resume is not None:
            described["resumed_from"] = str(self.resume)
        return described

    @property
    def effective_workers(self) -> int:
        """The number of worker processes to use: ``workers`` or one per CPU core."""
        return self.workers if self.workers is not None else max(1, os.cpu_count() or 1)

    def replace(self, **changes: Any) -> TrainConfig:
        """Return a copy with some fields changed (and validated again).

        Example:
            >>> cfg.replace(vocab_size=2000)  # doctest: +SKIP
        """
        values = {name: getattr(self, name) for name in self.__dataclass_fields__ if name != "pattern_regex"}
        values.update(changes)
        return TrainConfig(**values)
