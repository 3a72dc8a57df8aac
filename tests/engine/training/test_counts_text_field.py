"""Counts files remember which text was counted (issue 13): the JSON Lines / Parquet field and the bad records
skipped. ``--counts-in`` refuses a file counted from another field, naming both fields and the fix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bpe_studio.cli import main
from bpe_studio.engine import TrainConfig, preflight, train
from bpe_studio.engine.training import checkpoint as ck


def _jsonl(path: Path, *, bad: int = 0) -> Path:
    """Records whose ``text`` and ``body`` fields hold different words; ``bad`` records have no ``body``."""
    lines = []
    for i in range(60):
        lines.append(json.dumps({"text": f"alpha beta {i} gamma", "body": f"zebra yak {i % 7} xylophone"}))
    lines += [json.dumps({"text": "only text"}) for _ in range(bad)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _config(corpus: Path, **options: Any) -> TrainConfig:
    return TrainConfig(inputs=[corpus], vocab_size=280, **options)


def test_counts_in_with_another_text_field_is_refused_naming_both(tmp_path: Path) -> None:
    corpus = _jsonl(tmp_path / "c.jsonl")
    counts = tmp_path / "c.counts"
    train(_config(corpus, text_field="body", counts_out=counts))
    assert ck.read_header(counts).text_field == "body"
    for inputs in ([corpus], []):  # naming the corpus again or not
        config = TrainConfig(inputs=inputs, vocab_size=280, counts_in=counts)  # text_field "text"
        with pytest.raises(ValueError) as info:
            preflight(config)
        message = str(info.value)
        assert message.startswith(f"counts_in: {counts} cannot be used for this run")
        assert "counted with text_field 'body'" in message and "this run uses 'text'" in message
        assert "--text-field" in message and "count the corpus again" in message
        with pytest.raises(ValueError, match="counted with text_field 'body'"):
            train(config)


def test_counts_in_with_the_same_text_field_trains_like_the_corpus(tmp_path: Path) -> None:
    corpus = _jsonl(tmp_path / "c.jsonl")
    counts = tmp_path / "c.counts"
    direct = train(_config(corpus, text_field="body", counts_out=counts))
    reused = train(TrainConfig(inputs=[], vocab_size=280, text_field="body", counts_in=counts))
    assert reused.merges == direct.merges and reused.stats == direct.stats
    assert b"zebra" in set(reused.vocab.values())


def test_checkpoint_with_another_text_field_is_refused(tmp_path: Path) -> None:
    corpus = _jsonl(tmp_path / "c.jsonl")
    ckpt = tmp_path / "c.ckpt"
    train(_config(corpus, text_field="body", checkpoint=ckpt, checkpoint_every=5))
    with pytest.raises(ValueError, match=r"^resume: .* counted with text_field 'body'.*uses 'meta\.text'"):
        preflight(_config(corpus, text_field="meta.text", resume=ckpt))


def test_text_field_of_a_plain_text_corpus_decides_nothing(tmp_path: Path) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat. " * 40, encoding="utf-8")
    counts = tmp_path / "c.counts"
    direct = train(_config(corpus, counts_out=counts))
    reused = train(_config(corpus, text_field="body", counts_in=counts))
    assert reused.merges == direct.merges


def test_skipped_bad_records_are_kept_and_need_skipping_again(tmp_path: Path) -> None:
    corpus = _jsonl(tmp_path / "c.jsonl", bad=3)
    counts = tmp_path / "c.counts"
    direct = train(_config(corpus, text_field="body", skip_bad_records=True, counts_out=counts))
    assert direct.stats.bad_records == 3
    with pytest.raises(ValueError, match=r"skipping 3 bad records .*--skip-bad-records.*not skip"):
        preflight(_config(corpus, text_field="body", counts_in=counts))
    reused = train(_config(corpus, text_field="body", skip_bad_records=True, counts_in=counts))
    assert reused.stats == direct.stats and reused.merges == direct.merges
    # Counted without skipping (so without bad records), a run that skips reads the same text.
    clean = _jsonl(tmp_path / "clean.jsonl")
    train(_config(clean, text_field="body", counts_out=counts))
    preflight(_config(clean, text_field="body", skip_bad_records=True, counts_in=counts))


def _write_version_1(monkeypatch: pytest.MonkeyPatch, config: TrainConfig) -> None:
    """Train with ``config`` writing its counts file as version 1 did: no text_field, no bad_records."""
    header_json = ck._header_json

    def old_header(header: ck.CountsHeader, sections: Any) -> dict[str, Any]:
        raw = header_json(header, sections)
        del raw["text_field"], raw["totals"]["bad_records"]
        return raw

    with monkeypatch.context() as patched:
        patched.setattr(ck, "VERSION", 1)
        patched.setattr(ck, "_header_json", old_header)
        train(config)


def test_old_counts_file_of_json_lines_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = _jsonl(tmp_path / "c.jsonl")
    counts = tmp_path / "c.counts"
    _write_version_1(monkeypatch, _config(corpus, counts_out=counts))
    header = ck.read_header(counts)
    assert header.text_field is None and header.totals.bad_records == 0
    with pytest.raises(ValueError, match="older BPE Studio, which did not record the field") as info:
        preflight(_config(corpus, counts_in=counts))  # even the default field: it may have been another
    assert "--text-field" in str(info.value) and "count the corpus again" in str(info.value)


def test_old_counts_file_of_plain_text_is_accepted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat. " * 40, encoding="utf-8")
    counts = tmp_path / "c.counts"
    _write_version_1(monkeypatch, _config(corpus, counts_out=counts))
    assert ck.read_header(counts).text_field is None
    assert train(_config(corpus, counts_in=counts)).merges == train(_config(corpus)).merges


def test_cli_refuses_another_text_field_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = _jsonl(tmp_path / "c.jsonl")
    counts = tmp_path / "c.counts"
    common = ["--vocab-size", "280", "--progress", "none"]
    first = [
        "train",
        str(corpus),
        "--text-field",
        "body",
        "--counts-out",
        str(counts),
        "--out",
        str(tmp_path / "a"),
    ]
    assert main([*first, *common]) == 0
    capsys.readouterr()
    assert main(["train", "--counts-in", str(counts), *common, "--out", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bpe-studio: error: ") and err.count("\n") == 1
    assert "'body'" in err and "'text'" in err and "--text-field" in err
    assert not (tmp_path / "b").exists()
    again = [
        "train",
        "--counts-in",
        str(counts),
        "--text-field",
        "body",
        *common,
        "--out",
        str(tmp_path / "b"),
    ]
    assert main(again) == 0
