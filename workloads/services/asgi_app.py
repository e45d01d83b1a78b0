"""The async service under test: Starlette (ASGI), for uvicorn and granian.

Starlette rather than FastAPI: FastAPI is Starlette plus request validation and dependency
injection, whose cost is framework overhead on every request, not the sync-or-async question
this service answers. An asyncpg pool of `ASYNCLAB_DB_POOL` connections and an aiohttp client
session to the upstream are opened in the lifespan of each worker process: the same client as
`aiohttp_app`, so the async servers differ in the server alone (httpx, FastAPI's usual client,
spent about ten times aiohttp's CPU per call at 100 concurrent calls here: docs/services.md).
"""

from __future__ import annotations

import contextlib

import aiohttp
import asyncpg
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

import handlers

JSON = "application/json"
state: dict[str, object] = {}


@contextlib.asynccontextmanager
async def lifespan(_app: Starlette):
    connector = aiohttp.TCPConnector(limit=handlers.UPSTREAM_POOL)
    async with aiohttp.ClientSession(connector=connector) as session:
        state["http"] = session
        state["db"] = None
        try:
            yield
        finally:
            if state["db"] is not None:
                await state["db"].close()


async def db_pool() -> asyncpg.Pool:
    if state["db"] is None:
        state["db"] = await asyncpg.create_pool(
            handlers.need_database(), min_size=handlers.DB_POOL, max_size=handlers.DB_POOL
        )
    return state["db"]


async def unavailable(_request: Request, exc: Exception) -> Response:
    return PlainTextResponse(str(exc), status_code=503)


async def plain(_request: Request) -> Response:
    return PlainTextResponse(handlers.PLAIN_BODY)


async def db(request: Request) -> Response:
    queries = handlers.queries_of(request.query_params.get("queries"))
    ids = handlers.random_ids(queries or 1)
    pool = await db_pool()
    async with pool.acquire() as conn:
        rows = [tuple(await conn.fetchrow(handlers.SQL_ASYNCPG, i)) for i in ids]
    return Response(handlers.db_answer(rows, queries), media_type=JSON)


async def upstream(request: Request) -> Response:
    q = request.query_params
    url = handlers.upstream_target(q.get("delay_ms"), q.get("bytes"))
    async with state["http"].get(url) as r:
        body = await r.read()
    return Response(handlers.upstream_answer(r.status, body), media_type=JSON)


async def cpu(request: Request) -> Response:
    return Response(handlers.cpu_answer(request.query_params.get("items")), media_type=JSON)


app = Starlette(
    routes=[
        Route("/plain", plain),
        Route("/db", db),
        Route("/upstream", upstream),
        Route("/cpu", cpu),
    ],
    lifespan=lifespan,
    exception_handlers={handlers.Unavailable: unavailable},
)
