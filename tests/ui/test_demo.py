"""The demo corpus: built from the interpreter's own documentation, deterministic, cached."""

from __future__ import annotations

from pathlib import Path

from bpe_studio.demo import DEMO_SPECIAL_TOKEN, demo_corpus, demo_documents


def test_demo_corpus_is_real_prose_joined_by_the_special_token(shared_cache_dir: Path) -> None:
    path = demo_corpus()
    assert path.parent == shared_cache_dir
    text = path.read_text(encoding="utf-8")
    assert len(text) > 400_000
    assert text.count(DEMO_SPECIAL_TOKEN) >= 78  # at least the 79 documentation topics
    assert "assert" in text and "statement" in text


def test_demo_corpus_is_deterministic_and_cached(tmp_path: Path) -> None:
    first = demo_corpus(tmp_path)
    mtime = first.stat().st_mtime_ns
    assert demo_corpus(tmp_path) == first
    assert first.stat().st_mtime_ns == mtime  # reused, not rewritten
    assert first.read_bytes() == DEMO_SPECIAL_TOKEN.join(demo_documents()).encode("utf-8")
    assert [p.name for p in tmp_path.iterdir()] == [first.name]  # no temporary file left


def test_the_demo_is_long_enough_to_watch(shared_cache_dir: Path) -> None:
    # Issue 11 item 17: 2 MB and 5,000 tokens were over in 0.6 s. Python's sources make it several
    # seconds: tens of MB of text (code and prose), trained to a 2**16 vocabulary.
    text = demo_corpus().read_text(encoding="utf-8")
    assert len(text.encode("utf-8")) > 25_000_000
    assert "def __init__(self" in text and 'The "assert" statement' in text
