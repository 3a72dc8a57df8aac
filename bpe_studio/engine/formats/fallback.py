"""Keeping a trained result when saving it where asked failed (a full disk, a folder gone read-only).

Training can take hours; a save that fails afterwards must not lose it. :func:`save_fallback` writes the
result as a studio file (it keeps everything, and ``bpe-studio convert`` turns it into any format) into the
first folder that takes it: the user's cache folder, then the system's temporary folder.

Example:
    >>> path = save_fallback(result, config, folders=[Path("out")])
    >>> path.parent, path.name.startswith("tokenizer-")
    (PosixPath('out'), True)

    Without ``folders``, in the user's cache folder::

        save_fallback(result, config)
        # PosixPath('/home/me/.cache/bpe-studio/unsaved/tokenizer-20250101-120000-4242.json')
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..write_plan import WritePlan
from .saving import save_result

if TYPE_CHECKING:
    from ..config import TrainConfig
    from ..events import TrainResult


def fallback_folders() -> list[Path]:
    """Where :func:`save_fallback` tries to write, in order: the user cache (kept across reboots), then
    the temporary folder (often another file system, e.g. a tmpfs, when the disk is full)."""
    from platformdirs import user_cache_dir  # a dependency; imported only when a save has failed

    return [Path(user_cache_dir("bpe-studio")) / "unsaved", Path(tempfile.gettempdir())]


def _name_suffix() -> str:
    return f"-{os.getpid()}.json"


def fallback_plan(plan: WritePlan, option: str, *, folders: Sequence[Path] | None = None) -> None:
    """Add the copy :func:`save_fallback` may write (``tokenizer-*-PID.json`` in each folder) to ``plan``,
    as implied by ``option`` (the output whose save failed)."""
    for folder in fallback_folders() if folders is None else folders:
        plan.scratch_files(
            option, folder, "tokenizer-", (_name_suffix(),), implied_by=folder, what="the fallback copy"
        )


def save_fallback(
    result: TrainResult, config: TrainConfig | None = None, *, folders: Sequence[Path] | None = None
) -> Path:
    """Write ``result`` as a studio ``tokenizer-TIME-PID.json`` into the first folder that takes it.

    Raises:
        OSError: No folder took it; the message lists each folder and why.
    """
    name = f"tokenizer-{time.strftime('%Y%m%d-%H%M%S')}{_name_suffix()}"
    problems: list[str] = []
    for folder in fallback_folders() if folders is None else folders:
        if os.path.lexists(folder / name):  # never over another file, whatever it is
            problems.append(f"{folder}: {name} exists")
            continue
        try:
            folder.mkdir(parents=True, exist_ok=True)
            return save_result(result, folder / name, format="studio", config=config)
        except OSError as exc:
            problems.append(f"{folder}: {exc.strerror or exc}")
    raise OSError("no folder took the result (" + "; ".join(problems) + ")")


__all__ = ["fallback_folders", "fallback_plan", "save_fallback"]
