"""Corpus-encoding benchmark: ``bpe-studio encode-corpus`` against tiktoken's ``encode_ordinary_batch``.

Run it standalone (a few minutes)::

    python bench/encode_corpus.py                 # the natural 100 MB corpus if it can be built, 2 workers
    python bench/encode_corpus.py --mb 20 --workers 2

Both sides encode the same documents (the corpus split at ``<|endoftext|>``) with GPT-2's vocabulary, each
in a fresh process measured by bench/measure.py (wall time, peak RSS of the process and its workers):

* ours: ``bpe-studio encode-corpus --tokenizer GPT2 CORPUS --out ids.npy --separator '<|endoftext|>'
  --workers N`` (reading, encoding, writing the array; uint16);
* tiktoken: read the file, split it, ``encode_ordinary_batch(documents, num_threads=N)``, join the ids with
  the separator's id into a ``uint16`` numpy array and save it.

The two arrays are checked to be equal. Throughput is MB of corpus per second of wall time; with
``--rounds N`` the two sides alternate N times and the best wall time of each is kept. The CPU seconds
(user + system, all threads and workers) are printed too, with the load average: on a shared machine they
say how much of the wall time was waiting for a core.

With the native kernel, encode-corpus encodes on threads of one process (the native encoder releases the
GIL); with ``BPE_STUDIO_PURE=1`` it runs the Python encoder in worker processes.

Text: the natural corpus of bench/corpora.py when it can be built, else the shared CS336 English text
repeated (shuffled by document with a fixed seed) to ``--mb`` MB.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from encode import CACHE_DIR, MB, REPO_ROOT, SPECIAL, data_dir, natural_corpus
from measure import measure

TIKTOKEN_SIDE = """
import sys, numpy as np, tiktoken
corpus, out, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
enc = tiktoken.get_encoding("gpt2")
documents = open(corpus, encoding="utf-8").read().split("<|endoftext|>")
batches = enc.encode_ordinary_batch(documents, num_threads=threads)
sep = enc.eot_token
total = sum(len(b) for b in batches) + len(batches) - 1
ids = np.empty(total, dtype=np.uint16)
at = 0
for i, b in enumerate(batches):
    if i:
        ids[at] = sep
        at += 1
    ids[at:at + len(b)] = b
    at += len(b)
np.save(out, ids)
"""


def _fallback_corpus(mb: int) -> Path:
    path = CACHE_DIR / f"cs336-{mb}mb.txt"
    if path.exists():
        return path
    documents = (data_dir() / "corpus.en").read_text(encoding="utf-8").split(SPECIAL)
    rng = random.Random(13)
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        written = 0
        first = True
        while written < mb * MB:
            rng.shuffle(documents)
            for document in documents:
                if not first:
                    handle.write(SPECIAL)
                first = False
                handle.write(document)
                written += len(document.encode("utf-8")) + len(SPECIAL)
                if written >= mb * MB:
                    break
    return path


def _gpt2_folder() -> tuple[Path, Path]:
    """A GPT-2 folder for us (vocab.json + merges.txt) and tiktoken's cache, from the shared data."""
    data = data_dir()
    ours = CACHE_DIR / "gpt2-folder"
    ours.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(data / "gpt2_vocab.json", ours / "vocab.json")
    shutil.copyfile(data / "gpt2_merges.txt", ours / "merges.txt")
    cache = CACHE_DIR / "tiktoken-gpt2"
    cache.mkdir(parents=True, exist_ok=True)
    merges = b"#version: 0.2\n" + (data / "gpt2_merges.txt").read_bytes()
    (cache / "6d1cbeee0f20b3d9449abfede4726ed8212e3aee").write_bytes(merges)
    shutil.copyfile(data / "gpt2_vocab.json", cache / "6c7ea1a7e38e3a7f062df639a5b80947f075ffe6")
    return ours, cache


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=100, help="corpus size when the natural one is not there")
    parser.add_argument("--workers", type=int, default=2, help="our workers and tiktoken's threads")
    parser.add_argument("--no-natural", action="store_true", help="use the shared CS336 text only")
    parser.add_argument(
        "--rounds", type=int, default=1, help="alternate the two sides N times, keep the best"
    )
    args = parser.parse_args()
    import numpy as np

    corpus = None if args.no_natural else natural_corpus()
    corpus = corpus or _fallback_corpus(args.mb)
    size = corpus.stat().st_size / MB
    folder, cache = _gpt2_folder()
    # Our tokenizer needs the special token: a studio file made from the GPT-2 folder with it added.
    sys.path.insert(0, str(REPO_ROOT))
    from bpe_studio.engine import Tokenizer, save

    gpt2 = Tokenizer.from_files(folder / "vocab.json", folder / "merges.txt", [SPECIAL])
    tokenizer = save(gpt2, CACHE_DIR / "gpt2-studio.json")
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(cache), "PYTHONPATH": str(REPO_ROOT)}
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        ours_out, theirs_out = Path(tmp) / "ours.npy", Path(tmp) / "theirs.npy"
        commands = {
            "bpe-studio encode-corpus": [
                *(sys.executable, "-m", "bpe_studio", "encode-corpus", "-t", str(tokenizer), str(corpus)),
                *("--out", str(ours_out), "--separator", SPECIAL, "--workers", str(args.workers), "-q"),
            ],
            "tiktoken encode_ordinary_batch": [
                *(sys.executable, "-c", TIKTOKEN_SIDE, str(corpus), str(theirs_out), str(args.workers))
            ],
        }
        best: dict[str, tuple[float, int, float]] = {}
        for _ in range(max(1, args.rounds)):
            for name, command in commands.items():
                cpu = _children_cpu()
                wall, peak, code = measure(command, env=env)
                assert code == 0, (name, code)
                cpu = _children_cpu() - cpu
                if name not in best or wall < best[name][0]:
                    best[name] = (wall, peak, cpu)
        a, b = np.load(ours_out, mmap_mode="r"), np.load(theirs_out, mmap_mode="r")
        assert a.dtype == b.dtype == np.uint16 and np.array_equal(a, b), "the two arrays differ"
        ids = len(a)
        del a, b
    print(f"corpus: {corpus.name}, {size:.1f} MB, {ids:,} ids; {args.workers} workers / threads")
    print(f"load average (1 min): {load_before:.2f} before, {os.getloadavg()[0]:.2f} after\n")
    print(f"{'':31} {'wall s':>8} {'MB/s':>8} {'CPU s':>8} {'peak RSS MB':>12}")
    for name, (wall, peak, cpu) in best.items():
        print(f"{name:31} {wall:8.2f} {size / wall:8.1f} {cpu:8.2f} {peak / MB:12.0f}")


def _children_cpu() -> float:
    """User + system CPU seconds of the finished child processes so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    main()
