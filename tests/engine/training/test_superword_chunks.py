"""The superword split's chunks run on across newlines and spaces, so a corpus is cut for counting only at
its special tokens: the counts (and merges) of a superword-pattern run do not depend on the chunk size or
the number of workers (a cut inside "1111111111a." once lost the merge ("a", ".") at chunk_size=64)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_studio.engine import TrainConfig, train
from bpe_studio.engine.pretokenize.patterns import SUPERWORD_PATTERN, newline_cuts_certain

from ..backends import BACKENDS, use_backend

SPECIAL = "<|endoftext|>"
_doc = st.text(st.sampled_from("1a. \n!b"), min_size=1, max_size=24)


def _merges(path: Path, pattern: str, *, chunk_size: int, workers: int) -> list[tuple[bytes, bytes]]:
    config = TrainConfig(
        inputs=[path], vocab_size=300, special_tokens=(SPECIAL,), pattern=pattern, chunk_size=chunk_size,
        workers=workers,
    )
    return train(config).merges


def test_the_superword_split_is_never_cut_at_newlines() -> None:
    assert not newline_cuts_certain(SUPERWORD_PATTERN)
    assert newline_cuts_certain("gpt2") and newline_cuts_certain("o200k")


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_example_that_lost_a_merge(tmp_path: Path, backend: str) -> None:
    path = tmp_path / "c.txt"
    path.write_text(SPECIAL.join(["1", "111111", "1111111", "1111111111a."]), encoding="utf-8")
    with use_backend(backend):
        whole = _merges(path, SUPERWORD_PATTERN, chunk_size=1 << 20, workers=1)
        assert (b"a", b".") in whole
        assert _merges(path, SUPERWORD_PATTERN, chunk_size=64, workers=1) == whole
        assert _merges(path, SUPERWORD_PATTERN, chunk_size=64, workers=2) == whole


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(docs=st.lists(_doc, min_size=1, max_size=8), chunk_size=st.integers(16, 96))
def test_superword_counts_do_not_depend_on_the_chunk_size(
    tmp_path_factory: pytest.TempPathFactory, docs: list[str], chunk_size: int
) -> None:
    path = tmp_path_factory.mktemp("corpus") / "c.txt"
    path.write_text(SPECIAL.join(docs), encoding="utf-8")
    whole = _merges(path, SUPERWORD_PATTERN, chunk_size=1 << 20, workers=1)
    assert _merges(path, SUPERWORD_PATTERN, chunk_size=chunk_size, workers=2) == whole
