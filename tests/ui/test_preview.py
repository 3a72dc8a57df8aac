"""The corpus preview: the first document's start, and special tokens counted block by block."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_studio.ui.train.charts import GrowingArray, StepRate
from bpe_studio.ui.train.preview import CorpusScanner, SpecialTokenCounter, read_head

SPECIALS = ["<|endoftext|>", "<|end|>", "<|endoftext|><|end|>"]


def _reference_count(data: bytes, specials: list[str]) -> int:
    import re

    ordered = sorted((s.encode() for s in specials), key=len, reverse=True)
    return len(re.findall(b"|".join(re.escape(s) for s in ordered), data))


@settings(max_examples=200, deadline=None)
@given(
    parts=st.lists(st.sampled_from(["a", " ", "<|", "end", "oftext", "|>", *SPECIALS]), max_size=40),
    block=st.integers(min_value=1, max_value=30),
)
def test_counter_agrees_with_a_whole_text_scan_for_any_block_size(parts: list[str], block: int) -> None:
    data = "".join(parts).encode()
    counter = SpecialTokenCounter(SPECIALS)
    for i in range(0, len(data), block):
        counter.feed(data[i : i + block])
    assert counter.finish() == _reference_count(data, SPECIALS)


def test_read_head_skips_empty_documents(tmp_path: Path) -> None:
    path = tmp_path / "c.txt"
    path.write_text("<|endoftext|>  \n<|endoftext|>Hello world<|endoftext|>second", encoding="utf-8")
    assert read_head([path], ["<|endoftext|>"]) == ("Hello world", False, "")


def test_read_head_reports_invalid_utf8(tmp_path: Path) -> None:
    path = tmp_path / "bad.txt"
    path.write_bytes(b"ok \xff\xfe then more text")
    head, _more, problem = read_head([path], [])
    assert head == "" and "not valid UTF-8 at byte 3" in problem


def test_scanner_counts_special_tokens_over_files(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("x<|endoftext|>" * 1000 + "<|endof", encoding="utf-8")
    b.write_text("text|>y<|endoftext|>", encoding="utf-8")  # a token never spans two files
    scanner = CorpusScanner(block_bytes=333)
    with qtbot.waitSignal(scanner.done, timeout=5000) as blocker:
        scanner.start([a, b], ["<|endoftext|>"])
    preview = blocker.args[0]
    assert preview.special_tokens == 1001
    assert preview.total_bytes == a.stat().st_size + b.stat().st_size
    assert preview.head == "x"
    assert not scanner.is_scanning()


def test_growing_array_and_step_rate() -> None:
    array = GrowingArray(capacity=2)
    for i in range(5):
        array.append(i)
    array.extend([5.0, 6.0])
    assert array.values.tolist() == [0, 1, 2, 3, 4, 5, 6]
    rate = StepRate(min_window=1.0)
    rate.start(0.0, 0)
    assert rate.update(0.5, 10) is None
    assert rate.update(2.0, 40) == (0.0, 2.0, 20.0)
    assert rate.update(2.5, 45, force=True) == (2.0, 2.5, 10.0)
    assert rate.update(3.0, 45, force=True) is None  # nothing happened: no step of rate 0
