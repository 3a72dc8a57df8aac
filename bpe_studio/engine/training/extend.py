"""Extending a tokenizer: keep every id, merge and special token of a byte-level BPE tokenizer and learn more
merges from a corpus; and the superword (SuperBPE) stage built on it.

The semantics (``TrainConfig(extend=...)``, the CLI's ``train --extend``):

1. The corpus is pre-tokenized with the tokenizer's own pattern and special tokens (the run's ``pattern`` and
   ``special_tokens`` are the tokenizer's) and the unique pre-tokens are counted, as for any run.
2. Each unique pre-token is encoded with the tokenizer's own rule: its merges by rank (GPT-2 files,
   ``tokenizer.json``, with ``ignore_merges`` when it has it) or tiktoken's rule for a rank file. One
   exception keeps the exactness property below: a merges list that makes some token twice (our training
   reuses a token whose bytes already exist, ``("ab", "c")`` then ``("a", "bc")``) is applied the way
   training made it, one merge after the other over the whole word (:func:`encode_sequentially`); without
   such repeats both rules give the same tokens.
3. The merge loop (:class:`~.merge.MergeLoop`, either engine) continues over those words with the usual rule:
   the most frequent adjacent pair, ties to the greatest ``(left bytes, right bytes)``. Every adjacent pair
   of the encoded words counts, also a pair whose concatenation is already a token (the tokenizer's rule
   did not make it, e.g. a merges file without that merge). Such a merge is recorded (so a merges-format
   result applies it) but adds no token: the vocabulary never holds one byte string twice, and the merge's
   pair gets the existing token's id -- what a tiktoken user expects, since tiktoken's rule would join those
   two parts anyway.
4. Every existing id keeps its number (special tokens too); the new tokens take the ids after the largest
   existing one, in the order the merges made them. ``vocab_size`` counts the whole vocabulary.

Exactness: for a corpus C and k < n, extending the tokenizer trained on C cut to its first k merges by the
remaining merges gives exactly the tokenizer trained on C with n merges (same vocabulary, merges and counts):
the words after step 2 are the merge loop's words after k merges, and step 3 is that loop's next step.

Superwords (``superword_transition``): train as usual to the transition vocabulary size, then extend that
tokenizer on the same corpus with :data:`SUPERWORD_PATTERN` as the pre-tokenization, each chunk encoded with
the stage-1 merges as one word (see :func:`superword_pattern` for the exact boundary rule).

Example:
    >>> from bpe_studio.engine import Tokenizer, extend_base
    >>> base = extend_base(Tokenizer({i: bytes([i]) for i in range(256)} | {256: b"ab"}, [(b"a", b"b")]))
    >>> base.encode_words({"abc": 2})
    {'Āc': 2}
"""

from __future__ import annotations

import array
import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..config import TrainConfig
from ..native import EncodedWords, IdBuffer, PartedChunks
from ..pretokenize.patterns import SUPERBPE_SPLIT, SUPERWORD_PATTERN, resolve_pattern, superword_pattern
from .learn import join_pair

#: Pre-tokens the tokenizer's encoder takes at a time: its answers for a batch are held, not all of them.
_BATCH = 4096


class ExtendError(ValueError):
    """The tokenizer cannot be extended, or the run's options do not fit it; the message says the fix."""


@dataclass(frozen=True)
class ExtendBase:
    """A tokenizer to extend, laid out for the merge loop; made by :func:`bpe_studio.engine.extend_base`
    (training never imports the encoder: the tokenizer's own rule comes in as ``encode_pieces``).

    The merge loop numbers tokens densely from 0; a tokenizer's ids may have gaps and special tokens among
    them. So the loop works on *loop ids*: the ordinary tokens in the order of their ids, and
    :meth:`final_id` turns a loop id back into the tokenizer's (a new token's: the ids after the largest).

    Attributes:
        source: What the tokenizer was opened from (a path or a name), for records and messages.
        vocab: The tokenizer's id -> bytes, special tokens included.
        special_ids: Special token -> id.
        pattern: The tokenizer's pre-tokenization regex.
        rule: ``"merges"`` or ``"ranks"`` (tiktoken's rule, a rank file's).
        ignore_merges: The tokenizer's ``ignore_merges``.
        tokens: Loop id -> the token's bytes (the ordinary tokens, in id order).
        ids: Loop id -> the tokenizer's id.
        next_id: The first id after every existing one: the first new token's.
        merges: The tokenizer's merges (derived from a rank file's ranks).
        sequential: Words are encoded one merge after the other (:func:`encode_sequentially`), not by rank.
        fingerprint: A digest of the vocabulary, merges and special tokens (checkpoints record it).
        encode_pieces: Pre-tokens (str) -> each one's ids under the tokenizer's own rule.
        encode_raw: A pre-token's bytes as a latin-1 str (not UTF-8) -> its ids under that rule.
        reopen: Opens ``source`` again (pickling sends the source, not the encoder); None for a tokenizer
            given in memory.
        encode_flat: The native encoder's form of ``encode_pieces``: every piece's ids one after the
            other and each piece's number of ids (None without the native kernel).
        encode_keys: Counted keys (bytes as latin-1, each one word) -> their ids as native 32-bit integers
            and each key's number of ids, by the merges' rank: the native ``encode_words``, which cuts each
            word where no token can span and caches the parts (a superword run's stage 1; None otherwise).
        encode_tables: The same over native count tables' keys, one table after the other
            (``NativeEncoder.encode_tables``, which empties them): ids, each key's number of ids, each key's
            count (None as ``encode_keys``).
    """

    source: str
    vocab: Mapping[int, bytes]
    special_ids: Mapping[str, int]
    pattern: str
    rule: Literal["merges", "ranks"]
    ignore_merges: bool
    tokens: list[bytes]
    ids: list[int]
    next_id: int
    merges: tuple[tuple[bytes, bytes], ...]
    sequential: bool
    fingerprint: str
    encode_pieces: Callable[[list[str]], Iterable[Sequence[int]]] = field(repr=False, compare=False)
    encode_raw: Callable[[str], Sequence[int]] = field(repr=False, compare=False)
    reopen: Callable[[str], ExtendBase] | None = field(default=None, repr=False, compare=False)
    encode_flat: Callable[[list[str]], tuple[list[int], list[int]]] | None = field(
        default=None, repr=False, compare=False
    )
    encode_keys: Callable[[list[str]], tuple[bytes, list[int]]] | None = field(
        default=None, repr=False, compare=False
    )
    encode_tables: Callable[[Any], tuple[bytes, list[int], list[int]]] | None = field(
        default=None, repr=False, compare=False
    )

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its source, opened again (its encoder is native state): a config with ``extend`` goes
        to a child process (the app's training) this way. The reopened tokenizer must be the same one."""
        if self.reopen is None:
            raise TypeError(
                f"extend: the tokenizer {self.source!r} was given in memory and cannot be sent to another "
                "process; save it and open it with extend_base(PATH)"
            )
        return (_reopened, (self.reopen, self.source, self.fingerprint))

    @classmethod
    def make(
        cls,
        source: str,
        vocab: Mapping[int, bytes],
        merges: Sequence[tuple[bytes, bytes]],
        special_ids: Mapping[str, int],
        *,
        pattern: str,
        rule: Literal["merges", "ranks"],
        ignore_merges: bool,
        encode_pieces: Callable[[list[str]], Iterable[Sequence[int]]],
        encode_raw: Callable[[str], Sequence[int]],
        sequential: bool | None = None,
        reopen: Callable[[str], ExtendBase] | None = None,
        encode_flat: Callable[[list[str]], tuple[list[int], list[int]]] | None = None,
        encode_keys: Callable[[list[str]], tuple[bytes, list[int]]] | None = None,
        encode_tables: Callable[[Any], tuple[bytes, list[int], list[int]]] | None = None,
    ) -> ExtendBase:
        """Lay out a tokenizer's tables for extending (ids, loop ids, the fingerprint); ``sequential``
        None decides as the module docstring says (True: always apply the merges one after the other)."""
        specials = set(special_ids.values())
        ids = sorted(i for i in vocab if i not in specials)
        tokens = [vocab[i] for i in ids]
        made = [left + right for left, right in merges]
        if sequential is None:
            sequential = rule == "merges" and not ignore_merges and len(set(made)) < len(made)
        import hashlib  # (here: a run from scratch needs none of its import, OpenSSL's library)

        digest = hashlib.sha256()
        for i in sorted(vocab):
            digest.update(b"%d:%d:" % (i, len(vocab[i])) + vocab[i])
        digest.update(b"|merges|")
        for left, right in merges:
            digest.update(b"%d:%d:" % (len(left), len(right)) + left + right)
        digest.update(repr(sorted(special_ids.items())).encode("utf-8"))
        digest.update(f"|{rule}|{ignore_merges}|{pattern}".encode())
        return cls(
            source,
            dict(vocab),
            dict(special_ids),
            pattern,
            rule,
            ignore_merges,
            tokens,
            ids,
            max(vocab, default=-1) + 1,
            tuple(merges),
            sequential,
            digest.hexdigest(),
            encode_pieces,
            encode_raw,
            reopen,
            encode_flat,
            encode_keys,
            encode_tables,
        )

    def final_id(self, loop_id: int) -> int:
        """The tokenizer's id of a loop id (new tokens: the ids after the largest existing one)."""
        if loop_id < len(self.ids):
            return self.ids[loop_id]
        return self.next_id + loop_id - len(self.ids)

    def encode_words(self, counts: dict[str, int], *, consume: bool = False) -> dict[str, int]:
        """The counted pre-tokens (bytes as latin-1 strings) as words of loop ids (one code point each).

        Each pre-token is one word for the tokenizer's BPE: an extend run counts the tokenizer's own
        pre-tokens, and a superword run's chunks are merged whole, as the published SuperBPE tokenizers
        merge them.

        Args:
            counts: Pre-token -> count, as the counting phase gives them.
            consume: Empty ``counts`` batch by batch while encoding, so that the pre-tokens' memory is
                given back as the words' grows (a superword run's chunks are many and long).
        """
        to_loop: dict[int, int] | None = None
        if not self.sequential and self.ids != list(range(len(self.ids))):
            to_loop = {i: n for n, i in enumerate(self.ids)}
        words: dict[str, int] = {}
        get = words.get
        while counts:
            if self.sequential:
                batch = list(counts.items())  # merge after merge needs every word at once (rare, or pure)
            elif consume:
                batch = [counts.popitem() for _ in range(min(_BATCH, len(counts)))]
            else:
                batch = list(counts.items())
            keys = [key for key, _ in batch]
            if self.sequential:
                encoded: Iterable[Sequence[int]] = encode_sequentially(keys, self.tokens, self.merges)
            else:
                encoded = self._encode_by_rule(keys)
            for (_, n), ids in zip(batch, encoded, strict=True):
                if to_loop is not None:
                    ids = [to_loop[i] for i in ids]
                word = "".join(map(chr, ids))
                words[word] = get(word, 0) + n
            if not consume:
                break
            if self.sequential:
                counts.clear()
        return words

    def encode_arrays(self, counts: dict[str, int]) -> EncodedWords | None:
        """The counted pre-tokens as flat loop ids, emptying ``counts`` batch by batch (as
        ``encode_words(consume=True)``); None when there is no native encoder or the words need encoding
        merge after merge (then :meth:`encode_words`). No ``str`` is made per word: the superword chunks of
        100 MB are a million words of tens of tokens.
        """
        if (self.encode_flat is None and self.encode_keys is None) or self.sequential:
            return None
        ids: array.array[int] = array.array("I")
        lengths: list[int] = []
        freqs: list[int] = []
        while counts and self.encode_keys is not None:
            batch = [counts.popitem() for _ in range(min(4 * _BATCH, len(counts)))]
            raw, sizes = self.encode_keys([key for key, _ in batch])
            ids.frombytes(raw)
            lengths.extend(sizes)
            freqs.extend(n for _, n in batch)
        while counts:
            assert self.encode_flat is not None
            batch = [counts.popitem() for _ in range(min(_BATCH, len(counts)))]
            try:
                texts = [key.encode("latin-1").decode("utf-8") for key, _ in batch]
            except UnicodeDecodeError:  # bytes that are not UTF-8 (kept by the invalid_utf8 policy)
                for key, _ in batch:
                    found = self.encode_raw(key)
                    ids.extend(found)
                    lengths.append(len(found))
            else:
                flat, sizes = self.encode_flat(texts)
                ids.extend(flat)
                lengths.extend(sizes)
            freqs.extend(n for _, n in batch)
        return EncodedWords(self._loop_ids(ids), lengths, freqs)

    def encode_native_tables(self, tables: Sequence[Any] | PartedChunks) -> EncodedWords | None:
        """The keys of native count tables (``NativeCountTable``, emptied), one table after the other, as
        flat loop ids with their counts, with no ``str`` per key (a key in two tables is two words, which
        a merge loop counts as one); None when there is no ``encode_tables`` or the words need encoding
        merge after merge (then decode the tables and :meth:`encode_words`). Tables split into their parts
        (``native.split_chunks``) give the same words."""
        if self.encode_tables is None or self.sequential:
            return None
        raw, lengths, freqs = self.encode_tables(tables)
        # Read in place: an array would copy them (80 MB on 100 MB of text, at stage 2's peak).
        return EncodedWords(self._loop_ids(memoryview(raw).cast("I")), lengths, freqs)

    def _loop_ids(self, ids: IdBuffer) -> IdBuffer:
        """The tokenizer's ids as loop ids (the same unless its ordinary ids have gaps or specials among
        them)."""
        if self.ids == list(range(len(self.ids))):
            return ids
        import numpy as np  # only for tokenizers whose ordinary ids have gaps or specials among them

        to_loop = np.zeros(self.next_id, dtype=np.uint32)
        to_loop[np.asarray(self.ids, dtype=np.int64)] = np.arange(len(self.ids), dtype=np.uint32)
        mapped = to_loop[np.frombuffer(ids, dtype=np.uint32)]
        return array.array("I", mapped.tobytes())

    def _encode_by_rule(self, keys: list[str]) -> Iterator[Sequence[int]]:
        """Each latin-1 key's ids under the tokenizer's own rule (its encoder, native when built)."""
        for start in range(0, len(keys), _BATCH):
            part = keys[start : start + _BATCH]
            try:
                texts = [k.encode("latin-1").decode("utf-8") for k in part]
            except UnicodeDecodeError:  # bytes that are not UTF-8 (kept by the invalid_utf8 policy)
                yield from map(self.encode_raw, part)
                continue
            yield from self.encode_pieces(texts)


def _reopened(reopen: Callable[[str], ExtendBase], source: str, fingerprint: str) -> ExtendBase:
    """An unpickled :class:`ExtendBase`: ``source`` opened again, checked to be the tokenizer it was."""
    base = reopen(source)
    if base.fingerprint != fingerprint:
        raise ExtendError(
            f"extend: {source} changed since it was opened (its vocabulary, merges or special tokens "
            "differ); start the run again"
        )
    return base


def encode_sequentially(
    keys: Sequence[str], tokens: Sequence[bytes], merges: Sequence[tuple[bytes, bytes]]
) -> list[list[int]]:
    """Words (bytes as latin-1 strings) under ``merges`` applied the way training makes them: each merge, in
    order, to every occurrence of its pair in every word, left to right; a merge's result is the token with
    its bytes (``tokens`` holds each byte string once). Costs in proportion to the occurrences merged, through
    an index from pair to the words holding it.

    Example:
        >>> tokens = [bytes([i]) for i in range(256)] + [b"bc", b"abc", b"ab"]
        >>> merges = [(b"b", b"c"), (b"a", b"bc"), (b"a", b"b"), (b"ab", b"c")]
        >>> [[tokens[i] for i in w] for w in encode_sequentially(["abcabc", "ab"], tokens, merges)]
        [[b'abc', b'abc'], [b'ab']]
    """
    id_of = {t: i for i, t in enumerate(tokens)}
    byte_ids = [id_of.get(bytes([b]), -1) for b in range(256)]
    words = [[byte_ids[b] for b in key.encode("latin-1")] for key in keys]
    where: dict[tuple[int, int], set[int]] = {}

    def index(j: int, word: list[int]) -> None:
        for pair in itertools.pairwise(word):
            where.setdefault(pair, set()).add(j)

    for j, word in enumerate(words):
        index(j, word)
    for left, right in merges:
        a, b, c = id_of[left], id_of[right], id_of[left + right]
        for j in where.pop((a, b), ()):
            word = words[j]
            merged = join_pair(word, a, b, c)
            if len(merged) != len(word):
                words[j] = merged
                index(j, merged)
    return words


def with_base(config: TrainConfig, base: ExtendBase) -> TrainConfig:
    """``config`` with the pattern and special tokens of the tokenizer it extends (``iter_train`` does
    this itself; front ends call it first to check a run's outputs and checkpoints against the real config).

    Raises:
        ExtendError: The config names another pattern or other special tokens, or a ``vocab_size`` that
            is not larger than the tokenizer's.
    """
    specials = tuple(sorted(base.special_ids, key=base.special_ids.__getitem__))
    if config.special_tokens and config.special_tokens != specials:
        raise ExtendError(
            f"special_tokens: an extend run keeps the tokenizer's special tokens {list(specials)!r}; give "
            "none (or exactly those)"
        )
    if config.pattern != "gpt2" and resolve_pattern(config.pattern) != base.pattern:
        raise ExtendError(
            "pattern: an extend run pre-tokenizes with the tokenizer's own pattern; leave pattern at its "
            "default (or give exactly the tokenizer's)"
        )
    size = len(base.vocab)
    if config.vocab_size <= size:
        raise ExtendError(
            f"vocab_size: {config.vocab_size} is not larger than the {size} tokens of the tokenizer to "
            f"extend; give the size of the whole vocabulary, e.g. {size + 1000} for 1,000 new tokens"
        )
    return config.replace(pattern=base.pattern, special_tokens=specials)


__all__ = [
    "SUPERBPE_SPLIT",
    "SUPERWORD_PATTERN",
    "ExtendBase",
    "ExtendError",
    "encode_sequentially",
    "superword_pattern",
    "with_base",
]
