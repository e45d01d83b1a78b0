"""Runs the services under test (workloads/services/) the way the driver does, for their tests.

Each server starts from its start command (the catalogue's form, with {python} {host} {port}
{workers} {threads} placeholders) in workloads/services/, in a process group of its own; it is
ready when GET /plain answers 200, and stopping it is one SIGTERM to the command's process, after
which no process of the group may be left STOP_WITHIN_S later.
"""

from __future__ import annotations

import http.client
import importlib.util
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

SERVICES = Path(__file__).resolve().parents[1] / "services"
READY_TIMEOUT_S = 30.0
STOP_WITHIN_S = 5.0

# The packages each server needs here, by its catalogue name; the start commands themselves are
# read from the catalogue (one copy: what the lab runs is what is tested). Each bounds its
# graceful stop to 2 s (gunicorn --graceful-timeout, uvicorn --timeout-graceful-shutdown,
# granian --workers-kill-timeout) so that a request still in flight at SIGTERM cannot keep a
# worker past STOP_WITHIN_S; granian also needs it for a worker that is still starting when the
# stop comes, which otherwise never stops.
NEEDS = {
    "gunicorn_sync": ("gunicorn", "flask", "psycopg_pool", "urllib3"),
    "gunicorn_gthread": ("gunicorn", "flask", "psycopg_pool", "urllib3"),
    "uvicorn": ("uvicorn", "uvloop", "httptools", "starlette", "asyncpg", "aiohttp"),
    "aiohttp": ("gunicorn", "aiohttp", "uvloop", "asyncpg"),
    "granian_wsgi": ("granian", "flask", "psycopg_pool", "urllib3"),
    "granian_asgi": ("granian", "uvloop", "starlette", "asyncpg", "aiohttp"),
}
# The WebSocket chat rooms (GET /plain and /ws only; test_ws_rooms.py), by catalogue name.
ROOMS = {
    "ws_flask_sock": ("gunicorn", "flask", "flask_sock", "simple_websocket"),
    "ws_uvicorn": ("uvicorn", "uvloop", "httptools", "starlette", "websockets"),
    "ws_websockets": ("websockets", "uvloop"),
}
# The lab's own servers (kind "reference", in Rust): tested by the Rust tests (tests/fanout.rs).
REFERENCES = ("ws_rust_reference",)
CATALOGUE = Path(__file__).resolve().parents[1] / "catalogue.toml"


def catalogue_servers() -> dict[str, list[str]]:
    """name -> argv template of every [[server]] in the catalogue (tomllib: Python 3.11+)."""
    try:
        import tomllib
    except ImportError:
        pytest.skip("reading the catalogue's server commands needs tomllib (Python 3.11+)")
    with CATALOGUE.open("rb") as f:
        return {s["name"]: s["command"] for s in tomllib.load(f).get("server", [])}


SERVERS = list(NEEDS)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def group_members(pgid: int) -> list[str]:
    """`pid state cmdline` of each process of group `pgid` that has not exited (zombies excluded:
    an exited worker whose parent has not reaped it yet is gone for the test's purpose)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        state, _ppid, pgrp = stat.rsplit(")", 1)[1].split()[:3]
        if int(pgrp) == pgid and state != "Z":
            found.append(f"{entry.name} {state} {cmdline.strip()}")
    return found


@dataclass
class Answer:
    status: int
    content_type: str
    body: bytes

    def json(self) -> object:
        assert self.content_type == "application/json", (self.content_type, self.body)
        return json.loads(self.body)


class Service:
    """One running server: `get(path)` on a keep-alive connection, `stop()` by SIGTERM."""

    def __init__(self, name: str, env: dict[str, str], workers: int = 2, threads: int = 2) -> None:
        argv, needs = catalogue_servers()[name], {**NEEDS, **ROOMS}[name]
        missing = [m for m in needs if importlib.util.find_spec(m) is None]
        if missing:
            pytest.skip(f"{name} cannot start on {sys.executable}: no {', '.join(missing)}")
        self.name, self.port = name, free_port()
        fields = {"python": sys.executable, "host": "127.0.0.1", "port": self.port}
        fields["workers"] = workers
        self.cmd = [a.format(threads=threads, **fields) for a in argv]
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            self.cmd, cwd=SERVICES, env=env, stdin=subprocess.DEVNULL, stdout=self.log,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        self.pgid = self.proc.pid
        self.conn: http.client.HTTPConnection | None = None

    def output(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-4000:]

    def wait_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(
                    f"{self.name} exited with {self.proc.returncode} before /plain answered:"
                    f"\n{shlex.join(self.cmd)}\n{self.output()}"
                )
            try:
                if self.get("/plain").status == 200:
                    return
            except OSError:
                self.close()
                time.sleep(0.05)
        pytest.fail(
            f"{self.name}: /plain did not answer 200 in {READY_TIMEOUT_S} s\n{self.output()}"
        )

    def get(self, path: str) -> Answer:
        """GET on this test's keep-alive connection (a new one when the server closed it)."""
        for attempt in (1, 2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
            try:
                self.conn.request("GET", path)
                resp = self.conn.getresponse()
                body = resp.read()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self.close()  # a server that does not keep connections alive (gunicorn sync)
                if attempt == 2:
                    raise
                continue
            if resp.will_close:
                self.close()
            return Answer(resp.status, resp.getheader("content-type", ""), body)
        raise AssertionError("unreachable")

    def get_quietly(self, path: str) -> None:
        """GET on a connection of its own, whatever comes of it (for a request left in flight)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            conn.request("GET", path)
            conn.getresponse().read()
        except (OSError, http.client.HTTPException):
            pass
        finally:
            conn.close()

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def stop(self) -> list[str]:
        """SIGTERM to the command's process; the group's processes left STOP_WITHIN_S later."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_WITHIN_S
        try:
            self.proc.wait(timeout=STOP_WITHIN_S)
        except subprocess.TimeoutExpired:
            pass
        while (left := group_members(self.pgid)) and time.monotonic() < deadline:
            time.sleep(0.05)
        return left

    def kill(self) -> None:
        """Whatever is left of the group, killed (the test's own cleanup)."""
        self.close()
        try:
            os.killpg(self.pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if self.proc.poll() is None:
            self.proc.wait()
        self.log.close()


def service_env(**extra: str) -> dict[str, str]:
    """Our environment without the services' variables, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASYNCLAB_")}
    return {**env, **extra}
