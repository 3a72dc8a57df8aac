"""Checks that need the file system, the network or optional packages, made once before a run starts.

:class:`~bpe_studio.engine.config.TrainConfig` checks types and ranges only (it is a pure value);
:func:`preflight` checks everything else a run depends on, so that a mistake is reported before any work
and never after an hour of counting: the corpus files exist and are readable, URLs answer, Dask is there
for a cluster, counts files and checkpoints fit the run, and every output may be written without touching
an input. :func:`~bpe_studio.engine.iter_train` calls it first; front ends call it before starting a run,
with the files they will write afterwards (``outputs``).

Example:
    >>> config = TrainConfig(inputs=["corpus.txt"], vocab_size=500)
    >>> preflight(config, outputs=[("out", "out/tokenizer.json")])
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from ..config import InvalidUtf8Policy, TrainConfig
from ..corpus.remote import check_url
from ..corpus.sources import check_source, is_plain_text
from ..pretokenize.patterns import resolve_pattern
from ..write_plan import WritePlan, check_outputs, same_file
from .checkpoint import CountsFileError, corpus_identity, mismatch, read_header

PathArg = str | os.PathLike[str]


def preflight(config: TrainConfig, *, outputs: Iterable[tuple[str, PathArg]] | WritePlan = ()) -> None:
    """Check that ``config`` can run here and now; raise ``ValueError`` ("field: problem; fix") if not.

    Args:
        config: The run.
        outputs: ``(name, path)`` of each file the caller will write after the run (e.g. the tokenizer
            files), the name being what the message calls it (``"out"``); their folders may not exist yet
            (the caller creates them), or a :class:`~bpe_studio.engine.write_plan.WritePlan` of them.
            ``config.counts_out`` and ``config.checkpoint`` are always checked, and must be in an existing
            folder (see :func:`train_plan`).

    Raises:
        ValueError: An input is missing, unreadable or empty; a URL does not answer; a cluster address is
            malformed or Dask is missing; a counts file or checkpoint does not fit the run; an output is
            the same file as an input (or as another output), is a folder, or cannot be written.
    """
    _check_inputs(config)
    _check_cluster(config)
    _check_reuse(config)
    train_plan(config, outputs=outputs).check()


def train_plan(config: TrainConfig, *, outputs: Iterable[tuple[str, PathArg]] | WritePlan = ()) -> WritePlan:
    """What a run writes (``counts_out``, ``checkpoint`` and ``outputs``) and reads (the corpus,
    ``counts_in``, ``resume``), for :meth:`WritePlan.check`.

    Args:
        config: The run.
        outputs: The files the caller writes after the run, as ``(name, path)`` (their folders may be
            missing: the caller creates them) or as a plan of its own (e.g. from
            :func:`~bpe_studio.engine.formats.save_plan`).

    Example:
        >>> train_plan(TrainConfig(inputs=["c.txt"], vocab_size=300), outputs=[("out", "o/t.json")]).reads
        [('the input corpus', PosixPath('c.txt'))]
    """
    plan = WritePlan()
    for name in ("counts_out", "checkpoint"):
        path = getattr(config, name)
        if path is not None:
            # Imported only here: the formats package (its __init__ loads every format) is not needed to
            # check a run that writes no counts, and importing it was a quarter of a plain train()'s import
            # time (issue 22).
            from ..formats.atomic import atomic_plan

            atomic_plan(plan, name, path)
    if isinstance(outputs, WritePlan):
        plan.extend(outputs)
    else:
        for name, path in outputs:
            plan.write(name, path)
            plan.allow_new_folder(name)
    for path in config.inputs:
        plan.read("the input corpus", path)
    if config.counts_in is not None:
        plan.read("the counts file (counts_in)", config.counts_in)
    if config.resume is not None:
        plan.read("the checkpoint to resume (resume)", config.resume)
        # A checkpoint may update the checkpoint it resumes: that file is read in full before the first
        # checkpoint is written (atomically), and the new one holds its merges and more.
        plan.allow_update("checkpoint", config.resume)
    return plan


# ---- inputs -----------------------------------------------------------------------------------------


def _check_inputs(config: TrainConfig) -> None:
    local_bytes = 0
    for path in config.inputs:
        try:
            info = path.stat()
        except FileNotFoundError:
            raise ValueError(f"inputs: {path} does not exist; check the path") from None
        except OSError as exc:
            raise ValueError(f"inputs: {path} cannot be read ({exc.strerror}); check the path") from None
        if not path.is_file():
            raise ValueError(f"inputs: {path} is not a regular file; pass text files, not folders")
        if not os.access(path, os.R_OK):
            raise ValueError(f"inputs: {path} is not readable; check its permissions")
        check_source(path)  # a format this machine cannot read (pyarrow, zstandard missing)
        if (config.cluster is not None) and not is_plain_text(path):
            raise ValueError(
                f"inputs: {path}: a cluster counts plain text files only; train on this machine, or give "
                "the documents as a text file joined by a special token"
            )
        local_bytes += info.st_size
    remote_bytes = 0
    for url in config.urls:
        if not is_plain_text(url):
            raise ValueError(
                f"inputs: {url}: JSON Lines, Parquet and compressed files are read from local disk only; "
                "download the file first"
            )
        try:
            remote_bytes += check_url(url)
        except ValueError as exc:
            raise ValueError(f"inputs: {exc}") from None
    if (config.inputs or config.urls) and local_bytes + remote_bytes == 0:
        raise ValueError("inputs: the corpus is empty; give at least one non-empty file")


#: How much of each plain-text input :func:`check_text_starts` decodes.
TEXT_START_BYTES = 16 * 1024


def check_text_starts(config: TrainConfig, *, limit: int = TEXT_START_BYTES) -> None:
    """Check that the start of every plain-text input is UTF-8 when ``config.invalid_utf8`` is ``error``.

    Not part of :func:`preflight`: a run reports an invalid byte anywhere, with its offset, when it gets
    there; a front end that checks its form as it is edited calls this too, so that a binary file is
    refused when it is added rather than after Start. Raises ``ValueError`` ("inputs: ...; fix").

    Example:
        >>> _ = Path("picture.png").write_bytes(b"\\x89PNG")
        >>> check_text_starts(TrainConfig(inputs=["picture.png"], vocab_size=300))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ValueError: inputs: picture.png is not UTF-8 text (an invalid byte at offset 0); remove it, or ...
    """
    if config.invalid_utf8 is InvalidUtf8Policy.REPLACE:
        return
    for path in config.inputs:
        if not is_plain_text(path):
            continue
        try:
            with open(path, "rb") as handle:
                data = handle.read(limit)
        except OSError:
            continue  # _check_inputs names the problem
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            if exc.start >= len(data) - 3 and len(data) == limit:
                continue  # a character cut by the end of the read
            raise ValueError(
                f"inputs: {path} is not UTF-8 text (an invalid byte at offset {exc.start:,}); remove it, or "
                "read invalid bytes as U+FFFD (invalid_utf8='replace', CLI: --invalid-utf8 replace)"
            ) from None


def _check_cluster(config: TrainConfig) -> None:
    if config.cluster is None:
        return
    from ..corpus.distributed import dask_missing, parse_cluster  # imported only when a cluster is asked for

    try:
        parse_cluster(config.cluster)
    except ValueError as exc:
        raise ValueError(f"cluster: {exc}") from None
    missing = dask_missing()
    if missing is not None:
        raise ValueError(f"cluster: {missing}")


def _check_reuse(config: TrainConfig) -> None:
    """Check a counts file or checkpoint to train from against the run (its header; the rest when used)."""
    source = config.resume if config.resume is not None else config.counts_in
    if source is None:
        return
    field_name = "resume" if config.resume is not None else "counts_in"
    try:
        header = read_header(source)
    except CountsFileError as exc:
        raise ValueError(f"{field_name}: {exc}") from None
    if config.resume is not None:
        if header.kind != "checkpoint":
            raise ValueError(
                f"resume: {source} is a counts file, not a checkpoint; train from it with counts_in "
                "(CLI: --counts-in)"
            )
        then = header.training.get("max_token_length")
        if then != config.max_token_length:
            raise ValueError(
                f"resume: {source} was trained with max_token_length={then} and this run asks for "
                f"{config.max_token_length}; the merges already made depend on it, so give the same value"
            )
    try:
        corpus = corpus_identity(config.sources) if config.sources else None
    except OSError as exc:
        raise ValueError(f"inputs: cannot read a corpus file's details ({exc})") from None
    problem = mismatch(
        header,
        pattern=resolve_pattern(config.pattern),
        special_tokens=config.special_tokens,
        invalid_utf8=config.invalid_utf8.value,
        corpus=corpus,
        text_field=config.text_field,
        skip_bad_records=config.skip_bad_records,
    )
    if problem is not None:
        raise ValueError(
            f"{field_name}: {source} cannot be used for this run: {problem}. Train with the settings it "
            "was made with, or count the corpus again"
        )


__all__ = ["check_outputs", "check_text_starts", "preflight", "same_file", "train_plan"]
