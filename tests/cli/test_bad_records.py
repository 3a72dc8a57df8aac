"""Bad records are one line naming the file and the line or row, exit 2, nothing written, in ``train``,
``eval`` and ``encode-corpus`` alike (one record decoder, sources.RecordReader), run as the real CLI; and
``--skip-bad-records`` / ``--invalid-utf8 replace`` read past them in all three."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bpe_studio.engine import TrainConfig, train, train_from_iterator
from bpe_studio.engine.config import InvalidUtf8Policy
from bpe_studio.engine.corpus.plan import CorpusDecodeError
from bpe_studio.engine.corpus.sources import BadRecordError, RecordReader, head_documents
from bpe_studio.engine.formats import save_result

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

GOOD = '{"text": "the cat sat"}\n'


def _parquet_bytes(values: object) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(pa.table({"text": values}), sink, row_group_size=50)
    return bytes(sink.getvalue().to_pybytes())


def _flipped(good: bytes) -> bytes:
    """The file with one byte of its footer's metadata flipped so that it cannot be read ("Couldn't
    deserialize thrift"): the last such place, searched from the end (the same for a pyarrow version)."""
    for position in range(len(good) - 9, 4, -1):
        flipped = bytearray(good)
        flipped[position] ^= 0xFF
        try:
            pq.ParquetFile(pa.BufferReader(bytes(flipped))).read()
        except (pa.ArrowException, OSError) as exc:
            if "thrift" in str(exc).lower():
                return bytes(flipped)
    raise AssertionError("no flipped byte breaks the footer")


def _bad_inputs() -> dict[str, tuple[bytes, str, str]]:
    """name -> (file bytes, where the error must point, a word of the reason)."""
    good = _parquet_bytes(["the cat sat"] * 100)
    return {
        "deep.jsonl": (
            (GOOD + '{"text": ' + "[" * 100_000 + "]" * 100_000 + "}\n").encode(),
            "line 2",
            "nested",
        ),
        "bigint.jsonl": ((GOOD + '{"text": "a", "n": ' + "9" * 100_000 + "}\n").encode(), "line 2", "digits"),
        "surrogate.jsonl": ((GOOD + '{"text": "x\\ud800y"}\n').encode(), "line 2", "surrogate"),
        "truncated.parquet": (good[: len(good) // 2], "footer", "Parquet"),
        "flipped.parquet": (_flipped(good), "footer", "Parquet"),
        "binary.parquet": (_parquet_bytes(pa.array([b"ok", b"bad\xff"], pa.binary())), "row 2", "UTF-8"),
    }


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("tok")
    corpus = folder / "train.txt"
    corpus.write_text("the cat sat on the mat " * 50, encoding="utf-8")
    return save_result(train(TrainConfig(inputs=[corpus], vocab_size=270)), folder / "tok.json")


def _command(command: str, corpus: Path, out: Path, tokenizer: Path) -> list[str]:
    if command == "train":
        return ["train", str(corpus), "--vocab-size", "270", "--out", str(out), "-q"]
    if command == "eval":
        return ["eval", "-t", str(tokenizer), str(corpus)]
    return ["encode-corpus", "-t", str(tokenizer), str(corpus), "--out", str(out), "-q"]


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-I", "-m", "bpe_studio", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("command", ["train", "eval", "encode-corpus"])
@pytest.mark.parametrize("name", list(_bad_inputs()))
def test_a_bad_record_is_one_line_naming_file_and_place(
    tmp_path: Path, tokenizer: Path, command: str, name: str
) -> None:
    data, where, word = _bad_inputs()[name]
    corpus = tmp_path / name
    corpus.write_bytes(data)
    out = tmp_path / ("out.npy" if command == "encode-corpus" else "out")
    proc = _run(_command(command, corpus, out, tokenizer))
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert f"{corpus}, {where}" in lines[0] and word in lines[0], lines[0]
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # no temporary output left either


@pytest.mark.parametrize("command", ["train", "eval", "encode-corpus"])
def test_skip_bad_records_and_replace_read_past_them(tmp_path: Path, tokenizer: Path, command: str) -> None:
    inputs = _bad_inputs()
    for name in ("deep.jsonl", "bigint.jsonl"):
        corpus = tmp_path / name
        corpus.write_bytes(inputs[name][0])
        out = tmp_path / f"{name}.{'npy' if command == 'encode-corpus' else 'out'}"
        proc = _run([*_command(command, corpus, out, tokenizer), "--skip-bad-records"])
        assert proc.returncode == 0, proc.stderr
    corpus = tmp_path / "surrogate.jsonl"
    corpus.write_bytes(inputs["surrogate.jsonl"][0])
    out = tmp_path / f"s.{'npy' if command == 'encode-corpus' else 'out'}"
    proc = _run([*_command(command, corpus, out, tokenizer), "--invalid-utf8", "replace"])
    assert proc.returncode == 0, proc.stderr


def _reader(policy: InvalidUtf8Policy = InvalidUtf8Policy.ERROR, skip: bool = False) -> RecordReader:
    return RecordReader(text_field="text", policy=policy, skip_bad=skip)


def test_a_lone_surrogate_follows_the_utf8_policy() -> None:
    data = (GOOD + '{"text": "x\\ud800y"}\n{"text": "pair \\ud83d\\ude00"}\n').encode()
    with pytest.raises(CorpusDecodeError, match=r"a\.jsonl, line 2: .*lone surrogate \\ud800"):
        list(_reader().json_lines(data, path="a.jsonl", offset=0, line=1))
    texts = list(_reader(InvalidUtf8Policy.REPLACE).json_lines(data, path="a.jsonl", offset=0, line=1))
    assert texts == ["the cat sat", "x\ufffdy", "pair \U0001f600"]


def test_deep_nesting_and_long_numbers_are_bad_records_that_can_be_skipped() -> None:
    data = _bad_inputs()["deep.jsonl"][0] + _bad_inputs()["bigint.jsonl"][0]
    with pytest.raises(BadRecordError, match=r"a\.jsonl, line 2: JSON nested too deeply"):
        list(_reader().json_lines(data, path="a.jsonl", offset=0, line=1))
    reader = _reader(skip=True)
    assert list(reader.json_lines(data, path="a.jsonl", offset=0, line=1)) == ["the cat sat"] * 2
    assert reader.bad_records == 2


def test_a_byte_order_mark_before_the_first_record_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + GOOD.encode() + GOOD.encode())
    assert (
        list(_reader().json_lines(path.read_bytes(), path=str(path), offset=0, line=1)) == ["the cat sat"] * 2
    )
    result = train(TrainConfig(inputs=[path], vocab_size=260))
    assert result.stats.documents == 2
    # Only at the start of the file: elsewhere it is a bad line.
    with pytest.raises(BadRecordError, match="line 2"):
        list(_reader().json_lines(b"\xef\xbb\xbf" + GOOD.encode(), path="x", offset=5, line=2))


@pytest.mark.parametrize(
    "values",
    [
        pa.array(["the cat", "sat", "the cat"]).dictionary_encode(),
        pa.array(["the cat", "sat", "the cat"], pa.large_string()),
        *([pa.array(["the cat", "sat", "the cat"], pa.string_view())] if hasattr(pa, "string_view") else []),
    ],
)
def test_parquet_string_columns_of_any_layout_are_strings(tmp_path: Path, values: object) -> None:
    path = tmp_path / "c.parquet"
    pq.write_table(pa.table({"text": values}), path)
    result = train(TrainConfig(inputs=[path], vocab_size=260))
    assert result.stats.documents == 3
    assert head_documents(path, count=2) == ["the cat", "sat"]


def test_train_from_iterator_names_the_bad_document() -> None:
    with pytest.raises(ValueError, match=r"texts: item 1 holds a lone surrogate \\ud800 at character 1"):
        train_from_iterator(["ok", "a\ud800b"], vocab_size=260)
    result = train_from_iterator(["ok", "a\ud800b"], vocab_size=260, invalid_utf8="replace")
    assert result.stats.documents == 2
    with pytest.raises(TypeError, match=r"texts: item 1 is int, not str"):
        train_from_iterator(["ok", 3], vocab_size=260)  # type: ignore[list-item]


def test_a_json_record_error_names_its_line_in_a_byte_range(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    raw = (GOOD * 3 + json.dumps({"text": 3}) + "\n").encode()
    path.write_bytes(raw)
    start = len(GOOD) * 2
    with pytest.raises(BadRecordError, match=r"line 4: "):
        list(_reader().json_lines(raw[start:], path=str(path), offset=start, line=None))
