"""Benchmark a corpus without newlines: training with worker processes, and ``encode --file``, on one line.

A corpus on a single line used to be one chunk (one worker, the whole text in memory several times over)
and ``encode --file`` read it as one line. This builds a one-line corpus of about ``--mb`` MB from the
CS336 reference corpus ``corpus.en`` (newlines replaced by spaces, repeated), then measures in fresh child
processes, sampling the resident memory of the child and all its descendants every 10 ms:

* ``bpe-studio train`` with ``--workers`` worker processes (small vocabulary: the counting phase dominates);
* ``bpe-studio encode --file`` with the GPT-2 files of the CS336 data (ids written to /dev/null).

Usage::

    python bench/one_line.py                  # 50 MB, 2 workers
    python bench/one_line.py --mb 10 --workers 2 --skip-encode

Run it with ``PYTHONPATH`` pointing at the checkout to measure (the children inherit the environment),
e.g. before and after a change::

    PYTHONPATH=/path/to/old-checkout python bench/one_line.py
    PYTHONPATH=$PWD python bench/one_line.py
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import measure  # noqa: E402

CS336 = Path(os.environ.get("BPE_STUDIO_CS336_DATA") or REPO_ROOT.parent / "shared" / "data" / "cs336")


def build(path: Path, megabytes: float) -> None:
    """Write about ``megabytes`` MB of English text on one line (no newline at all)."""
    text = (CS336 / "corpus.en").read_text(encoding="utf-8")
    piece = (" ".join(text.split("\n")) + " ").encode("utf-8")
    target = int(megabytes * 1_000_000)
    with open(path, "wb") as out:
        written = 0
        while written < target:
            out.write(piece)
            written += len(piece)


def _measure(args: list[str]) -> tuple[float, int, int]:
    """Run a child process; return its wall time, the peak RSS of its process tree and its exit code."""
    return measure(args, stdout=subprocess.DEVNULL)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--mb", type=float, default=50, help="corpus size in MB (default 50)")
    parser.add_argument("--workers", type=int, default=2, help="counting worker processes (default 2)")
    parser.add_argument("--vocab-size", type=int, default=300)
    parser.add_argument("--skip-encode", action="store_true", help="measure training only")
    args = parser.parse_args(argv)
    cli = [sys.executable, "-m", "bpe_studio"]
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "one_line.txt"
        build(corpus, args.mb)
        size = corpus.stat().st_size
        newlines = corpus.read_bytes().count(b"\n")
        print(f"corpus: {size / 1e6:.1f} MB on one line ({newlines} newlines)")
        train = [*cli, "train", str(corpus), "--vocab-size", str(args.vocab_size), "--quiet"]
        train += ["--workers", str(args.workers), "--out", str(Path(tmp) / "tok")]
        wall, peak, code = _measure(train)
        print(f"train, {args.workers} workers: {wall:.1f} s, peak RSS {peak / 1e6:.0f} MB (exit {code})")
        if not args.skip_encode:
            encode = [*cli, "encode", "--tokenizer", str(CS336 / "gpt2_vocab.json"), "--file", str(corpus)]
            wall, peak, code = _measure(encode)
            print(f"encode --file (GPT-2): {wall:.1f} s, peak RSS {peak / 1e6:.0f} MB (exit {code})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
