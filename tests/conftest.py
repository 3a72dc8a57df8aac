"""Fixtures shared by the engine and UI tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bpe_studio.ui.app.refcounts import guard_singleton_refcounts

# Before Qt is used in this process: pytest-qt imports PySide6 when pytest configures its plugins, after this
# file is loaded and before tests/ui/conftest.py is (PySide6 6.12 on CPython 3.11, see the module).
guard_singleton_refcounts()

REPO_ROOT = Path(__file__).resolve().parent.parent


def cs336_data_dir() -> Path:
    """The folder of the CS336 reference data: ``$BPE_STUDIO_CS336_DATA`` or ``../shared/data/cs336``."""
    override = os.environ.get("BPE_STUDIO_CS336_DATA")
    return Path(override) if override else REPO_ROOT.parent / "shared" / "data" / "cs336"


@pytest.fixture(scope="session")
def cs336_data() -> Path:
    """Path of the CS336 reference data; the test is skipped, saying how to provide it, when absent."""
    folder = cs336_data_dir()
    if not (folder / "corpus.en").is_file():
        reason = (
            f"CS336 reference data not found at {folder}; put the shared data beside the repository "
            "or set BPE_STUDIO_CS336_DATA to its folder"
        )
        # On a developer's machine the data may simply be absent; in CI it is always there, so a missing
        # folder is a broken set-up that must not pass as dozens of quiet skips.
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return folder
