"""Extending GPT-2 and training superwords, against training from scratch: time and peak memory.

Each run is a fresh, isolated process (``python -I``) on a prefix of a benchmark corpus (cut at a document
boundary), with peak RSS from ``/usr/bin/time``:

* ``fresh N``: train to 256 + N + 1 tokens (N merges and ``<|endoftext|>``);
* ``extend GPT-2 by N``: ``--extend gpt2`` to 50,257 + N tokens (GPT-2's pattern and special token);
* ``plain V`` and ``superword T -> V``: ordinary training to V tokens, and SuperBPE with its transition at T.

Example:
    python bench/extend.py                                  # the natural corpus, 10,000 merges, 24k -> 32k
    python bench/extend.py --corpus synthetic --mb 10 --merges 2000 --transition 6000 --vocab-size 8000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from corpora import natural, synthetic  # noqa: E402

_CHILD = """
import json, sys
from bpe_studio.engine import TrainConfig, extend_base, train
path, kind = sys.argv[1], sys.argv[2]
size, transition, workers = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
options = {"inputs": [path], "vocab_size": size, "workers": workers}
if kind == "extend":
    options["extend"] = extend_base("gpt2")
else:
    options["special_tokens"] = ("<|endoftext|>",)
if kind == "superword":
    options["superword_transition"] = transition
r = train(TrainConfig(**options))
print(json.dumps({"timings": r.timings, "tokens": len(r.vocab), "stop": r.stop_reason.value}))
"""


def _run(path: Path, kind: str, size: int, transition: int, workers: int) -> dict[str, float | str]:
    command = ["/usr/bin/time", "-f", "%M", sys.executable, "-I", "-c", _CHILD]
    start = time.perf_counter()
    done = subprocess.run(
        [*command, os.fspath(path), kind, str(size), str(transition), str(workers)],
        capture_output=True,
        text=True,
        check=True,
        timeout=4 * 3600,
    )
    wall = time.perf_counter() - start
    out = json.loads(done.stdout)
    return {
        "wall": wall,
        # A superword run's stage 2 has timings of its own (superword_counting, superword_merging).
        "counting": out["timings"].get("counting", 0.0) + out["timings"].get("superword_counting", 0.0),
        "merging": out["timings"].get("merging", 0.0) + out["timings"].get("superword_merging", 0.0),
        "rss": int(done.stderr.strip().splitlines()[-1]) / 1024,
        "tokens": out["tokens"],
        "stop": out["stop"],
    }


def main() -> int:
    """Run the four trainings and print the table and the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", choices=["natural", "synthetic"], default="natural")
    parser.add_argument("--mb", type=float, default=None, help="a prefix of this many MB (default: all)")
    parser.add_argument("--merges", type=int, default=10_000, help="new merges: fresh and extend")
    parser.add_argument("--transition", type=int, default=24_000, help="superword transition T")
    parser.add_argument("--vocab-size", type=int, default=32_000, help="plain and superword vocab size")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--skip", nargs="*", default=[], choices=["fresh", "extend", "plain", "superword"])
    args = parser.parse_args()
    source = natural() if args.corpus == "natural" else synthetic(int((args.mb or 100) * 1e6))
    data = source.read_bytes()
    if args.mb is not None:
        data = data[: int(args.mb * 1e6)]
        data = data[: data.rfind(b"<|endoftext|>")] or data
    runs = {
        "fresh": ("fresh", 256 + args.merges + 1, 0, f"fresh {args.merges:,} merges"),
        "extend": ("extend", 50_257 + args.merges, 0, f"extend GPT-2 by {args.merges:,}"),
        "plain": ("plain", args.vocab_size, 0, f"plain {args.vocab_size:,}"),
        "superword": (
            "superword",
            args.vocab_size,
            args.transition,
            f"superword {args.transition:,} -> {args.vocab_size:,}",
        ),
    }
    results: dict[str, dict[str, float | str]] = {}
    print(f"{args.corpus} corpus, {len(data) / 1e6:.1f} MB, {args.workers} workers")
    print("| run | wall | counting | merging | peak RSS | tokens |")
    print("|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "corpus.txt"
        path.write_bytes(data)
        del data
        for name, (kind, size, transition, label) in runs.items():
            if name in args.skip:
                continue
            r = results[name] = _run(path, kind, size, transition, args.workers)
            print(
                f"| {label} | {r['wall']:.2f} s | {r['counting']:.2f} s | {r['merging']:.2f} s "
                f"| {r['rss']:.0f} MB | {r['tokens']:,} ({r['stop']}) |",
                flush=True,
            )
    if "fresh" in results and "extend" in results:
        ratio = float(results["extend"]["wall"]) / float(results["fresh"]["wall"])
        print(f"extend / fresh wall time: {ratio:.2f}x (target <= 1.5x)")
    if "plain" in results and "superword" in results:
        wall = float(results["superword"]["wall"]) / float(results["plain"]["wall"])
        rss = float(results["superword"]["rss"]) / float(results["plain"]["rss"])
        print(f"superword / plain: wall {wall:.2f}x (target <= 3x), peak RSS {rss:.2f}x (target <= 2x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
