"""A WebSocket chat room on the `websockets` library's own asyncio server, with its `broadcast`
(which writes the frame to every connection without waiting for any of them).

Run as `python ws_websockets.py PORT [HOST]`: binds HOST:PORT (HOST 127.0.0.1 when absent) on
uvloop, answers GET /plain with handlers.PLAIN_BODY (the lab's readiness check) and joins /ws to
the room (room.py). SIGTERM closes the server and its connections within about a second.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from http import HTTPStatus

import uvloop
from websockets.asyncio.server import ServerConnection, broadcast, serve

import handlers
import room

clients: set[ServerConnection] = set()


def plain(connection: ServerConnection, request):
    if request.path == "/plain":
        response = connection.respond(HTTPStatus.OK, handlers.PLAIN_BODY.decode())
        response.headers["Content-Type"] = handlers.PLAIN_TYPE
        return response
    if request.path != "/ws":
        return connection.respond(HTTPStatus.NOT_FOUND, "not found\n")
    return None


async def chat(ws: ServerConnection) -> None:
    clients.add(ws)
    try:
        async for message in ws:
            stamped = room.stamp(message if isinstance(message, str) else message.decode())
            if room.DELAY_S:
                await asyncio.sleep(room.DELAY_S)
            broadcast(clients, stamped)
    finally:
        clients.discard(ws)


async def main(port: int, host: str) -> None:
    stop = asyncio.get_running_loop().create_future()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set_result, None)
    async with serve(chat, host, port, process_request=plain, close_timeout=1, compression=None):
        await stop


if __name__ == "__main__":
    uvloop.run(main(int(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else "127.0.0.1"))
