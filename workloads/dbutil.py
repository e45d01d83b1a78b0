"""Shared helpers of the PostgreSQL workloads: URL forms, the point select, connections, pools."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

# The point select every database workload runs, in the two parameter styles the drivers use.
ITEM_SQL = "SELECT id, name, value FROM asynclab.items WHERE id = %s"  # psycopg2, psycopg 3
ITEM_SQL_DOLLAR = "SELECT id, name, value FROM asynclab.items WHERE id = $1"  # asyncpg
ITEMS = 100_000  # rows in asynclab.items (ids 1..100000), as seeded by the driver
STRIDE = 7919  # a prime: i -> (i * STRIDE) % ITEMS is a permutation, so ids do not repeat


def item_id(index: int) -> int:
    """The id query `index` fetches: the same sequence in every variant."""
    return (index * STRIDE) % ITEMS + 1


def item_value(id_: int) -> int:
    """The `value` the seed stored for `id_` (lets tests check a checksum exactly)."""
    return (id_ * STRIDE) % ITEMS


@dataclass(frozen=True)
class DbUrls:
    """One `database_url` service address in the form each client library wants."""

    libpq: str  # psycopg2, psycopg 3 (libpq connection URI)
    asyncpg: str  # asyncpg.connect / create_pool DSN
    sqlalchemy_sync: str  # postgresql+psycopg2://
    sqlalchemy_async: str  # postgresql+asyncpg://


def urls(database_url: str) -> DbUrls:
    """`postgresql://user[:password]@host:port/db[?query]` -> the URL for every library."""
    parts = urlsplit(database_url.strip())
    scheme = parts.scheme.split("+", 1)[0]
    if scheme not in ("postgresql", "postgres"):
        raise ValueError(f"not a PostgreSQL URL: scheme {parts.scheme!r}")

    def with_scheme(new: str) -> str:
        return urlunsplit((new, parts.netloc, parts.path, parts.query, parts.fragment))

    plain = with_scheme("postgresql")
    return DbUrls(
        libpq=plain,
        asyncpg=plain,
        sqlalchemy_sync=with_scheme("postgresql+psycopg2"),
        sqlalchemy_async=with_scheme("postgresql+asyncpg"),
    )


def psycopg2_connections(dsn: str, n: int) -> list:
    """`n` autocommit psycopg2 connections, each warmed with one point select."""
    import psycopg2

    def connect():
        conn = psycopg2.connect(dsn)
        conn.autocommit = True  # one round trip per query, like every other variant
        with conn.cursor() as cur:
            cur.execute(ITEM_SQL, (1,))
            cur.fetchone()
        return conn

    return open_concurrently(connect, n)


def open_concurrently(connect, n: int) -> list:
    """`n` results of `connect()`, made by up to 16 threads at once: set-up (never timed) through
    a delay line costs a few round trips per connection, 6 s for 100 at 20 ms one by one. On any
    failure the ones made are closed and the first error raised."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=max(1, min(16, n))) as pool:
        futures = [pool.submit(connect) for _ in range(n)]
    conns, errors = [], []
    for f in futures:
        (errors if f.exception() else conns).append(f.exception() or f.result())
    if errors:
        close_all(conns)
        raise errors[0]
    return conns


def close_all(conns) -> None:
    """Close blocking connections, ignoring the ones that are already broken."""
    for conn in conns:
        try:
            conn.close()
        except Exception:  # noqa: BLE001 - teardown: a broken connection is closed enough
            pass


async def _no_reset(_conn) -> None:
    """asyncpg pool reset hook: skip the RESET ALL/UNLISTEN round trip on every release."""


async def asyncpg_pool(dsn: str, n: int, timeout: float = 30.0):
    """An asyncpg pool of exactly `n` connections, all opened and warmed with the point select.

    The default release hook sends a reset query (one extra round trip per query that no other
    variant pays); the workloads never leave session state behind, so it is replaced by a no-op.
    """
    import asyncpg

    pool = await asyncpg.create_pool(
        dsn, min_size=n, max_size=n, reset=_no_reset, timeout=timeout, command_timeout=timeout
    )
    held = []
    try:
        for _ in range(n):  # hold all n at once so every connection is warmed (statement prepared)
            held.append(await pool.acquire())
        await asyncio.gather(*(conn.fetchrow(ITEM_SQL_DOLLAR, 1) for conn in held))
    finally:
        for conn in held:
            await pool.release(conn)
    return pool
