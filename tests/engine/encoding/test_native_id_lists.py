"""The native encoder returns its ids as lists of shared Python ints (issue 22): one int object per id of
the vocabulary, made once, so that a batch's lists are built with reference counts alone instead of an int
object per id while the GIL is held (a third of a 2-thread batch's wall time)."""

from __future__ import annotations

import gc
from collections.abc import Callable
from pathlib import Path

import pytest

from ..backends import needs_native
from ..reference_encoder import SAMPLE_TEXTS, gpt2_tokenizer

pytestmark = needs_native


def test_ids_are_the_same_int_objects_in_every_list(cs336_data: Path) -> None:
    tok = gpt2_tokenizer(cs336_data)
    texts = [text for text in SAMPLE_TEXTS if text] * 2
    first = tok.encode_ordinary_batch(texts, num_threads=2)
    again = tok.encode_ordinary_batch(texts, num_threads=1)
    assert first == again == [tok.encode_ordinary(text) for text in texts]
    large = [(a, b) for x, y in zip(first, again, strict=True) for a, b in zip(x, y, strict=True) if a > 256]
    assert large, "the samples hold ids above the small ints Python caches itself"
    assert all(a is b for a, b in large)


def test_an_ordinary_text_encodes_as_before(cs336_data: Path) -> None:
    tok = gpt2_tokenizer(cs336_data)
    assert tok.encode_ordinary("hello world") == [31373, 995]
    assert tok.encode_ordinary_batch(["hello", " world", ""], num_threads=2) == [[31373], [995], []]


def _collections_during(action: Callable[[], object]) -> tuple[list[int], object]:
    """The generations of the garbage collections that ran during ``action()``, and its result."""
    seen: list[int] = []

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            seen.append(info["generation"])

    gc.collect()  # no collection is due when the action starts
    gc.callbacks.append(note)
    try:
        result = action()
    finally:
        gc.callbacks.remove(note)
    return seen, result


@pytest.mark.parametrize("threads", [1, 2])
def test_a_batch_sets_off_no_collection_while_it_makes_its_lists(cs336_data: Path, threads: int) -> None:
    # A collection every 700 lists, each later one going over the earlier lists again, was a sixth of a
    # 2-thread batch's wall time on the one thread that holds the GIL (issue 22): the collector is paused
    # for the batch, and the next collection looks at the lists once.
    tok = gpt2_tokenizer(cs336_data)
    texts = [f"text {i} of many, {i * 7} words" for i in range(5000)]
    expected = [tok.encode_ordinary(text) for text in texts]
    assert gc.isenabled()
    seen, ids = _collections_during(lambda: tok.encode_ordinary_batch(texts, num_threads=threads))
    assert ids == expected
    assert seen == []
    assert gc.isenabled()
    gc.disable()
    try:
        assert tok.encode_ordinary_batch(texts[:10], num_threads=threads) == expected[:10]
        assert not gc.isenabled(), "a collector that was off stays off"
    finally:
        gc.enable()
