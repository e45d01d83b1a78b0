"""The WebSocket chat rooms (workloads/services/ws_*.py): each start command answers GET /plain,
broadcasts every message to every client in the room stamped with the server's wall clock
(room.py's format), adds ASYNCLAB_BROADCAST_DELAY_MS before a broadcast, and stops on SIGTERM
with no process left."""

from __future__ import annotations

import contextlib
import time

import pytest

from service_runner import ROOMS, Service, service_env

pytest.importorskip("websockets")
from websockets.sync.client import connect  # noqa: E402 - skipped above where it is missing

CLIENTS = 3


def room_messages(port: int, text: str) -> tuple[list[str], float]:
    """Joins CLIENTS clients, sends `text` from the first, and returns what each received and
    how long the first took to receive it, s."""
    url = f"ws://127.0.0.1:{port}/ws"
    with contextlib.ExitStack() as stack:
        clients = [stack.enter_context(connect(url, open_timeout=10)) for _ in range(CLIENTS)]
        time.sleep(0.2)  # every handler has joined the room before the message goes in
        start = time.monotonic()
        clients[0].send(text)
        first = clients[0].recv(timeout=10)
        took = time.monotonic() - start
        return [first] + [c.recv(timeout=10) for c in clients[1:]], took


@pytest.mark.parametrize("name", list(ROOMS))
@pytest.mark.parametrize("delay_ms", [0, 200])
def test_a_room_broadcasts_a_stamped_message_to_everyone_and_stops_on_sigterm(name, delay_ms):
    env = service_env(ASYNCLAB_BROADCAST_DELAY_MS=str(delay_ms))
    svc = Service(name, env, workers=1, threads=16)
    try:
        svc.wait_ready()
        assert svc.get("/plain").body == b"Hello, World!"
        svc.close()
        before_ns = time.time_ns()
        got, took = room_messages(svc.port, "7 12345")
        for message in got:
            server_ns, seq, intended = message.split(" ")
            assert (seq, intended) == ("7", "12345"), message
            assert before_ns <= int(server_ns) <= time.time_ns(), message
        assert took >= delay_ms / 1000, (took, delay_ms)
        assert svc.stop() == [], f"{name} left processes after SIGTERM\n{svc.output()}"
    finally:
        svc.kill()
