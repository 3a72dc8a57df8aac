"""The native encoder returns its ids as lists of shared Python ints (issue 22): one int object per id of
the vocabulary, made once, so that a batch's lists are built with reference counts alone instead of an int
object per id while the GIL is held (a third of a 2-thread batch's wall time)."""

from __future__ import annotations

from pathlib import Path

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
