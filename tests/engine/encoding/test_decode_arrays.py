"""``Tokenizer.decode`` of numpy arrays: both engines name the same (first) id that is not in the
vocabulary, whatever the array's dtype, and refuse an array that is not one row of ids in one sentence."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_studio.engine import Tokenizer, UnknownTokenIdError, load

from ..backends import BACKENDS, needs_native, use_backend

BAD_ARRAYS = {
    "int64 too big": (np.array([15496, 60000, 995, 70000], dtype=np.int64), 60000),
    "uint32 max": (np.array([1, 2**32 - 1, 60000], dtype=np.uint32), 2**32 - 1),
    "int32 negative": (np.array([5, -3, 60000], dtype=np.int32), -3),
    "uint64 huge": (np.array([5, 2**64 - 1], dtype=np.uint64), 2**64 - 1),
    "uint16 fine then int64 negative": (np.array([2, 65535, -1], dtype=np.int64), 65535),
}


_LOADED: dict[str, Tokenizer] = {}


def _gpt2(backend: str) -> Tokenizer:
    """GPT-2 on ``backend`` (loaded once per engine; call inside ``use_backend``)."""
    if backend not in _LOADED:
        _LOADED[backend] = load("gpt2")
    tok = _LOADED[backend]
    assert tok.backend == backend
    return tok


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sorted(BAD_ARRAYS))
def test_the_first_bad_id_is_named_as_a_number(backend: str, case: str) -> None:
    array, bad = BAD_ARRAYS[case]
    with use_backend(backend):
        tok = _gpt2(backend)
        with pytest.raises(UnknownTokenIdError, match=rf"^token id {bad} is not in this tokenizer's vocab"):
            tok.decode(array)
        # The same id when the array's items come as numpy scalars in a list.
        with pytest.raises(UnknownTokenIdError, match=rf"^token id {bad} is not"):
            tok.decode(list(array))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.int64, np.uint32, np.int32, np.uint64, np.uint16])
def test_arrays_of_every_integer_dtype_decode(backend: str, dtype: type) -> None:
    with use_backend(backend):
        tok = _gpt2(backend)
        ids = tok.encode("Hello world, naïve café")
        assert tok.decode(np.array(ids, dtype=dtype)) == "Hello world, naïve café"
        assert tok.decode(np.array([], dtype=dtype)) == ""


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", [(2, 2), (1, 3), ()])
def test_an_array_that_is_not_one_row_is_refused(backend: str, shape: tuple[int, ...]) -> None:
    with use_backend(backend):
        tok = _gpt2(backend)
        array = np.ones(shape, dtype=np.int64)
        with pytest.raises(ValueError, match=r"^ids: .* is not a sequence of token ids; ") as info:
            tok.decode(array)
        assert "ambiguous" not in str(info.value) and "\n" not in str(info.value)
        assert not isinstance(info.value, UnknownTokenIdError)


@needs_native
@settings(max_examples=60, deadline=None)
@given(
    ids=st.lists(st.integers(min_value=-(2**31), max_value=2**32 - 1), min_size=1, max_size=8),
    dtype=st.sampled_from([np.int64, np.uint32, np.int32, np.uint64]),
)
def test_both_engines_name_the_same_id(ids: list[int], dtype: type) -> None:
    info = np.iinfo(dtype)
    array = np.array([i for i in ids if info.min <= i <= info.max] or [0], dtype=dtype)
    outcomes = []
    for backend in ("native", "python"):
        with use_backend(backend):
            tok = _gpt2(backend)
            try:
                outcomes.append(tok.decode(array))
            except UnknownTokenIdError as exc:
                outcomes.append(str(exc))
    assert outcomes[0] == outcomes[1]
    expected = next((int(i) for i in array.tolist() if not 0 <= i < 50257), None)
    if expected is not None:
        assert outcomes[0].startswith(f"token id {expected} is not")
