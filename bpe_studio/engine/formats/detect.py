"""Loading any supported tokenizer file (the format is detected) and saving to a named format.

Formats: ``studio`` (our versioned JSON), ``gpt2`` (a folder with ``vocab.json`` + ``merges.txt``),
``tiktoken`` (``.tiktoken`` plus a sidecar) and ``hf`` (Hugging Face ``tokenizer.json``); ``tekken``
(Mistral's ``tekken.json``) is read, not written.

Example:
    >>> tok = load(".")  # vocab.json + merges.txt: GPT-2's files
    >>> save(tok, "out/tokenizer.json", format="hf")
    PosixPath('out/tokenizer.json')
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Mapping
from pathlib import Path

# (Each format's module is imported where a file of that format is read or written: opening a .model needs
# neither JSON nor the writers, 10-15 ms of a fresh process's 35.)
from .base import (
    HF_FILE,
    MERGES_FILE,
    SIDECAR_FILE,
    SIDECAR_FORMAT,
    STUDIO_FORMAT,
    TEKKEN_FILE,
    TIKTOKEN_SUFFIX,
    VOCAB_FILE,
    FormatError,
    FormatWarning,
)
from .sentencepiece import OPENS, is_sentencepiece_model

TYPE_CHECKING = False  # (typing is for type checkers only: see bpe_studio/__init__.py)
if TYPE_CHECKING:
    from typing import Any, Literal, TypeAlias

    from ..encoding.tokenizer import Tokenizer
    from .tiktoken_format import SpecialTokenSpec

FormatName: TypeAlias = 'Literal["studio", "gpt2", "tiktoken", "hf", "sentencepiece", "tekken"]'
"""A tokenizer file format's name (``sentencepiece``, a ``.model`` file, and ``tekken``, Mistral's JSON, are
read, not written)."""

#: The formats :func:`save` writes and :func:`load` reads (:func:`load` reads ``tekken`` too).
FORMATS: tuple[FormatName, ...] = ("studio", "gpt2", "tiktoken", "hf")

#: The file a format is written to when :func:`save` is given a folder.
DEFAULT_FILE_NAMES: dict[str, str] = {
    "studio": "tokenizer.json",
    "hf": HF_FILE,
    "tiktoken": "tokenizer.tiktoken",
}

#: A SentencePiece model's usual file name (a folder with no tokenizer.json is read through it).
SENTENCEPIECE_FILE = "tokenizer.model"

# RWKV's vocabulary: "ID TOKEN LENGTH" a line, the token a Python str or bytes literal.
_RWKV_LINE = re.compile(rb"""^\d+ b?(?:'.*'|".*") \d+\s*$""")

# The files a folder is opened by, in this order (after GPT-2's pair).
_FOLDER_FILES = (HF_FILE, DEFAULT_FILE_NAMES["tiktoken"], TEKKEN_FILE, SENTENCEPIECE_FILE)

_TIKTOKEN_LINE = re.compile(rb"^(?:[A-Za-z0-9+/]+={0,2}|={1,2}) \d+\s*$")  # "= RANK": the empty token


def _named(path: str | os.PathLike[str]) -> Path:
    """``path``, or the files of a tokenizer name (``gpt2``, ``cl100k_base``...) or of a Hugging Face model id
    (``Qwen/Qwen2.5-7B``, from the local cache) that is not an existing path.

    Raises:
        NamedTokenizerMissingError: An OpenAI encoding's name whose file is not in tiktoken's cache.
        HubModelMissingError: A model id whose tokenizer is not in the Hugging Face cache.
    """
    name = os.fspath(path)
    if not os.path.exists(name):
        # (Imported only for a name: opening a file needs neither module, 3-4 ms of every command.)
        from .hub import is_model_id, resolve_model
        from .named import resolve_name

        try:
            return resolve_name(name)
        except KeyError:
            pass
        if is_model_id(name):
            return resolve_model(name)
    return Path(path)


def detect_format(path: str | os.PathLike[str]) -> FormatName:
    """Name the format of a tokenizer file or folder.

    Raises:
        FormatError: The path is not a tokenizer this engine reads; the message says what was expected.
        FileNotFoundError: The path does not exist.

    Example:
        >>> save(small, "out/small.tiktoken", format="tiktoken")
        PosixPath('out/small.tiktoken')
        >>> detect_format("out/small.tiktoken")
        'tiktoken'
    """
    return _detect(_named(path))[0]


#: The formats of files already told apart, by (path, modification time, size): a JSON file is parsed to
#: tell its format, and ``inspect`` (or the app) asks again after loading it. Names only: no documents kept.
_SEEN_FORMATS: dict[tuple[str, int, int], FormatName] = {}


def _detect(target: Path) -> tuple[FormatName, Any]:
    """:func:`detect_format` of a path (names resolved), and the JSON document it parsed to tell, if it did
    (None otherwise): a loader then need not parse it again."""
    if not target.exists():
        raise FileNotFoundError(f"{target}: no such file or folder")
    if target.is_dir():
        from .gpt2 import find_gpt2_files

        if find_gpt2_files(target) is not None:
            return "gpt2", None
        for name in _FOLDER_FILES:
            if (target / name).is_file():
                return _detect(target / name)
        raise FormatError(
            f"{target}: a tokenizer folder needs {VOCAB_FILE} + {MERGES_FILE} (GPT-2), {HF_FILE} or "
            f"{TEKKEN_FILE}; found none"
        )
    if target.name.endswith(TIKTOKEN_SUFFIX):
        return "tiktoken", None
    if target.name.endswith(VOCAB_FILE):
        from .gpt2 import find_gpt2_files

        if find_gpt2_files(target) is not None:
            return "gpt2", None
    if (
        target.name in (VOCAB_FILE, MERGES_FILE, SIDECAR_FILE)
        and (target.parent / VOCAB_FILE).is_file()
        and (target.parent / MERGES_FILE).is_file()
    ):
        return "gpt2", None
    stat = target.stat()
    key = (str(target.resolve()), stat.st_mtime_ns, stat.st_size)
    seen = _SEEN_FORMATS.get(key)
    if seen is not None:
        return seen, None
    kind, document = _detect_file(target)
    if len(_SEEN_FORMATS) >= 64:  # a bound: the app opens files for hours
        _SEEN_FORMATS.clear()
    _SEEN_FORMATS[key] = kind
    return kind, document


def _detect_file(target: Path) -> tuple[FormatName, Any]:
    """The format of a file that its name does not tell, read from its content (see :func:`_detect`)."""
    with open(target, "rb") as handle:
        head = handle.read(4096)
    if head.lstrip()[:1] == b"{":
        from .hf import is_hf_document, read_tokenizer_json

        document = read_tokenizer_json(target)
        if isinstance(document, dict) and document.get("format") == STUDIO_FORMAT:
            return "studio", document
        if is_hf_document(document):
            return "hf", document
        from .tekken import is_tekken_document

        if is_tekken_document(document):
            return "tekken", document
        if isinstance(document, dict) and document.get("format") == SIDECAR_FORMAT:
            # A sidecar stands for the tokenizer it describes.
            if target.name.endswith(TIKTOKEN_SUFFIX + ".json"):
                return "tiktoken", None
            if (target.parent / VOCAB_FILE).is_file() and (target.parent / MERGES_FILE).is_file():
                return "gpt2", None
        raise FormatError(
            f"{target}: key 'format'/'model': this JSON file is neither a BPE Studio tokenizer "
            f"(format {STUDIO_FORMAT!r}), a Hugging Face tokenizer.json (with a 'model' object) nor a "
            "Mistral tekken.json (with 'config' and 'vocab')"
        )
    first_line = head.split(b"\n", 1)[0]
    if _TIKTOKEN_LINE.match(first_line):
        return "tiktoken", None
    if _RWKV_LINE.match(first_line):
        raise FormatError(
            f"{target}: line 1: an RWKV vocabulary (whole tokens matched longest first, no merges); {OPENS}"
        )
    if target.name.endswith(".model") or is_sentencepiece_model(head):
        return "sentencepiece", None
    raise FormatError(
        f"{target}: line 1: not a tokenizer file this engine reads (studio or Hugging Face JSON, .tiktoken, "
        f"or a folder with {VOCAB_FILE} + {MERGES_FILE})"
    )


def _locate(path: str | os.PathLike[str]) -> tuple[FormatName, Path, Any]:
    """The format of ``path``, what its loader takes (a GPT-2 folder or vocab file, a ``.tiktoken`` file,
    for its sidecar too, or the JSON file: a folder's ``tokenizer.json``), and the JSON document parsed to
    tell the format, if it was (None otherwise)."""
    target = _named(path)
    kind, document = _detect(target)
    if target.is_dir() and kind != "gpt2":
        target = next(target / n for n in _FOLDER_FILES if (target / n).is_file())
    if kind == "gpt2":
        gpt2_vocab = target.is_dir() or target.name.endswith(VOCAB_FILE)
        return kind, target if gpt2_vocab else target.parent, None
    if kind == "tiktoken" and target.name.endswith(TIKTOKEN_SUFFIX + ".json"):
        target = target.with_name(target.name[: -len(".json")])  # the sidecar stands for its .tiktoken
    return kind, target, document


def load(
    path: str | os.PathLike[str],
    *,
    pattern: str | None = None,
    special_tokens: Mapping[str, int] | None = None,
) -> Tokenizer:
    """Load a tokenizer, detecting its format.

    Args:
        path: A studio or Hugging Face ``tokenizer.json``, a ``.tiktoken`` file (or its sidecar), a Mistral
            ``tekken.json`` (see :mod:`~bpe_studio.engine.formats.tekken`), or a folder with ``vocab.json`` +
            ``merges.txt`` (or with a ``tokenizer.json``, ``tokenizer.tiktoken`` or ``tekken.json``); or, when
            no such path exists, a name: ``gpt2`` (shipped) or ``cl100k_base``, ``o200k_base``, ``p50k_base``,
            ``r50k_base`` (from tiktoken's cache; see :mod:`~bpe_studio.engine.formats.named`), or a
            Hugging Face model id, ``ORG/NAME``, from its local cache (see :mod:`.hub`).
        pattern: For files that do not store one: the pattern preset or regex. GPT-2 files without a
            sidecar default to ``gpt2``; a ``.tiktoken`` file without a sidecar that is not one of OpenAI's
            (recognised by content) needs it.
        special_tokens: For ``.tiktoken`` files without a sidecar: the special tokens and their ids.

    Raises:
        FormatError: The file is malformed or not a supported tokenizer; the message names the file and the
            line or key. :class:`~.tiktoken_format.PatternRequiredError` (a ``FormatError``): a
            ``.tiktoken`` file needs ``pattern``.
        FileNotFoundError: The path does not exist.

    Example:
        >>> save(small, "out/tokenizer.json")
        PosixPath('out/tokenizer.json')
        >>> load("out/tokenizer.json").vocab == small.vocab
        True
    """
    kind, target, document = _locate(path)
    if kind == "gpt2":
        from .gpt2 import load_gpt2

        return load_gpt2(target, pattern=pattern)
    if kind == "tiktoken":
        from .tiktoken_format import load_tiktoken

        return load_tiktoken(target, pattern=pattern, special_tokens=special_tokens)
    if kind == "hf":
        from .hf import load_hf

        return load_hf(target, document)  # (parsed once, to tell the format)
    if kind == "sentencepiece":
        from .sentencepiece import load_sentencepiece

        return load_sentencepiece(target)
    if kind == "tekken":
        from .tekken import load_tekken

        return load_tekken(target)
    from ..encoding.tokenizer import Template, Tokenizer
    from .studio import load_studio

    data = load_studio(target)
    template = Template(*data.template) if data.template is not None else None
    try:
        return Tokenizer(
            data.vocab, data.merges, data.special_tokens, pattern=pattern or data.pattern, template=template
        )
    except ValueError as exc:
        raise FormatError(f"{target}: {exc}") from None


class TokenizerSource:
    """How to load a tokenizer again, in a worker process say: its file or name, and what completes a bare
    ``.tiktoken`` file (the ``--pattern`` and ``--special-token`` of the command line).

    Attributes:
        path: What :func:`load` takes: a file, a folder or a name (``gpt2``, ``cl100k_base``).
        pattern: The pattern preset or regex given, if any (see :func:`load`).
        special_tokens: Special tokens added to a ``.tiktoken`` file's, ``(token, id or None)`` (see
            :func:`~bpe_studio.engine.formats.tiktoken_format.add_special_tokens`).

    Example:
        >>> save(small, "out/bare.tiktoken", format="tiktoken")
        PosixPath('out/bare.tiktoken')
        >>> source = TokenizerSource("out/bare.tiktoken", "gpt2", (("<|begin_of_text|>", None),))
        >>> source.load().special_tokens
        mappingproxy({'<|endoftext|>': 299, '<|begin_of_text|>': 300})
    """

    # (A plain class, not a dataclass: this module is on every file's load path, and dataclasses imports
    # inspect and ast, 5-6 ms of a fresh process. Frozen, compared and hashed by its three fields as one.)
    __slots__ = ("path", "pattern", "special_tokens")

    path: str
    pattern: str | None
    special_tokens: tuple[SpecialTokenSpec, ...]

    def __init__(
        self, path: str, pattern: str | None = None, special_tokens: tuple[SpecialTokenSpec, ...] = ()
    ) -> None:
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "pattern", pattern)
        object.__setattr__(self, "special_tokens", special_tokens)

    def _fields(self) -> tuple[str, str | None, tuple[SpecialTokenSpec, ...]]:
        return (self.path, self.pattern, self.special_tokens)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, TokenizerSource)
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return (
            f"TokenizerSource(path={self.path!r}, pattern={self.pattern!r}, "
            f"special_tokens={self.special_tokens!r})"
        )

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: a TokenizerSource is frozen")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: a TokenizerSource is frozen")

    def __reduce__(self) -> tuple[type[TokenizerSource], tuple[Any, ...]]:
        return (TokenizerSource, self._fields())

    def load(self) -> Tokenizer:
        """The tokenizer (errors as :func:`load`'s, and ``ValueError`` for a special token that cannot be
        added)."""
        tokenizer = load(self.path, pattern=self.pattern)
        if not self.special_tokens:
            return tokenizer
        from .tiktoken_format import add_special_tokens

        return add_special_tokens(tokenizer, self.special_tokens)

    def absolute(self) -> TokenizerSource:
        """The same source with a file named by its absolute path (a worker may not share our folder's
        meaning); a name such as ``gpt2`` as it is."""
        if not os.path.exists(self.path):
            return self
        return TokenizerSource(os.path.abspath(self.path), self.pattern, self.special_tokens)


# File names that say nothing of which tokenizer they hold: such a file is named after its folder.
_GENERIC_NAMES = frozenset(
    {
        *DEFAULT_FILE_NAMES.values(),
        VOCAB_FILE,
        MERGES_FILE,
        SIDECAR_FILE,
        "tokenizer.tiktoken.json",
        TEKKEN_FILE,
    }
)


def display_name(path: str | os.PathLike[str]) -> str:
    """A tokenizer's name for lists, legends and titles (the CLI's and the app's alike).

    A file named only for its format (``tokenizer.json``, ``vocab.json``, ``tokenizer.tiktoken``...) takes
    its folder's name, or the model id of a Hugging Face cache folder
    (``models--meta-llama--Llama-3.1-8B/snapshots/<commit>/tokenizer.json``); a folder its own name; any
    other file its file name; a name that is not a path (``cl100k_base``) stays as it is.

    Example:
        >>> display_name("out/tokenizer.json"), display_name("out/gpt2/"), display_name("mine.tiktoken")
        ('out', 'gpt2', 'mine.tiktoken')
        >>> display_name("hub/models--meta-llama--Llama-3.1-8B/snapshots/0e9e39f/tokenizer.json")
        'meta-llama/Llama-3.1-8B'
    """
    return _names(Path(path), 1) if os.fspath(path) else ""


def display_names(paths: list[str | os.PathLike[str]]) -> list[str]:
    """:func:`display_name` of each path, with as many more parent folders as it takes to tell apart two
    different paths of the same name (``a/out`` and ``b/out``).

    Example:
        >>> display_names(["a/out/tokenizer.json", "b/out/tokenizer.json", "c/tokenizer.json"])
        ['a/out', 'b/out', 'c']
    """
    depth = [1] * len(paths)
    names = [display_name(p) for p in paths]
    for _ in range(32):  # each round adds a folder to the names that clash; paths are not that deep
        clashes = [
            i
            for i, name in enumerate(names)
            if any(names[j] == name and _same_path(paths[i], paths[j]) is False for j in range(len(paths)))
        ]
        if not clashes:
            break
        for i in clashes:
            depth[i] += 1
            names[i] = _names(Path(paths[i]), depth[i]) if os.fspath(paths[i]) else ""
    return names


def _same_path(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    return os.path.abspath(a) == os.path.abspath(b)


def _names(path: Path, depth: int) -> str:
    """The last ``depth`` parts of the name :func:`display_name` gives (a folder's, the model id...)."""
    if not path.parent.name and not path.exists():
        return path.name or os.fspath(path)  # a name such as cl100k_base, or a missing file
    full = Path(os.path.abspath(path))
    if full.name in _GENERIC_NAMES and not full.is_dir():
        full = full.parent
    parts = full.parts
    if len(parts) >= 3 and parts[-2] == "snapshots" and parts[-3].startswith("models--"):
        return parts[-3].removeprefix("models--").replace("--", "/")
    kept = list(parts[1:])[-depth:]
    return "/".join(kept) or os.fspath(full)


def source_files(path: str | os.PathLike[str]) -> list[Path]:
    """The existing files :func:`load` reads for ``path`` (a tokenizer's files and its sidecar).

    Raises:
        FormatError, FileNotFoundError: As :func:`detect_format`.

    Example:
        >>> [path.name for path in source_files(save(small, "out/gpt2", format="gpt2"))]
        ['vocab.json', 'merges.txt', 'bpe_studio.json']
    """
    kind, target, _ = _locate(path)
    if kind == "gpt2":
        from .gpt2 import find_gpt2_files

        pair = find_gpt2_files(target)
        files = [*pair, pair[0].parent / SIDECAR_FILE] if pair is not None else [target]
    elif kind == "tiktoken":
        from .tiktoken_format import sidecar_path

        files = [target, sidecar_path(target)]
    else:
        files = [target]
    return [f for f in files if f.is_file()]


def save_targets(path: str | os.PathLike[str], *, format: str, folder: bool | None = None) -> list[Path]:
    """The files :func:`save` writes for ``path`` and ``format``, the one to give :func:`load` first.

    Args:
        path: As for :func:`save`.
        format: One of :data:`FORMATS`.
        folder: Whether ``path`` is a folder to write into; ``None``: whether it is an existing folder.

    Example:
        >>> save_targets("out", format="tiktoken", folder=True)
        [PosixPath('out/tokenizer.tiktoken'), PosixPath('out/tokenizer.tiktoken.json')]
    """
    target = Path(path)
    if format == "gpt2":
        return [target / VOCAB_FILE, target / MERGES_FILE, target / SIDECAR_FILE]
    if target.is_dir() if folder is None else folder:
        target = target / DEFAULT_FILE_NAMES[format]
    if format != "tiktoken":
        return [target]
    from .tiktoken_format import sidecar_path

    return [target, sidecar_path(target)]


def save(
    tokenizer: Tokenizer,
    path: str | os.PathLike[str],
    *,
    format: str = "studio",
    training: Mapping[str, Any] | None = None,
) -> Path:
    """Save a tokenizer in a format; every file is written atomically.

    Args:
        tokenizer: The tokenizer.
        path: For ``gpt2``, the folder to write into. For the others, the file; an existing folder gets
            ``tokenizer.json`` (studio, hf) or ``tokenizer.tiktoken``.
        format: One of :data:`FORMATS`.
        training: For ``studio``: how the tokenizer was trained (free-form, stored in the file).

    Returns:
        The path to give :func:`load`.

    Raises:
        ValueError: Unknown format name.
        FormatError: The format cannot represent this tokenizer exactly (the message says why).

    Warns:
        FormatWarning: The tokenizer has a template (BOS/EOS) and the format is ``gpt2`` or ``tiktoken``,
            which have no place for one (``hf`` and ``studio`` store it); or it has ``ignore_merges`` or the
            NFC normalizer, which only ``hf`` stores (``tiktoken`` applies ``ignore_merges`` by itself).

    Example:
        >>> save(small, "out", format="gpt2")
        PosixPath('out')
    """
    if format not in FORMATS:
        raise ValueError(f"format: {format!r} is not one of {', '.join(FORMATS)}")
    if tokenizer.piece_model is not None:
        raise FormatError(
            f"cannot save as {format}: this is a SentencePiece-style BPE (pieces of text, byte fallback), "
            "and bpe-studio writes byte-level BPE only; keep the original file"
        )
    if tokenizer.template is not None and format in ("gpt2", "tiktoken"):
        template = tokenizer.template
        warnings.warn(
            f"the {format} format cannot store the template (ids {list(template.prefix)} before and "
            f"{list(template.suffix)} after every text, e.g. BOS/EOS): the saved tokenizer encodes without "
            "them; save as hf or studio to keep them",
            FormatWarning,
            stacklevel=2,
        )
    lost = [
        what
        for what, dropped in (
            ("ignore_merges", tokenizer.ignore_merges and format in ("studio", "gpt2")),
            ("the NFC normalizer", tokenizer.normalizer is not None and format != "hf"),
            (
                "the Hugging Face normalizer and pre-tokenizer",
                tokenizer.pipeline is not None and format != "hf",
            ),
            ("the Hugging Face decoder", tokenizer.hf_decoder is not None and format != "hf"),
        )
        if dropped
    ]
    if lost:
        warnings.warn(
            f"the {format} format cannot store {' and '.join(lost)}: the saved tokenizer may encode some "
            "texts differently; save as hf to keep them",
            FormatWarning,
            stacklevel=2,
        )
    target = Path(path)
    if format == "gpt2":
        from .gpt2 import save_gpt2

        return save_gpt2(tokenizer, target)
    target = save_targets(target, format=format)[0]
    if format == "tiktoken":
        from .tiktoken_format import save_tiktoken

        return save_tiktoken(tokenizer, target)
    if format == "hf":
        from .hf import save_hf

        return save_hf(tokenizer, target)
    from .studio import save_studio

    save_studio(
        target,
        vocab=tokenizer.vocab,
        merges=tokenizer.merges,
        special_tokens=tokenizer.special_tokens,
        pattern=tokenizer.pattern,
        training=training,
        template=(tokenizer.template.prefix, tokenizer.template.suffix) if tokenizer.template else None,
    )
    return target
