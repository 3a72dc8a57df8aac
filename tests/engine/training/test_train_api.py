"""The training API: events, cancellation, decode errors, worker processes and the Qt-free import."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import psutil
import pytest

from bpe_studio.engine import (
    CorpusDecodeError,
    CountProgress,
    Finished,
    MergeMade,
    Phase,
    PhaseStarted,
    StopReason,
    TrainConfig,
    iter_train,
    train,
)

from ..backends import use_backend

ENDOFTEXT = "<|endoftext|>"


def _children() -> list[psutil.Process]:
    return psutil.Process().children(recursive=True)


def _corpus(tmp_path: Path, repeat: int = 200) -> Path:
    path = tmp_path / "corpus.txt"
    doc = "The quick brown fox jumps over the lazy dog.\nIt's 2024 and naïve cafés serve 日本語 text 😀.\n"
    path.write_text(ENDOFTEXT.join(f"{i} {doc}" for i in range(repeat)), encoding="utf-8")
    return path


def test_event_sequence(tmp_path: Path) -> None:
    events = list(
        iter_train(TrainConfig(inputs=[_corpus(tmp_path)], vocab_size=300, special_tokens=(ENDOFTEXT,)))
    )
    phases = [e.phase for e in events if isinstance(e, PhaseStarted)]
    assert phases == [Phase.PLANNING, Phase.COUNTING, Phase.MERGING]
    counts = [e for e in events if isinstance(e, CountProgress)]
    assert counts[-1].bytes_done == counts[-1].bytes_total > 0
    assert [e.bytes_done for e in counts] == sorted(e.bytes_done for e in counts)
    merges = [e for e in events if isinstance(e, MergeMade)]
    assert [m.index for m in merges] == list(range(43))
    assert all(m.total == 43 and m.token == m.pair[0] + m.pair[1] for m in merges)
    assert isinstance(events[-1], Finished)
    result = events[-1].result
    assert [m.pair for m in merges] == result.merges
    assert [m.count for m in merges] == result.merge_counts
    assert result.stats.documents == 200 and result.stats.special_tokens == 199
    assert set(result.timings) == {"planning", "counting", "merging", "total"}
    elapsed = [e.elapsed for e in events]
    assert elapsed == sorted(elapsed)


def test_on_progress_sees_every_event(tmp_path: Path) -> None:
    seen: list[object] = []
    result = train(TrainConfig(inputs=[_corpus(tmp_path)], vocab_size=280), on_progress=seen.append)
    assert isinstance(seen[-1], Finished) and seen[-1].result is result


def test_cancel_during_merging_returns_partial_result(tmp_path: Path) -> None:
    flag = threading.Event()
    made = 0

    def on_progress(event: object) -> None:
        nonlocal made
        if isinstance(event, MergeMade):
            made += 1
            if made == 5:
                flag.set()

    result = train(
        TrainConfig(inputs=[_corpus(tmp_path)], vocab_size=400), on_progress=on_progress, cancel=flag.is_set
    )
    assert result.stop_reason is StopReason.CANCELLED
    assert len(result.merges) == 5


def test_cancel_during_parallel_counting_leaves_no_process(tmp_path: Path) -> None:
    flag = threading.Event()
    cfg = TrainConfig(inputs=[_corpus(tmp_path, 2000)], vocab_size=400, workers=2, chunk_size=4096)
    events = []
    # Worker processes count on the Python backend (the native one counts in threads: test_count_threads).
    with use_backend("python"):
        for event in iter_train(cfg, cancel=flag.is_set):
            events.append(event)
            if isinstance(event, CountProgress):
                assert len(_children()) == 2
                flag.set()
    assert isinstance(events[-1], Finished)
    assert events[-1].result.stop_reason is StopReason.CANCELLED
    assert events[-1].result.merges == []
    assert _children() == []


def test_closing_the_iterator_stops_workers(tmp_path: Path) -> None:
    cfg = TrainConfig(inputs=[_corpus(tmp_path, 2000)], vocab_size=400, workers=2, chunk_size=4096)
    events = iter_train(cfg)
    for event in events:
        if isinstance(event, CountProgress):
            break
    events.close()
    assert _children() == []


@pytest.mark.parametrize("workers", [1, 2])
def test_invalid_utf8_names_file_and_offset(tmp_path: Path, workers: int) -> None:
    path = tmp_path / "bad.txt"
    good = ("hello world\n" * 500).encode()
    path.write_bytes(good + b"caf\xe9 au lait\n" + good)
    cfg = TrainConfig(inputs=[path], vocab_size=300, workers=workers, chunk_size=1000)
    with pytest.raises(CorpusDecodeError) as info:
        train(cfg)
    assert info.value.offset == len(good) + 3
    assert str(path) in str(info.value) and f"offset {len(good) + 3}" in str(info.value)
    assert "invalid_utf8='replace'" in str(info.value)
    assert _children() == []
    # With the replace policy the same file trains.
    assert train(cfg.replace(invalid_utf8="replace", vocab_size=265)).stop_reason is StopReason.VOCAB_SIZE


def test_workers_do_not_change_the_result(tmp_path: Path) -> None:
    cfg = TrainConfig(
        inputs=[_corpus(tmp_path, 500)], vocab_size=500, special_tokens=(ENDOFTEXT,), chunk_size=3000
    )
    one = train(cfg.replace(workers=1))
    two = train(cfg.replace(workers=2))
    assert one.merges == two.merges and one.vocab == two.vocab and one.stats == two.stats


def test_engine_import_does_not_import_qt() -> None:
    code = (
        "import sys, bpe_studio.engine, bpe_studio.engine.formats, bpe_studio.cli; "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'pyqtgraph')]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_works_from_a_script_without_main_guard(tmp_path: Path) -> None:
    # Students often call train_bpe at the top level of a script; worker processes must not re-run it.
    corpus = _corpus(tmp_path)
    script = tmp_path / "script.py"
    script.write_text(
        "from bpe_studio.engine import train_bpe\n"
        f"vocab, merges = train_bpe({str(corpus)!r}, 300, ['<|endoftext|>'], workers=2, chunk_size=1000)\n"
        "print('RAN', len(merges))\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("RAN") == 1


def test_garbage_collection_is_restored_after_merging(tmp_path: Path) -> None:
    import gc

    cfg = TrainConfig(inputs=[_corpus(tmp_path)], vocab_size=300)
    # On, as in a script (the UI tests' session keeps it off, as the app does, when they ran first).
    was_enabled = gc.isenabled()
    gc.enable()
    try:
        train(cfg)
        assert gc.isenabled()
        events = iter_train(cfg)
        for event in events:
            if isinstance(event, MergeMade):
                assert gc.isenabled()  # paused only while the loop runs, never in the consumer's code
                break
        events.close()
        assert gc.isenabled()
    finally:
        if not was_enabled:
            gc.disable()


def test_train_without_on_progress_makes_no_merge_events_and_the_same_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No one reads the merges' events: train() makes none (1-2 µs a merge), and returns what a run that
    # reports every merge returns.
    from bpe_studio.engine.training import trainer

    config = TrainConfig(inputs=[_corpus(tmp_path)], vocab_size=400, special_tokens=(ENDOFTEXT,))
    seen: list[object] = []
    reported = train(config, on_progress=seen.append)
    assert sum(isinstance(e, MergeMade) for e in seen) == len(reported.merges) > 0
    made: list[object] = []
    monkeypatch.setattr(trainer, "MergeMade", lambda *args: made.append(args))
    quiet = train(config)
    assert made == []
    assert (quiet.merges, quiet.merge_counts, quiet.vocab, quiet.stop_reason) == (
        reported.merges,
        reported.merge_counts,
        reported.vocab,
        reported.stop_reason,
    )
