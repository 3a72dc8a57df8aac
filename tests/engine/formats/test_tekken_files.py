"""Mistral's tekken.json: specials first, ranks shifted by their number, the vocab cut at
``default_vocab_size``; ids equal mistral-common's ``Tekkenizer`` (and tiktoken on the same ranks)."""

from __future__ import annotations

import base64
import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_studio.engine import FormatError, load
from bpe_studio.engine.formats import detect_format, display_name
from bpe_studio.engine.formats.tekken import LEGACY_SPECIAL_TOKENS, load_tekken, write_tekken

from ..backends import BACKENDS, use_backend
from ..reference_encoder import trained_tokenizer

# Mistral Nemo's pre-tokenization regex, as its tekken file states it.
NEMO_PATTERN = (
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|"
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|"
    r"\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_settings = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
_text = st.text(st.characters(codec="utf-8"), max_size=80) | st.sampled_from(
    ["Hello world!  \n\n x", "Ça va? 你好 12345 ", "[INST] <s> ", "don't   stop\r\n\tnow"]
)


def _real_files() -> list[Path]:
    """mistral-common's own tekken files (Nemo's, Pixtral's...), when that package is installed."""
    try:
        import mistral_common
    except ImportError:
        return []
    return sorted((Path(mistral_common.__file__).parent / "data").glob("tekken*.json"))


def _tekkenizer(path: Path) -> Any:
    tekken = pytest.importorskip(
        "mistral_common.tokens.tokenizers.tekken", reason="mistral-common is not installed (the reference)"
    )
    return tekken.Tekkenizer.from_file(path)


@pytest.fixture(scope="module")
def small_tekken(cs336_data: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    """A trained tokenizer and its tekken file: Nemo's shape (no special_tokens key, 1000 special ids)."""
    tok = trained_tokenizer(cs336_data, pattern=NEMO_PATTERN, vocab_size=600)
    path = write_tekken(tok, tmp_path_factory.mktemp("tekken") / "tekken.json", num_special=1000, legacy=True)
    return tok, path


def test_specials_come_first_and_ranks_follow(small_tekken: tuple[Any, Path]) -> None:
    tok, path = small_tekken
    loaded = load(path)
    assert detect_format(path) == detect_format(path.parent) == "tekken"
    assert loaded.special_tokens["<unk>"] == 0 and loaded.special_tokens["<s>"] == 1
    assert loaded.special_tokens["[TOOL_CONTENT]"] == 19
    assert loaded.special_tokens["<SPECIAL_999>"] == 999 and len(loaded.special_tokens) == 1000
    assert loaded.vocab[1000 + 65] == b"A"
    assert loaded.vocab_size == 1000 + len(tok.vocab) - len(tok.special_tokens)
    assert loaded.pattern == tok.pattern


@pytest.mark.parametrize("backend", BACKENDS)
def test_ids_equal_tiktoken_on_the_same_ranks_shifted(small_tekken: tuple[Any, Path], backend: str) -> None:
    tiktoken = pytest.importorskip("tiktoken")
    _, path = small_tekken
    document = json.loads(path.read_text(encoding="utf-8"))
    reference = tiktoken.Encoding(
        name="t",
        pat_str=document["config"]["pattern"],
        mergeable_ranks={base64.b64decode(e["token_bytes"]): e["rank"] for e in document["vocab"]},
        special_tokens={},
    )
    with use_backend(backend):
        loaded = load(path)

        @_settings
        @given(text=_text)
        def check(text: str) -> None:
            assert loaded.encode_ordinary(text) == [i + 1000 for i in reference.encode(text)]
            assert loaded.decode(loaded.encode_ordinary(text)) == text.encode("utf-8", "replace").decode(
                "utf-8", "replace"
            )

        check()


@pytest.mark.parametrize("backend", BACKENDS)
def test_ids_equal_mistral_common_on_a_written_file(small_tekken: tuple[Any, Path], backend: str) -> None:
    _, path = small_tekken
    reference = _tekkenizer(path)
    with use_backend(backend):
        loaded = load(path)

        @_settings
        @given(text=_text)
        def check(text: str) -> None:
            assert loaded.encode_ordinary(text) == reference.encode(text, bos=False, eos=False)

        check()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("path", _real_files() or [None], ids=lambda p: p.name if p else "absent")
def test_mistral_files_encode_as_mistral_common(path: Path | None, backend: str) -> None:
    if path is None:
        pytest.skip("mistral-common is not installed: pip install mistral-common for its tekken files")
    reference = _tekkenizer(path)
    with use_backend(backend):
        loaded = load(path)
    assert loaded.vocab_size == reference.n_words  # 131,072: the 150,000 ranks cut to 130,072
    assert {t: loaded.special_tokens[t] for t in ("<unk>", "<s>", "</s>")} == {
        "<unk>": reference.unk_id,
        "<s>": reference.bos_id,
        "</s>": reference.eos_id,
    }
    with use_backend(backend):

        @_settings
        @given(text=_text)
        def check(text: str) -> None:
            assert loaded.encode_ordinary(text) == reference.encode(text, bos=False, eos=False)

        check()
    assert display_name(path) == path.name


def _document(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_default_vocab_size_cuts_the_ranks(small_tekken: tuple[Any, Path], tmp_path: Path) -> None:
    _, path = small_tekken
    document = _document(path)
    document["config"]["default_vocab_size"] = 1000 + 400
    cut = tmp_path / "tekken.json"
    cut.write_text(json.dumps(document), encoding="utf-8")
    loaded = load_tekken(cut)
    assert loaded.vocab_size == 1400 and max(loaded.vocab) == 1399
    text = "the quick brown fox jumps over the lazy dog"
    assert all(i < 1400 for i in loaded.encode_ordinary(text))
    with contextlib.suppress(pytest.skip.Exception):  # mistral-common absent: the ids above suffice
        assert loaded.encode_ordinary(text) == _tekkenizer(cut).encode(text, bos=False, eos=False)


def test_listed_special_tokens_and_fillers(cs336_data: Path, tmp_path: Path) -> None:
    tok = trained_tokenizer(cs336_data, pattern=NEMO_PATTERN, vocab_size=300)
    path = write_tekken(tok, tmp_path / "tekken.json", num_special=5)
    document = _document(path)
    document["special_tokens"] = document["special_tokens"][:3]
    path.write_text(json.dumps(document), encoding="utf-8")
    loaded = load(path)
    assert loaded.special_tokens == {"<unk>": 0, "<s>": 1, "</s>": 2, "<SPECIAL_3>": 3, "<SPECIAL_4>": 4}
    assert loaded.encode("<s>hi", allowed_special="all")[0] == 1
    assert list(LEGACY_SPECIAL_TOKENS[:3]) == ["<unk>", "<s>", "</s>"]


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (lambda d: d["config"].update(version="v11"), "key 'special_tokens': missing; a v11"),
        (lambda d: d["config"].update(default_vocab_size=10**7), "key 'config.default_vocab_size'"),
        (lambda d: d["config"].pop("pattern"), "key 'config.pattern'"),
        (lambda d: d["vocab"][300].update(rank=7), "vocab[300]"),
        (lambda d: d["vocab"][3].update(token_bytes="!!"), "vocab[3].token_bytes"),
        (
            lambda d: d["config"].update(
                default_num_special_tokens=5, default_vocab_size=d["config"]["default_vocab_size"] - 995
            ),
            "key 'special_tokens': 20 special",
        ),
    ],
)
def test_a_broken_file_is_one_line_naming_the_place(
    small_tekken: tuple[Any, Path], tmp_path: Path, change: Any, where: str
) -> None:
    document = _document(small_tekken[1])
    change(document)
    path = tmp_path / "tekken.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(FormatError) as caught:
        load(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: {where}") and "\n" not in message
