"""Scaling of the native pre-tokenizers on hostile shapes of text (issue 18, item 1).

Each shape (one character repeated, a long digit run, long whitespace runs, long runs of letters or
punctuation, text without ASCII, one long line) is pre-tokenized natively with each scanner (the presets',
then the models': Llama 3, Qwen 2, Qwen 3.5, Mistral Nemo) at n and at 8n characters; a linear scanner
takes about 8 times as long, a quadratic one 64 times. The table prints both
times and their ratio, which must stay at or below 10. Training and ``encode_ordinary`` go through these
scanners, so they inherit the scaling (before the fix, cl100k took 0.6 s for ``encode_ordinary('7' *
100_000)`` and 85 s to train on 1 MB of digits).

Usage::

    python bench/scaling_scanners.py                 # n = 50,000 characters, every scanner and shape
    python bench/scaling_scanners.py --n 20000 --preset cl100k
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable

from bpe_studio.engine import native

#: Text of about n characters in each hostile shape.
SHAPES: dict[str, Callable[[int], str]] = {
    "one char 'a'": lambda n: "a" * n,
    "upper 'A'": lambda n: "A" * n,
    "digits": lambda n: "7" * n,
    "digits, then letter": lambda n: "7" * n + "x",
    "spaces, then letter": lambda n: " " * n + "x",
    "newlines": lambda n: "\n" * n,
    "space-newline, then x": lambda n: " \n" * (n // 2) + "x",
    "newline, spaces, x": lambda n: "\n" + " " * n + "x",
    "punctuation '!'": lambda n: "!" * n,
    "' s' contractions": lambda n: "'s" * (n // 2),
    "no ASCII '日'": lambda n: "日" * n,
    "marks U+0301": lambda n: "\u0301" * n,
    "'A' + mark": lambda n: "A\u0301" * (n // 2),
    "mark + 'A'": lambda n: "\u0301A" * (n // 2),
    "'Aa' camel": lambda n: "Aa" * (n // 2),
    "one line of words": lambda n: ("lorem ipsum 1234 dolor, sit! " * (n // 29 + 1))[:n],
}


def seconds(preset: str, text: str) -> float:
    """The best of five wall times of pre-tokenizing and counting ``text`` natively."""
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        native.count_pretokens(preset, [text])
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=50_000, help="characters of the smaller text")
    parser.add_argument("--preset", choices=native.NATIVE_SCANNERS, action="append", help="(default: all)")
    args = parser.parse_args()
    if native.backend() != "native":
        sys.exit("the native kernel is not built (or BPE_STUDIO_PURE is set): nothing to measure")
    n = args.n
    for preset in native.NATIVE_SCANNERS:  # build the class table and warm up outside the timings
        native.count_pretokens(preset, ["\u0301日 a1!" * 10_000])
    worst = 0.0
    print(f"{'preset':7} {'shape':24} {'n (s)':>9} {'8n (s)':>9} {'ratio':>6}")
    for preset in args.preset or native.NATIVE_SCANNERS:
        for name, make in SHAPES.items():
            small, large = seconds(preset, make(n)), seconds(preset, make(8 * n))
            ratio = large / max(small, 1e-9)
            worst = max(worst, ratio)
            flag = "" if ratio <= 10 else "  <- superlinear"
            print(f"{preset:7} {name:24} {small:9.4f} {large:9.4f} {ratio:6.1f}{flag}")
    print(f"worst ratio: {worst:.1f} (linear: about 8; must be <= 10)")


if __name__ == "__main__":
    main()
