"""Superword (SuperBPE) training: the fast path equals a slow, obviously correct reference on random corpora
(both merge loops), and a superword tokenizer encodes alike in BPE Studio and in ``tokenizers``."""

from __future__ import annotations

import array
import functools
import itertools
import random
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_studio.engine import (
    Tokenizer,
    TrainConfig,
    backend,
    extend_base,
    load,
    native,
    train,
    train_from_iterator,
)
from bpe_studio.engine.events import MergeMade, TrainResult
from bpe_studio.engine.formats.saving import save_tokenizer
from bpe_studio.engine.pretokenize.patterns import scanner_name
from bpe_studio.engine.training.counting import counting_path
from bpe_studio.engine.training.extend import (
    SUPERBPE_SPLIT,
    SUPERWORD_PATTERN,
    ExtendBase,
    encode_sequentially,
)
from bpe_studio.engine.training.learn import MergeReplay, is_superword, replay_to
from bpe_studio.engine.training.merge import MergeLoop

from ..backends import BACKENDS, needs_native, use_backend
from ..reference import merge_word, reference_train, split_documents

SPECIAL = "<|endoftext|>"


def isolated_split(text: str) -> list[str]:
    """Hugging Face's ``Split(behavior="isolated")`` on SUPERBPE_SPLIT: every match, and every non-empty gap
    between matches, in order."""
    pieces: list[str] = []
    end = 0
    for match in regex.finditer(SUPERBPE_SPLIT, text):
        if match.start() > end:
            pieces.append(text[end : match.start()])
        pieces.append(match.group())
        end = match.end()
    if end < len(text):
        pieces.append(text[end:])
    return pieces


def reference_superwords(path: Path, vocab_size: int, transition: int) -> tuple[list, dict[int, bytes], list]:
    """Stage 1 by the reference trainer to ``transition``; stage 2 recounts every chunk of the isolated split,
    applies the stage-1 merges to it one by one, and goes on recounting every pair at every step."""
    stage1 = reference_train([path], transition, [SPECIAL])
    tokens = [stage1.vocab[i] for i in range(len(stage1.vocab) - 1)]  # without the special token
    known = set(tokens)
    counts: Counter[tuple[bytes, ...]] = Counter()
    for document in split_documents(path.read_text("utf-8"), [SPECIAL]):
        for chunk in isolated_split(document):
            word = tuple(bytes([b]) for b in chunk.encode("utf-8"))
            for pair in stage1.merges:
                word = merge_word(word, pair)
            counts[word] += 1
    merges, merge_counts = list(stage1.merges), list(stage1.merge_counts)
    while len(tokens) < vocab_size - 1:
        pairs: Counter[tuple[bytes, bytes]] = Counter()
        for word, n in counts.items():
            for a, b in itertools.pairwise(word):
                pairs[(a, b)] += n
        if not pairs:
            break
        best = max(pairs, key=lambda p: (pairs[p], p))
        merges.append(best)
        merge_counts.append(pairs[best])
        if best[0] + best[1] not in known:
            tokens.append(best[0] + best[1])
            known.add(best[0] + best[1])
        merged: Counter[tuple[bytes, ...]] = Counter()
        for word, n in counts.items():
            merged[merge_word(word, best)] += n
        counts = merged
    vocab = dict(enumerate(tokens))
    vocab[len(vocab)] = SPECIAL.encode("utf-8")
    return merges, vocab, merge_counts


def test_the_superword_pattern_is_the_isolated_split() -> None:
    text = "By the way,  2024!!\nok -- fine...\r\n\tyes 1234567 a/b  \n"
    assert regex.findall(SUPERWORD_PATTERN, text) == isolated_split(text)


@given(st.text(alphabet="ab 1!.,\n\t/-é", max_size=60))
def test_the_superword_pattern_is_the_isolated_split_on_any_text(text: str) -> None:
    assert regex.findall(SUPERWORD_PATTERN, text) == isolated_split(text)


corpora = st.lists(st.text(alphabet="ab c.,\n1x", min_size=1, max_size=40), min_size=1, max_size=6)


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=corpora, stage1=st.integers(0, 20), stage2=st.integers(1, 25))
def test_superword_training_equals_the_reference(
    backend: str, docs: list[str], stage1: int, stage2: int
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "corpus.txt"
        path.write_text(SPECIAL.join(docs), encoding="utf-8")
        transition = 257 + stage1
        vocab_size = transition + stage2
        with use_backend(backend):
            result = train(
                TrainConfig(
                    inputs=(path,),
                    vocab_size=vocab_size,
                    special_tokens=(SPECIAL,),
                    superword_transition=transition,
                    workers=1,
                )
            )
        merges, vocab, merge_counts = reference_superwords(path, vocab_size, transition)
    assert result.merges == merges
    assert result.vocab == vocab
    assert result.merge_counts == merge_counts
    assert result.pattern == SUPERWORD_PATTERN


@functools.cache
def _superword_result() -> TrainResult:
    rng = random.Random(23)
    syllables = ["ka", "to", "ri", "ne", "su", "mo", "la", "pe", "di", "go"]
    words = ["".join(rng.choice(syllables) for _ in range(rng.randint(1, 3))) for _ in range(60)]
    phrases = ["of the", "in the", "it is", "1,234 km", "-- ok...", "\n"]
    docs = [
        " ".join(rng.choice(words + phrases) for _ in range(rng.randint(5, 30))) + "\n" for _ in range(200)
    ]
    return train_from_iterator(docs, vocab_size=420, superword_transition=330, workers=1)


@functools.cache
def _superword_tokenizer() -> Tokenizer:
    return Tokenizer.from_result(_superword_result())


@functools.cache
def _superword_json() -> str:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "tokenizer.json"
        save_tokenizer(_superword_tokenizer(), path, format="hf")
        return path.read_text("utf-8")


def test_a_superword_tokenizer_encodes_alike_in_tokenizers(tmp_path: Path) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    result = _superword_result()
    assert result.superword_transition == 330 - 256
    ours = _superword_tokenizer()
    assert any(b" " in t.strip(b" ") for t in ours.vocab.values())
    path = tmp_path / "tokenizer.json"
    texts = ["kato rine of the suka", "1,234 km -- ok...\n\nlamo  it is"]
    report = save_tokenizer(ours, path, format="hf", verify_texts=texts)
    assert "tokenizers" in report.checked_in
    theirs = tokenizers.Tokenizer.from_file(str(path))
    for text in texts:
        assert theirs.encode(text).ids == ours.encode(text)


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet="the kato rine1234,.-!\n\t é😀", max_size=80))
def test_a_superword_tokenizer_encodes_any_text_alike_in_tokenizers(text: str) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    theirs = tokenizers.Tokenizer.from_str(_superword_json())
    assert theirs.encode(text).ids == _superword_tokenizer().encode(text)


def test_a_generator_is_refused_for_a_superword_run() -> None:
    with pytest.raises(ValueError, match=r"^superword_transition: a superword run reads the documents twice"):
        train_from_iterator((d for d in ["a b"]), vocab_size=300, superword_transition=280)


def test_a_published_superbpe_tokenizer_json_opens_with_this_pattern_and_extends(tmp_path: Path) -> None:
    # The published SuperBPE tokenizers split with an isolated Split, then a ByteLevel without its regex.
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import Regex, pre_tokenizers

    path = tmp_path / "tokenizer.json"
    path.write_text(_superword_json(), encoding="utf-8")
    published = tokenizers.Tokenizer.from_file(str(path))
    published.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(SUPERBPE_SPLIT), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    published.save(str(path))
    opened = load(path)
    assert opened.pattern == SUPERWORD_PATTERN
    text = "kato rine of the suka, 1,234 km -- ok...\n\nlamo  it is"
    assert opened.encode(text) == published.encode(text).ids == _superword_tokenizer().encode(text)
    base = extend_base(opened)
    result = train_from_iterator([text] * 20, vocab_size=len(opened.vocab) + 5, workers=1, extend=base)
    assert result.pattern == SUPERWORD_PATTERN
    assert all(result.vocab[i] == token for i, token in opened.vocab.items())


@needs_native
@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab Z1٣ \t\n\r/.,!-'é\u0301😀\u00a0\u3000x")), max_size=60))
def test_the_native_superword_scanner_equals_the_pattern(text: str) -> None:
    found = native.count_pretokens("superbpe", [text])
    assert found is not None
    expected = Counter(regex.findall(SUPERWORD_PATTERN, text))
    assert found == (dict(expected), sum(expected.values()))


def test_a_superword_run_counts_stage_2_natively_with_threads() -> None:
    assert scanner_name(SUPERWORD_PATTERN) == "superbpe"
    assert counting_path(workers=2, pattern=SUPERWORD_PATTERN, plain_text_files=True) == (
        "threads" if backend() == "native" else "processes"
    )


def test_watching_a_superword_run_cuts_the_sample_into_superwords_at_the_transition() -> None:
    result = _superword_result()
    assert result.superword_transition is not None
    after = result.superword_transition
    text = "kato rine of the suka, 1,234 km -- ok...\n\nlamo  it is of the day"
    replay = MergeReplay(text, pattern="gpt2", superword_after=after)
    replay.apply(result.merges[:after])
    assert not any(is_superword(t) for t in replay.tokens())  # stage 1: words only
    stage1 = Tokenizer({i: result.vocab[i] for i in range(256 + after)}, result.merges[:after])
    assert replay.tokens() == [stage1.vocab[i] for i in stage1.encode(text)]
    replay.apply(result.merges[after:])
    assert replay.tokens() == [result.vocab[i] for i in _superword_tokenizer().encode(text)]
    assert any(is_superword(t) for t in replay.tokens())
    assert replay.token_count == len(replay.tokens())
    again = replay_to(text, result.merges, len(result.merges), pattern="gpt2", superword_after=after)
    assert again.tokens() == replay.tokens() and again.history == replay.history


def test_a_superword_runs_events_number_its_merges_across_both_stages() -> None:
    events: list[object] = []
    docs = ["the cat sat on the mat and the hat\n", "of the day, in the way\n"] * 20
    result = train_from_iterator(
        docs, vocab_size=330, superword_transition=290, workers=1, on_progress=events.append
    )
    made = [e for e in events if isinstance(e, MergeMade)]
    assert [e.index for e in made] == list(range(len(result.merges)))
    assert {e.total for e in made} == {330 - 256}
    assert [e.token_id for e in made][-1] == max(result.vocab)


@st.composite
def merge_tables(draw: st.DrawFn) -> tuple[list[bytes], list[tuple[bytes, bytes]]]:
    """A random stage-1 vocabulary and its merges (none remakes a token) over a few bytes, some of them not
    UTF-8 (the invalid_utf8 policy keeps such chunks)."""
    tokens = [bytes([i]) for i in range(256)]
    known = set(tokens)
    merges: list[tuple[bytes, bytes]] = []
    alphabet = [b"a", b"b", b" ", b"\n", b"\xc3", b"\xa9", b"x"]
    pool = list(alphabet)
    for _ in range(draw(st.integers(0, 25))):
        left, right = draw(st.sampled_from(pool)), draw(st.sampled_from(pool))
        if left + right not in known:
            known.add(left + right)
            tokens.append(left + right)
            merges.append((left, right))
            pool.append(left + right)
    return tokens, merges


@needs_native
@settings(max_examples=200, deadline=None)
@given(
    table=merge_tables(),
    words=st.lists(st.lists(st.sampled_from([b"a", b"b", b" ", b"\n", b"\xc3", b"\xa9", b"x"]), max_size=30)),
)
def test_encoding_whole_chunks_cut_where_no_token_spans_equals_merging_them_one_merge_after_another(
    table: tuple[list[bytes], list[tuple[bytes, bytes]]], words: list[list[bytes]]
) -> None:
    tokens, merges = table
    ids = {token: i for i, token in enumerate(tokens)}
    triples = [(ids[left], ids[right], ids[left + right]) for left, right in merges]
    enc = native.encoder(
        range(256), triples, None, list(tokens), cache_size=4, preset=None, split=lambda s: [s]
    )
    assert enc is not None
    keys = [b"".join(word).decode("latin-1") for word in words] * 2  # again, from the cache
    raw, lengths = enc.encode_words(keys)
    flat = array.array("I")
    flat.frombytes(raw)
    expected = encode_sequentially(keys, tokens, merges)
    assert lengths == [len(word) for word in expected]
    assert flat.tolist() == [i for word in expected for i in word]


@needs_native
def test_a_superword_runs_stage_2_goes_from_the_native_count_table_to_the_merge_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "corpus.txt"
    path.write_text(SPECIAL.join(["the cat sat on the mat, the end.\n"] * 30 + ["a b c 12 x"]), "utf-8")
    config = TrainConfig(
        inputs=(path,),
        vocab_size=300,
        special_tokens=(SPECIAL,),
        superword_transition=270,
        workers=2,
        chunk_size=200,  # several chunks, so two threads count them
    )
    tables: list[list[int]] = []
    real = ExtendBase.encode_native_tables

    def spy(self: ExtendBase, kept: Any) -> Any:
        # (split into parts while stage 1 merged: as many tables as there were)
        parted = isinstance(kept, native.PartedChunks)
        tables.append([-1] * kept.threads if parted else [len(table) for table in kept])
        encoded = real(self, kept)
        kinds.append(type(encoded.ids))
        return encoded

    kinds: list[type] = []
    monkeypatch.setattr(ExtendBase, "encode_native_tables", spy)
    with use_backend("native"):
        threaded = train(config)
        serial = train(config.replace(workers=1))
    # No dict of the chunks, and the two threads' tables as they are, not merged into a third.
    assert tables[0] == [-1, -1]
    assert kinds == [memoryview] * 2  # the ids read in place from the kernel's bytes, not copied to an array
    assert (threaded.merges, threaded.vocab, threaded.merge_counts) == (
        serial.merges,
        serial.vocab,
        serial.merge_counts,
    )
    # The serial run counts stage 2 with stage 1 into a native table too (no dict of the chunks).
    assert len(tables) == 2 and len(tables[1]) == 1


@needs_native
def test_stage_2_over_words_cut_at_rare_pairs_makes_the_merges_of_the_whole_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Stage 2 runs over the chunks cut where a pair counts less than 1.5x stage 1's last merge, then
    # (if a merge counts less) stage 1's last merge, then (below that) the whole chunks; each new loop
    # replays the merges so far (MergeLoop.replay). Every way equals the reference.
    runs: list[list[int]] = []
    replays: list[int] = []
    real_cut, real_replay = native.cut_rare_pairs, MergeLoop.replay

    def cut(encoded: Any, *, below: int, threads: int = 1) -> Any:
        runs[-1].append(below)
        return real_cut(encoded, below=below, threads=threads)

    def replay(self: MergeLoop, merges: Any, *args: Any, **kwargs: Any) -> Any:
        replays.append(len(merges))
        return real_replay(self, merges, *args, **kwargs)

    monkeypatch.setattr(native, "cut_rare_pairs", cut)
    monkeypatch.setattr(MergeLoop, "replay", replay)
    rng = random.Random(23)
    words = ["the", "cat", "sat", "on", "mat", "a", "dog", "of", "x1", "1,2"]
    weights = [30, 20, 10, 5, 3, 3, 2, 2, 1, 1]
    for i in range(12):
        docs = [
            " ".join(rng.choices(words, weights, k=rng.randint(3, 12))) + rng.choice(".,\n")
            for _ in range(20)
        ]
        path = tmp_path / f"corpus{i}.txt"
        path.write_text(SPECIAL.join(docs), encoding="utf-8")
        transition = 257 + rng.randint(3, 12)
        vocab_size = transition + (rng.randint(1, 3) if i % 2 else rng.randint(5, 40))  # short: stays cut
        runs.append([])
        with use_backend("native"):
            result = train(
                TrainConfig(
                    inputs=(path,),
                    vocab_size=vocab_size,
                    special_tokens=(SPECIAL,),
                    superword_transition=transition,
                    workers=1,
                )
            )
        merges, vocab, merge_counts = reference_superwords(path, vocab_size, transition)
        assert (result.merges, result.vocab, result.merge_counts) == (merges, vocab, merge_counts)
    assert all(run and run[0] > 1 for run in runs)  # every stage 2 was cut
    assert all(run == sorted(run, reverse=True) and len(run) <= 2 for run in runs)  # lower, once
    recuts = [run for run in runs if len(run) == 2]
    assert recuts and len(recuts) < len(runs)  # some cut again, some did not need to
    assert len(replays) > len(recuts)  # and some went back to the whole words


@needs_native
def test_the_native_cut_reads_the_words_ids_in_place_from_their_array() -> None:
    from bpe_studio import _native

    ids = array.array("I", [1, 2, 3, 1, 2, 70000, 70000])
    raw, lengths, freqs = _native.cut_rare_pairs(ids, [3, 2, 2], [1, 1, 1], 2)
    cut = array.array("I")
    cut.frombytes(raw)
    assert (cut.tolist(), lengths, freqs) == ([1, 2], [2], [2])  # "1 2" twice; pieces of one id left out
    assert ids.tolist() == [1, 2, 3, 1, 2, 70000, 70000]  # read only
    for wrong in (array.array("b", [1, 2]), array.array("d", [1.0])):
        with pytest.raises((BufferError, ValueError)):
            _native.cut_rare_pairs(wrong, [2], [1], 2)  # type: ignore[arg-type]


def _phases_and_calls(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    calls: dict[str, str],
    phases: tuple[str, ...] = ("counting", "merging"),
    **config: Any,
) -> list[str]:
    """What a small superword run does in order: the ``phases`` it starts, and each call of the ``native``
    functions named in ``calls`` (name -> label), which still run."""
    from bpe_studio.engine import iter_train
    from bpe_studio.engine.events import PhaseStarted

    path = tmp_path / "corpus.txt"
    path.write_text(SPECIAL.join(["the cat sat on the mat, the end.\n"] * 30), "utf-8")
    seen: list[str] = []
    for name, label in calls.items():
        real = getattr(native, name)

        def noted(*args: Any, _real: Any = real, _label: str = label, **kwargs: Any) -> Any:
            seen.append(_label)
            return _real(*args, **kwargs)

        monkeypatch.setattr(native, name, noted)
    options: dict[str, Any] = {"superword_transition": 270, "workers": 2, **config}
    run = TrainConfig(inputs=(path,), vocab_size=300, special_tokens=(SPECIAL,), **options)
    for event in iter_train(run):
        if isinstance(event, PhaseStarted) and event.phase.value in phases:
            seen.append(event.phase.value)
    return seen


def test_stage_1s_freed_memory_goes_back_to_the_system_before_stage_2_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _phases_and_calls(tmp_path, monkeypatch, {"release_free_memory": "released"})
    assert seen[:5] == ["counting", "merging", "released", "counting", "merging"]


@needs_native
def test_stage_2s_tables_and_cut_go_back_to_the_system_before_the_merge_loop_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The counting threads' tables are freed in their own heaps (arenas), and the cut's tables in this
    # thread's: given back before the merge loop's index is built, they are not part of its peak.
    calls = {"release_free_memory": "released", "merge_kernel": "index"}
    # (chunk_size: several chunks, so two threads count them into native tables)
    seen = _phases_and_calls(tmp_path, monkeypatch, calls, phases=("counting",), chunk_size=200)
    stage2 = seen[seen.index("counting", 1) :]
    assert stage2[:4] == ["counting", "released", "released", "index"], stage2


@needs_native
def test_the_whole_words_kept_aside_take_16_bits_an_id_when_all_fit() -> None:
    small = native.EncodedWords(array.array("I", [1, 2, 65535, 7, 0]), [3, 2], [4, 1])
    large = native.EncodedWords(array.array("I", [1, 65536, 7]), [2, 1], [1, 9])
    empty = native.EncodedWords(array.array("I"), [], [])
    for words, size in ((small, 2), (large, 4), (empty, 4)):
        packed = words.packed()
        assert packed.ids.itemsize == size
        again = packed.unpacked()
        assert (again.ids, again.lengths, again.freqs) == (words.ids, words.lengths, words.freqs)
        assert again.ids.typecode == "I"


@needs_native
def test_a_superword_run_packs_its_whole_words_without_numpy(tmp_path: Path) -> None:
    # numpy packed them: its import and its threads were 0.1-0.2 s of CPU of a run that needs it for nothing
    # else. Run alone, in a fresh interpreter (another test may have imported it here).
    import subprocess
    import sys

    path = tmp_path / "corpus.txt"
    path.write_text(SPECIAL.join(["the cat sat on the mat, the end.\n"] * 30), "utf-8")
    code = (
        "import sys\n"
        "from bpe_studio.engine import TrainConfig, native, train\n"
        "packed = []\n"
        "real = native.EncodedWords.packed\n"
        "native.EncodedWords.packed = lambda self: packed.append(1) or real(self)\n"
        f"config = TrainConfig(inputs=[{str(path)!r}], vocab_size=300, special_tokens=({SPECIAL!r},),"
        " superword_transition=270, workers=2, chunk_size=200)\n"
        "train(config)\n"
        "print(bool(packed), 'numpy' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.split() == ["True", "False"]  # the words were packed, and numpy never imported


@needs_native
def test_the_merge_kernel_reads_encoded_words_in_place_from_their_array() -> None:
    class NoCopy(array.array):  # type: ignore[type-arg]
        def tobytes(self) -> bytes:
            raise AssertionError("the ids were copied")

    tokens = [bytes([i]) for i in range(256)] + [b"ab"]
    ids = NoCopy("I", [97, 98, 256, 97, 98, 97, 98])
    encoded = native.EncodedWords(ids, [3, 2, 2], [1, 2, 1])
    loop = MergeLoop({}, tokens, encoded=encoded)
    first = next(loop.run(new_tokens=1))
    assert (first.left, first.right, first.count) == (97, 98, 4)
    with pytest.raises(ValueError, match="token id 300"):
        MergeLoop({}, tokens, encoded=native.EncodedWords(array.array("I", [1, 300]), [2], [1]))


def test_stage_2s_large_buffers_are_mapped_apart_before_it_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Carved out of glibc's heaps, stage 2's freed tables stayed resident (a counting thread's heap is not
    # trimmed at its top): mapped apart, they go back to the system when freed.
    seen = _phases_and_calls(tmp_path, monkeypatch, {"map_large_allocations": "mapped apart"})
    if backend() == "native":
        # Stage 2's tables are counted with stage 1's (one pass over the corpus): mapped apart from the start.
        assert seen[:3] == ["mapped apart", "counting", "merging"]
    else:
        assert seen[:5] == ["counting", "merging", "mapped apart", "counting", "merging"]


@needs_native
def test_large_allocations_can_be_mapped_apart_on_glibc() -> None:
    import platform

    from bpe_studio import _native

    set_ = native.map_large_allocations(min_bytes=4 << 20)
    assert set_ is (platform.system() == "Linux" and platform.libc_ver()[0] == "glibc")
    with pytest.raises(ValueError, match="min_bytes"):
        _native.map_large_allocations(1 << 40)


@needs_native
def test_the_cut_shared_among_threads_gives_the_same_pieces_in_the_same_order() -> None:
    # Over 2**20 ids (below that the cut runs on one thread whatever it is asked): random words of few ids.
    import random

    rng = random.Random(5)
    lengths = [rng.randrange(1, 40) for _ in range(70_000)]
    ids = array.array("I", (rng.randrange(60) for _ in range(sum(lengths))))
    assert len(ids) > 1 << 20
    freqs = [rng.randrange(1, 9) for _ in lengths]
    words = native.EncodedWords(ids, lengths, freqs)
    alone = native.cut_rare_pairs(words, below=2_000, threads=1)
    assert alone is not None and 0 < len(alone.ids) < len(ids)
    for threads in (2, 3):
        shared = native.cut_rare_pairs(words, below=2_000, threads=threads)
        assert shared is not None
        assert (shared.ids, shared.lengths, shared.freqs) == (alone.ids, alone.lengths, alone.freqs)
