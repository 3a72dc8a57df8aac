"""A slow, obviously correct BPE encoder: the definition the fast :class:`Tokenizer` is tested against.

It shares no code with the engine except the pattern presets. Special tokens are found by scanning every
position and trying the longest token first; each pre-token's bytes are merged by repeatedly finding the
lowest-rank adjacent pair (rank = index in the merges list, leftmost on ties) and merging it. Tokens are
their bytes; the id of a merged token is the id of its bytes.

Also here: helpers the tokenizer test modules share (cached tokenizers, tiktoken's offline cache folder).
"""

from __future__ import annotations

import functools
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

import regex

from bpe_studio.engine.pretokenize.patterns import resolve_pattern


def split_specials(text: str, special_tokens: Sequence[str]) -> list[tuple[str, bool]]:
    """Cut text into ``(piece, is_special)``: at each position the longest special token that starts there."""
    ordered = sorted(special_tokens, key=len, reverse=True)
    pieces: list[tuple[str, bool]] = []
    plain_start = i = 0
    while i < len(text):
        found = next((s for s in ordered if text.startswith(s, i)), None)
        if found is None:
            i += 1
            continue
        if plain_start < i:
            pieces.append((text[plain_start:i], False))
        pieces.append((found, True))
        i += len(found)
        plain_start = i
    if plain_start < len(text):
        pieces.append((text[plain_start:], False))
    return pieces


def merge_word(data: bytes, merges: Sequence[tuple[bytes, bytes]]) -> list[bytes]:
    """BPE on one pre-token's bytes: merge the lowest-rank adjacent pair (leftmost) until none is a merge."""
    rank: dict[tuple[bytes, bytes], int] = {}
    for i, pair in enumerate(merges):
        rank.setdefault(pair, i)
    parts = [bytes([b]) for b in data]
    while len(parts) > 1:
        best = None
        for i in range(len(parts) - 1):
            r = rank.get((parts[i], parts[i + 1]))
            if r is not None and (best is None or r < best[0]):
                best = (r, i)
        if best is None:
            break
        i = best[1]
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
    return parts


def reference_encode(
    text: str,
    vocab: Mapping[int, bytes],
    merges: Sequence[tuple[bytes, bytes]],
    special_tokens: Mapping[str, int],
    pattern: str = "gpt2",
) -> list[int]:
    """Encode ``text``, recognising every special token."""
    ids_of: dict[bytes, int] = {}
    special_ids = set(special_tokens.values())
    for i in sorted(vocab):
        if i not in special_ids:
            ids_of.setdefault(vocab[i], i)
    compiled = regex.compile(resolve_pattern(pattern))
    out: list[int] = []
    for piece, is_special in split_specials(text, list(special_tokens)):
        if is_special:
            out.append(special_tokens[piece])
            continue
        for match in compiled.finditer(piece):  # an empty match is no pre-token: it adds nothing
            out.extend(ids_of[t] for t in merge_word(match.group().encode("utf-8"), merges))
    return out


# ----------------------------------------------------------------------------------- shared helpers

SPECIAL = "<|endoftext|>"

#: Texts with the usual trouble spots: contractions, whitespace runs, newlines, digits, non-ASCII, emoji.
SAMPLE_TEXTS = (
    "",
    "Hello, world! It's 2024 -- naïve café  \n\n\t x_y 日本語 😀 'll 'LL",
    "  leading and trailing spaces   \n\n\n   ",
    "Numbers 1234567 and 3.14159; emails a@b.co; urls https://example.com/a?b=c",
    f"one{SPECIAL}two {SPECIAL}{SPECIAL} three\n{SPECIAL}",
    "Ünïcödé ΑΒΓ абв עברית العربية हिन्दी 한국어 🙃🙃 \u200b\u00a0\u3000 tabs\tand\r\nwindows",
)


@functools.cache
def gpt2_tokenizer(data_dir: Path):  # type: ignore[no-untyped-def]
    """GPT-2's tokenizer from the shared files (loaded once per test session)."""
    from bpe_studio.engine import Tokenizer

    return Tokenizer.from_files(data_dir / "gpt2_vocab.json", data_dir / "gpt2_merges.txt", [SPECIAL])


@functools.cache
def trained_tokenizer(data_dir: Path, pattern: str = "gpt2", vocab_size: int = 1000):  # type: ignore[no-untyped-def]
    """A tokenizer trained by the engine on ``corpus.en`` (once per pattern and size)."""
    from bpe_studio.engine import Tokenizer, TrainConfig, train

    config = TrainConfig(
        inputs=(data_dir / "corpus.en",),
        vocab_size=vocab_size,
        special_tokens=(SPECIAL, SPECIAL + SPECIAL),
        pattern=pattern,
        workers=1,
    )
    return Tokenizer.from_result(train(config))


def make_tiktoken_cache(data_dir: Path, folder: Path) -> Path:
    """Fill ``folder`` with the two files tiktoken's ``gpt2`` encoding reads (see the data README)."""
    folder.mkdir(parents=True, exist_ok=True)
    merges = (data_dir / "gpt2_merges.txt").read_bytes()
    (folder / "6d1cbeee0f20b3d9449abfede4726ed8212e3aee").write_bytes(b"#version: 0.2\n" + merges)
    shutil.copyfile(data_dir / "gpt2_vocab.json", folder / "6c7ea1a7e38e3a7f062df639a5b80947f075ffe6")
    return folder
