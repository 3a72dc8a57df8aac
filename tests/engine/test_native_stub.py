"""The hand-written stub ``bpe_studio/_native.pyi`` is the native extension's API, no more and no less.

The extension (rust/src/py/) and its stub are written separately; this holds them to each other: the same
public names, the same public methods in each class, the same parameters (names, keyword-only or not,
with a default or not), and the same properties. Test-only entry points in the extension fail here too:
the kernel's own checks are the crate's unit tests (``cargo test`` in rust/).
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import bpe_studio
from bpe_studio.engine import native

from .backends import needs_native

pytestmark = needs_native

STUB = Path(bpe_studio.__file__).with_name("_native.pyi")

#: What every PyO3 class has in its own namespace besides the methods written for it.
CLASS_BOILERPLATE = {"__doc__", "__module__", "__new__"}

#: A parameter as compared: (name, keyword-only, has a default).
Param = tuple[str, bool, bool]


def _stub_params(node: ast.FunctionDef) -> list[Param]:
    args = node.args
    positional = args.posonlyargs + args.args
    with_default = {a.arg for a in positional[len(positional) - len(args.defaults) :]}
    found = [(a.arg, False, a.arg in with_default) for a in positional if a.arg not in ("self", "cls")]
    found += [(a.arg, True, d is not None) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)]
    return found


def _runtime_params(function: Any) -> list[Param]:
    return [
        (p.name, p.kind is inspect.Parameter.KEYWORD_ONLY, p.default is not inspect.Parameter.empty)
        for p in inspect.signature(function).parameters.values()
        if p.name != "self"
    ]


def _stub() -> tuple[dict[str, list[Param]], dict[str, dict[str, list[Param] | None]]]:
    """The stub's functions (name -> parameters) and classes (name -> member -> parameters, None for a
    property)."""
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    functions: dict[str, list[Param]] = {}
    classes: dict[str, dict[str, list[Param] | None]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            functions[node.name] = _stub_params(node)
        elif isinstance(node, ast.ClassDef):
            members: dict[str, list[Param] | None] = {}
            for item in node.body:
                assert isinstance(item, ast.FunctionDef), f"{node.name}: only methods belong in the stub"
                is_property = any(isinstance(d, ast.Name) and d.id == "property" for d in item.decorator_list)
                members[item.name] = None if is_property else _stub_params(item)
            classes[node.name] = members
    return functions, classes


def _extension() -> ModuleType:
    assert native._native is not None
    return native._native


def test_the_stub_names_exactly_what_the_extension_exports() -> None:
    functions, classes = _stub()
    exported = {name for name in dir(_extension()) if not name.startswith("_")}
    assert exported == functions.keys() | classes.keys()
    for name in functions:
        assert not inspect.isclass(getattr(_extension(), name)), f"{name} is a class in the extension"
    for name in classes:
        assert inspect.isclass(getattr(_extension(), name)), f"{name} is not a class in the extension"


def test_each_function_takes_the_parameters_of_its_stub() -> None:
    functions, _ = _stub()
    for name, params in functions.items():
        assert _runtime_params(getattr(_extension(), name)) == params, name


@pytest.mark.parametrize("name", sorted(_stub()[1]))
def test_each_class_has_the_methods_and_properties_of_its_stub(name: str) -> None:
    members = _stub()[1][name]
    cls = getattr(_extension(), name)
    assert cls.__module__ == "bpe_studio._native"
    own = set(vars(cls)) - CLASS_BOILERPLATE
    assert own == members.keys() - {"__init__"}, name
    assert _runtime_params(cls) == members.get("__init__", []), f"{name}()"
    for member, params in members.items():
        if member == "__init__":
            continue
        value = inspect.getattr_static(cls, member)
        if params is None:
            assert inspect.isdatadescriptor(value), f"{name}.{member} is not a property in the extension"
        else:
            assert callable(value), f"{name}.{member} is a property in the extension, a method in the stub"
            assert _runtime_params(getattr(cls, member)) == params, f"{name}.{member}"
