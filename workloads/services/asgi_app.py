"""The asyncio service under test: a Starlette ASGI app for uvicorn and granian.

Starlette rather than FastAPI: FastAPI adds request validation and dependency injection on top of
Starlette, and their cost is framework overhead, not the sync-versus-asyncio question the lab asks;
the WSGI side (Flask) carries no such layer either. Clients are opened in the lifespan, one set
per worker process: an asyncpg pool (ASYNCLAB_DB_POOL connections) and an aiohttp.ClientSession
(ASYNCLAB_UPSTREAM_POOL keep-alive connections; requests beyond that wait for one). The same
client as aiohttp_app, so the async servers differ in the server alone: httpx, FastAPI's usual
client, spent about ten times aiohttp's CPU per call at 100 concurrent calls (docs/services.md).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

import aiohttp
import asyncpg
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

import handlers
from handlers import CONFIG


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
    pool: asyncpg.Pool | None = request.app.state.db
    if pool is None:
        CONFIG.require_database()
    raw = request.query_params.get("queries")
    ids = handlers.random_ids(handlers.clamp_queries(raw))
    async with pool.acquire(timeout=handlers.WAIT_TIMEOUT_S) as conn:
        rows = []
        for id_ in ids:
            row = await conn.fetchrow(
                handlers.ITEM_SQL_DOLLAR, id_, timeout=handlers.WAIT_TIMEOUT_S
            )
            rows.append((row[0], row[1]))
    return handlers.json_body(handlers.db_answer(rows, many=raw is not None))


@endpoint
async def upstream(request: Request) -> bytes:
    session: aiohttp.ClientSession | None = request.app.state.upstream
    if session is None:
        CONFIG.require_upstream()
    delay_ms, nbytes = handlers.upstream_params(
        request.query_params.get("delay_ms"), request.query_params.get("bytes")
    )
    timeout = aiohttp.ClientTimeout(total=handlers.upstream_timeout(delay_ms))
    url = CONFIG.upstream_url + handlers.upstream_path(delay_ms, nbytes)
    async with session.get(url, timeout=timeout) as resp:
        body = await resp.read()
    return handlers.json_body(handlers.upstream_answer(resp.status, body))


@endpoint
async def cpu(request: Request) -> bytes:
    items = handlers.clamp_items(request.query_params.get("items"))
    return handlers.json_body(handlers.render_cpu(items))


@contextlib.asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    """This worker's clients for its lifetime; a database that cannot be reached fails start."""
    app.state.db = app.state.upstream = None
    async with contextlib.AsyncExitStack() as stack:
        if CONFIG.database_url:
            app.state.db = await stack.enter_async_context(
                asyncpg.create_pool(
                    CONFIG.database_url,
                    min_size=CONFIG.db_pool,
                    max_size=CONFIG.db_pool,
                    timeout=handlers.WAIT_TIMEOUT_S,
                )
            )
        if CONFIG.upstream_url:
            connector = aiohttp.TCPConnector(
                limit=CONFIG.upstream_pool, limit_per_host=CONFIG.upstream_pool
            )
            app.state.upstream = await stack.enter_async_context(
                aiohttp.ClientSession(connector=connector)
            )
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
