"""Memory per held keep-alive connection of a Python web server, measured with nothing of the lab's:
the cross-check of the `connections` scenario (tests/held_connections.rs).

Usage: ENV/bin/python scripts/bare_held_connections.py SERVER N --workers W --threads T
       [--keep-alive 120] [--cpus 1] [--settle 1]
SERVER is a [[server]] of workloads/catalogue.toml; its command is filled in here ({python} is
this interpreter, {host} 127.0.0.1, {port} a free port, the keep_alive arguments appended) and
run in workloads/services/. The script starts it, waits for GET /plain, warms it with a second of
requests on ten connections at once, reads the summed VmRSS of its process tree, opens N
connections with plain blocking sockets (each sends one keep-alive GET /plain and reads its whole
answer; one the server says it closes is closed), holds them for the settle time, reads the tree
again and prints one JSON line:
{"connections": N, "held": H, "rss_before_kib": ..., "rss_after_kib": ...,
 "per_connection_kib": ...}, where held counts the connections the server had not closed, and
per_connection_kib is the RSS added over them.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import pathlib
import resource
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time

import tomllib

WORKLOADS = pathlib.Path(__file__).resolve().parent.parent / "workloads"
REQUEST = b"GET /plain HTTP/1.1\r\nHost: bare\r\n\r\n"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def children() -> dict[int, list[int]]:
    """Every process's children, from each /proc/PID/stat's parent field."""
    kids: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        kids.setdefault(ppid, []).append(int(entry))
    return kids


def tree_rss_kib(root: int) -> int:
    kids = children()
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        todo.extend(kids.get(pid, []))
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


def settled_rss_kib(root: int) -> float:
    readings = []
    for _ in range(5):
        time.sleep(0.1)
        readings.append(tree_rss_kib(root))
    return statistics.median(readings)


def read_answer(s: socket.socket) -> bool:
    """Reads one whole answer; True when it is a 200 the server keeps the connection open after."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            return False
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    fields = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
    length = int(fields.get("content-length", "0"))
    while len(body) < length:
        chunk = s.recv(4096)
        if not chunk:
            return False
        body += chunk
    return lines[0].split()[1] == "200" and fields.get("connection", "").lower() != "close"


def command(
    name: str, port: int, workers: int, threads: int, keep_alive: int
) -> tuple[list[str], pathlib.Path]:
    with open(WORKLOADS / "catalogue.toml", "rb") as f:
        servers = {s["name"]: s for s in tomllib.load(f)["server"]}
    server = servers[name]
    fill = {
        "{python}": sys.executable,
        "{host}": "127.0.0.1",
        "{port}": str(port),
        "{workers}": str(workers),
        "{threads}": str(threads),
        "{keep_alive_s}": str(keep_alive),
    }
    argv = server["command"] + (server.get("keep_alive", []) if keep_alive else [])
    for k, v in fill.items():
        argv = [x.replace(k, v) for x in argv]
    return argv, WORKLOADS / server.get("dir", "services")


def warm(port: int, seconds: float = 1.0, connections: int = 10) -> None:
    """Requests back to back on a few keep-alive connections at once, as the lab's closed-loop
    warm-up sends them: with several in flight, a threaded server starts its pool's threads now,
    not while the measured connections open."""
    end = time.monotonic() + seconds

    def one() -> None:
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        while time.monotonic() < end:
            s.sendall(REQUEST)
            if not read_answer(s):
                s.close()
                s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.close()

    clients = [threading.Thread(target=one) for _ in range(connections)]
    for t in clients:
        t.start()
    for t in clients:
        t.join()


def wait_ready(port: int, proc: subprocess.Popen, limit: float = 60.0) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"the server exited ({proc.returncode}) before it answered")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"GET /plain HTTP/1.1\r\nHost: bare\r\nConnection: close\r\n\r\n")
                if s.recv(12).startswith(b"HTTP/1.1 200"):
                    return
        except OSError:
            pass
        time.sleep(0.05)
    sys.exit(f"the server did not answer within {limit:.0f} s")


def still_open(s: socket.socket) -> bool:
    s.setblocking(False)
    try:
        return s.recv(1, socket.MSG_PEEK) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("server")
    ap.add_argument("n", type=int)
    ap.add_argument("--workers", type=int, required=True)
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--keep-alive", type=int, default=120)
    ap.add_argument("--cpus", default="")
    ap.add_argument("--settle", type=float, default=1.0)
    a = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    port = free_port()
    argv, cwd = command(a.server, port, a.workers, a.threads, a.keep_alive)
    cpus = {int(c) for c in a.cpus.split(",") if c}

    def pin() -> None:
        # The server dies with this script however it ends (PR_SET_PDEATHSIG = 1).
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)
        if cpus:
            os.sched_setaffinity(0, cpus)

    # SIGTERM ends the script through its `finally`, which stops the server's whole group.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=pin,
        start_new_session=True,
    )
    try:
        wait_ready(port, proc)
        warm(port)
        before = settled_rss_kib(proc.pid)
        socks = []
        for _ in range(a.n):
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            s.sendall(REQUEST)
            if read_answer(s):
                socks.append(s)
            else:
                # The server said it closes this connection (gunicorn's sync workers do after
                # every answer): close it as an HTTP client does, and hold it no longer.
                s.close()
        time.sleep(a.settle)
        after = settled_rss_kib(proc.pid)
        held = sum(still_open(s) for s in socks)
        print(
            json.dumps(
                {
                    "connections": a.n,
                    "held": held,
                    "rss_before_kib": before,
                    "rss_after_kib": after,
                    "per_connection_kib": (after - before) / held if held else None,
                }
            )
        )
        for s in socks:
            s.close()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


if __name__ == "__main__":
    main()
