"""Hugging Face model ids: resolved from a fake local cache; ``--download`` against a server on 127.0.0.1
(``HF_ENDPOINT``): only the tokenizer files, into the cache layout, with ``HF_TOKEN``; nothing reaches the
network."""

from __future__ import annotations

import http.server
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bpe_studio.cli import main
from bpe_studio.engine import load, save
from bpe_studio.engine.formats import display_name
from bpe_studio.engine.formats.hub import (
    HubModelMissingError,
    HubModelUnavailableError,
    cached_models,
    download_model,
    hub_cache_dir,
)
from bpe_studio.engine.formats.tekken import write_tekken

from ..reference_encoder import trained_tokenizer

_COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(scope="module")
def files(cs336_data: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """A small tokenizer as tokenizer.json and as tekken.json."""
    tok = trained_tokenizer(cs336_data, vocab_size=300)
    folder = tmp_path_factory.mktemp("hub-files")
    return {
        "tokenizer.json": save(tok, folder / "tokenizer.json", format="hf").read_bytes(),
        "tekken.json": write_tekken(tok, folder / "tekken.json", num_special=20).read_bytes(),
        "tokenizer_config.json": b'{"model_max_length": 1024}',
    }


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty Hugging Face cache, and no endpoint, token or offline setting from the machine."""
    folder = tmp_path / "hub"
    folder.mkdir()
    monkeypatch.setenv("HF_HUB_CACHE", str(folder))
    for variable in ("HF_HOME", "HF_TOKEN", "HF_HUB_OFFLINE"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # discard: a test that forgets a server fails
    return folder


def _cache(hub: Path, model_id: str, name: str, data: bytes, *, ref: bool = True) -> Path:
    folder = hub / ("models--" + model_id.replace("/", "--"))
    snapshot = folder / "snapshots" / _COMMIT
    snapshot.mkdir(parents=True)
    (snapshot / name).write_bytes(data)
    if ref:
        (folder / "refs").mkdir()
        (folder / "refs" / "main").write_text(_COMMIT)
    return snapshot / name


def test_a_model_id_opens_from_the_cache(hub: Path, files: dict[str, bytes], capsys: Any) -> None:
    path = _cache(hub, "org/Tiny-1.5B", "tokenizer.json", files["tokenizer.json"])
    assert load("org/Tiny-1.5B").vocab == load(path).vocab
    assert display_name(path) == "org/Tiny-1.5B"
    assert main(["inspect", "org/Tiny-1.5B", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["vocab_size"] == load(path).vocab_size
    assert main(["encode", "-t", "org/Tiny-1.5B", "the cat"]) == 0
    assert capsys.readouterr().out.split() == [str(i) for i in load(path).encode("the cat")]
    assert cached_models() == ["org/Tiny-1.5B"]


def test_hf_home_and_a_cache_without_refs(
    hub: Path, files: dict[str, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HF_HUB_CACHE")
    monkeypatch.setenv("HF_HOME", str(hub.parent / "home"))
    assert hub_cache_dir() == hub.parent / "home" / "hub"
    _cache(hub.parent / "home" / "hub", "mistralai/Mini", "tekken.json", files["tekken.json"], ref=False)
    assert load("mistralai/Mini").special_tokens["<s>"] == 1


def test_a_model_not_in_the_cache_says_where_it_looked_and_how_to_fetch(hub: Path, capsys: Any) -> None:
    with pytest.raises(HubModelMissingError) as caught:
        load("meta-llama/Llama-3.1-8B")
    message = str(caught.value)
    assert str(hub / "models--meta-llama--Llama-3.1-8B") in message and "--download" in message
    assert "huggingface-cli download meta-llama/Llama-3.1-8B tokenizer.json" in message
    assert main(["inspect", "meta-llama/Llama-3.1-8B"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "huggingface-cli download" in err


class _Hub:
    """A fake Hub on 127.0.0.1: ``files`` by model id and name, or an HTTP status for all."""

    def __init__(self, files: dict[str, bytes], status: int = 200, missing: tuple[str, ...] = ()) -> None:
        self.requests: list[tuple[str, str | None]] = []
        hub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                hub.requests.append((self.path, self.headers.get("Authorization")))
                name = self.path.rsplit("/", 1)[-1]
                if status != 200 or name in missing or name not in files:
                    self.send_response(status if status != 200 else 404)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(files[name])))
                self.send_header("X-Repo-Commit", _COMMIT)
                self.end_headers()
                self.wfile.write(files[name])

            def log_message(self, *_args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def serve(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    started: list[_Hub] = []

    def start(files: dict[str, bytes], **kwargs: Any) -> _Hub:
        server = _Hub(files, **kwargs)
        monkeypatch.setenv("HF_ENDPOINT", server.url + "/")
        started.append(server)
        return server

    yield start
    for server in started:
        server.server.shutdown()
        server.server.server_close()


def test_download_fetches_only_the_tokenizer_files_into_the_cache(
    hub: Path, files: dict[str, bytes], serve: Any, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = serve(files)
    monkeypatch.setenv("HF_TOKEN", "hf_secret")
    assert main(["encode", "-t", "org/Tiny", "the cat"]) == 2  # never unasked
    assert server.requests == []
    capsys.readouterr()
    assert main(["encode", "-t", "org/Tiny", "--download", "the cat"]) == 0
    assert [path for path, _ in server.requests] == [
        "/org/Tiny/resolve/main/tokenizer.json",
        "/org/Tiny/resolve/main/tokenizer_config.json",
    ]
    assert {auth for _, auth in server.requests} == {"Bearer hf_secret"}
    folder = hub / "models--org--Tiny"
    assert (folder / "refs" / "main").read_text() == _COMMIT
    snapshot = folder / "snapshots" / _COMMIT
    assert sorted(p.name for p in snapshot.iterdir()) == ["tokenizer.json", "tokenizer_config.json"]
    assert (snapshot / "tokenizer.json").read_bytes() == files["tokenizer.json"]
    assert sorted(p.name for p in hub.rglob("*") if p.is_file()) == [
        "main",
        "tokenizer.json",
        "tokenizer_config.json",
    ]
    assert main(["encode", "-t", "org/Tiny", "--download", "the cat"]) == 0  # cached: no second fetch
    assert len(server.requests) == 2


def test_download_takes_tekken_json_when_there_is_no_tokenizer_json(
    hub: Path, files: dict[str, bytes], serve: Any
) -> None:
    server = serve(files, missing=("tokenizer.json", "tokenizer_config.json"))
    path = download_model("mistralai/Tiny")
    assert path.name == "tekken.json" and load("mistralai/Tiny").special_tokens["</s>"] == 2
    assert server.requests[0][1] is None  # no HF_TOKEN: no Authorization header


@pytest.mark.parametrize(
    ("status", "words"), [(401, "gated or private"), (403, "HF_TOKEN"), (404, "no such model")]
)
def test_gated_or_missing_models_are_one_sentence(
    hub: Path, files: dict[str, bytes], serve: Any, capsys: Any, *, status: int, words: str
) -> None:
    serve(files, status=status)
    with pytest.raises(HubModelUnavailableError, match=words):
        download_model("org/Gated")
    assert main(["inspect", "org/Gated", "--download"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and words in err  # the "fetching" line and the error
    assert not any(hub.iterdir())


def test_offline_downloads_nothing(
    hub: Path, files: dict[str, bytes], serve: Any, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = serve(files)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main(["inspect", "org/Tiny", "--download"]) == 1
    assert "HF_HUB_OFFLINE" in capsys.readouterr().err and server.requests == []


def test_a_silent_server_meets_the_deadline(hub: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    try:
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{listener.getsockname()[1]}")
        monkeypatch.setenv("BPE_STUDIO_DOWNLOAD_TIMEOUT", "0.5")
        assert main(["inspect", "org/Tiny", "--download"]) == 1
        assert "0.5 s deadline" in capsys.readouterr().err
    finally:
        listener.close()
    assert not any(hub.iterdir())
