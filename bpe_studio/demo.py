"""The demo corpus: English prose and Python code that ship with every CPython, cached in a file.

``pydoc_data.topics.topics`` holds the text of Python's documentation topics (about 465 kB, 79 topics),
the standard library's sources hold its docstrings (about 1.5 MB more) and are themselves about 31 MB of
Python code and comments. Each topic, each module's docstrings and each source file becomes a document;
documents are joined by ``<|endoftext|>``. The file is built from the running interpreter's own data, so
it works offline on a fresh install, and nothing is copied into the repository. This module is Qt-free.

The size is for the eye: trained to :data:`DEMO_VOCAB_SIZE` tokens, the demo takes about 4-6 s on two
idle cores (counting about 1 s, merging about 3 s) and 11-19 s on two busy ones, against 0.6 s with only
the prose (2 MB, 5,000 tokens); after it, Watch BPE learn replays the run at any speed. The interpreter's
own text stops there (about 35 MB in all): a longer demo would need a corpus shipped with the app.

Example (the first call builds the corpus, a few seconds; later calls find it in the cache)::

    path = demo_corpus()
    path.stat().st_size > 30_000_000  # True
"""

from __future__ import annotations

import ast
import functools
import os
import sys
import sysconfig
from pathlib import Path

from .engine.formats import atomic_write

#: Environment variable that overrides the cache folder the demo corpus is written to.
CACHE_DIR_ENV = "BPE_STUDIO_CACHE_DIR"

#: The special token that separates the demo corpus's documents.
DEMO_SPECIAL_TOKEN = "<|endoftext|>"

#: Vocab size the demo trains to: 2**16, where the last merges' pairs still occur twice in the corpus.
DEMO_VOCAB_SIZE = 65_536

# Bump when the corpus's content changes, so stale cached files are not reused.
_FORMAT_VERSION = 2


def cache_dir() -> Path:
    """The folder for cached files: ``$BPE_STUDIO_CACHE_DIR`` or the platform's user cache folder."""
    override = os.environ.get(CACHE_DIR_ENV)
    if override:
        return Path(override)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("bpe-studio", appauthor=False))


_NOT_STDLIB = {"site-packages", "dist-packages"}


def _stdlib_files(stdlib: Path, *, tests: bool = False) -> list[Path]:
    """The standard library's modules in a fixed order: ``*.py`` two levels deep without tests, IDLE and
    the like, or (``tests``) every ``*.py`` file, tests included. Installed packages are never included."""
    if tests:
        files = sorted(stdlib.rglob("*.py"))
        skipped = _NOT_STDLIB
    else:
        files = sorted(stdlib.glob("*.py")) + sorted(stdlib.glob("*/*.py"))
        skipped = _NOT_STDLIB | {"test", "tests", "idlelib", "lib2to3", "turtledemo"}
    return [path for path in files if not skipped.intersection(path.relative_to(stdlib).parts)]


def _docstring_documents(stdlib: Path) -> list[str]:
    """One document per standard-library module: its docstring and those of its classes and functions.

    Sources are parsed (never imported). Tests, IDLE and installed packages are left out; a file that does
    not parse is skipped. Returns nothing when the interpreter ships without its sources.
    """
    documents = []
    for path in _stdlib_files(stdlib):
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError, OSError):
            continue
        parts = []
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc and DEMO_SPECIAL_TOKEN not in doc:
                    parts.append(doc.strip())
        if parts:
            documents.append("\n\n".join(parts))
    return documents


def _source_documents(stdlib: Path) -> list[str]:
    """One document per standard-library source file, as written: code, comments and all.

    Every module, tests included (installed packages left out), read as UTF-8; a file that is not UTF-8
    or holds the special token is skipped.
    """
    documents = []
    for path in _stdlib_files(stdlib, tests=True):
        try:
            text = path.read_bytes().decode("utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if DEMO_SPECIAL_TOKEN not in text and text.strip():
            documents.append(text.strip())
    return documents


@functools.lru_cache(maxsize=1)
def _documents() -> tuple[str, ...]:
    from pydoc_data.topics import topics

    documents = [topics[name].strip() for name in sorted(topics)]
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    documents += _docstring_documents(stdlib)
    documents += _source_documents(stdlib)
    return tuple(doc for doc in documents if doc)


def demo_documents() -> list[str]:
    """The demo corpus's documents: Python's documentation topics, the standard library's docstrings, then
    its source files."""
    return list(_documents())


def demo_corpus(folder: Path | None = None) -> Path:
    """Write the demo corpus (if not already there) and return its path.

    The file name holds the interpreter's version, since the text comes from it: the same interpreter
    always produces the same bytes, and a cached file is reused.
    """
    version = "-".join(map(str, sys.version_info[:3]))
    name = f"demo-corpus-v{_FORMAT_VERSION}-{sys.implementation.name}-{version}.txt"
    target = (folder or cache_dir()) / name
    if target.is_file() and target.stat().st_size > 0:
        return target
    data = DEMO_SPECIAL_TOKEN.join(demo_documents()).encode("utf-8")
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, data)
    return target


__all__ = [
    "CACHE_DIR_ENV",
    "DEMO_SPECIAL_TOKEN",
    "DEMO_VOCAB_SIZE",
    "cache_dir",
    "demo_corpus",
    "demo_documents",
]
