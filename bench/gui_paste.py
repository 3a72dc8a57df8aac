"""Desktop-app benchmark: how long the GUI event loop stalls when large text is pasted into the Playground
and typed into afterwards.

It drives the real main window (offscreen, 1024×640) with GPT-2 open in the Playground:

* for each text (100 kB, 300 kB and 1 MB of English, the CS336 ``corpus.en`` repeated; 400,000 characters of
  Chinese-like text from ``bench/corpora.py``; the same Chinese and 1 MB of English with every line break
  made a comma or a space, one paragraph each; 1 MB of one repeated character), the editor is emptied, the
  text is put on the clipboard and pasted with the Paste shortcut into the focused editor, as a user
  pastes; the bench waits until the Playground has encoded it and settled, then types keystrokes at the
  end of the text (one every 200 ms, as a quick typist) and waits again;
* a 10 ms ``QTimer`` on the GUI thread records when it fires: the gap between two ticks is the time the
  window could not react to input. The longest gap, its 99th percentile and the count of gaps over 100 ms
  are reported for the paste (from the key press until settled) and for the typing, and the time from the
  paste until the tokens were shown. The ids shown are checked against the engine's.

Run it on a quiet machine::

    QT_QPA_PLATFORM=offscreen python bench/gui_paste.py
    QT_QPA_PLATFORM=offscreen python bench/gui_paste.py --sizes 100k --keys 3 --json out.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/, for `corpora`
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for `bpe_studio`

from bpe_studio.ui.app.refcounts import guard_singleton_refcounts

guard_singleton_refcounts()  # before Qt is imported and used (PySide6 6.12 on CPython 3.11)

from PySide6.QtCore import QElapsedTimer, QEventLoop, Qt, QTimer  # noqa: E402
from PySide6.QtGui import QGuiApplication, QKeySequence  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

PROBE_MS = 10
#: Seconds a paste or the typing may take to settle before the bench gives up.
DEADLINE_S = 300
#: Milliseconds between two typed keys.
KEY_INTERVAL_MS = 200
SIZES = {"100k": 100_000, "300k": 300_000, "1M": 1_000_000}
CHINESE_CHARS = 400_000


def english(size: int) -> str:
    """``size`` characters of English: the CS336 reference corpus, repeated."""
    from corpora import corpus_en

    base = corpus_en().read_text(encoding="utf-8")
    return (base * (size // len(base) + 1))[:size]


def text_named(name: str) -> str:
    """The text a ``--sizes`` name stands for (see :func:`main`)."""
    if name == "zh":
        return chinese_text(CHINESE_CHARS)
    if name == "zh-line":
        return chinese_text(CHINESE_CHARS).replace("\n", "，")
    if name == "1M-line":
        return english(SIZES["1M"]).replace("\n", " ")
    if name == "1M-same":
        return "a" * SIZES["1M"]
    return english(SIZES[name])


def chinese_text(chars: int) -> str:
    """``chars`` characters of Chinese-like text (``corpora.chinese``: CJK clauses without spaces)."""
    from corpora import chinese

    text = chinese(size_bytes=chars * 3 + 200_000).read_text(encoding="utf-8")
    assert len(text) >= chars, len(text)
    return text[:chars]


class Probe:
    """A 10 ms timer on the GUI thread; the gaps between its ticks are the event loop's stalls."""

    def __init__(self) -> None:
        self.clock = QElapsedTimer()
        self.clock.start()
        self.ticks: list[int] = []
        self.timer = QTimer()
        self.timer.setInterval(PROBE_MS)
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.timeout.connect(self.tick)

    def tick(self) -> None:
        self.ticks.append(self.clock.nsecsElapsed())

    def start(self) -> None:
        self.ticks = [self.clock.nsecsElapsed()]
        self.timer.start()

    def stop(self) -> dict[str, Any]:
        self.tick()
        self.timer.stop()
        gaps = [(b - a) / 1e6 for a, b in itertools.pairwise(self.ticks)]
        return {
            "max_gap_ms": round(max(gaps), 1),
            "p99_gap_ms": round(statistics.quantiles(gaps, n=100, method="inclusive")[98], 1)
            if len(gaps) > 1
            else gaps[0],
            "gaps_over_100ms": sum(g > 100 for g in gaps),
            "ticks": len(gaps),
            "seconds": round((self.ticks[-1] - self.ticks[0]) / 1e9, 2),
        }


def run_until(done: Callable[[], bool], what: str) -> None:
    """Run the event loop until ``done()`` (checked every 20 ms); fails after :data:`DEADLINE_S`.

    ``done`` runs on the GUI thread, so it checks the cheap conditions first: the editor's text of a pasted
    megabyte costs 3 ms to fetch, and fetched every 20 ms while the app works it weighed on the very gaps
    measured (no user asks the window for its text 50 times a second)."""
    deadline = time.monotonic() + DEADLINE_S
    while not done():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not finish within {DEADLINE_S} s")
        loop = QEventLoop()
        QTimer.singleShot(20, loop.quit)
        loop.exec()


def settle(ms: int) -> None:
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def measure(window: Any, text: str, keys: int) -> dict[str, Any]:
    """Paste ``text`` into the emptied Playground, wait, type ``keys`` keys, wait; the gaps of both."""
    playground = window.tokenizer_views.playground
    editor = playground.editor
    playground.set_text("")
    run_until(lambda: not playground.is_busy(), "emptying the text")
    settle(300)
    editor.setFocus()
    QGuiApplication.clipboard().setText(text)
    encoded: list[float] = []
    playground.encoded.connect(lambda: encoded.append(time.perf_counter()))
    probe = Probe()
    probe.start()
    start = time.perf_counter()
    # From inside the event loop, as a key press arrives: the probe measures the paste itself too.
    QTimer.singleShot(0, lambda: QTest.keySequence(editor, QKeySequence(QKeySequence.StandardKey.Paste)))
    run_until(
        lambda: (
            not playground.is_busy()
            and playground.encoding is not None
            and playground.encoding.text == text
            and playground.text() == text
        ),
        "the paste",
    )
    settle(300)  # whatever the app still does in slices after settling counts too
    paste = probe.stop()
    paste["shown_s"] = round(encoded[-1] - start, 2) if encoded else None
    encoding = playground.encoding
    expected = playground.effective_tokenizer().encode(text, allowed_special="all", disallowed_special=())
    assert encoding.ids == expected, "the Playground's ids differ from the engine's"

    cursor = editor.textCursor()
    cursor.movePosition(cursor.MoveOperation.End)
    editor.setTextCursor(cursor)
    typed = "".join(itertools.islice(itertools.cycle(" the cat"), keys))
    probe.start()
    for i, key in enumerate(typed):
        QTimer.singleShot(i * KEY_INTERVAL_MS, lambda k=key: QTest.keyClicks(editor, k))
    settle(keys * KEY_INTERVAL_MS + 10)
    run_until(
        lambda: (
            not playground.is_busy()
            and playground.encoding is not None
            and playground.encoding.text == text + typed
            and playground.text() == text + typed
        ),
        "the typing",
    )
    settle(300)
    typing = probe.stop()
    return {"chars": len(text), "bytes": len(text.encode()), "paste": paste, "typing": typing}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        nargs="*",
        default=[*SIZES, "zh", "zh-line", "1M-line", "1M-same"],
        help="texts to paste: 100k, 300k, 1M (English), zh (400,000 Chinese characters), zh-line and 1M-line "
        "(the same Chinese and 1M English in one line), 1M-same (1,000,000 times the letter a)",
    )
    parser.add_argument("--keys", type=int, default=5, help="keys typed after each paste")
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    args = parser.parse_args()

    from bpe_studio.engine.formats.named import GPT2_FOLDER
    from bpe_studio.ui.app.app import create_application
    from bpe_studio.ui.app.main_window import MainWindow
    from bpe_studio.ui.app.settings import Settings

    create_application()
    window = MainWindow(Settings(), persist=False)
    window.resize(1024, 640)
    window.show()
    views = window.tokenizer_views
    views.open(GPT2_FOLDER)
    run_until(lambda: views.current is not None and not views.is_busy(), "opening GPT-2")
    window.tabs.setCurrentWidget(views.playground)
    settle(500)
    results: dict[str, Any] = {}
    for name in args.sizes:
        text = text_named(name)
        found = measure(window, text, args.keys)
        results[name] = found
        p, t = found["paste"], found["typing"]
        print(
            f"{name:>7} ({found['chars']:,} chars, {found['bytes']:,} bytes): paste: longest gap "
            f"{p['max_gap_ms']:.0f} ms, p99 {p['p99_gap_ms']:.0f} ms, {p['gaps_over_100ms']} gaps > 100 ms, "
            f"tokens shown after {p['shown_s']} s; typing {args.keys} keys: longest gap "
            f"{t['max_gap_ms']:.0f} ms, p99 {t['p99_gap_ms']:.0f} ms, {t['gaps_over_100ms']} gaps > 100 ms",
            flush=True,
        )
    views.shutdown()
    window.close()
    summary = {"results": results, "load_average": os.getloadavg()}
    print(json.dumps(summary, indent=1))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
