"""Benchmark BPE training: BPE Studio's engine against Hugging Face ``tokenizers``, side by side.

Each measurement runs in a fresh child process (so start-up counts, as it does for a user), while this
process samples the resident memory of the child and all its descendants (our counting workers are
processes; ``tokenizers`` uses threads) every 10 ms and keeps the peak of their sum.

Usage::

    python bench/train.py                    # corpus.en, the ~100 MB natural corpus, synthetic sizes
    python bench/train.py --only corpus-en   # one corpus (also natural, synthetic, chinese, identifiers)
    python bench/train.py --synthetic 10 30 100 --vocab-size 10000
    python bench/train.py --backend native   # ours with the native kernel only (default: both engines)
    python bench/train.py --only natural --backend native --no-theirs --cache-dir ../main/bench/.cache

Columns: wall time of the child process; peak RSS (process tree); pre-tokenization + counting throughput
(corpus MB over the counting phase: ours from the engine's timings, theirs from a run with no merges; with
``--workers 2`` and the native kernel ours counts in 2 threads of one process); merge-loop time
(ours: the engine's merge phase; theirs: wall time minus that no-merge run); the ours/theirs ratio of wall
time and of memory; how many leading merges agree (up to the first tie, which ``tokenizers`` breaks the
other way: we take the greatest pair, as the CS336 reference does), and how many merges both lists hold.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from corpora import chinese, corpus_en, identifiers, natural, synthetic  # noqa: E402
from measure import measure  # noqa: E402

ENDOFTEXT = "<|endoftext|>"

_OURS = """
import json, sys, time
from bpe_studio.engine import TrainConfig, backend, train
path, vocab, workers, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
result = train(TrainConfig(inputs=[path], vocab_size=vocab, special_tokens=("<|endoftext|>",),
                           workers=None if workers == "auto" else int(workers)))
merges = [[list(a), list(b)] for a, b in result.merges]
json.dump({"timings": result.timings, "merges": merges, "backend": backend()}, open(out, "w"))
"""

_THEIRS = """
import json, os, sys
path, vocab, workers, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
if workers != "auto":
    os.environ["RAYON_NUM_THREADS"] = workers
from tokenizers import Tokenizer, models, pre_tokenizers, trainers

def documents():
    # Whole documents split at <|endoftext|>, as our engine sees them (Tokenizer.train([path]) would read
    # lines instead, so no pre-token could hold a newline followed by more whitespace).
    with open(path, encoding="utf-8") as handle:
        rest = ""
        for block in iter(lambda: handle.read(1 << 22), ""):
            *complete, rest = (rest + block).split("<|endoftext|>")
            yield from complete
        yield rest

tok = Tokenizer(models.BPE())
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
trainer = trainers.BpeTrainer(vocab_size=vocab, special_tokens=["<|endoftext|>"], show_progress=False,
                              initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
tok.train_from_iterator(documents(), trainer)
merges = json.loads(tok.to_str())["model"]["merges"]
merges = [m.split(" ") if isinstance(m, str) else m for m in merges]
json.dump({"merges": merges}, open(out, "w"))
"""


@dataclass
class Run:
    """One measured child process."""

    wall: float
    peak_rss: int
    output: dict


def _measure(code: str, args: list[str], env_extra: dict[str, str] | None = None) -> Run:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.json"
        env = {**os.environ, "PYTHONHASHSEED": "0", **(env_extra or {})}
        wall, peak, code_ = measure([sys.executable, "-c", code, *args, str(out)], env=env)
        if code_ != 0:
            raise SystemExit(f"benchmark child failed with exit code {code_}")
        return Run(wall, peak, json.loads(out.read_text()))


def _their_merges(raw: list[list[str]]) -> list[tuple[bytes, bytes]]:
    from bpe_studio.engine.bytes_unicode import text_to_bytes

    return [(text_to_bytes(a), text_to_bytes(b)) for a, b in raw]


def _agree(ours: list[tuple[bytes, bytes]], theirs: list[tuple[bytes, bytes]]) -> int:
    n = 0
    for a, b in zip(ours, theirs, strict=False):
        if a != b:
            break
        n += 1
    return n


def _median_run(code: str, args: list[str], env_extra: dict[str, str] | None, repeat: int) -> Run:
    """``repeat`` fresh runs: the median wall time, the highest peak RSS, the output of the last run."""
    runs = [_measure(code, args, env_extra) for _ in range(repeat)]
    return Run(statistics.median(r.wall for r in runs), max(r.peak_rss for r in runs), runs[-1].output)


def bench_one(
    name: str,
    path: Path,
    vocab_size: int,
    workers: str,
    backends: list[str],
    *,
    theirs_too: bool = True,
    repeat: int = 1,
) -> list[dict]:
    """Measure our trainer (with each of ``backends``) and theirs on one corpus: one row per backend.

    ``theirs_too=False`` skips ``tokenizers`` (its columns are then blank): quicker, for our figures alone.
    ``repeat`` runs each side that many times and reports the median wall time (for runs of a fraction of a
    second, where one run says more about the machine's mood than about the trainer).
    """
    theirs = _median_run(_THEIRS, [str(path), str(vocab_size), workers], None, repeat) if theirs_too else None
    # Their counting time: the same run with nothing to merge (the vocab is just the specials and bytes).
    theirs_count = _median_run(_THEIRS, [str(path), "257", workers], None, repeat) if theirs_too else None
    rows = []
    for backend in backends:
        # BPE_STUDIO_PURE picks our merge loop in the child; the child reports which one ran.
        ours = _median_run(
            _OURS,
            [str(path), str(vocab_size), workers],
            {"BPE_STUDIO_PURE": "1" if backend == "python" else "0"},
            repeat,
        )
        if ours.output["backend"] != backend:
            raise SystemExit(f"asked for our {backend} engine, but the child ran {ours.output['backend']}")
        rows.append(
            _row(f"{name} [{backend}]", path, vocab_size, ours, theirs=theirs, theirs_count=theirs_count)
        )
        if ours.output["merges"] != rows[0]["_merges"]:
            raise SystemExit(f"{name}: our {backend} engine made other merges than our {backends[0]} engine")
    for row in rows:
        del row["_merges"]
    return rows


def _row(
    name: str, path: Path, vocab_size: int, ours: Run, *, theirs: Run | None, theirs_count: Run | None
) -> dict:
    size = path.stat().st_size
    our_merges = [(bytes(a), bytes(b)) for a, b in ours.output["merges"]]
    if theirs is None or theirs_count is None:  # not measured: NaN prints as "nan" in their columns
        theirs = Run(float("nan"), 0, {"merges": []})
        theirs_count = Run(float("nan"), 0, {})
    their_merges = _their_merges(theirs.output["merges"])
    timings = ours.output["timings"]
    return {
        "corpus": name,
        "MB": size / 1e6,
        "vocab": vocab_size,
        "ours_wall": ours.wall,
        "theirs_wall": theirs.wall,
        "ours_rss": ours.peak_rss / 1e6,
        "theirs_rss": theirs.peak_rss / 1e6 or float("nan"),
        "ours_pretok": size / 1e6 / max(timings["counting"], 1e-9),
        "theirs_pretok": size / 1e6 / max(theirs_count.wall, 1e-9),
        "ours_merge": timings.get("merging", 0.0),
        "theirs_merge": max(theirs.wall - theirs_count.wall, 0.0),
        "agree": _agree(our_merges, their_merges),
        "shared": len(set(our_merges) & set(their_merges)),
        "merges": len(our_merges),
        "_merges": ours.output["merges"],  # to check that every backend made the same merges
    }


def print_table(rows: list[dict]) -> None:
    """Print the rows as a Markdown table."""
    header = (
        "| corpus | MB | vocab | wall ours | wall theirs | ratio | peak RSS ours | peak RSS theirs | ratio "
        "| pre-tok MB/s ours | pre-tok MB/s theirs | merge loop ours | merge loop theirs "
        "| leading merges agree | same merges (as sets) |"
    )
    print(header)
    print("|" + "|".join(["---"] * (header.count("|") - 1)) + "|")
    for r in rows:
        print(
            f"| {r['corpus']} | {r['MB']:.1f} | {r['vocab']:,} "
            f"| {r['ours_wall']:.2f} s | {r['theirs_wall']:.2f} s "
            f"| {r['ours_wall'] / r['theirs_wall']:.2f}× | {r['ours_rss']:.0f} MB | {r['theirs_rss']:.0f} MB "
            f"| {r['ours_rss'] / r['theirs_rss']:.2f}× | {r['ours_pretok']:.1f} | {r['theirs_pretok']:.1f} "
            f"| {r['ours_merge']:.2f} s | {r['theirs_merge']:.2f} s | {r['agree']:,} of {r['merges']:,} "
            f"| {r['shared'] / max(r['merges'], 1):.1%} |",
            flush=True,
        )


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--only", choices=["corpus-en", "natural", "synthetic", "chinese", "identifiers"], action="append"
    )
    parser.add_argument("--vocab-size", type=int, default=10_000, help="vocab size for the large corpora")
    parser.add_argument(
        "--workers", default="2", help="worker processes / threads for both ('auto' for default)"
    )
    parser.add_argument("--synthetic", type=int, nargs="*", default=[10, 30, 100], metavar="MB")
    parser.add_argument(
        "--backend", choices=["native", "python", "both"], default="both", help="our merge loop(s) to measure"
    )
    parser.add_argument("--natural-mb", type=float, default=100, help="size of the natural corpus in MB")
    parser.add_argument(
        "--cache-dir", type=Path, default=None, help="the natural corpus's cache (default bench/.cache)"
    )
    parser.add_argument(
        "--no-theirs", action="store_true", help="measure only ours (no tokenizers runs; their columns: nan)"
    )
    parser.add_argument(
        "--identifiers-vocab-size", type=int, default=5_000, help="vocab size for the identifiers corpus"
    )
    args = parser.parse_args(argv)
    backends = ["native", "python"] if args.backend == "both" else [args.backend]
    only = set(args.only or ["corpus-en", "natural", "synthetic", "chinese", "identifiers"])
    print(
        f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, load {os.getloadavg()[0]:.2f}\n"
    )
    rows = []
    if "corpus-en" in only:
        rows += bench_one("corpus.en", corpus_en(), 500, args.workers, backends, repeat=9)  # median of 9
        print_table(rows[-len(backends) :])
    if "natural" in only:
        corpus = natural(int(args.natural_mb * 1_000_000), cache_dir=args.cache_dir)
        name, theirs_too = "natural (Debian docs)", not args.no_theirs
        rows += bench_one(name, corpus, args.vocab_size, args.workers, backends, theirs_too=theirs_too)
        print_table(rows[-len(backends) :])
    if "synthetic" in only:
        for mb in args.synthetic:
            corpus = synthetic(mb * 1_000_000)
            rows += bench_one(f"synthetic Zipf {mb} MB", corpus, args.vocab_size, args.workers, backends)
            print_table(rows[-len(backends) :])
    if "chinese" in only:
        rows += bench_one("Chinese text", chinese(), args.vocab_size, args.workers, backends)
        print_table(rows[-len(backends) :])
    if "identifiers" in only:
        corpus = identifiers()
        rows += bench_one("made-up identifiers", corpus, args.identifiers_vocab_size, args.workers, backends)
        print_table(rows[-len(backends) :])
    print("\nAll rows:\n")
    print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
