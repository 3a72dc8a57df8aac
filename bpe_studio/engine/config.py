"""Training configuration: one frozen, validated dataclass (the pattern presets are in
:mod:`bpe_studio.engine.pretokenize.patterns`).

Example:
    >>> cfg = TrainConfig(inputs=("corpus.txt",), vocab_size=1000, special_tokens=("<|endoftext|>",))
"""

from __future__ import annotations

import math
import operator
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from enum import StrEnum
from pathlib import Path
from typing import Any, cast

from .corpus.remote import is_url
from .limits import MAX_VOCAB_SIZE
from .pretokenize.patterns import PATTERNS, compile_pattern, resolve_pattern, scanner_name


def env_seconds(name: str, default: float, *, example: int) -> float:
    """Seconds from the environment variable ``name`` (a positive number), or ``default`` when it is unset
    or empty: the deadlines a user may lengthen (a cluster's handshake, a download).

    Raises:
        ValueError: The variable holds something else; the message names it and gives ``example``.

    Example:
        >>> env_seconds("BPE_STUDIO_NO_SUCH_TIMEOUT", 10.0, example=30)
        10.0
    """
    given = os.environ.get(name)
    if given is None or not given.strip():
        return default
    try:
        seconds = float(given)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds <= 0:
        raise ValueError(f"{name}={given!r} is not a positive number of seconds; set it to e.g. {example}")
    return seconds


class InvalidUtf8Policy(StrEnum):
    """What to do with bytes that are not valid UTF-8."""

    ERROR = "error"
    """Stop with an error naming the file and the byte offset (the default)."""
    REPLACE = "replace"
    """Decode them as U+FFFD, as ``bytes.decode(errors="replace")`` does."""


def _integer(name: str, value: object, *, optional: bool = False) -> int | None:
    """``value`` as an ``int``; ``True``, ``2.0`` or ``"2"`` are refused with a message naming the field.

    Example:
        >>> _integer("workers", 4), _integer("max_token_length", None, optional=True)
        (4, None)
    """
    if value is None and optional:
        return None
    or_none = " or None" if optional else ""
    if isinstance(value, bool):
        # bool is an int subclass: without this, True would silently mean 1.
        raise ValueError(f"{name}: {value!r} is a bool, not a number; give an integer{or_none}")
    try:
        return operator.index(cast(Any, value))  # int, and integer types such as numpy.int64
    except TypeError:
        raise ValueError(f"{name}: {value!r} is not an integer; give a whole number{or_none}") from None


def _path(name: str, value: object) -> Path | None:
    """``value`` as a ``Path`` (``None`` stays ``None``); anything but ``str``/``os.PathLike`` is refused."""
    if value is None:
        return None
    text = os.fspath(value) if isinstance(value, (str, os.PathLike)) else None
    if not isinstance(text, str):
        raise ValueError(f"{name}: {value!r} is not a path; give a str or a pathlib.Path")
    if not text:
        raise ValueError(f"{name}: the empty string is not a path; give a file name")
    return Path(text)


def _items(name: str, value: object, what: str, order: str) -> list[object]:
    """The items of a list or tuple field (any ordered iterable is taken); sets and mappings are refused.

    Example:
        >>> _items("special_tokens", ("<s>",), "strings", "the order decides the ids")
        ['<s>']
    """
    if isinstance(value, (set, frozenset)):
        # A set's order changes with PYTHONHASHSEED: ids (or the recorded order) would change run to run.
        raise ValueError(
            f"{name}: {value!r} is a set, whose order changes from run to run ({order}); pass a list or tuple"
        )
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise ValueError(f"{name}: {value!r} is not a list or tuple; pass a list or tuple of {what}")
    return list(value)


_FILE_ORDER = "the order is the order the files are read in and recorded"


@dataclass(frozen=True)
class TrainConfig:
    """Everything that decides a training run: a pure value, checked for types and ranges on construction.

    Construction reads no file and touches no network: what needs the file system (do the inputs exist,
    do a counts file and a checkpoint fit this run, is Dask installed, may the outputs be written) is
    checked by :func:`bpe_studio.engine.training.preflight.preflight`, which
    :func:`~bpe_studio.engine.iter_train` calls first. So ``replace()`` is cheap and a config can be built
    for files that do not exist yet.

    Args:
        inputs: One or more corpus files. Each file ends a document, as a special token does.
        vocab_size: Size of the final vocabulary, counting the 256 single bytes and the special tokens.
        special_tokens: Strings that split documents and are never merged; they get the last ids, in the
            order given (a list or tuple: a set has no order, so it is refused).
        pattern: A preset name (``gpt2``, ``cl100k``, ``o200k``) or a regex for the ``regex`` module.
        workers: Worker processes for pre-tokenization; ``None`` means one per CPU core.
        min_frequency: Stop when the most frequent pair occurs fewer times than this.
        max_token_length: If set, never create a token longer than this many bytes.
        chunk_size: Target size in bytes of the pieces a corpus is read and counted in (at most: a corpus of
            few chunks is cut smaller, so that every worker gets several).
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
        text_field: For JSON Lines and Parquet inputs, the field (column) holding each record's text; a
            dotted path like ``"meta.body"`` reaches into nested objects (structs).
        skip_bad_records: Skip (and count, in ``stats.bad_records``) JSON lines and Parquet rows without a
            usable text, instead of stopping with an error that names the record.
        extend: Keep every id, merge and special token of this tokenizer (``extend_base(PATH_OR_NAME)``,
            :func:`bpe_studio.engine.extend_base`) and learn more merges from the corpus (see
            :mod:`bpe_studio.engine.training.extend`). The run's ``pattern`` and
            ``special_tokens`` are the tokenizer's: leave them at their defaults or give the same.
            ``vocab_size`` counts the whole vocabulary, the tokenizer's included.
        superword_transition: Train SuperBPE superwords: ordinary BPE up to this vocabulary size, then
            merges that cross the spaces between words up to ``vocab_size`` (the stage-2 pre-tokenization is
            :data:`bpe_studio.engine.training.extend.SUPERWORD_PATTERN`).

    Example:
        >>> TrainConfig(inputs=["a.txt"], vocab_size=100)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ValueError: vocab_size: 100 is too small; it must be at least 256 (the single bytes) + 0 ... = 256
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
    text_field: str = "text"
    skip_bad_records: bool = False
    # An ExtendBase (training/extend.py); typed Any: file formats import this module and must not import
    # training, not even for a type.
    extend: Any = None
    superword_transition: int | None = None
    # Derived in __post_init__: the resolved regex text (preset names are expanded).
    pattern_regex: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Types first, for every field, so a wrong type is named here and not found after counting. The
        # fields are typed as stored; at run time convenient forms are accepted and normalised (one path for
        # a list of paths, str for an enum), hence object.__setattr__ on the frozen dataclass.
        set_ = object.__setattr__
        values: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self) if f.init}
        self._check_and_normalise(values)
        for name, value in values.items():
            set_(self, name, value)
        self._validate()
        set_(self, "pattern_regex", resolve_pattern(self.pattern))

    @staticmethod
    def _check_and_normalise(values: dict[str, Any]) -> None:
        """Check the type of every field and convert it to its stored form, in place."""
        given = values["inputs"]
        paths: list[object]
        if isinstance(given, (str, os.PathLike)):
            paths = [given]
        else:
            paths = _items("inputs", given, "paths", _FILE_ORDER)
        for item in paths:
            _path("inputs", item)
        urls = values["urls"]
        url_list = [urls] if isinstance(urls, str) else _items("urls", urls, "URL strings", _FILE_ORDER)
        for url in url_list:
            if not isinstance(url, str) or not is_url(url):
                raise ValueError(f"urls: {url!r} is not a URL; give scheme://... (local files go in inputs)")
        # A URL stays a string (a Path would fold its "//"); it is read through fsspec.
        values["inputs"] = tuple(Path(cast(str, p)) for p in paths if not is_url(cast(str, p)))
        given_urls = tuple(str(p) for p in paths if is_url(cast(str, p)))
        values["urls"] = tuple(cast(list[str], url_list)) + given_urls
        values["vocab_size"] = _integer("vocab_size", values["vocab_size"])
        specials = values["special_tokens"]
        if isinstance(specials, str):
            raise ValueError(
                f"special_tokens: {specials!r} is a single string, which would make one special token per "
                f"character; pass a list, e.g. [{specials!r}]"
            )
        tokens = _items(
            "special_tokens", specials, "strings, e.g. ('<|endoftext|>',)", "the order decides the ids"
        )
        for token in tokens:
            if not isinstance(token, str):
                raise ValueError(f"special_tokens: {token!r} is not a string; give special tokens as str")
        values["special_tokens"] = tuple(tokens)
        if not isinstance(values["pattern"], str) or not values["pattern"]:
            raise ValueError(f"pattern: give a preset name ({', '.join(PATTERNS)}) or a regex string")
        for name in ("min_frequency", "chunk_size", "checkpoint_every"):
            values[name] = _integer(name, values[name])
        for name in ("workers", "max_token_length", "superword_transition"):
            values[name] = _integer(name, values[name], optional=True)
        policy = values["invalid_utf8"]
        if not isinstance(policy, str):  # InvalidUtf8Policy is a str too
            raise ValueError(f"invalid_utf8: {policy!r} is not a policy; use 'error' or 'replace'")
        try:
            values["invalid_utf8"] = InvalidUtf8Policy(policy)
        except ValueError:
            raise ValueError(f"invalid_utf8: {policy!r} is not a policy; use 'error' or 'replace'") from None
        cluster = values["cluster"]
        if cluster is not None and not isinstance(cluster, str):
            raise ValueError(f"cluster: {cluster!r} is not a string; give 'local:N' or 'tcp://HOST:PORT'")
        for name in ("counts_in", "counts_out", "checkpoint", "resume"):
            values[name] = _path(name, values[name])
        extend = values["extend"]
        if extend is not None and not (hasattr(extend, "fingerprint") and hasattr(extend, "encode_words")):
            raise ValueError(
                f"extend: {extend!r} is not an opened tokenizer; give extend_base(PATH_OR_NAME), e.g. "
                "bpe_studio.engine.extend_base('gpt2')"
            )

    def _validate(self) -> None:
        """Check the ranges and combinations of the (type-checked) fields; no file is read."""
        if not self.inputs and not self.urls and self.counts_in is None and self.resume is None:
            raise ValueError("inputs: no corpus file given; pass at least one path")
        for token in self.special_tokens:
            if token == "":
                raise ValueError("special_tokens: the empty string cannot be a special token; remove it")
        seen: set[str] = set()
        for token in self.special_tokens:
            if token in seen:
                raise ValueError(f"special_tokens: {token!r} is listed twice; list each special token once")
            seen.add(token)
        minimum = 256 + len(self.special_tokens)
        base_size = len(self.extend.vocab) if self.extend is not None else None
        if base_size is not None and self.vocab_size <= base_size:
            # Said in the extend run's own terms: "at least 256 + 0" would mislead by 50,000 tokens.
            raise ValueError(
                f"vocab_size: {self.vocab_size} is not larger than the {base_size} tokens of the tokenizer "
                f"to extend; give the size of the whole vocabulary, e.g. {base_size + 1000} for 1,000 new "
                "tokens"
            )
        if self.vocab_size < minimum:
            raise ValueError(
                f"vocab_size: {self.vocab_size} is too small; it must be at least 256 (the single bytes) "
                f"+ {len(self.special_tokens)} (the special tokens) = {minimum}"
            )
        if self.vocab_size > MAX_VOCAB_SIZE:
            raise ValueError(
                f"vocab_size: {self.vocab_size} is too large; the most supported is {MAX_VOCAB_SIZE}"
            )
        if scanner_name(self.pattern) is None:
            # A native scanner's pattern (a preset's, a model's) is a constant known to be valid: compiling
            # it imported `regex` (7-10 ms of every CLI run, issue 22), which an ASCII corpus never needs.
            compile_pattern(self.pattern)
        if self.workers is not None and self.workers < 1:
            raise ValueError(f"workers: {self.workers!r} must be a positive integer, or None for all cores")
        if self.min_frequency < 1:
            raise ValueError(f"min_frequency: {self.min_frequency!r} must be an integer of at least 1")
        if self.max_token_length is not None and self.max_token_length < 2:
            raise ValueError(
                f"max_token_length: {self.max_token_length!r} must be None or an integer of at least 2 bytes"
            )
        if self.chunk_size < 1:
            raise ValueError(f"chunk_size: {self.chunk_size!r} must be a positive number of bytes")
        if self.checkpoint_every < 1:
            raise ValueError(
                f"checkpoint_every: {self.checkpoint_every!r} must be a positive number of merges"
            )
        if not isinstance(self.text_field, str) or not self.text_field:
            raise ValueError(f"text_field: {self.text_field!r} must be a field name, e.g. 'text'")
        if not isinstance(self.skip_bad_records, bool):
            raise ValueError(f"skip_bad_records: {self.skip_bad_records!r} must be True or False")
        if self.counts_in is not None and self.resume is not None:
            raise ValueError(
                "resume: a checkpoint holds its own counts; give either counts_in or resume, not both"
            )
        if self.superword_transition is not None:
            if not minimum <= self.superword_transition < self.vocab_size:
                raise ValueError(
                    f"superword_transition: {self.superword_transition} must be at least {minimum} and "
                    f"below vocab_size ({self.vocab_size}); it is the vocabulary size where superwords start"
                )
            if (
                self.extend is not None
                or self.counts_in is not None
                or self.resume is not None
                or (self.checkpoint is not None)
            ):
                raise ValueError(
                    "superword_transition: a superword run counts its corpus twice (words, then superwords); "
                    "it cannot start from a tokenizer, a counts file or a checkpoint, nor write one: drop "
                    "those options"
                )

    @property
    def sources(self) -> tuple[str, ...]:
        """Every corpus file as a string: the local ``inputs``, then the ``urls``."""
        return tuple(str(p) for p in self.inputs) + self.urls

    def describe(self) -> dict[str, Any]:
        """The settings that shaped a run, ready for JSON (studio files record them).

        Example:
            >>> TrainConfig(inputs=["a.txt"], vocab_size=300).describe()["vocab_size"]
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
        if self.extend is not None:
            described["extend"] = self.extend.source
        if self.superword_transition is not None:
            described["superword_transition"] = self.superword_transition
        return described

    @property
    def effective_workers(self) -> int:
        """The number of worker processes to use: ``workers`` or one per CPU core."""
        return self.workers if self.workers is not None else max(1, os.cpu_count() or 1)

    def replace(self, **changes: Any) -> TrainConfig:
        """Return a copy with some fields changed (types and ranges checked again; no file is read).

        Example:
            >>> TrainConfig(inputs=["a.txt"], vocab_size=1000).replace(vocab_size=2000).vocab_size
            2000
        """
        values = {name: getattr(self, name) for name in self.__dataclass_fields__ if name != "pattern_regex"}
        values.update(changes)
        return TrainConfig(**values)
