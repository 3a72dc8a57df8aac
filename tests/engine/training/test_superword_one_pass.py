"""A superword run counts its stage-2 chunks in the same pass over the corpus as stage 1's pre-tokens
(``count_threads(superwords=True)``, ``CountTable.add_bytes_with_superwords``): the corpus is read, checked,
split on the special tokens and classified once. The tables are those of counting each split alone, and a text
that cannot be counted that way (bytes that are not UTF-8) sends stage 2 back to a pass of its own."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_studio.engine import TrainConfig, TrainResult, native, train
from bpe_studio.engine.config import InvalidUtf8Policy
from bpe_studio.engine.corpus.plan import plan_chunks
from bpe_studio.engine.training import counter as counter_module
from bpe_studio.engine.training.counting import CountOutcome, count_serial, count_threads
from bpe_studio.engine.training.extend import SUPERWORD_PATTERN
from bpe_studio.engine.workers.protocol import decode_table

from ..backends import BACKENDS, needs_native, use_backend

SPECIAL = "<|endoftext|>"
_doc = st.text(st.sampled_from("ab Z.,!?1 \n\té\u0301\u4e2d"), min_size=0, max_size=40)


def _config(path: Path, **options: Any) -> TrainConfig:
    """A superword run on ``path`` (to 300 tokens, stage 2 from 270, 2 workers, chunks of 200 bytes), as
    most tests here train; ``options`` override any of those."""
    defaults: dict[str, Any] = {
        "vocab_size": 300,
        "special_tokens": (SPECIAL,),
        "superword_transition": 270,
        "workers": 2,
        "chunk_size": 200,
    }
    return TrainConfig(inputs=(path,), **(defaults | options))


def _learned(result: TrainResult) -> tuple[Any, ...]:
    """What a run learned, compared between a run and its reference: merges, vocab and merge counts."""
    return (result.merges, result.vocab, result.merge_counts)


def _outcome(path: Path, pattern: str, *, chunk_size: int, workers: int, superwords: bool) -> CountOutcome:
    chunks = plan_chunks([path], chunk_size=chunk_size, special_tokens=[SPECIAL], newline_cuts=False)
    options: dict[str, Any] = {
        "pattern": pattern,
        "special_tokens": [SPECIAL],
        "policy": InvalidUtf8Policy.ERROR,
        "cancelled": lambda: False,
        "superwords": superwords,
    }
    counting = (
        count_threads(chunks, workers=workers, **options) if workers > 1 else count_serial(chunks, **options)
    )
    *_, outcome = counting
    assert isinstance(outcome, CountOutcome)
    return outcome


def _counts(outcome: CountOutcome) -> dict[str, int]:
    if not outcome.tables:
        return outcome.counts
    total: dict[str, int] = {}
    for table in outcome.tables:
        for key, n in decode_table(table.to_frame()).items():
            total[key] = total.get(key, 0) + n
    return total


@needs_native
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    docs=st.lists(_doc, min_size=1, max_size=8),
    pattern=st.sampled_from(["gpt2", "cl100k", "o200k"]),
    chunk_size=st.integers(8, 64),
    workers=st.integers(1, 2),
)
def test_both_stages_counted_in_one_pass_equal_each_split_counted_alone(
    tmp_path_factory: pytest.TempPathFactory, docs: list[str], pattern: str, chunk_size: int, workers: int
) -> None:
    path = tmp_path_factory.mktemp("corpus") / "c.txt"
    path.write_text(SPECIAL.join(docs), encoding="utf-8")
    both = _outcome(path, pattern, chunk_size=chunk_size, workers=workers, superwords=True)
    alone = _outcome(path, pattern, chunk_size=chunk_size, workers=workers, superwords=False)
    words = _outcome(path, SUPERWORD_PATTERN, chunk_size=chunk_size, workers=workers, superwords=False)
    assert both.superwords is not None and alone.superwords is None
    assert _counts(both) == _counts(alone) and both.totals == alone.totals
    assert _counts(both.superwords) == _counts(words)
    assert both.superwords.unique == len(_counts(words))
    assert (both.superwords.totals.pretokens, both.superwords.totals.documents) == (
        words.totals.pretokens,
        words.totals.documents,
    )


@needs_native
@pytest.mark.parametrize("workers", [1, 2])
def test_a_superword_run_reads_and_counts_the_corpus_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    path = tmp_path / "corpus.txt"
    path.write_text(SPECIAL.join(["the cat sat on the mat, the end.\n"] * 40), "utf-8")
    counted: list[int] = []
    real = counter_module.ChunkCounter._count_raw

    def spy(self: Any, raw: bytes, **kwargs: Any) -> None:
        counted.append(len(raw))
        real(self, raw, **kwargs)

    monkeypatch.setattr(counter_module.ChunkCounter, "_count_raw", spy)
    config = _config(path, workers=workers)
    result = train(config)
    assert sum(counted) == path.stat().st_size  # every byte once, not once a stage
    assert result.superword_transition == 270 - 257
    with use_backend("python"):
        reference = train(config)
    assert _learned(result) == _learned(reference)


@pytest.mark.parametrize("backend", BACKENDS)
def test_bytes_that_are_not_utf8_send_stage_2_to_a_pass_of_its_own_with_the_same_result(
    tmp_path: Path, backend: str
) -> None:
    path = tmp_path / "corpus.txt"
    docs = [b"the cat sat on the mat, the end.\n"] * 20 + [b"bad \xff\xfe bytes, the cat\n"] * 5
    path.write_bytes(SPECIAL.encode().join(docs))
    config = _config(path, invalid_utf8=InvalidUtf8Policy.REPLACE)
    with use_backend(backend):
        result = train(config)
    with use_backend("python"):
        reference = train(config.replace(workers=1))
    assert _learned(result) == _learned(reference)


def _table(preset: str, texts: list[str]) -> native.NativeCountTable:
    table = native.count_table()
    assert table is not None
    table.add(preset, texts)
    return table


@needs_native
@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(_doc, min_size=1, max_size=6),
    words=st.lists(_doc, min_size=0, max_size=6),
    merges=st.lists(st.tuples(st.sampled_from("ab Z.1"), st.sampled_from("ab Z.1")), max_size=6),
    threads=st.integers(1, 3),
)
def test_chunks_split_into_parts_encode_as_the_whole_tables_and_come_back_whole(
    texts: list[str], words: list[str], merges: list[tuple[str, str]], threads: int
) -> None:
    # The stage-2 chunks split where the "stage-1 words" hold no pair (``split_chunks``) give the same
    # words as the tables encoded whole, on any number of threads, whether or not the encoder's tokens
    # hold pairs that no word holds (then the tables are put back whole); ``tables()`` gives them back.
    tokens = [bytes([i]) for i in range(256)]
    triples = []
    for left, right in merges:
        a, b = left.encode(), right.encode()
        for token in (a, b):
            if token not in tokens:
                tokens.append(token)
        if a + b not in tokens:
            triples.append((tokens.index(a), tokens.index(b), len(tokens)))
            tokens.append(a + b)
    enc = native.encoder(range(256), triples, None, tokens, cache_size=4, preset=None, split=lambda s: [s])
    assert enc is not None
    held = native.held_pairs(_table("gpt2", words))
    halves = [texts[: len(texts) // 2], texts[len(texts) // 2 :]]
    whole = enc.encode_tables([_table("superbpe", half) for half in halves])
    parted = native.split_chunks([_table("superbpe", half) for half in halves], held)
    parted.threads = threads
    assert enc.encode_tables(parted) == whole
    again = native.split_chunks([_table("superbpe", half) for half in halves], held).tables()
    assert [t.to_frame() for t in again] == [_table("superbpe", half).to_frame() for half in halves]


@needs_native
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(docs=st.lists(_doc, min_size=1, max_size=8), transition=st.integers(258, 275))
def test_a_run_whose_chunks_are_split_while_stage_1_merges_equals_the_reference(
    tmp_path_factory: pytest.TempPathFactory, docs: list[str], transition: int
) -> None:
    path = tmp_path_factory.mktemp("corpus") / "c.txt"
    path.write_text(SPECIAL.join(docs * 3), encoding="utf-8")
    config = _config(path, vocab_size=transition + 15, superword_transition=transition, chunk_size=32)
    with use_backend("native"):
        result = train(config)
    with use_backend("python"):
        reference = train(config)
    assert _learned(result) == _learned(reference)


@needs_native
def test_stage_2_chunks_are_split_on_another_thread_while_stage_1_merges(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "corpus.txt"
    path.write_text(SPECIAL.join(["the cat sat on the mat, the end.\n"] * 40), "utf-8")
    split_on: list[str] = []
    real = native.split_chunks

    def spy(tables: Any, held: bytes) -> native.PartedChunks:
        split_on.append(threading.current_thread().name)
        return real(tables, held)

    monkeypatch.setattr(native, "split_chunks", spy)
    config = _config(path)
    result = train(config)
    assert split_on == ["bpe-split-chunks"]
    with use_backend("python"):
        reference = train(config)
    assert _learned(result) == _learned(reference)


@needs_native
def test_compacting_tables_gives_their_distinct_keys_and_keeps_their_entries() -> None:
    # The stage-2 tables' distinct keys are counted as they are laid out flat (one pass, not count_new then
    # compact): the same number, and each table's entries, counts and order as before.
    def table(texts: list[str]) -> native.NativeCountTable:
        made = native.count_table()
        assert made is not None
        made.add("gpt2", texts)
        return made

    texts = [" ".join(f"w{i}{'x' * (i % 30)}" for i in range(k, k + 500)) for k in (0, 300, 600)]
    tables = [table([texts[0]]), table([texts[1]]), table([]), table([texts[2], texts[0]])]
    frames = [t.to_frame() for t in tables]
    distinct = len({key for frame in frames for key in decode_table(frame)})
    assert native.compact_tables(tables) == distinct
    assert [t.to_frame() for t in tables] == frames
    assert native.compact_tables([]) == 0
