"""How our training time and memory grow with the corpus: prefixes of the natural corpus, for a projection.

Each prefix (cut at a document boundary) is trained in a fresh, isolated process to 32,000 tokens with 2
workers; the table gives wall time, the counting and merge phases, the unique pre-tokens and the peak RSS
(from ``/usr/bin/time``), the figures BENCHMARKS.md projects OpenWebText from.

Example:
    python bench/growth.py                      # 12.5, 25, 50 and 100 MB of the natural corpus
    python bench/growth.py --mb 10 20 --vocab-size 10000
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
from corpora import natural  # noqa: E402

_CHILD = """
import json, sys
from bpe_studio.engine import TrainConfig, train
r = train(TrainConfig(inputs=[sys.argv[1]], vocab_size=int(sys.argv[2]), special_tokens=("<|endoftext|>",),
                      workers=int(sys.argv[3])))
print(json.dumps({"timings": r.timings, "unique": r.stats.unique_pretokens}))
"""


def main() -> int:
    """Train every prefix and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, nargs="+", default=[12.5, 25, 50, 100], help="prefix sizes in MB")
    parser.add_argument("--vocab-size", type=int, default=32_000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    data = natural().read_bytes()
    print("| prefix | wall | counting | merging | unique pre-tokens | peak RSS |")
    print("|---:|---:|---:|---:|---:|---:|")
    for mb in args.mb:
        cut = data[: int(mb * 1e6)]
        cut = cut[: cut.rfind(b"<|endoftext|>")] or cut
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "prefix.txt"
            path.write_bytes(cut)
            command = ["/usr/bin/time", "-f", "%M", sys.executable, "-I", "-c", _CHILD]
            start = time.perf_counter()
            done = subprocess.run(
                [*command, os.fspath(path), str(args.vocab_size), str(args.workers)],
                capture_output=True,
                text=True,
                check=True,
                timeout=3600,
            )
            wall = time.perf_counter() - start
        out = json.loads(done.stdout)
        rss_mb = int(done.stderr.strip().splitlines()[-1]) / 1024
        timings = out["timings"]
        print(
            f"| {mb:g} MB | {wall:.2f} s | {timings['counting']:.2f} s | {timings['merging']:.2f} s "
            f"| {out['unique']:,} | {rss_mb:.0f} MB |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
