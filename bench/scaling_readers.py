"""Benchmark that every corpus reader is linear: the time to plan and read a file of n and of 8n bytes.

Each hostile shape (one character repeated, a whitespace run, a digit run, text without ASCII, one line
without a newline, one huge JSON record) is written as text, JSON Lines (one record holding it) and Parquet
(one row), plain and compressed with gzip, bz2, xz and zstd, and read end to end the way counting reads it:
planned into tasks (``plan_sources``: chunks, line ranges, row groups, decompressed blocks), then every
task's documents decoded (``RecordReader``, ``decode``). Nothing is pre-tokenized or counted, so the
figure is the reader's own (CPU time in a fresh process, best of ``--repeat``). A linear reader takes
about 8 times as long for 8n; the ratio must stay at or below 10 (a reader that re-scans a growing buffer
shows ratios in the hundreds).

The last case is the "no cut place" refusal: a gzip file of ``--refuse-mb`` MB of spaces (a few hundred kB
compressed) must be refused (``UncuttableTextError``) after reading about 64 MiB, in seconds.

Usage::

    python bench/scaling_readers.py              # n = 4 MB, 8n = 32 MB, every shape and format
    python bench/scaling_readers.py --mb 1 --only spaces --formats txt.gz,jsonl.zst
"""

from __future__ import annotations

import argparse
import bz2
import gzip
import json
import lzma
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from bpe_studio.engine.config import InvalidUtf8Policy  # noqa: E402
from bpe_studio.engine.corpus.plan import Chunk, UncuttableTextError, decode, plan_chunks, read_chunk  # noqa: E402
from bpe_studio.engine.corpus.sources import (  # noqa: E402
    Block,
    LineRange,
    RecordReader,
    RowGroup,
    plan_sources,
    source_kind,
)

#: Text of about n bytes for each shape.
SHAPES: dict[str, Callable[[int], str]] = {
    "one-char": lambda n: "a" * n,
    "spaces": lambda n: " " * n,
    "newlines+tabs": lambda n: "\n\t " * (n // 3),
    "digits": lambda n: "7" * n,
    "no-ascii": lambda n: "中文字符" * (n // 12),
    "one-line": lambda n: "the quick brown fox, jumps over 13 lazy dogs. " * (n // 46),
}
FORMATS = ["txt", "jsonl", "parquet"] + [
    f"{f}.{c}" for f in ("txt", "jsonl") for c in ("gz", "bz2", "xz", "zst")
]
#: Small next to n, so that both sizes are read in many chunks and blocks.
CHUNK_SIZE = 1 << 16


def _compress(data: bytes, codec: str) -> bytes:
    if codec == "gz":
        return gzip.compress(data, compresslevel=6)
    if codec == "bz2":
        return bz2.compress(data)
    if codec == "xz":
        return lzma.compress(data, preset=1)
    import zstandard

    return zstandard.ZstdCompressor().compress(data)


def write(folder: Path, text: str, fmt: str) -> Path:
    """The text as one document in the format ``fmt`` (``txt``, ``jsonl``, ``parquet``, ``jsonl.gz``, ...)."""
    path = folder / f"corpus.{fmt}"
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table({"text": [text]}), path)
        return path
    base, _, codec = fmt.partition(".")
    # One huge JSON record: the whole text in one line.
    raw = (
        (json.dumps({"text": text}, ensure_ascii=False) + "\n").encode() if base == "jsonl" else text.encode()
    )
    path.write_bytes(_compress(raw, codec) if codec else raw)
    return path


def read_all(path: Path) -> int:
    """Plan and read the file as counting does; the number of characters read."""
    reader = RecordReader(text_field="text", policy=InvalidUtf8Policy.ERROR, skip_bad=False)
    tasks, _ = plan_sources(
        [path],
        chunk_size=CHUNK_SIZE,
        special_tokens=[],
        newline_cuts=True,
        plan_text=lambda names: plan_chunks(
            names, chunk_size=CHUNK_SIZE, special_tokens=[], newline_cuts=True
        ),
    )
    chars = 0
    for task in tasks:
        if isinstance(task, Chunk):
            chars += len(decode(read_chunk(task), reader.policy, path=task.path, offset=task.start))
        elif isinstance(task, RowGroup):
            chars += sum(map(len, reader.row_group(task)))
        elif isinstance(task, LineRange):
            with open(task.path, "rb") as handle:
                handle.seek(task.start)
                data = handle.read(task.size)
            chars += sum(map(len, reader.json_lines(data, path=task.path, offset=task.start, line=None)))
        elif isinstance(task, Block) and task.format == "jsonl":
            chars += sum(
                map(len, reader.json_lines(task.data, path=task.path, offset=task.offset, line=task.line))
            )
        elif isinstance(task, Block):
            chars += len(decode(task.data, reader.policy, path=task.path, offset=task.offset))
    return chars


def best_time(path: Path, repeat: int) -> float:
    """The least CPU time (user and system) of ``repeat`` reads, each in a fresh child process: in one
    process a small file would reuse memory already faulted in and cached, a large one not, which makes
    ratios of 20 from memory alone; on a shared machine CPU time also leaves out waiting for a core."""
    best = float("inf")
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, __file__, "--child", str(path)], check=True, capture_output=True, text=True
        ).stdout
        best = min(best, float(out))
    return best


def _child(path: Path) -> None:
    start = time.process_time()
    read_all(path)
    print(time.process_time() - start)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=4.0, help="n in MB (8n is also read; default 4)")
    parser.add_argument("--only", default=None, help="comma-separated shapes (default: all)")
    parser.add_argument("--formats", default=None, help="comma-separated formats (default: all)")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs per size")
    parser.add_argument(
        "--refuse-mb", type=int, default=128, help="MB of gzipped spaces to be refused (0: skip)"
    )
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child)
        return 0
    n = int(args.mb * 1e6)
    shapes = args.only.split(",") if args.only else list(SHAPES)
    formats = args.formats.split(",") if args.formats else FORMATS
    worst = 0.0
    print(f"{'shape':<14} {'format':<10} {'n s':>8} {'8n s':>8} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for shape in shapes:
            for fmt in formats:
                if source_kind(f"x.{fmt}").format == "parquet" and "." in fmt:
                    continue
                times = []
                for size in (n, 8 * n):
                    path = write(folder, SHAPES[shape](size), fmt)
                    times.append(best_time(path, args.repeat))
                    path.unlink()
                ratio = times[1] / max(times[0], 1e-9)
                worst = max(worst, ratio)
                flag = "" if ratio <= 10 else "  <-- above 10"
                print(f"{shape:<14} {fmt:<10} {times[0]:8.3f} {times[1]:8.3f} {ratio:6.1f}{flag}", flush=True)
        if args.refuse_mb:
            path = folder / "spaces.txt.gz"
            with gzip.open(path, "wb", compresslevel=9) as out:
                block = b" " * (1 << 20)
                for _ in range(args.refuse_mb):
                    out.write(block)
            start = time.perf_counter()
            try:
                read_all(path)
                outcome = "NOT refused"
            except UncuttableTextError:
                outcome = "refused"
            print(
                f"{args.refuse_mb} MB of gzipped spaces ({path.stat().st_size:,} bytes): {outcome} in "
                f"{time.perf_counter() - start:.2f} s"
            )
    print(f"worst ratio: {worst:.1f} (required: at most 10)")
    return 0 if worst <= 10 else 1


if __name__ == "__main__":
    sys.exit(main())
