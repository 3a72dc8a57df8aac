"""The engine's public names are imported on first use (``bpe_studio/engine/__init__.py``)."""

from __future__ import annotations

import subprocess
import sys
import types

from bpe_studio import engine


def test_every_public_name_resolves_to_the_object_of_its_module() -> None:
    for name in engine.__all__:
        value = getattr(engine, name)
        assert not isinstance(value, types.ModuleType), name  # e.g. preflight: the function, not its module
        module = engine._WHERE.get(name)
        if module is not None:
            assert value is getattr(sys.modules[f"bpe_studio.engine.{module}"], name)
    assert set(engine._WHERE) | {"preflight"} == set(engine.__all__)


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
