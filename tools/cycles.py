"""Count the import cycles between BPE Studio's modules.

Every import counts, also one inside a function (a lazy import), but not one under ``if TYPE_CHECKING:``.
The test ``tests/engine/test_design.py`` checks that there is none (the layers between packages are
contracts in pyproject.toml, checked by ``lint-imports``).

Usage::

    python3 tools/cycles.py [REPOSITORY]     # prints each cycle (up to 8 modules long) and their count
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path


def module_files(root: Path) -> dict[str, Path]:
    """``bpe_studio.engine.config`` -> its file, for every module of the package under ``root``."""
    files = {}
    for path in (root / "bpe_studio").rglob("*.py"):
        name = ".".join(path.relative_to(root).with_suffix("").parts)
        files[name.removesuffix(".__init__")] = path
    return files


def imported(path: Path, module: str, files: dict[str, Path]) -> set[str]:
    """The package's modules that one file imports (relative imports resolved)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]

    def known(name: str) -> str | None:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    found: set[str | None] = set()
    for top in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(top, ast.If) and "TYPE_CHECKING" in ast.unparse(top.test):
            continue
        for node in ast.walk(top):
            if isinstance(node, ast.Import):
                found.update(known(alias.name) for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parts, base] if base else parts)
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    found.add(full if full in files else known(base))
    return {name for name in found if name is not None and name != module}


def cycles(graph: dict[str, set[str]], longest: int = 8) -> list[list[str]]:
    """Each elementary cycle once, starting at its smallest module (depth-first, up to ``longest``)."""
    found = []
    order = sorted(graph)
    for i, start in enumerate(order):
        allowed = set(order[i:])
        stack = [(start, [start])]
        while stack:
            node, path = stack.pop()
            for target in sorted(graph[node]):
                if target == start:
                    found.append(path)
                elif target in allowed and target not in path and len(path) < longest:
                    stack.append((target, [*path, target]))
    return found


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    files = module_files(root)
    graph = {module: imported(path, module, files) for module, path in files.items()}
    found = cycles(graph)
    for cycle in found:
        print(" -> ".join([*cycle, cycle[0]]))
    print(f"{len(found)} import cycle(s)")


if __name__ == "__main__":
    main()
