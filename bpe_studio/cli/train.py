"""``bpe-studio train``: train a tokenizer from text files, with a live progress display."""

from __future__ import annotations

import argparse
import errno
import json
import os
import sys
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any, TextIO

from ..engine import (
    FORMATS,
    PATTERNS,
    CorpusDecodeError,
    CountProgress,
    Finished,
    FormatError,
    MergeMade,
    PhaseStarted,
    TrainConfig,
    TrainEvent,
    TrainResult,
    WorkerCrashedError,
    iter_train,
    preflight,
)
from ..engine.corpus.plan import CorpusChangedError, NotRegularFileError, UncuttableTextError
from ..engine.corpus.remote import is_url
from ..engine.corpus.sources import BadRecordError, CorruptStreamError, expand_inputs
from ..engine.formats import save_plan, save_result
from ..engine.formats.fallback import fallback_plan, save_fallback
from ..engine.humanize import (
    RunMeter,
    bytes_rate,
    clock,
    error_message,
    human_bytes,
    human_seconds,
    merge_rate,
    stop_reason_text,
)
from ..engine.training.checkpoint import CountsFileError
from ..engine.training.extend import ExtendBase, with_base
from ..engine.training.preflight import train_plan
from ..engine.write_plan import WritePlan
from .common import EXIT_FAILURE, EXIT_USAGE, CliError, cluster_arg, text_arg
from .signals import stoppable


def _cluster_error() -> type[Exception]:
    """``ClusterError``, imported only when an exception is matched against it: its module (Dask support,
    ``socket``) costs 3 ms of every run, and a run without ``--cluster`` never raises it (issue 22)."""
    from ..engine.corpus.distributed import ClusterError

    return ClusterError


def register(subparsers: Any) -> None:
    """Add the ``train`` subcommand."""
    p = subparsers.add_parser(
        "train",
        help="train a tokenizer from text files",
        description="Train a byte-level BPE tokenizer. Documents split at special tokens and file ends.",
    )
    p.add_argument(
        "inputs",
        nargs="*",
        metavar="INPUT",
        help="corpus files: UTF-8 text, JSON Lines (.jsonl/.ndjson), Parquet (.parquet), any of these but "
        "Parquet compressed (.gz/.bz2/.xz/.zst); folders (searched for those suffixes) and globs; or "
        "fsspec URLs of text files such as s3://bucket/corpus.txt; may be left out with --counts-in or "
        "--resume",
    )
    p.add_argument(
        "--vocab-size", type=int, required=True, help="final vocab size, counting 256 bytes and specials"
    )
    p.add_argument(
        "--special-token",
        action="append",
        default=None,
        dest="special_tokens",
        metavar="T",
        type=text_arg,
        help="a special token (repeatable); none by default",
    )
    p.add_argument(
        "--pattern",
        type=text_arg,
        default="gpt2",
        help=f"pre-tokenization preset ({', '.join(PATTERNS)}) or a regex (default: gpt2); the presets and "
        "the models' own regexes (Llama 3, Qwen 2, Qwen 3.5, Mistral Nemo) are split natively",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        help="counting threads with the native kernel and a pattern it splits, else worker processes "
        "(default: all cores for big corpora)",
    )
    p.add_argument("--min-frequency", type=int, default=1, help="stop when the best pair occurs fewer times")
    p.add_argument("--max-token-length", type=int, default=None, help="never make tokens longer (bytes)")
    p.add_argument(
        "--chunk-size", type=int, default=4 << 20, help="bytes per counting chunk (default: 4 MiB)"
    )
    p.add_argument(
        "--invalid-utf8",
        choices=["error", "replace"],
        default="error",
        help="invalid UTF-8: stop with an error (default) or read it as U+FFFD",
    )
    p.add_argument(
        "--text-field",
        default="text",
        metavar="FIELD",
        type=text_arg,
        help="JSON Lines / Parquet: the field (column) holding the text; a dotted path such as meta.body "
        "enters nested objects (default: text)",
    )
    p.add_argument(
        "--skip-bad-records",
        action="store_true",
        help="skip (and count) JSON lines and Parquet rows without a text, instead of stopping",
    )
    p.add_argument(
        "--out", required=True, type=Path, metavar="DIR", help="folder to write the tokenizer into"
    )
    start = p.add_argument_group("starting from a tokenizer, superwords")
    start.add_argument(
        "--extend",
        metavar="TOKENIZER",
        type=text_arg,
        default=None,
        help="keep every id, merge and special token of this tokenizer (a GPT-2 folder, .tiktoken, "
        "tokenizer.json, or a name such as gpt2) and learn more merges; its pattern and special tokens are "
        "the run's, and --vocab-size counts the whole vocabulary",
    )
    start.add_argument(
        "--superword-transition",
        type=int,
        default=None,
        metavar="T",
        help="SuperBPE: ordinary BPE up to vocab size T, then merges across the spaces between words up "
        "to --vocab-size",
    )
    big = p.add_argument_group("large corpora: clusters, reusable counts, checkpoints")
    big.add_argument(
        "--cluster",
        metavar="ADDRESS",
        type=cluster_arg,
        default=None,
        help="count on a Dask cluster: tcp://HOST:8786 for a running scheduler, or local:N for a "
        'LocalCluster of N worker processes (needs pip install "bpe-studio[distributed]"); a scheduler '
        "must answer within $BPE_STUDIO_CLUSTER_TIMEOUT seconds (default 10)",
    )
    big.add_argument(
        "--counts-out",
        type=Path,
        metavar="FILE",
        default=None,
        help="also save the counted pre-token table, to train again without reading the corpus",
    )
    big.add_argument(
        "--counts-in",
        type=Path,
        metavar="FILE",
        default=None,
        help="train from a table saved with --counts-out (same pattern, special tokens and corpus)",
    )
    big.add_argument(
        "--checkpoint",
        type=Path,
        metavar="FILE",
        default=None,
        help="save a checkpoint (counts and merges so far) every --checkpoint-every merges and at the end",
    )
    big.add_argument(
        "--checkpoint-every",
        type=int,
        default=1000,
        metavar="N",
        help="merges between checkpoints (default: 1000)",
    )
    big.add_argument(
        "--resume",
        type=Path,
        metavar="CHECKPOINT",
        default=None,
        help="continue from a checkpoint (after a crash, or to a larger --vocab-size); the result equals "
        "an uninterrupted run. Add --checkpoint to keep saving checkpoints (it may name the same file)",
    )
    p.add_argument(
        "--format",
        choices=FORMATS,
        default="studio",
        help="file format: studio (tokenizer.json, the default), gpt2 (vocab.json + merges.txt), "
        "tiktoken (tokenizer.tiktoken + sidecar) or hf (Hugging Face tokenizer.json)",
    )
    p.add_argument(
        "--progress",
        choices=["auto", "bar", "json", "none"],
        default="auto",
        help="progress display: auto (a live line on a terminal), bar, json (JSON lines on stdout), none",
    )
    p.add_argument(
        "-q", "--quiet", action="store_true", help="print nothing (same as --progress none, no summary)"
    )
    p.set_defaults(handler=stoppable(run), plan=plan)


def plan(args: argparse.Namespace) -> WritePlan:
    """What ``train`` writes (the format's files in ``--out`` and their temporary files, ``--counts-out``,
    ``--checkpoint``, the fallback copy of a result whose save fails) and reads (the corpus,
    ``--counts-in``, ``--resume``)."""
    plan = train_plan(_config(args), outputs=_outputs(args))
    if args.extend is not None:
        # The tokenizer to extend is an input: no output may be written over it.
        path = Path(args.extend)
        if path.is_file():
            plan.read("the tokenizer to extend (--extend)", path)
        elif path.is_dir():
            for item in sorted(path.iterdir()):
                if item.is_file():
                    plan.read("the tokenizer to extend (--extend)", item)
    return plan


def _outputs(args: argparse.Namespace) -> WritePlan:
    """The files written after training: the tokenizer in ``--out``, or its fallback copy."""
    outputs = WritePlan()
    save_plan(outputs, "--out", args.out, format=args.format, folder=True, verify=False)
    outputs.allow_new_folder("--out")
    fallback_plan(outputs, "--out")
    return outputs


def _config(args: argparse.Namespace) -> TrainConfig:
    if not args.inputs and args.counts_in is None and args.resume is None:
        raise CliError("give at least one INPUT corpus file, or --counts-in FILE, or --resume CHECKPOINT")
    try:
        # Folders and globs become the corpus files they hold; URLs pass through.
        local = [name for name in args.inputs if not is_url(name)]
        inputs = [*expand_inputs(local), *(name for name in args.inputs if is_url(name))]
        base = None
        if args.extend is not None:
            if args.pattern != "gpt2":
                raise CliError(
                    "--pattern: an --extend run pre-tokenizes with the tokenizer's own pattern; "
                    "drop --pattern"
                )
            base = _extend_base(args.extend)  # first: the vocab size is checked against its size
        config = TrainConfig(
            inputs=tuple(inputs),
            vocab_size=args.vocab_size,
            special_tokens=tuple(args.special_tokens or ()),
            pattern=args.pattern,
            workers=args.workers,
            min_frequency=args.min_frequency,
            max_token_length=args.max_token_length,
            chunk_size=args.chunk_size,
            invalid_utf8=args.invalid_utf8,
            cluster=args.cluster,
            counts_in=args.counts_in,
            counts_out=args.counts_out,
            checkpoint=args.checkpoint,
            checkpoint_every=args.checkpoint_every,
            resume=args.resume,
            text_field=args.text_field,
            skip_bad_records=args.skip_bad_records,
            superword_transition=args.superword_transition,
            extend=base,
        )
        return config if base is None else with_base(config, base)
    except ValueError as exc:
        raise CliError(str(exc)) from None


#: The tokenizer opened for ``--extend``, by argument: plan() and run() both need it, and a rank file of
#: 200k tokens takes a moment to open.
_BASES: dict[str, ExtendBase] = {}


def _extend_base(source: str) -> ExtendBase:
    base = _BASES.get(source)
    if base is None:
        # Imported here: it loads the encoder (encoding/tokenizer.py and its modules), which a run from
        # scratch never uses (2-4 ms of every CLI run's start-up, issue 22).
        from ..engine.extending import extend_base

        try:
            base = _BASES[source] = extend_base(source)
        except ValueError as exc:  # ExtendError
            message = str(exc)
            raise CliError("--" + message if message.startswith("extend:") else message) from None
    return base


def _token_repr(token: bytes) -> str:
    return repr(token.decode("utf-8", errors="backslashreplace"))


class LiveLine:
    """A single status line redrawn in place on a terminal, at most ~10 times a second."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._last_draw = 0.0
        self._meter = RunMeter()

    def update(self, event: TrainEvent, *, force: bool = False) -> None:
        """Show an event (throttled unless ``force``)."""
        self._meter.update(event)
        if isinstance(event, PhaseStarted):
            force = True
        now = time.monotonic()
        if not force and now - self._last_draw < 0.1:
            return
        self._last_draw = now
        text = self._describe(event)
        if text:
            self._stream.write("\r\x1b[K" + text)
            self._stream.flush()

    def _describe(self, event: TrainEvent) -> str:
        meter = self._meter
        left = meter.time_left()
        eta = f"ETA {clock(left)}" if left is not None else "ETA …"
        if isinstance(event, CountProgress):
            share = event.bytes_done / max(event.bytes_total, 1)
            return (
                f"counting  {_bar(share)} {human_bytes(event.bytes_done)}/{human_bytes(event.bytes_total)}  "
                f"{bytes_rate(meter.bytes_rate)}  at least {event.unique_pretokens:,} unique  {eta}"
            )
        if isinstance(event, MergeMade):
            done = event.index + 1
            speed = f"{merge_rate(meter.merge_rate)}  {eta}" if meter.merge_rate > 0 else "…"
            return (
                f"merging   {_bar(done / max(event.total, 1))} {done:,}/{event.total:,} merges  {speed}  "
                f"last {_token_repr(event.token)} ×{event.count:,}"
            )
        if isinstance(event, PhaseStarted):
            return f"{event.phase.value} …"
        return ""

    def close(self) -> None:
        """End the status line."""
        self._stream.write("\r\x1b[K")
        self._stream.flush()


def _bar(share: float, width: int = 20) -> str:
    filled = round(max(0.0, min(1.0, share)) * width)
    return "[" + "#" * filled + "." * (width - filled) + "]"


def event_to_json(event: TrainEvent) -> dict[str, Any]:
    """A JSON-ready form of a progress event (``type`` plus its fields; bytes as lists of ints).

    Example:
        >>> from bpe_studio.engine import Phase
        >>> event_to_json(PhaseStarted(Phase.COUNTING, 0.5))
        {'type': 'phase', 'phase': 'counting', 'elapsed': 0.5}
    """
    if isinstance(event, PhaseStarted):
        return {"type": "phase", "phase": event.phase.value, "elapsed": round(event.elapsed, 6)}
    if isinstance(event, CountProgress):
        return {
            "type": "count",
            "bytes_done": event.bytes_done,
            "bytes_total": event.bytes_total,
            "unique_pretokens": event.unique_pretokens,
            "elapsed": round(event.elapsed, 6),
        }
    if isinstance(event, MergeMade):
        return {
            "type": "merge",
            "index": event.index,
            "pair": [list(event.pair[0]), list(event.pair[1])],
            "count": event.count,
            "token_id": event.token_id,
            "token": list(event.token),
            "elapsed": round(event.elapsed, 6),
        }
    return {"type": "finished", "elapsed": round(event.elapsed, 6), **event.result.summary()}


#: errno values of an OSError that is the machine's trouble, not the command's: the run failed (exit 1).
_RUN_FAILURES = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS})


def write_result(result: TrainResult, config: TrainConfig, out: Path, fmt: str = "studio") -> Path:
    """Write the trained tokenizer into folder ``out`` (created if needed) and return the file's path.

    ``fmt`` is one of the engine's ``FORMATS``; only ``studio`` keeps the training details.
    """
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CliError(
            f"--out: cannot create folder {out} ({exc.strerror}); choose a writable folder"
        ) from None
    try:
        return save_result(result, out, format=fmt, config=config)
    except FormatError as exc:
        raise CliError(f"--format {fmt}: {exc}", EXIT_FAILURE) from None
    except OSError as exc:  # --out was checked writable before training: e.g. the disk is full
        raise CliError(f"--out: cannot write into {out} ({exc.strerror or exc})", EXIT_FAILURE) from None


def _keep_result(
    result: TrainResult, config: TrainConfig, failure: CliError, args: argparse.Namespace
) -> CliError:
    """A failed save must not lose the training: keep the result elsewhere and say where (exit 1)."""
    try:
        kept = save_fallback(result, config)
    except OSError as exc:
        return CliError(f"{failure}; the trained tokenizer could not be kept either: {exc}", EXIT_FAILURE)
    return CliError(
        f"{failure}; the trained tokenizer was kept in {kept} (studio format: "
        f"'bpe-studio convert {kept} --to {args.format} {args.out}{os.sep}' writes it where asked)",
        EXIT_FAILURE,
    )


def run(args: argparse.Namespace) -> int:
    """Run ``bpe-studio train``."""
    config = _config(args)
    try:
        # Files, URLs, Dask, counts/checkpoint headers, and every output (no input overwritten, folders
        # writable): refused before any work, not after training.
        preflight(config, outputs=_outputs(args))
    except ValueError as exc:
        raise CliError(str(exc)) from None
    mode = "none" if args.quiet else args.progress
    if mode == "auto":
        mode = "bar" if sys.stderr.isatty() else "none"
    live = LiveLine(sys.stderr) if mode == "bar" else None
    result: TrainResult | None = None
    # Without a bar or JSON lines no merge is shown: the run makes no MergeMade (1-2 µs a merge).
    events = iter_train(config, merge_events=mode != "none")
    try:
        for event in events:
            if live is not None:
                live.update(event)
            elif mode == "json":
                print(json.dumps(event_to_json(event)), flush=True)
            if isinstance(event, Finished):
                result = event.result
    except (CorpusDecodeError, CountsFileError, NotRegularFileError, UncuttableTextError) as exc:
        raise CliError(str(exc)) from None
    except (BadRecordError, CorruptStreamError) as exc:
        raise CliError(str(exc)) from None
    # A corpus that changed while read: the command was right, the run failed (exit 1); run it again.
    except (WorkerCrashedError, _cluster_error(), CorpusChangedError) as exc:
        raise CliError(str(exc), EXIT_FAILURE) from None
    except OSError as exc:
        # A full disk or a failing device while writing --counts-out or a checkpoint is not a mistake in
        # the command (exit 1); checkpoints are written atomically, so the last complete one is intact.
        code = EXIT_FAILURE if exc.errno in _RUN_FAILURES else EXIT_USAGE
        raise CliError(error_message(exc), code) from None
    finally:
        # A signal can stop this loop between two events: stop the worker processes now, not whenever
        # the garbage collector gets to the generator.
        if isinstance(events, Generator):
            events.close()
        if live is not None:
            live.close()
    assert result is not None
    try:
        path = write_result(result, config, args.out, args.format)
    except CliError as failure:
        raise _keep_result(result, config, failure, args) from None
    if not args.quiet and mode != "json":
        print(_summary(result, path))
    return 0


def _summary(result: TrainResult, path: Path) -> str:
    s = result.stats
    phases = ", ".join(  # in words: "superword counting", not the timings' key "superword_counting"
        f"{name.replace('_', ' ')} {human_seconds(sec)}"
        for name, sec in result.timings.items()
        if name != "total"
    )
    start = ""
    if result.base_merges:
        start = f"extended a tokenizer of {result.base_merges:,} merges: "
    elif result.superword_transition is not None:
        start = f"superwords after merge {result.superword_transition:,}: "
    return (
        start + f"trained {len(result.vocab):,} tokens ({len(result.merges):,} merges; stopped: "
        f"{stop_reason_text(result.stop_reason)}) in {human_seconds(result.timings.get('total', 0.0))} "
        f"({phases})\n"
        f"corpus: {human_bytes(s.bytes)} in {s.files} file(s), {s.documents:,} documents, "
        f"{s.pretokens:,} pre-tokens ({s.unique_pretokens:,} unique)"
        + (f", {s.bad_records:,} bad records skipped" if s.bad_records else "")
        + f"\nwrote {path}"
    )
