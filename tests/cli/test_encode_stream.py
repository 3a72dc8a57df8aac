"""``bpe-studio encode`` reads ``--file`` and standard input by blocks through one UTF-8 decoder.

Lines play no part: a file on one line is read in bounded blocks, a block may end anywhere (inside a word,
a character, a ``"\\r\\n"`` or a special token) and the ids are those of the whole text; invalid UTF-8 gives
the same error on standard input as in a file; endless input without a token end (``/dev/zero``) stops.
"""

# ruff: noqa: PLR0917 - fixtures are test arguments

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_studio.cli import encode as encode_cli
from bpe_studio.cli import loading as cli_loading
from bpe_studio.cli import main
from bpe_studio.engine import Tokenizer, load, save

from ..engine.reference_encoder import SPECIAL, gpt2_tokenizer

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def gpt2_folder(cs336_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save(gpt2_tokenizer(cs336_data), tmp_path_factory.mktemp("gpt2"), format="gpt2")


@pytest.fixture(scope="module")
def gpt2(gpt2_folder: Path) -> Tokenizer:
    return load(gpt2_folder)


@pytest.fixture(scope="module")
def cli_gpt2(gpt2_folder: Path) -> Tokenizer:
    """GPT-2 as the CLI loads it, once: an instance of its own, so that its caches are not the reference's."""
    return load(gpt2_folder)


def _ids(out: str) -> list[int]:
    return [int(x) for x in out.split()]


def test_a_one_line_file_is_read_in_blocks(
    gpt2_folder: Path,
    gpt2: Tokenizer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    text = "Once upon a time, naïve cats ate 1234 fish. " * 400  # 18 kB, no newline
    path = tmp_path / "one_line.txt"
    path.write_text(text, "utf-8")
    monkeypatch.setattr(encode_cli, "BLOCK_BYTES", 1000, raising=False)
    seen: list[int] = []
    original = Tokenizer.encode_iterable

    def spy(self: Tokenizer, chunks: object, **options: object) -> object:
        def record() -> object:
            for chunk in chunks:  # type: ignore[attr-defined]
                seen.append(len(chunk))
                yield chunk

        return original(self, record(), **options)  # type: ignore[arg-type]

    monkeypatch.setattr(Tokenizer, "encode_iterable", spy)
    assert main(["encode", "-t", str(gpt2_folder), "--file", str(path)]) == 0
    assert _ids(capsys.readouterr().out) == gpt2.encode(text)
    assert main(["encode", "-t", str(gpt2_folder), "--json", "--file", str(path)]) == 0
    assert json.loads(capsys.readouterr().out) == gpt2.encode(text)
    assert len(seen) >= 18 and max(seen) <= 1000


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.one_of(
            st.sampled_from(["é", "😀", "\r\n", "\r", "\n", " ", "  ", "word", "'s", "12", SPECIAL, "<|"]),
            st.text(max_size=5),
        ),
        max_size=40,
    ).map("".join),
    st.integers(1, 9),
)
def test_any_block_size_gives_the_ids_of_the_whole_text(
    gpt2_folder: Path,
    gpt2: Tokenizer,
    cli_gpt2: Tokenizer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    text: str,
    block: int,
) -> None:
    text = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")  # st.text may give surrogates
    path = tmp_path / "in.txt"
    path.write_bytes(text.encode("utf-8"))
    monkeypatch.setattr(encode_cli, "BLOCK_BYTES", block)

    # The CLI's reading in blocks is under test, not loading GPT-2 (0.4 s, 3 times per example; the tests
    # above load it for real): its load gives the tokenizer loaded once.
    def load_once(path: str, *, pattern: str | None) -> Tokenizer:
        assert Path(path) == gpt2_folder and pattern is None
        return cli_gpt2

    monkeypatch.setattr(cli_loading, "load", load_once)  # (load_tokenizer's, in cli/loading.py)
    assert main(["encode", "-t", str(gpt2_folder), "--file", str(path)]) == 0
    assert _ids(capsys.readouterr().out) == gpt2.encode(text)
    assert main(["encode", "-t", str(gpt2_folder), "--json", "--file", str(path)]) == 0
    assert json.loads(capsys.readouterr().out) == gpt2.encode(text)
    # Standard input takes the same path.
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8"))))
    assert main(["encode", "-t", str(gpt2_folder)]) == 0
    assert _ids(capsys.readouterr().out) == gpt2.encode(text)


@pytest.mark.parametrize("block", [1, 2, 5, 1 << 20])
def test_invalid_utf8_on_stdin_is_the_same_error_as_in_a_file(
    gpt2_folder: Path, tmp_path: Path, block: int
) -> None:
    data = "ok é ".encode() + b"\xe2\x82" + b" more"  # a truncated euro sign at byte offset 6
    path = tmp_path / "bad.txt"
    path.write_bytes(data)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    code = (
        f"import sys; from bpe_studio.cli import encode as e, main; e.BLOCK_BYTES = {block}; sys.exit(main())"
    )
    # A real standard input (the issue: it was decoded with U+FFFD, silently), in a child process.
    from_stdin = subprocess.run(
        [sys.executable, "-c", code, "encode", "-t", str(gpt2_folder)],
        input=data,
        check=False,
        capture_output=True,
        env=env,
        timeout=120,
    )
    from_file = subprocess.run(
        [sys.executable, "-c", code, "encode", "-t", str(gpt2_folder), "--file", str(path)],
        check=False,
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert from_stdin.returncode == from_file.returncode == 2
    assert from_stdin.stdout == from_file.stdout == b""
    message = from_stdin.stderr.decode()
    assert message == (
        "bpe-studio: error: standard input: not valid UTF-8 at byte offset 6 (invalid continuation byte); "
        "encode UTF-8 text\n"
    )
    assert from_file.stderr.decode() == message.replace("standard input", str(path))


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_endless_input_without_a_token_end_stops(
    gpt2_folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(encode_cli, "MAX_PENDING_CHARS", 1 << 20)
    assert main(["encode", "-t", str(gpt2_folder), "--file", "/dev/zero"]) == 2
    captured = capsys.readouterr()
    assert captured.err == (
        "bpe-studio: error: /dev/zero: more than 1,048,576 characters without the end of a token; "
        "encode text (not a device or a binary file), or cut such a run into smaller pieces\n"
    )
    assert main(["encode", "-t", str(gpt2_folder), "--json", "--file", "/dev/zero"]) == 2
    assert "without the end of a token" in capsys.readouterr().err
    assert main(["encode", "-t", str(gpt2_folder), "--show", "--file", "/dev/zero"]) == 2
    assert "too many to show" in capsys.readouterr().err


def test_long_text_with_token_ends_is_not_refused(
    gpt2_folder: Path,
    gpt2: Tokenizer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The tokenizer gives ids once it holds 64 Ki characters: the limit is far above that (64 Mi).
    monkeypatch.setattr(encode_cli, "MAX_PENDING_CHARS", 100_000)
    monkeypatch.setattr(encode_cli, "BLOCK_BYTES", 7000)
    text = "the cat sat on the mat " * 20_000  # 460 kB: far more than the limit, but tokens end all the time
    path = tmp_path / "long.txt"
    path.write_text(text, "utf-8")
    assert main(["encode", "-t", str(gpt2_folder), "--file", str(path)]) == 0
    assert _ids(capsys.readouterr().out) == gpt2.encode(text)
    assert main(["encode", "-t", str(gpt2_folder), "--json", "--file", str(path)]) == 0
    assert json.loads(capsys.readouterr().out) == gpt2.encode(text)


def test_a_reader_that_goes_away_stops_the_output_quietly(gpt2_folder: Path, tmp_path: Path) -> None:
    """``bpe-studio encode ... | head -c 1024``: no traceback, exit 141 (128 + SIGPIPE) as Unix tools."""
    path = tmp_path / "big.txt"
    path.write_text("Hello world, again and again.\n" * 40_000, encoding="utf-8")  # ~1 MB of ids out
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    code = "import sys; from bpe_studio.cli import main; sys.exit(main())"
    with subprocess.Popen(
        [sys.executable, "-c", code, "encode", "-t", str(gpt2_folder), "--file", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    ) as child:
        assert child.stdout is not None and child.stderr is not None
        assert child.stdout.read(1024)  # the first kilobyte of ids, then the reader leaves (as `head -c`)
        child.stdout.close()
        try:
            errors = child.stderr.read()
            code_seen = child.wait(timeout=120)
        finally:
            child.kill()
    assert code_seen == 141, errors.decode()
    assert b"Traceback" not in errors and b"BrokenPipe" not in errors, errors.decode()
