"""TrainConfig validates every field with a ValueError that names the field and the fix."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_studio.engine import PATTERNS, TrainConfig, compile_pattern, preflight


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "c.txt"
    path.write_text("hello world", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("changes", "field", "hint"),
    [
        ({"vocab_size": 255}, "vocab_size", "at least 256"),
        ({"vocab_size": 256, "special_tokens": ("<s>",)}, "vocab_size", "= 257"),
        ({"vocab_size": "300"}, "vocab_size", "not an integer"),
        ({"vocab_size": 0x110001}, "vocab_size", "too large"),
        ({"special_tokens": ("",)}, "special_tokens", "empty string"),
        ({"special_tokens": ("<s>", "<s>")}, "special_tokens", "listed twice"),
        ({"special_tokens": "<s>"}, "special_tokens", "a single string"),
        ({"pattern": "(unclosed"}, "pattern", "does not compile"),
        ({"pattern": r"a*"}, "pattern", "empty string"),
        ({"pattern": r"\s*|\w+"}, "pattern", "empty string"),
        ({"pattern": ""}, "pattern", "preset name"),
        ({"workers": 0}, "workers", "positive integer"),
        ({"min_frequency": 0}, "min_frequency", "at least 1"),
        ({"max_token_length": 1}, "max_token_length", "at least 2"),
        ({"chunk_size": 0}, "chunk_size", "positive"),
        ({"invalid_utf8": "ignore"}, "invalid_utf8", "'error' or 'replace'"),
    ],
)
def test_invalid_values_name_the_field_and_the_fix(
    corpus: Path, changes: dict, field: str, hint: str
) -> None:
    options = {"inputs": [corpus], "vocab_size": 300, **changes}
    with pytest.raises(ValueError, match=field) as info:
        TrainConfig(**options)
    assert hint in str(info.value)
    assert str(info.value).startswith(f"{field}:")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"inputs: .*nope\.txt does not exist"):
        preflight(TrainConfig(inputs=[tmp_path / "nope.txt"], vocab_size=300))


def test_folder_instead_of_file(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a regular file"):
        preflight(TrainConfig(inputs=[tmp_path], vocab_size=300))


def test_unreadable_file(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Root (as in CI) can read any file whatever its mode, so the permission check is simulated.
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    with pytest.raises(ValueError, match="not readable"):
        preflight(TrainConfig(inputs=[corpus], vocab_size=300))


def test_empty_corpus(tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match="inputs: the corpus is empty"):
        preflight(TrainConfig(inputs=[empty], vocab_size=300))


def test_no_inputs() -> None:
    with pytest.raises(ValueError, match="inputs: no corpus file"):
        TrainConfig(inputs=[], vocab_size=300)


def test_defaults_and_normalisation(corpus: Path) -> None:
    cfg = TrainConfig(inputs=str(corpus), vocab_size=300, special_tokens=["<|endoftext|>"])  # type: ignore[arg-type]
    assert cfg.inputs == (corpus,)
    assert cfg.special_tokens == ("<|endoftext|>",)
    assert cfg.pattern == "gpt2" and cfg.pattern_regex == PATTERNS["gpt2"]
    assert cfg.effective_workers >= 1
    with pytest.raises(AttributeError):
        cfg.vocab_size = 5  # type: ignore[misc]
    assert cfg.replace(vocab_size=400).vocab_size == 400


def test_presets_compile() -> None:
    for name in PATTERNS:
        assert compile_pattern(name).findall("Hello world's 123!") != []
    assert compile_pattern(r"\w+|\s+").findall("a b") == ["a", " ", "b"]


# --------------------------------------------------------------------------------------------------
# A pure value: types and ranges only, no file system


def test_construction_and_replace_read_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    touched: list[str] = []

    def no_io(name: str) -> object:
        def refuse(*args: object, **kwargs: object) -> None:
            touched.append(name)
            raise OSError(f"TrainConfig called {name}")

        return refuse

    missing = tmp_path / "not-yet" / "corpus.txt"
    with monkeypatch.context() as patched:
        for name in ("stat", "lstat", "access", "open", "scandir"):
            patched.setattr(os, name, no_io(name))
        patched.setattr("builtins.open", no_io("open"))
        try:
            cfg = TrainConfig(
                inputs=[missing],
                vocab_size=300,
                counts_out=tmp_path / "nowhere" / "c.counts",
                checkpoint=tmp_path / "nowhere" / "c.ckpt",
                cluster="local:2",
            )
            again = cfg.replace(vocab_size=400, inputs=[], resume=tmp_path / "missing.ckpt")
        except (OSError, ValueError) as exc:
            raise AssertionError(f"TrainConfig touched the file system: {exc}") from None
    assert touched == []
    assert again.vocab_size == 400 and again.resume == tmp_path / "missing.ckpt"
    with pytest.raises(ValueError, match="does not exist"):
        preflight(cfg)


NUMERIC_FIELDS = {
    "vocab_size": 300,
    "workers": 2,
    "min_frequency": 1,
    "max_token_length": 4,
    "chunk_size": 1000,
    "checkpoint_every": 10,
}
OPTIONAL_NUMBERS = {"workers", "max_token_length"}


@pytest.mark.parametrize("field", sorted(NUMERIC_FIELDS))
@pytest.mark.parametrize("value", [True, False])
def test_bool_is_refused_for_every_numeric_field(field: str, value: bool) -> None:
    options: dict[str, object] = {"inputs": ["c.txt"], "vocab_size": 300, field: value}
    with pytest.raises(ValueError, match=rf"^{field}: {value} is a bool, not a number; give an integer"):
        TrainConfig(**options)  # type: ignore[arg-type]


@settings(max_examples=150, deadline=None)
@given(
    field=st.sampled_from(sorted(NUMERIC_FIELDS)),
    value=st.one_of(
        st.booleans(),
        st.floats(allow_nan=True),
        st.text(max_size=5),
        st.lists(st.integers(), max_size=2),
        st.just(b"300"),
        st.just(object()),
    ),
)
def test_wrong_types_for_numbers_name_the_field(field: str, value: object) -> None:
    options: dict[str, object] = {"inputs": ["c.txt"], "vocab_size": 300, field: value}
    with pytest.raises(ValueError) as info:
        TrainConfig(**options)  # type: ignore[arg-type]
    message = str(info.value)
    assert message.startswith(f"{field}: ") and ("integer" in message or "whole number" in message)


@settings(max_examples=60, deadline=None)
@given(field=st.sampled_from(sorted(NUMERIC_FIELDS)), value=st.integers(min_value=2, max_value=100_000))
def test_integers_and_integer_types_are_taken(field: str, value: int) -> None:
    np = pytest.importorskip("numpy")
    number = 256 + value if field == "vocab_size" else value
    for given_value in (number, np.int64(number)):
        options: dict[str, object] = {"inputs": ["c.txt"], "vocab_size": 300, field: given_value}
        cfg = TrainConfig(**options)  # type: ignore[arg-type]
        assert getattr(cfg, field) == number and type(getattr(cfg, field)) is int


@pytest.mark.parametrize("field", sorted(NUMERIC_FIELDS))
def test_none_only_where_optional(field: str) -> None:
    options: dict[str, object] = {"inputs": ["c.txt"], "vocab_size": 300, field: None}
    if field in OPTIONAL_NUMBERS:
        assert getattr(TrainConfig(**options), field) is None  # type: ignore[arg-type]
    else:
        with pytest.raises(ValueError, match=rf"^{field}: None is not an integer"):
            TrainConfig(**options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"special_tokens": "<s>"}, r"^special_tokens: '<s>' is a single string.*e\.g\. \['<s>'\]"),
        ({"special_tokens": {"<s>", "</s>"}}, r"^special_tokens: .* is a set.*pass a list or tuple"),
        ({"special_tokens": frozenset({"<s>"})}, r"^special_tokens: .* is a set.*pass a list or tuple"),
        ({"special_tokens": {"<s>": 1}}, r"^special_tokens: .*not a list or tuple"),
        ({"special_tokens": 5}, r"^special_tokens: 5 is not a list or tuple"),
        ({"special_tokens": (b"<s>",)}, r"^special_tokens: b'<s>' is not a string"),
        ({"inputs": {"a.txt", "b.txt"}}, r"^inputs: .* is a set.*pass a list or tuple"),
        ({"inputs": [3]}, r"^inputs: 3 is not a path"),
        ({"inputs": 3}, r"^inputs: 3 is not a list or tuple"),
        ({"inputs": [""]}, r"^inputs: the empty string is not a path"),
        ({"counts_in": 7}, r"^counts_in: 7 is not a path"),
        ({"checkpoint": b"x.ckpt"}, r"^checkpoint: b'x.ckpt' is not a path"),
        ({"resume": ["x.ckpt"]}, r"^resume: \['x.ckpt'\] is not a path"),
        ({"cluster": 8786}, r"^cluster: 8786 is not a string"),
        ({"pattern": None}, r"^pattern: give a preset name"),
        ({"invalid_utf8": None}, r"^invalid_utf8: None is not a policy"),
        ({"urls": ["data/a.txt"]}, r"^urls: 'data/a.txt' is not a URL"),
    ],
)
def test_wrong_types_name_the_field_and_the_fix(changes: dict[str, object], message: str) -> None:
    options: dict[str, object] = {"inputs": ["c.txt"], "vocab_size": 300, **changes}
    with pytest.raises(ValueError, match=message):
        TrainConfig(**options)  # type: ignore[arg-type]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=4), min_size=1, max_size=4, unique=True))
def test_special_tokens_keep_the_order_given(tokens: list[str]) -> None:
    cfg = TrainConfig(inputs=["c.txt"], vocab_size=300, special_tokens=tokens)  # type: ignore[arg-type]
    assert cfg.special_tokens == tuple(tokens)
    assert TrainConfig(inputs=["c.txt"], vocab_size=300, special_tokens=iter(tokens)).special_tokens == tuple(  # type: ignore[arg-type]
        tokens
    )


@pytest.mark.parametrize(
    ("specials", "message"),
    [("<s>", r"single string.*pass a list, e\.g\. \['<s>'\]"), ({"<s>", "</s>"}, "is a set")],
)
def test_train_bpe_refuses_a_bare_string_or_a_set(corpus: Path, specials: object, message: str) -> None:
    from bpe_studio.engine import train_bpe

    with pytest.raises(ValueError, match=message):
        train_bpe(corpus, 300, specials)  # type: ignore[arg-type]
