"""The engine equals the slow reference trainer on random inputs, whatever the workers or chunk size."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_studio.engine import StopReason, TrainConfig, train, train_bpe

from ..backends import BACKENDS, use_backend
from ..reference import reference_train

ENDOFTEXT = "<|endoftext|>"

# Fragments chosen to exercise the pattern and the merge loop: repeated characters ("aaaa" holds three
# (a, a) pairs), whitespace runs before words and at line ends, newlines, contractions, digits,
# punctuation runs, accented letters, CJK and emoji (multi-byte UTF-8), and pieces of special tokens.
FRAGMENTS = [
    "a",
    "aa",
    "aaaa",
    "ab",
    "ba",
    "abab",
    "the",
    " the",
    "The",
    " cat",
    "cat",
    "s",
    "'s",
    "'ll",
    " ",
    "  ",
    "   ",
    "\n",
    "\n\n",
    " \n",
    "\t",
    "\r\n",
    "1",
    "23",
    " 456",
    "!",
    "?!",
    "...",
    " --",
    "é",
    "café",
    "naïve",
    "日本",
    "語",
    "😀",
    "😀😀",
    "👍🏽",
    "<",
    "|",
    ">",
    "<|",
    "endoftext",
    "x\ny",
    "A\nb",
    "z.\nQ",
    "\u3000",
    "\u00a0",
]

SPECIAL_SETS = [
    (),
    (ENDOFTEXT,),
    (ENDOFTEXT, ENDOFTEXT + ENDOFTEXT),  # overlapping: the longer one must win where both match
    ("<a>", "<b>", "aa"),  # a special token made of ordinary letters
]


@st.composite
def corpora(draw: st.DrawFn, *, max_files: int = 3) -> tuple[list[str], tuple[str, ...]]:
    """Draw 1-3 files of text built from fragments, free text and special tokens, and the special set."""
    specials = draw(st.sampled_from(SPECIAL_SETS))
    piece = st.one_of(
        st.sampled_from(FRAGMENTS),
        st.text(min_size=1, max_size=6),
        st.sampled_from(specials or ("",)),
    )
    files = draw(st.lists(st.lists(piece, max_size=40).map("".join), min_size=1, max_size=max_files))
    if not any(files):
        files[0] = "aaa bb"
    return files, specials


def _write(folder: Path, texts: list[str]) -> list[Path]:
    paths = []
    for i, text in enumerate(texts):
        path = folder / f"part{i}.txt"
        path.write_bytes(text.encode("utf-8"))
        paths.append(path)
    return paths


def _check(texts: list[str], specials: tuple[str, ...], extra: int, **options: object) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        paths = [p for p in _write(Path(tmp), texts) if p.stat().st_size > 0]
        vocab_size = 256 + len(specials) + extra
        ref = reference_train(
            paths,
            vocab_size,
            specials,
            min_frequency=int(options.get("min_frequency", 1)),  # type: ignore[call-overload]
            max_token_length=options.get("max_token_length"),  # type: ignore[arg-type]
        )
        result = train(TrainConfig(inputs=paths, vocab_size=vocab_size, special_tokens=specials, **options))  # type: ignore[arg-type]
    assert result.merges == ref.merges
    assert result.merge_counts == ref.merge_counts
    assert result.vocab == ref.vocab
    assert result.stop_reason.value == ref.stop_reason
    assert result.stats.documents == ref.documents
    assert result.stats.special_tokens == ref.special_tokens
    assert result.stats.pretokens == ref.pretokens
    assert result.stats.unique_pretokens == ref.unique_pretokens


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpora(), st.integers(0, 80), st.integers(1, 64))
def test_matches_reference_in_process(
    backend: str, corpus: tuple[list[str], tuple[str, ...]], extra: int, chunk: int
) -> None:
    texts, specials = corpus
    with use_backend(backend):
        _check(texts, specials, extra, workers=1, chunk_size=chunk)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpora(), st.integers(0, 60), st.integers(1, 32))
def test_matches_reference_with_two_worker_processes(
    corpus: tuple[list[str], tuple[str, ...]], extra: int, chunk: int
) -> None:
    texts, specials = corpus
    _check(texts, specials, extra, workers=2, chunk_size=chunk)


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=80, deadline=None)
@given(corpora(), st.integers(0, 60), st.integers(1, 5), st.sampled_from([None, 2, 3, 5]))
def test_min_frequency_and_max_token_length(
    backend: str,
    corpus: tuple[list[str], tuple[str, ...]],
    extra: int,
    min_frequency: int,
    max_len: int | None,
) -> None:
    texts, specials = corpus
    with use_backend(backend):
        _check(
            texts,
            specials,
            extra,
            workers=1,
            chunk_size=16,
            min_frequency=min_frequency,
            max_token_length=max_len,
        )


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(["gpt2", "cl100k", "o200k", r"\S+|\s+", r"[a-z]+|."]),
    corpora(max_files=2),
    st.integers(1, 40),
)
def test_every_pattern_matches_reference(
    pattern: str, corpus: tuple[list[str], tuple[str, ...]], chunk: int
) -> None:
    texts, specials = corpus
    with tempfile.TemporaryDirectory() as tmp:
        paths = [p for p in _write(Path(tmp), texts) if p.stat().st_size > 0]
        size = 256 + len(specials) + 40
        ref = reference_train(paths, size, specials, pattern=pattern)
        result = train(
            TrainConfig(
                inputs=paths, vocab_size=size, special_tokens=specials, pattern=pattern, chunk_size=chunk
            )
        )
    assert result.merges == ref.merges
    assert result.vocab == ref.vocab


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(st.binary(max_size=6), st.sampled_from([b"ab ", b"\n", b"\xe2\x82", b"\xff"])), max_size=30
    ),
    st.integers(1, 16),
)
def test_invalid_utf8_replace_matches_reference(pieces: list[bytes], chunk: int) -> None:
    data = b"".join(pieces) or b"\xff"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bad.txt"
        path.write_bytes(data)
        ref = reference_train([path], 300, (ENDOFTEXT,), errors="replace")
        result = train(
            TrainConfig(
                inputs=[path],
                vocab_size=300,
                special_tokens=(ENDOFTEXT,),
                chunk_size=chunk,
                invalid_utf8="replace",
            )  # type: ignore[arg-type]
        )
    assert result.merges == ref.merges


def test_split_into_files_at_document_boundaries_changes_nothing(tmp_path: Path) -> None:
    docs = ["the cat sat", "on the mat\n", "aaaa bbbb aaaa", "日本語 😀 the end"]
    one = tmp_path / "one.txt"
    one.write_text(ENDOFTEXT.join(docs), encoding="utf-8")
    parts = _write(tmp_path, [ENDOFTEXT.join(docs[:1]), ENDOFTEXT.join(docs[1:3]), docs[3]])
    a = train(TrainConfig(inputs=[one], vocab_size=300, special_tokens=(ENDOFTEXT,)))
    b = train(TrainConfig(inputs=parts, vocab_size=300, special_tokens=(ENDOFTEXT,)))
    assert a.merges == b.merges and a.vocab == b.vocab
    assert a.stats.documents == b.stats.documents == 4


@pytest.mark.parametrize("backend", BACKENDS)
def test_corpus_en_reproduces_the_cs336_reference(backend: str, cs336_data: Path) -> None:
    with use_backend(backend):
        vocab, merges = train_bpe(cs336_data / "corpus.en", 500, [ENDOFTEXT])
    expected = json.loads((cs336_data / "train-bpe-reference.bytes.json").read_text())
    assert merges == [(bytes(a), bytes(b)) for a, b in expected["merges"]]
    assert set(vocab.values()) == {bytes(v) for v in expected["vocab"].values()}
    assert set(vocab) == set(range(500))


def test_corpus_en_same_with_two_workers_and_small_chunks(cs336_data: Path) -> None:
    base = TrainConfig(
        inputs=[cs336_data / "corpus.en"], vocab_size=400, special_tokens=(ENDOFTEXT,), workers=1
    )
    serial = train(base)
    parallel = train(base.replace(workers=2, chunk_size=2000))
    assert serial.merges == parallel.merges and serial.vocab == parallel.vocab


@pytest.mark.parametrize("backend", BACKENDS)
def test_tinystories_matches_reference(backend: str, cs336_data: Path) -> None:
    path = cs336_data / "tinystories_sample.txt"
    ref = reference_train([path], 400, (ENDOFTEXT,))
    with use_backend(backend):
        result = train(
            TrainConfig(inputs=[path], vocab_size=400, special_tokens=(ENDOFTEXT,), chunk_size=256)
        )
    assert result.merges == ref.merges and result.vocab == ref.vocab
    assert result.stats.documents == ref.documents


def test_no_merged_token_contains_a_special_token(tmp_path: Path) -> None:
    path = tmp_path / "c.txt"
    path.write_text(("hello world" + ENDOFTEXT) * 50 + "<|endoftext" + "|>x", encoding="utf-8")
    result = train(TrainConfig(inputs=[path], vocab_size=400, special_tokens=(ENDOFTEXT,)))
    special = ENDOFTEXT.encode()
    for i, token in result.vocab.items():
        if i != result.special_token_ids[ENDOFTEXT]:
            assert special not in token


def test_vocab_layout_bytes_then_merges_then_specials(tmp_path: Path) -> None:
    path = tmp_path / "c.txt"
    path.write_text("low lower lowest newer wider" * 20, encoding="utf-8")
    result = train(TrainConfig(inputs=[path], vocab_size=270, special_tokens=("<s>", "</s>")))
    assert [result.vocab[i] for i in range(256)] == [bytes([i]) for i in range(256)]
    assert [result.vocab[256 + i] for i in range(12)] == [a + b for a, b in result.merges]
    assert result.vocab[268] == b"<s>" and result.vocab[269] == b"</s>"
    assert result.special_token_ids == {"<s>": 268, "</s>": 269}
    assert result.stop_reason is StopReason.VOCAB_SIZE


def test_runs_out_of_pairs(tmp_path: Path) -> None:
    path = tmp_path / "c.txt"
    path.write_text("ab ab", encoding="utf-8")
    result = train(TrainConfig(inputs=[path], vocab_size=1000))
    assert result.stop_reason is StopReason.NO_PAIRS
    assert result.merges == [(b"a", b"b"), (b" ", b"ab")]
