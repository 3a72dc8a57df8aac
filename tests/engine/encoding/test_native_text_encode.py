"""Text to ids in one native call (``Encoder.encode_text`` / ``encode_batch`` / ``encode_join`` in
rust/src/encode.rs): for the preset patterns the native scanner splits the text and the native BPE merges
it. The ids must equal the pure-Python path (``BPE_STUDIO_PURE=1``: ``regex`` split, Python BPE) on random
Unicode text with special tokens, for gpt2, cl100k and o200k, also in batches and on threads."""

from __future__ import annotations

import json
import tempfile
import threading
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_studio.engine import Tokenizer, TrainConfig, load, train
from bpe_studio.engine import native as engine_native
from bpe_studio.engine.corpus.sources import BadRecordError
from bpe_studio.engine.encoding import corpus_encoding
from bpe_studio.engine.encoding import tokenizer as tokenizer_module
from bpe_studio.engine.encoding.corpus_encoding import EncodeProgress, encode_corpus, iter_encode_corpus
from bpe_studio.engine.formats import save_result

from ...processes import assert_no_leftover_processes
from ..backends import needs_native, use_backend
from ..corpus.test_corpus_formats import FORMATS, documents_strategy, write_as
from ..reference_encoder import SPECIAL
from .test_native_encode import _pair

pytestmark = needs_native

PRESETS = ("gpt2", "cl100k", "o200k")

# Pieces that decide cuts: contractions in all cases (and the long s), whitespace mixes, digits, marks,
# CJK, astral characters, lone and paired surrogates, and the special tokens (also cut and doubled).
_PIECES = [
    "'s", "'S", "'ſ", "'ll", "'LL", "'ve", "'Re", "'d", "'t", "'m", "'x", " ", "  ", "\n", "\r\n", "\t",
    "\u00a0", "\u3000", " \n ", "123", "4567", "٣", "Ⅻ", "é", "e\u0301", "ǅ", "ʰ", "中文", "🙃", "𝔘",
    "\U0010ffff", "\ud83d", "\ude43", "\ud83d\ude43", "ABC", "abc", "Abc", ".", "!?", "_", "$",
    SPECIAL, SPECIAL + SPECIAL, SPECIAL[:5], SPECIAL[5:],
]  # fmt: skip
texts = st.lists(
    st.one_of(st.sampled_from(_PIECES), st.text(max_size=6), st.characters().map(str)), max_size=30
).map("".join)
check = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("native-text-encode")


def _tokenizers(kind: str, data: Path, folder: Path) -> tuple[Tokenizer, Tokenizer]:
    python, native = _pair(kind, data, folder)
    assert python.backend == "python" and native.backend == "native"
    assert native.pattern_name == kind and native._encoder.preset == kind
    return python, native


@check
@given(text=texts, kind=st.sampled_from(PRESETS))
def test_text_encode_equals_python(cs336_data: Path, folder: Path, text: str, kind: str) -> None:
    python, native = _tokenizers(kind, cs336_data, folder)
    assert native.encode(text) == python.encode(text)
    assert native.encode_ordinary(text) == python.encode_ordinary(text)
    plain: dict[str, Any] = {"allowed_special": set(), "disallowed_special": ()}
    assert native.encode(text, **plain) == python.encode(text, **plain)


@check
@given(batch=st.lists(texts, max_size=8), kind=st.sampled_from(PRESETS), threads=st.integers(1, 4))
def test_batches_equal_one_text_at_a_time(
    cs336_data: Path, folder: Path, batch: list[str], kind: str, threads: int
) -> None:
    python, native = _tokenizers(kind, cs336_data, folder)
    expected = [python.encode(text) for text in batch]
    assert native.encode_batch(batch, num_threads=threads) == expected
    assert python.encode_batch(batch, num_threads=threads) == expected
    ordinary = [python.encode_ordinary(text) for text in batch]
    assert native.encode_ordinary_batch(batch, num_threads=threads) == ordinary
    assert python.encode_ordinary_batch(batch, num_threads=threads) == ordinary


@check
@given(batch=st.lists(texts, max_size=6), kind=st.sampled_from(PRESETS), wide=st.booleans())
def test_encode_join_writes_the_ids_and_separators(
    cs336_data: Path, folder: Path, batch: list[str], kind: str, wide: bool
) -> None:
    python, native = _tokenizers(kind, cs336_data, folder)
    separator = python.special_tokens[SPECIAL]
    expected: list[int] = []
    for i, text in enumerate(batch):
        expected += ([separator] if i else []) + python.encode_ordinary(text)
    width = 4 if wide else 2
    assert python._encode_joined(batch, separator=separator, width=width) is None
    raw = native._encode_joined(batch, separator=separator, width=width)
    assert raw is not None
    assert [int.from_bytes(raw[i : i + width], "little") for i in range(0, len(raw), width)] == expected


def test_the_native_path_does_not_split_in_python(cs336_data: Path, folder: Path) -> None:
    python, native = _tokenizers("o200k", cs336_data, folder)
    text = "It's 2024: naïve 中文 🙃 code_x = 12345;\r\n\n  end" + SPECIAL + "more"

    def refuse(_: str) -> list[str]:
        raise AssertionError("split in Python")

    saved = native._split
    try:
        native._split = refuse
        assert native.encode(text) == python.encode(text)
        assert native.encode_batch([text, text], num_threads=2) == [python.encode(text)] * 2
    finally:
        native._split = saved


def test_class_table_grows_on_demand(cs336_data: Path, folder: Path) -> None:
    python, native = _tokenizers("cl100k", cs336_data, folder)
    assert isinstance(native._encoder, engine_native.NativeEncoder)
    raw = native._encoder._encoder  # the extension's Encoder, which answers in the class-table protocol
    # A table too short for the text: the native call answers with the first code point beyond it.
    assert raw.encode_text("cl100k", "ab é", b"\x02" * 50) == ord("a")
    assert raw.encode_text("cl100k", "ab é", engine_native._class_table(128)) == ord("é")
    assert raw.encode_batch("cl100k", ["ab", "x🙃"], engine_native._class_table(0x10000), threads=2) == ord(
        "🙃"
    )
    saved = engine_native._classes[0]
    try:
        engine_native._classes[0] = b""
        text = "Ab 1 é 中 𝔘 🙃"
        assert native.encode(text) == python.encode(text)
        assert len(engine_native._classes[0]) == 0x110000
    finally:
        engine_native._classes[0] = saved


@pytest.mark.parametrize("kind", PRESETS)
def test_long_texts_are_scanned_in_blocks_with_the_same_ids(
    cs336_data: Path, folder: Path, kind: str
) -> None:
    # Over 1 MiB a text is scanned in blocks cut after "<printable ASCII>\n" before an ASCII letter; a
    # character beyond the class table in a late block leaves no ids of the early ones behind.
    python, native = _tokenizers(kind, cs336_data, folder)
    corpus = (cs336_data / "corpus.en").read_text(encoding="utf-8")
    cuts = "x.\nAb it's\n\nIt\n 12\nz\r\nq'S\n'll\n"
    text = (corpus[:300_000] + cuts) * 9 + "naïve 🙃 𝔘 end"
    no_cuts = "ab " * 500_000 + "中文"
    # Newlines just past the first 1 MiB where a cut would change pre-tokens (whitespace runs, "'ll").
    tricky = "x\n\n b\n\n\nIt\n \n'll\n\r\nA\n\tq\n\u00a0z\n'S"
    near = ["ab " * ((1 << 20) // 3) + "c" * shift + tricky for shift in range(6)]
    saved = engine_native._classes[0]
    try:
        for sample in (text, no_cuts, *near):
            engine_native._classes[0] = engine_native._class_table(128)
            assert native.encode_ordinary(sample) == python.encode_ordinary(sample)
    finally:
        engine_native._classes[0] = saved


@check
@given(
    parts=st.lists(
        st.one_of(texts, st.sampled_from(["x.\nAb", "1\nz", "?\nQ", "a\n\nb", "\n"])), max_size=12
    ),
    kind=st.sampled_from(PRESETS),
)
def test_streaming_cuts_at_safe_newlines_natively(
    cs336_data: Path, folder: Path, parts: list[str], kind: str
) -> None:
    # Each part is one chunk and is worked on at once (_STREAM_BLOCK = 1), so the stream cuts often.
    python, native = _tokenizers(kind, cs336_data, folder)
    text = "".join(parts)
    with mock.patch.object(tokenizer_module, "_STREAM_BLOCK", 1):
        assert list(native.encode_iterable(parts)) == python.encode(text)
        assert list(python.encode_iterable(parts)) == python.encode(text)


def test_streaming_needs_no_python_split_where_lines_start_with_letters(
    cs336_data: Path, folder: Path
) -> None:
    python, native = _tokenizers("gpt2", cs336_data, folder)
    lines = [f"Line {i}: it's the cat's 2nd mat, naïve 中文.\n" for i in range(5000)]
    calls: list[int] = []
    split = native._split

    def counted(text: str) -> list[str]:
        calls.append(len(text))
        return split(text)

    native._split = counted
    try:
        assert list(native.encode_iterable(lines)) == python.encode("".join(lines))
    finally:
        native._split = split
    assert calls == []


def test_unknown_preset_and_width_are_errors(cs336_data: Path, folder: Path) -> None:
    _, native = _tokenizers("gpt2", cs336_data, folder)
    assert isinstance(native._encoder, engine_native.NativeEncoder)
    raw = native._encoder._encoder
    with pytest.raises(ValueError, match="gpt2, cl100k, o200k, llama3"):
        raw.encode_text("llama", "x", b"")
    with pytest.raises(ValueError, match="width must be 2 or 4"):
        raw.encode_join("gpt2", ["x"], b"", separator=None, width=3)
    with pytest.raises(ValueError, match="num_threads"):
        native.encode_ordinary_batch(["x"], num_threads=0)


def test_threads_encode_side_by_side(cs336_data: Path, folder: Path) -> None:
    python, native = _tokenizers("gpt2", cs336_data, folder)
    corpus = (cs336_data / "corpus.en").read_text(encoding="utf-8")
    texts = [corpus[n * 1999 :][:20000] for n in range(6)]
    expected = [python.encode(t) for t in texts]
    found: dict[int, list[int]] = {}
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for _ in range(3):
                found[n] = native.encode_ordinary(texts[n])
            assert native.encode_ordinary_batch(texts, num_threads=3) == expected
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(len(texts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors and [found[n] for n in range(len(texts))] == expected
    # Each cache of the pool stays within the limit.
    assert native.backend == "native" and 0 < len(native._encoder) <= native.cache_size


def test_custom_pattern_keeps_the_python_split(cs336_data: Path, folder: Path) -> None:
    _, native = _tokenizers("gpt2", cs336_data, folder)
    custom = Tokenizer(native.vocab, native.merges, dict(native.special_tokens), pattern=r"\S+|\s+")
    assert custom.backend == "native" and custom._encoder.preset is None
    assert custom.encode_batch(["a b", "c  d"]) == [custom.encode("a b"), custom.encode("c  d")]


# encode-corpus on threads: with the native encoder the tasks run on threads of one process (and each
# task's rows come from encode_join); the result must be what the worker processes give, document by
# document equal to encode_ordinary.


@pytest.fixture(scope="module")
def corpus_tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("corpus-tok")
    corpus = folder / "c.txt"
    corpus.write_text(
        SPECIAL.join(f"doc {i}: the cat sat on the mat, naïvely 日本語 😀 {i * 7}\n" for i in range(200)),
        encoding="utf-8",
    )
    result = train(TrainConfig(inputs=[corpus], vocab_size=400, special_tokens=[SPECIAL]))
    return save_result(result, folder / "tokenizer.json")


def _expected_rows(tokenizer: Tokenizer, documents: list[str]) -> list[int]:
    ids: list[int] = []
    for i, document in enumerate(documents):
        ids += ([tokenizer.special_tokens[SPECIAL]] if i else []) + tokenizer.encode_ordinary(document)
    return ids


def _encode_file(
    tokenizer_file: Path, documents: list[str], name: str, chunk: int
) -> tuple[list[int], list[int]]:
    """(ids encode-corpus writes with 2 workers, ids expected) for ``documents`` written as ``name``."""
    import numpy as np

    with tempfile.TemporaryDirectory() as tmp:
        path = write_as(Path(tmp), documents, name)
        out = Path(tmp) / "ids.npy"
        summary = encode_corpus(tokenizer_file, [path], out, separator=SPECIAL, workers=2, chunk_size=chunk)
        values = np.load(out).tolist()
        assert summary.ids == len(values)
        assert sorted(p.name for p in Path(tmp).iterdir()) == sorted([path.name, "ids.npy"])
    # In a text file a separator inside a document splits it.
    split = SPECIAL.join(documents).split(SPECIAL) if name.startswith("c.txt") else documents
    return values, _expected_rows(load(tokenizer_file), split)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents_strategy, st.sampled_from([*FORMATS, "c.txt"]), st.integers(1, 64))
def test_encode_corpus_on_threads_equals_encode_ordinary(
    corpus_tokenizer: Path, documents: list[str], name: str, chunk: int
) -> None:
    with mock.patch.object(corpus_encoding, "_encode_parallel", side_effect=AssertionError("processes")):
        values, expected = _encode_file(corpus_tokenizer, documents, name, chunk)
    assert values == expected


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents_strategy, st.sampled_from([*FORMATS, "c.txt"]), st.integers(1, 32))
def test_encode_corpus_in_processes_on_the_python_path(
    corpus_tokenizer: Path, documents: list[str], name: str, chunk: int
) -> None:
    no_threads = mock.patch.object(corpus_encoding, "_encode_threaded", side_effect=AssertionError("threads"))
    with use_backend("python"), no_threads:
        values, expected = _encode_file(corpus_tokenizer, documents, name, chunk)
    assert values == expected
    assert_no_leftover_processes(timeout=10)


def test_encode_corpus_threads_report_a_bad_record_as_one_worker_does(
    corpus_tokenizer: Path, tmp_path: Path
) -> None:
    lines = [json.dumps({"text": f"document {i} the cat"}) for i in range(400)]
    lines[321] = "{not json"
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    messages = []
    for workers in (1, 2):
        with pytest.raises(BadRecordError) as caught:
            encode_corpus(corpus_tokenizer, [path], tmp_path / "ids.npy", workers=workers, chunk_size=256)
        messages.append(str(caught.value))
    assert messages[0] == messages[1] and "line 322" in messages[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.jsonl"]


def test_encode_corpus_threads_stop_on_cancel(corpus_tokenizer: Path, tmp_path: Path) -> None:
    path = tmp_path / "c.txt"
    path.write_text(SPECIAL.join(f"document {i}: the cat sat on the mat " * 20 for i in range(2000)))
    before = threading.active_count()
    stop = threading.Event()
    items = []
    for item in iter_encode_corpus(
        corpus_tokenizer, [path], tmp_path / "ids.npy", workers=2, chunk_size=4096, cancel=stop.is_set
    ):
        items.append(item)
        stop.set()
    assert items and all(isinstance(item, EncodeProgress) for item in items)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.txt"]
    assert threading.active_count() == before  # the pool's threads are gone
