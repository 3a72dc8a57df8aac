"""``--cluster ADDRESS`` against peers that are not a working Dask scheduler: no hang, one line, no traceback.

The peers are real sockets in this process: a listener that accepts and never answers, an HTTP server, a
port where nothing listens. The engine's plain-socket probe is tested without Dask; the command line needs
Dask for ``--cluster`` and runs in a subprocess, with a short ``BPE_STUDIO_CLUSTER_TIMEOUT``.
"""

from __future__ import annotations

import http.server
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from bpe_studio.engine.corpus import distributed as dist
from bpe_studio.engine.corpus.distributed import ClusterError, parse_cluster, probe_address

from ..conftest import REPO_ROOT

# The wait the tests allow a probe; the subprocess gets far longer, so only a hang can hit its timeout.
SHORT = 1.0
NO_HANG = 90


@pytest.fixture
def silent_listener() -> Iterator[str]:
    """The address of a socket that accepts every connection and never sends a byte (closed at teardown)."""
    server = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                accepted.append(server.accept()[0])
            except TimeoutError:
                continue
            except OSError:
                return

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(timeout=10)
        for conn in accepted:
            conn.close()
        server.close()


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"hello from an HTTP server\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def http_server() -> Iterator[str]:
    """The address of an HTTP server answering every GET (shut down at teardown)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"tcp://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture
def refused_port() -> Iterator[str]:
    """The address of a port that is bound but not listening, so a connection is refused (and no other
    program can take the port while the test runs)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    try:
        yield f"tcp://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        sock.close()


# --------------------------------------------------------------------------------------------------
# The plain-socket probe (no Dask needed)


def test_silent_listener_is_no_answer_within_the_timeout(silent_listener: str) -> None:
    with pytest.raises(ClusterError) as info:
        probe_address(silent_listener, SHORT)
    assert str(info.value).startswith(f"no Dask scheduler answered at {silent_listener} within 1 s;")


def test_a_name_lookup_that_never_answers_is_no_answer_within_the_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A DNS server that never answers: getaddrinfo has no timeout of its own. The probe runs in a thread
    # joined with a bound, so that a wait without deadline fails the test instead of hanging it.
    release = threading.Event()

    def never(*_args: object, **_kwargs: object) -> list[object]:
        release.wait(60)
        raise socket.gaierror("released")

    monkeypatch.setattr(socket, "getaddrinfo", never)
    outcome: dict[str, BaseException] = {}

    def probe() -> None:
        try:
            probe_address("tcp://scheduler.invalid:8786", SHORT)
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    thread.join(timeout=20)
    release.set()
    assert not thread.is_alive(), "the probe waited for the name lookup without a deadline"
    error = outcome.get("error")
    assert isinstance(error, ClusterError)
    assert str(error).startswith("no Dask scheduler answered at tcp://scheduler.invalid:8786 within 1 s;")


def test_http_server_is_not_a_dask_scheduler(http_server: str) -> None:
    with pytest.raises(ClusterError) as info:
        probe_address(http_server, 30.0)  # answers at once: the timeout is never reached
    assert str(info.value).startswith(f"{http_server} is not a Dask scheduler (it ")


def test_refused_connection_says_nothing_listens(refused_port: str) -> None:
    with pytest.raises(ClusterError, match=r"nothing listens at .* \(connection refused\); start one"):
        probe_address(refused_port, 30.0)  # refused at once: the timeout is never reached


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("tcp://127.0.0.1:0", "a port is a number from 1 to 65535"),
        ("tcp://127.0.0.1:65536", "a port is a number from 1 to 65535"),
        ("tcp://127.0.0.1:99999999999999999999", "a port is a number from 1 to 65535"),
        ("tcp://127.0.0.1", "tcp://HOST:8786"),
        ("tcp://:8786", "tcp://HOST:8786"),
        ("tcp://a b:8786", "tcp://HOST:8786"),
        ("tcp://[::1:8786", "tcp://HOST:8786"),
        ("udp://127.0.0.1:8786", "tcp://HOST:8786"),
    ],
)
def test_bad_addresses_are_refused_when_parsed(spec: str, says: str) -> None:
    with pytest.raises(ValueError, match=says.replace(".", r"\.").replace("/", "/")):
        parse_cluster(spec)


def test_ports_at_the_ends_of_the_range_are_accepted() -> None:
    assert parse_cluster("tcp://127.0.0.1:1").address == "tcp://127.0.0.1:1"
    assert parse_cluster("tcp://[::1]:65535").address == "tcp://[::1]:65535"


def test_bad_timeout_variable_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    for value in ("0", "-1", "soon", "nan", "inf"):
        monkeypatch.setenv(dist.TIMEOUT_ENV, value)
        with pytest.raises(ClusterError, match="is not a positive number of seconds"):
            dist.connect_timeout()
    monkeypatch.setenv(dist.TIMEOUT_ENV, "2.5")
    assert dist.connect_timeout() == 2.5


def test_a_dask_scheduler_passes_and_a_dask_worker_is_named() -> None:
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=1,
        processes=False,  # threads of this process: nothing to leave behind
        protocol="tcp",
        host="127.0.0.1",
        dashboard_address=None,
        scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
    ) as cluster:
        assert 0 < dist.probe_scheduler(cluster.scheduler_address, 30.0) <= 30.0
        worker = next(iter(cluster.scheduler_info["workers"]))
        with pytest.raises(ClusterError, match=r"is not a Dask scheduler \(it is a Dask Worker\)"):
            dist.probe_scheduler(worker, 30.0)
        # the scheduler is unharmed by the probes: a client still works
        with distributed.Client(cluster.scheduler_address, timeout="30s") as client:
            assert client.submit(sum, [1, 2]).result(timeout=30) == 3


# --------------------------------------------------------------------------------------------------
# The command line


def _train(tmp_path: Path, cluster: str, **env: str) -> subprocess.CompletedProcess[str]:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("hello world\n" * 50, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "bpe_studio", "train", str(corpus), "--vocab-size", "300",
         "--cluster", cluster, "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT), dist.TIMEOUT_ENV: str(SHORT), **env},
        timeout=NO_HANG,  # a hang fails here
        check=False,
    )  # fmt: skip


def _one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("bpe-studio") and done.stderr.count("\n") == 1, done.stderr
    return done.stderr


@pytest.mark.parametrize(
    ("peer", "says"),
    [
        ("silent_listener", "no Dask scheduler answered at {address} within 1 s; "),
        ("http_server", "{address} is not a Dask scheduler (it "),
        ("refused_port", "nothing listens at {address} (connection refused)"),
    ],
)
def test_cli_cluster_peer_that_is_not_a_scheduler(
    tmp_path: Path, request: pytest.FixtureRequest, peer: str, says: str
) -> None:
    pytest.importorskip("distributed")
    address = request.getfixturevalue(peer)
    done = _train(tmp_path, address)
    assert done.returncode == 1
    assert _one_line_error(done).startswith("bpe-studio: error: " + says.format(address=address))
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("tcp://127.0.0.1:70000", "a port is a number from 1 to 65535"),
        ("tcp://127.0.0.1:0", "a port is a number from 1 to 65535"),
        ("tcp://127.0.0.1", "'tcp://HOST:8786'"),
        ("127.0.0.1:8786", "'tcp://HOST:8786'"),
    ],
)
def test_cli_bad_address_is_a_usage_error(tmp_path: Path, spec: str, says: str) -> None:
    done = _train(tmp_path, spec)
    assert done.returncode == 2
    line = _one_line_error(done)
    assert line.startswith("bpe-studio train: error: argument --cluster: ") and says in line, line


def test_cli_bad_timeout_variable_is_a_usage_error(tmp_path: Path, silent_listener: str) -> None:
    done = _train(tmp_path, silent_listener, **{dist.TIMEOUT_ENV: "soon"})
    assert done.returncode == 2
    assert f"{dist.TIMEOUT_ENV}='soon' is not a positive number of seconds" in _one_line_error(done)
