"""``Tokenizer.encode_ordinary_batch_arrays``: a batch's ids as one flat uint32 array and int64 offsets, no
Python int per id (issue 22: making the lists, one thread at a time under the GIL, kept 2 threads from 2x
one). The same ids as :meth:`encode_ordinary_batch`, natively and in pure Python, for any threads."""

from __future__ import annotations

import gc
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ..backends import needs_native
from .test_native_text_encode import PRESETS, _tokenizers, check, texts

pytestmark = needs_native


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("batch-arrays")


def _lists(ids: np.ndarray, offsets: np.ndarray) -> list[list[int]]:
    assert ids.dtype == np.uint32 and offsets.dtype == np.int64
    assert offsets[0] == 0 and offsets[-1] == len(ids) and bool(np.all(np.diff(offsets) >= 0))
    return [ids[a:b].tolist() for a, b in pairwise(offsets.tolist())]


@check
@given(batch=st.lists(texts, max_size=8), kind=st.sampled_from(PRESETS), threads=st.integers(1, 4))
def test_arrays_hold_the_ids_of_the_lists(
    cs336_data: Path, folder: Path, batch: list[str], kind: str, threads: int
) -> None:
    python, native = _tokenizers(kind, cs336_data, folder)
    expected = [python.encode_ordinary(text) for text in batch]
    for tok in (native, python):
        ids, offsets = tok.encode_ordinary_batch_arrays(batch, num_threads=threads)
        assert len(offsets) == len(batch) + 1
        assert _lists(ids, offsets) == expected


def test_native_arrays_make_no_int_per_id(cs336_data: Path, folder: Path) -> None:
    # Many chunks, so that the threads encode while the calling thread takes the earlier ones.
    python, native = _tokenizers("gpt2", cs336_data, folder)
    batch = [f"text {i} of many, {i * 7} words" for i in range(3000)]
    ids, offsets = native.encode_ordinary_batch_arrays(batch, num_threads=2)
    assert _lists(ids, offsets) == native.encode_ordinary_batch(batch, num_threads=1)
    assert native._encoder.encode_batch_flat(batch, threads=2) is not None
    assert python._encoder.encode_batch_flat(batch, threads=2) is None
    ids[0] = 7  # the arrays are the caller's own, writable
    assert gc.isenabled()


def test_empty_batches_and_bad_arguments(cs336_data: Path, folder: Path) -> None:
    python, native = _tokenizers("gpt2", cs336_data, folder)
    for tok in (native, python):
        ids, offsets = tok.encode_ordinary_batch_arrays([])
        assert ids.tolist() == [] and offsets.tolist() == [0]
        ids, offsets = tok.encode_ordinary_batch_arrays(["", "hello", ""], num_threads=2)
        assert ids.tolist() == [31373] and offsets.tolist() == [0, 0, 1, 1]
        with pytest.raises(ValueError, match="num_threads"):
            tok.encode_ordinary_batch_arrays(["a"], num_threads=0)
        with pytest.raises(TypeError, match="expected str texts, got bytes"):
            tok.encode_ordinary_batch_arrays([b"a"])  # type: ignore[list-item]


def test_lone_surrogates_are_fixed_as_in_the_lists(cs336_data: Path, folder: Path) -> None:
    python, native = _tokenizers("cl100k", cs336_data, folder)
    batch = ["a\ud83db", "\ud83d\ude43 ok", "中文"]
    expected = python.encode_ordinary_batch(batch)
    for tok in (native, python):
        assert _lists(*tok.encode_ordinary_batch_arrays(batch, num_threads=2)) == expected
