"""Pytest fixtures: run harness.py as a real child the way the driver does; a mock HTTP server."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

WORKLOADS = Path(__file__).resolve().parents[1]
HARNESS = WORKLOADS / "harness.py"
sys.path.insert(0, str(WORKLOADS))  # lets tests import harness for in-process unit tests

# The driver's worker environment, the file src/runner/process.rs compiles in.
WORKER_ENV = WORKLOADS.parent / "src" / "runner" / "worker_env.txt"


def child_env() -> dict[str, str]:
    """The environment the driver gives a worker: each `NAME` of WORKER_ENV kept from ours when
    set, each `NAME=VALUE` set, nothing else."""
    env = {}
    for line in WORKER_ENV.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, is_set, value = line.partition("=")
        if is_set:
            env[name] = value
        elif name in os.environ:
            env[name] = os.environ[name]
    return env


class CtlReader:
    """Reads JSON lines from the read end of the ctl pipe, with timeouts."""

    def __init__(self, fd: int) -> None:
        self.fd, self.buf, self.eof = fd, b"", False

    def next(self, timeout: float) -> dict | None:
        """The next message; None at EOF or when nothing arrives within `timeout`."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf and not self.eof:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                return None
            chunk = os.read(self.fd, 65536)
            self.eof, self.buf = not chunk, self.buf + chunk
        if b"\n" not in self.buf:
            return None
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)


@dataclass
class Run:
    """What one harness run produced: ctl messages (with a 'go' marker), exit code, output."""

    events: list[str] = field(default_factory=list)
    messages: list[dict] = field(default_factory=list)
    returncode: int | None = None
    stderr: str = ""
    go_to_done_s: float | None = None

    def message(self, event: str) -> dict:
        found = [m for m in self.messages if m.get("event") == event]
        assert found, f"no {event!r} message; got {self.events}; stderr:\n{self.stderr}"
        return found[0]

    @property
    def result(self) -> dict:
        return self.message("result")


def run_harness(
    args: list[str], pause_before_go: float = 0.0, timeout: float = 60.0, send_go: bool = True
) -> Run:
    """Run harness.py with `args`, play the driver's side of the handshake, and collect it all."""
    read_fd, write_fd = os.pipe()
    run = Run()
    with tempfile.TemporaryFile() as err:
        cmd = [sys.executable, str(HARNESS), *args, "--ctl-fd", str(write_fd)]
        proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=err,
            pass_fds=(write_fd,), env=child_env(), cwd=WORKLOADS.parent,
        )  # fmt: skip
        os.close(write_fd)
        reader = CtlReader(read_fd)
        try:
            sent_go_at = None
            while True:
                waiting_for_go = "ready" in run.events and sent_go_at is None
                msg = reader.next(pause_before_go if waiting_for_go else timeout)
                if msg is None and waiting_for_go and not reader.eof:
                    if send_go:
                        proc.stdin.write(b"go\n")
                        proc.stdin.flush()
                    else:
                        proc.stdin.close()
                    sent_go_at = time.perf_counter()
                    run.events.append("go" if send_go else "stdin-closed")
                    continue
                if msg is None:
                    break
                if msg.get("event") == "done" and sent_go_at is not None:
                    run.go_to_done_s = time.perf_counter() - sent_go_at
                run.messages.append(msg)
                run.events.append(msg.get("event"))
            run.returncode = proc.wait(timeout=timeout)
        finally:
            proc.stdin.close()
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            os.close(read_fd)
            err.seek(0)
            run.stderr = err.read().decode(errors="replace")
    return run


def run_script(script, variant: str, params=None, services=None, **kw) -> Run:
    args = ["--script", str(script), "--variant", variant]
    args += ["--params", json.dumps(params or {}), "--services", json.dumps(services or {})]
    return run_harness(args, **kw)


@pytest.fixture
def harness_run():
    return run_script


class DelayHandler(BaseHTTPRequestHandler):
    """GET /delay/<ms>?bytes=N&status=S: sleep ms, answer N bytes with status S (keep-alive)."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are separate writes: avoid 40 ms stalls

    def do_GET(self) -> None:  # noqa: N802 - the http.server API
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        parts = url.path.strip("/").split("/")
        if len(parts) != 2 or parts[0] != "delay":
            self.send_error(404)
            return
        time.sleep(float(parts[1]) / 1000)
        body = b"x" * int(query.get("bytes", 0))
        self.send_response(int(query.get("status", 200)))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args) -> None:  # noqa: A002 - quiet
        pass


class Server(ThreadingHTTPServer):
    request_queue_size = 128
    daemon_threads = True


@pytest.fixture(scope="session")
def http_url():
    server = Server(("127.0.0.1", 0), DelayHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
