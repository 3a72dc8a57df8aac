"""Atomic file writes: readers see the old files or the complete new ones, never a partial write.

A tokenizer saved as several files (``vocab.json`` + ``merges.txt`` + sidecar) is written as one set
(:func:`atomic_write_set`): every file goes to a temporary file next to its target first, and only when all
of them are written and synced are they renamed over the targets. A failure while writing (a full disk, a
read-only folder) leaves the old set untouched; a failure between two renames puts back the files already
replaced; no temporary file is left behind.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (only named: opening a file imports this module, and write_plan imports dataclasses)
    from ..write_plan import WritePlan


def _umask() -> int:
    # os.umask can only be read by setting it; done once, at import, before any threads write files.
    mask = os.umask(0)
    os.umask(mask)
    return mask


_FILE_MODE = 0o666 & ~_umask()


def _write_temporary(target: Path, payload: bytes) -> str:
    """Write ``payload`` to a new temporary file in ``target``'s folder, synced; return its name."""
    import tempfile  # (here: opening a file, which imports this module, writes nothing; 1-2 ms)

    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            # mkstemp creates the file readable by its owner only; give it the mode a plain open() would.
            os.fchmod(handle.fileno(), _FILE_MODE)
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def _keep_old(target: Path, tmp: str) -> str | None:
    """Keep the file at ``target`` under another name (a hard link; a copy where links are not supported)
    so that it can be put back; ``None`` when there is no file to keep."""
    if not os.path.lexists(target):
        return None
    kept = tmp + ".old"
    try:
        os.link(target, kept, follow_symlinks=False)  # a symlink is kept as the symlink it was
    except OSError:
        import shutil  # (here: see _write_temporary)

        shutil.copy2(target, kept, follow_symlinks=False)
    return kept


def atomic_write_set(files: Mapping[str | os.PathLike[str], bytes | str]) -> None:
    """Write several files as one set: all temporary files first, then the renames.

    Raises ``OSError`` when a file cannot be written or renamed: the targets then hold what they held
    before (files already renamed are put back) and no temporary file is left. ``IsADirectoryError`` when a
    folder stands where one of the files should go. (A reader that opens the files *during* the renames,
    a matter of microseconds, may still see both generations; no failure leaves them mixed.)

    Example:
        >>> atomic_write_set({"out/vocab.json": "{}", "out/merges.txt": "#version: 0.2\\n"})
        >>> sorted(p.name for p in Path("out").iterdir())
        ['merges.txt', 'vocab.json']
    """
    staged: dict[Path, str] = {}
    try:
        for path, data in files.items():
            target = Path(path)
            payload = data.encode("utf-8") if isinstance(data, str) else data
            staged[target] = _write_temporary(target, payload)
        replace_set(staged)
    finally:
        for tmp in staged.values():  # the ones not renamed (replace_set renames all or none)
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def replace_set(moves: Mapping[Path, str | os.PathLike[str]]) -> None:
    """Rename finished files over their targets as one set: ``{target: finished file}``.

    Each finished file must be on the target's file system (e.g. in a folder next to it). Either every
    target gets its new file, or (on an error, raised again) every target holds what it held before; the
    finished files are then left where they were, for the caller to remove.

    Example:
        >>> Path("out/.staging").mkdir()
        >>> _ = Path("out/.staging/vocab.json").write_text("{}", encoding="utf-8")
        >>> replace_set({Path("out/vocab.json"): "out/.staging/vocab.json"})
        >>> Path("out/vocab.json").read_text(encoding="utf-8")
        '{}'
    """
    kept: dict[Path, str | None] = {}
    renamed: list[Path] = []
    try:
        # Checked before the first rename: a folder in the way would make os.replace fail half-way.
        for target in moves:
            if target.is_dir():
                raise IsADirectoryError(errno.EISDIR, "a folder is in the way of the file", os.fspath(target))
        if len(moves) > 1:  # one file needs no undo: its rename happens or not
            for target, tmp in moves.items():
                kept[target] = _keep_old(target, os.fspath(tmp))
        for target, tmp in moves.items():
            os.replace(tmp, target)
            renamed.append(target)
    except BaseException:
        # Undo the renames made, newest first: each target gets its old file back (or none, as before),
        # and its new file goes back where it came from.
        for target in reversed(renamed):
            old = kept.get(target)
            with contextlib.suppress(OSError):
                os.replace(target, moves[target])
                if old is not None:
                    os.replace(old, target)
                    kept[target] = None
        raise
    finally:
        for old in kept.values():
            if old is not None:
                with contextlib.suppress(OSError):
                    os.unlink(old)


def atomic_write(path: str | os.PathLike[str], data: bytes | str) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and ``os.replace``.

    Example:
        >>> atomic_write("out/vocab.json", "{}")
        >>> Path("out/vocab.json").read_text(encoding="utf-8")
        '{}'
    """
    atomic_write_set({path: data})


def atomic_plan(
    plan: WritePlan,
    option: str,
    path: str | os.PathLike[str],
    *,
    implied_by: str | os.PathLike[str] | None = None,
) -> None:
    """Add what :func:`atomic_write` (or one file of :func:`atomic_write_set`) writes for ``path`` to
    ``plan``: the file, and its temporary files beside it (``.NAME.*.tmp``, ``.NAME.*.tmp.old``).

    Example:
        >>> from bpe_studio.engine.write_plan import WritePlan
        >>> plan = WritePlan()
        >>> atomic_plan(plan, "--out", "out/vocab.json")
        >>> plan.covers("out/.vocab.json.x1y2.tmp")
        True
    """
    target = Path(path)
    plan.write(option, target, implied_by=implied_by)
    plan.scratch_files(
        option, target.parent, f".{target.name}.", (".tmp", ".tmp.old"), implied_by=implied_by or target
    )
