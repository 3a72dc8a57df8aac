"""train_from_iterator gives exactly the result of the same documents in a text file joined by the special
token, for lists and generators, in this process and in worker processes, at any batch size."""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_studio.engine import (
    CountProgress,
    Finished,
    StopReason,
    TrainConfig,
    TrainResult,
    iter_train_from_iterator,
    train,
    train_from_iterator,
)

from ...processes import assert_no_leftover_processes
from ..corpus.test_corpus_formats import ENDOFTEXT, documents_strategy


def _file_result(documents: list[str], vocab_size: int) -> TrainResult:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "joined.txt"
        # A file is never empty here (train refuses an empty corpus): one more special token changes no
        # count but the special tokens'.
        path.write_bytes((ENDOFTEXT.join(documents) or ENDOFTEXT).encode("utf-8"))
        return train(TrainConfig(inputs=[path], vocab_size=vocab_size, special_tokens=[ENDOFTEXT], workers=1))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents_strategy, st.integers(0, 40), st.integers(1, 64), st.booleans())
def test_equals_training_on_the_joined_file(
    documents: list[str], extra: int, batch: int, as_generator: bool
) -> None:
    expected = _file_result(documents, 257 + extra)
    texts = (d for d in documents) if as_generator else documents
    result = train_from_iterator(
        texts, vocab_size=257 + extra, special_tokens=[ENDOFTEXT], workers=1, batch_bytes=batch
    )
    assert result.merges == expected.merges
    assert result.merge_counts == expected.merge_counts
    assert result.vocab == expected.vocab
    assert result.stats.documents == expected.stats.documents
    assert result.stats.pretokens == expected.stats.pretokens
    assert result.stats.bytes == sum(len(d.encode()) for d in documents)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents_strategy, st.integers(0, 40), st.integers(1, 32))
def test_equals_training_on_the_joined_file_with_two_workers(
    documents: list[str], extra: int, batch: int
) -> None:
    expected = _file_result(documents, 257 + extra)
    result = train_from_iterator(
        iter(documents), vocab_size=257 + extra, special_tokens=[ENDOFTEXT], workers=2, batch_bytes=batch
    )
    assert result.merges == expected.merges
    assert result.vocab == expected.vocab
    assert_no_leftover_processes(timeout=10)


def test_the_iterable_is_read_lazily_and_once() -> None:
    taken: list[int] = []

    def documents() -> Iterator[str]:
        for i in range(2000):
            taken.append(i)
            yield f"document {i} of many words"

    events = iter_train_from_iterator(documents(), vocab_size=300, workers=2, batch_bytes=200)
    first = next(e for e in events if isinstance(e, CountProgress))
    assert first.bytes_done > 0
    assert len(taken) < 2000  # counting started before the generator was drained
    finished = [e for e in events if isinstance(e, Finished)]
    assert len(taken) == 2000 and finished[0].result.stats.documents == 2000
    assert_no_leftover_processes(timeout=10)


def test_cancel_stops_the_workers() -> None:
    stop = threading.Event()

    def documents() -> Iterator[str]:
        for i in range(100_000):
            if i == 500:
                stop.set()
            yield f"text {i}"

    result = train_from_iterator(documents(), vocab_size=400, workers=2, batch_bytes=100, cancel=stop.is_set)
    assert result.stop_reason is StopReason.CANCELLED
    assert_no_leftover_processes(timeout=10)


def test_mistakes_are_named() -> None:
    with pytest.raises(ValueError, match="single string"):
        train_from_iterator("one text", vocab_size=300)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="inputs: not available when training from an iterator"):
        train_from_iterator(["a"], vocab_size=300, inputs=["x.txt"])
    with pytest.raises(TypeError, match="item 1 is bytes, not str"):
        train_from_iterator(["a", b"b"], vocab_size=300, workers=1)  # type: ignore[list-item]
    with pytest.raises(TypeError, match="item 1 is int"):
        train_from_iterator(["a", 3], vocab_size=300, workers=2)  # type: ignore[list-item]
    assert_no_leftover_processes(timeout=10)
