"""One way to cut text into pre-tokens (issue 9 item 10): whole non-empty matches, for every caller.

Counting, the Tokenizer and the app all use :mod:`bpe_studio.engine.pretokenize.split`. A pattern with
capturing
groups trains and encodes exactly as the same pattern without them; a pattern that matches the empty string
in some contexts never makes an empty pre-token; a pattern that matches nothing useful is refused up front.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_studio.cli import main
from bpe_studio.engine import Tokenizer, TrainConfig, compile_pattern, train, train_bpe
from bpe_studio.engine.config import InvalidUtf8Policy
from bpe_studio.engine.pretokenize.split import Pretokenizer, pretoken_matches
from bpe_studio.engine.training.counter import ChunkCounter

from ..reference import reference_train
from ..reference_encoder import reference_encode

PLAIN = r"\w+|\s+|[^\w\s]+"
GROUPED = r"(\w+)|(\s)+|(?:[^\w\s])+"
# Patterns that match the empty string only in some contexts (so compile_pattern's probe accepts them).
CONTEXT_EMPTY = [r"(?<=Z)|\w+|\s+|[^\w\s]+", r"(?<=Z)|(\w+)|\s+", r"(?<=\d)(?=[a-z])|[a-z]+|\d+|\s+|Z"]
TEXT = "Hello, world! It's 2024: naïve café 日本語 😀\nZeta aZb 12ab Z9Z\n"


def reference_pretokens(pattern: str, text: str) -> list[str]:
    """The definition: the whole text of every non-empty match, in order."""
    return [m.group() for m in regex.finditer(pattern, text) if m.group()]


def _counter(pattern: str) -> ChunkCounter:
    return ChunkCounter(pattern=pattern, special_tokens=["<|endoftext|>"], policy=InvalidUtf8Policy.ERROR)


def test_grouped_pattern_cuts_like_the_plain_one() -> None:
    assert Pretokenizer(GROUPED).findall(TEXT) == Pretokenizer(PLAIN).findall(TEXT)
    assert all(isinstance(t, str) for t in Pretokenizer(GROUPED).findall(TEXT))


def test_grouped_pattern_trains_and_encodes_like_the_plain_one(tmp_path: Path) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text((TEXT + "<|endoftext|>") * 30, encoding="utf-8")
    specials = ["<|endoftext|>"]
    plain_vocab, plain_merges = train_bpe(corpus, 320, specials, pattern=PLAIN)
    vocab, merges = train_bpe(corpus, 320, specials, pattern=GROUPED)
    assert (vocab, merges) == (plain_vocab, plain_merges)
    ref = reference_train([corpus], 320, specials, pattern=GROUPED)
    assert merges == ref.merges
    plain = Tokenizer(plain_vocab, plain_merges, specials, pattern=PLAIN)
    grouped = Tokenizer(vocab, merges, specials, pattern=GROUPED)
    text = TEXT * 3 + "<|endoftext|>tail"
    assert grouped.encode(text) == plain.encode(text)
    special_ids = {t.decode(): i for i, t in vocab.items() if t == b"<|endoftext|>"}
    assert grouped.encode(text) == reference_encode(text, vocab, merges, special_ids, GROUPED)
    assert [s.id for s in grouped.encode_with_offsets(text)] == grouped.encode(text)
    streamed = list(grouped.encode_iterable([text[:50], text[50:]]))
    assert streamed == grouped.encode(text)


def test_grouped_pattern_on_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text(TEXT * 30, encoding="utf-8")
    args = ["train", str(corpus), "--vocab-size", "300", "--progress", "none", "--format", "gpt2"]
    assert main([*args, "--pattern", GROUPED, "--out", str(tmp_path / "g")]) == 0
    assert main([*args, "--pattern", PLAIN, "--out", str(tmp_path / "p")]) == 0
    assert (tmp_path / "g" / "merges.txt").read_bytes() == (tmp_path / "p" / "merges.txt").read_bytes()
    capsys.readouterr()


@settings(max_examples=300, deadline=None)
@given(
    pattern=st.sampled_from(CONTEXT_EMPTY),
    text=st.text(alphabet="aZb1 9\n.é", max_size=40),
)
def test_context_empty_matches_never_make_a_pretoken(pattern: str, text: str) -> None:
    expected = reference_pretokens(pattern, text)
    assert Pretokenizer(pattern).findall(text) == expected
    assert [m.group() for m in pretoken_matches(compile_pattern(pattern), text)] == expected
    counter = _counter(pattern)
    counter.count_text(text, continues_document=False)
    assert "" not in counter.counts
    assert sum(counter.counts.values()) == counter.totals.pretokens == len(expected)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pattern=st.sampled_from(CONTEXT_EMPTY), text=st.text(alphabet="aZb1 9\n.é", min_size=1, max_size=60))
def test_context_empty_pattern_trains_and_encodes_like_the_reference(
    tmp_path: Path, pattern: str, text: str
) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text(text * 3, encoding="utf-8")
    result = train(TrainConfig(inputs=[corpus], vocab_size=280, pattern=pattern))
    ref = reference_train([corpus], 280, pattern=pattern)
    assert result.merges == ref.merges
    assert result.stats.pretokens == ref.pretokens
    tok = Tokenizer(result.vocab, result.merges, pattern=pattern)
    ids = tok.encode(text)
    assert ids == reference_encode(text, result.vocab, result.merges, {}, pattern)
    spans = tok.encode_with_offsets(text)
    assert [s.id for s in spans] == ids and all(s.end > s.start for s in spans)


@pytest.mark.parametrize("pattern", [r"(?!)", r"xyzzy", r"(?=\w)", r"\b", r"a{0}", ""])
def test_patterns_that_find_nothing_useful_are_refused(pattern: str) -> None:
    with pytest.raises(ValueError, match=r"^pattern: .*(matches nothing|can match the empty string).*; "):
        compile_pattern(pattern)


def test_refused_pattern_on_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text(TEXT, encoding="utf-8")
    code = main(
        ["train", str(corpus), "--vocab-size", "300", "--pattern", "(?!)", "--out", str(tmp_path / "o")]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("bpe-studio: error: pattern: '(?!)' matches nothing") and err.count("\n") == 1
    assert "e.g. \\w+|\\s+|[^\\w\\s]+" in err
    assert not (tmp_path / "o").exists()
