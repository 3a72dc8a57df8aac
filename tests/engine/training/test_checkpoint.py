"""Counts files and checkpoints: reuse equals recounting, resume equals an uninterrupted run, bad files fail
clearly and overwrite nothing."""

from __future__ import annotations

import json
import os
import random
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_studio.cli import main
from bpe_studio.engine import (
    CountProgress,
    CountsFileError,
    Finished,
    MergeMade,
    Phase,
    PhaseStarted,
    StopReason,
    TrainConfig,
    TrainResult,
    iter_train,
    preflight,
    train,
)
from bpe_studio.engine.formats import load_studio
from bpe_studio.engine.training import checkpoint as ck
from bpe_studio.engine.training.merge import MergeLoop, ReplayError

from ..reference import reference_train

ENDOFTEXT = "<|endoftext|>"
BYTES = [bytes([i]) for i in range(256)]


def _corpus(path: Path, repeat: int = 300) -> Path:
    """Documents of made-up words (a few hundred distinct ones, Zipf-like), digits, accents, CJK and emoji."""
    rng = random.Random(repeat)
    syllables = ["the", "ca", "t", "sa", "on", "ma", "ïve", "café", "日本", "語", "😀", "aa", "ab", "lo"]
    words = ["".join(rng.choices(syllables, k=rng.randint(1, 3))) for _ in range(400)]
    docs = []
    for i in range(repeat):
        picked = [words[int(len(words) * rng.random() ** 3)] for _ in range(rng.randint(3, 14))]
        docs.append(" ".join(picked) + (f" {i}.\n" if i % 3 else "\n"))
    path.write_text(ENDOFTEXT.join(docs), encoding="utf-8")
    return path


def _same(a: TrainResult, b: TrainResult) -> None:
    assert a.merges == b.merges
    assert a.merge_counts == b.merge_counts
    assert a.vocab == b.vocab
    assert a.stop_reason == b.stop_reason
    assert a.stats == b.stats


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return _corpus(tmp_path / "corpus.txt")


@pytest.fixture
def config(corpus: Path) -> TrainConfig:
    return TrainConfig(inputs=[corpus], vocab_size=420, special_tokens=(ENDOFTEXT,), chunk_size=700)


# --------------------------------------------------------------------------------------------------
# Merge-loop replay


words = st.dictionaries(
    st.text(alphabet=st.sampled_from("aabbc \n\u00e9"), min_size=1, max_size=12).map(
        lambda s: s.encode("utf-8").decode("latin-1")
    ),
    st.integers(1, 50),
    max_size=40,
)


@settings(max_examples=120, deadline=None)
@given(words, st.integers(0, 30), st.integers(0, 30), st.sampled_from([None, 2, 3]))
def test_replay_then_run_equals_one_run(
    counts: dict[str, int], first: int, more: int, max_len: int | None
) -> None:
    whole = MergeLoop(dict(counts), BYTES, max_token_length=max_len)
    expected = list(whole.run(new_tokens=first + more))
    part = MergeLoop(dict(counts), BYTES, max_token_length=max_len)
    made = list(part.run(new_tokens=first))
    recorded = [(part.token_bytes[m.left], part.token_bytes[m.right]) for m in made]
    fresh = MergeLoop(dict(counts), BYTES, max_token_length=max_len)
    replayed = list(fresh.replay(recorded, [m.count for m in made]))
    assert replayed == made
    assert fresh.stop_reason is None
    created = len(fresh.token_bytes) - 256
    rest = list(fresh.run(new_tokens=first + more - created))
    assert replayed + rest == expected
    assert fresh.token_bytes == whole.token_bytes
    assert fresh.stop_reason == whole.stop_reason


def test_replay_stops_like_run_for_fewer_tokens_or_a_higher_min_frequency() -> None:
    counts = {"hello": 5, "hell": 3, "help": 2, "yellow": 1}
    loop = MergeLoop(dict(counts), BYTES)
    made = list(loop.run(new_tokens=6))
    recorded = [(loop.token_bytes[m.left], loop.token_bytes[m.right]) for m in made]
    fresh = MergeLoop(dict(counts), BYTES)
    assert len(list(fresh.replay(recorded, new_tokens=2))) == 2
    assert fresh.stop_reason is StopReason.VOCAB_SIZE
    fresh = MergeLoop(dict(counts), BYTES)
    shorter = list(fresh.replay(recorded, min_frequency=8))
    assert all(m.count >= 8 for m in shorter) and len(shorter) < len(made)
    assert fresh.stop_reason is StopReason.MIN_FREQUENCY


def test_replay_refuses_merges_that_do_not_follow_from_the_counts() -> None:
    loop = MergeLoop({"hello": 5, "help": 2}, BYTES)
    with pytest.raises(ReplayError, match="recorded as"):
        list(loop.replay([(b"h", b"p")]))
    loop = MergeLoop({"hello": 5, "help": 2}, BYTES)
    with pytest.raises(ReplayError, match="recorded with count 4"):
        list(loop.replay([(b"h", b"e")], [4]))


# --------------------------------------------------------------------------------------------------
# Counts files


def test_counts_file_trains_like_the_corpus(config: TrainConfig, tmp_path: Path) -> None:
    counts = tmp_path / "corpus.counts"
    first = train(config.replace(counts_out=counts))
    assert counts.is_file()
    header = ck.read_header(counts)
    assert header.kind == "counts" and header.pattern == config.pattern_regex
    assert header.special_tokens == (ENDOFTEXT,) and header.invalid_utf8 == "error"
    assert [f.path for f in header.corpus] == [os.path.abspath(config.inputs[0])]
    # Without the corpus, with the corpus named, and with other merge settings: as if counted again.
    _same(train(config.replace(inputs=(), counts_in=counts)), first)
    _same(train(config.replace(counts_in=counts)), first)
    for changes in ({"vocab_size": 300}, {"vocab_size": 700, "min_frequency": 3}, {"max_token_length": 4}):
        _same(train(config.replace(inputs=(), counts_in=counts, **changes)), train(config.replace(**changes)))


def test_counts_file_run_reports_loading_as_the_counting_phase(config: TrainConfig, tmp_path: Path) -> None:
    counts = tmp_path / "corpus.counts"
    first = train(config.replace(counts_out=counts))
    events = list(iter_train(config.replace(inputs=(), counts_in=counts)))
    assert [e.phase for e in events if isinstance(e, PhaseStarted)] == [Phase.COUNTING, Phase.MERGING]
    progress = [e for e in events if isinstance(e, CountProgress)]
    assert len(progress) == 1
    assert progress[0].bytes_done == progress[0].bytes_total == first.stats.bytes
    assert progress[0].unique_pretokens == first.stats.unique_pretokens
    assert isinstance(events[-1], Finished)
    assert set(events[-1].result.timings) == {"counting", "merging", "total"}


def test_counts_file_matches_the_reference(tmp_path: Path) -> None:
    path = _corpus(tmp_path / "c.txt", 120)
    counts = tmp_path / "c.counts"
    train(TrainConfig(inputs=[path], vocab_size=260, special_tokens=(ENDOFTEXT,), counts_out=counts))
    ref = reference_train([path], 400, (ENDOFTEXT,))
    result = train(TrainConfig(inputs=(), vocab_size=400, special_tokens=(ENDOFTEXT,), counts_in=counts))
    assert result.merges == ref.merges and result.vocab == ref.vocab
    assert result.stats.documents == ref.documents and result.stats.unique_pretokens == ref.unique_pretokens


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"pattern": "cl100k"}, "counted with pattern"),
        ({"special_tokens": ()}, "counted with special tokens"),
        ({"invalid_utf8": "replace"}, "counted with invalid_utf8='error'"),
    ],
)
def test_counts_file_with_other_settings_is_refused(
    config: TrainConfig, tmp_path: Path, changes: dict[str, object], message: str
) -> None:
    counts = tmp_path / "corpus.counts"
    train(config.replace(counts_out=counts))
    with pytest.raises(ValueError, match=message) as info:
        preflight(config.replace(counts_in=counts, **changes))
    assert str(info.value).startswith(f"counts_in: {counts} cannot be used for this run")


def test_special_tokens_in_another_order_are_the_same_counts(tmp_path: Path) -> None:
    path = _corpus(tmp_path / "c.txt")
    base = TrainConfig(inputs=[path], vocab_size=400, special_tokens=(ENDOFTEXT, "<pad>"))
    counts = tmp_path / "c.counts"
    train(base.replace(counts_out=counts))
    other = base.replace(special_tokens=("<pad>", ENDOFTEXT))
    _same(train(other.replace(counts_in=counts)), train(other))


def test_counts_file_of_another_or_changed_corpus_is_refused(config: TrainConfig, tmp_path: Path) -> None:
    counts = tmp_path / "corpus.counts"
    first = train(config.replace(counts_out=counts))
    other = _corpus(tmp_path / "other.txt", 50)
    with pytest.raises(ValueError, match=r"a different corpus: it was not counted from .*other\.txt") as info:
        preflight(config.replace(inputs=[other], counts_in=counts))
    assert "it was also counted from" in str(info.value) and "corpus.txt" in str(info.value)
    with pytest.raises(ValueError, match=r"it was not counted from .*other\.txt"):
        preflight(config.replace(inputs=[config.inputs[0], other], counts_in=counts))
    # Same size, other content: the modification time tells.
    corpus = config.inputs[0]
    data = corpus.read_bytes()
    corpus.write_bytes(data.replace(b"cat", b"dog"))
    stat = corpus.stat()
    os.utime(corpus, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    with pytest.raises(ValueError, match=r"corpus\.txt changed since it was counted \(it was modified\)"):
        preflight(config.replace(counts_in=counts))
    corpus.write_bytes(data + b"more")
    with pytest.raises(ValueError, match="changed since it was counted \\(size"):
        preflight(config.replace(counts_in=counts))
    # Without naming the corpus, the counts still train (they are what was counted then).
    assert train(config.replace(inputs=(), counts_in=counts)).merges == first.merges


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x40]) + data[at + 1 :]


def _damaged(good: bytes) -> dict[str, bytes]:
    middle = len(good) // 2
    return {
        "empty": b"",
        "cut in the magic": good[:5],
        "cut in the header": good[:30],
        "cut in the tables": good[:middle],
        "cut in the checksum": good[:-3],
        "one byte flipped": _flip(good, len(good) - 40),  # in the last table
        "header byte flipped": _flip(good, good.index(b'"pattern"') + 14),
        "extra bytes": good + b"\0",
        "a tokenizer file": b'{"model": {"type": "BPE"}}',
    }


@pytest.mark.parametrize(
    "damage",
    [
        "empty",
        "cut in the magic",
        "cut in the header",
        "cut in the tables",
        "cut in the checksum",
        "one byte flipped",
        "header byte flipped",
        "extra bytes",
        "a tokenizer file",
    ],
)
def test_damaged_counts_file_gets_a_clear_error(config: TrainConfig, tmp_path: Path, damage: str) -> None:
    good = tmp_path / "good.counts"
    train(config.replace(counts_out=good))
    bad = tmp_path / "bad.counts"
    bad.write_bytes(_damaged(good.read_bytes())[damage])
    with pytest.raises((ValueError, CountsFileError)) as info:
        train(config.replace(inputs=(), counts_in=bad))
    text = str(info.value)
    assert str(bad) in text
    assert any(
        word in text for word in ("truncated", "corrupt", "not a BPE Studio counts", "longer than its header")
    ), text


def test_newer_file_version_is_refused(
    config: TrainConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.counts"
    with monkeypatch.context() as patched:
        patched.setattr(ck, "VERSION", 9)
        train(config.replace(counts_out=path))
    with pytest.raises(ValueError, match="newer BPE Studio"):
        preflight(config.replace(counts_in=path))


# --------------------------------------------------------------------------------------------------
# Checkpoints and resume


def _crash_after(config: TrainConfig, merges: int) -> None:
    """Run until ``merges`` merges were made, then drop the run as a crash would (no final checkpoint)."""
    run = iter_train(config)
    for event in run:
        if isinstance(event, MergeMade) and event.index + 1 == merges:
            break
    run.close()


def test_resume_after_a_crash_equals_an_uninterrupted_run(config: TrainConfig, tmp_path: Path) -> None:
    path = tmp_path / "run.ckpt"
    _crash_after(config.replace(checkpoint=path, checkpoint_every=25), 110)
    header = ck.read_header(path)
    assert header.kind == "checkpoint" and header.training["merges"] == 100
    assert header.training["stop_reason"] is None
    resumed = train(config.replace(resume=path))
    _same(resumed, train(config))


def test_resume_events_replay_the_merges_then_continue(config: TrainConfig, tmp_path: Path) -> None:
    path = tmp_path / "run.ckpt"
    _crash_after(config.replace(checkpoint=path, checkpoint_every=10), 35)
    events = list(iter_train(config.replace(inputs=(), resume=path)))
    merges = [e for e in events if isinstance(e, MergeMade)]
    assert [m.index for m in merges] == list(range(len(merges)))
    uninterrupted = [e for e in iter_train(config) if isinstance(e, MergeMade)]
    assert [(m.pair, m.count, m.token_id) for m in merges] == [
        (m.pair, m.count, m.token_id) for m in uninterrupted
    ]


def test_resume_to_a_larger_vocab_and_back(config: TrainConfig, tmp_path: Path) -> None:
    path = tmp_path / "run.ckpt"
    small = train(config.replace(vocab_size=320, checkpoint=path))
    assert ck.read_header(path).training == {
        "vocab_size": 320,
        "min_frequency": 1,
        "max_token_length": None,
        "stop_reason": "vocab_size",
        "merges": len(small.merges),
    }
    _same(
        train(config.replace(vocab_size=600, resume=path, inputs=())), train(config.replace(vocab_size=600))
    )
    _same(train(config.replace(vocab_size=290, resume=path)), train(config.replace(vocab_size=290)))
    _same(train(config.replace(min_frequency=40, resume=path)), train(config.replace(min_frequency=40)))


def test_resume_matches_the_reference(tmp_path: Path) -> None:
    path = _corpus(tmp_path / "c.txt", 150)
    cfg = TrainConfig(inputs=[path], vocab_size=300, special_tokens=(ENDOFTEXT,), chunk_size=300)
    train(cfg.replace(checkpoint=tmp_path / "c.ckpt"))
    result = train(cfg.replace(vocab_size=420, resume=tmp_path / "c.ckpt"))
    ref = reference_train([path], 420, (ENDOFTEXT,))
    assert (
        result.merges == ref.merges and result.merge_counts == ref.merge_counts and result.vocab == ref.vocab
    )


def test_checkpoint_written_when_cancelled_resumes_exactly(config: TrainConfig, tmp_path: Path) -> None:
    path = tmp_path / "run.ckpt"
    flag = threading.Event()

    def on_progress(event: object) -> None:
        if isinstance(event, MergeMade) and event.index == 41:
            flag.set()

    cancelled = train(config.replace(checkpoint=path), on_progress=on_progress, cancel=flag.is_set)
    assert cancelled.stop_reason is StopReason.CANCELLED and len(cancelled.merges) == 42
    assert ck.read_header(path).training["merges"] == 42
    _same(train(config.replace(resume=path)), train(config))


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"max_token_length": 5}, "max_token_length=None and this run asks for 5"),
        ({"pattern": "o200k"}, "counted with pattern"),
        ({"special_tokens": ("<s>",)}, "counted with special tokens"),
    ],
)
def test_resume_with_other_settings_is_refused(
    config: TrainConfig, tmp_path: Path, changes: dict[str, object], message: str
) -> None:
    path = tmp_path / "run.ckpt"
    train(config.replace(vocab_size=300, checkpoint=path))
    with pytest.raises(ValueError, match=message) as info:
        preflight(config.replace(resume=path, **changes))
    assert str(info.value).startswith("resume: ")


def test_resume_needs_a_checkpoint_and_not_counts_too(config: TrainConfig, tmp_path: Path) -> None:
    counts = tmp_path / "c.counts"
    train(config.replace(vocab_size=300, counts_out=counts, checkpoint=tmp_path / "c.ckpt"))
    with pytest.raises(ValueError, match="is a counts file, not a checkpoint"):
        preflight(config.replace(resume=counts))
    with pytest.raises(ValueError, match="either counts_in or resume"):
        config.replace(resume=tmp_path / "c.ckpt", counts_in=counts)
    # A checkpoint holds counts, so it also serves as a counts file.
    _same(train(config.replace(counts_in=tmp_path / "c.ckpt")), train(config))


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("checkpoint_every", 0, "checkpoint_every: 0 must be a positive number of merges"),
        ("checkpoint", "missing-folder/x.ckpt", "checkpoint: the folder missing-folder does not exist"),
        ("counts_out", ".", "counts_out: . is a folder"),
        ("counts_in", "nothing-here.counts", "counts_in: nothing-here.counts: cannot be read"),
        ("resume", "nothing-here.ckpt", "resume: nothing-here.ckpt: cannot be read"),
    ],
)
def test_option_validation(config: TrainConfig, field: str, value: object, message: str) -> None:
    with pytest.raises(ValueError) as info:
        preflight(config.replace(**{field: value}))
    assert str(info.value).startswith(message)


def test_no_corpus_and_no_counts_is_still_refused() -> None:
    with pytest.raises(ValueError, match="inputs: no corpus file given"):
        TrainConfig(inputs=(), vocab_size=300)


# --------------------------------------------------------------------------------------------------
# CLI


def _train(*args: str) -> int:
    return main(["train", *args, "--progress", "none"])


def test_cli_counts_and_resume(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    counts, ckpt = tmp_path / "c.counts", tmp_path / "c.ckpt"
    common = ["--special-token", ENDOFTEXT, "--chunk-size", "500"]
    first = ["--counts-out", str(counts), "--checkpoint", str(ckpt), "--checkpoint-every", "7"]
    assert _train(str(corpus), "--vocab-size", "320", *common, *first, "--out", str(tmp_path / "a")) == 0
    assert (
        _train("--counts-in", str(counts), "--vocab-size", "500", *common, "--out", str(tmp_path / "b")) == 0
    )
    assert _train("--resume", str(ckpt), "--vocab-size", "500", *common, "--out", str(tmp_path / "c")) == 0
    assert _train(str(corpus), "--vocab-size", "500", *common, "--out", str(tmp_path / "d")) == 0
    direct = load_studio(tmp_path / "d" / "tokenizer.json")
    for name in ("b", "c"):
        other = load_studio(tmp_path / name / "tokenizer.json")
        assert other.merges == direct.merges and other.vocab == direct.vocab
    training = load_studio(tmp_path / "c" / "tokenizer.json").training
    assert training["resumed_from"] == str(ckpt)
    assert training["stats"] == direct.training["stats"]
    capsys.readouterr()


def test_cli_needs_a_corpus_or_counts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _train("--vocab-size", "300", "--out", str(tmp_path)) == 2
    err = capsys.readouterr().err
    assert "give at least one INPUT" in err and "--counts-in" in err and "--resume" in err


@pytest.mark.parametrize("option", ["--counts-in", "--resume"])
@pytest.mark.parametrize("damage", ["cut in the tables", "one byte flipped", "header byte flipped"])
def test_cli_damaged_file_fails_in_one_line_and_overwrites_nothing(
    config: TrainConfig, tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, damage: str
) -> None:
    good = tmp_path / "good.ckpt"
    train(config.replace(vocab_size=300, checkpoint=good))
    bad = tmp_path / "bad.file"
    bad.write_bytes(_damaged(good.read_bytes())[damage])
    out = tmp_path / "out"
    out.mkdir()
    existing = {
        out / "tokenizer.json": b"old tokenizer",
        tmp_path / "old.counts": b"old counts",
        tmp_path / "old.ckpt": b"old checkpoint",
    }
    for path, data in existing.items():
        path.write_bytes(data)
    before = bad.read_bytes()
    code = _train(option, str(bad), "--vocab-size", "400", "--special-token", ENDOFTEXT,
                  "--counts-out", str(tmp_path / "old.counts"), "--checkpoint", str(tmp_path / "old.ckpt"),
                  "--out", str(out))  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("bpe-studio: error: ") and str(bad) in err and err.count("\n") == 1
    assert "corrupt" in err or "truncated" in err
    for path, data in existing.items():
        assert path.read_bytes() == data
    assert bad.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["bad.file", "good.ckpt", "old.ckpt", "old.counts", "out", "corpus.txt"]
    )


@pytest.mark.parametrize("option", ["--counts-in", "--resume"])
def test_cli_mismatched_file_fails_in_one_line_and_overwrites_nothing(
    config: TrainConfig, tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str
) -> None:
    good = tmp_path / "good.ckpt"
    train(config.replace(vocab_size=300, checkpoint=good))
    before = good.read_bytes()
    out = tmp_path / "out"
    out.mkdir()
    (out / "tokenizer.json").write_bytes(b"old tokenizer")
    settings = ["--vocab-size", "400", "--special-token", ENDOFTEXT, "--pattern", "cl100k"]
    # --resume may name its own checkpoint (read in full first); a counts file is an input like any other,
    # so a checkpoint over it is refused by the write plan before the mismatch is found.
    checkpoint = good if option == "--resume" else tmp_path / "new.ckpt"
    code = _train(option, str(good), *settings, "--checkpoint", str(checkpoint), "--out", str(out))
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("bpe-studio: error: ") and err.count("\n") == 1
    assert str(good) in err and "counted with pattern" in err
    assert good.read_bytes() == before and (out / "tokenizer.json").read_bytes() == b"old tokenizer"
    assert not (tmp_path / "new.ckpt").exists()


def test_cli_json_progress_for_counts_in(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    counts = tmp_path / "c.counts"
    assert (
        _train(str(corpus), "--vocab-size", "260", "--counts-out", str(counts), "--out", str(tmp_path / "a"))
        == 0
    )
    capsys.readouterr()
    code = main(["train", "--counts-in", str(counts), "--vocab-size", "270", "--progress", "json",
                 "--out", str(tmp_path / "b")])  # fmt: skip
    assert code == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["phase"] for line in lines if line["type"] == "phase"] == ["counting", "merging"]
    assert [line["type"] for line in lines].count("merge") == 14
