"""The aiohttp service under test: an aiohttp.web app for gunicorn's GunicornUVLoopWebWorker.

Served as `aiohttp_app:make_app` (the worker awaits the factory in each worker process). Its
clients and its /db and /upstream bodies are async_clients', shared with asgi_app, opened in a
cleanup context of each worker.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

from aiohttp import web

import async_clients
import handlers

CLIENTS = web.AppKey("clients", async_clients.Clients)


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
    return await async_clients.db(request.app[CLIENTS], request.query.get("queries"))


@endpoint
async def upstream(request: web.Request) -> bytes:
    q = request.query
    return await async_clients.upstream(request.app[CLIENTS], q.get("delay_ms"), q.get("bytes"))


@endpoint
async def cpu(request: web.Request) -> bytes:
    items = handlers.clamp_items(request.query.get("items"))
    return handlers.json_body(handlers.render_cpu(items))


async def clients(app: web.Application) -> AsyncIterator[None]:
    """This worker's clients (async_clients) for its lifetime."""
    async with async_clients.opened() as opened:
        app[CLIENTS] = opened
        yield


async def make_app() -> web.Application:
    """The app of one worker process (gunicorn's aiohttp worker awaits this)."""
    app = web.Application()
    app.cleanup_ctx.append(clients)
    app.router.add_get("/plain", plain)
    app.router.add_get("/db", db)
    app.router.add_get("/upstream", upstream)
    app.router.add_get("/cpu", cpu)
    return app
