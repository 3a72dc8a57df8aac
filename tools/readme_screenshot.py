"""Regenerate the README's main screenshot: the demo mid-training, with Watch BPE learn re-tokenizing.

Drives the real main window offscreen as ``bpe-studio --demo`` does, and grabs it once the run has made
``--at`` of its merges (the charts, the merges table and the sample all live), then quits.

Example:
    QT_QPA_PLATFORM=offscreen python tools/readme_screenshot.py resources/screenshot.png
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from bpe_studio.ui.app.refcounts import guard_singleton_refcounts

guard_singleton_refcounts()  # before Qt is imported and used (PySide6 6.12 on CPython 3.11)

from PySide6.QtCore import QTimer  # noqa: E402

from bpe_studio.ui.app.app import create_application  # noqa: E402
from bpe_studio.ui.app.main_window import DEFAULT_SIZE, MainWindow  # noqa: E402
from bpe_studio.ui.app.settings import Settings  # noqa: E402

#: Seconds to wait for the demo run to get there before giving up.
TIMEOUT_S = 300


def main() -> int:
    """Train the demo in the window and save a PNG mid-run."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path, help="PNG to write (atomically)")
    parser.add_argument("--at", type=float, default=0.6, help="fraction of the run's merges (default 0.6)")
    args = parser.parse_args()
    app = create_application()
    window = MainWindow(Settings(), persist=False)
    window.resize(*DEFAULT_SIZE)
    window.show()
    view = window.train_view
    view.load_demo(start=True)  # (the demo corpus is built in a thread: the run starts a little later)
    status = {"code": 1}

    def check() -> None:
        config = view.result_config
        if config is None:  # not started yet
            return
        target = int(args.at * (config.vocab_size - 257))
        # Merges the GUI has shown (the table is fed from the same buffered events as the charts).
        if view.merges_model.rowCount() >= target:
            tmp = args.out.with_name(f".{args.out.name}.{os.getpid()}.tmp")
            if window.grab().save(os.fspath(tmp), "PNG"):
                os.replace(tmp, args.out)
                status["code"] = 0
                print(f"saved {args.out} at {view.merges_model.rowCount():,} merges", file=sys.stderr)
            view.shutdown()
            app.quit()

    poll = QTimer()
    poll.timeout.connect(check)
    poll.start(20)
    QTimer.singleShot(TIMEOUT_S * 1000, app.quit)
    view.training_ended.connect(lambda _how: app.quit())  # ended before the target: no picture
    app.exec()
    if status["code"]:
        print("the demo ended before the target; no screenshot taken (try a smaller --at)", file=sys.stderr)
    return status["code"]


if __name__ == "__main__":
    raise SystemExit(main())
