"""How the engine and its worker processes talk: length-prefixed messages over pipes, failures carried back
as data, and count tables as frames of raw bytes (no pickle for the large part).

Example:
    >>> import io
    >>> pipe = io.BytesIO()
    >>> write_message(pipe, ("task", 1))
    >>> _ = pipe.seek(0)
    >>> read_message(pipe)
    ('task', 1)
    >>> decode_table(encode_table({"ab": 2, "c": 1}))
    {'ab': 2, 'c': 1}
"""

from __future__ import annotations

import itertools
import struct
from array import array
from collections.abc import Sequence
from typing import Any, NoReturn

from ..corpus.plan import CorpusChangedError, CorpusDecodeError
from ..corpus.sources import BadRecordError


class WorkerCrashedError(RuntimeError):
    """A counting worker process died without reporting its result."""


_HEADER = struct.Struct("<Q")


def write_message(stream: Any, obj: object) -> None:
    """Send one length-prefixed pickle over a binary stream (all of it, even on a raw pipe)."""
    import pickle  # here: only worker processes talk (1 ms a run counting in-process never needs)

    payload = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    data = memoryview(_HEADER.pack(len(payload)) + payload)
    while data:
        written = stream.write(data)
        data = data[written if written is not None else len(data) :]
    stream.flush()


def _read_exact(stream: Any, n: int) -> bytearray:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = stream.readinto(view[got:])
        if not k:
            raise EOFError("the other side closed the pipe")
        got += k
    return buf


def read_message(stream: Any) -> Any:
    """Receive one length-prefixed pickle from a binary stream; ``EOFError`` if the stream ended."""
    import pickle

    (size,) = _HEADER.unpack(_read_exact(stream, _HEADER.size))
    return pickle.loads(_read_exact(stream, size))


def failure_message(exc: Exception) -> tuple[Any, ...]:
    """What a worker sends its parent when a task fails (:func:`raise_failure` raises it again there).

    Example:
        >>> failure_message(CorpusChangedError("a.txt", "it grew"))
        ('changed', 'a.txt', 'it grew')
    """
    if isinstance(exc, CorpusDecodeError):
        return ("decode_error", exc.path, exc.offset, exc.reason, exc.where)
    if isinstance(exc, CorpusChangedError):
        return ("changed", exc.path, exc.detail)
    if isinstance(exc, BadRecordError):
        return ("bad_record", exc.path, exc.where, exc.reason, exc.fix)
    return ("error", f"{type(exc).__name__}: {exc}")


def raise_failure(message: Sequence[Any], *, role: str) -> NoReturn:
    """Raise, in the parent, the error a worker reported with :func:`failure_message`.

    ``role`` names the worker in an unexpected error ("counting", "encoding").
    """
    kind = message[0]
    if kind == "decode_error":
        raise CorpusDecodeError(*message[1:])
    if kind == "changed":
        raise CorpusChangedError(message[1], message[2])
    if kind == "bad_record":
        raise BadRecordError(*message[1:])
    raise WorkerCrashedError(f"a{'n' if role[0] in 'aeiou' else ''} {role} worker failed: {message[1]}")


# A worker hands its table back as one frame of raw bytes rather than a pickle: a pickle of 500,000 small
# strings costs the parent ~0.2 s to load (a serial tail, as it waits for the workers' last chunks), and
# this frame carries only numbers and text, nothing that could run code. Layout, in the machine's byte
# order (the parent and its workers share a machine): a header, the keys' UTF-8 text, then one signed
# 64-bit count per key. The keys are separated by NUL when none holds one (text.split is the fastest way
# back to a list of strings); otherwise the text is followed by one unsigned 64-bit length per key.
_TABLE_HEADER = struct.Struct("<QQ?")  # number of keys, bytes of key text, keys separated by NUL


_ITEM = 8  # bytes of one length and of one count


def encode_table(counts: dict[str, int]) -> bytes:
    """One worker's table of ``str`` pre-tokens as a frame that :func:`decode_table` reads.

    Example:
        >>> decode_table(encode_table({"a": 2, "é": 1}))
        {'a': 2, 'Ã©': 1}
    """
    keys = list(counts)
    values = array("q", counts.values()).tobytes()
    text = "\0".join(keys)
    separated = not keys or text.count("\0") == len(keys) - 1
    if separated:
        data = text.encode("utf-8")
        return b"".join((_TABLE_HEADER.pack(len(keys), len(data), True), data, values))
    lengths = array("Q", (len(k.encode("utf-8")) for k in keys)).tobytes()
    data = "".join(keys).encode("utf-8")
    return b"".join((_TABLE_HEADER.pack(len(keys), len(data), False), data, lengths, values))


def decode_table(frame: bytes | bytearray) -> dict[str, int]:
    """The table of a frame from :func:`encode_table`, keyed by UTF-8 bytes spelled as latin-1 (the merge
    loop's form).

    Raises:
        ValueError: The frame is not what its header declares (a worker sent something else).

    Example:
        >>> decode_table(encode_table({" the": 3, "a\\0b": 1}))
        {' the': 3, 'a\\x00b': 1}
    """
    view = memoryview(frame)
    if len(view) < _TABLE_HEADER.size:
        raise ValueError("a count table frame is shorter than its header")
    n, size, separated = _TABLE_HEADER.unpack(view[: _TABLE_HEADER.size])
    start = _TABLE_HEADER.size
    if len(view) != start + size + (1 if separated else 2) * _ITEM * n:
        raise ValueError(f"a count table frame holds {len(view):,} bytes, not the {n:,} keys it declares")
    text = bytes(view[start : start + size]).decode("latin-1")
    values = array("q")
    values.frombytes(view[len(view) - _ITEM * n :])
    if separated:
        keys = text.split("\0") if n else []
    else:
        lengths = array("Q")
        lengths.frombytes(view[start + size : start + size + _ITEM * n])
        ends = list(itertools.accumulate(lengths))
        if (ends[-1] if ends else 0) != size:
            raise ValueError("a count table frame's key lengths do not add up to its text")
        keys = [text[a:b] for a, b in zip(itertools.chain((0,), ends), ends, strict=False)]
    if len(keys) != n:
        raise ValueError(f"a count table frame holds {len(keys):,} keys, not the {n:,} it declares")
    table = dict(zip(keys, values, strict=True))
    if len(table) != n:
        raise ValueError("a count table frame holds the same key twice")
    return table


def write_frame(stream: Any, data: bytes) -> None:
    """Send one length-prefixed frame of raw bytes (see :func:`write_message`)."""
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        written = stream.write(view)
        view = view[written if written is not None else len(view) :]
    stream.flush()


def read_frame(stream: Any, limit: int) -> bytearray:
    """Receive one length-prefixed frame of raw bytes, refusing one that declares more than ``limit``."""
    (size,) = _HEADER.unpack(_read_exact(stream, _HEADER.size))
    if size > limit:
        raise ValueError(f"a frame declares {size:,} bytes, more than the {limit:,} announced")
    return _read_exact(stream, size)
