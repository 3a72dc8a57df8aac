"""The settings file: round trip, location override, and corrupt files ignored with a warning."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from bpe_studio.ui.app.settings import (
    MAX_RECENT,
    Settings,
    TrainSettings,
    load_settings,
    save_settings,
    settings_path,
)


def test_settings_path_follows_the_environment(tmp_path: Path) -> None:
    assert settings_path() == tmp_path / "config" / "settings.json"


def test_missing_file_gives_defaults() -> None:
    assert load_settings() == Settings()


def test_round_trip() -> None:
    settings = Settings(
        geometry="AAAA",
        train=TrainSettings(inputs=["/x/a.txt"], vocab_size=3000, special_tokens=["<s>", "</s>"], workers=2),
    )
    settings.add_recent_corpus("/x/a.txt")
    settings.add_recent_tokenizer("/x/tok.json")
    assert save_settings(settings)
    assert load_settings() == settings


def test_recent_lists_are_deduplicated_most_recent_first_and_capped(tmp_path: Path) -> None:
    settings = Settings()
    for i in range(MAX_RECENT + 3):
        settings.add_recent_corpus(tmp_path / f"{i}.txt")
    settings.add_recent_corpus(tmp_path / "5.txt")
    assert len(settings.recent_corpora) == MAX_RECENT
    assert settings.recent_corpora[0] == str(tmp_path / "5.txt")
    assert settings.recent_corpora.count(str(tmp_path / "5.txt")) == 1


@pytest.mark.parametrize("content", [b"{not json", b"\xff\xfe\x00garbage", b"[1, 2, 3]", b"null"])
def test_corrupt_file_is_ignored_with_a_warning(content: bytes, caplog: pytest.LogCaptureFixture) -> None:
    path = settings_path()
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    with caplog.at_level(logging.WARNING):
        assert load_settings() == Settings()
    assert any(record.levelno == logging.WARNING for record in caplog.records)


def test_wrongly_typed_entries_fall_back_alone(caplog: pytest.LogCaptureFixture) -> None:
    path = settings_path()
    path.parent.mkdir(parents=True)
    document = {
        "geometry": 12,
        "recent_corpora": ["/a.txt", 3],
        "recent_tokenizers": ["/t.json"],
        "train": {"vocab_size": "big", "min_frequency": 3, "workers": -1, "pattern": "cl100k"},
    }
    path.write_text(json.dumps(document), encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        settings = load_settings()
    assert settings.geometry == ""
    assert settings.recent_corpora == []
    assert settings.recent_tokenizers == ["/t.json"]
    assert settings.train.vocab_size == TrainSettings().vocab_size
    assert settings.train.workers is None
    assert settings.train.min_frequency == 3
    assert settings.train.pattern == "cl100k"
    assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 4


def test_unwritable_location_warns_instead_of_raising(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with caplog.at_level(logging.WARNING):
        assert not save_settings(Settings(), blocker / "settings.json")
    assert caplog.records


def test_singletons_survive_many_void_calls_and_emits() -> None:
    """PySide6 6.12 drops a reference to None per void C++ call and to True per emit; on CPython 3.11 the
    app guards against it when it starts, the tests in tests/conftest.py (without the guard this test aborts
    the interpreter)."""
    import sys

    from PySide6.QtCore import QObject, Signal

    from bpe_studio.ui.app.refcounts import guard_singleton_refcounts

    class Emitter(QObject):
        ping = Signal()

    guard_singleton_refcounts()  # idempotent (tests/conftest.py ran it)
    emitter = Emitter()
    for _ in range(30_000):
        emitter.setObjectName("x")
        emitter.ping.emit()
    assert sys.getrefcount(None) > 0 and sys.getrefcount(True) > 0
