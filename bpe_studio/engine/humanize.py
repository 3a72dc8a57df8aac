"""The words and numbers BPE Studio shows people: sizes, durations, rates, ETAs, stop reasons, errors.

Both front ends (the CLI and the app) format through this module, so a run reads the same in a terminal
and in a window. It lives in the engine package because that is the one package both front ends already
depend on (the app must not import the CLI, nor the CLI the app), because what it names are the engine's
own concepts (:class:`~bpe_studio.engine.StopReason`, progress events, the engine's exceptions), and
because the engine is Qt-free by rule, which keeps these formatters importable and testable without a
display. Nothing in the engine's computations depends on it.

Example:
    >>> human_bytes(1_500_000), human_seconds(75), clock(65)
    ('1.5 MB', '1m15s', '1:05')
"""

from __future__ import annotations

import os
import re
from collections import deque

from .events import CountProgress, MergeMade, Phase, PhaseStarted, StopReason, TrainEvent
from .pretokenize.patterns import compile_pattern, resolve_pattern

# ----------------------------------------------------------------------------------------------------------
# Sizes and durations
# ----------------------------------------------------------------------------------------------------------


def human_bytes(n: float) -> str:
    """A byte count for people (decimal units).

    Example:
        >>> human_bytes(512), human_bytes(1_500_000), human_bytes(999_960), human_bytes(3e12)
        ('512 B', '1.5 MB', '1.0 MB', '3000.0 GB')
    """
    for unit in ("B", "kB", "MB", "GB"):
        digits = 0 if unit == "B" else 1
        # Compare what will be shown, so 999,960 bytes reads "1.0 MB", not "1000.0 kB".
        if round(abs(n), digits) < 1000 or unit == "GB":
            return f"{n:.{digits}f} {unit}"
        n /= 1000
    raise AssertionError("unreachable")  # pragma: no cover


def human_seconds(seconds: float) -> str:
    """A duration that has passed (a phase's time, a run's total), for people.

    Example:
        >>> [human_seconds(s) for s in (0.012, 4.25, 42, 75, 7500)]
        ['12 ms', '4.2 s', '42 s', '1m15s', '2h05m']
    """
    if seconds < 0.9995:
        return f"{max(seconds, 0.0) * 1000:.0f} ms"
    if seconds < 9.95:
        return f"{seconds:.1f} s"
    if seconds < 59.5:
        return f"{seconds:.0f} s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def clock(seconds: float) -> str:
    """A running clock or a time left (the elapsed and ETA readouts): ``4.2 s``, then ``1:05``, ``1:02:05``.

    Example:
        >>> [clock(s) for s in (4.25, 65, 3725)]
        ['4.2 s', '1:05', '1:02:05']
    """
    if seconds < 59.95:
        return f"{max(0.0, seconds):.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def bytes_rate(bytes_per_second: float) -> str:
    """A counting speed.

    Example:
        >>> bytes_rate(2_500_000)
        '2.5 MB/s'
    """
    return f"{human_bytes(bytes_per_second)}/s"


def merge_rate(merges_per_second: float) -> str:
    """A merging speed.

    Example:
        >>> merge_rate(1234.4)
        '1,234 merges/s'
    """
    return f"{merges_per_second:,.0f} merges/s"


# ----------------------------------------------------------------------------------------------------------
# Rates and time left of a run
# ----------------------------------------------------------------------------------------------------------

#: Seconds of merging before the merge rate is trusted (the first merges' timing is mostly noise).
MERGE_RATE_AFTER = 0.2
#: The merge rate is measured over the last part of merging: this share of it, at least
#: :data:`MERGE_RATE_AFTER` and at most :data:`MERGE_WINDOW_MAX` seconds.
MERGE_WINDOW_SHARE = 0.2
MERGE_WINDOW_MAX = 5.0
#: The largest growth exponent :func:`merge_time_left` assumes (the speed growing almost as the merges done).
MAX_GROWTH = 0.95


def time_left(done: float, total: float, rate: float) -> float | None:
    """Seconds until ``total`` at ``rate`` per second, or None when the rate is not known.

    Example:
        >>> time_left(25, 100, 5.0), time_left(0, 100, 0.0)
        (15.0, None)
    """
    if rate <= 0:
        return None
    return max(total - done, 0) / rate


class RunMeter:
    """A run's progress, speeds and time left, followed from its events (the CLI's line and the app's
    labels show these same numbers).

    The counting speed is the bytes counted since counting began over the time since then. The merging
    speed is that of the recent merges (the last fifth of merging, at most :data:`MERGE_WINDOW_MAX`
    seconds), known after :data:`MERGE_RATE_AFTER` seconds of merging; at the end, :meth:`finish` makes it
    the average of the run.

    Merges speed up as a run goes on (the first pairs occur in most words and each takes long to merge,
    the last ones occur a few times): an ETA from the average speed since the first merge put the end
    many times too far (it said 1:56 left four seconds before a run's end), and even one from the recent
    speed is several times too long early on. So the time left of merging assumes that the speed keeps
    growing as it has grown so far: see :func:`merge_time_left`.

    Example:
        >>> meter = RunMeter()
        >>> meter.update(PhaseStarted(Phase.COUNTING, 1.0))
        >>> meter.update(CountProgress(bytes_done=200, bytes_total=1000, unique_pretokens=5, elapsed=3.0))
        >>> meter.bytes_rate, meter.time_left()
        (100.0, 8.0)
    """

    def __init__(self) -> None:
        self.phase: Phase | None = None
        self.phase_started = 0.0
        self.bytes_done = 0
        self.bytes_total = 0
        self.unique_pretokens = 0
        self.merges_done = 0
        self.merges_total = 0
        self.bytes_rate = 0.0
        self.merge_rate = 0.0
        self._first_merge: tuple[int, float] | None = None
        self._last_merge_time = 0.0
        # (merges done, elapsed) of recent merge events, the oldest at or before the window's start.
        self._recent: deque[tuple[int, float]] = deque()
        self._average_rate = 0.0  # merges per second since the first merge

    def update(self, event: TrainEvent) -> None:
        """Take one event into account (events of other types are ignored)."""
        if isinstance(event, PhaseStarted):
            self.phase, self.phase_started = event.phase, event.elapsed
        elif isinstance(event, CountProgress):
            self.bytes_done, self.bytes_total = event.bytes_done, event.bytes_total
            self.unique_pretokens = event.unique_pretokens
            spent = event.elapsed - self.phase_started
            if spent > 0:
                self.bytes_rate = event.bytes_done / spent
        elif isinstance(event, MergeMade):
            done = event.index + 1
            self.merges_done, self.merges_total = done, event.total
            if self._first_merge is None:
                self._first_merge = (done, event.elapsed)
            self._last_merge_time = now = event.elapsed
            recent = self._recent
            recent.append((done, now))
            spent = now - self._first_merge[1]
            # The window's start only moves forward (it grows by a fifth of the time that passes, at most),
            # so samples before it are never needed again.
            start = now - min(max(spent * MERGE_WINDOW_SHARE, MERGE_RATE_AFTER), MERGE_WINDOW_MAX)
            while len(recent) > 1 and recent[1][1] <= start:
                recent.popleft()
            since_done, since = recent[0]
            if spent > MERGE_RATE_AFTER and now > since:
                self.merge_rate = (done - since_done) / (now - since)
                self._average_rate = (done - self._first_merge[0]) / spent

    def finish(self) -> None:
        """The run ended: trust the merge rate however short merging was (the final figure shown)."""
        if self._first_merge is not None:
            first_done, first_time = self._first_merge
            spent = self._last_merge_time - first_time
            if spent > 0:
                self.merge_rate = (self.merges_done - first_done) / spent

    def time_left(self) -> float | None:
        """Seconds until the current phase ends (counting or merging), or None when not known yet."""
        if self.phase is Phase.COUNTING:
            return time_left(self.bytes_done, self.bytes_total, self.bytes_rate)
        if self.phase is Phase.MERGING:
            return merge_time_left(self.merges_done, self.merges_total, self.merge_rate, self._average_rate)
        return None


def merge_time_left(done: int, total: int, rate: float, average: float) -> float | None:
    """Seconds until ``total`` merges, ``done`` of them made, the recent ones at ``rate`` per second and
    all of them at ``average`` per second; None when the rate is not known.

    A speed that grew as a power of the merges done, ``rate ∝ done**a``, averages ``(1 - a) * rate`` over
    the run so far: so ``a = 1 - average / rate`` (0 for a steady run, near 1 for a run that sped up a
    lot), and assuming it keeps growing so, the time left is the integral of ``1 / speed`` from ``done``
    to ``total``. A steady run gets ``(total - done) / rate``; a BPE run's ETA is then within a factor of
    about 1.5 of the truth after its first 5 % of merges (the recent rate alone: 3 to 5 times too long).

    Example:
        >>> merge_time_left(100, 1000, 10.0, 10.0)  # steady: 900 merges at 10/s
        90.0
        >>> round(merge_time_left(100, 1000, 10.0, 5.0), 1)  # sped up (a = 0.5): less than 90 s
        43.2
    """
    if rate <= 0 or done <= 0:
        return time_left(done, total, rate)
    growth = min(max(1.0 - average / rate, 0.0), MAX_GROWTH)
    ahead = max(total, done) / done
    return done / rate * (float(ahead ** (1.0 - growth)) - 1.0) / (1.0 - growth)


# ----------------------------------------------------------------------------------------------------------
# Why a run stopped; what went wrong
# ----------------------------------------------------------------------------------------------------------

_STOP_TEXT = {
    StopReason.VOCAB_SIZE: "the vocabulary reached its size",
    StopReason.NO_PAIRS: "no pair was left to merge",
    StopReason.MIN_FREQUENCY: "the most frequent pair fell below the minimum frequency",
    StopReason.CANCELLED: "it was cancelled",
}


def stop_reason_text(reason: StopReason | str, *, min_frequency: int | None = None) -> str:
    """Why the merge loop stopped, as the end of "Stopped because …" (an unknown value is shown as is).

    Example:
        >>> stop_reason_text("no_pairs")
        'no pair was left to merge'
        >>> stop_reason_text(StopReason.MIN_FREQUENCY, min_frequency=50)
        'the most frequent pair occurred fewer than 50 times'
    """
    try:
        reason = StopReason(reason)
    except ValueError:
        return str(reason)
    if reason is StopReason.MIN_FREQUENCY and min_frequency is not None:
        return f"the most frequent pair occurred fewer than {min_frequency:,} times"
    return _STOP_TEXT[reason]


def error_message(exc: BaseException, *, path: str | os.PathLike[str] | None = None) -> str:
    """One line saying what went wrong, for an error box or the CLI: the engine's own message where it
    has one, the file and the system's reason for an I/O error, else the exception's type and message.

    Args:
        exc: The exception.
        path: The file the operation was about, named when the exception does not name one.

    Example:
        >>> error_message(FileNotFoundError(2, "No such file or directory", "corpus.txt"))
        'corpus.txt: No such file or directory'
        >>> error_message(PermissionError(13, "Permission denied"), path="out.json")
        'out.json: Permission denied'
        >>> error_message(FileNotFoundError("t.json: no such file or folder"), path="t.json")
        't.json: no such file or folder'
        >>> error_message(ValueError("vocab_size: must be at least 256; raise it"))
        'vocab_size: must be at least 256; raise it'
        >>> error_message(KeyError("x"), path="t.json")
        "t.json: KeyError: 'x'"
    """
    where = exc.filename if isinstance(exc, OSError) and exc.filename else path
    prefix = f"{os.fspath(where)}: " if where is not None else ""
    if isinstance(exc, OSError):
        if exc.strerror:
            return f"{prefix}{exc.strerror}"
        # An OSError raised with a message only (the engine's "x: no such file or folder") names its file.
        return str(exc) or f"{prefix}{type(exc).__name__}"
    if isinstance(exc, (ValueError, RuntimeError)) and str(exc):
        return str(exc)
    return f"{prefix}{type(exc).__name__}: {exc}"


# ----------------------------------------------------------------------------------------------------------
# The app's words for the engine's "field: problem; fix" messages (the CLI keeps the engine's own)
# ----------------------------------------------------------------------------------------------------------

#: The app's labels for the training settings, keyed by the engine's field names that start its messages.
FIELD_LABELS = {
    "inputs": "Corpus",
    "vocab_size": "Vocab size",
    "special_tokens": "Special tokens",
    "pattern": "Pattern",
    "workers": "Workers",
    "min_frequency": "Min frequency",
    "cluster": "Dask cluster",
    "max_token_length": "Max token length",
    "chunk_size": "Chunk size",
    "invalid_utf8": "Invalid UTF-8",
    "text_field": "Text field",
    "counts_in": "Counts from",
    "counts_out": "Save counts",
    "checkpoint": "Checkpoint",
    "checkpoint_every": "Checkpoint every",
    "resume": "Resume from",
    "extend": "Start from",
    "superword_transition": "Superwords after",
}


#: The command line's options the engine's fixes name, and the app's control for each (see app_hints).
_CLI_CONTROLS = {
    "text-field": "the Text field under the corpus",
    "invalid-utf8": "More options ▸ Invalid UTF-8",
    "skip-bad-records": "More options ▸ Bad records",
    "special-token": "Special tokens",
    "counts-in": "More options ▸ Counts from",
    "counts-out": "More options ▸ Save counts",
    "checkpoint": "More options ▸ Checkpoint",
    "resume": "More options ▸ Resume from",
    "max-token-length": "More options ▸ Max token length",
    "extend": "Start from",
    "superword-transition": "More options ▸ Superwords after",
}
_CLI_HINT = re.compile(r"CLI: --([a-z0-9-]+)[^;)]*")


def app_hints(message: str) -> str:
    """An engine message whose fixes name command-line options (``CLI: --text-field``) naming the app's
    controls instead: in the app there is no command line to pass them on.

    Example:
        >>> app_hints("no field 'body'; give the text's field (CLI: --text-field; now 'body')")
        "no field 'body'; give the text's field (in the app: the Text field under the corpus; now 'body')"
    """

    def control(match: re.Match[str]) -> str:
        name = _CLI_CONTROLS.get(match.group(1))
        return f"in the app: {name}" if name is not None else match.group(0)

    return _CLI_HINT.sub(control, message)


def app_message(message: str) -> str:
    """An engine's ``field: problem; fix`` message in the app's words: the form's label instead of the
    field's name, no Markdown backticks, ending as a sentence.

    Example:
        >>> app_message("inputs: c.txt does not exist; check the path")
        'Corpus: c.txt does not exist; check the path.'
    """
    field, sep, rest = message.partition(": ")
    if sep and field in FIELD_LABELS:
        message = f"{FIELD_LABELS[field]}: {rest}"
    message = app_hints(message.replace("`", ""))
    return message if message.endswith((".", "?", "!")) else f"{message}."


def pattern_problem(pattern: str) -> str:
    """Why a pattern (a preset's name or a regex) cannot be trained with, in the app's words ("" if it can).

    The regex is quoted as it was typed (the engine's message shows its ``repr``, which doubles every
    backslash), and the engine's checks are the ones applied, so the app refuses exactly what training would.

    Example:
        >>> pattern_problem("(a|b")
        'The regex “(a|b” does not compile: missing ) at position 4. Fix it, or choose a preset.'
        >>> pattern_problem("gpt2")
        ''
    """
    if not pattern:
        return "Enter a regex, or choose a preset."
    import regex  # (here, not on import: the engine's load path imports this module)

    text = resolve_pattern(pattern)
    try:
        regex.compile(text)
    except (regex.error, TypeError, ValueError) as exc:
        return f"The regex “{text}” does not compile: {exc}. Fix it, or choose a preset."
    try:
        compile_pattern(pattern)
    except ValueError as exc:
        # The engine says "pattern: '<repr>' <problem>; <fix>": keep its problem and fix, quote the text.
        reason = str(exc).removeprefix(f"pattern: {text!r} ")
        return app_message(f"The regex “{text}” {reason}")
    return ""


# ----------------------------------------------------------------------------------------------------------
# Merge numbers
# ----------------------------------------------------------------------------------------------------------

#: How merges are numbered wherever people see a merge's number (tables, details, trees, exports).
MERGE_NUMBERING = (
    "Merges are numbered from 1 in the order they were learned: merge 1 is the first, and a tokenizer cut "
    "to its first N merges holds merges 1 to N."
)


def merge_number(rank: int) -> int:
    """The number people see for the merge of a rank (the engine's 0-based index into the merge list).

    Merges are numbered from 1, so that "the first N merges" (the playground's vocab-size slider) are
    merges 1 to N; see :data:`MERGE_NUMBERING`.

    Example:
        >>> merge_number(0)
        1
    """
    return rank + 1


__all__ = [
    "FIELD_LABELS",
    "MERGE_NUMBERING",
    "MERGE_RATE_AFTER",
    "RunMeter",
    "app_message",
    "bytes_rate",
    "clock",
    "error_message",
    "human_bytes",
    "human_seconds",
    "merge_number",
    "merge_rate",
    "merge_time_left",
    "pattern_problem",
    "stop_reason_text",
    "time_left",
]
