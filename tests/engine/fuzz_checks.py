"""The checks behind the fuzz harnesses in ``fuzz/`` and their replayed corpus (test_fuzz_cases.py).

Each ``check_*`` function takes one input, runs the native kernel (``bpe_studio._native``) and the
pure-Python reference on it, and raises AssertionError when they disagree or when the input makes something
other than the documented error escape (a Rust panic shows up as a RuntimeError "the native kernel
failed (...)", which no check accepts). Each ``*_case`` function turns the raw bytes a fuzzer gives
into that input, so a harness is just ``check_x(*x_case(data))`` and a found case is a file of bytes.

Nothing here imports atheris: the corpus replays in CI without it.

Example:
    >>> pretokenize_case(b"\\x01it's\\xff12")
    ('cl100k', ["it's", '12'])
"""

from __future__ import annotations

import functools
import json
import os
import random
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

from bpe_studio.engine import Tokenizer, UnknownTokenIdError
from bpe_studio.engine import native as engine_native
from bpe_studio.engine.bytes_unicode import byte_to_char
from bpe_studio.engine.formats import FormatError, load
from bpe_studio.engine.pretokenize.patterns import compile_pattern
from bpe_studio.engine.pretokenize.split import pretoken_matches
from bpe_studio.engine.training.merge import MergeLoop
from bpe_studio.engine.workers.protocol import decode_table, encode_table

#: The harnesses, by the name of their folder under tests/engine/fuzz_cases/.
HARNESSES = ("pretokenize", "encode", "decode", "merge", "kernel", "frames", "formats")  # see CHECKS

PRESETS = engine_native.NATIVE_PRESETS

# Characters the fuzzer's bytes pick from: every class the scanners tell apart (contractions' letters,
# whitespace of every kind, digits of several scripts, cased and caseless letters, marks, symbols, astral
# characters) and a lone surrogate, which the native code cannot take as UTF-8.
_ALPHABET = (
    "'sStTmMdDlLrReEvV\u017fK x1\n\r\t\x0b\x0c\x1c\x85\u00a0\u2028\u3000"
    "0\u0660\u00bd\u2167aZ\u01c5\u02b0\u00e9e\u0301\u0903\u65e5\u00aa!.-_/\u20ac\U0001d400\U0001f643\ud800"
)


def text_of(data: bytes) -> str:
    """Text from fuzzer bytes: a byte >= 0x80 picks a character of :data:`_ALPHABET`, others are ASCII.

    Example:
        >>> text_of(b"ab\\x80")
        "ab'"
    """
    return "".join(chr(b) if b < 0x80 else _ALPHABET[(b - 0x80) % len(_ALPHABET)] for b in data)


def code_points_of(data: bytes) -> str:
    """Any text, lone surrogates included, from fuzzer bytes: three bytes per code point.

    Example:
        >>> code_points_of(b"a\\x00\\x00\\x00\\xd8\\x00") == "a\\ud800"
        True
    """
    return "".join(chr(int.from_bytes(data[k : k + 3], "little") % 0x110000) for k in range(0, len(data), 3))


@contextmanager
def backend(name: str) -> Iterator[None]:
    """``BPE_STUDIO_PURE`` set for ``name`` ("python" or "native") inside the block."""
    with mock.patch.dict(os.environ, {engine_native.PURE_ENV: "1" if name == "python" else "0"}):
        yield


def native_built() -> bool:
    """True when ``bpe_studio._native`` is importable (the checks need it)."""
    return engine_native.built()


# ---------------------------------------------------------------- pre-tokenizers


def pretokenize_case(data: bytes) -> tuple[str, list[str]]:
    """(preset, texts): the first byte picks the preset and (bit 7) any code points instead of the chosen
    alphabet (:func:`code_points_of`, :func:`text_of`); the rest is texts separated by 0xff bytes."""
    preset = PRESETS[data[0] % len(PRESETS)] if data else PRESETS[0]
    make = code_points_of if data and data[0] & 0x80 else text_of
    return preset, [make(part) for part in data[1:].split(b"\xff")]


@functools.cache
def _pattern(preset: str) -> Any:
    return compile_pattern(preset)


@functools.cache
def _all_classes() -> bytes:
    return engine_native._class_table(0x110000)


def check_pretokenize(preset: str, texts: list[str]) -> None:
    """The native count of pre-tokens equals the ``regex`` pattern's, or both refuse a lone surrogate.

    The native call raises UnicodeEncodeError on a str that is not valid UTF-8 (a lone surrogate) and
    ``engine_native.count_pretokens`` answers None so that the caller takes the Python path; anything else
    escaping (a panic) is a defect.
    """
    assert engine_native._native is not None
    expected = Counter(m.group() for text in texts for m in pretoken_matches(_pattern(preset), text))
    surrogate = any(not _encodable(t) for t in texts)
    try:
        raw = engine_native._native.count_pretokens(preset, texts, _all_classes())
    except UnicodeEncodeError:
        assert surrogate, "the native pre-tokenizer refused text that is valid UTF-8"
    else:
        assert not surrogate, "the native pre-tokenizer took a lone surrogate"
        counts, total = raw
        assert counts == dict(expected), f"{preset}: native counts differ from the pattern's"
        assert total == sum(expected.values())
    with backend("native"):
        found = engine_native.count_pretokens(preset, texts)  # the growing class table of the real caller
    if surrogate:
        assert found is None
    else:
        assert found is not None and found[0] == dict(expected)


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# ---------------------------------------------------------------- encoder and decoder


@functools.cache
def _gpt2_pair() -> tuple[Tokenizer, Tokenizer]:
    with backend("python"):
        python = load("gpt2")
    with backend("native"):
        native = load("gpt2")
    assert (python.backend, native.backend) == ("python", "native")
    return python, native


def _tiny_pair(spec: bytes, pattern: str, ignore_merges: bool) -> tuple[Tokenizer, Tokenizer] | None:
    """Two tokenizers (python, native) over the 256 bytes and merges picked by ``spec`` (pairs of bytes
    from a small alphabet, merged left to right), with duplicate merges and merges of long tokens."""
    vocab = {i: bytes([i]) for i in range(256)}
    merges: list[tuple[bytes, bytes]] = []
    tokens = [bytes([b]) for b in b"ab \xc3\xa9e1'"]
    for k in range(0, len(spec) - 1, 2):
        left, right = tokens[spec[k] % len(tokens)], tokens[spec[k + 1] % len(tokens)]
        merged = left + right
        merges.append((left, right))  # a pair may repeat: its first rank counts
        if merged not in tokens:
            tokens.append(merged)
            vocab[len(vocab)] = merged
    made = []
    for name in ("python", "native"):
        with backend(name):
            made.append(Tokenizer(vocab, merges, pattern=pattern, ignore_merges=ignore_merges, cache_size=8))
    return made[0], made[1]


def encode_case(data: bytes) -> tuple[int, bytes, str]:
    """(kind, merge spec, text): kind 0 is the shipped GPT-2, 1-6 a tiny tokenizer (gpt2/cl100k/o200k,
    with or without ``ignore_merges``) whose merges the bytes before the first 0xff give; bit 7 of the first
    byte asks for any code points (:func:`code_points_of`) instead of the chosen alphabet."""
    kind = data[0] % 7 if data else 0
    spec, _, rest = data[1:].partition(b"\xff")
    return kind, spec[:64], (code_points_of if data and data[0] & 0x80 else text_of)(rest)


def check_encode(kind: int, spec: bytes, text: str) -> None:
    """Native and Python encoders give the same ids, counts per pre-token, offsets and round trip."""
    if kind == 0:
        python, native = _gpt2_pair()
    else:
        pair = _tiny_pair(spec, PRESETS[(kind - 1) % 3], ignore_merges=kind > 3)
        assert pair is not None
        python, native = pair
    ids = _outcome(python.encode_ordinary, text)
    assert _outcome(native.encode_ordinary, text) == ids, "native and Python ids differ"
    assert _outcome(native.encode_ordinary, text) == ids, "the native cache changed the ids"
    spans = _outcome(lambda t: [(s.id, s.start, s.end) for s in python.encode_with_offsets(t)], text)
    assert _outcome(lambda t: [(s.id, s.start, s.end) for s in native.encode_with_offsets(t)], text) == spans
    if isinstance(ids, list):
        assert python.decode_bytes(ids) == native.decode_bytes(ids)
        if _encodable(text):
            assert native.decode_bytes(ids) == text.encode("utf-8")


def _outcome(fn: Any, arg: Any) -> Any:
    """``fn(arg)``, or the type and message of the ValueError (or subclass) it raised."""
    try:
        return fn(arg)
    except ValueError as exc:
        return (type(exc), str(exc))


def decode_case(data: bytes) -> list[int]:
    """Token ids from fuzzer bytes: 3 bytes each, spread over the vocabulary, its edges and beyond."""
    ids = []
    for k in range(0, len(data) - 2, 3):
        kind, value = data[k], int.from_bytes(data[k + 1 : k + 3], "little")
        ids.append(
            (
                value % 50257,
                50256 + value % 4,
                -1 - value,
                2**63 - 1 - value,
                2**64 + value,
                -(2**63) - value,
            )[kind % 6]
        )
    return ids


def check_decode(ids: list[int]) -> None:
    """Native and Python decoding agree; an id outside the vocabulary raises UnknownTokenIdError on both."""
    python, native = _gpt2_pair()
    for fn in ("decode_bytes", "decode"):
        found = [_outcome(getattr(tok, fn), ids) for tok in (python, native)]
        assert found[0] == found[1], f"{fn}: native and Python differ"
        if isinstance(found[0], tuple):
            assert issubclass(found[0][0], UnknownTokenIdError), found[0]


# ---------------------------------------------------------------- merge loop


def merge_case(data: bytes) -> tuple[dict[str, int], list[bytes], int, int | None, int]:
    """(counts, token_bytes, new_tokens, max_token_length, min_frequency) for a small word table.

    Words use a 5-byte alphabet (so that pairs repeat and tie), occasionally an extra token id above 255
    (the words of a resumed run); the extra tokens' bytes may equal what a merge makes (a reused id).
    """
    rng = random.Random(data)
    token_bytes = [bytes([i]) for i in range(256)]
    extras = [b"ab", b"a", b"ba", b"aab", b"c"][: rng.randrange(4)]
    token_bytes += extras
    letters = [chr(c) for c in b"abcde"] + [chr(256 + i) for i in range(len(extras))]
    counts: dict[str, int] = {}
    for _ in range(rng.randrange(12)):
        word = "".join(rng.choice(letters) for _ in range(rng.randrange(1, 9)))
        counts[word] = rng.randrange(1, 6)
    max_len = rng.choice([None, None, 1, 2, 3, 5])
    return counts, token_bytes, rng.randrange(1, 40), max_len, rng.choice([1, 1, 2, 3])


def check_merge(
    counts: dict[str, int],
    token_bytes: list[bytes],
    new_tokens: int,
    max_token_length: int | None,
    min_freq: int,
) -> None:
    """The native merge loop makes the same merges, tokens and stop reason as the Python one."""
    made = []
    for name in ("python", "native"):
        loop = MergeLoop(counts, token_bytes, max_token_length=max_token_length, backend=name)
        merges = list(loop.run(new_tokens=new_tokens, min_frequency=min_freq))
        made.append((merges, loop.token_bytes, loop.stop_reason))
    assert made[0] == made[1], "native and Python merge loops differ"


def kernel_case(data: bytes) -> tuple[bytes, int, list[int], list[int], list[bytes], int | None]:
    """Raw, possibly inconsistent arguments of ``bpe_studio._native.MergeKernel``: symbols, width, lengths
    (some near 2**64), counts (some negative) and token bytes."""
    rng = random.Random(data)
    width = rng.choice([1, 4, 4, 3])
    data = bytes(
        rng.randrange(6) if rng.random() < 0.9 else rng.randrange(256) for _ in range(rng.randrange(24))
    )
    lengths = [rng.choice([0, 1, 2, 3, 2**64 - 1, 2**63, 2**32]) for _ in range(rng.randrange(6))]
    freqs = [rng.choice([1, 2, 0, -1, 2**62, -(2**63)]) for _ in range(len(lengths) + rng.choice([0, 0, 1]))]
    tokens = [bytes([i]) for i in range(rng.choice([6, 256]))]
    return data, width, lengths, freqs, tokens, rng.choice([None, 0, 2])


def check_kernel(  # noqa: PLR0917 (the six arguments of MergeKernel, in its order)
    data: bytes, width: int, lengths: list[int], freqs: list[int], tokens: list[bytes], max_len: int | None
) -> None:
    """``MergeKernel`` either refuses its arguments with ValueError or OverflowError, or runs to its end."""
    assert engine_native._native is not None
    try:
        kernel = engine_native._native.MergeKernel(
            data, width, lengths, freqs, tokens, max_token_length=max_len
        )
    except (ValueError, OverflowError):
        return
    for _ in range(64):
        if kernel.best() is None:
            break
        kernel.merge_top()


# ---------------------------------------------------------------- frames and files


def check_frame(frame: bytes) -> None:
    """``decode_table`` gives a table that encodes back to the same frame's meaning, or raises ValueError."""
    try:
        table = decode_table(frame)
    except ValueError:
        return
    assert all(isinstance(k, str) and isinstance(v, int) for k, v in table.items())
    try:
        keys = {k.encode("latin-1").decode("utf-8"): v for k, v in table.items()}
    except UnicodeDecodeError:
        return  # a key that is not UTF-8: workers never send one, and the merge loop takes any bytes
    assert decode_table(encode_table(keys)) == table


_FORMATS = ("tokenizer.json", "vocab.json+merges.txt", "x.tiktoken", "made tokenizer.json")


def formats_case(data: bytes) -> tuple[str, list[bytes]]:
    """(layout, file contents): the first byte picks a layout, the rest is split into its files at 0xff."""
    layout = _FORMATS[data[0] % len(_FORMATS)] if data else _FORMATS[0]
    if layout.startswith("made "):
        return layout[5:], [made_hf_document(data[1:])]
    return layout, data[1:].split(b"\xff", 1)


def made_hf_document(data: bytes) -> bytes:
    """A ``tokenizer.json`` made from fuzzer bytes: a valid byte-level BPE (the 256 byte tokens, merges of
    tokens made before, added tokens, a ByteLevel or Split pre-tokenizer) with at most one fault: a missing
    byte, an id used twice, far out of range or of the wrong type, a malformed or unknown merge, a bad added
    token, an unsupported pre-tokenizer or a hostile Split pattern."""
    rng = random.Random(data)
    chars = list(byte_to_char())
    vocab: dict[str, Any] = {c: i for i, c in enumerate(chars)}
    names = [chars[b] for b in b"ab \xc3\xa9<>s"]
    merges: list[Any] = []
    for _ in range(rng.randrange(12)):
        left, right = rng.choice(names), rng.choice(names)
        merges.append(rng.choice([f"{left} {right}", [left, right]]))
        if left + right not in vocab:
            vocab[left + right] = rng.choice([len(vocab), len(vocab), 0x10FFFF - len(vocab)])
            names.append(left + right)
    added = [
        {
            "id": len(vocab) + k,
            "content": rng.choice(["<s>", "</s>", "<|x|>", "a b"]),
            "special": rng.random() < 0.8,
        }
        for k in range(rng.randrange(3))
    ]
    pre: Any = {"type": "ByteLevel", "add_prefix_space": rng.random() < 0.05, "use_regex": True}
    if rng.random() < 0.3:
        split = {
            "type": "Split",
            "pattern": {"Regex": "\\p{L}+|\\s+|."},
            "behavior": "Isolated",
            "invert": False,
        }
        pre = {"type": "Sequence", "pretokenizers": [split, {"type": "ByteLevel", "use_regex": False}]}
    fault = rng.randrange(24)
    bad_values = [0x110000, -1, 2**64, 1.5, "7", None, True]
    if fault == 0:
        del vocab[rng.choice(chars)]
    elif fault == 1:
        vocab[rng.choice(names)] = rng.randrange(len(vocab))
    elif fault == 2:
        vocab[rng.choice(names)] = rng.choice(bad_values)
    elif fault == 3 and merges:
        merges[rng.randrange(len(merges))] = rng.choice(
            ["a  b", "ab", "a b c", 3, ["a"], None, "\u00ff\u00ff \u00ff"]
        )
    elif fault == 4:
        merges.append(f"{rng.choice(names)} {rng.choice(names)}{rng.choice(names)}")
    elif fault == 5:
        added.append(
            {
                "id": rng.choice([*bad_values, 5, len(vocab)]),
                "content": rng.choice(["<s>", "", "\ud800", "a"]),
            }
        )
    elif fault == 6:
        pre = rng.choice([None, {"type": "Whitespace"}, {"type": "ByteLevel", "use_regex": False}, [], "x"])
    elif fault == 7:
        pattern = rng.choice(["(", "a{99999}", "(?<=a+)b", "\\X", "(a*)*$", "\\p{Foo}", "", "[^\\s\\S]"])
        pre = {
            "type": "Sequence",
            "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False},
                {"type": "ByteLevel", "use_regex": False},
            ],
        }
    elif fault == 8:
        merges.extend(merges[: rng.randrange(4)])  # repeated merges
    document: Any = {
        "model": {"type": "BPE", "vocab": vocab, "merges": merges},
        "pre_tokenizer": pre,
        "added_tokens": added,
        "decoder": {"type": "ByteLevel"},
    }
    if fault == 9:
        document = rng.choice(
            [[], {"model": []}, {"model": {"type": "BPE", "vocab": [], "merges": {}}}, None]
        )
    return json.dumps(document).encode()


def check_formats(layout: str, files: list[bytes]) -> None:
    """Loading hostile tokenizer files raises FormatError (a ValueError) and nothing else; a tokenizer that
    loads encodes and decodes the same on both backends."""
    with tempfile.TemporaryDirectory(prefix="bpe-fuzz-") as folder:
        names = layout.split("+")
        for name, content in zip(names, files + [b""] * len(names), strict=False):
            Path(folder, name).write_bytes(content)
        target = folder if len(names) > 1 else os.path.join(folder, names[0])
        made: list[Any] = []
        for name in ("python", "native"):
            with backend(name):
                try:
                    made.append(load(target, pattern="gpt2" if layout == "x.tiktoken" else None))
                except FormatError as exc:
                    made.append((type(exc), str(exc)))
    assert type(made[0]) is type(made[1])
    if isinstance(made[0], tuple):
        assert made[0] == made[1]
        return
    python, native = made
    for text in ("hello world's 12", "ab\u00e9 \U0001f643", "<s>a b<|x|>"):
        assert _outcome(python.encode, text) == _outcome(native.encode, text)
    ids = sorted(python.vocab)[:50]
    assert _outcome(python.decode_bytes, ids) == _outcome(native.decode_bytes, ids)


# ---------------------------------------------------------------- one entry point per harness


def frames_case(data: bytes) -> tuple[bytes]:
    """(frame,): the fuzzer's bytes are the frame itself."""
    return (data,)


def decode_ids_case(data: bytes) -> tuple[list[int]]:
    """(ids,) for :func:`check_decode`."""
    return (decode_case(data),)


#: harness name -> (bytes -> arguments, check taking them).
CHECKS: dict[str, tuple[Any, Any]] = {
    "pretokenize": (pretokenize_case, check_pretokenize),
    "encode": (encode_case, check_encode),
    "decode": (decode_ids_case, check_decode),
    "merge": (merge_case, check_merge),
    "kernel": (kernel_case, check_kernel),
    "frames": (frames_case, check_frame),
    "formats": (formats_case, check_formats),
}


def run_case(harness: str, data: bytes) -> None:
    """Runs one fuzzer input through a harness's check (what the harness and the replayed corpus do).

    Example:
        >>> run_case("frames", b"\\x00" * 17)
    """
    case, check = CHECKS[harness]
    check(*case(data))
