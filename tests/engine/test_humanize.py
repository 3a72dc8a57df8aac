"""engine/humanize: the one place sizes, durations, rates, ETAs, stop reasons and errors are worded for
people (the CLI and the app both use it)."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_studio.engine import CountProgress, MergeMade, Phase, PhaseStarted, StopReason
from bpe_studio.engine.humanize import (
    MERGE_RATE_AFTER,
    RunMeter,
    clock,
    error_message,
    human_bytes,
    human_seconds,
    stop_reason_text,
)


@given(st.one_of(st.floats(0, 1e15, allow_nan=False), st.sampled_from([999.7, 999_960, 999_950_001])))
def test_byte_sizes_never_show_a_thousand_of_a_unit_below_gb(n: float) -> None:
    shown = human_bytes(n)
    number, unit = shown.split(" ")
    assert unit in ("B", "kB", "MB", "GB")
    assert unit == "GB" or float(number) < 1000, shown


@given(st.floats(0, 1e7, allow_nan=False))
def test_durations_are_well_formed(seconds: float) -> None:
    shown = human_seconds(seconds)
    found = re.fullmatch(r"(\d+) ms|(\d+\.\d) s|(\d+) s|(\d+)m(\d\d)s|(\d+)h(\d\d)m", shown)
    assert found is not None, shown
    ms, tenths, whole, minutes, secs, _hours, mins = found.groups()
    assert ms is None or int(ms) < 1000, shown
    assert tenths is None or float(tenths) < 10, shown
    assert whole is None or 10 <= int(whole) < 60, shown
    assert secs is None or (int(secs) < 60 and 0 < int(minutes) < 60), shown
    assert mins is None or int(mins) < 60, shown


@given(st.floats(0, 1e7, allow_nan=False))
def test_clock_readouts_are_well_formed(seconds: float) -> None:
    shown = clock(seconds)
    found = re.fullmatch(r"(\d+\.\d) s|(?:(\d+):)?(\d+):(\d\d)", shown)
    assert found is not None, shown
    tenths, hours, minutes, secs = found.groups()
    assert tenths is None or float(tenths) < 60, shown
    assert secs is None or int(secs) < 60, shown
    assert hours is None or int(minutes) < 60, shown


def test_every_stop_reason_has_words() -> None:
    for reason in StopReason:
        words = stop_reason_text(reason)
        assert words == stop_reason_text(reason.value) and " " in words  # words, not the enum's value
    assert stop_reason_text(StopReason.MIN_FREQUENCY, min_frequency=1234).endswith("fewer than 1,234 times")
    assert stop_reason_text("something new") == "something new"  # e.g. a file from a newer version


@pytest.mark.parametrize(
    ("exc", "path", "expected"),
    [
        (
            FileNotFoundError(2, "No such file or directory", "c.txt"),
            None,
            "c.txt: No such file or directory",
        ),
        (PermissionError(13, "Permission denied"), "out.json", "out.json: Permission denied"),
        (FileNotFoundError("t.json: no such file or folder"), "t.json", "t.json: no such file or folder"),
        (OSError(), "x", "x: OSError"),
        (ValueError("vocab_size: too small; raise it"), "x", "vocab_size: too small; raise it"),
        (KeyError("k"), None, "KeyError: 'k'"),
    ],
)
def test_error_messages(exc: BaseException, path: str | None, expected: str) -> None:
    assert error_message(exc, path=path) == expected


def _merge(index: int, elapsed: float, total: int = 100) -> MergeMade:
    return MergeMade(index, (b"a", b"b"), 5, 256 + index, b"ab", total, elapsed)


def test_the_run_meter_follows_counting_then_merging() -> None:
    meter = RunMeter()
    assert meter.time_left() is None
    meter.update(PhaseStarted(Phase.COUNTING, 2.0))
    meter.update(CountProgress(bytes_done=300, bytes_total=1200, unique_pretokens=9, elapsed=5.0))
    assert meter.bytes_rate == 100.0 and meter.time_left() == 9.0
    meter.update(PhaseStarted(Phase.MERGING, 14.0))
    # The merge rate counts from the first merge (the set-up before it is not merging), is trusted once
    # merging has gone on for MERGE_RATE_AFTER seconds, and is that of the last fifth of merging.
    meter.update(_merge(0, 15.0))
    meter.update(_merge(9, 15.0 + MERGE_RATE_AFTER / 2))
    assert meter.merge_rate == 0.0 and meter.time_left() is None
    meter.update(_merge(19, 17.0))  # 2 s of merging: the rate since 1.6 s ago, i.e. since merge 9
    assert meter.merge_rate == pytest.approx(10 / (2.0 - MERGE_RATE_AFTER / 2))
    assert meter.time_left() == pytest.approx((100 - 20) / meter.merge_rate)


def _accelerating_run(meter: RunMeter, total: int, *, until: int, batch: int) -> float:
    """Feed merges 0..until-1 of a run whose merges get cheaper (merge i costs 1/(i+50) of a time unit,
    as pair counts fall); return the true time left after them."""
    scale = 10.0

    def elapsed(done: int) -> float:
        return 1.0 + scale * math.log((done + 50) / 50)

    meter.update(PhaseStarted(Phase.MERGING, 1.0))
    for index in [*range(0, until, batch), until - 1]:  # as the app sees them: one event per batch
        meter.update(_merge(index, elapsed(index + 1), total=total))
    return elapsed(total) - elapsed(until)


@pytest.mark.parametrize("share", [0.1, 0.3, 0.5, 0.9, 0.99])
@pytest.mark.parametrize("batch", [1, 97])
def test_the_time_left_holds_while_merges_speed_up(share: float, batch: int) -> None:
    total = 20_000
    meter = RunMeter()
    truth = _accelerating_run(meter, total, until=int(total * share), batch=batch)
    left = meter.time_left()
    assert left is not None
    # An average since the first merge says 4 to 15 times the truth here (the "1:56 left" seconds
    # before the end), the recent rate alone up to 5 times; the growing rate stays within 2 times.
    assert truth / 2 <= left <= truth * 2, (left, truth)


@settings(max_examples=50, deadline=None)
@given(
    rate=st.floats(10.0, 1e6),
    batch=st.integers(1, 500),
    total=st.integers(2_000, 50_000),
    share=st.floats(0.1, 0.95),
)
def test_a_steady_run_gets_its_exact_time_left(rate: float, batch: int, total: int, share: float) -> None:
    meter = RunMeter()
    meter.update(PhaseStarted(Phase.MERGING, 0.0))
    until = max(int(total * share), 2)
    for index in [*range(0, until, batch), until - 1]:
        meter.update(_merge(index, 0.5 + (index + 1) / rate, total=total))
    spent = (until - 1) / rate
    left = meter.time_left()
    if spent <= MERGE_RATE_AFTER:
        assert left is None
    else:
        assert meter.merge_rate == pytest.approx(rate, rel=1e-6)
        assert left == pytest.approx((total - until) / rate, rel=1e-6)


def test_a_short_run_still_gets_a_final_merge_rate() -> None:
    meter = RunMeter()
    meter.update(PhaseStarted(Phase.MERGING, 1.0))
    meter.update(_merge(0, 1.0, total=5))
    meter.update(_merge(4, 1.05, total=5))
    assert meter.merge_rate == 0.0
    meter.finish()
    assert meter.merge_rate == pytest.approx(4 / 0.05)
