"""Linear everywhere, measured: every pre-tokenizer and every reader on hostile inputs of size n and 8n.

For each case the time at size n and at size 8n is measured and their ratio reported in a Markdown table:
a linear scanner or reader gives about 8; a ratio above 10 is marked FAIL (a quadratic one gives ~64).

* **Scanners** (``--only scanners``): the presets ``gpt2``, ``cl100k``, ``o200k`` on the native kernel and
  on the Python engine (``BPE_STUDIO_PURE=1``), and a custom pattern (the ``regex`` module), on texts of one
  character repeated, digit runs, space runs, newline runs, no ASCII at all (Chinese) and English words on
  one line. Two operations: training's counting (``train`` on the text as a file to 256 tokens: planning
  and counting, no merges) and ``Tokenizer.encode_ordinary`` (with a tokenizer of 300 tokens trained on a
  sample of the same shape, so that merges apply).
* **Readers** (``--only readers``): plain text, JSON Lines and Parquet, text and JSON Lines also compressed
  with gzip, bzip2, xz and zstd, holding one huge record (English on one line, or Chinese, which JSON Lines
  stores as ``\\uXXXX`` escapes) or many tiny records; timed: planning + counting of ``train`` (native
  ``gpt2`` counting, one worker).

Times are CPU seconds of the child process (all its threads), so a busy machine moves them far less than
the wall clock. Each case runs in a fresh child process (its own backend; a runaway case is killed): the
child times size n (the minimum of a few repeats), then 8n (the minimum of two, or one when it is slow).
The parent waits for 8n only as long as a ratio of :data:`GIVE_UP_RATIO` allows, so a quadratic case
costs seconds, not hours, and is reported as ``FAIL (> R)``. Sizes are chosen so that 8n takes about 0.1
to 1 s when linear; ``--quick`` divides them by 4 (ratios are noisier), ``--scale`` multiplies them.

Usage::

    python bench/scaling.py                      # everything, ~3 min on 2 cores
    python bench/scaling.py --only scanners --quick
    python bench/scaling.py --only readers --out scaling.md
    python bench/scaling.py --match "cl100k native digits"   # the cases whose description holds this
"""

from __future__ import annotations

import argparse
import bz2
import gzip
import json
import lzma
import math
import os
import random
import select
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent

#: A ratio t(8n) / t(n) above this fails.
FAIL_RATIO = 10.0
#: The parent stops waiting for 8n once it has taken this many times t(n): the case fails whatever the rest.
GIVE_UP_RATIO = 30.0
#: How much bigger the large input is.
FACTOR = 8

PRESETS = ("gpt2", "cl100k", "o200k")
#: GPT-2's pattern without its contractions: not a preset, so it runs on the ``regex`` module.
CUSTOM_PATTERN = r""" ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

SCANNER_SHAPES = ("repeat", "digits", "spaces", "newlines", "cjk", "one_line")
READER_SHAPES = ("one_record", "cjk_record", "tiny_records")
READERS = (
    *(("text", c) for c in ("", "gz", "bz2", "xz", "zst")),
    *(("jsonl", c) for c in ("", "gz", "bz2", "xz", "zst")),
    ("parquet", ""),
)

# Characters at size n (before --quick / --scale): 8n takes ~0.1-1 s on a 2-core machine when linear.
SCANNER_N = {
    ("native", "train"): 4 << 20,
    ("native", "encode"): 1 << 20,
    ("python", "train"): 1 << 20,
    ("python", "encode"): 32 << 10,
}
#: Readers: one huge record is cheap to read, many tiny records are not (a JSON object each).
READER_N = {"one_record": 2 << 20, "cjk_record": 2 << 20, "tiny_records": 256 << 10}


@dataclass(frozen=True)
class Case:
    """One measurement: ``kind`` is ``train``, ``encode`` (scanners) or ``read`` (readers)."""

    part: str
    subject: str  # the pre-tokenizer, or the reader (format + compression)
    backend: str
    shape: str
    kind: str
    n: int
    repeats: int

    @property
    def pattern(self) -> str:
        if self.part == "readers":
            return "gpt2"
        return CUSTOM_PATTERN if self.subject == "custom" else self.subject


# ----------------------------------------------------------------------------------------------- inputs


def _words(rng: random.Random) -> list[str]:
    return ["".join(rng.choice("etaoinshrdlucmfwyp") for _ in range(rng.randint(1, 9))) for _ in range(5000)]


def _block(shape: str) -> str:
    """64 Ki characters of a varied shape (the same at every size: n and 8n differ in length only)."""
    rng = random.Random(9)
    if shape in ("cjk", "cjk_record"):
        return "".join(chr(rng.randrange(0x4E00, 0x9FA6)) for _ in range(1 << 16))
    words = _words(rng)
    return " ".join(rng.choice(words) for _ in range(1 << 14))[: 1 << 16]


def shape_text(shape: str, n: int) -> str:
    """About ``n`` bytes of ``shape`` in UTF-8 (deterministic; a block repeated, so that 8n costs little)."""
    unit = {"repeat": "a", "digits": "0123456789", "spaces": " ", "newlines": "\n"}.get(shape)
    if unit is None:
        if shape not in ("cjk", "cjk_record", "one_line", "one_record"):
            raise ValueError(shape)
        unit = _block(shape) + ("" if shape.startswith("cjk") else " ")
    if shape.startswith("cjk"):
        n //= 3  # 3 bytes each in UTF-8: about n bytes, like the other shapes
    return (unit * (n // len(unit) + 1))[:n]


def _records(shape: str, n: int) -> list[str]:
    if shape == "tiny_records":
        rng = random.Random(9)  # the same words at every size: n and 8n differ in length only
        words = _words(rng)
        out: list[str] = []
        size = 0
        while size < n:
            out.append(rng.choice(words))
            size += len(out[-1]) + 1
        return out
    return [shape_text(shape, n)]


def _compress(data: bytes, compression: str) -> bytes:
    if compression == "gz":
        return gzip.compress(data, compresslevel=1)  # fast levels: building 8n must not dominate the run
    if compression == "bz2":
        return bz2.compress(data, compresslevel=1)
    if compression == "xz":
        return lzma.compress(data, preset=1)
    if compression == "zst":
        import zstandard

        return zstandard.ZstdCompressor().compress(data)
    return data


def write_reader_input(folder: Path, reader: str, shape: str, n: int) -> Path:
    """The corpus file of a reader case: ``reader`` is ``text``, ``jsonl.gz``, ``parquet``, ..."""
    kind, _, compression = reader.partition(".")
    records = _records(shape, n)
    if kind == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = folder / f"{shape}-{n}.parquet"
        pq.write_table(pa.table({"text": records}), path)
        return path
    suffix = {"text": "txt", "jsonl": "jsonl"}[kind] + (f".{compression}" if compression else "")
    if kind == "text":
        data = "\n".join(records).encode()
    else:  # json.dumps escapes every non-ASCII character: a Chinese record is all \uXXXX escapes
        data = "".join(json.dumps({"text": r}) + "\n" for r in records).encode()
    path = folder / f"{shape}-{n}.{suffix}"
    path.write_bytes(_compress(data, compression))
    return path


# ----------------------------------------------------------------------------------------- in the child


def _measure_child(case: Case, folder: Path) -> None:
    """Time ``case`` at n then at 8n, printing JSON lines as it goes (the parent reads them as they come):
    ``ready`` once a size's input is built, then the size's best ``seconds`` (the timed part) and ``wall``
    (the slowest whole run, which the parent's patience is based on)."""
    sys.path.insert(0, str(REPO_ROOT))
    from bpe_studio.engine import TrainConfig, native, train
    from bpe_studio.engine.encoding.tokenizer import Tokenizer

    if native.backend() != case.backend:
        raise SystemExit(f"asked for the {case.backend} backend, running {native.backend()}")

    def counting(path: Path) -> Callable[[], float]:
        config = TrainConfig(inputs=[path], vocab_size=256, workers=1, pattern=case.pattern)

        def run() -> float:
            # CPU seconds of this process (every thread): the work done, which a busy machine changes far
            # less than the wall clock. With 256 tokens nothing is merged: planning and counting.
            start = time.process_time()
            train(config)
            return time.process_time() - start

        return run

    def prepare(size: int) -> Callable[[], float]:
        if case.kind == "read":
            return counting(write_reader_input(folder, case.subject, case.shape, size))
        text = shape_text(case.shape, size)
        if case.kind == "train":
            path = folder / f"{case.shape}-{size}.txt"
            path.write_text(text, encoding="utf-8")
            return counting(path)
        sample = folder / "sample.txt"
        sample.write_text(
            shape_text(case.shape, 4096) + "\n" + shape_text("one_line", 20_000), encoding="utf-8"
        )
        trained = train(TrainConfig(inputs=[sample], vocab_size=300, workers=1, pattern=case.pattern))

        def encode() -> float:
            tokenizer = Tokenizer.from_result(trained)  # a fresh one: its cache of pre-tokens is empty
            start = time.process_time()
            tokenizer.encode_ordinary(text)
            return time.process_time() - start

        return encode

    for size, repeats in ((case.n, case.repeats), (case.n * FACTOR, 2)):
        run = prepare(size)
        print(json.dumps({"ready": size}), flush=True)  # the input is built: the parent's clock starts
        best, wall, spent = math.inf, 0.0, 0.0
        for attempt in range(2 * repeats):
            started = time.perf_counter()
            best = min(best, run())
            wall = max(wall, time.perf_counter() - started)
            spent += time.perf_counter() - started
            # `repeats` tries, more (up to twice as many) while they are short and noisy; one when slow.
            if best > 1.0 or (attempt + 1 >= repeats and spent > 0.3):
                break
        print(json.dumps({"size": size, "seconds": best, "wall": wall}), flush=True)


# ----------------------------------------------------------------------------------------- in the parent


@dataclass
class Row:
    """A case's outcome: times at n and 8n, or a note saying why one is missing."""

    case: Case
    small: float | None = None
    large: float | None = None
    note: str = ""
    #: A lower bound of the ratio when 8n was given up on.
    at_least: float | None = None

    @property
    def ratio(self) -> float | None:
        if self.small is None or self.large is None or self.small <= 0:
            return None
        return self.large / self.small

    @property
    def verdict(self) -> str:
        ratio = self.ratio if self.at_least is None else self.at_least
        if ratio is None:
            return "?"  # an error, or n alone too slow to tell
        if ratio > FAIL_RATIO:
            return "FAIL"
        return "ok" if self.at_least is None else "?"


class _Lines:
    """The lines of a child's stdout, each awaited with a deadline (unbuffered reads: ``select`` must not
    miss a line already read into a buffer)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        self.fd = proc.stdout.fileno()
        self.pending = b""

    def next(self, timeout: float) -> str | None:
        """The next line, or None when ``timeout`` seconds pass first or the child closes its stdout."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                return None
            data = os.read(self.fd, 65536)
            if not data:
                return None
            self.pending += data
        line, self.pending = self.pending.split(b"\n", 1)
        return line.decode()


def run_case(case: Case, folder: Path, *, first_timeout: float, patience: float) -> Row:
    """Run ``case`` in a child process; give up on 8n when it outlasts ``GIVE_UP_RATIO`` times n (at most
    ``patience`` seconds): the ratio is then at least the time waited over n's. When n alone takes longer
    than ``first_timeout``, the case is run again at n / 8 (it is super-linear at n already)."""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    # glibc raises its mmap threshold after a large block is freed (up to 32 MB): a repeated run at n then
    # reuses memory already faulted in, while every run at 8n (over 32 MB) maps and faults its memory anew,
    # which alone gave ratios of 11-19. A fixed threshold treats both sizes alike.
    env["MALLOC_MMAP_THRESHOLD_"] = str(64 << 10)
    env.pop("BPE_STUDIO_PURE", None)
    if case.backend == "python":
        env["BPE_STUDIO_PURE"] = "1"
    proc = subprocess.Popen(
        [sys.executable, __file__, "--case", json.dumps(asdict(case)), "--folder", str(folder)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    lines = _Lines(proc)
    row = Row(case)
    try:
        lines.next(first_timeout)  # n's input is built
        line = lines.next(first_timeout)
        if line is None and proc.poll() is not None:
            row.note = _failure(proc)
            return row
        measured = json.loads(line) if line is not None else None
        # Too slow at n to tell a FAIL within `patience`: super-linear already; measured again at n / 8.
        if measured is None or measured["wall"] * 2 * FAIL_RATIO > patience:
            why = (
                f"n took over {first_timeout:g} s" if measured is None else f"n took {measured['wall']:.1f} s"
            )
            if case.n // FACTOR < 1024:
                row.note = why
                return row
            proc.kill()
            smaller = replace(case, n=case.n // FACTOR)
            retried = run_case(smaller, folder, first_timeout=first_timeout, patience=patience)
            retried.note = retried.note or f"(at n/8: {why})"
            return retried
        row.small = float(measured["seconds"])
        # Two tries of 8n, waited for until GIVE_UP_RATIO times n (at least 2 s, at most `patience`).
        wait = min(patience, max(2.0, 2 * GIVE_UP_RATIO * measured["wall"]))
        lines.next(first_timeout * FACTOR)  # 8n's input is built: its clock starts now
        line = lines.next(wait)
        if line is None:
            if proc.poll() is None:
                row.at_least = wait / 2 / measured["wall"]  # the first of the two tries took more than this
                row.note = f"> {row.at_least:.0f} (8n unfinished after {wait:.1f} s)"
            else:
                row.note = _failure(proc)
            return row
        row.large = float(json.loads(line)["seconds"])
        return row
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def _failure(proc: subprocess.Popen[bytes]) -> str:
    _, err = proc.communicate()
    last = (err.decode(errors="replace").strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
    return f"error: {last[:120]}"


def cases(only: str, backends: list[str], scale: float, quick: bool) -> list[Case]:
    """Every case of the parts asked for."""
    factor = scale / (4 if quick else 1)
    repeats = 2 if quick else 3
    found: list[Case] = []
    if only in ("all", "scanners"):
        for backend in backends:
            for subject in (*PRESETS, *(("custom",) if backend == "python" else ())):
                for shape in SCANNER_SHAPES:
                    for kind in ("train", "encode"):
                        n = max(1024, int(SCANNER_N[backend, kind] * factor))
                        found.append(Case("scanners", subject, backend, shape, kind, n, repeats))
    if only in ("all", "readers"):
        for kind, compression in READERS:
            reader = f"{kind}.{compression}" if compression else kind
            for shape in READER_SHAPES:
                n = max(1024, int(READER_N[shape] * factor))
                found.append(Case("readers", reader, backends[0], shape, "read", n, repeats))
    return found


def _seconds(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def table(rows: list[Row]) -> str:
    """The Markdown table of ``rows``."""
    lines = [
        "| part | pre-tokenizer / reader | backend | shape | timed | n | t(n) s | t(8n) s | ratio | |",
        "|---|---|---|---|---|---:|---:|---:|---:|---|",
    ]
    for row in rows:
        c = row.case
        ratio = row.ratio
        shown = " ".join(part for part in ("" if ratio is None else f"{ratio:.1f}", row.note) if part) or "–"
        timed = {"train": "counting", "encode": "encode_ordinary", "read": "planning+counting"}[c.kind]
        lines.append(
            f"| {c.part} | {c.subject} | {c.backend} | {c.shape} | {timed} | {c.n:,} | {_seconds(row.small)} "
            f"| {_seconds(row.large)} | {shown} | {row.verdict} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--only", choices=("scanners", "readers", "all"), default="all")
    parser.add_argument(
        "--backend",
        choices=("native", "python", "both"),
        default="both",
        help="scanners: which engine (readers always run on the first)",
    )
    parser.add_argument("--quick", action="store_true", help="sizes / 4 and fewer repeats (noisier)")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every size n by this")
    parser.add_argument(
        "--timeout", type=float, default=5.0, help="seconds size n may take; else n / 8 is tried (default 5)"
    )
    parser.add_argument(
        "--patience", type=float, default=12.0, help="seconds 8n may take at most (default 12)"
    )
    parser.add_argument(
        "--match", default="", help="only cases whose 'subject backend shape kind' holds this"
    )
    parser.add_argument("--out", type=Path, help="also write the table to this file")
    parser.add_argument("--case", help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.case:
        _measure_child(Case(**json.loads(args.case)), args.folder)
        return 0
    backends = ["native", "python"] if args.backend == "both" else [args.backend]
    todo = [
        case
        for case in cases(args.only, backends, args.scale, args.quick)
        if args.match in f"{case.subject} {case.backend} {case.shape} {case.kind}"
    ]
    rows: list[Row] = []
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bpe-scaling-") as tmp:
        for i, case in enumerate(todo, 1):
            folder = Path(tmp) / str(i)
            folder.mkdir()
            row = run_case(case, folder, first_timeout=args.timeout, patience=args.patience)
            rows.append(row)
            ratio = " ".join(
                part for part in ("" if row.ratio is None else f"{row.ratio:.1f}", row.note) if part
            )
            print(
                f"[{i}/{len(todo)}] {case.subject} {case.backend} {case.shape} {case.kind}: {ratio}",
                file=sys.stderr,
                flush=True,
            )
    text = table(rows)
    failed = sum(row.verdict == "FAIL" for row in rows)
    unknown = sum(row.verdict == "?" for row in rows)
    summary = (
        f"{len(rows)} cases: {failed} FAIL (ratio > {FAIL_RATIO:g}), {unknown} not measured (?), "
        f"{time.perf_counter() - start:.0f} s"
    )
    print(text)
    print(f"\n{summary}")
    if args.out is not None:
        args.out.write_text(f"{text}\n\n{summary}\n", encoding="utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
