"""Encoding benchmark: BPE Studio's Tokenizer against tiktoken and Hugging Face tokenizers, GPT-2 vocabulary.

Run it standalone (about a minute; it uses one core, plus one subprocess at a time for the memory runs)::

    python bench/encode.py              # throughput table + encode_iterable memory over 10/30/100 MB
    python bench/encode.py --no-stream  # throughput only

What is measured, on the same text in one run:

* encode throughput (MB of UTF-8 per second, single thread): ours with a cold cache (a new tokenizer) and
  warm (the same text again), tiktoken's ``encode_ordinary``, and tokenizers' ``encode_batch`` over the
  text's lines with one Rayon thread (its single-string ``encode`` is slower still);
* with the native kernel, ``encode_ordinary_batch`` over the text's lines on 2 threads, ours against
  tiktoken's (the warm cache; a load figure more than a single-thread one);
* decode throughput of the ids each produced (the ids are checked to be equal first);
* the peak memory ``encode_iterable`` adds over a file's lines, for files of increasing size, each in a fresh
  process: the peak RSS while streaming minus the RSS before (tokenizer loaded). It must not grow with size.

Text: "mixed English" is 8 slices spread over the natural corpus of ``bench/corpora.py`` (fortunes, manuals,
dictionaries) when it is built, else the shared CS336 English texts shuffled by line with a fixed seed. The
GPT-2 files come from the shared CS336 data (``BPE_STUDIO_CS336_DATA`` or ``../shared/data/cs336``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

# One Rayon thread for tokenizers, so that every library runs single-threaded. Set before it is imported.
os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO_ROOT = Path(__file__).resolve().parent.parent
# Generated text and tiktoken's cache go to the system's temporary folder: nothing from the shared data is
# copied into the repository.
CACHE_DIR = Path(tempfile.gettempdir()) / "bpe-studio-bench"
SPECIAL = "<|endoftext|>"
MB = 1_000_000


def data_dir() -> Path:
    """The shared CS336 data folder (GPT-2 files and English texts)."""
    override = os.environ.get("BPE_STUDIO_CS336_DATA")
    folder = Path(override) if override else REPO_ROOT.parent / "shared" / "data" / "cs336"
    if not (folder / "gpt2_vocab.json").is_file():
        sys.exit(f"GPT-2 files not found in {folder}; set BPE_STUDIO_CS336_DATA to the CS336 data folder")
    return folder


def natural_corpus() -> Path | None:
    """The 100 MB natural corpus of bench/corpora.py, if it is built or can be built here."""
    sys.path.insert(0, str(REPO_ROOT / "bench"))
    try:
        import corpora  # type: ignore[import-not-found]

        path: Path = corpora.natural()
        return path
    except Exception as exc:  # missing module, packages or data: fall back to the shared texts
        print(f"(natural corpus unavailable: {exc}; using the shared English texts)", file=sys.stderr)
        return None
    finally:
        sys.path.pop(0)


def english_file(size: int, source: Path | None, data: Path) -> Path:
    """A UTF-8 file of about ``size`` bytes: the natural corpus's prefix, or shuffled shared English lines."""
    if source is not None and source.stat().st_size >= 0.99 * size:
        return source
    target = CACHE_DIR / f"encode-english-{size}.txt"
    if target.is_file():
        return target
    lines: list[str] = []
    for name in ("corpus.en", "address.txt", "tinystories_sample.txt", "german.txt"):
        lines += (data / name).read_text(encoding="utf-8").splitlines(keepends=True)
    rng = random.Random(0)
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".tmp")
    written = 0
    with open(tmp, "w", encoding="utf-8", newline="") as handle:
        while written < size:
            rng.shuffle(lines)
            for line in lines:
                handle.write(line)
                written += len(line.encode("utf-8"))
                if written >= size:
                    break
    tmp.replace(target)
    return target


def mixed_text(path: Path, size: int, pieces: int = 8) -> str:
    """``size`` bytes of text taken as ``pieces`` slices spread over the file, cut at line ends."""
    total = path.stat().st_size
    parts = []
    with open(path, "rb") as handle:
        for k in range(pieces):
            handle.seek(k * max(total - size // pieces, 0) // pieces)
            handle.readline()
            chunk = handle.read(size // pieces).rsplit(b"\n", 1)[0]
            parts.append(chunk.decode("utf-8", errors="replace"))
    return "\n".join(parts)


def lines_up_to(path: Path, size: int) -> Iterator[str]:
    """The lines of a file until ``size`` bytes have been read (newlines kept as they are)."""
    done = 0
    with open(path, encoding="utf-8", errors="replace", newline="") as handle:
        for line in handle:
            yield line
            done += len(line.encode("utf-8"))
            if done >= size:
                return


def best_of(runs: int, action: Callable[[], Any]) -> tuple[float, Any]:
    """The shortest of ``runs`` timings and the last result."""
    best = float("inf")
    result = None
    for _ in range(runs):
        start = time.perf_counter()
        result = action()
        best = min(best, time.perf_counter() - start)
    return best, result


def rss_bytes() -> int:
    """This process's resident set size now."""
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def stream_worker(path: Path, size: int, data: Path) -> dict[str, Any]:
    """In a fresh process: stream ``size`` bytes of ``path`` through encode_iterable; report memory."""
    sys.path.insert(0, str(REPO_ROOT))
    from bpe_studio.engine import Tokenizer

    tok = Tokenizer.from_files(data / "gpt2_vocab.json", data / "gpt2_merges.txt", [SPECIAL])
    tok.encode("warm up the code paths " * 10)
    before = rss_bytes()
    read = 0

    def lines() -> Iterator[str]:
        nonlocal read
        for line in lines_up_to(path, size):
            read += len(line.encode("utf-8"))
            yield line

    start = time.perf_counter()
    count = 0
    peak = before
    for _ in tok.encode_iterable(lines()):
        count += 1
        if count % 20_000 == 0:  # sample the RSS while streaming (reading /proc is cheap)
            peak = max(peak, rss_bytes())
    seconds = time.perf_counter() - start
    peak = max(peak, rss_bytes())
    lifetime_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kB on Linux
    return {
        "bytes": read,
        "tokens": count,
        "seconds": seconds,
        "rss_before": before,
        "peak": peak,
        "lifetime_peak": lifetime_peak,
        # the bounded pre-token cache, the main part of the extra memory (held natively when native)
        "cache_entries": len(tok._encoder),
    }


def measure_stream(path: Path, size: int, data: Path) -> dict[str, Any]:
    command = [sys.executable, __file__, "--stream-worker", str(path), str(size), str(data)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def library_versions() -> str:
    import regex
    import tiktoken
    import tokenizers

    return f"tiktoken {tiktoken.__version__}, tokenizers {tokenizers.__version__}, regex {regex.__version__}"


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def throughput(text: str, data: Path, rounds: int = 5) -> list[tuple[str, float, float | None]]:
    """Rows of (encoder, encode MB/s, decode MB/s): ours native (when built) and pure Python, then the others.

    The fast measurements are interleaved over ``rounds`` rounds and the best of each is kept, so that a
    burst of load from other processes on a shared machine does not favour one library.
    """
    import tiktoken
    import tokenizers
    from tokenizers import decoders, models, pre_tokenizers

    sys.path.insert(0, str(REPO_ROOT))
    from bpe_studio.engine import Tokenizer
    from bpe_studio.engine import native as engine_native

    size = len(text.encode("utf-8")) / MB
    # One tokenizer per encoder: the backend is chosen when a Tokenizer is made (BPE_STUDIO_PURE).
    toks: dict[str, Tokenizer] = {}
    for backend in ("native", "python"):
        os.environ[engine_native.PURE_ENV] = "1" if backend == "python" else "0"
        tok = Tokenizer.from_files(data / "gpt2_vocab.json", data / "gpt2_merges.txt", [SPECIAL])
        if tok.backend == backend:
            toks[backend] = tok
    os.environ.pop(engine_native.PURE_ENV)
    cold: dict[str, float] = {}
    for backend, tok in toks.items():
        cold[backend], ids = best_of(1, lambda: tok.encode_ordinary(text))  # noqa: B023 - called at once
    ours = toks["python"]

    # tiktoken reads GPT-2's two files from its cache folder: fill a private one from the shared data.
    cache = CACHE_DIR / "tiktoken-gpt2"
    cache.mkdir(parents=True, exist_ok=True)
    merges = b"#version: 0.2\n" + (data / "gpt2_merges.txt").read_bytes()
    (cache / "6d1cbeee0f20b3d9449abfede4726ed8212e3aee").write_bytes(merges)
    shutil.copyfile(data / "gpt2_vocab.json", cache / "6c7ea1a7e38e3a7f062df639a5b80947f075ffe6")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    enc = tiktoken.get_encoding("gpt2")
    assert enc.encode_ordinary(text) == ids, "tiktoken and BPE Studio disagree"
    assert ours.decode(ids) == text

    hf = tokenizers.Tokenizer(
        models.BPE.from_file(str(data / "gpt2_vocab.json"), str(data / "gpt2_merges.txt"))
    )
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    lines = text.splitlines(keepends=True)
    hf_encode, _ = best_of(1, lambda: hf.encode_batch(lines))
    # Lines are encoded separately, so compare line by line.
    sample = lines[:200]
    assert [e.ids for e in hf.encode_batch(sample)] == [ours.encode_ordinary(line) for line in sample]

    best: dict[str, float] = {}
    actions: dict[str, Callable[[], Any]] = {}
    for backend, tok in toks.items():
        assert tok.encode_ordinary(text) == ids, f"the {backend} encoder disagrees"
        actions[f"{backend} warm"] = lambda tok=tok: tok.encode_ordinary(text)  # type: ignore[misc]
        actions[f"{backend} decode"] = lambda tok=tok: tok.decode(ids)  # type: ignore[misc]
    # Batches over the text's lines on 2 threads: ours (native threads, GIL released) and tiktoken's.
    if "native" in toks:
        native = toks["native"]
        assert native.encode_ordinary_batch(lines, num_threads=2) == enc.encode_ordinary_batch(lines)
        actions["native batch"] = lambda: native.encode_ordinary_batch(lines, num_threads=2)
        actions["tiktoken batch"] = lambda: enc.encode_ordinary_batch(lines, num_threads=2)
    actions |= {
        "tiktoken": lambda: enc.encode_ordinary(text),
        "tiktoken decode": lambda: enc.decode(ids),
        "hf decode": lambda: hf.decode(ids),
    }
    for _ in range(rounds):
        for name, action in actions.items():
            seconds, _ = best_of(1, action)
            best[name] = min(best.get(name, float("inf")), seconds)

    rows: list[tuple[str, float, float | None]] = []
    for backend in toks:
        rows.append((f"BPE Studio {backend}, cold cache", size / cold[backend], None))
        rows.append(
            (
                f"BPE Studio {backend}, warm cache",
                size / best[f"{backend} warm"],
                size / best[f"{backend} decode"],
            )
        )
    if "native batch" in best:
        rows.append(
            (
                "BPE Studio native, encode_ordinary_batch over lines, 2 threads",
                size / best["native batch"],
                None,
            )
        )
        rows.append(
            ("tiktoken encode_ordinary_batch over lines, 2 threads", size / best["tiktoken batch"], None)
        )
    return [
        *rows,
        ("tiktoken (encode_ordinary)", size / best["tiktoken"], size / best["tiktoken decode"]),
        ("tokenizers (encode_batch, 1 thread)", size / hf_encode, size / best["hf decode"]),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--text-mb", type=float, default=4.0, help="size of the throughput text (default 4 MB)"
    )
    parser.add_argument(
        "--stream-mb", default="10,30,100", help="file sizes for encode_iterable's memory (MB)"
    )
    parser.add_argument("--no-stream", action="store_true", help="skip the encode_iterable memory runs")
    parser.add_argument("--stream-worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.stream_worker:
        path, size, folder = args.stream_worker
        print(json.dumps(stream_worker(Path(path), int(size), Path(folder))))
        return 0

    data = data_dir()
    source = natural_corpus()
    text_size = int(args.text_mb * MB)
    text = mixed_text(english_file(text_size, source, data), text_size)
    print(f"# Encoding benchmark: GPT-2 vocabulary, {len(text.encode()) / MB:.1f} MB of mixed English")
    print(f"{cpu_name()}, Python {platform.python_version()}, {library_versions()}")
    print(f"text: {source.name if source else 'shared CS336 English texts'}\n")
    print("| encoder | encode MB/s | decode MB/s |")
    print("|---|---:|---:|")
    rows = throughput(text, data)
    for name, enc, dec in rows:
        print(f"| {name} | {enc:.2f} | {'' if dec is None else f'{dec:.1f}'} |")
    speeds = {name: (enc, dec) for name, enc, dec in rows}
    tiktoken_speed, tiktoken_decode = speeds["tiktoken (encode_ordinary)"]
    print()
    for backend in ("native", "python"):
        if f"BPE Studio {backend}, cold cache" not in speeds:
            continue
        warm, decode = speeds[f"BPE Studio {backend}, warm cache"]
        cold = speeds[f"BPE Studio {backend}, cold cache"][0]
        print(
            f"{backend}: warm / tiktoken {warm / tiktoken_speed:.2f}x; cold / tiktoken "
            f"{cold / tiktoken_speed:.2f}x; decode / tiktoken {(decode or 0) / (tiktoken_decode or 1):.2f}x"
        )
    if args.no_stream:
        return 0

    sizes = [int(float(s) * MB) for s in args.stream_mb.split(",")]
    print("\n| encode_iterable over | tokens | MB/s | RSS before | peak RSS | extra | cache entries |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for size in sizes:
        path = english_file(size, source, data)
        r = measure_stream(path, size, data)
        extra = r["peak"] - r["rss_before"]
        print(
            f"| {r['bytes'] / MB:.1f} MB | {r['tokens']:,} | {r['bytes'] / MB / r['seconds']:.2f} | "
            f"{r['rss_before'] / 2**20:.0f} MiB | {r['peak'] / 2**20:.0f} MiB | {extra / 2**20:.1f} MiB | "
            f"{r['cache_entries']:,} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
