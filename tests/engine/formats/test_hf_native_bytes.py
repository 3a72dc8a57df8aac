"""A ``tokenizer.json``'s byte-level vocab keys and merges read natively (rust/src/bytelevel.rs, through
``native.byte_level_bytes`` and ``native.byte_level_merges``) give what the Python reading gives: the same
bytes, and None (the one-by-one reading that names the entry) for the same inputs."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_studio.engine import native
from bpe_studio.engine.bytes_unicode import byte_to_char
from bpe_studio.engine.formats.hf import _byte_level_merges, _byte_level_vocab
from tests.engine.backends import needs_native, use_backend

pytestmark = needs_native

# Byte-level texts, with now and then a character outside the alphabet (a space, a letter beyond it, a
# lone surrogate) or beside the table's edges.
_CHARS = st.one_of(
    st.sampled_from(byte_to_char()),
    st.sampled_from([" ", "\u0144", "\u00ad", "\u00a0", "\x00", "\ud800", "\U0001f642", "\u0143"]),
)
_TEXT = st.text(alphabet=_CHARS, max_size=5)


def _both(function: Any, *args: Any) -> tuple[Any, Any]:
    found = []
    for backend in ("native", "python"):
        with use_backend(backend):
            found.append(function(*args))
    return found[0], found[1]


@settings(deadline=None)
@given(keys=st.lists(_TEXT, max_size=12, unique=True), specials=st.booleans())
def test_vocab_keys_read_the_same_natively_and_in_python(keys: list[str], specials: bool) -> None:
    raw_vocab = {key: i for i, key in enumerate(keys)}
    special = {keys[0]: 0} if specials and keys else {}
    native_result, python_result = _both(_byte_level_vocab, raw_vocab, special)
    assert native_result == python_result


@settings(deadline=None)
@given(
    merges=st.lists(
        st.one_of(
            st.tuples(_TEXT, _TEXT).map(" ".join),
            _TEXT,
            st.lists(_TEXT, min_size=2, max_size=2),
            st.integers(),
        ),
        max_size=8,
    )
)
def test_merges_read_the_same_natively_and_in_python(merges: list[Any]) -> None:
    native_result, python_result = _both(_byte_level_merges, merges)
    assert native_result == python_result


def test_the_kernel_reads_gpt2s_alphabet() -> None:
    with use_backend("native"):
        assert native.byte_level_bytes(["\u0120hi", "\u010a", ""]) == [b" hi", b"\n", b""]
        assert native.byte_level_bytes(["a b"]) is None
        assert native.byte_level_bytes(["\ud800"]) is None
        assert native.byte_level_merges(["\u0120 t", "a "]) == [(b" ", b"t"), (b"a", b"")]
        assert native.byte_level_merges(["a b c"]) is None
        assert native.byte_level_merges([["a", "b"]]) is None  # pairs as lists: read in Python
