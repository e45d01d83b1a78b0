"""A WebSocket chat room on Starlette, for uvicorn: the asyncio room as FastAPI's documentation
writes it (a set of connections; a broadcast awaits each send in turn).

GET /plain answers as in asgi_app (the lab's readiness check); /ws joins the room (room.py has the
message format). A send that fails drops that connection from the room, and says so on stderr
(the server's log).
"""

from __future__ import annotations

import asyncio
import sys

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

import handlers
import room

clients: set[WebSocket] = set()


async def plain(request: Request) -> Response:
    return Response(handlers.PLAIN_BODY, headers={"content-type": handlers.PLAIN_TYPE})


async def broadcast(text: str) -> None:
    for ws in list(clients):
        try:
            await ws.send_text(text)
        except Exception as e:
            clients.discard(ws)
            print(f"room: dropped a client whose send failed: {e!r}", file=sys.stderr)


async def chat(ws: WebSocket) -> None:
    await ws.accept()
    clients.add(ws)
    try:
        while True:
            stamped = room.stamp(await ws.receive_text())
            if room.DELAY_S:
                await asyncio.sleep(room.DELAY_S)
            await broadcast(stamped)
    except WebSocketDisconnect:
        pass
    finally:
        clients.discard(ws)


app = Starlette(routes=[Route("/plain", plain, methods=["GET"]), WebSocketRoute("/ws", chat)])
