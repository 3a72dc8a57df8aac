"""How a text is laid out in a tokenizer's tokens, for the token views. Qt-free.

* :class:`SpecialMode`: how the playground treats special tokens in its text.
* :func:`encode_text`: an :class:`Encoding` of a text, with the token spans grouped into display units
  (a character whose bytes are split across tokens is one unit) and positions in UTF-16 code units, which
  is how ``QTextDocument`` counts.
* :func:`token_count_curve`: the engine's token count at every cut, as arrays for the chart, with the
  special-token mode of the playground.
"""

from __future__ import annotations

import array
import itertools
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, cast, overload

import numpy as np
from numpy.typing import NDArray

from ...engine import DisallowedSpecialTokenError, Tokenizer, TokenSpan
from ...engine.encoding import analysis
from .token_format import text_label, token_label
from .tokenizer_info import LoadedTokenizer

Check = Callable[[], None]
"""Called now and then by long computations; raises to stop them (see ``TaskContext.check``)."""


def _no_check() -> None:
    return None


# ----------------------------------------------------------------------------------------------------------
# Special tokens
# ----------------------------------------------------------------------------------------------------------


class SpecialMode(StrEnum):
    """How the playground treats special tokens in its text."""

    RECOGNISED = "recognised"
    """Each special token is one token (``allowed_special="all"``)."""
    ORDINARY = "ordinary"
    """Special tokens are encoded as ordinary text (``encode_ordinary``)."""
    DISALLOWED = "disallowed"
    """A special token in the text is an error (tiktoken's default)."""


def encode_options(mode: SpecialMode) -> dict[str, Any]:
    """The keyword arguments of ``Tokenizer.encode`` for a mode.

    Example:
        >>> encode_options(SpecialMode.ORDINARY)
        {'allowed_special': (), 'disallowed_special': ()}
    """
    if mode is SpecialMode.RECOGNISED:
        return {"allowed_special": "all", "disallowed_special": ()}
    if mode is SpecialMode.ORDINARY:
        return {"allowed_special": (), "disallowed_special": ()}
    return {"allowed_special": (), "disallowed_special": "all"}


def disallowed_message(exc: DisallowedSpecialTokenError) -> str:
    """A short message for a disallowed special token (shown instead of an exception)."""
    return (
        f"The text holds the special token {exc.token} at character {exc.position:,}, and special tokens "
        "are disallowed. Choose “Recognised” to encode it as one token, or “Ordinary text”."
    )


# ----------------------------------------------------------------------------------------------------------
# Encodings grouped into display units
# ----------------------------------------------------------------------------------------------------------

#: Unit kinds.
NORMAL, SPECIAL, SPLIT = 0, 1, 2


def utf16_positions(text: str) -> list[int] | None:
    """UTF-16 offset of each code point offset 0..len(text), or None when the two agree (no astral chars).

    Example:
        >>> utf16_positions("a🙃b")
        [0, 1, 3, 4]
    """
    if text.isascii() or all(ord(ch) <= 0xFFFF for ch in text):
        return None
    wide = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32) > 0xFFFF
    return [0, *np.cumsum(1 + wide.astype(np.int64)).tolist()]


class IntArray(array.array):  # type: ignore[type-arg]
    """64-bit ints in one block of memory, equal to the list of the same ints.

    The layout's long lists of positions (hundreds of thousands for a pasted megabyte) as Python lists are
    each a container that Python's garbage collector visits item by item, on the GUI thread: ~150 ms a
    collection for the dozen lists of 400,000 Chinese characters. An array is no container.

    Example:
        >>> IntArray([3, 5]) == [3, 5], IntArray([3, 5])[1]
        (True, 5)
    """

    __slots__ = ()

    def __new__(cls, values: Iterable[int] = ()) -> IntArray:
        found = cast(IntArray, super().__new__(cls, "q"))
        # In slices of SLICE: filled in one call, a list of 800,000 positions held Python's lock for 45 ms on
        # the playground's worker thread, all that time a wait for the GUI thread (see SLICE).
        if isinstance(values, np.ndarray):
            for i in range(0, len(values), SLICE):
                found.frombytes(values[i : i + SLICE].astype(np.int64).tobytes())
            return found
        items = iter(values)
        while chunk := list(itertools.islice(items, SLICE)):
            found.extend(chunk)
        return found

    def __eq__(self, other: object) -> bool:
        if isinstance(other, list):
            return bool(self.tolist() == other)
        return bool(super().__eq__(other))

    __hash__ = None


#: Items a worker thread's bulk operation on a long text (a join, filling an array) handles per call into C.
#: Such a call holds Python's lock throughout, and the GUI thread waits for that lock at each of its own
#: calls into Python: one join of the two million parts of 400,000 Chinese characters' Tokens view held it
#: for 200 ms, a frozen window. A slice of 65,536 takes about a millisecond.
SLICE = 65_536


def join_in_slices(parts: Sequence[str], separator: str = "") -> str:
    """``separator.join(parts)``, joined :data:`SLICE` parts at a time (see there: the GUI thread waits less).

    Example:
        >>> join_in_slices(["a", "b", "c"], ", ")
        'a, b, c'
    """
    if len(parts) <= SLICE:
        return separator.join(parts)
    return separator.join([separator.join(parts[i : i + SLICE]) for i in range(0, len(parts), SLICE)])


def int_array(values: Iterable[int]) -> list[int]:
    """``values`` as an :class:`IntArray`, typed as the list it stands for (indexing, ``len``, iteration,
    ``bisect`` and ``==`` with a list behave alike)."""
    return cast(list[int], IntArray(values))


class SpanArray(Sequence[TokenSpan]):
    """Token spans kept as four arrays, handed out as :class:`~bpe_studio.engine.TokenSpan` one at a time.

    A list of a million ``TokenSpan`` objects is a million objects for Python's cyclic garbage collector,
    which runs on the GUI thread (``ui/app/tasks.MainThreadGarbageCollector``): a collection that met the
    spans of a large pasted text stalled the window for over a second. Four arrays are four objects.

    Example:
        >>> spans = SpanArray.of([TokenSpan(5, 0, 1), TokenSpan(7, 1, 3, True)])
        >>> spans[1], spans.ids, len(spans), spans == [TokenSpan(5, 0, 1), TokenSpan(7, 1, 3, True)]
        (TokenSpan(id=7, start=1, end=3, partial=True), [5, 7], 2, True)
    """

    __slots__ = ("_ends", "_ids", "_partial", "_starts")

    def __init__(
        self,
        ids: NDArray[np.int64],
        starts: NDArray[np.int64],
        ends: NDArray[np.int64],
        partial: NDArray[np.bool_],
    ) -> None:
        self._ids, self._starts, self._ends, self._partial = ids, starts, ends, partial

    @classmethod
    def of(cls, spans: Sequence[TokenSpan]) -> SpanArray:
        """The arrays of a list of spans."""
        n = len(spans)
        ids = np.fromiter((s.id for s in spans), dtype=np.int64, count=n)
        starts = np.fromiter((s.start for s in spans), dtype=np.int64, count=n)
        ends = np.fromiter((s.end for s in spans), dtype=np.int64, count=n)
        partial = np.fromiter((s.partial for s in spans), dtype=np.bool_, count=n)
        return cls(ids, starts, ends, partial)

    @property
    def ids(self) -> list[int]:
        """The token ids."""
        found: list[int] = self._ids.tolist()
        return found

    @property
    def starts(self) -> list[int]:
        """Each token's first character (code point offset)."""
        found: list[int] = self._starts.tolist()
        return found

    @property
    def ends(self) -> list[int]:
        """One past each token's last character."""
        found: list[int] = self._ends.tolist()
        return found

    def __len__(self) -> int:
        return len(self._ids)

    @overload
    def __getitem__(self, index: int) -> TokenSpan: ...

    @overload
    def __getitem__(self, index: slice) -> list[TokenSpan]: ...

    def __getitem__(self, index: int | slice) -> TokenSpan | list[TokenSpan]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return TokenSpan(
            int(self._ids[index]),
            int(self._starts[index]),
            int(self._ends[index]),
            bool(self._partial[index]),
        )

    def __iter__(self) -> Iterator[TokenSpan]:
        for id_, start, end, partial in zip(
            self._ids.tolist(),
            self._starts.tolist(),
            self._ends.tolist(),
            self._partial.tolist(),
            strict=True,
        ):
            yield TokenSpan(id_, start, end, partial)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SpanArray):
            return len(self) == len(other) and all(
                np.array_equal(a, b)
                for a, b in zip(
                    (self._ids, self._starts, self._ends, self._partial),
                    (other._ids, other._starts, other._ends, other._partial),
                    strict=True,
                )
            )
        if isinstance(other, Sequence):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"SpanArray({len(self)} spans)"


def _empty_spans() -> SpanArray:
    return SpanArray.of([])


#: Characters of scripts written without spaces between words (Han, kana, Thai, Lao, Khmer, Myanmar, Tibetan):
#: in such text whitespace does not separate words, so "tokens per word" would mean nothing.
_UNSPACED = re.compile(
    "[\u0e00-\u0eff\u0f00-\u0fff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf"
    "\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]"
)


def word_count(text: str) -> int | None:
    """The number of whitespace-separated words, or None when a tenth or more of the text's non-space
    characters belong to scripts written without spaces (Chinese, Japanese, Thai...), where whitespace
    does not mark words.

    Example:
        >>> word_count("hello big world"), word_count("我们今天去公园 and more")
        (3, None)
    """
    # A SLICE of the text at a time: on the playground's worker thread, each call into C holds Python's lock
    # (see SLICE), and one findall over 400,000 Chinese characters took 40 ms.
    words = letters = unspaced = 0
    for start in range(0, len(text), SLICE):
        piece = text[start : start + SLICE]
        split = piece.split()
        words += len(split)
        letters += sum(map(len, split))
        unspaced += len(_UNSPACED.findall(piece))
        if start and not piece[0].isspace() and not text[start - 1].isspace():
            words -= 1  # a word across the cut, counted in both slices
    if letters and unspaced * 10 >= letters:
        return None
    return words


@dataclass
class Encoding:
    """A text encoded by one tokenizer, laid out for display.

    Token spans (code point offsets, from ``encode_with_offsets``) are grouped into *units*: a token, or the
    tokens that share a character whose bytes they split (e.g. the three GPT-2 tokens of ``"🙃"``). Units
    never overlap and each character of the text belongs to at most one.

    Attributes:
        text: The encoded text.
        tokenizer: The tokenizer that encoded it (a cut of the loaded one when the slider is not at the end).
        merges: How many merges that tokenizer has.
        spans: The tokens and their character spans (a :class:`SpanArray`).
        error: A message instead of tokens (a disallowed special token), or empty.
        error_span: The characters the error is about, if any.
        unit_start, unit_end: Each unit's characters, in UTF-16 positions of the text.
        unit_first: Index of each unit's first token; ``unit_first[u + 1]`` is one past its last.
        unit_kind: ``NORMAL``, ``SPECIAL`` or ``SPLIT`` per unit.
        labels: Each token spelled for the decoded-bytes view.
        strip_text: The decoded-bytes view's text: the labels in order, with a line break after each token
            that ends with a newline.
        label_start, label_end: Each token's label in UTF-16 positions of ``strip_text``.
        byte_count: UTF-8 bytes of the text.
        words: Whitespace-separated words of the text, or None for text in scripts written without spaces
            (see :func:`word_count`).
        token_kind: ``NORMAL``, ``SPECIAL`` or ``SPLIT`` per token: the kind of its unit.
    """

    text: str
    tokenizer: Tokenizer | None
    merges: int = 0
    spans: SpanArray = field(default_factory=_empty_spans)
    error: str = ""
    error_span: tuple[int, int] | None = None
    unit_start: list[int] = field(default_factory=list)
    unit_end: list[int] = field(default_factory=list)
    unit_first: list[int] = field(default_factory=lambda: [0])
    unit_kind: list[int] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    strip_text: str = ""
    label_start: list[int] = field(default_factory=list)
    label_end: list[int] = field(default_factory=list)
    byte_count: int = 0
    words: int | None = 0
    token_kind: list[int] = field(default_factory=list)

    @property
    def ids(self) -> list[int]:
        """The token ids."""
        return self.spans.ids

    @property
    def unit_count(self) -> int:
        """The number of display units."""
        return len(self.unit_start)

    def unit_colours(self, colours: int) -> list[int]:
        """A colour number per unit that matches its first token's (token ``t`` has ``t % colours``), so the
        text and the decoded-bytes view agree, except that neighbouring units never share a colour."""
        numbers: list[int] = []
        previous = -1
        for first in self.unit_first[:-1]:
            number = first % colours
            if number == previous:
                number = (number + 1) % colours
            numbers.append(number)
            previous = number
        return numbers

    def unit_tokens(self, unit: int) -> range:
        """The token indices of a unit."""
        return range(self.unit_first[unit], self.unit_first[unit + 1])

    def unit_of_token(self, token: int) -> int:
        """The unit a token belongs to."""
        from bisect import bisect_right

        return bisect_right(self.unit_first, token) - 1

    def unit_at(self, position: int) -> int:
        """The unit holding the character at a UTF-16 position of the text, or -1."""
        from bisect import bisect_right

        unit = bisect_right(self.unit_start, position) - 1
        if unit >= 0 and position < self.unit_end[unit]:
            return unit
        return -1

    def token_at_label(self, position: int) -> int:
        """The token whose label holds a UTF-16 position of ``strip_text``, or -1."""
        from bisect import bisect_right

        token = bisect_right(self.label_start, position) - 1
        if token >= 0 and position < self.label_end[token]:
            return token
        return -1


def _len16(text: str) -> int:
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def encode_text(
    tokenizer: Tokenizer | None,
    text: str,
    mode: SpecialMode = SpecialMode.RECOGNISED,
    *,
    merges: int = 0,
    check: Check = _no_check,
    add_special_tokens: bool = True,
) -> Encoding:
    """Encode a text and lay it out for display (see :class:`Encoding`).

    A disallowed special token gives an encoding with ``error`` set, not an exception. With
    ``add_special_tokens=False`` the tokenizer's template (BOS/EOS around every text) is left out, as for a
    rendered chat, which holds its own.
    """
    encoding = Encoding(
        text,
        tokenizer,
        merges=merges,
        byte_count=len(text.encode("utf-8", "replace")),
        words=word_count(text),
    )
    if tokenizer is None:
        return encoding
    try:
        spans = tokenizer.encode_with_offsets(
            text, **encode_options(mode), add_special_tokens=add_special_tokens
        )
    except DisallowedSpecialTokenError as exc:
        encoding.error = disallowed_message(exc)
        encoding.error_span = (exc.position, exc.position + len(exc.token))
        return encoding
    check()
    encoding.spans = SpanArray.of(spans)
    special_ids = (
        frozenset(tokenizer.special_tokens.values()) if mode is SpecialMode.RECOGNISED else frozenset()
    )
    pos16 = utf16_positions(text)

    def at16(offset: int) -> int:
        return offset if pos16 is None else pos16[offset]

    starts, ends, firsts, kinds = (
        encoding.unit_start,
        encoding.unit_end,
        encoding.unit_first,
        encoding.unit_kind,
    )
    firsts.clear()
    end = -1
    for index, span in enumerate(spans):
        if span.start < end:  # shares a character with the unit before: a split character
            if span.end > end:
                end = span.end
                ends[-1] = at16(end)
            kinds[-1] = SPLIT
            continue
        starts.append(at16(span.start))
        end = span.end
        ends.append(at16(end))
        firsts.append(index)
        kinds.append(SPECIAL if span.id in special_ids and span.end - span.start > 0 else NORMAL)
    firsts.append(len(spans))
    token_kind = encoding.token_kind
    for unit, kind in enumerate(kinds):
        token_kind.extend([kind] * (firsts[unit + 1] - firsts[unit]))
    check()

    token_bytes = tokenizer.token_bytes
    labels = encoding.labels
    parts: list[str] = []
    label_start, label_end = encoding.label_start, encoding.label_end
    position = 0
    for span in spans:
        if span.id in special_ids:
            label = text_label(text[span.start : span.end])
            ends_line = False
        else:
            data = token_bytes(span.id)
            label = token_label(data)
            ends_line = data.endswith(b"\n")
        labels.append(label)
        parts.append(label)
        label_start.append(position)
        position += _len16(label)
        label_end.append(position)
        if ends_line:
            parts.append("\n")
            position += 1
    encoding.strip_text = join_in_slices(parts)
    for name in (
        "unit_start",
        "unit_end",
        "unit_first",
        "unit_kind",
        "label_start",
        "label_end",
        "token_kind",
    ):
        setattr(encoding, name, int_array(getattr(encoding, name)))  # no containers for the collector
    del spans  # the TokenSpan objects die here, on this thread, before any garbage collection meets them
    return encoding


# ----------------------------------------------------------------------------------------------------------
# Token count at every vocab size
# ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Curve:
    """The number of tokens of a text at every cut of a tokenizer, as arrays for the chart.

    Attributes:
        vocab_sizes: The vocab size of the cut after ``k`` merges, for ``k`` = 0..merge count.
        counts: The number of tokens of the text with that cut.
        error: Why there is no curve (a disallowed special token), or empty.
    """

    vocab_sizes: NDArray[np.int64]
    counts: NDArray[np.int64]
    error: str = ""


def token_count_curve(
    loaded: LoadedTokenizer,
    text: str,
    mode: SpecialMode = SpecialMode.RECOGNISED,
    *,
    check: Check = _no_check,
) -> Curve:
    """How many tokens ``text`` has with each cut of the tokenizer: the engine's
    :func:`~bpe_studio.engine.encoding.analysis.token_count_curve`, with a disallowed special token reported
    in
    ``error`` instead of raised."""
    index = loaded.index
    try:
        found = analysis.token_count_curve(
            loaded.tokenizer, text, index=index, check=check, **encode_options(mode)
        )
    except DisallowedSpecialTokenError as exc:
        sizes = np.asarray(index.vocab_sizes(), dtype=np.int64)
        return Curve(sizes, np.zeros_like(sizes), disallowed_message(exc))
    return Curve(np.asarray(found.vocab_sizes, dtype=np.int64), np.asarray(found.counts, dtype=np.int64))


__all__ = [
    "NORMAL",
    "SLICE",
    "SPECIAL",
    "SPLIT",
    "Curve",
    "Encoding",
    "IntArray",
    "SpanArray",
    "SpecialMode",
    "disallowed_message",
    "encode_options",
    "encode_text",
    "int_array",
    "join_in_slices",
    "token_count_curve",
    "utf16_positions",
    "word_count",
]
