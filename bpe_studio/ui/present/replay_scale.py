"""Watch BPE learn's scales: its slider and its replay pace follow the merges on a log scale, as its chart
does. Qt-free.

A run's first merges change a sample the most (single bytes become common pairs) and its last thousands
the least, so a linear slider gave the first 1,000 of 65,279 merges 1.5% of its travel, and a replay at a
fixed 100 merges per second took 11 minutes. Here the slider's position, and the replay's progress in
time, are proportional to ``log(merges + 1)``: a replay of any run takes :data:`REPLAY_SECONDS`.

Example:
    >>> slider_merges(500, 65_279), slider_position(255, 65_279)
    (254, 500)
    >>> replay_target(0, 65_279, REPLAY_SECONDS, speed=LOG_PACE)
    65279
"""

from __future__ import annotations

import math

#: The slider's positions (its range is 0..SLIDER_STEPS, whatever the run's length).
SLIDER_STEPS = 1000
#: The replay speed that follows the log scale: a whole run in :data:`REPLAY_SECONDS`.
LOG_PACE = 0
#: Seconds a replay at :data:`LOG_PACE` takes from the first merge to the last.
REPLAY_SECONDS = 30.0


def slider_merges(position: int, total: int, *, steps: int = SLIDER_STEPS) -> int:
    """The merges shown at a slider position: ``(total + 1) ** (position / steps) - 1``, rounded.

    Example:
        >>> [slider_merges(p, 999) for p in (0, 333, 667, 1000)]
        [0, 9, 99, 999]
    """
    if total <= 0 or position <= 0:
        return 0
    if position >= steps:
        return total
    shown: float = float(total + 1) ** (position / steps)
    return min(total, max(0, round(shown) - 1))


def slider_position(merges: int, total: int, *, steps: int = SLIDER_STEPS) -> int:
    """The slider position of ``merges`` merges (the inverse of :func:`slider_merges`, rounded).

    Example:
        >>> slider_position(0, 999), slider_position(99, 999), slider_position(999, 999)
        (0, 667, 1000)
    """
    if total <= 0 or merges <= 0:
        return 0
    if merges >= total:
        return steps
    return round(steps * math.log(merges + 1) / math.log(total + 1))


def replay_target(start: int, total: int, elapsed: float, *, speed: int) -> int:
    """The merge a replay that began at merge ``start`` has reached after ``elapsed`` seconds.

    Args:
        start: The merges shown when the replay (or its current speed) began.
        total: The run's merges.
        elapsed: Seconds since then.
        speed: Merges per second, or :data:`LOG_PACE`: the whole log scale in :data:`REPLAY_SECONDS`.

    Example:
        >>> replay_target(40, 1000, 0.5, speed=100)
        90
        >>> replay_target(0, 1000, REPLAY_SECONDS / 2, speed=LOG_PACE)  # half the time: half the log scale
        30
    """
    if total <= 0:
        return 0
    if speed != LOG_PACE:
        return min(total, start + int(elapsed * speed))
    scale = math.log(total + 1)
    reached = math.log(start + 1) / scale + elapsed / REPLAY_SECONDS
    if reached >= 1.0:
        return total
    return min(total, max(start, int(math.exp(reached * scale)) - 1))


__all__ = ["LOG_PACE", "REPLAY_SECONDS", "SLIDER_STEPS", "replay_target", "slider_merges", "slider_position"]
