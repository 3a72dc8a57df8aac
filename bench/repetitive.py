"""Benchmark training on long repetitive pre-tokens (issue 9, item 5).

A run of one character, or a short pattern repeated, is a single pre-token under the GPT-2 pattern, so the
merge loop sees one very long word in which every merge has thousands of overlapping matches. Each case is
trained end to end (``train`` on a file, one worker) in a fresh child process with a time limit, and the
wall time of the child is printed.

Usage::

    python bench/repetitive.py                      # every case, vocabulary 1000, 300 s limit per case
    python bench/repetitive.py --only dna --vocab-size 2000 --timeout 60
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent

_TRAIN = """
import sys
sys.path.insert(0, sys.argv[3])  # the child is isolated (-I): this repository's engine, nothing else
from bpe_studio.engine import TrainConfig, train
result = train(TrainConfig(inputs=[sys.argv[1]], vocab_size=int(sys.argv[2]), workers=1))
print(len(result.merges), result.stop_reason.value, round(result.timings.get("merging", 0.0), 3))
"""


def _dna(n: int) -> str:
    rng = random.Random(9)
    return "".join(rng.choice("ACGT") for _ in range(n))


def _spread(n: int) -> str:
    # The same 3 MB of 'a', as words of 1-12 letters separated by spaces (so about 3.4 MB in all).
    rng = random.Random(9)
    parts: list[str] = []
    left = n
    while left > 0:
        k = min(left, rng.randint(1, 12))
        parts.append("a" * k)
        left -= k
    return " ".join(parts)


CASES: dict[str, Callable[[], str]] = {
    "equals-200k": lambda: "=" * 200_000,
    "ab-100k": lambda: "ab" * 100_000,
    "dna-100k": lambda: _dna(100_000),
    "one-letter-3mb": lambda: "a" * 3_000_000,
    "one-letter-3mb-spread": lambda: _spread(3_000_000),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(CASES), nargs="*", help="cases to run (default: all)")
    parser.add_argument("--vocab-size", type=int, default=1000)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds allowed per case")
    args = parser.parse_args()
    print(f"{'case':<24}{'MB':>6}{'wall s':>10}{'merge s':>10}  merges / stop")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.only or CASES:
            path = Path(tmp) / f"{name}.txt"
            path.write_text(CASES[name](), encoding="utf-8")
            size = path.stat().st_size / 1e6
            command = [sys.executable, "-I", "-c", _TRAIN, str(path), str(args.vocab_size), str(REPO_ROOT)]
            start = time.perf_counter()
            try:
                done = subprocess.run(
                    command,
                    capture_output=True,
                    text=True,
                    timeout=args.timeout,
                    cwd=tmp,
                    check=True,
                )
            except subprocess.TimeoutExpired:
                print(f"{name:<24}{size:>6.1f}{'>' + format(args.timeout, '.0f'):>10}{'':>10}  (time limit)")
                continue
            wall = time.perf_counter() - start
            merges, stop, merge_s = done.stdout.split()
            print(f"{name:<24}{size:>6.1f}{wall:>10.2f}{float(merge_s):>10.2f}  {merges} / {stop}")


if __name__ == "__main__":
    main()
