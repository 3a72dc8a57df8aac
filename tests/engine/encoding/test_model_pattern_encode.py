"""Tokenizers whose pattern is a model's own (Llama 3, Qwen 2, Qwen 3.5, Mistral Nemo, tiktoken's r50k,
``tokenizers``' ByteLevel regex) encode text natively, scanner and BPE in one call, with the same ids as the
pure-Python path (``regex`` split), as tiktoken with that pattern, and, from a tokenizer.json whose Split is
such a pattern, as ``tokenizers``."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_studio.engine import Tokenizer, load
from bpe_studio.engine.pretokenize.patterns import MODEL_PATTERNS

from ..backends import needs_native, use_backend
from ..formats.test_hf_llm_files import (
    LLAMA3_SPLIT,
    QWEN_SPLIT,
    _base_document,
    _split,
    llama3_file,
    qwen_file,
)
from ..formats.test_hf_llm_files import (
    texts as hf_texts,
)
from ..reference_encoder import SPECIAL, gpt2_tokenizer, make_tiktoken_cache
from .test_native_text_encode import _PIECES, texts

pytestmark = needs_native

#: Each model's pattern -> the native scanner that runs it.
SCANNERS = {
    "llama3": "llama3",
    "qwen2": "qwen2",
    "qwen35": "qwen35",
    "nemo": "nemo",
    "r50k": "gpt2",
    "byte_level": "gpt2",
}
check = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
piece_texts = st.lists(st.sampled_from(_PIECES), max_size=30).map("".join)


@functools.cache
def _pair(model: str, data: Path) -> tuple[Tokenizer, Tokenizer]:
    """(python, native) tokenizers of GPT-2's vocabulary with a model's pattern."""
    base = gpt2_tokenizer(data)
    made = []
    for backend in ("python", "native"):
        with use_backend(backend):
            made.append(
                Tokenizer(base.vocab, base.merges, dict(base.special_tokens), pattern=MODEL_PATTERNS[model])
            )
    python, native = made
    assert python.backend == "python" and native.backend == "native"
    return python, native


@pytest.mark.parametrize("model", SCANNERS)
def test_a_models_pattern_is_split_by_its_native_scanner(cs336_data: Path, model: str) -> None:
    python, native = _pair(model, cs336_data)
    assert native._encoder.preset == SCANNERS[model]
    assert native.pattern == python.pattern == MODEL_PATTERNS[model]

    def refuse(_: str) -> list[str]:
        raise AssertionError("split in Python")

    text = "It's 2024: naïve 中文 🙃 e\u0301 code_x = 12345;\r\n\n  end" + SPECIAL + "more"
    saved = native._split
    try:
        native._split = refuse
        assert native.encode(text, allowed_special="all") == python.encode(text, allowed_special="all")
    finally:
        native._split = saved


@check
@given(text=texts, model=st.sampled_from(list(SCANNERS)))
def test_native_equals_python(cs336_data: Path, text: str, model: str) -> None:
    python, native = _pair(model, cs336_data)
    assert native.encode(text) == python.encode(text)
    assert native.encode_ordinary(text) == python.encode_ordinary(text)
    plain: dict[str, Any] = {"allowed_special": set(), "disallowed_special": ()}
    assert native.encode(text, **plain) == python.encode(text, **plain)
    half = len(text) // 2
    assert list(native.encode_iterable([text[:half], text[half:]])) == python.encode(text)


@check
@given(batch=st.lists(texts, max_size=6), model=st.sampled_from(list(SCANNERS)), threads=st.integers(1, 3))
def test_batches_and_joined_rows_equal_python(
    cs336_data: Path, batch: list[str], model: str, threads: int
) -> None:
    python, native = _pair(model, cs336_data)
    assert native.encode_ordinary_batch(batch, num_threads=threads) == [
        python.encode_ordinary(t) for t in batch
    ]
    separator = python.special_tokens[SPECIAL]
    expected: list[int] = []
    for i, text in enumerate(batch):
        expected += ([separator] if i else []) + python.encode_ordinary(text)
    raw = native._encode_joined(batch, separator=separator, width=4)
    assert raw is not None
    assert [int.from_bytes(raw[i : i + 4], "little") for i in range(0, len(raw), 4)] == expected


@pytest.fixture(scope="module")
def tiktoken_ranks(cs336_data: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[bytes, int]:
    tiktoken = pytest.importorskip("tiktoken")
    cache = make_tiktoken_cache(cs336_data, tmp_path_factory.mktemp("tiktoken-cache"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
        ranks: dict[bytes, int] = tiktoken.get_encoding("gpt2")._mergeable_ranks
    return ranks


@functools.cache
def _with_tiktoken(model: str, ranks_id: int, ranks: Any) -> tuple[Tokenizer, Any]:
    import tiktoken

    pattern = MODEL_PATTERNS[model]
    special = {SPECIAL: len(ranks)}
    enc = tiktoken.Encoding(f"test-{model}", pat_str=pattern, mergeable_ranks=ranks, special_tokens=special)
    with use_backend("native"):
        ours = Tokenizer({rank: token for token, rank in ranks.items()}, None, special, pattern=pattern)
    return ours, enc


@check
@given(text=piece_texts, model=st.sampled_from(list(SCANNERS)))
def test_ids_equal_tiktoken_with_the_same_pattern(
    tiktoken_ranks: dict[bytes, int], text: str, model: str
) -> None:
    ours, enc = _with_tiktoken(model, id(tiktoken_ranks), _Frozen(tiktoken_ranks))
    assert ours._encoder.preset == SCANNERS[model]
    assert ours.encode_ordinary(text) == enc.encode_ordinary(text)


class _Frozen(dict):  # type: ignore[type-arg]
    """The ranks, hashable by identity so that functools.cache keeps one pair per model."""

    def __hash__(self) -> int:
        return id(self)


# ------------------------------------------------------------------------------------------ tokenizer.json


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("model-pattern-files")


def _qwen35_file(cs336_data: Path, folder: Path) -> Path:
    document, _ = _base_document(cs336_data, folder)
    document["normalizer"] = {"type": "NFC"}
    document["pre_tokenizer"] = _split(MODEL_PATTERNS["qwen35"])
    path = folder / "qwen35" / "tokenizer.json"
    path.parent.mkdir()
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def _olmo2_file(cs336_data: Path, folder: Path) -> Path:
    """OLMo 2's shape: Llama 3's regex in a Split that removes what the inverted pattern matches."""
    document, _ = _base_document(cs336_data, folder)
    document["pre_tokenizer"] = _split(LLAMA3_SPLIT)
    document["pre_tokenizer"]["pretokenizers"][0].update(behavior="Removed", invert=True)
    path = folder / "olmo2" / "tokenizer.json"
    path.parent.mkdir()
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


@functools.cache
def _loaded(kind: str, cs336_data: Path, folder: Path) -> tuple[Tokenizer, Any]:
    tokenizers = pytest.importorskip("tokenizers")
    made = {"llama3": llama3_file, "qwen": qwen_file, "qwen35": _qwen35_file, "olmo2": _olmo2_file}
    path = made[kind](cs336_data, folder)
    with use_backend("native"):
        return load(path), tokenizers.Tokenizer.from_file(str(path))


@pytest.mark.parametrize(
    ("kind", "split", "scanner"),
    [
        ("llama3", LLAMA3_SPLIT, "llama3"),
        ("qwen", QWEN_SPLIT, "qwen2"),
        ("qwen35", MODEL_PATTERNS["qwen35"], "qwen35"),
        ("olmo2", LLAMA3_SPLIT, "llama3"),
    ],
)
def test_a_tokenizer_json_split_of_a_models_pattern_runs_natively(
    cs336_data: Path, files: Path, kind: str, split: str, scanner: str
) -> None:
    ours, _ = _loaded(kind, cs336_data, files)
    # The Split's regex as it is (it matches every character: no text between matches to keep).
    assert ours.pipeline is None and ours.pattern == split
    assert ours._encoder.preset == scanner


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=hf_texts, kind=st.sampled_from(["llama3", "qwen", "qwen35", "olmo2"]))
def test_a_tokenizer_json_split_natively_encodes_as_tokenizers(
    cs336_data: Path, files: Path, text: str, kind: str
) -> None:
    ours, theirs = _loaded(kind, cs336_data, files)
    assert ours.encode(text) == theirs.encode(text).ids


def test_a_split_regex_that_is_a_presets_name_is_that_text(cs336_data: Path, files: Path) -> None:
    # A Split regex "gpt2" matches the letters "gpt2", not the preset of that name.
    tokenizers = pytest.importorskip("tokenizers")
    document, _ = _base_document(cs336_data, files)
    document["pre_tokenizer"] = _split("gpt2")
    path = files / "named" / "tokenizer.json"
    path.parent.mkdir()
    path.write_text(json.dumps(document), encoding="utf-8")
    ours, theirs = load(path), tokenizers.Tokenizer.from_file(str(path))
    text = "a gpt2 text, it's 2024: gpt2gpt2!"
    assert ours.encode(text) == theirs.encode(text).ids
