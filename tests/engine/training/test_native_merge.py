"""The native merge loop (bpe_studio._native, rust/src/merge.rs) makes exactly the Python loop's merges.

The training-level equality tests (reference trainer, CS336, repetitive words) run on both backends through
tests/engine/backends.py; here the two loops are compared directly on what training from bytes never reaches:
extra starting tokens (ids above 255), duplicate bytes (a merge reusing an id), replay, cancelling, and the
backend switch itself.
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_studio.engine import backend
from bpe_studio.engine import native as engine_native
from bpe_studio.engine.events import StopReason
from bpe_studio.engine.training import merge as merge_module
from bpe_studio.engine.training.merge import MergeLoop, ReplayError

from ..backends import BACKENDS, needs_native

REPO_ROOT = Path(__file__).resolve().parents[3]
BYTES = [bytes([i]) for i in range(256)]


Outcome = tuple[list[tuple[int, int, int, int]], list[bytes], StopReason | None]


def _outcome(loop: MergeLoop, **run: int) -> Outcome:
    merges = [(m.left, m.right, m.token_id, m.count) for m in loop.run(**run)]
    return merges, loop.token_bytes, loop.stop_reason


@st.composite
def tables(draw: st.DrawFn) -> tuple[dict[str, int], list[bytes]]:
    """Words over a, b, c and 0-3 extra tokens (ids 256+) whose bytes may repeat each other or a merge's."""
    extras = draw(st.lists(st.text(alphabet="abc", min_size=1, max_size=4).map(str.encode), max_size=3))
    alphabet = "abc" + "".join(chr(256 + i) for i in range(len(extras)))
    words = st.text(alphabet=alphabet, min_size=1, max_size=30)
    counts = draw(st.dictionaries(words, st.integers(1, 20), min_size=1, max_size=12))
    return counts, BYTES + extras


@needs_native
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(), st.integers(0, 40), st.integers(1, 4), st.sampled_from([None, 2, 3, 6]))
def test_native_loop_equals_python_loop(
    table: tuple[dict[str, int], list[bytes]], new_tokens: int, min_frequency: int, max_len: int | None
) -> None:
    counts, token_bytes = table
    results = [
        _outcome(
            MergeLoop(dict(counts), token_bytes, max_token_length=max_len, backend=name),  # type: ignore[arg-type]
            new_tokens=new_tokens,
            min_frequency=min_frequency,
        )
        for name in ("python", "native")
    ]
    assert results[0] == results[1]


@needs_native
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tables(),
    st.integers(0, 40),
    st.integers(1, 4),
    st.tuples(st.sampled_from([1, 2, 3, 512]), st.sampled_from([1, 5, 1 << 20])),
    st.integers(0, 50),
)
def test_batched_run_yields_what_the_merge_by_merge_run_yields(
    table: tuple[dict[str, int], list[bytes]],
    new_tokens: int,
    min_frequency: int,
    limits: tuple[int, int],
    cancel_at: int,
) -> None:
    # The kernel merges a batch ahead of what is yielded (rust/src/merge.rs, merge_batch): the merges, the
    # token bytes, the stop reason and the calls to cancelled (before each merge) are those of the loop
    # that asks the kernel once per merge, whatever the batch limits and wherever a cancel comes.
    counts, token_bytes = table
    max_merges, budget = limits
    outcomes = []
    for batched in (False, True):
        calls = 0

        def cancelled() -> bool:
            nonlocal calls
            calls += 1
            return calls > cancel_at

        loop = MergeLoop(dict(counts), token_bytes, backend="native")
        with (
            mock.patch.object(merge_module, "BATCH_MERGES", max_merges),
            mock.patch.object(merge_module, "BATCH_POSITIONS", budget),
        ):
            run = loop.run(
                new_tokens=new_tokens, min_frequency=min_frequency, cancelled=cancelled, batched=batched
            )
            merges = [(m.left, m.right, m.token_id, m.count) for m in run]
        outcomes.append((merges, loop.token_bytes, loop.stop_reason, calls))
    assert outcomes[0] == outcomes[1]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tables(),
    st.integers(0, 40),
    st.integers(1, 4),
    st.tuples(st.sampled_from([1, 3, 512]), st.integers(0, 50)),
    st.sampled_from(["python", "native"] if backend() == "native" else ["python"]),
)
def test_recorded_run_records_what_the_run_yields(
    table: tuple[dict[str, int], list[bytes]],
    new_tokens: int,
    min_frequency: int,
    batch_and_cancel: tuple[int, int],
    name: str,
) -> None:
    # run_recorded (a training run that reports no merge) appends each merge's pair of bytes and count
    # itself: the same pairs, counts, token bytes, stop reason and calls to cancelled as run() yields,
    # whatever the batches and wherever a cancel comes; on either engine.
    counts, token_bytes = table
    max_merges, cancel_at = batch_and_cancel
    outcomes = []
    for recorded in (False, True):
        calls = 0

        def cancelled() -> bool:
            nonlocal calls
            calls += 1
            return calls > cancel_at

        loop = MergeLoop(dict(counts), token_bytes, backend=name)  # type: ignore[arg-type]
        pairs: list[tuple[bytes, bytes]] = []
        found: list[int] = []
        with mock.patch.object(merge_module, "BATCH_MERGES", max_merges):
            if recorded:
                loop.run_recorded(
                    pairs, found, new_tokens=new_tokens, min_frequency=min_frequency, cancelled=cancelled
                )
            else:
                tb = loop.token_bytes
                for m in loop.run(new_tokens=new_tokens, min_frequency=min_frequency, cancelled=cancelled):
                    pairs.append((tb[m.left], tb[m.right]))
                    found.append(m.count)
        outcomes.append((pairs, found, loop.token_bytes, loop.stop_reason, calls))
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize("name", BACKENDS)
def test_a_merge_of_existing_bytes_reuses_their_id(name: str) -> None:
    # b"ab" is already token 256: merging (a, b) makes no new id, so the vocabulary does not grow and the
    # loop goes on to the next pair for its one new token.
    loop = MergeLoop({"abab": 2, "cab": 1}, [*BYTES, b"ab"], backend=name)  # type: ignore[arg-type]
    merges, token_bytes, reason = _outcome(loop, new_tokens=1)
    assert merges == [(97, 98, 256, 5), (256, 256, 257, 2)]
    assert token_bytes == [*BYTES, b"ab", b"abab"]
    assert reason is StopReason.VOCAB_SIZE


@needs_native
def test_long_repetitive_words_are_merged_like_python() -> None:
    counts = {"a" * 100_000: 1, "ab" * 50_000: 2, "=" * 30_001: 3}
    python, native = (
        _outcome(MergeLoop(dict(counts), BYTES, backend=name), new_tokens=40)  # type: ignore[arg-type]
        for name in ("python", "native")
    )
    assert python == native


@needs_native
@settings(max_examples=60, deadline=None)
@given(tables(), st.integers(0, 30), st.integers(0, 30))
def test_replay_then_run_continues_as_one_run(
    table: tuple[dict[str, int], list[bytes]], done: int, more: int
) -> None:
    counts, token_bytes = table
    whole = MergeLoop(dict(counts), token_bytes, backend="native")
    made = list(whole.run(new_tokens=done + more))
    recorded = [(whole.token_bytes[m.left], whole.token_bytes[m.right]) for m in made[:done]]
    recorded_counts = [m.count for m in made[:done]]
    loop = MergeLoop(dict(counts), token_bytes, backend="native")
    again = list(loop.replay(recorded, recorded_counts))
    assert again == made[:done] and loop.stop_reason is None
    created = len(loop.token_bytes) - len(token_bytes)
    again += loop.run(new_tokens=done + more - created)
    assert again == made and loop.token_bytes == whole.token_bytes
    assert loop.stop_reason is whole.stop_reason


@needs_native
@pytest.mark.parametrize(
    ("recorded", "counts", "said"),
    [
        ([(b"l", b"l"), (b"e", b"ll")], [4, 4], "the counts make (b'h', b'e') the most frequent pair"),
        ([(b"l", b"l"), (b"h", b"e")], [4, 5], "recorded with count 5, but the pair occurs 4 times"),
    ],
)
def test_replay_refuses_a_foreign_merge_with_the_python_message(
    recorded: list[tuple[bytes, bytes]], counts: list[int], said: str
) -> None:
    messages = []
    for name in ("python", "native"):
        loop = MergeLoop({"hello": 3, "hell": 1}, BYTES, backend=name)  # type: ignore[arg-type]
        with pytest.raises(ReplayError) as caught:
            list(loop.replay(recorded, counts))
        messages.append(str(caught.value))
    assert messages[0] == messages[1] and said in messages[0]


@pytest.mark.parametrize("name", BACKENDS)
def test_cancel_between_merges(name: str) -> None:
    calls = 0

    def cancelled() -> bool:
        nonlocal calls
        calls += 1
        return calls > 3  # asked once after the index, then before each merge: two merges

    loop = MergeLoop({"hello world": 5, "help": 2}, BYTES, cancelled=cancelled, backend=name)  # type: ignore[arg-type]
    merges = list(loop.run(new_tokens=10, cancelled=cancelled))
    assert len(merges) == 2 and loop.stop_reason is StopReason.CANCELLED


def test_pure_env_selects_the_python_loop() -> None:
    with mock.patch.dict(os.environ, {engine_native.PURE_ENV: "1"}):
        assert backend() == "python"
        assert MergeLoop({"ab": 1}, BYTES).backend == "python"
    with mock.patch.dict(os.environ, {engine_native.PURE_ENV: "0"}):
        expected = "native" if engine_native.built() else "python"
        assert backend() == expected
        assert MergeLoop({"ab": 1}, BYTES).backend == expected


def test_asking_for_a_missing_kernel_says_how_to_build_it() -> None:
    with mock.patch.object(engine_native, "_native", None):
        assert backend() == "python"
        with pytest.raises(ValueError, match=r"pip install -e \."):
            MergeLoop({"ab": 1}, BYTES, backend="native")
    with pytest.raises(ValueError, match="'native' or 'python'"):
        MergeLoop({"ab": 1}, BYTES, backend="rust")  # type: ignore[arg-type]


def _stderr_of_a_child_without_the_kernel(pure: str, *, terminal: bool) -> str:
    """stderr of a child where importing the extension fails (as on a machine without Rust)."""
    code = (
        "import sys; sys.modules['bpe_studio._native'] = None\n"
        "import bpe_studio.engine, bpe_studio.engine.training.merge, bpe_studio.cli\n"
        "print(bpe_studio.engine.backend())"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), engine_native.PURE_ENV: pure}
    if not terminal:
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60, check=True
        )
        assert done.stdout == "python\n"
        return done.stderr
    main, child_end = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-c", code],
            env=env,
            stdout=subprocess.PIPE,
            stderr=child_end,
            timeout=60,
            check=True,
        )
        os.close(child_end)
        child_end = -1
        assert done.stdout == b"python\n"
        chunks = []
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # EIO: the child's end is closed and everything was read
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks).decode().replace("\r\n", "\n")
    finally:
        os.close(main)
        if child_end >= 0:
            os.close(child_end)


@pytest.mark.parametrize(("pure", "hinted"), [("", True), ("1", False)])
def test_a_missing_kernel_is_said_once_at_a_terminal(pure: str, hinted: bool) -> None:
    err = _stderr_of_a_child_without_the_kernel(pure, terminal=True)
    assert err.count(engine_native.MISSING_HINT) == (1 if hinted else 0)
    assert err.replace(engine_native.MISSING_HINT, "").strip() == ""


def test_a_missing_kernel_adds_nothing_to_piped_stderr() -> None:
    # Scripts and tests read the CLI's stderr (one line per error): no note lands there.
    assert _stderr_of_a_child_without_the_kernel("", terminal=False) == ""


def test_freeing_a_large_kernel_starts_no_thread() -> None:
    # Issue 22: the kernel was freed by a thread of its own, which was still freeing a million position
    # lists when the process exited, racing Python's shutdown for the malloc lock (25 ms of every CLI run).
    # Its lists now live in one arena: freeing it is a few large frees, done where the kernel is dropped.
    import sys
    from pathlib import Path

    from bpe_studio.engine.native import backend, merge_kernel

    if backend() != "native" or not sys.platform.startswith("linux"):
        pytest.skip("the native kernel's threads are read from Linux's /proc")

    def thread_names() -> list[str]:
        return [p.read_text().strip() for p in Path("/proc/self/task").glob("*/comm")]

    # Words over 4,000 tokens, about 1.5 million distinct pairs: a list each (the old way freed them apart).
    import random

    rng = random.Random(22)
    tokens = [bytes([i]) for i in range(256)] + [f"<{i}>".encode() for i in range(4_000)]
    counts = {"".join(chr(rng.randrange(256, 4_256)) for _ in range(6)): 1 for _ in range(300_000)}
    kernel = merge_kernel(counts, tokens, max_token_length=None, backend="native")
    assert kernel is not None
    for _ in range(50):
        kernel.merge_top()
    del kernel  # freed here, by reference counting (no gc.collect: the old thread could end meanwhile)
    assert "bpe-studio-free" not in thread_names()
