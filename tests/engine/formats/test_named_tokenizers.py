"""Tokenizers by name: ``gpt2`` shipped as package data, OpenAI's encodings from tiktoken's cache (never
downloaded unasked; ``--download`` fetches with a timeout and checks the published SHA-256)."""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import http.server
import json
import socket
import threading
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from bpe_studio.cli import main
from bpe_studio.engine import FormatError, load, save
from bpe_studio.engine.formats import named
from bpe_studio.engine.formats.named import (
    GPT2_FOLDER,
    NamedTokenizerMissingError,
    cache_key,
    download_encoding,
)
from bpe_studio.engine.formats.tiktoken_format import KNOWN_ENCODINGS, KnownEncoding

from ..encoding.test_tokenizer import _case_text, _reference_cases
from ..reference_encoder import gpt2_tokenizer

REPO = Path(__file__).resolve().parents[3]
R50K = KNOWN_ENCODINGS["r50k_base"]


@pytest.fixture(scope="module")
def r50k_bytes(cs336_data: Path, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """OpenAI's r50k_base.tiktoken, byte for byte (GPT-2's ranks as this engine writes them)."""
    path = save(gpt2_tokenizer(cs336_data), tmp_path_factory.mktemp("r50k") / "r.tiktoken", format="tiktoken")
    data = path.read_bytes()
    assert hashlib.sha256(data).hexdigest() == R50K.sha256
    return data


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "tiktoken-cache"
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(folder))
    return folder


# ------------------------------------------------------------------------------------------ gpt2 built in


def test_builtin_gpt2_gives_the_reference_ids(cs336_data: Path) -> None:
    tok = load("gpt2")
    assert tok.vocab_size == 50_257 and len(tok.merges) == 50_000
    assert tok.special_tokens == {"<|endoftext|>": 50256} and tok.pattern_name == "gpt2"
    for name, case in _reference_cases(cs336_data):
        assert (
            tok.encode(_case_text(cs336_data, case), allowed_special=set(case["allowed_special"]))
            == case["ids"]
        ), name


def test_builtin_gpt2_files_are_the_shared_ones_and_ship_with_the_package(cs336_data: Path) -> None:
    assert (GPT2_FOLDER / "vocab.json").read_bytes() == (cs336_data / "gpt2_vocab.json").read_bytes()
    assert (GPT2_FOLDER / "merges.txt").read_bytes() == (cs336_data / "gpt2_merges.txt").read_bytes()
    notice = (GPT2_FOLDER / "LICENSE").read_text(encoding="utf-8")
    assert "Copyright (c) 2019 OpenAI" in notice and "Stanford University" in notice
    # setuptools' package-data globs do not recurse: every shipped file must match one of them.
    patterns = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"][
        "package-data"
    ]["bpe_studio"]
    package = REPO / "bpe_studio"
    for file in GPT2_FOLDER.iterdir():
        relative = file.relative_to(package).as_posix()
        assert any(fnmatch.fnmatch(relative, p) and "/" not in relative[len(p) - 1 :] for p in patterns), (
            relative
        )


def test_an_existing_path_wins_over_a_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "gpt2").mkdir()
    with pytest.raises(FormatError, match="a tokenizer folder needs"):
        load("gpt2")


# ------------------------------------------------------------------------------------- tiktoken's cache


def test_an_encoding_is_read_from_tiktokens_cache(cache: Path, r50k_bytes: bytes) -> None:
    cache.mkdir()
    (cache / cache_key(R50K)).write_bytes(r50k_bytes)  # the name tiktoken gives it
    for name in ("r50k_base", "r50k"):
        tok = load(name)
        assert tok.encode("Hello world<|endoftext|>") == [15496, 995, 50256]


def test_a_file_named_after_the_encoding_is_found_too(cache: Path, r50k_bytes: bytes) -> None:
    cache.mkdir()
    (cache / "r50k_base.tiktoken").write_bytes(r50k_bytes)
    assert len(load("r50k_base").merges) == 50_000


def test_a_missing_or_damaged_file_says_where_to_put_it(cache: Path, r50k_bytes: bytes) -> None:
    with pytest.raises(NamedTokenizerMissingError) as caught:
        load("cl100k_base")
    message = str(caught.value)
    assert str(cache) in message and "cl100k_base.tiktoken" in message and "--download" in message
    cache.mkdir()
    (cache / cache_key(R50K)).write_bytes(r50k_bytes[:-10])  # cut short: its SHA-256 is not OpenAI's
    with pytest.raises(NamedTokenizerMissingError):
        load("r50k_base")


def test_an_empty_cache_setting_says_to_set_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    with pytest.raises(NamedTokenizerMissingError, match="set TIKTOKEN_CACHE_DIR"):
        load("o200k_base")


def test_cli_by_name(cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["encode", "-t", "gpt2", "Hello world"]) == 0
    assert capsys.readouterr().out == "15496 995\n"
    assert main(["inspect", "gpt2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["merges"] == 50_000
    assert main(["encode", "-t", "o200k_base", "x"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bpe-studio: error: o200k_base: ") and err.count("\n") == 1 and str(cache) in err
    assert not cache.exists()  # nothing was downloaded


# -------------------------------------------------------------------------------------------- download


class _Server:
    """A local HTTP server answering every GET with ``body`` (a thread; shut down by the fixture)."""

    def __init__(self) -> None:
        self.body = b""
        self.requests = 0
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.requests += 1
                self.send_response(200)
                self.send_header("Content-Length", str(len(owner.body)))
                self.end_headers()
                self.wfile.write(owner.body)

            def log_message(self, *_args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[_Server]:
    found = _Server()
    monkeypatch.setattr(KnownEncoding, "url", property(lambda e: f"{found.url}{e.name}.tiktoken"))
    yield found
    found.httpd.shutdown()
    found.httpd.server_close()
    found.thread.join(timeout=10)


def test_download_writes_the_checked_file_into_the_cache(
    cache: Path, server: _Server, r50k_bytes: bytes
) -> None:
    server.body = r50k_bytes
    path = download_encoding("r50k")
    assert path == cache / cache_key(R50K) and path.read_bytes() == r50k_bytes
    assert load("r50k_base").encode("Hello") == [15496]
    download_encoding("r50k_base")  # cached: no second request
    assert server.requests == 1


def test_download_refuses_a_file_that_is_not_openais(cache: Path, server: _Server, r50k_bytes: bytes) -> None:
    server.body = r50k_bytes.replace(b"IQ== 0", b"Ig== 0")
    with pytest.raises(FormatError, match="SHA-256"):
        download_encoding("r50k_base")
    assert not cache.exists() or not any(cache.iterdir())


def test_download_gives_up_on_a_silent_server(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/r50k_base.tiktoken"
        with pytest.raises(FormatError, match=r"did not finish within the 0\.5 s deadline"):
            download_encoding("r50k_base", url=url, timeout=0.5)
    assert not cache.exists()


def test_cli_download_fetches_only_when_asked(
    cache: Path, server: _Server, r50k_bytes: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    server.body = r50k_bytes
    assert main(["encode", "-t", "r50k_base", "Hello world"]) == 2
    assert server.requests == 0
    capsys.readouterr()
    assert main(["encode", "-t", "r50k_base", "--download", "Hello world"]) == 0
    assert capsys.readouterr().out == "15496 995\n" and server.requests == 1


def test_names_are_listed() -> None:
    assert named.tokenizer_names() == ["gpt2", "r50k_base", "p50k_base", "cl100k_base", "o200k_base"]


def test_cli_download_failure_is_a_run_failure(
    cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as closed:  # a port nothing listens on: the connection is refused at once
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setattr(KnownEncoding, "url", property(lambda e: f"http://127.0.0.1:{port}/{e.name}"))
    assert main(["encode", "-t", "cl100k_base", "--download", "x"]) == 1
    err = capsys.readouterr().err
    assert "bpe-studio: error: cl100k_base: could not download" in err and not cache.exists()


# ------------------------------------------------------------------------ download: one whole deadline


class _Trickle:
    """A raw HTTP server on 127.0.0.1 that sends its answer one byte every ``pause`` seconds (a thread).

    With ``headers_too`` even the status line and headers trickle. Sending the whole answer would take far
    longer than any test (``length`` bytes at 0.2 s each), so a timeout that applies to each read, not to the
    whole download, would hang the test; it stops when the client hangs up or the fixture ends.
    """

    def __init__(self, *, length: int = 300, pause: float = 0.2, headers_too: bool = False) -> None:
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen()
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/r50k_base.tiktoken"
        self.stop = threading.Event()
        head = f"HTTP/1.0 200 OK\r\nContent-Length: {length}\r\n\r\n".encode()
        self.prefix, self.body = (head, b"") if not headers_too else (b"", head)
        self.body += b"x" * length
        self.pause = pause
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        with contextlib.suppress(OSError):
            conn, _ = self.listener.accept()
            with conn:
                conn.recv(65536)  # the request
                conn.sendall(self.prefix)
                for i in range(len(self.body)):
                    if self.stop.wait(self.pause):
                        return
                    conn.sendall(self.body[i : i + 1])

    def close(self) -> None:
        self.stop.set()
        self.listener.close()
        self.thread.join(timeout=10)


def _download_in_thread(url: str, timeout: float) -> tuple[threading.Thread, dict[str, BaseException]]:
    """Run ``download_encoding`` in a thread, so that a hang fails the test (a bounded join) instead of
    holding it."""
    outcome: dict[str, BaseException] = {}

    def run() -> None:
        try:
            download_encoding("r50k_base", url=url, timeout=timeout)
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout=30)  # far beyond the 1 s deadline, far below the 60 s the server would take
    return thread, outcome


@pytest.mark.parametrize("headers_too", [False, True], ids=["body", "headers"])
def test_download_stops_at_its_deadline_however_slowly_the_server_sends(
    cache: Path, headers_too: bool
) -> None:
    trickle = _Trickle(headers_too=headers_too)
    try:
        thread, outcome = _download_in_thread(trickle.url, timeout=1.0)
    finally:
        trickle.close()
    assert not thread.is_alive(), "the download outlived its deadline (a timeout per read, not for the whole)"
    error = outcome.get("error")
    assert isinstance(error, FormatError)
    message = str(error)
    assert "\n" not in message and trickle.url in message and "within the 1 s deadline" in message
    assert "BPE_STUDIO_DOWNLOAD_TIMEOUT=SECONDS" in message and "nothing was written" in message
    assert not cache.exists() or not any(cache.iterdir())


def test_download_refuses_an_answer_larger_than_any_encoding(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(named, "DOWNLOAD_LIMIT", 100)
    trickle = _Trickle(length=101, pause=0.0)
    try:
        with pytest.raises(FormatError, match="declared 101 bytes, more than the 100"):
            download_encoding("r50k_base", url=trickle.url, timeout=10)
    finally:
        trickle.close()
    assert not cache.exists()


def test_download_cut_short_is_refused(cache: Path) -> None:
    with socket.socket() as listener:  # declares 1000 bytes, sends 10, hangs up
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/r50k_base.tiktoken"

        def serve() -> None:
            conn, _ = listener.accept()
            with conn:
                conn.recv(65536)
                conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 1000\r\n\r\n" + b"x" * 10)

        server = threading.Thread(target=serve, daemon=True)
        server.start()
        with pytest.raises(FormatError, match="closed after 10 of 1,000 bytes"):
            download_encoding("r50k_base", url=url, timeout=10)
        server.join(timeout=10)
    assert not cache.exists()


def test_download_deadline_from_the_environment(
    cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("BPE_STUDIO_DOWNLOAD_TIMEOUT", "soon")
    assert main(["encode", "-t", "r50k_base", "--download", "x"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "bpe-studio: error: BPE_STUDIO_DOWNLOAD_TIMEOUT='soon' is not a positive number of seconds; "
        "set it to e.g. 300\n"
    )
    monkeypatch.setenv("BPE_STUDIO_DOWNLOAD_TIMEOUT", "2.5")
    assert named.download_timeout() == 2.5
