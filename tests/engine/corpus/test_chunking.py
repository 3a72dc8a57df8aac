"""Chunk boundaries: cutting text where the planner may cut never changes its pre-tokens or its counts.

The proof in the docstring of :mod:`bpe_studio.engine.corpus.plan` is checked here on random text: for each
preset and model pattern with a native scanner, the pre-tokens of the whole equal the pre-tokens of the
pieces cut at *every* candidate boundary; decoding is unchanged by the cuts (also with invalid UTF-8 and
``errors="replace"``); and training text on one line (no newline at all) with tiny chunks, in this process
or two workers, equals the reference.
"""

from __future__ import annotations

import itertools
import os
import pickle
import re
import tempfile
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_studio.cli import main
from bpe_studio.engine import TrainConfig, compile_pattern, train
from bpe_studio.engine.corpus.plan import NotRegularFileError, UncuttableTextError, plan_chunks
from bpe_studio.engine.pretokenize.boundary import PRESET_BOUNDARIES
from bpe_studio.engine.pretokenize.patterns import MODEL_PATTERNS
from bpe_studio.engine.pretokenize.split import Pretokenizer

from ..reference import reference_train

# The presets and the models' patterns with a native scanner: the planner cuts text at the same places.
PRESETS = ["gpt2", "cl100k", "o200k", *MODEL_PATTERNS.values()]
CUTS = re.compile(b"|".join(PRESET_BOUNDARIES))
ENDOFTEXT = "<|endoftext|>"

# Pieces that meet at every kind of cut and at near misses: contractions (the "'" after a letter is not a
# cut), punctuation runs before letters (cl100k and o200k take ".Hello" whole), digits next to letters and
# punctuation, whitespace runs and Unicode whitespace before spaces, marks, CJK, "\r\n", "/" after
# punctuation (o200k), upper/lower case changes (o200k).
FRAGMENTS = [
    "a", "Ab", "ABc", "the", " cat", "'s", "'S", "'ll", "'re", "n't", "O'Neil", "'", "''",
    "1", "23", "4567", " 89", "x1", "7a", "a,", "2;", ":3", ".", "...", "?!", "-", "--", "/", "//",
    "(", ")", '"', "{", "}", "[", "]", "_", "`", "~", "@", "#", "$", "%", "&", "*", "+", "=",
    " ", "  ", "   ", "\t", "\n", "\n\n", " \n", "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x85", "\xa0",
    "\u1680", "\u2000", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000",
    "é", "café", "naïve", "e\u0301", "\u0301", "это", "Кот", "日本", "語", "。", "，", "😀", "👍🏽", "ǅ", "ʰ",
    "١٢", "½", "Ⅻ", "ſ", "K",
]  # fmt: skip

texts = st.lists(
    st.one_of(
        st.sampled_from(FRAGMENTS),
        st.text(min_size=1, max_size=4),
        st.text(alphabet=st.characters(max_codepoint=127), min_size=1, max_size=6),
    ),
    max_size=40,
).map("".join)


def _cut(data: bytes) -> list[bytes]:
    """``data`` cut at every candidate boundary of the preset patterns."""
    points = [0, *(m.start() for m in CUTS.finditer(data)), len(data)]
    return [data[a:b] for a, b in itertools.pairwise(points)]


@settings(max_examples=700, deadline=None)
@given(texts)
def test_every_cut_keeps_the_pretokens_of_each_preset(text: str) -> None:
    pieces = [piece.decode("utf-8") for piece in _cut(text.encode("utf-8"))]
    assert "".join(pieces) == text
    for name in PRESETS:
        findall = compile_pattern(name).findall
        whole = findall(text)
        assert [t for piece in pieces for t in findall(piece)] == whole, name
        fast = Pretokenizer(name).findall  # the path the counting workers take
        assert [t for piece in pieces for t in fast(piece)] == whole, name


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.one_of(st.binary(max_size=4), st.sampled_from([f.encode() for f in FRAGMENTS])), max_size=30)
)
def test_cuts_fall_where_a_decoder_is_at_a_character_start(pieces: list[bytes]) -> None:
    data = b"".join(pieces)
    parts = _cut(data)
    whole = data.decode("utf-8", errors="replace")
    assert "".join(part.decode("utf-8", errors="replace") for part in parts) == whole
    for name in PRESETS:
        findall = compile_pattern(name).findall
        decoded = [part.decode("utf-8", errors="replace") for part in parts]
        assert [t for piece in decoded for t in findall(piece)] == findall(whole), name


def test_one_line_text_is_cut_into_many_chunks(tmp_path: Path) -> None:
    path = tmp_path / "one_line.txt"
    path.write_text('Once upon a time, there were 3 cats: {"a":1}. ' * 2000, "utf-8")
    chunks = plan_chunks([path], chunk_size=1000, special_tokens=[], newline_cuts=True)
    assert len(chunks) > 80
    assert max(c.size for c in chunks) < 1100
    assert all(a.end == b.start for a, b in itertools.pairwise(chunks))
    # A custom pattern cannot be cut without special tokens.
    assert len(plan_chunks([path], chunk_size=1000, special_tokens=[], newline_cuts=False)) == 1


@pytest.mark.parametrize(("pattern", "cut"), [(MODEL_PATTERNS["llama3"], True), (r"\w+|\s+|[^\w\s]+", False)])
def test_training_on_a_models_pattern_cuts_text_as_for_a_preset(
    tmp_path: Path, pattern: str, cut: bool
) -> None:
    # Llama 3's pattern is no preset, but the preset cuts hold for it: one line is cut into many chunks.
    path = tmp_path / "one_line.txt"
    path.write_text("Once upon a time, there were 3 cats. " * 200, "utf-8")
    asked: list[bool] = []

    def spy(*args: Any, **kwargs: Any) -> Any:
        asked.append(kwargs["newline_cuts"])
        return plan_chunks(*args, **kwargs)

    with mock.patch("bpe_studio.engine.training.trainer.plan_chunks", spy):
        train(TrainConfig(inputs=[path], vocab_size=270, pattern=pattern, chunk_size=100, workers=1))
    assert asked == [cut]


@st.composite
def one_line_corpora(draw: st.DrawFn) -> tuple[str, tuple[str, ...]]:
    specials = draw(st.sampled_from([(), (ENDOFTEXT,), ("a b", "<s>")]))
    piece = st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=4), st.sampled_from(specials or ("",)))
    text = draw(st.lists(piece, max_size=40).map("".join)).replace("\n", " ")
    return text or "aa bb", specials


def _check(text: str, specials: tuple[str, ...], pattern: str, **options: object) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "one_line.txt"
        path.write_bytes(text.encode("utf-8"))
        size = 256 + len(specials) + 40
        ref = reference_train([path], size, specials, pattern=pattern)
        config = TrainConfig(inputs=[path], vocab_size=size, special_tokens=specials, pattern=pattern)
        result = train(config.replace(**options))
    assert result.merges == ref.merges and result.vocab == ref.vocab
    assert result.stats.pretokens == ref.pretokens
    assert result.stats.unique_pretokens == ref.unique_pretokens
    assert result.stats.documents == ref.documents


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(one_line_corpora(), st.sampled_from(PRESETS), st.integers(1, 24))
def test_one_line_counts_equal_the_reference_for_any_chunk_size(
    corpus: tuple[str, tuple[str, ...]], pattern: str, chunk: int
) -> None:
    _check(*corpus, pattern, workers=1, chunk_size=chunk)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(one_line_corpora(), st.sampled_from(PRESETS), st.integers(1, 16))
def test_one_line_counts_equal_the_reference_with_two_workers(
    corpus: tuple[str, tuple[str, ...]], pattern: str, chunk: int
) -> None:
    _check(*corpus, pattern, workers=2, chunk_size=chunk)


def test_a_stretch_without_a_cut_is_bounded(tmp_path: Path) -> None:
    path = tmp_path / "dna.txt"
    path.write_text("ab cd " + "ACGT" * 1000 + " tail", "utf-8")  # one 4,000-letter word
    with pytest.raises(UncuttableTextError) as caught:
        plan_chunks([path], chunk_size=4, special_tokens=[], newline_cuts=True, max_uncut=1000)
    assert caught.value.path == str(path) and caught.value.offset == 5
    assert "put newlines or a special token" in str(caught.value)
    copy = pickle.loads(pickle.dumps(caught.value))  # it travels from the app's training process
    assert str(copy) == str(caught.value) and copy.offset == 5
    # Within the limit the chunk grows to the next cut; without a limit, to the end.
    grown = plan_chunks([path], chunk_size=4, special_tokens=[], newline_cuts=True, max_uncut=5000)
    assert [c.size for c in grown] == [5, 4001, 5]
    assert len(plan_chunks([path], chunk_size=4, special_tokens=[], newline_cuts=False, max_uncut=None)) == 1
    with pytest.raises(UncuttableTextError, match=r"put a special token .* or use a preset pattern"):
        plan_chunks([path], chunk_size=4, special_tokens=[], newline_cuts=False, max_uncut=1000)


def test_the_cli_says_how_to_fix_an_uncuttable_corpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "dna.txt"
    path.write_text("ACGT" * 2000, "utf-8")
    assert plan_chunks.__kwdefaults__ is not None
    monkeypatch.setitem(plan_chunks.__kwdefaults__, "max_uncut", 1000 - TrainConfig.chunk_size)
    code = main(["train", str(path), "--vocab-size", "300", "--out", str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"bpe-studio: error: {path}: the 1,000 bytes after byte offset 0 hold no place")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_the_cli_says_how_to_fix_an_uncuttable_superword_corpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A superword run cuts its corpus only at special tokens, whatever the pattern: the message said
    "with a custom pattern" and advised newlines or a preset pattern, which do not help there."""
    path = tmp_path / "lines.txt"
    path.write_text("the cat sat on the mat\n" * 100, "utf-8")
    assert plan_chunks.__kwdefaults__ is not None
    monkeypatch.setitem(plan_chunks.__kwdefaults__, "max_uncut", 1000 - TrainConfig.chunk_size)
    args = ["train", str(path), "--vocab-size", "300", "--superword-transition", "280", "--quiet"]
    code = main([*args, "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "only at a special token, with a custom pattern or in a superword run" in err
    assert "put a special token (CLI: --special-token '<|endoftext|>') between documents" in err
    assert "put newlines" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_planning_refuses_what_is_not_a_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(NotRegularFileError, match="save the text to a file first"):
        plan_chunks([fifo], chunk_size=100, special_tokens=[], newline_cuts=True)
