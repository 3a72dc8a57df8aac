"""Benchmark distributed counting: a 2-worker Dask ``LocalCluster`` against the local process pool.

Every measurement runs in a fresh child process (``python -c``), as a user's run would. Measured:

* **counting** of the ~100 MB natural corpus (planning + counting, up to the last progress event) with
  the local process pool (``workers=N``), with ``cluster="local:N"`` (a LocalCluster started and closed by
  the run), and with ``cluster="tcp://..."`` to a LocalCluster started beforehand (the steady-state cost
  of Dask, without start-up). The three counts tables are compared: they must be identical.
* **traffic**: the pickled size of the tables the workers send back (the only large data on the network;
  a task description is a path and two offsets), from a separate, untimed run.
* **table growth**: unique pre-tokens against corpus bytes, from one in-process pass, with the table's
  size in memory and as a counts file.
* **reuse**: writing and loading the counts file, and a checkpointed merge run against replaying it.

Usage::

    python bench/distributed.py                 # natural 100 MB corpus, 2 workers
    python bench/distributed.py --workers 2 --corpus PATH --vocab-size 5000
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
# Python puts this script's folder first on sys.path, where this file would shadow Dask's `distributed`
# package: take the folder out, and load bench/corpora.py by its path instead.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != BENCH]
sys.path.insert(0, str(BENCH.parent))
_spec = importlib.util.spec_from_file_location("bench_corpora", BENCH / "corpora.py")
assert _spec is not None and _spec.loader is not None
corpora = importlib.util.module_from_spec(_spec)
sys.modules["bench_corpora"] = corpora
_spec.loader.exec_module(corpora)

ENDOFTEXT = "<|endoftext|>"

# Counting only: vocab_size 257 is the bytes and the special token, so the merge loop makes no merge.
_COUNT = """
import json, sys, time
from bpe_studio.engine import CountProgress, PhaseStarted, Phase, TrainConfig, iter_train
from bpe_studio.engine import distributed as dist
path, mode, workers, counts_out, traffic, out = sys.argv[1:7]
sizes = []
if traffic == "1":
    import pickle
    original = dist.ClusterSession._result
    def recording(future, rng):
        result = original(future, rng)
        sizes.append(len(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)))
        return result
    dist.ClusterSession._result = staticmethod(recording)
options = {"workers": int(workers)} if mode == "pool" else {"cluster": mode}
config = TrainConfig(inputs=[path], vocab_size=257, special_tokens=("<|endoftext|>",),
                     counts_out=counts_out or None, **options)
start = time.perf_counter()
counted = saved = None
for event in iter_train(config):
    # The last progress event comes once the table is complete (and exact), the cluster closed.
    if isinstance(event, CountProgress):
        counted, unique = time.perf_counter() - start, event.unique_pretokens
    if isinstance(event, PhaseStarted) and event.phase is Phase.MERGING:
        saved = time.perf_counter() - start - counted
    last = event
import resource
json.dump({"count_wall": counted, "save": saved, "unique": unique, "timings": last.result.timings,
           "traffic": sizes, "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss},
          open(out, "w"))
"""

_GROWTH = """
import json, sys, time
from bpe_studio.engine.config import InvalidUtf8Policy
from bpe_studio.engine.pretokenize.patterns import resolve_pattern
from bpe_studio.engine.corpus.plan import plan_chunks
from bpe_studio.engine.training.counting import ChunkCounter
path, out = sys.argv[1:3]
chunks = plan_chunks([path], chunk_size=4 << 20, special_tokens=["<|endoftext|>"], newline_cuts=True)
counter = ChunkCounter(pattern=resolve_pattern("gpt2"), special_tokens=["<|endoftext|>"],
                       policy=InvalidUtf8Policy.ERROR)
points, done, start = [], 0, time.perf_counter()
for chunk in chunks:
    counter.count_chunk(chunk)
    done += chunk.size
    points.append([done, counter.unique, counter.totals.pretokens])
table = counter.byte_counts()
keys = sum(sys.getsizeof(k) for k in table)
values = sum(sys.getsizeof(v) for v in table.values() if v > 256)
json.dump({"points": points, "seconds": time.perf_counter() - start,
           "table_bytes": keys + values + sys.getsizeof(table), "key_bytes": sum(map(len, table))},
          open(out, "w"))
"""

_MERGE = """
import json, sys, time
from bpe_studio.engine import MergeMade, PhaseStarted, Phase, TrainConfig, iter_train
counts, vocab, checkpoint, resume, out = sys.argv[1:6]
config = TrainConfig(inputs=(), vocab_size=int(vocab), special_tokens=("<|endoftext|>",),
                     counts_in=None if resume else counts, resume=resume or None,
                     checkpoint=checkpoint or None, checkpoint_every=1000)
start = time.perf_counter()
merging_started = None
for event in iter_train(config):
    if isinstance(event, PhaseStarted) and event.phase is Phase.MERGING:
        merging_started = time.perf_counter() - start
    last = event
r = last.result
import resource
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
json.dump({"load": merging_started, "merging": r.timings["merging"], "merges": len(r.merges),
           "wall": time.perf_counter() - start, "peak_rss": peak,
           "unique": r.stats.unique_pretokens, "merge_list": [[list(a), list(b)] for a, b in r.merges]},
          open(out, "w"))
"""


def _best(runs: int, key: str, code: str, *args: str) -> dict[str, Any]:
    """The run with the smallest ``key`` of ``runs`` runs (the machine is shared: the least disturbed)."""
    results = [_child(code, *args) for _ in range(runs)]
    best = min(results, key=lambda r: float(r[key]))
    best["all"] = [round(float(r[key]), 2) for r in results]
    return best


def _child(code: str, *args: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.json"
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code, *args, str(out)], check=True)
        result: dict[str, Any] = json.loads(out.read_text())
        result["child_wall"] = time.perf_counter() - start
        return result


def _load_counts(path: Path) -> dict[str, int]:
    from bpe_studio.engine.training.checkpoint import load

    return load(path).counts


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the results as Markdown."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=None, help="corpus file (default: the natural 100 MB)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--vocab-size", type=int, default=5000, help="vocab size of the checkpoint runs")
    parser.add_argument("--repeat", type=int, default=3, help="runs per timed measurement (the best counts)")
    parser.add_argument("--skip-growth", action="store_true", help="skip the one-process growth pass")
    parser.add_argument("--skip-merge", action="store_true", help="skip the checkpoint/resume runs")
    args = parser.parse_args(argv)
    corpus = args.corpus or corpora.natural()
    size = corpus.stat().st_size
    n = args.workers
    print(
        f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, "
        f"load {os.getloadavg()[0]:.2f}; corpus {corpus.name}, {size / 1e6:.1f} MB; {n} workers\n",
        flush=True,
    )
    from bpe_studio.engine.corpus import distributed as dist

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        r = args.repeat
        # Rounds interleave the backends, so that whatever else the machine does disturbs them alike.
        runs: dict[str, list[dict[str, Any]]] = {"pool": [], "local": [], "tcp": []}
        for _ in range(r):
            runs["pool"].append(_child(_COUNT, str(corpus), "pool", str(n), str(folder / "pool.counts"), "0"))
            runs["local"].append(
                _child(_COUNT, str(corpus), f"local:{n}", "0", str(folder / "local.counts"), "0")
            )
            with dist.local_cluster(n) as cluster:
                runs["tcp"].append(
                    _child(
                        _COUNT, str(corpus), cluster.scheduler_address, "0", str(folder / "tcp.counts"), "0"
                    )
                )
            print({k: [round(v["count_wall"], 2) for v in vs] for k, vs in runs.items()}, flush=True)
        with dist.local_cluster(n) as cluster:
            traffic = _child(_COUNT, str(corpus), cluster.scheduler_address, "0", "", "1")["traffic"]
        names = {
            "pool": "process pool",
            "local": f"Dask LocalCluster (local:{n}, started by the run)",
            "tcp": f"Dask LocalCluster of {n}, already running (tcp://)",
        }
        best = {k: min(vs, key=lambda v: float(v["count_wall"])) for k, vs in runs.items()}
        median = {k: statistics.median(float(v["count_wall"]) for v in vs) for k, vs in runs.items()}
        pool = best["pool"]
        reference = _load_counts(folder / "pool.counts")
        identical = all(_load_counts(folder / f"{name}.counts") == reference for name in ("local", "tcp"))
        counts_file = (folder / "pool.counts").stat().st_size

        print(
            f"\n| counting backend | best of {r}: wall (planning + counting) | of which planning | MB/s "
            "| vs pool | median wall | median vs pool | peak RSS of the parent/client |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for key, name in names.items():
            row = best[key]
            wall = row["count_wall"]
            print(
                f"| {name} | {wall:.2f} s | {row['timings']['planning']:.2f} s | {size / 1e6 / wall:.1f} "
                f"| {wall / pool['count_wall']:.2f}× | {median[key]:.2f} s "
                f"| {median[key] / median['pool']:.2f}× "
                f"| {row['peak_rss'] / 1e3:.0f} MB |"
            )
        print(
            f"\ncounts tables identical across the three: {identical}; unique pre-tokens "
            f"{pool['unique']:,}; tables sent back by the tasks: {len(traffic)}, "
            f"{sum(traffic) / 1e6:.1f} MB pickled in all ({sum(traffic) / size:.1%} of the corpus)"
        )
        print(
            f"counts file: {counts_file / 1e6:.1f} MB, written in {pool['save']:.2f} s "
            "(encode + compress + atomic write)",
            flush=True,
        )

        if not args.skip_merge:
            counts = str(folder / "pool.counts")
            ckpt = str(folder / "run.ckpt")
            fresh = _best(r, "merging", _MERGE, counts, str(args.vocab_size), ckpt, "")
            plain = _best(r, "merging", _MERGE, counts, str(args.vocab_size), "", "")
            replay = _best(r, "merging", _MERGE, "", str(args.vocab_size), "", ckpt)
            print(f"merging: {plain['all']}, checkpointed: {fresh['all']}, replay: {replay['all']}")
            same = replay["merge_list"] == fresh["merge_list"] == plain["merge_list"]
            print(
                f"\n| run from the counts file (vocab {args.vocab_size:,}) | load | merging | wall |\n"
                "|---|---|---|---|\n"
                f"| no checkpoint | {plain['load']:.2f} s | {plain['merging']:.2f} s "
                f"| {plain['wall']:.2f} s |\n"
                f"| checkpoint every 1,000 merges | {fresh['load']:.2f} s | {fresh['merging']:.2f} s "
                f"| {fresh['wall']:.2f} s |\n"
                f"| resume from the final checkpoint (replays {replay['merges']:,} merges) "
                f"| {replay['load']:.2f} s | {replay['merging']:.2f} s | {replay['wall']:.2f} s |\n"
                f"\ncheckpoint file: {Path(ckpt).stat().st_size / 1e6:.1f} MB; merges identical: {same}; "
                f"peak RSS of the merging process {plain['peak_rss'] / 1e3:.0f} MB for {plain['unique']:,} "
                f"unique pre-tokens ({plain['peak_rss'] * 1e3 / plain['unique']:.0f} bytes each)",
                flush=True,
            )

    if not args.skip_growth:
        growth = _child(_GROWTH, str(corpus))
        print("\n| corpus read | pre-tokens | unique pre-tokens |\n|---|---|---|")
        points = growth["points"]
        marks = sorted({max(1, len(points) * k // 8) - 1 for k in range(1, 9)})
        for i in marks:
            done, unique, pretokens = points[i]
            print(f"| {done / 1e6:.0f} MB | {pretokens:,} | {unique:,} |")
        print(
            f"\nin memory: the final table takes about {growth['table_bytes'] / 1e6:.0f} MB as a Python dict "
            f"({growth['key_bytes'] / 1e6:.1f} MB of pre-token bytes); one process counted at "
            f"{size / 1e6 / growth['seconds']:.1f} MB/s"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
