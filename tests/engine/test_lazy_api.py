"""The engine's public names are imported on first use (``bpe_studio/engine/__init__.py``)."""

from __future__ import annotations

import ast
import subprocess
import sys
import types
from pathlib import Path

from bpe_studio import engine


def test_every_public_name_resolves_to_the_object_of_its_module() -> None:
    for name in engine.__all__:
        value = getattr(engine, name)
        assert not isinstance(value, types.ModuleType), name  # e.g. preflight: the function, not its module
        module = engine._WHERE.get(name)
        if module is not None:
            assert value is getattr(sys.modules[f"bpe_studio.engine.{module}"], name)
    assert engine.__all__ == sorted(engine._WHERE)


def test_what_type_checkers_see_names_the_same_things_from_the_same_modules() -> None:
    # The `if TYPE_CHECKING:` imports in engine/__init__.py repeat _WHERE for mypy and editors: no drift.
    tree = ast.parse(Path(engine.__file__).read_text(encoding="utf-8"))
    blocks = [
        node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    ]
    assert len(blocks) == 1
    seen: dict[str, str] = {}
    for node in blocks[0].body:
        assert isinstance(node, ast.ImportFrom) and node.level == 1 and node.module, ast.unparse(node)
        for alias in node.names:
            assert alias.asname is None and alias.name not in seen, ast.unparse(node)
            seen[alias.name] = node.module
    assert seen == engine._WHERE


def test_preflight_is_the_function_before_and_after_its_module_is_imported() -> None:
    # The function has its submodule's name (engine.training.preflight): importing that module, before or
    # after the name, must not make the engine's public name the module.
    module = "import bpe_studio.engine.training.preflight\n"
    name = "from bpe_studio.engine import preflight\n"
    check = "import bpe_studio.engine as e, types\nprint(isinstance(e.preflight, types.FunctionType))\n"
    for code in (name + module + name + check, module + name + check, module + check):
        done = subprocess.run(
            [sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=60, check=True
        )
        assert done.stdout.strip() == "True", code


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        engine.no_such_name  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("no AttributeError")


def test_training_does_not_import_the_tokenizer_or_dask_support() -> None:
    # What keeps a small training run short in a fresh process (issue 12: corpus.en in <= 0.15 s).
    code = (
        "import sys\n"
        "from bpe_studio.engine import TrainConfig, train, preflight\n"
        "print(sorted(m for m in ('bpe_studio.engine.encoding.tokenizer',"
        " 'bpe_studio.engine.corpus.distributed',"
        " 'bpe_studio.engine.training.from_iterator', 'socket') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]", done.stdout


def test_the_formats_package_names_resolve_lazily_and_match_what_type_checkers_see() -> None:
    # engine/formats/__init__.py imports its names on first use too (opening a file imports the one format
    # module that reads it); its __all__ is spelled out for mypy and must be the table's names.
    from bpe_studio.engine import formats

    assert formats.__all__ == sorted(formats._WHERE)
    for name in formats.__all__:
        value = getattr(formats, name)
        assert value is getattr(sys.modules[f"bpe_studio.engine.formats.{formats._WHERE[name]}"], name)
    tree = ast.parse(Path(formats.__file__).read_text(encoding="utf-8"))
    blocks = [
        node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    ]
    assert len(blocks) == 1
    seen = {
        alias.name: node.module
        for node in blocks[0].body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert seen == formats._WHERE


def test_the_file_names_every_format_shares_are_the_format_modules_own() -> None:
    # formats/base.py names the files detect tells apart without importing each format's module.
    from bpe_studio.engine.formats import base, hf, studio, tekken, tiktoken_format

    assert base.TIKTOKEN_SUFFIX == tiktoken_format.SUFFIX
    assert (base.HF_FILE, base.TEKKEN_FILE, base.STUDIO_FORMAT) == (
        hf.FILE_NAME,
        tekken.FILE_NAME,
        studio.FORMAT_NAME,
    )
    assert studio.FormatError is base.FormatError is tiktoken_format.FormatError
