"""How much two cores slow each other on one encoding: the ceiling of "2 threads against 1" (issue 22).

Encodes one of ``peers.py``'s texts on one thread in a fresh process (after English and mixed, as
``peers.py`` does), first alone, then as two such processes at the same time, and prints each call's median.
The two processes share nothing but the machine: whatever makes them slower together (memory bandwidth,
a shared cache, the hypervisor) also caps what two threads of one batch can gain over one, at about
``2 / (together / alone)``.

Usage::

    python bench/contention.py                          # GPT-2, the Chinese text, arrays, 3 rounds
    python bench/contention.py --vocab o200k --text mixed --kind lists --rounds 5
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

_TEXTS = ("English docs", "mixed", "Chinese")


def child(vocab: str, text: str, kind: str, calls: int) -> float:
    """In a child: the median wall time of ``calls`` one-thread calls on ``text``, in seconds."""
    import peers  # (the child's import: the parent needs none of it)

    tok = peers._ours(vocab)
    texts = peers.encode_texts(12)
    encode = tok.encode_ordinary_batch if kind == "lists" else tok.encode_ordinary_batch_arrays
    for name in _TEXTS[:2]:
        for _ in range(3):
            encode(texts[name], num_threads=1)
    docs = texts[text]
    encode(docs, num_threads=1)
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        encode(docs, num_threads=1)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _start(args: argparse.Namespace) -> subprocess.Popen[str]:
    command = [sys.executable, __file__, "--child", "--vocab", args.vocab, "--text", args.text]
    command += ["--kind", args.kind, "--calls", str(args.calls)]
    return subprocess.Popen(command, stdout=subprocess.PIPE, text=True)


def _medians(processes: list[subprocess.Popen[str]]) -> list[float]:
    out = []
    for process in processes:
        stdout, _ = process.communicate(timeout=600)
        if process.returncode != 0:
            raise SystemExit(f"contention: a child failed (exit code {process.returncode})")
        out.append(float(stdout.strip().splitlines()[-1]))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vocab", choices=["gpt2", "cl100k", "o200k"], default="gpt2")
    parser.add_argument("--text", choices=_TEXTS, default="Chinese")
    parser.add_argument("--kind", choices=["arrays", "lists"], default="arrays")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of (alone, together)")
    parser.add_argument("--calls", type=int, default=12, help="timed calls per process")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(child(args.vocab, args.text, args.kind, args.calls))
        return 0
    alone, together = [], []
    for _ in range(args.rounds):
        alone += _medians([_start(args)])
        together += _medians([_start(args), _start(args)])
    a, t = statistics.median(alone), statistics.median(together)
    print(f"{args.vocab}, {args.text}, {args.kind}, one thread a process; median ms a call:")
    print(f"  alone:    {a * 1e3:6.2f}  ({', '.join(f'{x * 1e3:.2f}' for x in alone)})")
    print(f"  together: {t * 1e3:6.2f}  ({', '.join(f'{x * 1e3:.2f}' for x in together)})")
    print(f"  together / alone: {t / a:.2f}; so 2 threads can give at most about {2 * a / t:.2f}x one here")
    return 0


if __name__ == "__main__":
    sys.exit(main())
