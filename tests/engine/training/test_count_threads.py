"""Counting into the native table (rust/src/count.rs) and counting in threads of one process: the same
counts, totals, progress and errors as the Python reference and as worker processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any
from unittest import mock

import psutil
import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_studio.engine import TrainConfig, native, train
from bpe_studio.engine.config import InvalidUtf8Policy
from bpe_studio.engine.corpus.plan import Chunk, CorpusChangedError, CorpusDecodeError, plan_chunks
from bpe_studio.engine.pretokenize.patterns import MODEL_PATTERNS, resolve_pattern
from bpe_studio.engine.training.counter import ChunkCounter
from bpe_studio.engine.training.counting import (
    CountOutcome,
    CountUpdate,
    count_parallel,
    count_serial,
    count_threads,
    counting_path,
)
from bpe_studio.engine.workers import protocol
from bpe_studio.engine.workers.protocol import decode_table, encode_table

from ..backends import BACKENDS, needs_native, use_backend

PRESETS = ["gpt2", "cl100k", "o200k"]
ENDOFTEXT = "<|endoftext|>"
# Any decodable text: every plane, NUL, no lone surrogates.
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
keys = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
tables = st.dictionaries(keys, st.integers(min_value=-(2**63), max_value=2**63 - 1), max_size=30)


def _reference(preset: str, parts: list[str]) -> Counter[str]:
    """The Python reference: the preset's regex, counted in order of first appearance."""
    return Counter(token for part in parts for token in regex.findall(resolve_pattern(preset), part))


def _table() -> Any:
    table = native.count_table()
    assert table is not None, "the native kernel is not built or is switched off"
    return table


# --- The native table -------------------------------------------------------------------------------


@needs_native
@pytest.mark.parametrize("preset", PRESETS)
@settings(max_examples=150, deadline=None)
@given(batches=st.lists(st.lists(texts, max_size=4), max_size=4))
def test_the_table_gives_the_frame_of_the_reference_counts(preset: str, batches: list[list[str]]) -> None:
    # Counted in several calls, as chunks are: the frame is byte for byte encode_table's of the reference
    # dict (same keys, counts and order), so every reader of frames reads it as before.
    with use_backend("native"):
        table = _table()
        for batch in batches:
            table.add(preset, batch)
    reference = _reference(preset, [text for batch in batches for text in batch])
    assert table.to_frame() == encode_table(reference)
    assert len(table) == len(reference) and table.total == sum(reference.values())


@needs_native
@settings(max_examples=100, deadline=None)
@given(first=st.lists(texts, max_size=4), second=st.lists(texts, max_size=4))
def test_merging_tables_equals_counting_both(first: list[str], second: list[str]) -> None:
    with use_backend("native"):
        a, b = _table(), _table()
        a.add("cl100k", first)
        b.add("cl100k", second)
        a.merge(b)
    reference = _reference("cl100k", first)
    reference.update(_reference("cl100k", second))
    assert a.to_frame() == encode_table(reference)
    assert b.to_frame() == encode_table(_reference("cl100k", second))  # the other is left as it was


@needs_native
@settings(max_examples=200, deadline=None)
@given(first=tables, second=tables)
def test_frames_are_merged_natively_as_decode_table_reads_them(
    first: dict[str, int], second: dict[str, int]
) -> None:
    # Keys with NUL (the frame's other layout), empty keys, any counts a worker could declare.
    with use_backend("native"):
        table = _table()
        table.add_frame(encode_table(first))
        table.add_frame(encode_table(second))
    expected = Counter(decode_table(encode_table(first)))
    expected.update(decode_table(encode_table(second)))
    got = decode_table(table.to_frame())
    assert got.keys() == expected.keys()
    assert all(got[k] == (expected[k] + 2**63) % 2**64 - 2**63 for k in got)  # int64, as the frame holds


@needs_native
@pytest.mark.parametrize("table", [{"a": 1, "bc": 2}, {"a\0": 1, "bc": 2}, {"bc": 1, "a": 2}])
def test_a_frame_that_is_not_what_it_declares_is_refused_and_nothing_added(table: dict[str, int]) -> None:
    frame = encode_table(table)
    header = protocol._TABLE_HEADER
    n, size, separated = header.unpack(frame[: header.size])
    forged = [
        frame[:-1],
        frame + b"\0",
        frame[:5],
        header.pack(2**61, size, separated) + frame[header.size :],  # a huge count of keys: no allocation
        header.pack(n, 2**64 - 1, separated) + frame[header.size :],  # sizes that would wrap around
    ]
    if separated:  # one NUL more in the text: a key more than declared
        forged.append(header.pack(n, size, separated) + frame[header.size :].replace(b"bc", b"b\0", 1))
    else:  # key lengths that do not add up to the text
        lengths = header.size + size
        forged.append(frame[:lengths] + (99).to_bytes(8, "little") + frame[lengths + 8 :])
    duplicate = encode_table({"x": 1, "y": 2}).replace(b"y", b"x")
    with use_backend("native"):
        target = _table()
        target.add("gpt2", ["keep me"])
        before = target.to_frame()
        for broken in [*forged, duplicate]:
            with pytest.raises(ValueError, match="count table frame"):
                decode_table(broken)
            with pytest.raises(ValueError, match="count table frame"):
                target.add_frame(broken)
            assert target.to_frame() == before
        # Stricter than decode_table (which reads any non-zero byte as True): the flag is 0 or 1.
        with pytest.raises(ValueError, match="separator flag is 2"):
            target.add_frame(frame[:16] + b"\x02" + frame[17:])
        assert target.to_frame() == before


@needs_native
def test_many_keys_long_and_short_survive_the_table_growing() -> None:
    # Thousands of distinct pre-tokens (the table grows several times), a third longer than the 16 bytes
    # a slot holds inline, some sharing their first 16 bytes; counted, merged, and read back from a frame.
    def letters(i: int) -> str:  # 123 -> "bcd": one pre-token under gpt2
        return "".join(chr(ord("a") + int(d)) for d in str(i))

    words = [f"w{letters(i)}" for i in range(3000)]
    words += [f"prefixsharedsixteen{letters(i)}" for i in range(1500)]
    words += ["日本語の長い単語" * (1 + i % 3) + letters(i) for i in range(1500)]
    first, second = " ".join(words), " ".join(reversed(words[::2]))
    with use_backend("native"):
        a, b = _table(), _table()
        a.add("gpt2", [first])
        b.add("gpt2", [second])
        a.merge(b)
        c = _table()
        c.add_frame(a.to_frame())
    reference = _reference("gpt2", [first])
    reference.update(_reference("gpt2", [second]))
    assert len(reference) > 5000
    assert a.to_frame() == c.to_frame() == encode_table(reference)


@needs_native
def test_a_class_table_too_small_is_grown_and_nothing_counted_twice() -> None:
    parts = ["ab 12", "x é", "𝐀𝐁 𝟏 ab"]
    with use_backend("native"), mock.patch.object(native, "_classes", [b""]):
        table = _table()
        table.add("o200k", parts)
        assert len(native._classes[0]) == 0x110000
    assert table.to_frame() == encode_table(_reference("o200k", parts))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("preset", PRESETS)
def test_chunk_counter_falls_back_to_python_for_a_lone_surrogate(backend: str, preset: str) -> None:
    parts = ["it's 12 ab", "a\ud800b ab", "ab!"]
    with use_backend(backend):
        counter = ChunkCounter(pattern=preset, special_tokens=["<s>"], policy=InvalidUtf8Policy.ERROR)
        counter.count_text("<s>".join(parts[:1]), continues_document=False)
        counter.count_text("<s>".join(parts[1:]), continues_document=False)
        assert counter.native_only is False
    assert counter.counts == _reference(preset, parts)
    assert counter.unique == len(_reference(preset, parts))
    assert counter.totals.pretokens == sum(_reference(preset, parts).values())


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=60, deadline=None)
@given(parts=st.lists(texts, max_size=5))
def test_chunk_counter_gives_the_same_on_both_backends(backend: str, parts: list[str]) -> None:
    with use_backend(backend):
        counter = ChunkCounter(pattern="gpt2", special_tokens=["<s>"], policy=InvalidUtf8Policy.ERROR)
        for part in parts:
            counter.count_text(part, continues_document=False)
        assert (counter.table is not None) == (backend == "native")
    reference = _reference("gpt2", [p for part in parts for p in part.split("<s>")])
    assert counter.counts == reference
    assert counter.unique == len(reference)
    assert decode_table(counter.frame()) == counter.byte_counts()
    assert counter.byte_counts() == {k.encode().decode("latin-1"): n for k, n in reference.items()}


# --- Which way to count ---------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_counting_path(backend: str) -> None:
    with use_backend(backend):
        fast = "threads" if backend == "native" else "processes"
        assert counting_path(workers=1, pattern="gpt2", plain_text_files=True) == "serial"
        assert counting_path(workers=0, pattern=r"\w+", plain_text_files=False) == "serial"
        for preset in PRESETS:  # by name or by its regex (what TrainConfig.pattern_regex gives)
            assert counting_path(workers=2, pattern=preset, plain_text_files=True) == fast
            assert counting_path(workers=4, pattern=resolve_pattern(preset), plain_text_files=True) == fast
            assert counting_path(workers=2, pattern=preset, plain_text_files=False) == "processes"
        assert counting_path(workers=2, pattern=r"\w+|\s+", plain_text_files=True) == "processes"


@needs_native
def test_training_counts_plain_text_in_threads_and_records_in_processes(tmp_path: Path) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world, it's 2024 <|endoftext|> x" * 300, encoding="utf-8")
    records = tmp_path / "c.jsonl"
    records.write_text('{"text": "hello world"}\n' * 300, encoding="utf-8")
    used: list[str] = []

    def spy(name: str, real: Any) -> Any:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            used.append(name)
            return real(*args, **kwargs)

        return wrapped

    base = TrainConfig(
        inputs=[corpus], vocab_size=300, special_tokens=(ENDOFTEXT,), workers=2, chunk_size=500
    )
    trainer = "bpe_studio.engine.training.trainer"
    with (
        use_backend("native"),
        mock.patch(f"{trainer}.count_threads", spy("threads", count_threads)),
        mock.patch(f"{trainer}.count_parallel", spy("processes", count_parallel)),
    ):
        threaded = train(base)
        assert used == ["threads"]
        train(base.replace(inputs=[records]))
        assert used == ["threads", "processes"]
        train(base.replace(pattern=r"\w+| "))
        assert used == ["threads", "processes", "processes"]
    serial = train(base.replace(workers=1))
    assert threaded.merges == serial.merges and threaded.stats == serial.stats


@needs_native
def test_training_on_a_models_pattern_counts_in_threads_as_the_python_engine_does(tmp_path: Path) -> None:
    # Llama 3's pattern is no preset, but it has a native scanner: threads, as for the presets.
    corpus = tmp_path / "c.txt"
    corpus.write_text("Hello world, it's 2024!\n\n  DON'T <|endoftext|> x\t1234567 " * 300, encoding="utf-8")
    used: list[str] = []
    base = TrainConfig(
        inputs=[corpus],
        vocab_size=300,
        special_tokens=(ENDOFTEXT,),
        workers=2,
        chunk_size=500,
        pattern=MODEL_PATTERNS["llama3"],
    )
    trainer = "bpe_studio.engine.training.trainer"
    with (
        use_backend("native"),
        mock.patch(
            f"{trainer}.count_threads", lambda *a, **k: (used.append("threads"), count_threads(*a, **k))[1]
        ),
        mock.patch(
            f"{trainer}.count_parallel",
            lambda *a, **k: (used.append("processes"), count_parallel(*a, **k))[1],
        ),
    ):
        threaded = train(base)
    assert used == ["threads"]
    with use_backend("python"):
        reference = train(base.replace(workers=1))
    assert threaded.merges == reference.merges and threaded.stats == reference.stats


# --- Threads, processes, serial: the same counts --------------------------------------------------------

PIECES = ["a", "aa", " the", "it's", " 12", "\n", "  ", "é", "日本", "😀", "\0", "<|", "|>", ENDOFTEXT]


@st.composite
def corpora(draw: st.DrawFn) -> list[str]:
    """1-3 files of pieces and free text, with special tokens anywhere (so also at chunk edges)."""
    piece = st.one_of(st.sampled_from(PIECES), st.text(min_size=1, max_size=5))
    return draw(st.lists(st.lists(piece, max_size=30).map("".join), min_size=1, max_size=3))


def _count(how: str, paths: list[Path], *, workers: int, chunk_size: int, pattern: str) -> CountOutcome:
    chunks = plan_chunks(paths, chunk_size=chunk_size, special_tokens=[ENDOFTEXT], newline_cuts=True)
    options: dict[str, Any] = {
        "pattern": pattern,
        "special_tokens": [ENDOFTEXT],
        "policy": InvalidUtf8Policy.ERROR,
        "cancelled": lambda: False,
    }
    if how == "serial":
        items = list(count_serial(chunks, **options))
    elif how == "threads":
        items = list(count_threads(chunks, workers=workers, **options))
    else:
        items = list(count_parallel(chunks, workers=workers, **options))
    *updates, outcome = items
    assert isinstance(outcome, CountOutcome)
    assert all(isinstance(u, CountUpdate) for u in updates)
    assert len(updates) == len(chunks)
    assert [u.bytes_done for u in updates][-1:] == ([sum(c.size for c in chunks)] if chunks else [])
    return outcome


def _write(folder: Path, files: list[str]) -> list[Path]:
    paths = []
    for i, text in enumerate(files):
        path = folder / f"part{i}.txt"
        path.write_bytes(text.encode("utf-8"))
        if text:
            paths.append(path)
    return paths


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    files=corpora(),
    workers=st.integers(1, 4),
    chunk_size=st.integers(1, 48),
    preset=st.sampled_from(PRESETS),
)
def test_threads_count_what_one_thread_counts(
    tmp_path: Path, backend: str, files: list[str], *, workers: int, chunk_size: int, preset: str
) -> None:
    folder = Path(tmp_path) / f"c{abs(hash((tuple(files), workers, chunk_size, preset)))}"
    folder.mkdir(exist_ok=True)
    paths = _write(folder, files)
    with use_backend(backend):
        serial = _count("serial", paths, workers=1, chunk_size=chunk_size, pattern=preset)
        threads = _count("threads", paths, workers=workers, chunk_size=chunk_size, pattern=preset)
    assert threads.counts == serial.counts
    assert threads.totals == serial.totals
    reference = _reference(preset, [p for text in files for p in text.split(ENDOFTEXT)])
    assert serial.counts == {k.encode().decode("latin-1"): n for k, n in reference.items()}
    assert not [t for t in threading.enumerate() if t.name.startswith("bpe-studio-count")]


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=corpora(), chunk_size=st.integers(1, 32))
def test_threads_count_what_worker_processes_count(
    tmp_path: Path, backend: str, files: list[str], chunk_size: int
) -> None:
    folder = Path(tmp_path) / f"c{abs(hash((tuple(files), chunk_size)))}"
    folder.mkdir(exist_ok=True)
    paths = _write(folder, files)
    with use_backend(backend):
        threads = _count("threads", paths, workers=2, chunk_size=chunk_size, pattern="gpt2")
        processes = _count("processes", paths, workers=2, chunk_size=chunk_size, pattern="gpt2")
    assert threads.counts == processes.counts
    assert threads.totals == processes.totals
    assert psutil.Process().children(recursive=True) == []


# --- Cancel, errors, no leftovers ------------------------------------------------------------------------


def _options(cancelled: Any = lambda: False) -> dict[str, Any]:
    return {
        "pattern": "gpt2",
        "special_tokens": [ENDOFTEXT],
        "policy": InvalidUtf8Policy.ERROR,
        "cancelled": cancelled,
    }


def _no_counting_threads() -> bool:
    return not [t for t in threading.enumerate() if t.name.startswith("bpe-studio-count")]


@pytest.mark.parametrize("backend", BACKENDS)
def test_cancel_stops_between_chunks_and_joins_the_threads(tmp_path: Path, backend: str) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text("some words here\n" * 5000, encoding="utf-8")
    chunks = plan_chunks([corpus], chunk_size=1000, special_tokens=[], newline_cuts=True)
    flag, never = threading.Event(), threading.Event()
    taken = 0

    def lazily() -> Any:
        nonlocal taken
        for i, chunk in enumerate(chunks):
            if i == 2:
                # Holds the threads (the one drawing, and the other waiting to draw) until the run has been
                # cancelled and is joining them: without it they could count all 80 small chunks first.
                never.wait(timeout=2)
            taken += 1
            yield chunk

    with use_backend(backend):
        items = []
        for item in count_threads(lazily(), workers=2, **_options(flag.is_set)):
            items.append(item)
            flag.set()  # cancelled after the first update
    assert items and all(isinstance(i, CountUpdate) for i in items)  # no outcome
    assert taken < len(chunks)  # the threads stopped taking chunks
    assert _no_counting_threads()


def test_closing_the_generator_joins_the_threads(tmp_path: Path) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text("some words here\n" * 2000, encoding="utf-8")
    chunks = plan_chunks([corpus], chunk_size=500, special_tokens=[], newline_cuts=True)
    counting = count_threads(chunks, workers=3, **_options())
    assert isinstance(next(counting), CountUpdate)
    counting.close()
    assert _no_counting_threads()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_decode_error_names_the_file_and_offset_as_a_worker_does(tmp_path: Path, backend: str) -> None:
    corpus = tmp_path / "bad.txt"
    corpus.write_bytes(b"good text\n" * 300 + b"bad \xff byte\n" + b"more\n" * 300)
    chunks = plan_chunks([corpus], chunk_size=256, special_tokens=[], newline_cuts=True)
    with use_backend(backend):
        with pytest.raises(CorpusDecodeError) as threads:
            list(count_threads(chunks, workers=2, **_options()))
        with pytest.raises(CorpusDecodeError) as processes:
            list(count_parallel(chunks, workers=2, **_options()))
    assert str(threads.value) == str(processes.value)
    assert (threads.value.path, threads.value.offset) == (str(corpus), 3004)
    assert _no_counting_threads() and psutil.Process().children(recursive=True) == []


def test_a_file_that_shrinks_underneath_is_reported(tmp_path: Path) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text("words and words\n" * 400, encoding="utf-8")
    chunks = plan_chunks([corpus], chunk_size=512, special_tokens=[], newline_cuts=True)
    corpus.write_text("words\n", encoding="utf-8")  # cut short after planning
    with pytest.raises(CorpusChangedError):
        list(count_threads(chunks, workers=2, **_options()))
    assert _no_counting_threads()


def test_an_unexpected_error_is_reported_as_a_worker_process_reports_it(tmp_path: Path) -> None:
    missing = Chunk(str(tmp_path / "gone.txt"), 0, 10, False)
    expected = "a counting worker failed: FileNotFoundError"
    with pytest.raises(protocol.WorkerCrashedError, match=expected):
        list(count_threads([missing, missing], workers=2, **_options()))
    assert _no_counting_threads()


@needs_native
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_while_threads_count_cancels_cleanly(tmp_path: Path, signum: int) -> None:
    # The CLI as a user runs it: Ctrl-C during counting in threads exits 130 with one line, no traceback,
    # no tokenizer written, and no process left (the threads need none).
    corpus = tmp_path / "big.txt"
    line = "The quick brown fox jumps over the lazy dog; naïve cafés, 12345 and more words.\n"
    corpus.write_text("".join(f"doc {i} " + line * 100 + ENDOFTEXT for i in range(4000)), encoding="utf-8")
    out = tmp_path / "out"
    args = ["train", str(corpus), "--vocab-size", "5000", "--special-token", ENDOFTEXT, "--workers", "2"]
    args += ["--chunk-size", "65536", "--progress", "json", "--out", str(out)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "bpe_studio", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "BPE_STUDIO_PURE": "0"},
    )
    try:
        assert proc.stdout is not None
        for raw in proc.stdout:
            if json.loads(raw)["type"] == "count":
                break
        assert psutil.Process(proc.pid).children(recursive=True) == []  # threads, not processes
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert proc.returncode == 128 + signum
    assert "cancelled" in err and "Traceback" not in err
    assert not (out / "tokenizer.json").exists()


@needs_native
@pytest.mark.parametrize("workers", [2, 3])
def test_kept_tables_are_the_threads_own_and_count_the_distinct_pretokens_of_them_all(
    tmp_path: Path, workers: int
) -> None:
    # Words shared by every chunk and words of one chunk only, short and long (past 16 bytes).
    text = "".join(f"shared {i % 7} word{i}{'x' * (i % 30)}\n" for i in range(3000))
    corpus = tmp_path / "c.txt"
    corpus.write_text(text, encoding="utf-8")
    chunks = plan_chunks([corpus], chunk_size=2000, special_tokens=[], newline_cuts=True)
    with use_backend("native"):
        *_, kept = count_threads(chunks, workers=workers, keep_table=True, **_options())
        *_, serial = count_serial(chunks, **_options())
    assert isinstance(kept, CountOutcome) and isinstance(serial, CountOutcome)
    assert len(kept.tables) == workers and not kept.counts  # not merged into one
    # Which thread counts which chunk varies: keys in several tables are counted once (count_new).
    assert kept.unique == serial.unique == len(serial.counts)
    frames = [decode_table(t.to_frame()) for t in kept.tables]
    summed: Counter[str] = Counter()
    for frame in frames:
        summed.update(frame)
    assert dict(summed) == serial.counts


@needs_native
def test_a_merged_table_holds_the_counts_and_gives_them_as_byte_words(tmp_path: Path) -> None:
    text = "".join(f"shared {i % 7} wörd{i}{'x' * (i % 30)}\n" for i in range(3000))
    corpus = tmp_path / "c.txt"
    corpus.write_text(text, encoding="utf-8")
    chunks = plan_chunks([corpus], chunk_size=2000, special_tokens=[], newline_cuts=True)
    with use_backend("native"):
        *_, merged = count_threads(chunks, workers=2, merged_table=True, **_options())
        *_, serial = count_serial(chunks, **_options())
    assert isinstance(merged, CountOutcome) and isinstance(serial, CountOutcome)
    assert len(merged.tables) == 1 and not merged.counts
    assert merged.unique == serial.unique
    words = merged.tables[0].byte_words()
    assert len(merged.tables[0]) == 0, "the table is emptied"
    assert words.words() == serial.counts  # latin-1 spelt bytes, as the dict keys are


@needs_native
def test_training_from_scratch_in_threads_makes_no_dict_of_the_counts(tmp_path: Path) -> None:
    # A dict of a str per distinct pre-token, made on one thread after the others finished, was a fifth of
    # the counting phase on 100 MB (issue 22): the threads' table goes to the merge loop as byte words.
    corpus = tmp_path / "c.txt"
    corpus.write_text(
        "".join(f"hello wörld {i % 13}, it's {i} <|endoftext|> x{i % 5}\n" for i in range(2000)),
        encoding="utf-8",
    )
    config = TrainConfig(
        inputs=[corpus], vocab_size=400, special_tokens=(ENDOFTEXT,), workers=2, chunk_size=4000
    )

    def refuse(frame: bytes) -> dict[str, int]:
        raise AssertionError("decode_table was called")

    with use_backend("native"):
        with mock.patch("bpe_studio.engine.training.counting.decode_table", refuse):
            threaded = train(config)
        serial = train(config.replace(workers=1))
    with use_backend("python"):
        reference = train(config.replace(workers=1))
    assert threaded.merges == serial.merges == reference.merges
    assert threaded.merge_counts == reference.merge_counts
    assert threaded.stats == serial.stats == reference.stats
