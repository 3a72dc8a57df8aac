"""Benchmark loading a rank file in a fresh process: BPE Studio beside tiktoken, and ``bpe-studio inspect``.

For each rank file found, each command runs in a new Python process (so imports count, as they do for a
user), ``--runs`` times, and the median wall time is printed:

* ours: ``load(path, pattern=...).encode("x")``;
* tiktoken: ``tiktoken.Encoding(..., mergeable_ranks=load_tiktoken_bpe(path)).encode("x")``, the same pattern;
* inspect: ``bpe-studio inspect PATH --pattern ...`` (which also derives the merges it shows).

Files: OpenAI's encodings in tiktoken's cache (``$TIKTOKEN_CACHE_DIR``, see engine/formats/named.py), Llama
3's and Llama 4's ``tokenizer.model`` when the ``llama-models`` package is installed, and two synthetic rank
files of 100k and 200k random tokens (the sizes of cl100k and o200k), always. Also the time of ``import
bpe_studio.engine`` alone.

Usage::

    python bench/load.py            # median of 5
    python bench/load.py --runs 9
"""

from __future__ import annotations

import argparse
import base64
import importlib.util
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from bpe_studio.engine import PATTERNS  # noqa: E402
from bpe_studio.engine.formats.named import find_cached  # noqa: E402
from bpe_studio.engine.formats.tiktoken_format import KNOWN_ENCODINGS  # noqa: E402

OURS = "from bpe_studio.engine import load; load({path!r}, pattern={preset!r}).encode('x')"
THEIRS = (
    "import tiktoken; from tiktoken.load import load_tiktoken_bpe; "
    "tiktoken.Encoding('bench', pat_str={pattern!r}, mergeable_ranks=load_tiktoken_bpe({path!r}), "
    "special_tokens={{}}).encode('x')"
)


def synthetic(path: Path, size: int, seed: int = 0) -> Path:
    """A rank file of ``size`` tokens: the 256 bytes, then random words of 2-12 bytes (like cl100k's)."""
    rng = random.Random(seed)
    letters = b"abcdefghijklmnopqrstuvwxyz ETAOINSHRDLU.,'-0123456789"
    tokens = [bytes([b]) for b in range(256)]
    seen = set(tokens)
    while len(tokens) < size:
        word = bytes(rng.choice(letters) for _ in range(rng.randint(2, 12)))
        if word not in seen:
            seen.add(word)
            tokens.append(word)
    path.write_bytes(b"".join(base64.b64encode(t) + b" %d\n" % i for i, t in enumerate(tokens)))
    return path


def files(folder: Path) -> list[tuple[str, Path, str]]:
    """(name, path, preset) of every rank file to measure."""
    found: list[tuple[str, Path, str]] = []
    for name, encoding in KNOWN_ENCODINGS.items():
        cached = find_cached(encoding)
        if cached is not None:
            found.append((name, cached, encoding.pattern))
    spec = importlib.util.find_spec("llama_models")
    if spec is not None and spec.submodule_search_locations:
        root = Path(next(iter(spec.submodule_search_locations)))
        for model, preset in (("llama3", "cl100k"), ("llama4", "o200k")):
            if (root / model / "tokenizer.model").is_file():
                found.append((f"{model} tokenizer.model", root / model / "tokenizer.model", preset))
    found.append(("synthetic 100k", synthetic(folder / "synthetic100k.tiktoken", 100_000), "cl100k"))
    found.append(("synthetic 200k", synthetic(folder / "synthetic200k.tiktoken", 200_000), "o200k"))
    return found


def median_seconds(command: list[str], runs: int) -> float:
    """The median wall time of ``command`` in fresh processes (it must succeed)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh processes per figure (default 5)")
    args = parser.parse_args(argv)
    python = sys.executable
    has_tiktoken = importlib.util.find_spec("tiktoken") is not None
    empty = median_seconds([python, "-c", "pass"], args.runs)
    engine = median_seconds([python, "-c", "import bpe_studio.engine"], args.runs)
    print(f"python -c pass: {empty:.3f} s; import bpe_studio.engine: {engine:.3f} s (median of {args.runs})")
    print(f"{'file':<24} {'tokens':>8} {'ours':>8} {'tiktoken':>9} {'ratio':>6} {'inspect':>8}")
    with tempfile.TemporaryDirectory() as scratch:
        for name, path, preset in files(Path(scratch)):
            tokens = sum(1 for line in path.read_bytes().splitlines() if line.strip())
            ours = median_seconds([python, "-c", OURS.format(path=str(path), preset=preset)], args.runs)
            theirs = (
                median_seconds(
                    [python, "-c", THEIRS.format(path=str(path), pattern=PATTERNS[preset])], args.runs
                )
                if has_tiktoken
                else float("nan")
            )
            inspect = median_seconds(
                [python, "-m", "bpe_studio", "inspect", str(path), "--pattern", preset], args.runs
            )
            ratio = ours / theirs
            print(f"{name:<24} {tokens:>8,} {ours:>7.3f}s {theirs:>8.3f}s {ratio:>5.2f}x {inspect:>7.3f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
