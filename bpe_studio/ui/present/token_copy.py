"""How the playground writes an encoding as text for the clipboard: ids as JSON, tokens as text, tokens as
TSV. Qt-free.

Example:
    >>> format_ids([15, 7])
    '[15, 7]'
    >>> id_positions([15, 7])
    [(1, 3), (5, 6)]
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .token_format import hex_bytes
from .token_layout import int_array, join_in_slices


def format_ids(ids: Sequence[int]) -> str:
    """The ids as a JSON list (what the ids box shows and its Copy button copies).

    Example:
        >>> format_ids([1, 2])
        '[1, 2]'
    """
    return json.dumps(list(ids))


def id_positions(ids: Sequence[int]) -> list[tuple[int, int]]:
    """Where each id is in :func:`format_ids`'s text: (start, end) character offsets.

    Example:
        >>> text = format_ids([256, 4])
        >>> [text[a:b] for a, b in id_positions([256, 4])]
        ['256', '4']
    """
    found: list[tuple[int, int]] = []
    position = 1  # after "["
    for token_id in ids:
        end = position + len(str(token_id))
        found.append((position, end))
        position = end + 2  # ", "
    return found


#: Ids per paragraph of the ids box's text (see :func:`ids_text`).
IDS_PER_LINE = 1000


@dataclass(frozen=True)
class IdsText:
    """The ids box's text (:func:`format_ids`) and where each id is in it, as two lists of offsets.

    Attributes:
        text: The ids as a JSON list (a line break after every :data:`IDS_PER_LINE` ids).
        starts: Each id's first character in ``text``.
        ends: One past each id's last character.
    """

    text: str
    starts: list[int]
    ends: list[int]


def ids_text(ids: Sequence[int]) -> IdsText:
    """:func:`format_ids` and :func:`id_positions` at once, for a long list (the playground computes it on its
    worker thread; two lists of ints rather than a tuple per id, which the garbage collector would visit).

    Example:
        >>> found = ids_text([256, 4])
        >>> found.text, list(found.starts), list(found.ends)
        ('[256, 4]', [1, 6], [4, 7])
    """
    if not ids:
        return IdsText("", [], [])
    lengths = np.fromiter((len(str(i)) for i in ids), dtype=np.int64, count=len(ids))
    ends = np.cumsum(lengths + 2) - 1  # each id is followed by ", " (2 characters); the text opens with "["
    starts = ends - lengths
    # format_ids' text with a line break instead of the space after every IDS_PER_LINE-th id (the same
    # length, still JSON): Qt lays out a paragraph as a whole, and one of a million ids froze the window for
    # seconds. Made a line at a time: one json.dumps of 800,000 ids held Python's lock for 100 ms on the
    # worker thread, a wait for the GUI thread (see token_layout.SLICE).
    lines = [", ".join(map(str, ids[i : i + IDS_PER_LINE])) for i in range(0, len(ids), IDS_PER_LINE)]
    text = "[" + join_in_slices(lines, ",\n") + "]"
    return IdsText(text, int_array(starts), int_array(ends))


def tokens_text(labels: Sequence[str]) -> str:
    """The tokens one per line, spelled as the Tokens view shows them (``·`` a space, ``<0xE2>`` a byte).

    Example:
        >>> tokens_text(["Hello", "·world"])
        'Hello\\n·world\\n'
    """
    return "".join(f"{label}\n" for label in labels)


def tokens_tsv(
    ids: Sequence[int], labels: Sequence[str], data: Sequence[bytes], spans: Sequence[tuple[int, int]]
) -> str:
    """The tokens as tab-separated values with a header row: position, id, token, bytes in hex, and the
    characters of the text it covers (start and end offsets, in code points).

    Example:
        >>> rows = tokens_tsv([72, 256], ["H", "i!"], [b"H", b"i!"], [(0, 1), (1, 3)]).splitlines()
        >>> [row.split("\\t") for row in rows[1:]]
        [['0', '72', 'H', '48', '0', '1'], ['1', '256', 'i!', '69 21', '1', '3']]
    """
    rows = ["index\tid\ttoken\thex\tstart\tend"]
    for index, (token_id, label, token, (start, end)) in enumerate(
        zip(ids, labels, data, spans, strict=True)
    ):
        # A label never holds a tab or a line break (token_label draws them as → and ↵).
        rows.append(f"{index}\t{token_id}\t{label}\t{hex_bytes(token)}\t{start}\t{end}")
    return "".join(f"{row}\n" for row in rows)


__all__ = ["IdsText", "format_ids", "id_positions", "ids_text", "tokens_text", "tokens_tsv"]
