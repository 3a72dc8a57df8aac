"""The demo corpus: real English prose that ships with every CPython, written once to a cache folder.

``pydoc_data.topics.topics`` holds the text of Python's documentation topics (about 465 kB, 79 topics) and
the standard library's sources hold its docstrings (about 1.5 MB more). Each topic, and each module's
docstrings, becomes a document; documents are joined by ``<|endoftext|>``. The file is built from the
running interpreter's own data, so it works offline on a fresh install, and nothing is copied into the
repository. This module is Qt-free.

Example:
    >>> path = demo_corpus()  # doctest: +SKIP
    >>> path.stat().st_size > 400_000  # doctest: +SKIP
    True
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

#: Vocab size the demo trains to: enough merges for the charts to show their shape, done in seconds.
DEMO_VOCAB_SIZE = 5000

# Bump when the corpus's content changes, so stale cached files are not reused.
_FORMAT_VERSION = 1


def cache_dir() -> Path:
    """The folder for cached files: ``$BPE_STUDIO_CACHE_DIR`` or the platform's user cache folder."""
    override = os.environ.get(CACHE_DIR_ENV)
    if override:
        return Path(override)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("bpe-studio", appauthor=False))


def _docstring_documents(stdlib: Path) -> list[str]:
    """One document per standard-library module: its docstring and those of its classes and functions.

    Sources are parsed (never imported). Tests, IDLE and installed packages are left out; a file that does
    not parse is skipped. Returns nothing when the interpreter ships without its sources.
    """
    skipped = {"test", "tests", "idlelib", "site-packages", "dist-packages", "lib2to3", "turtledemo"}
    files = sorted(stdlib.glob("*.py")) + sorted(stdlib.glob("*/*.py"))
    documents = []
    for path in files:
        if skipped.intersection(path.relative_to(stdlib).parts):
            continue
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


@functools.lru_cache(maxsize=1)
def _documents() -> tuple[str, ...]:
    from pydoc_data.topics import topics

    documents = [topics[name].strip() for name in sorted(topics)]
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    documents += _docstring_documents(stdlib)
    return tuple(doc for doc in documents if doc)


def demo_documents() -> list[str]:
    """The demo corpus's documents: Python's documentation topics, then the standard library's docstrings."""
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
