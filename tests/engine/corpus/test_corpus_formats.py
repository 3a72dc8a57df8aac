"""JSON Lines, Parquet and compressed inputs give exactly the merges of the same documents written as one
text file joined by the special token, in this process and in worker processes, at any chunk size."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_studio.engine import TrainConfig, preflight, train
from bpe_studio.engine.corpus.sources import (
    BadRecordError,
    CorruptStreamError,
    SourceKind,
    expand_inputs,
    source_kind,
)

from ...processes import assert_no_leftover_processes
from ..reference import reference_train
from ..training.test_train_exact import FRAGMENTS

ENDOFTEXT = "<|endoftext|>"
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
zstandard = pytest.importorskip("zstandard")

_COMPRESS: dict[str, Callable[[bytes], bytes]] = {
    "": lambda b: b,
    ".gz": gzip.compress,
    ".bz2": bz2.compress,
    ".xz": lzma.compress,
    ".zst": lambda b: zstandard.ZstdCompressor().compress(b),
}


def _jsonl(documents: list[str], field: str = "text") -> bytes:
    lines = []
    for i, doc in enumerate(documents):
        record: dict[str, object] = {"id": i}
        # A dotted field is written nested: "meta.body" -> {"meta": {"body": ...}}.
        *outer, last = field.split(".")
        inner = record
        for part in outer:
            inner = inner.setdefault(part, {})  # type: ignore[assignment]
        inner[last] = doc
        lines.append(json.dumps(record, ensure_ascii=bool(i % 2)))  # escaped and raw UTF-8 both
    return ("\n".join(lines) + "\n").encode("utf-8")


def write_as(folder: Path, documents: list[str], name: str, *, row_group: int = 2) -> Path:
    """Write the documents in the format ``name``'s suffixes say."""
    path = folder / name
    kind = source_kind(name)
    if kind.format == "parquet":
        pq.write_table(pa.table({"text": documents}), path, row_group_size=row_group)
        return path
    raw = _jsonl(documents) if kind.format == "jsonl" else ENDOFTEXT.join(documents).encode("utf-8")
    suffix = "." + name.rsplit(".", 1)[1] if kind.compression else ""
    path.write_bytes(_COMPRESS[suffix](raw))
    return path


FORMATS = [
    "c.jsonl",
    "c.ndjson",
    "c.parquet",
    "c.txt.gz",
    "c.jsonl.gz",
    "c.jsonl.bz2",
    "c.txt.xz",
    "c.jsonl.zst",
    "c.txt.zst",
]

documents_strategy = st.lists(
    st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=5), st.just(ENDOFTEXT)), max_size=12).map(
        "".join
    ),
    min_size=1,
    max_size=12,
)


def _check(documents: list[str], name: str, extra: int, **options: object) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        joined = folder / "joined.txt"
        joined.write_bytes(ENDOFTEXT.join(documents).encode("utf-8"))
        vocab_size = 257 + extra
        ref = reference_train([joined], vocab_size, [ENDOFTEXT])
        path = write_as(folder, documents, name)
        result = train(
            TrainConfig(inputs=[path], vocab_size=vocab_size, special_tokens=[ENDOFTEXT], **options)
        )  # type: ignore[arg-type]
    assert result.merges == ref.merges
    assert result.merge_counts == ref.merge_counts
    assert result.vocab == ref.vocab
    assert result.stats.documents == ref.documents
    assert result.stats.pretokens == ref.pretokens
    assert result.stats.unique_pretokens == ref.unique_pretokens


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents_strategy, st.sampled_from(FORMATS), st.integers(0, 40), st.integers(1, 64))
def test_each_format_matches_the_joined_text_in_process(
    documents: list[str], name: str, extra: int, chunk: int
) -> None:
    _check(documents, name, extra, workers=1, chunk_size=chunk)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents_strategy, st.sampled_from(FORMATS), st.integers(0, 40), st.integers(1, 32))
def test_each_format_matches_the_joined_text_with_two_workers(
    documents: list[str], name: str, extra: int, chunk: int
) -> None:
    _check(documents, name, extra, workers=2, chunk_size=chunk)
    assert_no_leftover_processes(timeout=10)


@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize("workers", [1, 2])
def test_every_format_on_a_larger_corpus(tmp_path: Path, name: str, workers: int) -> None:
    documents = [
        f"doc {i}: the cat sat on the mat{ENDOFTEXT if i % 7 == 0 else ''} again {i * i}" for i in range(300)
    ]
    _check(documents, name, 60, workers=workers, chunk_size=97)


def test_a_dotted_text_field_reads_nested_objects(tmp_path: Path) -> None:
    documents = ["alpha beta", "gamma alpha", "beta beta"]
    (tmp_path / "joined.txt").write_text(ENDOFTEXT.join(documents), encoding="utf-8")
    ref = reference_train([tmp_path / "joined.txt"], 270, [ENDOFTEXT])
    path = tmp_path / "n.jsonl"
    path.write_bytes(_jsonl(documents, "meta.body"))
    result = train(
        TrainConfig(inputs=[path], vocab_size=270, special_tokens=[ENDOFTEXT], text_field="meta.body")
    )
    assert result.merges == ref.merges


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("not json at all", "not JSON"),
        ('{"body": "x"}', 'no field "text"'),
        ('{"text": 12}', "int, not a string"),
        ("[1, 2]", "not an object"),
    ],
)
@pytest.mark.parametrize("name", ["bad.jsonl", "bad.jsonl.gz"])
@pytest.mark.parametrize("workers", [1, 2])
def test_a_bad_record_is_named_by_file_and_line(
    tmp_path: Path, line: str, reason: str, name: str, workers: int
) -> None:
    good = json.dumps({"text": "fine words here"})
    raw = ("\n".join([good] * 40 + [line] + [good] * 5) + "\n").encode()
    path = tmp_path / name
    path.write_bytes(gzip.compress(raw) if name.endswith(".gz") else raw)
    config = TrainConfig(inputs=[path], vocab_size=300, workers=workers, chunk_size=64)
    with pytest.raises(BadRecordError) as caught:
        train(config)
    message = str(caught.value)
    assert f"{path}, line 41: " in message and reason in message and "--skip-bad-records" in message
    result = train(config.replace(skip_bad_records=True))
    assert result.stats.bad_records == 1
    assert result.stats.documents == 45
    assert_no_leftover_processes(timeout=10)


def test_a_null_parquet_value_is_named_by_row(tmp_path: Path) -> None:
    path = tmp_path / "n.parquet"
    pq.write_table(pa.table({"text": ["a b", "c d", None, "e f"]}), path, row_group_size=2)
    with pytest.raises(BadRecordError, match=r"n\.parquet, row 3: \"text\" is null"):
        train(TrainConfig(inputs=[path], vocab_size=300))
    assert train(TrainConfig(inputs=[path], vocab_size=300, skip_bad_records=True)).stats.bad_records == 1


def test_a_missing_parquet_column_names_the_columns(tmp_path: Path) -> None:
    path = tmp_path / "n.parquet"
    pq.write_table(pa.table({"content": ["a b"]}), path)
    with pytest.raises(BadRecordError, match=r'no column "text" \(columns: content\)'):
        train(TrainConfig(inputs=[path], vocab_size=300))


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz", ".zst"])
@pytest.mark.parametrize("workers", [1, 2])
def test_a_truncated_compressed_file_is_an_error_not_a_short_corpus(
    tmp_path: Path, suffix: str, workers: int
) -> None:
    raw = ("the quick brown fox jumps over the lazy dog\n" * 3000).encode()
    data = _COMPRESS[suffix](raw)
    path = tmp_path / f"t.txt{suffix}"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CorruptStreamError, match="damaged or truncated"):
        train(TrainConfig(inputs=[path], vocab_size=300, workers=workers, chunk_size=1000))
    assert_no_leftover_processes(timeout=10)


def test_suffixes_tell_the_format() -> None:
    assert source_kind("A.JSONL.GZ") == SourceKind("jsonl", "gzip")
    assert source_kind("x.ndjson") == SourceKind("jsonl", None)
    assert source_kind("corpus.en") == SourceKind("text", None)
    assert source_kind("x.bz2") == SourceKind("text", "bz2")


def test_folders_and_globs_expand_to_corpus_files_in_order(tmp_path: Path) -> None:
    (tmp_path / "d" / "sub").mkdir(parents=True)
    for name in ["d/b.jsonl", "d/a.txt.zst", "d/sub/c.parquet", "d/notes.md", "d/x.jsonl.gz"]:
        (tmp_path / name).write_bytes(b"")
    found = expand_inputs([tmp_path / "d"])
    assert [p.relative_to(tmp_path).as_posix() for p in found] == [
        "d/a.txt.zst",
        "d/b.jsonl",
        "d/sub/c.parquet",
        "d/x.jsonl.gz",
    ]
    globbed = expand_inputs([str(tmp_path / "d" / "*.jsonl*")])
    assert [p.name for p in globbed] == ["b.jsonl", "x.jsonl.gz"]
    with pytest.raises(ValueError, match="no file matches"):
        expand_inputs([str(tmp_path / "*.nothing")])


def test_preflight_refuses_a_compressed_parquet_file(tmp_path: Path) -> None:
    path = tmp_path / "x.parquet.gz"
    path.write_bytes(gzip.compress(b"x"))
    with pytest.raises(ValueError, match="decompress it first"):
        preflight(TrainConfig(inputs=[path], vocab_size=300))


def test_cli_train_reads_a_folder_with_text_field_and_skips_bad_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bpe_studio.cli import main

    folder = tmp_path / "shards"
    folder.mkdir()
    (folder / "a.jsonl.gz").write_bytes(gzip.compress(b'{"body": "the cat"}\n{"body": 3}\n'))
    (folder / "b.jsonl").write_bytes(b'{"body": "the hat"}\n')
    (folder / "notes.md").write_text("not a corpus file")
    args = ["train", str(folder), "--vocab-size", "270", "--text-field", "body", "--out", str(tmp_path / "o")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"{folder / 'a.jsonl.gz'}, line 2: " in err and "Traceback" not in err
    assert main([*args, "--skip-bad-records"]) == 0
    out = capsys.readouterr().out
    assert "2 file(s), 2 documents" in out and "1 bad records skipped" in out


def test_a_missing_optional_package_is_named_with_the_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    path = tmp_path / "x.jsonl.zst"
    path.write_bytes(zstandard.ZstdCompressor().compress(b'{"text": "a"}\n'))
    monkeypatch.setitem(sys.modules, "zstandard", None)  # import zstandard now raises ImportError
    with pytest.raises(ValueError, match=r'needs zstandard: pip install "bpe-studio\[zstd\]"'):
        preflight(TrainConfig(inputs=[path], vocab_size=300))
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    parquet = tmp_path / "x.parquet"
    parquet.write_bytes(b"PAR1")
    with pytest.raises(ValueError, match=r'needs pyarrow: pip install "bpe-studio\[parquet\]"'):
        preflight(TrainConfig(inputs=[parquet], vocab_size=300))


@pytest.mark.parametrize("name", ["long.jsonl", "long.jsonl.gz"])
def test_a_line_too_long_to_hold_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    from bpe_studio.engine.corpus import sources

    monkeypatch.setattr(sources, "MAX_RECORD_BYTES", 1 << 16)
    raw = b'{"text": "a"}\n' * 3 + b'{"text": "' + b"x" * (3 << 20) + b'"}\n'
    path = tmp_path / name
    path.write_bytes(gzip.compress(raw) if name.endswith(".gz") else raw)
    with pytest.raises(BadRecordError, match=r"line 4: the line is longer than"):
        train(TrainConfig(inputs=[path], vocab_size=300, workers=1, chunk_size=16))
