"""One door to the native kernel: only ``bpe_studio/engine/native.py`` imports the extension
(``bpe_studio._native``); every other module asks that door for a native implementation or None."""

from __future__ import annotations

import ast
from pathlib import Path

import bpe_studio

PACKAGE = Path(bpe_studio.__file__).resolve().parent
DOOR = PACKAGE / "engine" / "native.py"
EXTENSION = "bpe_studio._native"


def _imported(path: Path) -> set[str]:
    """Every module an import statement of ``path`` names (relative imports resolved, with their names)."""
    package = ["bpe_studio", *path.relative_to(PACKAGE).with_suffix("").parts[:-1]]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1]) if node.level else ""
            module = ".".join(part for part in (base, node.module or "") if part)
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def test_only_the_door_imports_the_extension() -> None:
    importers = sorted(
        str(path.relative_to(PACKAGE.parent))
        for path in PACKAGE.rglob("*.py")
        if any(name == EXTENSION or name.startswith(EXTENSION + ".") for name in _imported(path))
    )
    assert importers == ["bpe_studio/engine/native.py"]


def test_the_scan_sees_relative_imports_of_the_extension() -> None:
    assert EXTENSION in _imported(DOOR)  # `from .. import _native`, inside a function
