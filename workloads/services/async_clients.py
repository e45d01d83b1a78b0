"""The asyncio side of the handler logic, shared by asgi_app and aiohttp_app: one worker's
clients (an asyncpg pool of ASYNCLAB_DB_POOL connections, an aiohttp.ClientSession of
ASYNCLAB_UPSTREAM_POOL keep-alive connections; requests beyond either wait for one) and the
/db and /upstream bodies over them, so the two async servers differ in the server alone.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import aiohttp
import asyncpg

import handlers
from handlers import CONFIG


@dataclass
class Clients:
    """A worker's clients; None where the service was not given."""

    db: asyncpg.Pool | None = None
    upstream: aiohttp.ClientSession | None = None


@contextlib.asynccontextmanager
async def opened():
    """This worker's clients for its lifetime; a database that cannot be reached fails start."""
    clients = Clients()
    async with contextlib.AsyncExitStack() as stack:
        if CONFIG.database_url:
            clients.db = await stack.enter_async_context(
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
            clients.upstream = await stack.enter_async_context(
                aiohttp.ClientSession(connector=connector)
            )
        yield clients


async def db(clients: Clients, raw_queries: str | None) -> bytes:
    """`/db`: random point selects over one pooled connection."""
    if clients.db is None:
        CONFIG.require_database()
    ids = handlers.random_ids(handlers.clamp_queries(raw_queries))
    async with clients.db.acquire(timeout=handlers.WAIT_TIMEOUT_S) as conn:
        rows = []
        for id_ in ids:
            row = await conn.fetchrow(
                handlers.ITEM_SQL_DOLLAR, id_, timeout=handlers.WAIT_TIMEOUT_S
            )
            rows.append((row[0], row[1]))
    return handlers.json_body(handlers.db_answer(rows, many=raw_queries is not None))


async def upstream(clients: Clients, raw_delay: str | None, raw_bytes: str | None) -> bytes:
    """`/upstream`: one call to the upstream over the pooled session."""
    if clients.upstream is None:
        CONFIG.require_upstream()
    delay_ms, nbytes = handlers.upstream_params(raw_delay, raw_bytes)
    timeout = aiohttp.ClientTimeout(total=handlers.upstream_timeout(delay_ms))
    url = CONFIG.upstream_url + handlers.upstream_path(delay_ms, nbytes)
    async with clients.upstream.get(url, timeout=timeout) as resp:
        body = await resp.read()
    return handlers.json_body(handlers.upstream_answer(resp.status, body))
