"""Write plans: every path a command will write, checked against every path it reads, before any work.

A command (a CLI subcommand, a save in the engine, the app's Save and Export) first builds a
:class:`WritePlan`: the files it will write under their final names, the files those names imply (a
``.bin``'s ``.json`` sidecar, a ``.tiktoken``'s sidecar, the files in an output folder), the scratch
files and staging folders it creates beside them, and the files it reads. :meth:`WritePlan.check` then
refuses, in one line, any write that would land on a read file (the same path, a symlink or a hard link),
any read file that lies where scratch files go (they are removed afterwards), two writes to one file, and
outputs that cannot be written; only then does the work start. Each writer of the engine declares its
part with a function next to it (``save_plan``, ``encode_corpus_plan``, ``atomic_plan``, ...), so that
the plan cannot drift from what is written; ``tests/faults/test_write_plans.py`` walks every writer and
every subcommand and fails when one writes outside its plan or has none.

Example:
    >>> plan = WritePlan()
    >>> plan.read("the input corpus", "notes.bin.json")
    >>> plan.write("--out", "notes.bin.json", implied_by="notes.bin")
    >>> plan.check()  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: --out: notes.bin implies notes.bin.json, which is the input corpus; choose another --out
"""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

PathArg = str | os.PathLike[str]


@dataclass(frozen=True)
class PlannedWrite:
    """One file a command writes.

    Attributes:
        option: What the user named it with (``"--out"``, ``"OUTPUT"``, ``"counts_out"``): starts messages.
        path: The file written.
        implied_by: The path the user gave when ``path`` follows from it (a sidecar); ``None`` when ``path``
            is what the user gave, or a file in a folder the user gave.
    """

    option: str
    path: Path
    implied_by: Path | None = None


@dataclass(frozen=True)
class PlannedScratch:
    """Scratch files or staging folders created in ``folder`` and removed again: names that start with
    ``prefix`` and end with one of ``suffixes`` (``""``: any end)."""

    option: str
    folder: Path
    prefix: str
    suffixes: tuple[str, ...]
    what: str
    implied_by: Path

    def holds(self, path: PathArg) -> bool:
        """Whether ``path`` (resolved) is such a scratch file, or lies inside such a folder."""
        resolved, folder = Path(path).resolve(), self.folder.resolve()
        if folder not in resolved.parents:
            return False
        name = resolved.relative_to(folder).parts[0]
        return name.startswith(self.prefix) and any(name.endswith(s) for s in self.suffixes)

    def pattern(self) -> Path:
        """The scratch names as a glob, for messages."""
        return self.folder / f"{self.prefix}*{self.suffixes[0] if len(self.suffixes) == 1 else ''}"


class WritePlan:
    """What a command will write and read; :meth:`check` it before any work (see the module's docstring)."""

    def __init__(self) -> None:
        self.writes: list[PlannedWrite] = []
        self.scratch: list[PlannedScratch] = []
        self.reads: list[tuple[str, Path]] = []
        self.updates: list[tuple[str, Path]] = []
        self.new_folders: set[str] = set()

    def write(self, option: str, path: PathArg, *, implied_by: PathArg | None = None) -> None:
        """Plan a file, named by ``option`` (or implied by the path ``implied_by`` the user gave)."""
        self.writes.append(PlannedWrite(option, Path(path), None if implied_by is None else Path(implied_by)))

    def scratch_files(
        self,
        option: str,
        folder: PathArg,
        prefix: str,
        suffixes: Sequence[str] = ("",),
        *,
        implied_by: PathArg,
        what: str = "temporary files",
    ) -> None:
        """Plan scratch files (or staging folders) made in ``folder`` while writing ``implied_by``."""
        self.scratch.append(
            PlannedScratch(option, Path(folder), prefix, tuple(suffixes), what, Path(implied_by))
        )

    def read(self, what: str, path: PathArg) -> None:
        """Plan a file read; ``what`` describes it in messages (``"the input corpus"``)."""
        self.reads.append((what, Path(path)))

    def allow_update(self, option: str, path: PathArg) -> None:
        """Let the output ``option`` replace the read file ``path`` (read in full before it is written)."""
        self.updates.append((option, Path(path)))

    def allow_new_folder(self, option: str) -> None:
        """The folder of ``option``'s files may be missing: the command creates it."""
        self.new_folders.add(option)

    def extend(self, other: WritePlan) -> None:
        """Add everything ``other`` plans."""
        self.writes += other.writes
        self.scratch += other.scratch
        self.reads += other.reads
        self.updates += other.updates
        self.new_folders |= other.new_folders

    def covers(self, path: PathArg) -> bool:
        """Whether writing ``path`` is part of the plan (a planned file, or a scratch file)."""
        return any(same_file(w.path, path) for w in self.writes) or any(s.holds(path) for s in self.scratch)

    def check(self) -> None:
        """Refuse the plan unless every write leaves every read file as it is and can be made.

        Raises:
            ValueError: One line, ``"option: problem; fix"``, naming the files.
        """
        for write in self.writes:
            if write.implied_by is None:
                continue
            for what, source in self.reads:
                if (write.option, source) not in self.updates and same_file(write.path, source):
                    same = "" if os.fspath(source) == os.fspath(write.path) else f" {source}"
                    raise ValueError(
                        f"{write.option}: {write.implied_by} implies {write.path}, which is {what}{same}; "
                        f"choose another {write.option}"
                    )
        for scratch in self.scratch:
            for what, source in self.reads:
                if scratch.holds(source):
                    raise ValueError(
                        f"{scratch.option}: writing {scratch.implied_by} makes {scratch.what} "
                        f"{scratch.pattern()}, and {what} {source} is one of them (they are removed); "
                        "move the input elsewhere"
                    )
        check_outputs(
            [(w.option, w.path) for w in self.writes],
            inputs=[(what, path) for what, path in self.reads],
            updates=self.updates,
            new_folders=self.new_folders,
        )


#: Every function of BPE Studio that creates, replaces or renames a file, and where its writes are planned:
#: ``"module:function"`` of the plan function that declares them, or ``"none: why"`` for a writer that writes
#: only BPE Studio's own files under names of its own. ``tests/faults/test_write_plans.py`` finds every
#: writer in the source and fails for one missing here, so a new writer cannot skip its plan.
_ENGINE = "bpe_studio.engine"
WRITERS: dict[str, str] = {
    "bpe_studio.engine.formats.atomic:_write_temporary": "bpe_studio.engine.formats.atomic:atomic_plan",
    "bpe_studio.engine.formats.atomic:atomic_write": "bpe_studio.engine.formats.atomic:atomic_plan",
    "bpe_studio.engine.formats.atomic:atomic_write_set": "bpe_studio.engine.formats.atomic:atomic_plan",
    "bpe_studio.engine.formats.atomic:replace_set": "bpe_studio.engine.formats.atomic:atomic_plan",
    "bpe_studio.engine.training.checkpoint:_write": "bpe_studio.engine.training.preflight:train_plan",
    f"{_ENGINE}.encoding.corpus_encoding:iter_encode_corpus": (
        f"{_ENGINE}.encoding.corpus_encoding:encode_corpus_plan"
    ),
    "bpe_studio.engine.formats.saving:save_tokenizer": "bpe_studio.engine.formats.saving:save_plan",
    "bpe_studio.engine.formats.studio:save_studio": "bpe_studio.engine.formats.saving:save_plan",
    "bpe_studio.engine.formats.gpt2:save_gpt2": "bpe_studio.engine.formats.saving:save_plan",
    "bpe_studio.engine.formats.hf:save_hf": "bpe_studio.engine.formats.saving:save_plan",
    f"{_ENGINE}.formats.tiktoken_format:save_tiktoken": f"{_ENGINE}.formats.saving:save_plan",
    "bpe_studio.ui.export.job:_write": "bpe_studio.ui.export.job:export_plan",
    f"{_ENGINE}.write_plan:_check_writable": "none: its own probe file (mkstemp: a new name), removed",
    f"{_ENGINE}.formats.named:download_encoding": "none: an encoding downloaded into tiktoken's cache, "
    "under the name tiktoken gives it",
    f"{_ENGINE}.formats.hub:download_model": "none: a model's tokenizer files, in a new snapshot folder of "
    "the Hugging Face cache's own layout (then refs/main); nothing a command reads is written",
    f"{_ENGINE}.formats.tekken:write_tekken": "none: writes the one path it is given; an example and test "
    "helper (tekken files are read, not written, by every command)",
    "bpe_studio.demo:demo_corpus": "none: the demo corpus, in BPE Studio's own cache folder",
    "bpe_studio.ui.app.settings:save_settings": "none: the app's settings file, in its own config folder",
    "bpe_studio.ui.app.workspace:save_workspace": "bpe_studio.ui.app.workspace:workspace_plan",
    "bpe_studio.ui.compare.corpus:CorpusCompareView.export_chart": "bpe_studio.ui.compare.corpus:chart_plan",
    "bpe_studio.ui.app.app:Screenshotter.take": "bpe_studio.ui.app.app:screenshot_plan",
}


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

    Run it before any work starts (:meth:`WritePlan.check` calls it with every planned file). An output is
    refused when it is the same file as an input (also through a symlink or a hard link), when two
    outputs are one file, when a folder stands where it should go, and when its folder does not take new
    files (read-only, a file in the way, missing).

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
    allowed = {(name, Path(os.fspath(path))) for name, path in updates}
    for name, target in outputs:
        for what, source in inputs:
            if (name, Path(os.fspath(source))) in allowed:
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
        import tempfile  # (here: opening a file, which imports this module, writes nothing; 1-2 ms)

        try:
            fd, probe = tempfile.mkstemp(dir=folder, prefix=".bpe-studio-probe-", suffix=".tmp")
        except OSError as exc:
            raise ValueError(
                f"{name}: cannot write into {folder} ({exc.strerror or exc}); choose a writable folder"
            ) from None
        os.close(fd)
        os.unlink(probe)


__all__ = ["WRITERS", "PlannedScratch", "PlannedWrite", "WritePlan", "check_outputs", "same_file"]
