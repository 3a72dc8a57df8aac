"""A native batch in many chunks (issue 22): the threads, the calling one among them, take the chunks of
their own run, then the back of another's, and the calling thread makes the lists of the chunks the
others finished between two of its own, so chunks come in any order. Whatever the order, the lists and
the flat arrays hold each text's ids in place: those of encoding it alone (the single-text path, which
the other tests hold to the pure-Python reference)."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ..backends import needs_native
from .test_native_text_encode import PRESETS, _tokenizers, check, texts

pytestmark = needs_native

# A chunk holds at least 64 kB: texts repeated up to 8000 times make batches of one to dozens of chunks.
_big_batches = st.lists(st.tuples(texts, st.integers(1, 8000)), max_size=24).map(
    lambda drawn: [text * times for text, times in drawn]
)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("batch-chunks")


@settings(check, max_examples=40)
@given(batch=_big_batches, kind=st.sampled_from(PRESETS), threads=st.integers(1, 4))
def test_chunks_in_any_order_give_each_text_its_own_ids(
    cs336_data: Path, folder: Path, batch: list[str], kind: str, threads: int
) -> None:
    _, native = _tokenizers(kind, cs336_data, folder)
    expected = [native.encode_ordinary(text) for text in batch]
    assert native.encode_ordinary_batch(batch, num_threads=threads) == expected
    ids, offsets = native.encode_ordinary_batch_arrays(batch, num_threads=threads)
    flat = ids.tolist()
    assert [flat[a:b] for a, b in pairwise(offsets.tolist())] == expected


def test_a_batch_of_many_chunks_agrees_on_every_thread_count(cs336_data: Path, folder: Path) -> None:
    # About 2 MB in texts of every size: 32 chunks a thread, the last of them stolen.
    _, native = _tokenizers("o200k", cs336_data, folder)
    batch = [f"text {i}: " + "word, 中文 and 123 " * (i % 300) for i in range(2000)]
    expected = native.encode_ordinary_batch(batch, num_threads=1)
    assert expected == [native.encode_ordinary(text) for text in batch]
    for threads in (2, 3, 8):
        assert native.encode_ordinary_batch(batch, num_threads=threads) == expected
        ids, offsets = native.encode_ordinary_batch_arrays(batch, num_threads=threads)
        flat = ids.tolist()
        assert [flat[a:b] for a, b in pairwise(offsets.tolist())] == expected


def test_a_batch_of_over_a_million_ids_is_laid_out_by_the_threads_in_place(
    cs336_data: Path, folder: Path
) -> None:
    # Past 2**20 ids the flat ids are copied into place by the threads together (encode::lay_out): each
    # text's ids where the offsets say, as encoding it alone gives them.
    _, native = _tokenizers("gpt2", cs336_data, folder)
    words = [f"w{n} x{n % 7}," for n in range(2000)]
    batch = [" ".join(words[k:] + words[:k]) * 8 for k in range(0, 2000, 25)]
    expected = [native.encode_ordinary(text) for text in batch]
    assert sum(map(len, expected)) > 1 << 20
    for threads in (2, 3):
        ids, offsets = native.encode_ordinary_batch_arrays(batch, num_threads=threads)
        assert [ids[start:end].tolist() for start, end in pairwise(offsets.tolist())] == expected
