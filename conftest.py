"""What the examples in ``bpe_studio/``'s docstrings run with (pytest runs them with ``--doctest-modules``).

This file sits at the root, not in ``bpe_studio/``, so that it is not installed with the package; pytest
loads it for every test, and only the doctest items use what it sets up. (``tests/conftest.py`` holds the
fixtures of the tests under ``tests/``.)

Every example runs in a fresh temporary folder (its working directory), so an example that writes
``out/tokenizer.json`` writes it there, next to small sample files it may read:

* ``corpus.txt``: three short documents, eight times over, separated by ``<|endoftext|>``;
* ``corpus.jsonl``: the same documents, once each, as JSON Lines (``{"text": ...}``);
* ``vocab.json`` + ``merges.txt``: GPT-2's files (links to the copy shipped in ``bpe_studio/resources``);
* ``out/``: an empty folder, where examples save what they write (a save creates no missing folder).

Nothing an example does reaches the user's folders: ``XDG_CACHE_HOME``, ``XDG_CONFIG_HOME`` and
``XDG_DATA_HOME`` point into the working folder, and ``TIKTOKEN_CACHE_DIR`` is ``tiktoken-cache`` there
(empty, so no OpenAI encoding is found unless an example puts it there).

And it finds these names without importing them:

* ``tok`` and ``gpt2``: the built-in GPT-2 tokenizer (``load("gpt2")``, ``<|endoftext|>`` special);
* ``config``: a :class:`~bpe_studio.engine.TrainConfig` that trains ``corpus.txt`` to 300 tokens in this
  process (``workers=1``), ``<|endoftext|>`` special;
* ``result``: what ``train(config)`` gives, and ``small``: its :class:`~bpe_studio.engine.Tokenizer`;
* ``Path``, ``TrainConfig``, ``train``, ``Tokenizer``, ``load`` and ``save``.

The names are given to every doctest and take the place of a module's own global of the same name in its
examples (``load`` in :mod:`bpe_studio.engine.training.checkpoint`, the submodule ``config`` in
:mod:`bpe_studio.engine`): an example that means the module's own imports it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from _pytest.doctest import DoctestItem

#: The examples that call the native kernel itself: skipped, saying so, when the pure-Python engine runs
#: (``BPE_STUDIO_PURE=1``, or a build without Rust), where they have nothing to call.
NATIVE_ONLY = frozenset(
    {
        "bpe_studio.engine.native.encode_text",
        "bpe_studio.engine.native.encode_texts",
        "bpe_studio.engine.native.encode_join",
        "bpe_studio.engine.encoding.tokenizer.Tokenizer._encode_joined",
    }
)

#: The sample documents of ``corpus.txt`` and ``corpus.jsonl``.
SAMPLE_DOCUMENTS = [
    "The cat sat on the mat. The cat saw the hat, and the hat was on the mat.",
    "A tokenizer splits text into tokens; the most frequent pair of tokens is merged first.",
    "Byte-level BPE never meets an unknown character: every text is bytes, naïve café 🙃 too.",
]


def _write_samples(folder: Path) -> None:
    """Write the sample files the examples read into ``folder``."""
    from bpe_studio.engine.formats.named import GPT2_FOLDER

    # Repeated so that a 300-token run has pairs to merge well above min_frequency.
    (folder / "corpus.txt").write_text("<|endoftext|>".join(SAMPLE_DOCUMENTS * 8), encoding="utf-8")
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps({"text": text}) + "\n" for text in SAMPLE_DOCUMENTS)
    # Links, not copies: GPT-2's files are 1.5 MB, and every example gets a fresh folder.
    for name in ("vocab.json", "merges.txt"):
        (folder / name).symlink_to(GPT2_FOLDER / name)
    (folder / "out").mkdir()


@pytest.fixture(scope="session")
def _doctest_globals(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The names every example finds, built once: loading GPT-2 takes most of a second."""
    from bpe_studio.engine import Tokenizer, TrainConfig, load, save, train

    folder = tmp_path_factory.mktemp("doctest-session")
    _write_samples(folder)
    here = Path.cwd()
    os.chdir(folder)
    try:
        config = TrainConfig(
            inputs=(Path("corpus.txt"),), vocab_size=300, special_tokens=("<|endoftext|>",), workers=1
        )
        result = train(config)
    finally:
        os.chdir(here)
    gpt2 = load("gpt2")
    return {
        "Path": Path,
        "TrainConfig": TrainConfig,
        "Tokenizer": Tokenizer,
        "train": train,
        "load": load,
        "save": save,
        "tok": gpt2,
        "gpt2": gpt2,
        "config": config,
        "result": result,
        "small": Tokenizer.from_result(result),
    }


@pytest.fixture(autouse=True)
def _doctest_workdir(request: pytest.FixtureRequest) -> None:
    """For a doctest only: its names, and a fresh temporary working folder holding the sample files."""
    if not isinstance(request.node, DoctestItem):
        return
    if request.node.name in NATIVE_ONLY:
        from bpe_studio.engine import backend

        if backend() != "native":
            pytest.skip("needs the native kernel (the pure-Python engine runs here)")
    namespace: dict[str, Any] = request.getfixturevalue("doctest_namespace")
    namespace.update(request.getfixturevalue("_doctest_globals"))
    folder: Path = request.getfixturevalue("tmp_path")
    _write_samples(folder)
    monkeypatch: pytest.MonkeyPatch = request.getfixturevalue("monkeypatch")
    monkeypatch.chdir(folder)
    for kind in ("CACHE", "CONFIG", "DATA"):
        monkeypatch.setenv(f"XDG_{kind}_HOME", str(folder / "home" / kind.lower()))
    monkeypatch.delenv("BPE_STUDIO_CONFIG_DIR", raising=False)  # the app's settings: under XDG_CONFIG_HOME
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "tiktoken-cache")
    monkeypatch.delenv("DATA_GYM_CACHE_DIR", raising=False)
