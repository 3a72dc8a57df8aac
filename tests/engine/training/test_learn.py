"""engine/learn: a text's tokens under the first k merges, followed merge by merge, equal the tokenizer cut
to those k merges on every text and every k."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_studio.engine import Tokenizer, TrainConfig, train
from bpe_studio.engine.encoding.analysis import cut_to_merges
from bpe_studio.engine.training.learn import MergeReplay, replay_to, sample_passage

SPECIAL = "<|endoftext|>"


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Tokenizer:
    from pydoc_data.topics import topics

    text = SPECIAL.join(topics[name] for name in sorted(topics))[:60_000]
    # Repeated letters and runs of spaces, so that merges of equal halves ((a, a)) are learned too.
    text += SPECIAL + "aaaa aaa aa    x\n\n\n" * 50
    path = tmp_path_factory.mktemp("learn") / "corpus.txt"
    path.write_text(text, encoding="utf-8")
    result = train(TrainConfig(inputs=(path,), vocab_size=900, special_tokens=(SPECIAL,)))
    return Tokenizer(result.vocab, result.merges, {SPECIAL: 900})


def _expected(tok: Tokenizer, text: str, k: int) -> list[bytes]:
    cut = cut_to_merges(tok, k)
    return [cut.decode_bytes([i]) for i in cut.encode(text, allowed_special="all")]


TEXTS = [
    "The assert statement is a convenient way to insert debugging assertions.",
    f"first{SPECIAL}second  aaaa aaa\n\n\tdef f(x):   return x  # spaces",
    "café naïve 日本語 🙃🙃 end",
    "",
]


@pytest.mark.parametrize("text", TEXTS)
def test_following_the_merges_equals_the_cut_tokenizer(trained: Tokenizer, text: str) -> None:
    merges = trained.merges
    replay = MergeReplay(text, pattern=trained.pattern, special_tokens=[SPECIAL])
    assert replay.tokens() == _expected(trained, text, 0)
    done = 0
    # In uneven batches, as a run's events arrive.
    for size in (1, 2, 7, 50, 200, 10_000):
        replay.apply(merges[done : done + size])
        done = min(done + size, len(merges))
        assert replay.merges_applied == done
        assert replay.tokens() == _expected(trained, text, done), done
        assert replay.token_count == len(replay.tokens())
    # The history is the token count after each merge that changed it, falling.
    counts = [count for _, count in replay.history]
    assert counts == sorted(counts, reverse=True) and counts[-1] == replay.token_count
    assert all(a[0] < b[0] for a, b in zip(replay.history, replay.history[1:], strict=False))


@settings(max_examples=60, deadline=None)
@given(
    text=st.lists(st.sampled_from([*"ab ae\nthé", SPECIAL, "  ", "aaa", "🙃"]), max_size=40).map("".join),
    k=st.integers(0, 700),
)
def test_any_text_any_k(trained: Tokenizer, text: str, k: int) -> None:
    replay = replay_to(text, trained.merges, k, pattern=trained.pattern, special_tokens=[SPECIAL])
    assert replay.tokens() == _expected(trained, text, k)
    assert b"".join(replay.tokens()) == text.encode("utf-8")


def test_a_sample_passage_is_a_whole_document_cut_at_a_line(tmp_path: Path) -> None:
    short = "tiny"
    long = "".join(f"Line {i} of a long document.\n" for i in range(200))
    other = "".join(f"Another line {i}.\n" for i in range(100))
    data = SPECIAL.join([short, long, other])
    passage = sample_passage(data, special_tokens=[SPECIAL], length=300)
    assert passage.startswith("Line 0 of") and passage.endswith("\n") and len(passage) <= 300
    assert SPECIAL not in passage
    assert sample_passage(data, special_tokens=[SPECIAL], pick=1).startswith("Another line 0")
    assert sample_passage("", special_tokens=[SPECIAL]) == ""
    assert sample_passage("just a little", special_tokens=[SPECIAL]) == "just a little"
