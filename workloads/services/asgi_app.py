"""The asyncio service under test: a Starlette ASGI app for uvicorn and granian.

Starlette rather than FastAPI: FastAPI adds request validation and dependency injection on top of
Starlette, and their cost is framework overhead, not the sync-versus-asyncio question the lab asks;
the WSGI side (Flask) carries no such layer either. Its clients and its /db and /upstream bodies
are async_clients', shared with aiohttp_app, opened in the lifespan of each worker process. The
upstream client is aiohttp's: httpx, FastAPI's usual client, spent many times its CPU per call at
100 concurrent calls (docs/services.md, "The servers"), and would have measured httpx.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

import async_clients
import handlers


def answer(body: bytes, content_type: str = handlers.JSON_TYPE, status: int = 200) -> Response:
    # An explicit content-type header: Starlette appends "; charset=utf-8" to a text/ media_type.
    return Response(body, status_code=status, headers={"content-type": content_type})


def endpoint(func: Callable[[Request], Awaitable[bytes]]) -> Callable[[Request], Awaitable]:
    """A JSON endpoint whose failures are answered by handlers.error_answer."""

    async def wrapped(request: Request) -> Response:
        try:
            return answer(await func(request))
        except Exception as exc:
            status, body = handlers.error_answer(exc)
            return answer(body, handlers.PLAIN_TYPE, status)

    return wrapped


async def plain(request: Request) -> Response:
    return answer(handlers.PLAIN_BODY, handlers.PLAIN_TYPE)


@endpoint
async def db(request: Request) -> bytes:
    return await async_clients.db(request.app.state.clients, request.query_params.get("queries"))


@endpoint
async def upstream(request: Request) -> bytes:
    q = request.query_params
    return await async_clients.upstream(
        request.app.state.clients, q.get("delay_ms"), q.get("bytes")
    )


@endpoint
async def cpu(request: Request) -> bytes:
    items = handlers.clamp_items(request.query_params.get("items"))
    return handlers.json_body(handlers.render_cpu(items))


@contextlib.asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    """This worker's clients (async_clients) for its lifetime."""
    async with async_clients.opened() as clients:
        app.state.clients = clients
        yield


app = Starlette(
    routes=[
        Route("/plain", plain, methods=["GET"]),
        Route("/db", db, methods=["GET"]),
        Route("/upstream", upstream, methods=["GET"]),
        Route("/cpu", cpu, methods=["GET"]),
    ],
    lifespan=lifespan,
)
