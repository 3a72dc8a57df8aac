"""Counts files at the extremes (issue 18, items 3 and 4).

Item 3: counts near 2**62 (valid checksums) trained with the Python engine and failed natively with a
traceback suggesting ``backend='python'``. Both engines now keep one limit (pair counts fit in 2**63 - 1)
and refuse the same counts with the same words; a counts file past it is refused when read, naming it.

Item 4: a header's totals are checked against the sections: 10**30 documents for one pre-token was
accepted and printed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bpe_studio.engine import CountsFileError, TrainConfig, train
from bpe_studio.engine.training import checkpoint as ck
from bpe_studio.engine.training.merge import COUNT_LIMIT, CountLimitError, MergeLoop

from ..backends import needs_native, use_backend
from .test_counts_file_safety import _forge, _genuine, _header_of, _table

BYTES = [bytes([i]) for i in range(256)]


def _counts_file(tmp_path: Path, table: dict[bytes, int], **totals: int) -> Path:
    head = _header_of(_genuine(tmp_path))
    head["unique_pretokens"] = len(table)
    head["totals"] = {**head["totals"], "pretokens": sum(table.values()), **totals}
    return _forge(tmp_path / "forged.counts", head, _table(table))


def _train(path: Path, backend: str) -> Any:
    with use_backend(backend):
        try:
            return train(TrainConfig(inputs=(), counts_in=path, vocab_size=262)).merges
        except (CountsFileError, ValueError) as exc:
            return f"{type(exc).__name__}: {exc}"


@needs_native
@pytest.mark.parametrize(
    "table",
    [
        {b"ab": 2**62, b"cd": 2**62},  # pair counts would reach 2**63: refused by both
        {b"ab": 2**62, b"cd": 2**62 - 1},  # 2**63 - 1 exactly: trained by both
        {b"abab": 2**61, b"ba": 2**60},  # 3 * 2**61 + 2**60 = 2**63: refused by both
        {b"x": 2**63 - 1, b"ab": 3},  # a huge one-byte pre-token has no pairs: trained by both
    ],
)
def test_both_engines_give_the_same_result_on_extreme_counts(tmp_path: Path, table: dict[bytes, int]) -> None:
    path = _counts_file(tmp_path, table, documents=1)
    native, python = (_train(path, backend) for backend in ("native", "python"))
    assert native == python
    if isinstance(native, str):
        assert native.startswith("CountsFileError") and str(path) in native and COUNT_LIMIT in native
        assert "\n" not in native and "backend=" not in native


@needs_native
def test_the_merge_loop_refuses_the_same_counts_with_the_same_words_in_both_engines() -> None:
    messages = []
    for backend in ("native", "python"):
        with pytest.raises(CountLimitError) as caught:
            MergeLoop({"ab": 2**62, "cd": 2**62}, BYTES, backend=backend)  # type: ignore[arg-type]
        messages.append(str(caught.value))
    assert messages == [COUNT_LIMIT, COUNT_LIMIT]


def test_the_cli_refuses_a_counts_file_past_the_limit_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bpe_studio.cli import main

    path = _counts_file(tmp_path, {b"ab": 2**62, b"cd": 2**62}, documents=1)
    out = tmp_path / "tok.json"
    assert main(["train", "--counts-in", str(path), "--vocab-size", "300", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bpe-studio: error:") and str(path) in err and "2**63 - 1" in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists()


# --- Item 4: the header's totals against the sections -----------------------------------------------------


@pytest.mark.parametrize(
    ("totals", "message"),
    [
        ({"documents": 10**30}, "the header says 1,000,000,000,000,000,000,000,000,000,000 documents, more"),
        ({"pretokens": 10**30}, "the header says 1,000,000,000,000,000,000,000,000,000,000 pre-tokens, its"),
        ({"pretokens": 3}, "the header says 3 pre-tokens, its table holds 4"),
        ({"documents": 5}, "5 documents, more than its 4 pre-tokens"),
    ],
)
def test_header_totals_must_match_the_sections(tmp_path: Path, totals: dict[str, int], message: str) -> None:
    path = _counts_file(tmp_path, {b"ab": 3, b" cd": 1}, **totals)
    with pytest.raises(CountsFileError, match="is corrupt") as caught:
        ck.load(path)
    assert message in str(caught.value) and str(path) in str(caught.value)


def test_special_tokens_counted_need_special_tokens_named(tmp_path: Path) -> None:
    head = _header_of(_genuine(tmp_path))
    assert head["special_tokens"] == []
    path = _counts_file(tmp_path, {b"ab": 3}, documents=1, special_tokens=7)
    with pytest.raises(CountsFileError, match="says 7 special tokens were counted, and it names none"):
        ck.load(path)


def test_honest_totals_are_accepted(tmp_path: Path) -> None:
    genuine = _genuine(tmp_path)
    loaded = ck.load(genuine)
    assert loaded.header.totals.pretokens == sum(loaded.counts.values())
    assert ck.load(_counts_file(tmp_path, {b"ab": 3, b" cd": 1}, documents=4)).counts == {"ab": 3, " cd": 1}
