"""Counting on Dask and reading fsspec URLs: the same result as local training, whatever happens.

The cluster tests start 2-worker ``LocalCluster``s (a second or two each) and check that no process is left.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_studio.cli import main
from bpe_studio.engine import (
    ClusterError,
    CorpusDecodeError,
    CountProgress,
    Finished,
    Phase,
    PhaseStarted,
    StopReason,
    TrainConfig,
    TrainResult,
    iter_train,
    preflight,
    train,
    train_bpe,
)
from bpe_studio.engine.config import InvalidUtf8Policy
from bpe_studio.engine.corpus import distributed as dist
from bpe_studio.engine.corpus.plan import plan_chunks
from bpe_studio.engine.formats import load_studio
from bpe_studio.engine.pretokenize.patterns import resolve_pattern
from bpe_studio.engine.training.counting import CountOutcome, count_serial

from ..reference import reference_train
from ..training.test_train_exact import corpora

pytest.importorskip("distributed")
fsspec = pytest.importorskip("fsspec")

ENDOFTEXT = "<|endoftext|>"


def _children() -> set[int]:
    return {p.pid for p in psutil.Process().children(recursive=True)}


def _corpus(path: Path, repeat: int = 400) -> Path:
    doc = "The quick brown fox jumps over the lazy dog.\nIt's 2024 and naïve cafés serve 日本語 text 😀.\n"
    path.write_text(ENDOFTEXT.join(f"{i} {doc * (1 + i % 4)}" for i in range(repeat)), encoding="utf-8")
    return path


def _same(a: TrainResult, b: TrainResult) -> None:
    assert a.merges == b.merges
    assert a.merge_counts == b.merge_counts
    assert a.vocab == b.vocab
    assert a.stats == b.stats


@pytest.fixture(autouse=True)
def _no_process_left() -> Any:
    before = _children()
    yield
    deadline = time.monotonic() + 10
    while _children() - before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _children() - before == set(), "a cluster process was left running"


# --------------------------------------------------------------------------------------------------
# Options, without a cluster


@pytest.mark.parametrize("spec", ["local:0", "local", "local:x", "8786", "http://h:8786", "tcp://h", ""])
def test_bad_cluster_option_says_what_is_accepted(tmp_path: Path, spec: str) -> None:
    with pytest.raises(ValueError) as info:
        preflight(TrainConfig(inputs=[_corpus(tmp_path / "c.txt")], vocab_size=300, cluster=spec))
    assert str(info.value).startswith("cluster: ")
    assert "local:N" in str(info.value)


def test_cluster_without_dask_says_how_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(
        dist, "dask_missing", lambda: "Dask is not installed; install it with " + dist.INSTALL_HINT
    )
    corpus = _corpus(tmp_path / "c.txt")
    with pytest.raises(
        ValueError, match=r'cluster: Dask is not installed; .*pip install "bpe-studio\[distributed\]"'
    ):
        preflight(TrainConfig(inputs=[corpus], vocab_size=300, cluster="local:2"))
    assert (
        main(["train", str(corpus), "--vocab-size", "300", "--cluster", "local:2", "--out", str(tmp_path)])
        == 2
    )
    err = capsys.readouterr().err
    assert 'pip install "bpe-studio[distributed]"' in err and err.count("\n") == 1


def test_dask_missing_is_none_when_installed() -> None:
    assert dist.dask_missing() is None
    assert dist.parse_cluster("tls://[::1]:8786").address == "tls://[::1]:8786"


def test_task_size_bounds() -> None:
    assert dist.task_bytes(100, 2, 4096) == 4096
    assert dist.task_bytes(3_000_000, 2, 4 << 20) == 375_000  # smaller than a chunk: both workers busy
    assert dist.task_bytes(100_000, 2, 4 << 20) == dist.MIN_TASK_BYTES
    assert dist.task_bytes(10**12, 2, 4096) == dist.MAX_TASK_BYTES
    assert dist.task_bytes(80_000_000, 2, 1 << 20) == 10_000_000


def _count_ranges(paths: list[Path], specials: tuple[str, ...], big: int, small: int, pattern: str) -> Any:
    newline_cuts = pattern == "gpt2"
    ranges = plan_chunks(paths, chunk_size=big, special_tokens=specials, newline_cuts=newline_cuts)
    tables, documents, pretokens = [], 0, 0
    for rng in ranges:
        kind, table, totals = dist.count_range(
            rng,
            chunk_size=small,
            pattern=resolve_pattern(pattern),
            special_tokens=specials,
            policy="error",
            newline_cuts=newline_cuts,
        )
        assert kind == "ok"
        tables.append(table)
        documents += totals.documents
        pretokens += totals.pretokens
    total: dict[str, int] = {}
    for table in tables:
        for k, v in table.items():
            total[k] = total.get(k, 0) + v
    return total, documents, pretokens


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    corpora(),
    st.integers(1, 200),
    st.integers(1, 40),
    st.sampled_from(["gpt2", r"\S+|\s+"]),
)
def test_task_ranges_cut_into_chunks_count_exactly(
    corpus: tuple[list[str], tuple[str, ...]], big: int, small: int, pattern: str
) -> None:
    # What a worker does (cut its range into chunks, count them) sums to the counts of the whole corpus.
    texts, specials = corpus
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, text in enumerate(texts):
            if text:
                paths.append(Path(tmp) / f"f{i}.txt")
                paths[-1].write_bytes(text.encode("utf-8"))
        counts, documents, pretokens = _count_ranges(paths, specials, big, small, pattern)
        whole = plan_chunks(paths, chunk_size=10**9, special_tokens=specials, newline_cuts=False)
        *_, outcome = count_serial(
            whole,
            pattern=resolve_pattern(pattern),
            special_tokens=specials,
            policy=InvalidUtf8Policy.ERROR,
            cancelled=lambda: False,
        )
    assert isinstance(outcome, CountOutcome)
    assert counts == outcome.counts
    assert (documents, pretokens) == (outcome.totals.documents, outcome.totals.pretokens)


# --------------------------------------------------------------------------------------------------
# fsspec URLs (in-memory and local file systems: there is no network)


def test_memory_urls_train_like_local_files(tmp_path: Path) -> None:
    local = _corpus(tmp_path / "c.txt")
    data = local.read_bytes()
    half = data.index(ENDOFTEXT.encode(), len(data) // 2)
    with fsspec.open("memory://bpe-test/a.txt", "wb") as f:
        f.write(data[:half])
    with fsspec.open("memory://bpe-test/b.txt", "wb") as f:
        f.write(data[half:])
    try:
        urls = ["memory://bpe-test/a.txt", "memory://bpe-test/b.txt"]
        cfg = TrainConfig(inputs=urls, vocab_size=400, special_tokens=(ENDOFTEXT,), chunk_size=500)
        assert cfg.inputs == () and cfg.urls == tuple(urls)
        expected = train(TrainConfig(inputs=[local], vocab_size=400, special_tokens=(ENDOFTEXT,)))
        result = train(cfg)
        assert result.merges == expected.merges and result.vocab == expected.vocab
        assert result.stats.bytes == len(data) and result.stats.files == 2
        assert result.stats.documents == expected.stats.documents
        _, merges = train_bpe(urls[0], 300, [ENDOFTEXT])
        assert merges == train(cfg.replace(inputs=[urls[0]], urls=(), vocab_size=300)).merges
    finally:
        fsspec.filesystem("memory").rm("/bpe-test", recursive=True)


def test_counts_file_of_urls_records_and_checks_them(tmp_path: Path) -> None:
    with fsspec.open("memory://bpe-counts/a.txt", "wb") as f:
        f.write(_corpus(tmp_path / "c.txt").read_bytes())
    try:
        url = "memory://bpe-counts/a.txt"
        counts = tmp_path / "a.counts"
        cfg = TrainConfig(inputs=[url], vocab_size=350, special_tokens=(ENDOFTEXT,))
        first = train(cfg.replace(counts_out=counts))
        assert train(cfg.replace(counts_in=counts)).merges == first.merges
        with fsspec.open(url, "wb") as f:  # rewritten: same size, new modification stamp
            f.write((tmp_path / "c.txt").read_bytes())
        with pytest.raises(ValueError, match="changed since it was counted"):
            preflight(cfg.replace(counts_in=counts))
    finally:
        fsspec.filesystem("memory").rm("/bpe-counts", recursive=True)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("memory://nothing/here.txt", "does not exist"),
        ("nosuchproto://x/y.txt", "is not a URL fsspec can read"),
    ],
)
def test_bad_urls_are_refused(url: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as info:
        preflight(TrainConfig(inputs=[url], vocab_size=300))
    assert str(info.value).startswith("inputs: ")


def test_url_of_a_file_system_not_installed_says_what_to_install() -> None:
    try:
        import s3fs  # noqa: F401
    except ImportError:
        pass
    else:  # pragma: no cover
        pytest.skip("s3fs is installed")
    with pytest.raises(ValueError, match=r"inputs: .*s3fs"):
        preflight(TrainConfig(inputs=["s3://bucket/corpus.txt"], vocab_size=300))


# --------------------------------------------------------------------------------------------------
# On a LocalCluster


def test_local_cluster_equals_local_training_and_the_reference(tmp_path: Path) -> None:
    first = _corpus(tmp_path / "a.txt", 300)
    second = _corpus(tmp_path / "b.txt", 120)
    cfg = TrainConfig(
        inputs=[first, f"file://{second}"], vocab_size=420, special_tokens=(ENDOFTEXT,), chunk_size=1500
    )
    events = list(iter_train(cfg.replace(cluster="local:2")))
    assert [e.phase for e in events if isinstance(e, PhaseStarted)] == [
        Phase.PLANNING,
        Phase.COUNTING,
        Phase.MERGING,
    ]
    progress = [e for e in events if isinstance(e, CountProgress)]
    assert len(progress) > 2
    assert [e.bytes_done for e in progress] == sorted(e.bytes_done for e in progress)
    assert progress[-1].bytes_done == progress[-1].bytes_total == first.stat().st_size + second.stat().st_size
    assert isinstance(events[-1], Finished)
    on_cluster = events[-1].result
    local = train(cfg.replace(workers=1))
    _same(on_cluster, local)
    ref = reference_train([first, second], 420, (ENDOFTEXT,))
    assert on_cluster.merges == ref.merges and on_cluster.stats.documents == ref.documents


def test_train_bpe_accepts_the_cluster_keyword(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "c.txt")
    vocab, merges = train_bpe(corpus, 350, [ENDOFTEXT], cluster="local:2", chunk_size=2000)
    expected = train(TrainConfig(inputs=[corpus], vocab_size=350, special_tokens=(ENDOFTEXT,)))
    assert merges == expected.merges and vocab == expected.vocab


def test_cancel_during_cluster_counting_cancels_and_closes_everything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dist, "TASKS_PER_WORKER", 50)
    cfg = TrainConfig(
        inputs=[_corpus(tmp_path / "c.txt", 3000)], vocab_size=400, chunk_size=2000, cluster="local:2"
    )
    flag = threading.Event()
    events = []
    for event in iter_train(cfg, cancel=flag.is_set):
        events.append(event)
        if isinstance(event, CountProgress):
            flag.set()
    assert isinstance(events[-1], Finished)
    assert events[-1].result.stop_reason is StopReason.CANCELLED
    assert events[-1].result.merges == []
    # The autouse fixture checks that the LocalCluster's processes are gone.


def test_decode_error_on_the_cluster_names_file_and_offset(tmp_path: Path) -> None:
    path = tmp_path / "bad.txt"
    good = ("hello world\n" * 400).encode()
    path.write_bytes(good + b"caf\xe9 au lait\n" + good)
    cfg = TrainConfig(inputs=[path], vocab_size=300, chunk_size=1000, cluster="local:2")
    with pytest.raises(CorpusDecodeError) as info:
        train(cfg)
    assert info.value.offset == len(good) + 3 and info.value.path == str(path)


def test_unreachable_scheduler_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(dist.TIMEOUT_ENV, "1")
    cfg = TrainConfig(inputs=[_corpus(tmp_path / "c.txt")], vocab_size=300, cluster="tcp://127.0.0.1:9")
    with pytest.raises(ClusterError, match=r"nothing listens at tcp://127\.0\.0\.1:9 \(connection refused\)"):
        train(cfg)


def test_cli_cluster_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = _corpus(tmp_path / "c.txt")
    args = ["train", str(corpus), "--vocab-size", "330", "--special-token", ENDOFTEXT, "--progress", "none"]
    assert main([*args, "--cluster", "local:2", "--out", str(tmp_path / "a")]) == 0
    assert main([*args, "--out", str(tmp_path / "b")]) == 0
    a, b = load_studio(tmp_path / "a" / "tokenizer.json"), load_studio(tmp_path / "b" / "tokenizer.json")
    assert a.merges == b.merges and a.vocab == b.vocab
    capsys.readouterr()


def _kill_a_busy_worker(client: Any, killed: list[int], stop: threading.Event) -> None:
    """Wait until a worker runs one of our counting tasks, then kill its process (SIGKILL)."""
    pids = client.run(os.getpid)
    while not stop.is_set():
        for address, keys in client.processing().items():
            if any(str(key).startswith("bpe-count-") for key in keys):
                os.kill(int(pids[address]), signal.SIGKILL)
                killed.append(int(pids[address]))
                return
        time.sleep(0.005)


def _attempts(dask_scheduler: Any) -> dict[str, int]:
    """How many times each counting task was sent to a worker (from the scheduler's transition log)."""
    attempts: dict[str, int] = {}
    for entry in dask_scheduler.transition_log:
        key, finish = str(entry[0]), entry[2]
        if key.startswith("bpe-count-") and finish == "processing":
            attempts[key] = attempts.get(key, 0) + 1
    return attempts


@pytest.mark.slow
def test_worker_killed_mid_count_is_retried_and_the_result_is_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    distributed = pytest.importorskip("distributed")
    monkeypatch.setattr(dist, "TASKS_PER_WORKER", 8)
    corpus = _corpus(tmp_path / "c.txt", 8000)
    cfg = TrainConfig(inputs=[corpus], vocab_size=300, special_tokens=(ENDOFTEXT,), chunk_size=20_000)
    expected = train(cfg.replace(workers=1))
    with dist.local_cluster(2) as cluster, distributed.Client(cluster, set_as_default=False) as watcher:
        killed: list[int] = []
        stop = threading.Event()
        killer = threading.Thread(target=_kill_a_busy_worker, args=(watcher, killed, stop))
        killer.start()
        try:
            result = train(cfg.replace(cluster=cluster.scheduler_address))
        finally:
            stop.set()
            killer.join()
        assert killed, "no worker was running a counting task"
        attempts = watcher.run_on_scheduler(_attempts)
        assert len(attempts) == 16
        assert max(attempts.values()) >= 2, "the killed worker's task should have run again"
        watcher.wait_for_workers(2, timeout=30)
        assert killed[0] not in watcher.run(os.getpid).values()
        _same(result, expected)

        # Cancelling a run on a scheduler we did not start cancels its tasks there and leaves it running.
        flag = threading.Event()
        events = []
        for event in iter_train(cfg.replace(cluster=cluster.scheduler_address), cancel=flag.is_set):
            events.append(event)
            if isinstance(event, CountProgress):
                flag.set()
        assert isinstance(events[-1], Finished) and events[-1].result.stop_reason is StopReason.CANCELLED
        deadline = time.monotonic() + 10
        while watcher.run_on_scheduler(_our_tasks) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert watcher.run_on_scheduler(_our_tasks) == []
        assert len(watcher.nthreads()) == 2


def _our_tasks(dask_scheduler: Any) -> list[str]:
    return [str(key) for key in dask_scheduler.tasks if str(key).startswith("bpe-count-")]


@pytest.mark.slow
def test_ctrl_c_with_a_local_cluster_exits_cleanly(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "c.txt", 6000)
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "bpe_studio", "train", str(corpus), "--vocab-size", "5000", "--cluster",
         "local:2", "--chunk-size", "20000", "--progress", "json", "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        start_new_session=True,  # its own process group, as a terminal's foreground job
    )  # fmt: skip
    assert proc.stdout is not None
    for raw in proc.stdout:
        if json.loads(raw)["type"] == "count":
            break
    children = psutil.Process(proc.pid).children(recursive=True)
    assert len(children) >= 2, "the LocalCluster's worker processes should be running"
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C reaches the whole group
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert err.strip() == "bpe-studio: cancelled", err
    assert not (out / "tokenizer.json").exists()
    _, alive = psutil.wait_procs(children, timeout=10)
    assert alive == []
