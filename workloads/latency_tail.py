"""Tail-latency scenario: where "async p50 1,165 ms vs sync 4.6 ms" comes from (queueing, blocking).

A batch of `requests` operations is asked for at once (t0) and served by `concurrency` workers over
`pool_size` connections. Each op reports two latencies: its service time (from its actual send to
its completion: `latencies_ms`, kind "service") and its time from t0 (queueing included:
`latency_sets_ms["from_batch"]`, in op order like `latencies_ms`). Measuring async code the second
way and sync code the first way gives the blog's numbers; measured the same way they agree. The two
extra variants show the real async pitfall: a blocking call inside a coroutine (`time.sleep` for
`block_ms` after each op) stalls every other task and inflates their service times too; handing it
to `asyncio.to_thread` fixes that.

`target`: "db" (the point select on asynclab.items, with `pg_sleep(sleep_ms / 1000)` when
`sleep_ms` > 0) or "http" (GET {http_url}/delay/{delay_ms}). `concurrency` 0 means the variant's
usual shape: `pool_size` threads for `threads`, every op in flight at once for the asyncio ones.
An op borrows a connection (threads) or one of `pool_size` slots (asyncio) before its service
clock starts; its payload is its time from t0.
"""

from __future__ import annotations

import asyncio
import os
import queue
import time

import dbutil
import harness

PARAMS = {
    "target": "db",
    "requests": 100,
    "concurrency": 0,
    "pool_size": 10,
    "sleep_ms": 0,
    "delay_ms": 10,
    "block_ms": 5,
    "timeout_s": 30.0,
    "loop": "asyncio",
}

SLEEP_SQL = "SELECT id, name, value, pg_sleep(%s) FROM asynclab.items WHERE id = %s"
SLEEP_SQL_DOLLAR = "SELECT id, name, value, pg_sleep($2) FROM asynclab.items WHERE id = $1"


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100) of `values`; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))  # ceil(n * q / 100), at least 1
    return ordered[int(rank) - 1]


class Tail(harness.Scenario):
    """Shared parts: params, t0, and the Outcome with both latency sets, op for op."""

    self_timed = True  # an op's service clock starts once it holds a connection or slot

    def __init__(self, params: dict, services: dict) -> None:
        super().__init__(params, services)
        self.target, self.count = params["target"], int(params["requests"])
        self.pool_size, self.concurrency = int(params["pool_size"]), int(params["concurrency"])
        self.timeout, self.block_s = params["timeout_s"], params["block_ms"] / 1000
        if self.target not in ("db", "http"):
            raise ValueError(f"unknown target {self.target!r}; known: db, http")
        if self.count < 0 or self.pool_size < 1 or self.concurrency < 0:
            raise ValueError(f"need requests >= 0, pool_size >= 1, concurrency >= 0; got {params}")
        self.sleep_s = params["sleep_ms"] / 1000
        if self.target == "db":
            self.urls = dbutil.urls(services["database_url"])
        else:
            self.url = f"{services['http_url'].rstrip('/')}/delay/{params['delay_ms']}"

    def begin(self) -> None:
        self.t0 = harness.now()  # the batch is asked for at once

    def outcome(self, rec: harness.Recorder, model: harness.Model) -> harness.Outcome:
        batch_ns = harness.now() - self.t0
        from_batch = [since_t0 / 1e6 for since_t0 in rec.payloads if since_t0 is not None]
        service_ms = [service / 1e6 for service in rec.latencies_ns]
        extra = {
            "target": self.target,
            "requests": self.count,
            "concurrency": model.workers,
            "pool_size": self.pool_size,
            "batch_ms": batch_ns / 1e6,
            "service_p50_ms": percentile(service_ms, 50),
            "from_batch_p50_ms": percentile(from_batch, 50),
            "from_batch_p99_ms": percentile(from_batch, 99),
        }
        outcome = rec.outcome(extra)
        outcome.latency_sets = {"from_batch": from_batch}
        return outcome


# --- threads: the batch queues for `concurrency` threads (default `pool_size`) ------------------


class Threads(Tail):
    """psycopg2 connections or requests sessions in a queue, borrowed one op at a time."""

    def open(self, part: int = 0, parts: int = 1) -> None:
        self.free: queue.Queue = queue.Queue()
        if self.target == "db":
            self.conns = dbutil.psycopg2_connections(self.urls.libpq, self.pool_size)
        else:
            import netrc  # noqa: F401 - requests imports it on the first request: pay it now

            import requests

            self.conns = [requests.Session() for _ in range(self.pool_size)]
        for conn in self.conns:
            self.free.put(conn)

    def send(self, conn, index: int) -> None:
        if self.target == "db":
            with conn.cursor() as cur:
                if self.sleep_s > 0:
                    cur.execute(SLEEP_SQL, (self.sleep_s, dbutil.item_id(index)))
                else:
                    cur.execute(dbutil.ITEM_SQL, (dbutil.item_id(index),))
                cur.fetchone()
        else:
            resp = conn.get(self.url, timeout=self.timeout)
            resp.content  # noqa: B018 - read the body
            if not 200 <= resp.status_code < 300:
                raise RuntimeError(f"HTTP {resp.status_code}")

    def op(self, index: int) -> tuple[int, int]:
        conn = self.free.get(timeout=self.timeout)
        try:
            sent = harness.now()
            self.send(conn, index)
            end = harness.now()
        finally:
            self.free.put(conn)
        return end - sent, end - self.t0

    def close(self) -> None:
        dbutil.close_all(self.conns)


# --- asyncio: `concurrency` ops in flight (default: all) ---------------------------------------


class Asyncio(Tail):
    """`pool_size` slots over an asyncpg pool or an aiohttp connector of as many connections."""

    async def open(self, part: int = 0, parts: int = 1) -> None:
        self.slots = asyncio.Semaphore(self.pool_size)  # the clock starts once an op holds one
        if self.target == "db":
            self.db = await dbutil.asyncpg_pool(self.urls.asyncpg, self.pool_size, self.timeout)
        else:
            import aiohttp

            connector = aiohttp.TCPConnector(limit=self.pool_size)
            timeout = aiohttp.ClientTimeout(total=self.timeout)
            self.http = aiohttp.ClientSession(connector=connector, timeout=timeout)

    async def send(self, index: int) -> None:
        if self.target == "db":
            async with self.db.acquire(timeout=self.timeout) as conn:
                if self.sleep_s > 0:
                    await conn.fetchrow(SLEEP_SQL_DOLLAR, dbutil.item_id(index), self.sleep_s)
                else:
                    await conn.fetchrow(dbutil.ITEM_SQL_DOLLAR, dbutil.item_id(index))
        else:
            async with self.http.get(self.url) as resp:
                await resp.read()
                if not 200 <= resp.status < 300:
                    raise RuntimeError(f"HTTP {resp.status}")

    async def after(self) -> None:
        """What the op does once its result is back (nothing here; see the blocking variants)."""

    async def op(self, index: int) -> tuple[int, int]:
        async with self.slots:
            sent = harness.now()
            await self.send(index)
            service = harness.now() - sent
        await self.after()
        return service, harness.now() - self.t0

    async def close(self) -> None:
        await (self.db if self.target == "db" else self.http).close()


class AsyncioBlocking(Asyncio):
    """Each op then calls `time.sleep(block_ms / 1000)` in the coroutine: the loop stalls."""

    async def after(self) -> None:
        time.sleep(self.block_s)


def default_thread_count() -> int:
    """ThreadPoolExecutor's default size (what `asyncio.to_thread` gets unless told otherwise)."""
    cpus = getattr(os, "process_cpu_count", os.cpu_count)() or 1
    return min(32, cpus + 4)


class AsyncioToThread(Asyncio):
    """The fix: the same blocking call, awaited via `asyncio.to_thread` (default-sized executor)."""

    async def open(self, part: int = 0, parts: int = 1) -> None:
        await super().open(part, parts)
        # asyncio.to_thread uses the loop's default executor; make it (default size) and start
        # its threads now, so thread creation is not timed.
        self.executor = harness.started_threads(default_thread_count())
        asyncio.get_running_loop().set_default_executor(self.executor)

    async def after(self) -> None:
        await asyncio.to_thread(time.sleep, self.block_s)

    async def close(self) -> None:
        try:
            await super().close()
        finally:
            self.executor.shutdown(wait=True)


def all_at_once(s: Tail) -> int:
    return s.concurrency or max(1, s.count)


VARIANTS = {
    "threads": harness.ThreadPool.of(Threads, workers=lambda s: s.concurrency or s.pool_size),
    "asyncio": harness.EventLoop.of(Asyncio, workers=all_at_once),
    "asyncio_blocking": harness.EventLoop.of(AsyncioBlocking, workers=all_at_once),
    "asyncio_to_thread": harness.EventLoop.of(AsyncioToThread, workers=all_at_once),
}
