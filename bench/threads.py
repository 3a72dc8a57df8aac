"""Two threads against one, side by side: our batch encoder's scaling on ``peers.py``'s texts (issue 22).

``peers.py`` times each thread count in its own child process, minutes apart, so a slow minute of the
machine moves one side of the ratio and not the other (on this 2-core VM, 2-thread cells swing by 10-15%
from run to run). Here one fresh process per vocabulary encodes each text (English documents, mixed,
Chinese; after the same warm-up calls as ``peers.py``) with 1 and with N threads in blocks of ``--block``
calls, the blocks alternating, and prints the median wall time of a call on each, their ratio, and the CPU
time a call takes on N threads against one (what running the batch on several threads costs in work: 1.00
is none).

A block of repeated calls is what ``peers.py`` times (one thread count, the same batch again and again);
``--block 1`` alternates call by call, which costs the N-thread calls 5-7% here: each follows a call that
left the cache's entries in one core's own cache (2 MB of L2 a core on this machine), where the other
core's thread then fetches them.

Usage::

    python bench/threads.py                             # gpt2, cl100k, o200k; lists and arrays; 2 threads
    python bench/threads.py --vocab gpt2 --kind arrays --calls 30 --block 1
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

_VOCABS = ("gpt2", "cl100k", "o200k")
_KINDS = ("lists", "arrays")


def child(
    vocab: str, kinds: list[str], *, threads: int, calls: int, block: int, mb: float
) -> list[list[object]]:
    """In a child: for each text and kind, the MB, and the medians of (wall, CPU) seconds of a call on one
    thread and on ``threads``, in alternating blocks of ``block`` calls (``calls`` on each in all)."""
    import peers  # (the child's import: the parent needs none of it)

    tok = peers._ours(vocab)
    texts = peers.encode_texts(mb)
    rows: list[list[object]] = []
    for text, docs in texts.items():
        size = sum(len(d.encode("utf-8")) for d in docs) / peers.MB
        for kind in kinds:
            encode = tok.encode_ordinary_batch if kind == "lists" else tok.encode_ordinary_batch_arrays
            for n in (1, threads):  # the warm-up peers.py's encoders make (its id check), on each count
                encode(docs, num_threads=n)
            times: dict[int, list[tuple[float, float]]] = {1: [], threads: []}
            while len(times[threads]) < calls:
                for n in (1, threads):
                    for _ in range(min(block, calls - len(times[n]))):
                        cpu, wall = time.process_time(), time.perf_counter()
                        ids = encode(docs, num_threads=n)
                        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                        del ids  # (freed outside the timing, as peers.py's best_of does)
                        times[n].append((wall, cpu))
            medians = [[statistics.median(t[k] for t in times[n]) for k in (0, 1)] for n in (1, threads)]
            rows.append([text, kind, size, *medians])
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vocab", choices=_VOCABS, action="append", help="default: all three")
    parser.add_argument("--kind", choices=_KINDS, action="append", help="default: both")
    parser.add_argument("--threads", type=int, default=2, help="the thread count set against one")
    parser.add_argument("--calls", type=int, default=20, help="timed calls per thread count")
    parser.add_argument("--block", type=int, default=5, help="calls in a row on one thread count")
    parser.add_argument("--encode-mb", type=float, default=12.0, help="MB of documents per text")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.threads < 2 or args.calls < 1 or args.block < 1:
        parser.error("--threads must be 2 or more, --calls and --block 1 or more")
    vocabs, kinds = args.vocab or list(_VOCABS), args.kind or list(_KINDS)
    if args.child:
        print(
            json.dumps(
                child(
                    vocabs[0],
                    kinds,
                    threads=args.threads,
                    calls=args.calls,
                    block=args.block,
                    mb=args.encode_mb,
                )
            )
        )
        return 0
    n = args.threads
    print(f"| vocab | text | kind | 1 thread MB/s | {n} threads MB/s | {n} / 1 | CPU a call, {n} / 1 |")
    print("|---|---|---|---:|---:|---:|---:|")
    for vocab in vocabs:
        command = [sys.executable, "-I", __file__, "--child", "--vocab", vocab, "--threads", str(n)]
        command += ["--calls", str(args.calls), "--block", str(args.block)]
        command += ["--encode-mb", str(args.encode_mb)]
        for kind in kinds:
            command += ["--kind", kind]
        try:
            done = subprocess.run(command, stdout=subprocess.PIPE, text=True, timeout=1800, check=False)
        except subprocess.TimeoutExpired:
            raise SystemExit(f"threads: the {vocab} child took over 30 minutes") from None
        if done.returncode != 0:
            raise SystemExit(f"threads: the {vocab} child failed (exit code {done.returncode})")
        for text, kind, size, (wall1, cpu1), (wall_n, cpu_n) in json.loads(done.stdout.splitlines()[-1]):
            print(
                f"| {vocab} | {text} | {kind} | {size / wall1:.0f} | {size / wall_n:.0f} | "
                f"{wall1 / wall_n:.2f}× | {cpu_n / cpu1:.2f} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
