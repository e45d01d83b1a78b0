"""The aiohttp service under test: an aiohttp.web app for gunicorn's GunicornUVLoopWebWorker.

Served as `aiohttp_app:make_app` (the worker awaits the factory in each worker process). Clients
are opened in a cleanup context, one set per worker: an asyncpg pool (ASYNCLAB_DB_POOL
connections) and an aiohttp.ClientSession (ASYNCLAB_UPSTREAM_POOL keep-alive connections;
requests beyond that wait for one).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import aiohttp
import asyncpg
from aiohttp import web

import handlers
from handlers import CONFIG

DB = web.AppKey("db", asyncpg.Pool)
UPSTREAM = web.AppKey("upstream", aiohttp.ClientSession)


def answer(body: bytes, content_type: str = handlers.JSON_TYPE, status: int = 200) -> web.Response:
    # An explicit header keeps the content type exactly as given, with no charset appended.
    return web.Response(body=body, status=status, headers={"Content-Type": content_type})


def endpoint(
    func: Callable[[web.Request], Awaitable[bytes]],
) -> Callable[[web.Request], Awaitable[web.Response]]:
    """A JSON endpoint whose failures are answered by handlers.error_answer."""

    async def wrapped(request: web.Request) -> web.Response:
        try:
            return answer(await func(request))
        except Exception as exc:
            status, body = handlers.error_answer(exc)
            return answer(body, handlers.PLAIN_TYPE, status)

    return wrapped


async def plain(request: web.Request) -> web.Response:
    return answer(handlers.PLAIN_BODY, handlers.PLAIN_TYPE)


@endpoint
async def db(request: web.Request) -> bytes:
    pool = request.app.get(DB)
    if pool is None:
        CONFIG.require_database()
    raw = request.query.get("queries")
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
async def upstream(request: web.Request) -> bytes:
    session = request.app.get(UPSTREAM)
    if session is None:
        CONFIG.require_upstream()
    delay_ms, nbytes = handlers.upstream_params(
        request.query.get("delay_ms"), request.query.get("bytes")
    )
    timeout = aiohttp.ClientTimeout(total=handlers.upstream_timeout(delay_ms))
    url = CONFIG.upstream_url + handlers.upstream_path(delay_ms, nbytes)
    async with session.get(url, timeout=timeout) as resp:
        body = await resp.read()
    return handlers.json_body(handlers.upstream_answer(resp.status, body))


@endpoint
async def cpu(request: web.Request) -> bytes:
    items = handlers.clamp_items(request.query.get("items"))
    return handlers.json_body(handlers.render_cpu(items))


async def clients(app: web.Application) -> AsyncIterator[None]:
    """This worker's clients for its lifetime; a database that cannot be reached fails start."""
    pool = session = None
    if CONFIG.database_url:
        pool = await asyncpg.create_pool(
            CONFIG.database_url, min_size=CONFIG.db_pool, max_size=CONFIG.db_pool,
            timeout=handlers.WAIT_TIMEOUT_S,
        )  # fmt: skip
        app[DB] = pool
    if CONFIG.upstream_url:
        connector = aiohttp.TCPConnector(
            limit=CONFIG.upstream_pool, limit_per_host=CONFIG.upstream_pool
        )
        session = aiohttp.ClientSession(connector=connector)
        app[UPSTREAM] = session
    try:
        yield
    finally:
        if session is not None:
            await session.close()
        if pool is not None:
            await pool.close()


async def make_app() -> web.Application:
    """The app of one worker process (gunicorn's aiohttp worker awaits this)."""
    app = web.Application()
    app.cleanup_ctx.append(clients)
    app.router.add_get("/plain", plain)
    app.router.add_get("/db", db)
    app.router.add_get("/upstream", upstream)
    app.router.add_get("/cpu", cpu)
    return app
