"""A WebSocket chat room on Flask with Flask-Sock (simple-websocket), for gunicorn's gthread
worker: the threaded room as Flask-Sock's documentation runs it, one handler thread per
connection (and simple-websocket's own reader thread beside it).

GET /plain answers as in wsgi_app (the lab's readiness check); /ws joins the room (room.py). A
broadcast holds the room's lock, so broadcasts go one at a time and a connection's frames never
interleave, as on one event loop; a send that fails drops that connection from the room, and says
so on stderr (the server's log).
"""

from __future__ import annotations

import sys
import threading
import time

from flask import Flask, Response
from flask_sock import Sock
from simple_websocket import ConnectionClosed

import handlers
import room

app = Flask(__name__)
sock = Sock(app)

_lock = threading.Lock()
clients: set = set()


@app.get("/plain")
def plain() -> Response:
    return Response(handlers.PLAIN_BODY, headers={"content-type": handlers.PLAIN_TYPE})


def broadcast(text: str) -> None:
    with _lock:
        for ws in list(clients):
            try:
                ws.send(text)
            except Exception as e:
                clients.discard(ws)
                print(f"room: dropped a client whose send failed: {e!r}", file=sys.stderr)


@sock.route("/ws")
def chat(ws) -> None:
    with _lock:
        clients.add(ws)
    try:
        while True:
            message = ws.receive()
            if message is None:
                continue
            stamped = room.stamp(message if isinstance(message, str) else message.decode())
            if room.DELAY_S:
                time.sleep(room.DELAY_S)
            broadcast(stamped)
    except ConnectionClosed:
        pass
    finally:
        with _lock:
            clients.discard(ws)
