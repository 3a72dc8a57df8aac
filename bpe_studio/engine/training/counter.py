"""Counting one stream of text: the pre-tokens of chunks, records and documents, in a native table for a
preset (the GIL released) or a Python dict, and the totals a counts file records.

Every counting strategy (:mod:`bpe_studio.engine.training.counting`: serial, threads, worker processes, a Dask
cluster) runs one :class:`ChunkCounter` per worker, so they all count alike.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .. import native
from ..config import InvalidUtf8Policy
from ..corpus.plan import Chunk, check_read, decode, read_chunk
from ..corpus.sources import Documents, LineRange, RecordReader, RowGroup, Task
from ..pretokenize.patterns import scanner_name
from ..pretokenize.split import Pretokenizer, special_token_regex
from ..workers.protocol import decode_table, encode_table


@dataclass(slots=True)
class CountTotals:
    """Statistics gathered while counting (summed over chunks)."""

    documents: int = 0
    special_tokens: int = 0
    pretokens: int = 0
    bad_records: int = 0

    def add(self, other: CountTotals) -> None:
        """Add another set of totals to this one."""
        self.documents += other.documents
        self.special_tokens += other.special_tokens
        self.pretokens += other.pretokens
        self.bad_records += other.bad_records


class ChunkCounter:
    """Pre-tokenizes chunks and accumulates the counts of their pre-tokens (as ``str``).

    Example:
        >>> policy = InvalidUtf8Policy.ERROR
        >>> cc = ChunkCounter(pattern="gpt2", special_tokens=["<|endoftext|>"], policy=policy)
        >>> cc.count_text("a b<|endoftext|>a", continues_document=False)
        >>> sorted(cc.counts.items())
        [(' b', 1), ('a', 2)]
    """

    def __init__(
        self,
        *,
        pattern: str,
        special_tokens: Sequence[str],
        policy: InvalidUtf8Policy,
        text_field: str = "text",
        skip_bad_records: bool = False,
        superwords: bool = False,
    ) -> None:
        self._findall = Pretokenizer(pattern).findall
        # The presets and the models' patterns with a native scanner are pre-tokenized and counted by the
        # native kernel when it is on.
        preset = scanner_name(pattern)
        self._preset = preset if preset in native.NATIVE_SCANNERS else None
        self._special_re = special_token_regex(special_tokens)
        # The same alternatives in the same order, as UTF-8, for the native split (Table::add_bytes); None
        # for an empty special token (refused by TrainConfig), which re.split matches between characters.
        self._special_bytes: list[bytes] | None = (
            [alt.encode("utf-8") for alt in sorted(special_tokens, key=lambda s: (-len(s), s))]
            if "" not in special_tokens
            else None
        )
        self._policy = policy
        self._records = RecordReader(text_field=text_field, policy=policy, skip_bad=skip_bad_records)
        # With a native preset the counts live in a native table (rust/src/count.rs): no Python dict is
        # built per chunk. The Counter holds what the Python pre-tokenizer counted: everything without
        # the native table, and with it only texts it cannot take (a lone surrogate).
        self.table: native.NativeCountTable | None = (
            native.count_table() if self._preset is not None else None
        )
        self._counts: Counter[str] = Counter()
        self.totals = CountTotals()
        #: With ``superwords`` (a superword run, the native kernel on, a pattern with a native scanner and
        #: no empty special token): the stage-2 chunks (``SUPERWORD_PATTERN``'s pieces) of the same texts,
        #: counted in the same pass (``add_bytes_with_superwords``), and their totals. Set to None as soon as
        #: a text cannot be counted that way (not UTF-8, records, a lone surrogate): stage 2 then counts the
        #: corpus again itself, as a run without this table does.
        self.superword_table: native.NativeCountTable | None = None
        self.superword_totals = CountTotals()
        if superwords and self.table is not None and self._special_bytes is not None:
            self.superword_table = native.count_table()

    @property
    def counts(self) -> dict[str, int]:
        """Pre-token (``str``) -> count. Without the native table this is the live table; with it, a copy
        built on each call (use :attr:`unique`, :meth:`frame` or :meth:`byte_counts` on a hot path)."""
        if self.table is None:
            return self._counts
        frame = self.table.to_frame()
        found = {key.encode("latin-1").decode("utf-8"): n for key, n in decode_table(frame).items()}
        return merge_tables([found, dict(self._counts)]) if self._counts else found

    @property
    def native_only(self) -> bool:
        """True when every count is in the native :attr:`table` (the kernel is on, the pattern a preset,
        and no text needed the Python pre-tokenizer)."""
        return self.table is not None and not self._counts

    @property
    def unique(self) -> int:
        """The number of distinct pre-tokens counted so far."""
        if self.table is None:
            return len(self._counts)
        return len(self.table) if not self._counts else len(self.counts)

    def frame(self) -> bytes:
        """The counts as one frame of raw bytes (:func:`encode_table`; built natively when it can be)."""
        if self.table is not None and not self._counts:
            return self.table.to_frame()
        return encode_table(self.counts)

    def count_text(self, text: str, *, continues_document: bool) -> None:
        """Count the pre-tokens of ``text``, a piece of the corpus that starts at a certain boundary (not
        into :attr:`superword_table`, which is dropped)."""
        self.superword_table = None
        parts = self._special_re.split(text) if self._special_re is not None else [text]
        self.totals.special_tokens += len(parts) - 1
        findall, update = self._findall, self._counts.update
        if self.table is not None and self._preset is not None:
            documents_text = [part for part in parts if part]
            before = self.table.total
            try:
                self.table.add(self._preset, documents_text)
            except UnicodeEncodeError:
                pass  # a lone surrogate, which the native scanner cannot take: counted in Python below
            else:
                self.totals.pretokens += self.table.total - before
                self.totals.documents += len(documents_text) - (1 if continues_document else 0)
                return
        documents = 0
        for part in parts:
            if part:
                documents += 1
                tokens = findall(part)
                self.totals.pretokens += len(tokens)
                update(tokens)
        # The first document of a chunk that continues one was already counted with the previous chunk.
        self.totals.documents += documents - (1 if continues_document else 0)

    def count_chunk(self, chunk: Chunk, data: bytes | None = None) -> None:
        """Decode and count one chunk, given its bytes or reading them from its (local) file.

        Raises:
            CorpusChangedError: There are fewer bytes than the chunk plans (the file shrank).
            CorpusDecodeError: The bytes are not valid UTF-8 and the policy is ``error``.
        """
        raw = read_chunk(chunk) if data is None else data
        check_read(chunk, raw)
        self._count_raw(raw, path=chunk.path, offset=chunk.start, continues_document=chunk.continues_document)

    def _count_raw(self, raw: bytes, *, path: str, offset: int, continues_document: bool) -> None:
        """Decode and count a chunk's bytes: natively from the bytes when they are UTF-8 and the pattern
        has a native scanner (checking, splitting on the special tokens and counting with the GIL
        released: done in Python they held it, one counting thread at a time, issue 22); otherwise
        decoded under the policy and counted by :meth:`count_text`, which gives the same counts."""
        if self.superword_table is not None:
            assert self.table is not None and self._preset is not None and self._special_bytes is not None
            before, words_before = self.table.total, self.superword_table.total
            found = self.table.add_bytes_with_superwords(
                self.superword_table, self._preset, raw, self._special_bytes
            )
            if found is not None:
                documents, specials = found
                for totals, added in (
                    (self.totals, self.table.total - before),
                    (self.superword_totals, self.superword_table.total - words_before),
                ):
                    totals.special_tokens += specials
                    totals.pretokens += added
                    totals.documents += documents - (1 if continues_document else 0)
                return
            self.superword_table = None  # not UTF-8: counted below under the policy, stage 1's split only
        if self.table is not None and self._preset is not None and self._special_bytes is not None:
            before = self.table.total
            found = self.table.add_bytes(self._preset, raw, self._special_bytes)
            if found is not None:
                documents, specials = found
                self.totals.special_tokens += specials
                self.totals.pretokens += self.table.total - before
                self.totals.documents += documents - (1 if continues_document else 0)
                return
        text = decode(raw, self._policy, path=path, offset=offset)
        self.count_text(text, continues_document=continues_document)

    def count_task(self, task: Task) -> None:
        """Count one task of any kind (see :mod:`~bpe_studio.engine.corpus.sources`); each record is a
        document.

        Raises:
            BadRecordError: A record holds no text (unless bad records are skipped).
        """
        if isinstance(task, Chunk):
            self.count_chunk(task)
            return
        records = self._records
        texts: Iterable[str]
        if isinstance(task, Documents):
            texts = task.texts
        elif isinstance(task, RowGroup):
            texts = records.row_group(task)
        elif isinstance(task, LineRange):
            with open(task.path, "rb") as handle:
                handle.seek(task.start)
                data = handle.read(task.size)
            check_read(Chunk(task.path, task.start, task.end, False), data)
            texts = records.json_lines(data, path=task.path, offset=task.start, line=None)
        elif task.format == "jsonl":
            texts = records.json_lines(task.data, path=task.path, offset=task.offset, line=task.line)
        else:
            self._count_raw(
                task.data, path=task.path, offset=task.offset, continues_document=task.continues_document
            )
            return
        bad = records.bad_records
        for text in texts:
            self.count_text(text, continues_document=False)
        self.totals.bad_records += records.bad_records - bad

    def byte_counts(self) -> dict[str, int]:
        """The counts keyed by each pre-token's UTF-8 bytes spelled as latin-1 code points."""
        if self.table is not None:
            return decode_table(self.frame())
        return {token.encode("utf-8").decode("latin-1"): n for token, n in self._counts.items()}


def merge_tables(tables: list[dict[str, int]]) -> dict[str, int]:
    """Sum count tables, reusing the largest as the accumulator.

    Example:
        >>> merge_tables([{"a": 1}, {"a": 2, "b": 1}])
        {'a': 3, 'b': 1}
    """
    if not tables:
        return {}
    tables = sorted(tables, key=len, reverse=True)
    total = tables[0]
    get = total.get
    for table in tables[1:]:
        for token, n in table.items():
            total[token] = get(token, 0) + n
    return total
