"""Hugging Face ``tokenizers``' normalizers and pre-tokenizers as a pipeline, step for step as it runs them.

A ``tokenizer.json`` says how text becomes the pieces its BPE merges: a ``normalizer`` rewrites the text
between added tokens (``NFKC``, ``Lowercase``, ``Replace``, ...), then a ``pre_tokenizer`` cuts it into
pieces (``Split``, ``Digits``, ``Punctuation``, ``Metaspace``, ...) and ``ByteLevel`` spells each piece's
UTF-8 bytes as GPT-2 characters. :class:`Pipeline` runs the same steps in the same order on the same
strings (so a ``Split`` after ``ByteLevel`` sees ``"Ġ"``, as in ``tokenizers``) and gives each piece's bytes;
the BPE then merges them as for any pattern. ``tokenizers`` runs its regexes with Oniguruma; they are run
here with the ``regex`` module, with Oniguruma's way of stepping over empty matches and its ``^``/``$`` at
every line (Ruby syntax), and possessive intervals read back (:func:`from_oniguruma`).

Offsets: with ``align=True`` every character carries the span of the original characters it comes from, as
``tokenizers``' alignments do: a character a normalizer writes (``Replace``'s content, ``Lowercase``'s
``"i̇"`` for ``"İ"``, ``NFKC``'s ``"fi"`` for ``"ﬁ"``) spans what it replaces, a prepended one (``Prepend``,
``Metaspace``, ``ByteLevel``'s prefix space) the first character, and Unicode normalization maps each
output character to its run of a starter and the combining marks after it (or, where two such runs compose,
as Hangul jamo do, to the whole text).

Example:
    >>> steps = {"type": "Sequence", "pretokenizers": [
    ...     {"type": "Digits", "individual_digits": True},
    ...     {"type": "ByteLevel", "add_prefix_space": False, "use_regex": False}]}
    >>> pipeline = Pipeline.from_json(None, steps)
    >>> [piece.data for piece in pipeline.pieces("ab 12")]
    [b'ab ', b'1', b'2']
    >>> [piece.spans for piece in pipeline.pieces("é", align=True)]
    [[(0, 1, 0), (0, 1, 0)]]
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from itertools import pairwise

from ..bytes_unicode import byte_to_char, char_to_byte
from .patterns import PATTERNS

TYPE_CHECKING = False  # (typing is for type checkers only: see bpe_studio/__init__.py)
if TYPE_CHECKING:
    from typing import Any

# tokenizers compiles Split regexes with Oniguruma (Ruby syntax), where "X{1,3}+" means "(X{1,3})+", not
# the possessive "X{1,3}" of the regex module and tiktoken (cl100k has "\p{N}{1,3}+"). An atomic group is
# possessive in both, so intervals on a single atom are written as "(?>X{1,3})" and read back.
# (Compiled when first used: opening a .model, or a tokenizer.json without a Split, needs neither.)
_ATOM = r"(\\[pP]\{[^}]*\}|\\[pP][A-Za-z]|\\.|\[(?:\\.|[^\]\\])*\]|[^\\()\[\]{}|])"


@cache
def _possessive_interval() -> re.Pattern[str]:
    return re.compile(_ATOM + r"(\{\d+(?:,\d*)?\})\+")


@cache
def _atomic_interval() -> re.Pattern[str]:
    return re.compile(r"\(\?>" + _ATOM + r"(\{\d+(?:,\d*)?\})\)")


def to_oniguruma(pattern: str) -> str:
    r"""Rewrite possessive intervals for Oniguruma.

    Example:
        >>> print(to_oniguruma(r"\p{N}{1,3}+|\s++$"))
        (?>\p{N}{1,3})|\s++$
    """
    return _possessive_interval().sub(r"(?>\1\2)", pattern)


def from_oniguruma(pattern: str) -> str:
    r"""Undo :func:`to_oniguruma` (an equivalent spelling), so that presets are recognised again.

    Example:
        >>> print(from_oniguruma(r"(?>\p{N}{1,3})"))
        \p{N}{1,3}+
    """
    return _atomic_interval().sub(r"\1\2+", pattern)


class PipelineError(ValueError):
    """A step that is malformed or not supported: ``where`` is its place in the JSON, the message says why.

    Attributes:
        where: The key path, e.g. ``pre_tokenizer.pretokenizers[1].behavior``.
        problem: What is wrong and how to fix it.
    """

    def __init__(self, where: str, problem: str) -> None:
        self.where = where
        self.problem = problem
        super().__init__(f"{where}: {problem}")


# The patterns below are compiled, and ``regex`` imported, when first used: opening a tokenizer.json and
# encoding natively need none of them (importing ``regex`` is 7 ms of a fresh process's load).


@cache
def _whitespace_re() -> Any:
    import regex

    return regex.compile(r"\s")


@cache
def _gpt2() -> Any:
    import regex

    return regex.compile(PATTERNS["gpt2"], regex.MULTILINE)


@cache
def _words() -> Any:
    """Whitespace's pieces: the matches of \\w+|[^\\w\\s]+ (everything else is dropped); tokenizers' \\w is
    Unicode's word class (letters and other alphabetic characters, marks, decimal digits, connectors), as
    the regex module's."""
    import regex

    return regex.compile(r"\w+|[^\w\s]+")


Span = tuple[int, ...]
"""Where one character of a piece comes from: ``(start, end)`` in the original text, and after ``ByteLevel``
``(start, end, unit)``, where ``unit`` numbers the character whose UTF-8 bytes the byte belongs to."""


class Piece:
    """Text on its way through the pipeline: a normalized string or one of the pieces cut from it.

    Attributes:
        text: The characters (after ``ByteLevel``, GPT-2's spelling of the bytes).
        spans: Each character's :data:`Span`, or None when offsets are not asked for.
        first: True when the text this piece was cut from starts the whole original text (with its
            first character coming from the original's first one, ``Metaspace``'s ``prepend_scheme:
            "first"`` prepends; so it needs the spans).
    """

    # (A plain class: opening a file imports this module, and dataclasses imports inspect and ast, 5-6 ms.)
    __slots__ = ("first", "spans", "text")

    def __init__(self, text: str, spans: list[Span] | None, first: bool) -> None:
        self.text = text
        self.spans = spans
        self.first = first

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Piece):
            return NotImplemented
        return (self.text, self.spans, self.first) == (other.text, other.spans, other.first)

    __hash__ = None  # type: ignore[assignment]  # (mutable and compared by value, as a dataclass)

    def __repr__(self) -> str:
        return f"Piece(text={self.text!r}, spans={self.spans!r}, first={self.first!r})"

    def slice(self, start: int, end: int) -> Piece:
        """The characters ``start:end``."""
        spans = self.spans[start:end] if self.spans is not None else None
        return Piece(self.text[start:end], spans, self.first)

    @property
    def data(self) -> bytes:
        """The bytes the BPE merges: GPT-2's characters read back after ``ByteLevel``."""
        table = char_to_byte()
        return bytes(table[c] for c in self.text)


# ----------------------------------------------------------------------------------------------------------
# Edits that keep the spans: tokenizers' NormalizedString.transform, one output character at a time
# ----------------------------------------------------------------------------------------------------------


def _edit(piece: Piece, parts: Sequence[tuple[str, int, int]]) -> Piece:
    """The piece rewritten: each part is (new text, start, end), the new text standing for ``start:end``.

    A part that replaces nothing (``start == end``) takes the span of the character at ``start`` (or the
    last one), as a prepended character takes the first one's in ``tokenizers``.
    """
    text = "".join(part for part, _, _ in parts)
    spans: list[Span] | None = None
    if piece.spans is not None:
        old = piece.spans
        spans = []
        for part, start, end in parts:
            if not part:
                continue
            if end - start == len(part):
                spans += old[start:end]
            elif start == end:
                if not old:
                    spans += [(0, 0)] * len(part)
                else:
                    spans += [old[min(start, len(old) - 1)]] * len(part)
            else:
                covered = old[start:end]
                spans += [(covered[0][0], covered[-1][1])] * len(part)
    return Piece(text, spans, piece.first)


def _find_matches(compiled: Any, text: str) -> list[tuple[int, int, bool]]:
    """``text`` as (start, end, is_match) parts, as ``tokenizers`` cuts it at a regex's matches.

    Oniguruma's search loop: an empty match right where the previous match ended is skipped (one character
    on), so ``a*`` on ``"baa"`` finds ``""`` and ``"aa"`` (Python's ``finditer`` also finds ``""`` at 3).
    """
    if not text:
        return [(0, 0, False)]
    parts: list[tuple[int, int, bool]] = []
    previous = pos = 0
    last_end = -1
    n = len(text)
    search = compiled.search
    while pos <= n:
        m = search(text, pos)
        if m is None:
            break
        start, end = m.span()
        if start == end and end == last_end:
            pos = end + 1
            continue
        pos = last_end = end
        if previous != start:
            parts.append((previous, start, False))
        parts.append((start, end, True))
        previous = end
    if previous != n:
        parts.append((previous, n, False))
    return parts


def _find_chars(test: Callable[[str], bool], text: str) -> list[tuple[int, int, bool]]:
    """``text`` cut at each character where ``test`` holds (each one a match of its own, as ``tokenizers``'
    character patterns give them)."""
    if not text:
        return [(0, 0, False)]
    parts: list[tuple[int, int, bool]] = []
    last = 0
    for i, ch in enumerate(text):
        if test(ch):
            if last < i:
                parts.append((last, i, False))
            parts.append((i, i + 1, True))
            last = i + 1
    if last < len(text):
        parts.append((last, len(text), False))
    return parts


#: The ways a ``Split`` treats the text it matches (``tokenizers``' SplitDelimiterBehavior).
BEHAVIORS = ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous")


def _split(piece: Piece, parts: list[tuple[int, int, bool]], behavior: str) -> list[Piece]:
    """The pieces ``tokenizers``' ``NormalizedString.split`` makes of ``parts`` (empty ones dropped)."""
    spans: list[tuple[int, int]]
    if behavior == "Removed":
        spans = [(a, b) for a, b, is_match in parts if not is_match]
    elif behavior == "Isolated":
        spans = [(a, b) for a, b, _ in parts]
    else:
        spans = []
        previous_match = False
        ordered = parts[::-1] if behavior == "MergedWithNext" else parts
        for a, b, is_match in ordered:
            # Contiguous joins runs of matches (or of gaps); the Merged* join a match to the gap before it.
            join = (
                (is_match == previous_match)
                if behavior == "Contiguous"
                else (is_match and not previous_match)
            )
            if join and spans:
                last = spans[-1]
                spans[-1] = (a, last[1]) if behavior == "MergedWithNext" else (last[0], b)
            else:
                spans.append((a, b))
            previous_match = is_match
        if behavior == "MergedWithNext":
            spans.reverse()
    return [piece.slice(a, b) for a, b in spans if b > a]


# ----------------------------------------------------------------------------------------------------------
# Normalizers
# ----------------------------------------------------------------------------------------------------------


def _unicode_normalize(form: Any, piece: Piece) -> Piece:
    """NFC/NFD/NFKC/NFKD; with spans, each run of a starter and the marks after it maps to itself."""
    text = piece.text
    normal = unicodedata.normalize(form, text)
    if piece.spans is None or normal == text:
        return Piece(normal, None, piece.first) if piece.spans is None else piece
    cuts = [i for i, ch in enumerate(text) if i == 0 or unicodedata.combining(ch) == 0] + [len(text)]
    runs = [(unicodedata.normalize(form, text[a:b]), a, b) for a, b in pairwise(cuts)]
    if "".join(run for run, _, _ in runs) != normal:
        runs = [(normal, 0, len(text))]  # two runs compose (Hangul jamo): everything maps to everything
    return _edit(piece, runs)


def _lowercase(piece: Piece) -> Piece:
    # Character by character, as Rust's char::to_lowercase (no final-sigma rule, unlike str.lower()).
    lowered = "".join(ch.lower() for ch in piece.text)
    if lowered == piece.text:
        return piece
    if piece.spans is None:
        return Piece(lowered, None, piece.first)
    return _edit(piece, [(ch.lower(), i, i + 1) for i, ch in enumerate(piece.text)])


def _is_whitespace(ch: str) -> bool:
    """Rust's ``char::is_whitespace`` (the White_Space property, as ``regex``'s ``\\s``)."""
    return _whitespace_re().match(ch) is not None


def _strip(piece: Piece, left: bool, right: bool) -> Piece:
    text = piece.text
    start, end = 0, len(text)
    while left and start < end and _is_whitespace(text[start]):
        start += 1
    while right and end > start and _is_whitespace(text[end - 1]):
        end -= 1
    if (start, end) == (0, len(text)):
        return piece
    spans = piece.spans[start:end] if piece.spans is not None else None
    return Piece(text[start:end], spans, piece.first)


def _replace(piece: Piece, compiled: Any, content: str) -> Piece:
    parts = _find_matches(compiled, piece.text)
    if not any(is_match for _, _, is_match in parts):
        return piece
    return _edit(piece, [(content if is_match else piece.text[a:b], a, b) for a, b, is_match in parts])


def _prepend(piece: Piece, text: str) -> Piece:
    if not piece.text:
        return piece
    return _edit(piece, [(text, 0, 0), (piece.text, 0, len(piece.text))])


# ----------------------------------------------------------------------------------------------------------
# Pre-tokenizers
# ----------------------------------------------------------------------------------------------------------


def _byte_level(
    pieces: list[Piece], add_prefix_space: bool, use_regex: bool, units: list[int]
) -> list[Piece]:
    out: list[Piece] = []
    for piece in pieces:
        if add_prefix_space and not piece.text.startswith(" "):
            piece = _prepend(piece, " ")
        out += _split(piece, _find_matches(_gpt2(), piece.text), "Isolated") if use_regex else [piece]
    table = byte_to_char()
    spelled: list[Piece] = []
    for piece in out:
        data = piece.text.encode("utf-8", errors="surrogatepass")
        text = "".join(table[b] for b in data)
        spans: list[Span] | None = None
        if piece.spans is not None:
            spans = []
            for ch, span in zip(piece.text, piece.spans, strict=True):
                unit = units[0]
                units[0] += 1
                spans += [(span[0], span[1], unit)] * len(ch.encode("utf-8", errors="surrogatepass"))
        spelled.append(Piece(text, spans, piece.first))
    return spelled


def _metaspace(pieces: list[Piece], replacement: str, scheme: str, split: bool) -> list[Piece]:
    out: list[Piece] = []
    for piece in pieces:
        if " " in piece.text:
            piece = _edit(
                piece, [(replacement if ch == " " else ch, i, i + 1) for i, ch in enumerate(piece.text)]
            )
        # "first": the piece's first character comes from the first character of the whole text (as
        # tokenizers checks it, on the alignments: text stripped or removed before it does not count).
        at_start = piece.first and piece.spans is not None and bool(piece.spans) and piece.spans[0][0] == 0
        if not piece.text.startswith(replacement) and (
            scheme == "always" or (scheme == "first" and at_start)
        ):
            piece = _prepend(piece, replacement)
        if split:
            out += _split(piece, _find_chars(replacement.__eq__, piece.text), "MergedWithNext")
        else:
            out.append(piece)
    return out


def _is_numeric(ch: str) -> bool:
    """Rust's ``char::is_numeric``: the general categories Nd, Nl and No."""
    return unicodedata.category(ch) in ("Nd", "Nl", "No")


def _is_punctuation(ch: str) -> bool:
    """``tokenizers``' punctuation: ASCII punctuation or a character of a P* general category."""
    return (
        ("!" <= ch <= "/")
        or (":" <= ch <= "@")
        or ("[" <= ch <= "`")
        or ("{" <= ch <= "~")
        or (unicodedata.category(ch).startswith("P"))
    )


# ----------------------------------------------------------------------------------------------------------
# Reading the JSON
# ----------------------------------------------------------------------------------------------------------

Step = Callable[[list[Piece]], list[Piece]]


def compile_step_pattern(where: str, pattern: object) -> Any:
    """A ``Split`` or ``Replace`` pattern (``{"Regex": ...}`` or ``{"String": ...}``), compiled."""
    if isinstance(pattern, Mapping) and isinstance(pattern.get("String"), str) and pattern["String"]:
        # A literal string (Metaspace's " ", a .model's spaces) matches alike in ``re``, already imported.
        return re.compile(re.escape(pattern["String"]))
    import regex

    if isinstance(pattern, Mapping) and isinstance(pattern.get("String"), str):
        return regex.compile(regex.escape(pattern["String"]))
    if isinstance(pattern, Mapping) and isinstance(pattern.get("Regex"), str):
        try:
            return regex.compile(from_oniguruma(pattern["Regex"]), regex.MULTILINE)
        except (regex.error, ValueError) as exc:
            raise PipelineError(where, f"the regex does not compile ({exc}); fix or replace it") from None
    raise PipelineError(where, "expected {'Regex': '...'} or {'String': '...'}")


def _option(
    step: Mapping[str, Any], where: str, key: str, default: Any, kinds: type | tuple[type, ...]
) -> Any:
    value = step.get(key, default)
    if not isinstance(value, kinds):
        raise PipelineError(f"{where}.{key}", f"{value!r} is not a {getattr(kinds, '__name__', kinds)}")
    return value


def _behavior(step: Mapping[str, Any], where: str, default: str) -> str:
    behavior = step.get("behavior", default)
    if behavior not in BEHAVIORS:
        raise PipelineError(f"{where}.behavior", f"{behavior!r} is not one of {', '.join(BEHAVIORS)}")
    return str(behavior)


def _each(step: Callable[[Piece], Piece]) -> Step:
    return lambda pieces: [step(piece) for piece in pieces]


_FORMS = {"NFC": "NFC", "NFD": "NFD", "NFKC": "NFKC", "NFKD": "NFKD"}


def sequence_children(node: Mapping[str, Any], where: str, key: str) -> list[tuple[object, str]]:
    """The steps of a ``Sequence`` node (under ``key``: ``normalizers``, ``pretokenizers``, ``decoders``),
    each with the place that names it in an error.

    Example:
        >>> sequence_children({"type": "Sequence", "decoders": [{"type": "Fuse"}]}, "decoder", "decoders")
        [({'type': 'Fuse'}, 'decoder.decoders[0]')]
    """
    inner = node.get(key)
    if not isinstance(inner, list):
        raise PipelineError(f"{where}.{key}", "expected a list")
    return [(child, f"{where}.{key}[{n}]") for n, child in enumerate(inner)]


def _normalizer_steps(node: object, where: str) -> list[Step]:
    if node is None:
        return []
    if not isinstance(node, Mapping):
        raise PipelineError(where, "expected an object with a 'type'")
    kind = node.get("type")
    if kind == "Sequence":
        children = sequence_children(node, where, "normalizers")
        return [s for child, at in children for s in _normalizer_steps(child, at)]
    if kind in _FORMS:
        form = _FORMS[str(kind)]
        return [_each(lambda piece: _unicode_normalize(form, piece))]
    if kind == "Lowercase":
        return [_each(_lowercase)]
    if kind == "Strip":
        left = _option(node, where, "strip_left", True, bool)
        right = _option(node, where, "strip_right", True, bool)
        return [_each(lambda piece: _strip(piece, left, right))]
    if kind == "Replace":
        compiled = compile_step_pattern(f"{where}.pattern", node.get("pattern"))
        content = _option(node, where, "content", None, str)
        return [_each(lambda piece: _replace(piece, compiled, content))]
    if kind == "Prepend":
        text = _option(node, where, "prepend", None, str)
        return [_each(lambda piece: _prepend(piece, text))]
    raise PipelineError(
        where,
        f"normalizer {kind!r} is not supported (bpe-studio reads NFC, NFD, NFKC, NFKD, Lowercase, Strip, "
        "Replace, Prepend and Sequence)",
    )


def _pre_tokenizer_steps(node: object, where: str, units: list[int]) -> list[tuple[str, Step]]:
    if not isinstance(node, Mapping):
        raise PipelineError(where, "expected an object with a 'type'")
    kind = node.get("type")
    if kind == "Sequence":
        children = sequence_children(node, where, "pretokenizers")
        return [s for child, at in children for s in _pre_tokenizer_steps(child, at, units)]
    if kind == "Split":
        compiled = compile_step_pattern(f"{where}.pattern", node.get("pattern"))
        behavior = _behavior(node, where, "Isolated")
        invert = _option(node, where, "invert", False, bool)

        def split(pieces: list[Piece]) -> list[Piece]:
            out: list[Piece] = []
            for piece in pieces:
                parts = _find_matches(compiled, piece.text)
                if invert:
                    parts = [(a, b, not is_match) for a, b, is_match in parts]
                out += _split(piece, parts, behavior)
            return out

        return [("Split", split)]
    if kind == "Digits":
        individual = _option(node, where, "individual_digits", False, bool)
        how = "Isolated" if individual else "Contiguous"
        return [("Digits", lambda pieces: _split_chars(pieces, _is_numeric, how))]
    if kind == "Punctuation":
        behavior = _behavior(node, where, "Isolated")
        return [("Punctuation", lambda pieces: _split_chars(pieces, _is_punctuation, behavior))]
    if kind == "WhitespaceSplit":
        return [("WhitespaceSplit", lambda pieces: _split_chars(pieces, _is_whitespace, "Removed"))]
    if kind == "Whitespace":

        def whitespace(pieces: list[Piece]) -> list[Piece]:
            out: list[Piece] = []
            for piece in pieces:
                parts = [(a, b, not m) for a, b, m in _find_matches(_words(), piece.text)]
                out += _split(piece, parts, "Removed")
            return out

        return [("Whitespace", whitespace)]
    if kind == "ByteLevel":
        prefix = _option(node, where, "add_prefix_space", True, bool)
        use_regex = _option(node, where, "use_regex", True, bool)
        return [("ByteLevel", lambda pieces: _byte_level(pieces, prefix, use_regex, units))]
    if kind == "Metaspace":
        replacement = _option(node, where, "replacement", "▁", str)
        if len(replacement) != 1:
            raise PipelineError(f"{where}.replacement", f"{replacement!r} is not one character")
        scheme = node.get("prepend_scheme")
        if scheme is None:  # files written before prepend_scheme: add_prefix_space says always or never
            scheme = "always" if node.get("add_prefix_space", True) else "never"
        if scheme not in ("always", "first", "never"):
            raise PipelineError(f"{where}.prepend_scheme", f"{scheme!r} is not always, first or never")
        split_on = _option(node, where, "split", True, bool)
        return [("Metaspace", lambda pieces: _metaspace(pieces, replacement, str(scheme), split_on))]
    raise PipelineError(
        where,
        f"pre-tokenizer {kind!r} is not supported (bpe-studio reads Split, Digits, Punctuation, Whitespace, "
        "WhitespaceSplit, ByteLevel, Metaspace and Sequence)",
    )


def _has_first(node: object) -> bool:
    """Whether a pre-tokenizer holds a ``Metaspace`` with ``prepend_scheme: "first"``."""
    if not isinstance(node, Mapping):
        return False
    if node.get("type") == "Sequence":
        return any(_has_first(child) for child in node.get("pretokenizers") or [])
    return node.get("type") == "Metaspace" and node.get("prepend_scheme") == "first"


def _split_chars(pieces: list[Piece], test: Callable[[str], bool], behavior: str) -> list[Piece]:
    out: list[Piece] = []
    for piece in pieces:
        out += _split(piece, _find_chars(test, piece.text), behavior)
    return out


class Pipeline:
    """A ``tokenizer.json``'s normalizer and pre-tokenizer: text between added tokens -> pieces of bytes.

    Build one with :meth:`from_json`; :attr:`normalizer` and :attr:`pre_tokenizer` keep the JSON it was read
    from (for writing it back).
    """

    def __init__(
        self, normalizer: object, pre_tokenizer: object, steps: list[Step], kinds: list[str], units: list[int]
    ) -> None:
        self.normalizer = normalizer
        self.pre_tokenizer = pre_tokenizer
        self._steps = steps
        self._kinds = kinds
        self._units = units
        self._needs_spans = False

    @classmethod
    def from_json(cls, normalizer: object, pre_tokenizer: object, *, byte_level: bool = True) -> Pipeline:
        """Read the ``normalizer`` and ``pre_tokenizer`` entries of a ``tokenizer.json``.

        ``byte_level=False`` reads a SentencePiece-style pipeline (``Metaspace``, or ``Prepend`` and
        ``Replace``), whose pieces are characters for :class:`~bpe_studio.engine.encoding.pieces.PieceModel`:
        it must hold no ``ByteLevel`` step.

        Raises:
            PipelineError: A step is malformed or not supported, or the pre-tokenizer holds no ``ByteLevel``
                step (then the BPE would see characters, not bytes: it is not byte-level BPE).

        Example:
            >>> Pipeline.from_json({"type": "NFKC"}, {"type": "ByteLevel"}).describe()
            'normalizer NFKC; pre-tokenizer ByteLevel'
        """
        units = [0]
        normalizing = _normalizer_steps(normalizer, "normalizer")
        named = (
            _pre_tokenizer_steps(pre_tokenizer, "pre_tokenizer", units) if pre_tokenizer is not None else []
        )
        kinds = [kind for kind, _ in named]
        if not byte_level:
            if "ByteLevel" in kinds:
                raise PipelineError("pre_tokenizer", "ByteLevel in a SentencePiece-style (byte_fallback) BPE")
            steps = [*normalizing, *(step for _, step in named)]
            pieces = cls(normalizer, pre_tokenizer, steps, kinds, units)
            pieces._needs_spans = _has_first(pre_tokenizer)
            return pieces
        if kinds.count("ByteLevel") != 1:
            raise PipelineError(
                "pre_tokenizer",
                f"{kinds.count('ByteLevel')} ByteLevel steps; byte-level BPE needs exactly one (it spells "
                "the pieces' bytes for the BPE)",
            )
        if "Metaspace" in kinds[kinds.index("ByteLevel") :]:
            raise PipelineError(
                "pre_tokenizer",
                "Metaspace after ByteLevel writes '▁', which is not a byte of GPT-2's alphabet (tokenizers "
                "would find no token for it); put Metaspace before ByteLevel",
            )
        pipeline = cls(normalizer, pre_tokenizer, normalizing + [step for _, step in named], kinds, units)
        pipeline._needs_spans = _has_first(pre_tokenizer)
        return pipeline

    def describe(self) -> str:
        """The steps in one line, for people."""
        names = self.normalizer_names()
        return (f"normalizer {'+'.join(names)}; " if names else "") + "pre-tokenizer " + "+".join(self._kinds)

    def pre_tokenizer_names(self) -> list[str]:
        """The pre-tokenizer's steps, by type (none for a SentencePiece ``.model``'s pipeline).

        Example:
            >>> Pipeline.from_json(None, {"type": "Metaspace"}, byte_level=False).pre_tokenizer_names()
            ['Metaspace']
        """
        return list(self._kinds)

    def normalizer_names(self) -> list[str]:
        """The normalizer's steps, by type."""

        def walk(node: object) -> list[str]:
            if not isinstance(node, Mapping):
                return []
            if node.get("type") == "Sequence":
                return [name for child in node.get("normalizers") or [] for name in walk(child)]
            return [str(node.get("type"))]

        return walk(self.normalizer)

    def pieces(self, text: str, *, first: bool = True, align: bool = False) -> list[Piece]:
        """The pieces of ``text`` (the text between two added tokens), in order; none is empty.

        Args:
            text: The text.
            first: Whether ``text`` starts the whole input (``Metaspace``'s ``prepend_scheme: "first"``).
            align: Give each piece's :attr:`Piece.spans` (offsets in ``text``).
        """
        if not text:
            return []
        track = align or self._needs_spans
        spans: list[Span] | None = [(i, i + 1) for i in range(len(text))] if track else None
        pieces = [Piece(text, spans, first)]
        self._units[0] = 0
        for step in self._steps:
            pieces = [piece for piece in step(pieces) if piece.text]
        return pieces
