"""Pytest plugin: a threaded TCP echo server on loopback, standing in for the Rust echo service."""

from __future__ import annotations

import socket
import threading

import pytest


def _serve(conn: socket.socket) -> None:
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    with conn:
        while data := conn.recv(65536):
            conn.sendall(data)


@pytest.fixture(scope="session")
def echo_addr():
    """host:port of an echo server that sends every byte back on its connection."""
    server = socket.create_server(("127.0.0.1", 0))

    def accept() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=_serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield f"127.0.0.1:{server.getsockname()[1]}"
    server.close()
