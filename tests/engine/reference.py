"""A slow, obviously correct BPE trainer: the definition the fast engine is tested against.

It shares no code with the engine except the pattern presets: every file is decoded whole, split into
documents at special tokens (longest first), pre-tokenized with the pattern, and each step recounts every
adjacent pair of every pre-token and merges the most frequent one (ties: greatest ``(left, right)`` bytes).
Tokens are their bytes, so a merge that yields an existing token's bytes reuses that token.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import regex

from bpe_studio.engine.pretokenize.patterns import resolve_pattern


@dataclass
class Reference:
    """What the reference trainer produced."""

    vocab: dict[int, bytes]
    merges: list[tuple[bytes, bytes]]
    merge_counts: list[int]
    stop_reason: str
    documents: int
    special_tokens: int
    pretokens: int
    unique_pretokens: int


def split_documents(text: str, special_tokens: Sequence[str]) -> list[str]:
    """Split text at special tokens, longest first."""
    if not special_tokens:
        return [text]
    ordered = sorted(special_tokens, key=len, reverse=True)
    return re.split("|".join(re.escape(s) for s in ordered), text)


def count_pretokens(
    paths: Sequence[Path], special_tokens: Sequence[str], pattern: str, errors: str = "strict"
) -> tuple[Counter[tuple[bytes, ...]], dict[str, int]]:
    """Count each pre-token as a tuple of single bytes; also return corpus statistics."""
    compiled = regex.compile(resolve_pattern(pattern))
    counts: Counter[tuple[bytes, ...]] = Counter()
    stats = {"documents": 0, "special_tokens": 0, "pretokens": 0}
    for path in paths:
        text = Path(path).read_bytes().decode("utf-8", errors=errors)
        documents = split_documents(text, special_tokens)
        stats["special_tokens"] += len(documents) - 1
        for document in documents:
            if document:
                stats["documents"] += 1
            # A pre-token is the whole text of a non-empty match (capturing groups change nothing).
            for match in compiled.finditer(document):
                token = match.group()
                if not token:
                    continue
                stats["pretokens"] += 1
                counts[tuple(bytes([b]) for b in token.encode("utf-8"))] += 1
    return counts, stats


def merge_word(word: tuple[bytes, ...], pair: tuple[bytes, bytes]) -> tuple[bytes, ...]:
    """Replace non-overlapping occurrences of ``pair`` in ``word``, left to right."""
    out: list[bytes] = []
    i = 0
    while i < len(word):
        if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
            out.append(word[i] + word[i + 1])
            i += 2
        else:
            out.append(word[i])
            i += 1
    return tuple(out)


def reference_train(
    paths: Sequence[Path],
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    *,
    pattern: str = "gpt2",
    min_frequency: int = 1,
    max_token_length: int | None = None,
    errors: str = "strict",
) -> Reference:
    """Train by recounting every pair at every step."""
    counts, stats = count_pretokens(paths, special_tokens, pattern, errors)
    vocab = {i: bytes([i]) for i in range(256)}
    known = set(vocab.values())
    merges: list[tuple[bytes, bytes]] = []
    merge_counts: list[int] = []
    wanted = vocab_size - 256 - len(special_tokens)
    created = 0
    reason = "vocab_size"
    while created < wanted:
        pairs: Counter[tuple[bytes, bytes]] = Counter()
        for word, n in counts.items():
            for a, b in itertools.pairwise(word):
                if max_token_length is None or len(a) + len(b) <= max_token_length:
                    pairs[(a, b)] += n
        if not pairs:
            reason = "no_pairs"
            break
        best = max(pairs, key=lambda p: (pairs[p], p))
        if pairs[best] < min_frequency:
            reason = "min_frequency"
            break
        merges.append(best)
        merge_counts.append(pairs[best])
        token = best[0] + best[1]
        if token not in known:
            vocab[len(vocab)] = token
            known.add(token)
            created += 1
        merged: Counter[tuple[bytes, ...]] = Counter()
        for word, n in counts.items():
            merged[merge_word(word, best)] += n
        counts = merged
    for special in special_tokens:
        vocab[len(vocab)] = special.encode("utf-8")
    return Reference(
        vocab=vocab,
        merges=merges,
        merge_counts=merge_counts,
        stop_reason=reason,
        documents=stats["documents"],
        special_tokens=stats["special_tokens"],
        pretokens=stats["pretokens"],
        unique_pretokens=len(count_pretokens(paths, special_tokens, pattern, errors)[0]),
    )
