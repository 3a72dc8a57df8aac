"""engine.evaluation (``bpe-studio eval``, Compare ▸ Corpus): the figures of corpus_compression for every
format and cut, with every tokenizer at once; cancel stops inside a file; 1 and 2 workers agree."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import psutil
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_studio.engine import Tokenizer, TrainConfig, backend, load, train
from bpe_studio.engine.encoding import evaluation
from bpe_studio.engine.encoding.corpus_encoding import corpus_compression
from bpe_studio.engine.encoding.evaluation import EvaluationCancelledError, evaluate_files
from bpe_studio.engine.formats import save_result

from ..corpus.test_corpus_formats import ENDOFTEXT, FORMATS, FRAGMENTS, write_as

pytest.importorskip("pyarrow")


def _tokenizer(folder: Path, vocab_size: int, pattern: str = "gpt2") -> Path:
    corpus = folder / f"train{vocab_size}.txt"
    corpus.write_text(" ".join(f"the cat x1 sat{i} naïve\n" for i in range(300)), encoding="utf-8")
    config = TrainConfig(inputs=[corpus], vocab_size=vocab_size, special_tokens=[ENDOFTEXT], pattern=pattern)
    return save_result(train(config), folder / f"tok{vocab_size}-{len(pattern)}.json")


@pytest.fixture(scope="module")
def tokenizers(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder = tmp_path_factory.mktemp("toks")
    # The third has a custom pattern: text files are then not cut at newlines for any of them.
    return [_tokenizer(folder, 300), _tokenizer(folder, 270, "cl100k"), _tokenizer(folder, 280, r"\S+|\s+")]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.lists(st.sampled_from([*FRAGMENTS, " x1", "y2z", "\n", " "]), max_size=12).map("".join),
        min_size=1,
        max_size=12,
    ),
    st.sampled_from(FORMATS),
    st.integers(1, 60),
    st.integers(1, 3),
)
def test_figures_equal_corpus_compression_for_every_tokenizer(  # noqa: PLR0917 - hypothesis arguments
    tokenizers: list[Path],
    tmp_path_factory: pytest.TempPathFactory,
    documents: list[str],
    name: str,
    chunk: int,
    count: int,
) -> None:
    path = write_as(tmp_path_factory.mktemp("c"), documents, name)
    chosen = [load(t) for t in tokenizers[:count]]
    # Each tokenizer alone, with the default chunk size, as eval computed it before.
    expected = [corpus_compression(t, path) for t in chosen]
    assert evaluate_files(chosen, [path], chunk_size=chunk, workers=1) == [expected]


def _documents(count: int) -> list[str]:
    return [f"record {i} of the cat, naïve café\nline two {i % 13}" for i in range(count)]


def test_cancel_stops_inside_a_file(tokenizers: list[Path], tmp_path: Path) -> None:
    records = 3000
    path = write_as(tmp_path, _documents(records), "big.jsonl")  # one task: far below the chunk size
    tokenizer = load(tokenizers[0])
    calls: list[str] = []

    class Counting(Tokenizer):
        def encode_ordinary(self, text: str) -> list[int]:
            calls.append(text)
            return super().encode_ordinary(text)

    counting = Tokenizer.__new__(Counting)
    counting.__dict__.update(tokenizer.__dict__)
    with pytest.raises(EvaluationCancelledError):
        evaluate_files([counting], [path], workers=1, cancelled=lambda: len(calls) >= 100)
    assert len(calls) == 100 < records  # the check before document 101 stopped it


def _children() -> set[int]:
    return {p.pid for p in psutil.Process().children(recursive=True)}


@pytest.mark.parametrize("name", ["c.jsonl", "c.txt", "c.jsonl.gz", "c.parquet"])
def test_one_and_two_workers_give_the_same_figures(tokenizers: list[Path], tmp_path: Path, name: str) -> None:
    documents = _documents(400)
    paths = [write_as(tmp_path, documents, name, row_group=37), write_as(tmp_path, documents[:50], "d.txt")]
    names = [str(t) for t in tokenizers]
    before = _children()
    serial = evaluate_files(names, paths, workers=1, chunk_size=512)
    parallel = evaluate_files(names, paths, workers=2, chunk_size=512)
    assert parallel == serial
    assert serial[0] == [corpus_compression(load(t), paths[0]) for t in tokenizers]
    assert _children() == before  # the workers are gone


def test_cancel_with_workers_stops_them(tokenizers: list[Path], tmp_path: Path) -> None:
    path = write_as(tmp_path, _documents(2000), "c.jsonl")
    before = _children()
    asked: list[int] = []

    def cancelled() -> bool:
        asked.append(1)
        return len(asked) > 3

    with pytest.raises(EvaluationCancelledError):  # a custom pattern: worker processes
        evaluate_files([str(tokenizers[2])], [path], workers=2, chunk_size=256, cancelled=cancelled)
    assert _children() == before


def test_tokenizer_objects_need_one_worker_process(tokenizers: list[Path], tmp_path: Path) -> None:
    path = write_as(tmp_path, _documents(5), "c.txt")
    # A custom pattern: worker processes, which load tokenizers by name.
    with pytest.raises(ValueError, match="workers: worker processes load tokenizers by name"):
        evaluate_files([load(tokenizers[2])], [path], workers=2)


needs_native = pytest.mark.skipif(backend() != "native", reason="threads need the native kernel")


@needs_native
@pytest.mark.parametrize("name", ["c.jsonl", "c.txt", "c.jsonl.gz", "c.parquet"])
def test_native_presets_evaluate_on_threads_with_the_same_figures(
    tokenizers: list[Path], tmp_path: Path, name: str
) -> None:
    documents = _documents(400)
    paths = [write_as(tmp_path, documents, name, row_group=37), write_as(tmp_path, documents[:50], "d.txt")]
    loaded = [load(t) for t in tokenizers[:2]]  # gpt2 and cl100k patterns: objects are fine on threads
    before, threads = _children(), threading.active_count()
    serial = evaluate_files(loaded, paths, workers=1, chunk_size=512)
    started: list[str] = []
    real = evaluation.ordered_map

    def spy(*args: Any, **kwargs: Any) -> Any:
        started.append(kwargs["name"])
        return real(*args, **kwargs)

    evaluation.ordered_map = spy  # type: ignore[assignment]
    try:
        threaded = evaluate_files(loaded, paths, workers=2, chunk_size=512)
    finally:
        evaluation.ordered_map = real  # type: ignore[assignment]
    assert started == ["eval"]  # on threads, not worker processes
    assert threaded == serial
    assert serial[0] == [corpus_compression(t, paths[0]) for t in loaded]
    assert _children() == before and threading.active_count() == threads  # nothing left running


@needs_native
def test_cancel_on_threads_stops_them(tokenizers: list[Path], tmp_path: Path) -> None:
    path = write_as(tmp_path, _documents(2000), "c.jsonl")
    threads = threading.active_count()
    asked: list[int] = []

    def cancelled() -> bool:
        asked.append(1)
        return len(asked) > 3

    with pytest.raises(EvaluationCancelledError):
        evaluate_files([str(tokenizers[0])], [path], workers=2, chunk_size=256, cancelled=cancelled)
    assert threading.active_count() == threads
