"""``bpe-studio train``: output, progress formats, user mistakes and Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from bpe_studio.cli import main
from bpe_studio.engine import TrainConfig, train
from bpe_studio.engine.formats import load_studio
from tests.fresh_python import printed_by

ENDOFTEXT = "<|endoftext|>"


def _corpus(path: Path, repeat: int = 100) -> Path:
    path.write_text(
        ENDOFTEXT.join(f"doc {i}: the cat sat on the mat, naïvely.\n" for i in range(repeat)), "utf-8"
    )
    return path


def test_train_writes_a_studio_file_equal_to_the_engine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = _corpus(tmp_path / "c.txt")
    code = main(
        [
            "train",
            str(corpus),
            "--vocab-size",
            "300",
            "--special-token",
            ENDOFTEXT,
            "--out",
            str(tmp_path / "o"),
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "trained 300 tokens" in out and "tokenizer.json" in out
    saved = load_studio(tmp_path / "o" / "tokenizer.json")
    expected = train(TrainConfig(inputs=[corpus], vocab_size=300, special_tokens=(ENDOFTEXT,)))
    assert saved.merges == expected.merges
    assert saved.vocab == expected.vocab
    assert saved.special_tokens == {ENDOFTEXT: 299}
    assert saved.training["stop_reason"] == "vocab_size"


def test_progress_json_prints_one_object_per_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = _corpus(tmp_path / "c.txt")
    assert (
        main(["train", str(corpus), "--vocab-size", "270", "--progress", "json", "--out", str(tmp_path)]) == 0
    )
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    kinds = [line["type"] for line in lines]
    assert kinds[0] == "phase" and kinds[-1] == "finished"
    assert kinds.count("merge") == 14
    assert lines[-1]["stop_reason"] == "vocab_size"


def test_a_run_that_shows_no_merge_makes_no_merge_event(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without a bar (stderr is not a terminal here) or JSON lines, no MergeMade is made (1-2 us a merge);
    # the file written is the one of a run that reports every merge.
    from bpe_studio.engine.training import trainer

    corpus = _corpus(tmp_path / "c.txt")
    made: list[object] = []
    real = trainer.MergeMade
    monkeypatch.setattr(trainer, "MergeMade", lambda *args: made.append(args) or real(*args))
    args = ["train", str(corpus), "--vocab-size", "300", "--out"]
    assert main([*args, str(tmp_path / "quiet")]) == 0
    assert made == []
    assert main([*args, str(tmp_path / "json"), "--progress", "json"]) == 0
    assert len(made) == 44
    capsys.readouterr()
    quiet, shown = (load_studio(tmp_path / name / "tokenizer.json") for name in ("quiet", "json"))
    assert (quiet.merges, quiet.vocab) == (shown.merges, shown.vocab)


def test_quiet_prints_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = _corpus(tmp_path / "c.txt")
    assert main(["train", str(corpus), "--vocab-size", "270", "--quiet", "--out", str(tmp_path / "o")]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
    assert (tmp_path / "o" / "tokenizer.json").is_file()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--vocab-size", "10"], "vocab_size: 10 is too small"),
        (["--vocab-size", "300", "--pattern", "(bad"], "pattern:"),
        (["--vocab-size", "300", "--special-token", ""], "special_tokens: the empty string"),
        (["--vocab-size", "300", "--workers", "0"], "workers:"),
    ],
)
def test_user_mistakes_give_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    corpus = _corpus(tmp_path / "c.txt")
    assert main(["train", str(corpus), *args, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bpe-studio: error: ") and message in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_missing_input_and_invalid_utf8(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train", str(tmp_path / "missing.txt"), "--vocab-size", "300", "--out", str(tmp_path)]) == 2
    assert "does not exist" in capsys.readouterr().err
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok \xff no")
    assert main(["train", str(bad), "--vocab-size", "300", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "invalid UTF-8 at byte offset 3" in err and "--invalid-utf8 replace" in err
    assert (
        main(
            [
                "train",
                str(bad),
                "--vocab-size",
                "258",
                "--invalid-utf8",
                "replace",
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 0
    )


def test_ctrl_c_cancels_cleanly(tmp_path: Path) -> None:
    corpus = tmp_path / "big.txt"
    line = "The quick brown fox jumps over the lazy dog; naïve cafés, 12345 and more words.\n"
    with corpus.open("w", encoding="utf-8") as handle:
        for i in range(4000):
            handle.write(f"doc {i} " + line * 100 + ENDOFTEXT)
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bpe_studio",
            "train",
            str(corpus),
            "--vocab-size",
            "5000",
            "--workers",
            "2",
            "--chunk-size",
            "65536",
            "--progress",
            "json",
            "--out",
            str(out),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # The Python backend counts in worker processes (the native one in threads: test_count_threads.py).
        env={**os.environ, "PYTHONUNBUFFERED": "1", "BPE_STUDIO_PURE": "1"},
    )
    assert proc.stdout is not None
    for raw in proc.stdout:
        if json.loads(raw)["type"] == "count":
            break
    children = psutil.Process(proc.pid).children(recursive=True)
    assert children, "counting should run in worker processes"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert "cancelled" in err and "Traceback" not in err
    assert not (out / "tokenizer.json").exists()
    _, alive = psutil.wait_procs(children, timeout=5)
    assert alive == []


def test_the_live_line_says_the_unique_figure_is_a_lower_bound() -> None:
    # While several workers count, the figure is the largest worker's table, which the final one can exceed.
    import io

    from bpe_studio.cli.train import LiveLine
    from bpe_studio.engine.events import CountProgress

    stream = io.StringIO()
    LiveLine(stream).update(
        CountProgress(bytes_done=10, bytes_total=100, unique_pretokens=1234, elapsed=1.0), force=True
    )
    assert "at least 1,234 unique" in stream.getvalue()


def test_a_run_from_scratch_does_not_load_the_encoder(tmp_path: Path) -> None:
    # --extend's module loads encoding/tokenizer.py and its modules: 2-4 ms of each run's start-up (issue 22).
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("low lower lowest newer wider " * 50, encoding="utf-8")
    code = (
        "import sys\n"
        "from bpe_studio.cli import main\n"
        f"code = main(['train', {str(corpus)!r}, '--vocab-size', '270', '--out', {str(tmp_path / 'out')!r},"
        " '-q'])\n"
        "print(code, 'bpe_studio.engine.encoding.tokenizer' in sys.modules)\n"
    )
    assert printed_by(code, cwd=tmp_path) == ["0", "False"]
    assert load_studio(tmp_path / "out" / "tokenizer.json").merges
