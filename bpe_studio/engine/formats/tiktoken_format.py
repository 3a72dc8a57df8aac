"""tiktoken's ``.tiktoken`` files: one ``<base64 token bytes> <rank>`` line per ordinary token.

tiktoken ranks a pair by the rank of its concatenation and has no merges list, and the file holds neither
the pattern nor the special tokens. So a save writes, next to ``NAME.tiktoken``, the sidecar
``NAME.tiktoken.json`` (pattern and special tokens, as for the ``gpt2`` format). Ranks are token ids.

Reading one back gives a tokenizer of tiktoken's rule (``merges=None``, :mod:`~..encoding.rank_rule`): any
two adjacent parts whose concatenation is a token merge, the lowest rank first, and a pre-token that is itself
a token is taken whole (``ignore_merges``), exactly as tiktoken encodes, also for a vocabulary that one merge
per token cannot reproduce (Llama 3's ``tokenizer.model``). The merges the app shows are derived only when
asked for (a token's merge is the last step of tiktoken's BPE on its bytes with the tokens of lower rank:
GPT-2's 50,256 ranks give its 50,000 merges). The file is read natively when the kernel is built.

A file without a sidecar states neither pattern nor special tokens. OpenAI's published files (``r50k_base``,
``p50k_base``, ``cl100k_base``, ``o200k_base``) are recognised by their SHA-256, which tiktoken publishes,
and get their encoding's pattern and special tokens; for any other file the pattern must be given
(``pattern=``), otherwise :class:`PatternRequiredError` says so: a wrong pattern would give other ids
silently.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .. import native
from .base import FormatError

if TYPE_CHECKING:
    from ..encoding.tokenizer import Tokenizer

SUFFIX = ".tiktoken"

_ENDOFTEXT = "<|endoftext|>"
_FIM = {"<|fim_prefix|>": 100258, "<|fim_middle|>": 100259, "<|fim_suffix|>": 100260}


class KnownEncoding:
    """One of OpenAI's published encodings, as ``tiktoken_ext/openai_public.py`` defines it.

    (A plain class: every rank file's load imports this module; a dataclass imports ``dataclasses``, with
    ``inspect`` and ``ast``, 5 ms of a fresh process, and a NamedTuple compiles each field's annotation.)

    Attributes:
        name: tiktoken's name for it (``cl100k_base``).
        sha256: The SHA-256 of its ``.tiktoken`` file, which tiktoken checks too.
        pattern: Its pre-tokenization pattern (a preset name of this engine).
        special_tokens: Its special tokens and their ids.
        url: Where tiktoken downloads the file from (its cache names the file after this address).
    """

    __slots__ = ("name", "pattern", "sha256", "special_tokens")

    def __init__(self, name: str, sha256: str, pattern: str, special_tokens: Mapping[str, int]) -> None:
        self.name = name
        self.sha256 = sha256
        self.pattern = pattern
        self.special_tokens = special_tokens

    def _fields(self) -> tuple[str, str, str, dict[str, int]]:
        return (self.name, self.sha256, self.pattern, dict(self.special_tokens))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KnownEncoding) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash((self.name, self.sha256, self.pattern))

    def __repr__(self) -> str:
        return (
            f"KnownEncoding(name={self.name!r}, sha256={self.sha256!r}, pattern={self.pattern!r}, "
            f"special_tokens={self.special_tokens!r})"
        )

    def replaced(self, *, sha256: str) -> KnownEncoding:
        """The same encoding with another digest (for tests that stand a file in for one of OpenAI's)."""
        return KnownEncoding(self.name, sha256, self.pattern, self.special_tokens)

    @property
    def url(self) -> str:
        return f"https://openaipublic.blob.core.windows.net/encodings/{self.name}.tiktoken"


#: OpenAI's encodings by name. r50k/p50k's pattern is tiktoken's faster spelling of GPT-2's (same matches).
KNOWN_ENCODINGS: dict[str, KnownEncoding] = {
    e.name: e
    for e in (
        KnownEncoding(
            "r50k_base",
            "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
            "gpt2",
            {_ENDOFTEXT: 50256},
        ),
        KnownEncoding(
            "p50k_base",
            "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
            "gpt2",
            {_ENDOFTEXT: 50256},
        ),
        KnownEncoding(
            "cl100k_base",
            "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
            "cl100k",
            {_ENDOFTEXT: 100257, **_FIM, "<|endofprompt|>": 100276},
        ),
        KnownEncoding(
            "o200k_base",
            "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
            "o200k",
            {_ENDOFTEXT: 199999, "<|endofprompt|>": 200018},
        ),
    )
}


#: Why a bare ``.tiktoken`` file needs a pattern (the CLI adds which option gives it).
PATTERN_MISSING = (
    "this .tiktoken file does not say which pre-tokenization pattern it uses (it has no sidecar and is not "
    "one of OpenAI's r50k/p50k/cl100k/o200k files), and a wrong one would give other ids"
)


class PatternRequiredError(FormatError):
    """A ``.tiktoken`` file states no pattern (no sidecar, not one of OpenAI's files): pass ``pattern=``.

    Attributes:
        path: The file.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        super().__init__(
            f"{self.path}: {PATTERN_MISSING}; give it with pattern= (gpt2, cl100k, o200k, a model's name "
            "such as llama3, or a regex)"
        )


#: How each of OpenAI's four files begins: their tokens are GPT-2's bytes first, in GPT-2's order, and rank 0
#: is ``!`` (r50k's, p50k's, its extension, cl100k's and o200k's). A file that begins otherwise has another
#: SHA-256, so it is not hashed.
_OPENAI_HEAD = b"IQ== 0\n"


def known_encoding(data: bytes) -> KnownEncoding | None:
    """The OpenAI encoding whose file has exactly these bytes, or None.

    Example:
        >>> known_encoding(b"YQ== 0\\n") is None
        True
    """
    if not data.startswith(_OPENAI_HEAD):
        return None  # (no file of theirs: neither hashlib, 2-3 ms to import, nor 1-2 ms of hashing)
    import hashlib  # (here: only a rank file's load needs it; importing it loads OpenSSL, 2 ms)

    digest = hashlib.sha256(data).hexdigest()
    return next((e for e in KNOWN_ENCODINGS.values() if e.sha256 == digest), None)


def _fail(path: str | os.PathLike[str], where: str, problem: str) -> FormatError:
    return FormatError(f"{os.fspath(path)}: {where}: {problem}")


def sidecar_path(path: str | os.PathLike[str]) -> Path:
    """The sidecar of a ``.tiktoken`` file: the same name plus ``.json``.

    Example:
        >>> sidecar_path("out/gpt2.tiktoken").name
        'gpt2.tiktoken.json'
    """
    target = Path(path)
    return target.with_name(target.name + ".json")


def read_tiktoken(path: str | os.PathLike[str]) -> dict[int, bytes]:
    """Read a ``.tiktoken`` file into rank -> token bytes.

    Raises:
        FormatError: A line is not ``<base64> <rank>``, or a rank or token repeats; the message names
            the line.

    Example:
        >>> save_tiktoken(small, "out/small.tiktoken")
        PosixPath('out/small.tiktoken')
        >>> read_tiktoken("out/small.tiktoken")[256]
        b' t'
    """
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise _fail(path, "file", exc.strerror or str(exc)) from None
    return parse_tiktoken(data, path)


def parse_tiktoken(data: bytes, path: str | os.PathLike[str]) -> dict[int, bytes]:
    """Parse the bytes of a ``.tiktoken`` file (``path`` names it in errors); see :func:`read_tiktoken`.

    Example:
        >>> parse_tiktoken(b"YQ== 0\\n= 1\\n", "x.tiktoken")
        {0: b'a', 1: b''}
    """
    fast = native.parse_ranks(data)
    if fast is not None:
        return fast
    ranks: dict[int, bytes] = {}
    seen: dict[bytes, int] = {}
    for number, line in enumerate(data.split(b"\n"), start=1):
        line = line.strip()
        if not line:
            continue
        parts = line.split()
        try:
            if len(parts) != 2:
                raise ValueError
            # "=" (or "==") is the empty token: tiktoken reads it as b"" and real files ship it.
            empty = parts[0].strip(b"=") == b""
            token = b"" if empty else base64.b64decode(parts[0], validate=True)
            rank = int(parts[1])
            if rank < 0:
                raise ValueError
        except (ValueError, binascii.Error):
            shown = line[:60].decode("utf-8", errors="replace")
            raise _fail(path, f"line {number}", f"expected '<base64 token> <rank>', got {shown!r}") from None
        if rank in ranks:
            raise _fail(path, f"line {number}", f"rank {rank} is used twice")
        if token in seen:
            raise _fail(
                path,
                f"line {number}",
                f"token {token!r} is listed twice (ranks {seen[token]}, {rank})",
            )
        ranks[rank] = token
        seen[token] = rank
    return ranks


def load_tiktoken(
    path: str | os.PathLike[str],
    *,
    pattern: str | None = None,
    special_tokens: Mapping[str, int] | None = None,
) -> Tokenizer:
    """Load a ``.tiktoken`` file and its sidecar if present.

    Args:
        path: The ``.tiktoken`` file.
        pattern: Overrides the pattern (default: the sidecar's, else the known encoding's).
        special_tokens: Overrides the special tokens (default: the sidecar's, else the known encoding's,
            else none).

    Raises:
        PatternRequiredError: The file has no sidecar, is not one of OpenAI's files and no ``pattern`` was
            given.
        FormatError: The file or its sidecar is malformed.

    Example:
        >>> save_tiktoken(small, "out/small.tiktoken")
        PosixPath('out/small.tiktoken')
        >>> load_tiktoken("out/small.tiktoken").pattern == small.pattern  # from the sidecar
        True

        A ``.tiktoken`` file without a sidecar needs the pattern::

            tok = load_tiktoken("my.tiktoken", pattern="cl100k")
    """
    from ..encoding.tokenizer import Tokenizer

    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise _fail(path, "file", exc.strerror or str(exc)) from None
    ranks = parse_tiktoken(data, path)
    stored_pattern: str | None = None
    stored_specials: dict[str, int] = {}
    sidecar = sidecar_path(path)
    if sidecar.is_file():
        # (Imported here: a bare rank file needs neither gpt2.py nor its json, 1.3 ms of a fresh process.)
        from .gpt2 import check_sidecar_files, read_sidecar

        stored_pattern, stored_specials = read_sidecar(sidecar)
        check_sidecar_files(sidecar, {"ranks": path})
    elif (known := known_encoding(data)) is not None:
        stored_pattern, stored_specials = known.pattern, dict(known.special_tokens)
    chosen = pattern or stored_pattern
    if chosen is None:
        raise PatternRequiredError(path)
    try:
        return Tokenizer(
            ranks,
            None,  # tiktoken's rule: no merges needed (derived if a view asks)
            dict(special_tokens if special_tokens is not None else stored_specials),
            pattern=chosen,
            ignore_merges=True,
        )
    except ValueError as exc:
        raise FormatError(f"{os.fspath(path)}: {exc}") from None


def check_tiktoken_compatible(tokenizer: Tokenizer) -> None:
    """Raise :class:`FormatError` unless tiktoken's rank-by-id rule reproduces the tokenizer's encoding.

    A tokenizer of tiktoken's rule (one read from a rank file) is one already: its tokens need only be
    unique. For one of merges, tiktoken merges the pair whose concatenation has the lowest id, so the tokens
    must get their ids in the order of the merges that make them, and every multi-byte ordinary token must be
    made by some merge.
    """
    specials = set(tokenizer.special_tokens.values())
    if tokenizer.rule == "ranks":
        ordinary = [token for i, token in tokenizer.vocab.items() if i not in specials]
        if len(set(ordinary)) != len(ordinary):
            counted = Counter(ordinary)
            twice = next(t for t in ordinary if counted[t] > 1)
            raise FormatError(
                f"cannot save as tiktoken: token {twice!r} appears under two ids; tiktoken needs unique "
                "tokens. Save as studio, gpt2 or hf instead"
            )
        return
    first_rank: dict[bytes, int] = {}
    for rank, (left, right) in enumerate(tokenizer.merges):
        first_rank.setdefault(left + right, rank)
    last_id = -1
    for token, _ in sorted(first_rank.items(), key=lambda item: item[1]):
        token_id = tokenizer.token_id(token)
        assert token_id is not None
        if token_id <= last_id:
            raise FormatError(
                f"cannot save as tiktoken: token {token!r} (id {token_id}) is made by a later merge than "
                "a token with a higher id; tiktoken ranks merges by token id, so the ids must follow the "
                "merge order. Save as studio, gpt2 or hf instead"
            )
        last_id = token_id
    seen: set[bytes] = set()
    for i, token in tokenizer.vocab.items():
        if i in specials:
            continue
        if token in seen:
            raise FormatError(
                f"cannot save as tiktoken: token {token!r} appears under two ids; tiktoken needs unique "
                "tokens. Save as studio, gpt2 or hf instead"
            )
        seen.add(token)
        if len(token) > 1 and token not in first_rank:
            raise FormatError(
                f"cannot save as tiktoken: token {token!r} (id {i}) is made by no merge, but tiktoken "
                "would merge into it. Save as studio, gpt2 or hf instead"
            )


def save_tiktoken(tokenizer: Tokenizer, path: str | os.PathLike[str]) -> Path:
    """Write ``path`` (``.tiktoken``) and its sidecar ``path + ".json"`` atomically.

    Returns:
        The ``.tiktoken`` path (what :func:`load_tiktoken` reads).

    Raises:
        FormatError: tiktoken cannot represent this tokenizer exactly (see :func:`check_tiktoken_compatible`).

    Example:
        >>> save_tiktoken(small, "out/small.tiktoken")
        PosixPath('out/small.tiktoken')
    """
    from .atomic import atomic_write_set
    from .gpt2 import dumps_sidecar

    check_tiktoken_compatible(tokenizer)
    target = Path(path)
    specials = set(tokenizer.special_tokens.values())
    lines = [
        f"{base64.b64encode(token).decode('ascii') or '='} {i}"  # "=": the empty token, as tiktoken reads it
        for i, token in sorted(tokenizer.vocab.items())
        if i not in specials
    ]
    data = ("\n".join(lines) + "\n").encode("ascii")
    atomic_write_set(
        {
            target: data,
            sidecar_path(target): dumps_sidecar(
                pattern=tokenizer.pattern, special_tokens=tokenizer.special_tokens, files={"ranks": data}
            ),
        }
    )
    return target


#: A special token as the user spells it: ``TOKEN=ID``, or ``TOKEN`` for the next free id.
SpecialTokenSpec = tuple[str, int | None]


def parse_special_token(text: str) -> SpecialTokenSpec:
    """A special token as typed, ``TOKEN=ID`` or ``TOKEN`` (the next free id): ``(token, id or None)``.

    The text after the last ``=`` is the id when it is a number, so a token may hold ``=`` itself.

    Raises:
        ValueError: The token is empty (the message says how to write one).

    Example:
        >>> parse_special_token("<|begin_of_text|>=128000"), parse_special_token("<|eot_id|>")
        (('<|begin_of_text|>', 128000), ('<|eot_id|>', None))
        >>> parse_special_token("<|a=b|>")
        ('<|a=b|>', None)
    """
    token, equals, number = text.rpartition("=")
    if equals and number.isascii() and number.isdigit() and token:
        return token, int(number)
    if not text:
        raise ValueError(f"{text!r} is not a special token; write TOKEN=ID, or TOKEN for the next free id")
    if equals and not token:
        raise ValueError(f"{text!r} names no token before '='; write TOKEN=ID, e.g. <|begin_of_text|>=128000")
    return text, None


def add_special_tokens(tokenizer: Tokenizer, wanted: Sequence[SpecialTokenSpec]) -> Tokenizer:
    """The tokenizer with more special tokens, for a rank file that names none (Llama 3's, say).

    Each is ``(token, id)``, or ``(token, None)`` for the next id after every id so far (the ranks, the
    special tokens it has, and those placed before it), so Llama 3's ``<|begin_of_text|>`` and
    ``<|end_of_text|>``, given in that order, get 128000 and 128001.

    Raises:
        ValueError: A token is listed twice or is already special, or an id is a rank's or another
            special token's; one line naming the token and the free id to use instead.

    Example:
        >>> tok = add_special_tokens(small, [("<|begin_of_text|>", None), ("<|x|>", 400)])
        >>> sorted(tok.special_tokens.items(), key=lambda item: item[1])[-2:]
        [('<|begin_of_text|>', 300), ('<|x|>', 400)]
    """
    from ..encoding.tokenizer import Tokenizer

    if not wanted:
        return tokenizer
    specials = dict(tokenizer.special_tokens)
    owner = {i: token for token, i in specials.items()}
    vocab = {i: token for i, token in tokenizer.vocab.items() if i not in owner}
    following = max(tokenizer.vocab, default=-1) + 1
    for token, wanted_id in wanted:
        if token in specials:
            raise ValueError(
                f"{token!r} is already a special token (id {specials[token]}); list each special token once"
            )
        i = following if wanted_id is None else wanted_id
        if i in vocab:
            raise ValueError(
                f"{token}={i}: id {i} is the rank of the token {vocab[i]!r}; give a free id, e.g. {following}"
            )
        if i in owner:
            raise ValueError(f"{token}={i}: id {i} is already {owner[i]!r}; give a free id, e.g. {following}")
        specials[token] = i
        owner[i] = token
        following = max(following, i + 1)
    return Tokenizer(
        vocab,
        tokenizer.merges,
        specials,
        pattern=tokenizer.pattern,
        template=tokenizer.template,
        ignore_merges=tokenizer.ignore_merges,
        normalizer=tokenizer.normalizer,
    )
