"""Tests that guard the design: the engine and the CLI stand without Qt, pyqtgraph or numpy, and never
reach into the app's package."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "bpe_studio"

# A meta-path finder placed first makes these packages unimportable in the child, as on a machine where
# they are not installed (or broken).
_BLOCK = """
import sys
class _Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('PySide6', 'shiboken6', 'pyqtgraph', 'numpy'):
            raise ImportError('blocked for this test: ' + name)
        return None
sys.meta_path.insert(0, _Block())
"""


def test_engine_and_cli_train_without_qt_pyqtgraph_or_numpy(tmp_path: Path) -> None:
    corpus = tmp_path / "c.txt"
    docs = (f"doc {i}: the cat sat on the mat.\n" for i in range(200))
    corpus.write_text("<|endoftext|>".join(docs), "utf-8")
    out = tmp_path / "out"
    code = _BLOCK + (
        "from bpe_studio.engine import TrainConfig, Tokenizer, train\n"
        "from bpe_studio.cli import main\n"
        "SPECIAL = '<|endoftext|>'\n"
        f"result = train(TrainConfig(inputs=[{str(corpus)!r}], vocab_size=300, special_tokens=(SPECIAL,)))\n"
        "tok = Tokenizer.from_result(result)\n"
        "assert tok.decode(tok.encode('the cat' + SPECIAL, allowed_special='all')) == 'the cat' + SPECIAL\n"
        f"code = main(['train', {str(corpus)!r}, '--vocab-size', '300', '--out', {str(out)!r}, '--quiet'])\n"
        "blocked = ('PySide6', 'shiboken6', 'pyqtgraph', 'numpy')\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in blocked]\n"
        "print('CODE', code, 'BAD', bad)\n"
        "sys.exit(code or (1 if bad else 0))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120, cwd=tmp_path
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (out / "tokenizer.json").is_file()


def _imports(path: Path) -> list[tuple[str, bool]]:
    """``(absolute module name, at module level)`` of each import in one of the package's files."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    package = parts[:-1]  # the package a relative import starts from (for __init__.py, its own)
    top_level = {id(node) for node in tree.body}
    found: list[tuple[str, bool]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, id(node) in top_level) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(package[: len(package) - node.level + 1])
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            found.append((module, id(node) in top_level))
    return found


def test_engine_and_cli_never_import_the_app() -> None:
    offenders = []
    for folder in ("engine", "cli"):
        for path in sorted((PACKAGE / folder).rglob("*.py")):
            for module, at_top in _imports(path):
                if module.split(".")[:2] != ["bpe_studio", "ui"]:
                    continue
                # The one way in: the command line opens the app on demand (a lazy import in a function).
                if path == PACKAGE / "cli" / "__init__.py" and not at_top:
                    continue
                offenders.append(f"{path.relative_to(PACKAGE.parent)} imports {module}")
    assert not offenders, offenders


def test_the_import_scanner_sees_relative_imports() -> None:
    # Guards the guard: the scanner must resolve `from ..ui import x` in cli/ to bpe_studio.ui.
    found = dict(_imports(PACKAGE / "cli" / "__init__.py"))
    assert any(name.startswith("bpe_studio.ui") for name in found), found


def _imported(path: Path) -> set[str]:
    """Every module a file imports, counting ``from .. import cli`` as ``bpe_studio.cli``."""
    found = {module for module, _ in _imports(path)}
    package = path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level and node.module is None:
            base = ".".join(package[: len(package) - node.level + 1])
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def test_the_app_never_imports_the_cli() -> None:
    # The app and the CLI are two front ends on the engine: what both need (formatting for people, analysis)
    # lives in engine.humanize and engine.analysis, so neither reaches into the other.
    offenders = [
        f"{path.relative_to(PACKAGE.parent)} imports {module}"
        for path in sorted((PACKAGE / "ui").rglob("*.py"))
        for module in sorted(_imported(path))
        if module.split(".")[:2] == ["bpe_studio", "cli"]
    ]
    assert not offenders, offenders
    # Guards the guard: it sees the app's relative imports of the engine's shared modules.
    assert "bpe_studio.engine.humanize" in _imported(PACKAGE / "ui" / "train" / "view.py")


def _module_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports at module level (not in functions or type checks)."""
    files = {
        ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__"): path
        for path in PACKAGE.rglob("*.py")
    }

    def known(name: str) -> str | None:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        names = [name for name, at_top in _imports(path) if at_top]
        # `from . import _native` names a submodule, not the package it comes from.
        package = path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1]
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ImportFrom) and node.level and node.module is None:
                base = ".".join(package[: len(package) - node.level + 1])
                names.remove(base)
                names += [f"{base}.{alias.name}" for alias in node.names]
        graph[module] = {t for name in names if (t := known(name)) is not None and t != module}
    return graph


def test_the_package_has_no_import_cycles_at_module_level() -> None:
    # Issue 10: modules import downward only, so each can be read (and imported) on its own. A lazy import in
    # a function (Tokenizer.from_files reading GPT-2 files through formats.gpt2) is not a cycle at import.
    graph = _module_graph()
    assert "bpe_studio.engine.config" in graph["bpe_studio.engine.training.trainer"]  # guards the guard
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph.get(module, ())):
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target, [*path, target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert cycles == [], "\n".join(" -> ".join(cycle) for cycle in cycles)
