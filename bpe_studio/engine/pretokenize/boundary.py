"""Where text can be cut without changing the pre-tokens of any preset pattern (gpt2, cl100k, o200k): the
rules, each written once here, and the forms the callers need.

The *newline boundary* is the position after a printable ASCII character and a ``"\\n"``, before an ASCII
letter. It is the one rule the tokenizer, the pre-tokenizer and the native encoder cut text at:

* :data:`NEWLINE_BOUNDARY_BYTES`: the rule as a ``bytes`` pattern, among the chunk boundaries of training
  (:data:`PRESET_BOUNDARIES`, used by ``corpus.plan``);
* :func:`split_at_newline_boundaries`: ``str`` text cut at every one (``pretokenize.split``);
* :func:`last_newline_boundary`: the last one before a limit (``Tokenizer.encode_iterable``);
* rust/src/encode.rs ``safe_cut`` writes it once more in Rust (the first one at or after a position, to cut
  long texts into blocks); tests/data/newline_boundaries.json holds cases both sides are tested against.

:data:`PRESET_BOUNDARIES` adds the other certain chunk boundaries (a space after a character that is not
whitespace, a change between letters, digits and punctuation in ASCII), which training finds on bytes only;
:func:`may_hold_preset_boundary` tells at C speed that a stretch of bytes holds none.
Why each is certain, for every preset, is shown in the docstring of :mod:`bpe_studio.engine.corpus.plan`.

Example:
    >>> split_at_newline_boundaries("end.\\nNext line\\n\\nnot here")
    ['end.\\n', 'Next line\\n\\nnot here']
    >>> last_newline_boundary("ab.\\ncd.\\n\\nef", 20)
    4
"""

from __future__ import annotations

import re

# The newline boundary, written once; the str and bytes patterns below are compiled from it.
_NEWLINE_BOUNDARY = r"(?<=[!-~]\n)(?=[A-Za-z])"

#: The newline boundary as a zero-width ``bytes`` pattern (the character before the newline and the letter
#: after it are ASCII, so it is found on UTF-8 bytes exactly as on the text).
NEWLINE_BOUNDARY_BYTES = _NEWLINE_BOUNDARY.encode("ascii")

_PUNCT = rb"!-/:-@\[-`{-~"  # printable ASCII that is neither a letter, a digit nor a space

#: Zero-width ``bytes`` patterns where every preset pattern certainly ends a pre-token (the chunk boundaries
#: of training for the presets; see :mod:`bpe_studio.engine.corpus.plan`).
PRESET_BOUNDARIES = (
    NEWLINE_BOUNDARY_BYTES,
    # A space after printable ASCII, or after a non-ASCII character other than Unicode whitespace.
    rb"(?<=[!-~])(?= )",
    rb"(?<=[\x80-\xbf])(?<!\xc2\x85)(?<!\xc2\xa0)(?<!\xe1\x9a\x80)(?<!\xe2\x80[\x80-\x8a\xa8\xa9\xaf])"
    rb"(?<!\xe2\x81\x9f)(?<!\xe3\x80\x80)(?= )",
    # A letter before a digit or punctuation other than "'"; a digit before a letter or punctuation;
    # punctuation before a digit.
    rb"(?<=[A-Za-z])(?=[0-9!-&(-/:-@\[-`{-~])",
    rb"(?<=[0-9])(?=[A-Za-z" + _PUNCT + rb"])",
    rb"(?<=[" + _PUNCT + rb"])(?=[0-9])",
)

# Each byte's class for :func:`may_hold_preset_boundary`: ASCII letters, digits, the space, the newline, other
# ASCII whitespace, other printable ASCII (punctuation), other control bytes, and every byte of a non-ASCII
# character. Every boundary of PRESET_BOUNDARIES lies between two bytes of different classes: a newline and
# a letter; a printable or non-ASCII byte and a space; a letter and a digit or punctuation; a digit and a
# letter or punctuation; punctuation and a digit.
_BYTE_CLASSES = bytes(
    ord(
        "L" if chr(b).isascii() and chr(b).isalpha()
        else "D" if chr(b).isdigit() and b < 128
        else "S" if b == 0x20
        else "N" if b == 0x0A
        else "W" if b in b"\t\r\x0b\x0c"
        else "P" if 0x21 <= b <= 0x7E
        else "C" if b < 128
        else "H"
    )
    for b in range(256)
)


def may_hold_preset_boundary(window: bytes | bytearray | memoryview) -> bool:
    """False when no position inside ``window`` (between two of its bytes) can be one of
    :data:`PRESET_BOUNDARIES`: its bytes are all of one class (one letter repeated, a run of digits, of
    spaces, of newlines, or text without ASCII). A quick test (``bytes.translate``, in C) that lets the chunk
    planner pass over such stretches without running the look-behind patterns at every byte.

    Example:
        >>> [may_hold_preset_boundary(b) for b in (b"aaaa", "中文".encode(), b"   ", b"a 1")]
        [False, False, False, True]
    """
    classes = bytes(window).translate(_BYTE_CLASSES)
    return bool(classes.strip(classes[:1]))


_NEWLINE = re.compile(_NEWLINE_BOUNDARY)
_AT = _NEWLINE.match  # a match at pos: the look-behind still sees the characters before pos

#: The pieces of a ``str`` cut at every newline boundary (none empty; joined, they give the text).
split_at_newline_boundaries = _NEWLINE.split


def last_newline_boundary(text: str, limit: int) -> int:
    """The last newline boundary of ``text`` at or before ``limit``, or 0 when there is none.

    Every boundary follows a ``"\\n"``, so only the positions after one are tried, from the end.

    Example:
        >>> last_newline_boundary("ab.\\ncd.\\nef", 6), last_newline_boundary("a\\n\\nb", 9)
        (4, 0)
    """
    if limit < 2:
        return 0  # (and a negative limit would count from the end in rfind)
    j = text.rfind("\n", 0, limit)
    while j >= 0:
        if _AT(text, j + 1) is not None:
            return j + 1
        j = text.rfind("\n", 0, j)
    return 0
