"""Tokenizers by name: ``gpt2`` shipped as package data, OpenAI's encodings from tiktoken's cache (never
downloaded unasked; ``--download`` fetches with a timeout and checks the published SHA-256)."""

from __future__ import annotations

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

from .reference_encoder import gpt2_tokenizer
from .test_tokenizer import _case_text, _reference_cases

REPO = Path(__file__).resolve().parents[2]
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
        with pytest.raises(FormatError, match="could not download"):
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
