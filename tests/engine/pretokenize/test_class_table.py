"""The class table of the native scanners (``engine/native.py``): the one shipped in
``resources/unicode_classes.zlib`` is the installed ``regex``'s, and a fresh process training on a text
beyond ASCII reads it instead of importing ``regex`` and building it (7-10 ms + 4-8 ms, issue 22)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bpe_studio.engine import native
from tests.engine.backends import needs_native
from tests.fresh_python import modules_after_training

shipped_release = pytest.mark.skipif(
    not native._installed_regex_is(native.SHIPPED_REGEX),
    reason=f"the installed regex is not {native.SHIPPED_REGEX}: run python tools/class_table.py and set "
    "native.SHIPPED_REGEX to its version",
)


@shipped_release
def test_the_shipped_table_is_the_one_the_installed_regex_makes() -> None:
    shipped = native._shipped_class_table()
    assert shipped is not None
    assert shipped == native._computed_class_table(0x110000)
    assert native._class_table(0x10000) == shipped[:0x10000]


def test_another_regex_release_or_a_damaged_file_computes_the_table(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert not native._installed_regex_is("1999.1.1")
    monkeypatch.setattr(native, "SHIPPED_REGEX", "1999.1.1")
    assert native._shipped_class_table() is None
    assert native._class_table(128) == native._ascii_classes()
    monkeypatch.undo()
    damaged = tmp_path / "unicode_classes.zlib"
    damaged.write_bytes(b"not zlib")
    monkeypatch.setattr(native, "SHIPPED_TABLE", str(damaged))
    assert native._shipped_class_table() is None
    assert native._class_table(0x10000) == native._computed_class_table(0x10000)


@needs_native
@shipped_release
def test_training_on_chinese_does_not_import_regex(tmp_path: Path) -> None:
    text = "中文分词测试 训练 字节对编码 hello 🙃\n" * 200
    assert "regex" not in modules_after_training(tmp_path, text, vocab_size=300, workers=1)
