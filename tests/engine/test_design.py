"""Tests that guard the design: the engine and the CLI stand without Qt, pyqtgraph or numpy, and never
reach into the app's package.

The layers themselves (who may import whom) are contracts in pyproject.toml's ``[tool.importlinter]``,
checked here by running ``lint-imports``.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

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
        # The CLI imports the app only to open it (the one import that lint-imports' contract ignores).
        "bad = [m for m in sys.modules if m.split('.')[0] in blocked or m.startswith('bpe_studio.ui')]\n"
        "print('CODE', code, 'BAD', bad)\n"
        "sys.exit(code or (1 if bad else 0))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120, cwd=tmp_path
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (out / "tokenizer.json").is_file()


def test_the_import_contracts_hold() -> None:
    # lint-imports reads the contracts in pyproject.toml and the imports in the source (it runs none of it).
    code = "import sys, importlinter.cli as c\nsys.exit(c.lint_imports(no_cache=True, no_logo=True))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120, cwd=ROOT
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout, done.stdout  # guards the guard: the contracts were read and checked


def test_the_package_has_no_import_cycles() -> None:
    # Issue 10: modules import downward only, so each can be read (and imported) on its own. import-linter
    # sees cycles between sibling packages, not between modules across packages: tools/cycles.py counts
    # those, lazy imports in functions included.
    spec = importlib.util.spec_from_file_location("cycles", ROOT / "tools" / "cycles.py")
    assert spec is not None and spec.loader is not None
    cycles = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cycles)
    files = cycles.module_files(ROOT)
    graph = {module: cycles.imported(path, module, files) for module, path in files.items()}
    assert "bpe_studio.engine.config" in graph["bpe_studio.engine.training.trainer"]  # guards the guard
    found = cycles.cycles(graph)
    assert found == [], "\n".join(" -> ".join(cycle) for cycle in found)
