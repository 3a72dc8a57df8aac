"""``bpe-studio eval``: figures equal analysis.compression on the whole text, however the file is cut; the
table, --json and --csv agree; mistakes are one line with exit 2."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_studio.cli import main
from bpe_studio.engine import TrainConfig, load, train
from bpe_studio.engine.encoding.analysis import compression
from bpe_studio.engine.encoding.corpus_encoding import corpus_compression
from bpe_studio.engine.formats import save_result

from ..engine.corpus.test_corpus_formats import ENDOFTEXT, FRAGMENTS, write_as

pytest.importorskip("pyarrow")


def _tokenizer(folder: Path, vocab_size: int) -> Path:
    corpus = folder / f"train{vocab_size}.txt"
    corpus.write_text(" ".join(f"the cat x1 sat{i} naïve" for i in range(300)), encoding="utf-8")
    result = train(TrainConfig(inputs=[corpus], vocab_size=vocab_size, special_tokens=[ENDOFTEXT]))
    return save_result(result, folder / f"tok{vocab_size}.json")


@pytest.fixture(scope="module")
def tokenizers(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("toks")
    return _tokenizer(folder, 300), _tokenizer(folder, 270)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from([*FRAGMENTS, " x1", "y2z", "word"]), min_size=1, max_size=60), st.integers(1, 40)
)
def test_a_text_file_cut_anywhere_gives_the_whole_texts_figures(
    tokenizers: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory, pieces: list[str], chunk: int
) -> None:
    text = "".join(pieces)
    path = tmp_path_factory.mktemp("c") / "c.txt"
    path.write_bytes(text.encode("utf-8"))
    tokenizer = load(tokenizers[0])
    expected = compression(text, len(tokenizer.encode_ordinary(text)))
    assert corpus_compression(tokenizer, path, chunk_size=chunk) == expected


def test_records_are_documents(tokenizers: tuple[Path, Path], tmp_path: Path) -> None:
    documents = [f"doc{i} the cat sat" for i in range(40)]
    tokenizer = load(tokenizers[0])
    tokens = sum(len(tokenizer.encode_ordinary(d)) for d in documents)
    for name in ("c.jsonl", "c.parquet", "c.jsonl.gz"):
        got = corpus_compression(tokenizer, write_as(tmp_path, documents, name), chunk_size=50)
        assert (got.tokens, got.words, got.bytes) == (tokens, 4 * 40, sum(len(d) for d in documents))


def test_table_json_and_csv_agree(
    tokenizers: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat " * 50, encoding="utf-8")
    base = ["eval", "-t", str(tokenizers[0]), "-t", str(tokenizers[1]), str(corpus)]
    assert main([*base, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["tokenizer"] for r in rows] == [str(tokenizers[0]), str(tokenizers[1])]
    first, second = rows
    assert first["ratio"] == 1.0
    assert second["ratio"] == round(second["tokens"] / first["tokens"], 4)
    assert first["bytes_per_token"] == round(first["bytes"] / first["tokens"], 4)
    assert main([*base, "--csv"]) == 0
    parsed = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [int(r["tokens"]) for r in parsed] == [r["tokens"] for r in rows]
    assert main(base) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[:3] == ["corpus", "tokenizer", "bytes"] and len(table) == 3
    assert f"{second['tokens']:,}" in table[2]


def test_mistakes(tokenizers: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"body": "x"}\n', encoding="utf-8")
    assert main(["eval", "-t", str(tmp_path / "none.json"), str(corpus)]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["eval", "-t", str(tokenizers[0]), str(corpus)]) == 2
    err = capsys.readouterr().err
    assert 'line 1: no field "text"' in err and "Traceback" not in err
    assert main(["eval", "-t", str(tokenizers[0]), str(corpus), "--text-field", "body", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["words"] == 1
