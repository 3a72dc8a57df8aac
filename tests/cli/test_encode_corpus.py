"""``encode-corpus``: the array equals encode_ordinary document by document, separator ids between them, for
every input format, 1 or 2 workers and any task size; .npy and .bin; mistakes; Ctrl-C leaves nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import psutil
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_studio.cli import main
from bpe_studio.engine import Tokenizer, TrainConfig, load, train
from bpe_studio.engine.encoding.corpus_encoding import encode_corpus, npy_header
from bpe_studio.engine.formats import save_result

from ..engine.corpus.test_corpus_formats import ENDOFTEXT, FORMATS, documents_strategy, write_as
from ..processes import assert_no_leftover_processes

pytest.importorskip("pyarrow")
pytest.importorskip("zstandard")


@pytest.fixture(scope="module")
def tokenizer_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("tok")
    corpus = folder / "c.txt"
    corpus.write_text(
        ENDOFTEXT.join(f"doc {i}: the cat sat on the mat, naïvely 日本語 😀 {i * 7}\n" for i in range(200)),
        encoding="utf-8",
    )
    result = train(TrainConfig(inputs=[corpus], vocab_size=400, special_tokens=[ENDOFTEXT]))
    return save_result(result, folder / "tokenizer.json")


def _tokenizer(tokenizer_file: Path) -> Tokenizer:
    return load(tokenizer_file)


def expected_ids(tokenizer: Tokenizer, documents: list[str], separator: bool) -> list[int]:
    ids: list[int] = []
    for i, document in enumerate(documents):
        if i and separator:
            ids.append(tokenizer.special_tokens[ENDOFTEXT])
        ids.extend(tokenizer.encode_ordinary(document))
    return ids


def _text_documents(documents: list[str]) -> list[str]:
    # In a text file, a separator inside a document splits it: the same documents, split.
    return ENDOFTEXT.join(documents).split(ENDOFTEXT)


def _check(tokenizer_file: Path, documents: list[str], name: str, workers: int, chunk: int) -> None:
    tokenizer = _tokenizer(tokenizer_file)
    with tempfile.TemporaryDirectory() as tmp:
        path = write_as(Path(tmp), documents, name)
        out = Path(tmp) / "ids.npy"
        summary = encode_corpus(
            tokenizer_file, [path], out, separator=ENDOFTEXT, workers=workers, chunk_size=chunk
        )
        got = np.load(out, mmap_mode="r")
        assert got.dtype == np.uint16
        values = got.tolist()
        del got
    split = name.startswith("c.txt")
    expected = expected_ids(tokenizer, _text_documents(documents) if split else documents, True)
    assert values == expected
    assert summary.ids == len(expected)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents_strategy, st.sampled_from([*FORMATS, "c.txt"]), st.integers(1, 64))
def test_equals_encode_ordinary_per_document_in_process(
    tokenizer_file: Path, documents: list[str], name: str, chunk: int
) -> None:
    _check(tokenizer_file, documents, name, 1, chunk)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents_strategy, st.sampled_from([*FORMATS, "c.txt"]), st.integers(1, 32))
def test_equals_encode_ordinary_per_document_with_two_workers(
    tokenizer_file: Path, documents: list[str], name: str, chunk: int
) -> None:
    _check(tokenizer_file, documents, name, 2, chunk)
    assert_no_leftover_processes(timeout=10)


@pytest.mark.parametrize("workers", [1, 2])
def test_several_files_keep_their_order_and_bin_has_a_sidecar(
    tokenizer_file: Path, tmp_path: Path, workers: int
) -> None:
    tokenizer = _tokenizer(tokenizer_file)
    parts = [[f"file {f} doc {i} the cat" for i in range(50)] for f in range(3)]
    paths = [
        write_as(tmp_path, parts[0], "a.jsonl.gz"),
        write_as(tmp_path, parts[1], "b.parquet"),
        write_as(tmp_path, parts[2], "c.txt"),
    ]
    out = tmp_path / "ids.bin"
    encode_corpus(tokenizer_file, paths, out, separator=ENDOFTEXT, workers=workers, chunk_size=64)
    side = json.loads((tmp_path / "ids.bin.json").read_text())
    assert side["dtype"] == "uint16" and side["byteorder"] == "little"
    got = np.fromfile(out, dtype="<u2").tolist()
    assert got == expected_ids(tokenizer, [d for p in parts for d in p], True)
    assert side["count"] == len(got)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["a.jsonl.gz", "b.parquet", "c.txt", "ids.bin", "ids.bin.json"]
    )


def test_npy_header_is_what_numpy_reads(tmp_path: Path) -> None:
    for dtype, np_type in (("uint16", np.uint16), ("uint32", np.uint32)):
        path = tmp_path / f"{dtype}.npy"
        path.write_bytes(
            npy_header(dtype, 3) + np.array([1, 2, 70000 if dtype == "uint32" else 3], np_type).tobytes()
        )
        loaded = np.load(path)
        assert loaded.dtype == np_type and loaded.shape == (3,)
        assert len(npy_header(dtype, 10**15)) == 128


def test_cli_mistakes_are_one_line_with_exit_2(
    tokenizer_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello there", encoding="utf-8")
    base = ["encode-corpus", "-t", str(tokenizer_file), str(corpus)]
    cases = [
        (["--out", str(corpus)], "is the input corpus"),
        (["--out", str(tmp_path / "x.csv")], "--out: "),
        (
            ["--out", str(tmp_path / "x.npy"), "--separator", "<nope>"],
            "--separator: '<nope>' is not a special",
        ),
        (["--out", str(tmp_path / "x.npy"), "--workers", "0"], "--workers"),
    ]
    for extra, expected in cases:
        assert main([*base, *extra]) == 2
        err = capsys.readouterr().err
        assert expected in err and "Traceback" not in err
    assert corpus.read_text() == "hello there"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.txt"]


def test_ctrl_c_exits_130_and_leaves_nothing(tokenizer_file: Path, tmp_path: Path) -> None:
    corpus = tmp_path / "big.txt"
    line = "The quick brown fox jumps over the lazy dog; naïve cafés, 12345 and more words.\n"
    with corpus.open("w", encoding="utf-8") as handle:
        for i in range(3000):
            handle.write(f"doc {i} " + line * 60 + ENDOFTEXT)
    out = tmp_path / "ids.npy"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bpe_studio",
            "encode-corpus",
            "-t",
            str(tokenizer_file),
            str(corpus),
            "--out",
            str(out),
            "--workers",
            "2",
            "--chunk-size",
            "20000",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not any(p.name.endswith(".tmp") for p in tmp_path.iterdir()):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the output's temporary file never appeared"
        time.sleep(0.02)
    children = psutil.Process(proc.pid).children(recursive=True)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.txt"]
    _, alive = psutil.wait_procs(children, timeout=5)
    assert alive == []
    assert os.path.exists(corpus)


def test_large_blocks_both_ways_do_not_deadlock(tokenizer_file: Path, tmp_path: Path) -> None:
    # A compressed file sends megabytes to each worker and gets megabytes of ids back: a worker that read
    # its next task only after writing its ids would wait on the parent, which waits to hand it that task.
    import gzip
    import random

    rng = random.Random(1)
    words = ["the", "cat", "sat", "on", "mat", "dog", "naïve", "12"]
    documents = [" ".join(rng.choice(words) for _ in range(200)) for _ in range(3000)]
    corpus = tmp_path / "big.txt.gz"
    corpus.write_bytes(gzip.compress(ENDOFTEXT.join(documents).encode(), compresslevel=1))
    out = tmp_path / "ids.npy"
    command = [sys.executable, "-m", "bpe_studio", "encode-corpus", "-t", str(tokenizer_file), str(corpus)]
    command += ["--out", str(out), "--workers", "2", "--chunk-size", "1000000", "--separator", ENDOFTEXT]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        for child in psutil.Process(proc.pid).children(recursive=True):
            child.kill()
        proc.kill()
        proc.communicate()
        pytest.fail("encode-corpus made no progress for 120 s (a deadlock between parent and workers)")
    assert proc.returncode == 0, err
    tokenizer = _tokenizer(tokenizer_file)
    assert np.load(out).tolist() == expected_ids(tokenizer, documents, True)


def test_a_tokenizer_named_gpt2_reaches_the_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # "gpt2" is a name here, not a file of the working folder
    documents = [f"doc {i}: the cat sat on the mat" for i in range(60)]
    path = write_as(tmp_path, documents, "c.jsonl")
    encode_corpus("gpt2", [path], tmp_path / "ids.npy", separator=ENDOFTEXT, workers=2, chunk_size=64)
    assert np.load(tmp_path / "ids.npy").tolist() == expected_ids(load("gpt2"), documents, True)
    assert_no_leftover_processes(timeout=10)
