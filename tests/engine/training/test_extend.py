"""Extending a tokenizer (issue 23): every id, merge and special token kept, the new merges exactly those
training would make next, on both merge loops; the results load in tiktoken and ``tokenizers``."""

from __future__ import annotations

import pickle
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_studio.engine import (
    Tokenizer,
    TrainConfig,
    extend_base,
    load,
    save,
    train,
    train_from_iterator,
)
from bpe_studio.engine.events import MergeMade, TrainResult
from bpe_studio.engine.formats import save_result
from bpe_studio.engine.formats.saving import sample_texts, save_tokenizer
from bpe_studio.engine.training import merge as merge_module
from bpe_studio.engine.training.checkpoint import CountsFileError
from bpe_studio.engine.training.extend import ExtendError, encode_sequentially
from bpe_studio.engine.training.merge import MergeLoop

from ..backends import BACKENDS, needs_native, use_backend

DOCS = [
    "the cat sat on the mat. the hat is flat!\n",
    "a cat, a hat and a bat sat on the mat\n",
    "naïve café: 12345 and 678, that's that.\n",
] * 5


def _cut(result: TrainResult, k: int) -> Tokenizer:
    """The tokenizer of ``result``'s first ``k`` merges (ids are made in merge order: the first ones)."""
    made = {left + right for left, right in result.merges[:k]}
    size = 256 + len(made)
    return Tokenizer({i: result.vocab[i] for i in range(size)}, result.merges[:k])


def _same_run(extended: TrainResult, full: TrainResult, k: int) -> None:
    assert extended.merges == full.merges
    assert extended.vocab == full.vocab
    assert extended.merge_counts[k:] == full.merge_counts[k:]
    assert extended.merge_counts[:k] == [0] * k
    assert extended.base_merges == k
    assert extended.stop_reason == full.stop_reason


corpora = st.lists(st.text(alphabet="ab c\nxé", min_size=1, max_size=40), min_size=1, max_size=8)


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=corpora, extra=st.integers(1, 40), k_share=st.floats(0, 1))
def test_extending_a_cut_of_a_trained_tokenizer_gives_the_trained_tokenizer(
    backend: str, docs: list[str], extra: int, k_share: float
) -> None:
    with use_backend(backend):
        full = train_from_iterator(docs, vocab_size=256 + extra, workers=1)
        k = int(k_share * len(full.merges))
        if k == len(full.merges) and k:
            k -= 1
        base = extend_base(_cut(full, k))
        if len(base.vocab) >= 256 + extra:
            return  # nothing left to learn (duplicate merges made fewer tokens than merges)
        extended = train_from_iterator(docs, vocab_size=256 + extra, workers=1, extend=base)
    _same_run(extended, full, k)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("workers", [1, 2])
def test_extending_on_files_equals_training_with_one_or_more_workers(
    backend: str, workers: int, tmp_path: Path
) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(DOCS) * 20, encoding="utf-8")
    with use_backend(backend):
        config = TrainConfig(inputs=(corpus,), vocab_size=400, workers=workers, chunk_size=2048)
        full = train(config)
        base = extend_base(_cut(full, 40))
        extended = train(config.replace(extend=base))
    _same_run(extended, full, 40)


@needs_native
def test_an_extension_encodes_the_counting_threads_table_as_it_is(tmp_path: Path) -> None:
    # With nothing to write from the counts, the pre-tokens that counting threads counted go from their
    # native table to the merge loop encoded by the tokenizer's rule (ExtendBase.encode_native_tables),
    # never as a dict of str (its encode_arrays path): the same run as the one through the dict (a counts
    # file makes that one). Merges' rule and tiktoken's.
    workers = 2
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(DOCS) * 20 + "ünïcödé \u4e2d\u6587 \U0001f600\n", encoding="utf-8")
    small = train_from_iterator(DOCS, vocab_size=300, special_tokens=["<|endoftext|>"], workers=1)
    for rule_file in (None, "small.tiktoken"):
        tokenizer = Tokenizer.from_result(small)
        if rule_file is not None:  # (tiktoken's rule: a rank file)
            save(tokenizer, tmp_path / rule_file, format="tiktoken")
        base = extend_base(tokenizer if rule_file is None else str(tmp_path / rule_file))
        config = TrainConfig(inputs=(corpus,), vocab_size=380, workers=workers, chunk_size=2048, extend=base)
        from bpe_studio.engine.training.extend import ExtendBase

        with mock.patch.object(ExtendBase, "encode_arrays", side_effect=AssertionError("a dict")):
            direct = train(config)
        through_dict = train(config.replace(counts_out=tmp_path / "counts.bin"))
        (tmp_path / "counts.bin").unlink()
        assert direct.merges == through_dict.merges and direct.vocab == through_dict.vocab
        assert direct.merge_counts == through_dict.merge_counts and len(direct.merges) > len(small.merges)


def test_a_duplicate_merge_in_the_base_is_applied_as_training_made_it() -> None:
    # "abc" then "ab|c" remakes b"abc" after "a|bc": the merges list makes one token twice, so the words
    # are encoded merge after merge (the training's rule), not by rank.
    tokens = [bytes([i]) for i in range(256)] + [b"bc", b"abc", b"ab"]
    merges = [(b"b", b"c"), (b"a", b"bc"), (b"a", b"b"), (b"ab", b"c")]
    words = encode_sequentially(["abcab", "xbc", "abab"], tokens, merges)
    assert [[tokens[i] for i in w] for w in words] == [[b"abc", b"ab"], [b"x", b"bc"], [b"ab", b"ab"]]
    base = extend_base(Tokenizer(dict(enumerate(tokens)), merges))
    assert base.sequential


def test_extending_gpt2_keeps_every_id_and_special_token_and_loads_elsewhere(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.txt"
    # Made-up words: GPT-2 has no token for most of them, so there is much left to merge.
    words = [a + b + c for a in ("zq", "xv", "kj") for b in ("uu", "ee", "oi") for c in ("pt", "rk")]
    corpus.write_text("<|endoftext|>".join([" ".join(words) * 3, *DOCS]) * 4, encoding="utf-8")
    gpt2 = load("gpt2")
    result = train(TrainConfig(inputs=(corpus,), vocab_size=50_257 + 30, extend=extend_base("gpt2")))
    assert len(result.vocab) == 50_287
    assert all(result.vocab[i] == token for i, token in gpt2.vocab.items())
    assert result.special_token_ids == {"<|endoftext|>": 50256}
    assert result.merges[: len(gpt2.merges)] == list(gpt2.merges)
    assert sorted(result.vocab)[-30:] == list(range(50_257, 50_287))
    assert len(set(result.vocab.values())) == len(result.vocab)  # no byte string twice
    tokenizer = Tokenizer.from_result(result)
    texts = [*sample_texts(tokenizer), "".join(DOCS)]
    formats = (("hf", "tokenizers"), ("tiktoken", "tiktoken"), ("gpt2", None), ("studio", None))
    for fmt, other in formats:
        if other is not None:
            pytest.importorskip(other)
        (tmp_path / fmt).mkdir()
        target = tmp_path / fmt if fmt == "gpt2" else tmp_path / fmt / "tokenizer"
        report = save_tokenizer(tokenizer, target, format=fmt, verify_texts=texts)
        if other is not None:
            assert other in report.checked_in, fmt
    reloaded = load(save_result(result, tmp_path / "studio2", format="studio"))
    assert reloaded.encode("the cat sat", allowed_special="all") == tokenizer.encode("the cat sat")


def test_extending_a_rank_file_keeps_tiktokens_rule(tmp_path: Path) -> None:
    tiktoken = pytest.importorskip("tiktoken")
    small = train_from_iterator(DOCS, vocab_size=300, special_tokens=["<|endoftext|>"], workers=1)
    rank_file = tmp_path / "small.tiktoken"
    save(Tokenizer.from_result(small), rank_file, format="tiktoken")
    base = extend_base(str(rank_file))
    assert base.rule == "ranks"
    result = train_from_iterator(DOCS * 3, vocab_size=330, workers=1, extend=base)
    assert result.rule == "ranks"
    assert result.special_token_ids == {"<|endoftext|>": 299}
    assert all(result.vocab[i] == small.vocab[i] for i in range(300))
    tokenizer = Tokenizer.from_result(result)
    assert tokenizer.rule == "ranks"
    out = tmp_path / "out.tiktoken"
    texts = ["".join(DOCS), "x<|endoftext|>y"]
    report = save_tokenizer(tokenizer, out, format="tiktoken", verify_texts=texts)
    assert "tiktoken" in report.checked_in
    assert tiktoken is not None


def test_a_checkpointed_extend_run_resumes_to_the_uninterrupted_run(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(DOCS) * 10, encoding="utf-8")
    small = train(TrainConfig(inputs=(corpus,), vocab_size=280, workers=1))
    base = extend_base(Tokenizer.from_result(small))
    checkpoint = tmp_path / "run.ckpt"
    config = TrainConfig(inputs=(corpus,), vocab_size=320, workers=1, extend=base)
    straight = train(config)
    train(config.replace(vocab_size=300, checkpoint=checkpoint, checkpoint_every=5))
    resumed = train(config.replace(resume=checkpoint))
    assert resumed.merges == straight.merges
    assert resumed.vocab == straight.vocab
    assert resumed.merge_counts == straight.merge_counts
    other = extend_base(_cut(small, 3))
    with pytest.raises(CountsFileError, match="another tokenizer"):
        train(config.replace(resume=checkpoint, extend=other))
    with pytest.raises(CountsFileError, match="another tokenizer"):
        train(TrainConfig(inputs=(corpus,), vocab_size=320, workers=1, resume=checkpoint))


def test_extend_options_that_do_not_fit_are_refused_in_one_line() -> None:
    base = extend_base(Tokenizer({i: bytes([i]) for i in range(256)}, [], ["<s>"]))
    # (checked by the config itself, so a ValueError: the same sentence as with_base's ExtendError)
    with pytest.raises(ValueError, match=r"^vocab_size: 257 is not larger than the 257 tokens"):
        train_from_iterator(["ab"], vocab_size=257, extend=base)
    with pytest.raises(ExtendError, match=r"^special_tokens: an extend run keeps"):
        train_from_iterator(["ab"], vocab_size=300, special_tokens=["<t>"], extend=base)
    with pytest.raises(ExtendError, match=r"^pattern: an extend run pre-tokenizes"):
        train_from_iterator(["ab"], vocab_size=300, pattern="cl100k", extend=base)
    with pytest.raises(ValueError, match=r"^extend: 'gpt2' is not an opened tokenizer"):
        TrainConfig(inputs=("a.txt",), vocab_size=300, extend="gpt2")
    with pytest.raises(ExtendError, match=r"^extend: no-such-tokenizer"):
        extend_base("no-such-tokenizer")


@needs_native
def test_the_native_loop_takes_token_ids_that_are_surrogate_code_points() -> None:
    # Ids 0xD800-0xDFFF are lone surrogates in the words' str: they must reach the kernel (Llama 3 has 128k).
    tokens = [bytes([i % 256]) * (1 + i // 256) for i in range(0xD810)]
    word = chr(0xD800) + chr(0xD801) + chr(0xD800) + chr(0xD801)
    loop = MergeLoop({word: 3}, tokens, backend="native")
    merge = next(loop.run(new_tokens=1))
    assert (merge.left, merge.right, merge.count) == (0xD800, 0xD801, 6)


def test_the_python_loop_indexes_big_tables_of_token_ids() -> None:
    # Above _NUMPY_MIN_CHARS the Python loop indexes with numpy, which reads words as bytes: words of ids
    # above 255 (an extend run's) must take the other path.
    tokens = [bytes([i]) for i in range(256)] + [b"ab", b"cd"]
    with mock.patch.object(merge_module, "_NUMPY_MIN_CHARS", 4):
        loop = MergeLoop({"\u0100\u0101\u0100\u0101": 2, "ab": 1}, tokens, backend="python")
        merge = next(loop.run(new_tokens=1))
    assert (merge.left, merge.right, merge.count) == (256, 257, 4)
    assert loop.token_bytes[-1] == b"abcd"


def test_a_merge_whose_bytes_are_a_token_adds_no_token_but_is_recorded() -> None:
    # A merges list without ("a", "bc") encodes "abcabcabc" as a|bc|a|bc|a|bc though "abc" is a token:
    # extending counts that pair, records the merge, and gives it the existing id (no byte string twice).
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"bc", 257: b"ab", 258: b"abc"}
    base = extend_base(Tokenizer(vocab, [(b"b", b"c"), (b"a", b"b"), (b"ab", b"c")]))
    events: list[object] = []
    result = train_from_iterator(
        ["abcabcabc"] * 3, vocab_size=260, workers=1, extend=base, on_progress=events.append
    )
    assert result.merges[3] == (b"a", b"bc")
    assert result.merges[4] == (b"abc", b"abc")
    assert result.vocab[258] == b"abc" and result.vocab[259] == b"abcabc"
    assert len(result.vocab) == 260
    made = [e for e in events if isinstance(e, MergeMade)]
    assert [(e.index, e.token_id) for e in made] == [(0, 258), (1, 259)]


def test_a_config_that_extends_goes_to_another_process_as_its_source(tmp_path: Path) -> None:
    base = extend_base("gpt2")
    config = TrainConfig(inputs=("a.txt",), vocab_size=50_300, extend=base)
    again = pickle.loads(pickle.dumps(config))
    assert again.extend.fingerprint == base.fingerprint
    assert again.extend.encode_words({"Hello": 1}) == {chr(15496): 1}
    path = tmp_path / "small.json"
    save(Tokenizer({i: bytes([i]) for i in range(256)} | {256: b"ab"}, [(b"a", b"b")]), path)
    opened = extend_base(path)
    blob = pickle.dumps(opened)
    save(Tokenizer({i: bytes([i]) for i in range(256)} | {256: b"ba"}, [(b"b", b"a")]), path)
    with pytest.raises(ExtendError, match=r"^extend: .*small.json changed since it was opened"):
        pickle.loads(blob)
    with pytest.raises(TypeError, match=r"^extend: the tokenizer '<tokenizer>' was given in memory"):
        pickle.dumps(extend_base(load(path)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_tokenizer_whose_ids_have_a_special_token_first_extends_as_the_same_tokens_laid_out_densely(
    backend: str,
) -> None:
    # Loop ids are the ordinary tokens in id order: "<s>" at id 0 shifts every byte, and the new tokens'
    # ids come after the largest; the merges are those of the same tokenizer with the special token last.
    merges = [(b"t", b"h"), (b"th", b"e")]
    dense = {i: bytes([i]) for i in range(256)} | {256: b"th", 257: b"the", 258: b"<s>"}
    shifted = {0: b"<s>"} | {i + 1: bytes([i]) for i in range(256)} | {257: b"th", 258: b"the"}
    with use_backend(backend):
        a = train_from_iterator(
            DOCS, vocab_size=300, workers=1, extend=extend_base(Tokenizer(dense, merges, ["<s>"]))
        )
        b = train_from_iterator(
            DOCS, vocab_size=300, workers=1, extend=extend_base(Tokenizer(shifted, merges, {"<s>": 0}))
        )
    assert a.merges == b.merges and a.merge_counts == b.merge_counts
    assert [a.vocab[i] for i in range(259, 300)] == [b.vocab[i] for i in range(259, 300)]
    assert b.special_token_ids == {"<s>": 0} and a.special_token_ids == {"<s>": 258}
