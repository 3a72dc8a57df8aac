"""The native pre-token cache under churn (issue 22): a cache of a few entries makes room on nearly every
pre-token, long pre-tokens fill its byte budget, and a batch's threads read one cache and settle
what they merged into it at the end of the call. None of it may change an id: every call, on any number of
threads, gives what the pure-Python reference gives for each text alone."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_studio.engine import Tokenizer

from ..backends import needs_native
from .test_native_text_encode import PRESETS, _tokenizers, check, texts

pytestmark = needs_native

# Texts with long pre-tokens too (a letter run of up to 3,000 bytes, digits, spaces), repeated in a batch.
_long = st.builds(
    lambda ch, n: ch * n, st.sampled_from(["a", "é", "中", "7", " ", "ab"]), st.integers(1, 3000)
)
_batches = st.lists(st.one_of(texts, _long), min_size=1, max_size=12)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache-churn")


@settings(check, max_examples=60)
@given(
    batch=_batches,
    tokenizer=st.tuples(st.sampled_from(PRESETS), st.sampled_from([1, 2, 5, 16, 64])),
    threads=st.lists(st.integers(1, 3), min_size=3, max_size=5),
)
def test_a_small_cache_under_churn_never_changes_an_id(
    cs336_data: Path, folder: Path, batch: list[str], tokenizer: tuple[str, int], threads: list[int]
) -> None:
    kind, cache_size = tokenizer
    python, native = _tokenizers(kind, cs336_data, folder)
    small = Tokenizer(
        native.vocab, native.merges, native.special_tokens, pattern=native.pattern, cache_size=cache_size
    )
    assert small.backend == "native" and small.cache_size == cache_size
    expected = [python.encode_ordinary(text) for text in batch]
    # The same batch again and again on varying thread counts: each call meets the caches the calls
    # before it left (full, made room in, settled by other threads).
    for n in threads:
        assert small.encode_ordinary_batch(batch, num_threads=n) == expected
        assert [small.encode_ordinary(text) for text in batch[:3]] == expected[:3]
        assert len(small._encoder) <= cache_size
