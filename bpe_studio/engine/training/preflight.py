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
import tempfile
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path

from ..config import TrainConfig, resolve_pattern
from ..corpus.remote import check_url
from ..corpus.sources import check_source, is_plain_text
from .checkpoint import CountsFileError, corpus_identity, mismatch, read_header

PathArg = str | os.PathLike[str]


def preflight(config: TrainConfig, *, outputs: Iterable[tuple[str, PathArg]] = ()) -> None:
    """Check that ``config`` can run here and now; raise ``ValueError`` ("field: problem; fix") if not.

    Args:
        config: The run.
        outputs: ``(name, path)`` of each file the caller will write after the run (e.g. the tokenizer
            files), the name being what the message calls it (``"out"``); their folders may not exist yet
            (the caller creates them). ``config.counts_out`` and ``config.checkpoint`` are always checked,
            and must be in an existing folder.

    Raises:
        ValueError: An input is missing, unreadable or empty; a URL does not answer; a cluster address is
            malformed or Dask is missing; a counts file or checkpoint does not fit the run; an output is
            the same file as an input (or as another output), is a folder, or cannot be written.
    """
    _check_inputs(config)
    _check_cluster(config)
    _check_reuse(config)
    planned = [(name, path) for name in ("counts_out", "checkpoint") if (path := getattr(config, name))]
    planned += [(name, Path(os.fspath(path))) for name, path in outputs]
    read: list[tuple[str, PathArg]] = [("the input corpus", path) for path in config.inputs]
    if config.counts_in is not None:
        read.append(("the counts file (counts_in)", config.counts_in))
    if config.resume is not None:
        read.append(("the checkpoint to resume (resume)", config.resume))
    # A checkpoint may update the checkpoint it resumes: that file is read in full before the first
    # checkpoint is written (atomically), and the new one holds its merges and more.
    updates = [("checkpoint", config.resume)] if config.resume is not None else []
    check_outputs(planned, inputs=read, updates=updates, new_folders=[name for name, _ in outputs])


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


# ---- outputs ----------------------------------------------------------------------------------------


def same_file(a: PathArg, b: PathArg) -> bool:
    """True when ``a`` and ``b`` name one file: through symlinks and hard links when both exist, else
    by their resolved paths (a file to be created is the same as an existing one it would replace).

    Example:
        >>> same_file("a.txt", "./a.txt")
        True
    """
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):  # one of them does not exist (yet)
        return Path(a).resolve() == Path(b).resolve()


def check_outputs(
    outputs: Sequence[tuple[str, PathArg]],
    *,
    inputs: Sequence[tuple[str, PathArg]] = (),
    updates: Sequence[tuple[str, PathArg]] = (),
    new_folders: Collection[str] = (),
) -> None:
    """Refuse outputs that would destroy an input or each other, or that cannot be written.

    Run it before any work starts. An output is refused when it is the same file as an input (also
    through a symlink or a hard link), when two outputs are one file, when a folder stands where it should
    go, and when its folder does not take new files (read-only, a file in the way, missing).

    Args:
        outputs: ``(name, path)`` of each file to write; ``name`` starts the message (``"counts_out"``).
        inputs: ``(what, path)`` of each file read; ``what`` describes it (``"the input corpus"``).
        updates: ``(output name, input path)`` pairs where the output may replace that input (it is read
            in full before it is written).
        new_folders: Names of outputs whose folder may be missing (the caller creates it); the others need
            an existing folder.

    Raises:
        ValueError: ``"name: problem; fix"``, naming both files when one would overwrite the other.

    Example:
        >>> corpus = [("the input corpus", "./c.txt")]
        >>> check_outputs([("out", "c.txt")], inputs=corpus)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ValueError: out: c.txt is the input corpus ./c.txt (the same file); writing it would destroy ...
    """
    for name, target in outputs:
        for what, source in inputs:
            if (name, source) in updates:
                continue
            if same_file(target, source):
                raise ValueError(
                    f"{name}: {target} is {what} {source} (the same file); writing it would destroy the "
                    "input, so choose another output path"
                )
    for i, (name, target) in enumerate(outputs):
        for other_name, other in outputs[:i]:
            if same_file(target, other):
                raise ValueError(
                    f"{name}: {target} is also written as {other_name} ({other}); "
                    "give each output its own file"
                )
    _check_writable([(name, Path(os.fspath(target))) for name, target in outputs], new_folders)


def _nearest_existing(folder: Path) -> Path:
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder


def _check_writable(planned: list[tuple[str, Path]], new_folders: Collection[str]) -> None:
    """Each output must be a file name (not a folder) in a folder that exists (or, for ``new_folders``,
    can be created) and that takes new files."""
    probed: set[Path] = set()
    for name, target in planned:
        if target.is_dir():
            raise ValueError(
                f"{name}: {target} is a folder, in the way of the file to write; remove it or choose "
                "another path"
            )
        parent = target.parent
        folder = _nearest_existing(parent)
        if name not in new_folders and folder != parent and folder.is_dir():
            raise ValueError(f"{name}: the folder {parent} does not exist; create it first")
        if not folder.is_dir():
            raise ValueError(
                f"{name}: {folder} is a file, so {target} cannot be written; choose another path"
            )
        if folder in probed:
            continue
        probed.add(folder)
        # os.access is not enough: it ignores read-only mounts for root and says nothing of ACLs. Creating
        # (and removing) an empty file is the question the save will ask.
        try:
            fd, probe = tempfile.mkstemp(dir=folder, prefix=".bpe-studio-probe-", suffix=".tmp")
        except OSError as exc:
            raise ValueError(
                f"{name}: cannot write into {folder} ({exc.strerror or exc}); choose a writable folder"
            ) from None
        os.close(fd)
        os.unlink(probe)


__all__ = ["check_outputs", "preflight", "same_file"]
