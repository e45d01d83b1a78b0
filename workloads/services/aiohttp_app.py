"""The aiohttp.web service under test, run by gunicorn's `aiohttp.GunicornUVLoopWebWorker`.

`make_app` is the application factory gunicorn calls in each worker; an asyncpg pool of
`ASYNCLAB_DB_POOL` connections and an aiohttp client session to the upstream live in its
cleanup context.
"""

from __future__ import annotations

import aiohttp
import asyncpg
from aiohttp import web

import handlers

JSON = "application/json"
DB = web.AppKey("db", object)
HTTP = web.AppKey("http", aiohttp.ClientSession)


async def resources(app: web.Application):
    connector = aiohttp.TCPConnector(limit=handlers.UPSTREAM_POOL)
    async with aiohttp.ClientSession(connector=connector) as session:
        app[HTTP] = session
        app[DB] = None
        yield
        if app[DB] is not None:
            await app[DB].close()


async def db_pool(app: web.Application) -> asyncpg.Pool:
    if app[DB] is None:
        app[DB] = await asyncpg.create_pool(
            handlers.need_database(), min_size=handlers.DB_POOL, max_size=handlers.DB_POOL
        )
    return app[DB]


@web.middleware
async def unavailable(request: web.Request, handler):
    try:
        return await handler(request)
    except handlers.Unavailable as exc:
        return web.Response(text=str(exc), status=503)


async def plain(_request: web.Request) -> web.Response:
    return web.Response(body=handlers.PLAIN_BODY, content_type="text/plain")


async def db(request: web.Request) -> web.Response:
    queries = handlers.queries_of(request.query.get("queries"))
    ids = handlers.random_ids(queries or 1)
    pool = await db_pool(request.app)
    async with pool.acquire() as conn:
        rows = [tuple(await conn.fetchrow(handlers.SQL_ASYNCPG, i)) for i in ids]
    return web.Response(body=handlers.db_answer(rows, queries), content_type=JSON)


async def upstream(request: web.Request) -> web.Response:
    q = request.query
    url = handlers.upstream_target(q.get("delay_ms"), q.get("bytes"))
    async with request.app[HTTP].get(url) as r:
        body = await r.read()
    return web.Response(body=handlers.upstream_answer(r.status, body), content_type=JSON)


async def cpu(request: web.Request) -> web.Response:
    return web.Response(body=handlers.cpu_answer(request.query.get("items")), content_type=JSON)


async def make_app() -> web.Application:
    app = web.Application(middlewares=[unavailable])
    app.cleanup_ctx.append(resources)
    app.router.add_get("/plain", plain)
    app.router.add_get("/db", db)
    app.router.add_get("/upstream", upstream)
    app.router.add_get("/cpu", cpu)
    return app
