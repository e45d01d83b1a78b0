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


class Tail(harness.Workload):
    """Shared parts: params, per-op (index, service ns, from-batch ns) tuples, the Outcome."""

    default_concurrency = 0  # set by subclasses: what concurrency 0 means

    def __init__(self, params: dict, fixtures: dict) -> None:
        self.target, self.n = params["target"], int(params["requests"])
        self.pool_size = int(params["pool_size"])
        self.concurrency = int(params["concurrency"]) or self.default_for(params)
        self.timeout, self.block_s = params["timeout_s"], params["block_ms"] / 1000
        if self.target not in ("db", "http"):
            raise ValueError(f"unknown target {self.target!r}; known: db, http")
        if self.n < 0 or self.pool_size < 1 or self.concurrency < 1:
            raise ValueError(f"need requests >= 0, pool_size >= 1, concurrency >= 0; got {params}")
        self.sleep_s = params["sleep_ms"] / 1000
        if self.target == "db":
            self.urls = dbutil.urls(fixtures["database_url"])
        else:
            self.url = f"{fixtures['http_url'].rstrip('/')}/delay/{params['delay_ms']}"

    def default_for(self, params: dict) -> int:
        raise NotImplementedError

    def outcome(self, t0: int, t_end: int, results: list, rec: harness.Recorder):
        """`results` in op order (None for a failed op): both sets line up op for op."""
        done = [r for r in results if r is not None]
        rec.latencies_ns.extend(service for _, service, _ in done)
        from_batch = [since_t0 / 1e6 for _, _, since_t0 in done]
        service_ms = [service / 1e6 for _, service, _ in done]
        extra = {
            "target": self.target,
            "requests": self.n,
            "concurrency": self.concurrency,
            "pool_size": self.pool_size,
            "batch_ms": (t_end - t0) / 1e6,
            "service_p50_ms": percentile(service_ms, 50),
            "from_batch_p50_ms": percentile(from_batch, 50),
            "from_batch_p99_ms": percentile(from_batch, 99),
        }
        outcome = rec.outcome(extra)
        outcome.latency_sets = {"from_batch": from_batch}
        return outcome


# --- threads: the batch goes into a ThreadPoolExecutor's queue at t0 ---------------------------


class Threads(Tail):
    """`concurrency` threads (default `pool_size`); psycopg2 connections or requests sessions."""

    def default_for(self, params: dict) -> int:
        return int(params["pool_size"])

    def __init__(self, params: dict, fixtures: dict) -> None:
        super().__init__(params, fixtures)
        self.free: queue.Queue = queue.Queue()
        if self.target == "db":
            self.conns = dbutil.psycopg2_connections(self.urls.libpq, self.pool_size)
        else:
            import netrc  # noqa: F401 - requests imports it on the first request: pay it now

            import requests

            self.conns = [requests.Session() for _ in range(self.pool_size)]
        for conn in self.conns:
            self.free.put(conn)
        self.pool = dbutil.started_executor(self.concurrency)

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

    def op(self, index: int, t0: int, rec: harness.Recorder):
        try:
            conn = self.free.get(timeout=self.timeout)
            try:
                sent = rec.now()
                self.send(conn, index)
                end = rec.now()
            finally:
                self.free.put(conn)
        except Exception as exc:  # noqa: BLE001 - a failed op is an error, not a crash
            rec.error(exc)
            return None
        return index, end - sent, end - t0

    def run(self) -> harness.Outcome:
        rec = harness.Recorder()
        t0 = rec.now()
        futures = [self.pool.submit(self.op, i, t0, rec) for i in range(self.n)]
        results = [f.result() for f in futures]
        return self.outcome(t0, rec.now(), results, rec)

    def close(self) -> None:
        self.pool.shutdown(wait=True)
        dbutil.close_all(self.conns)


# --- asyncio: every op is a task created at t0 ----------------------------------------------


class Asyncio(Tail):
    """`concurrency` ops in flight (default: all), over an asyncpg pool or an aiohttp connector."""

    def default_for(self, params: dict) -> int:
        return max(1, int(params["requests"]))

    def __init__(self, params: dict, fixtures: dict) -> None:
        super().__init__(params, fixtures)
        self.loop = harness.new_event_loop(params)
        self.loop.run_until_complete(self.open())

    async def open(self) -> None:
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

    async def op(self, index: int, t0: int, limit: asyncio.Semaphore, rec: harness.Recorder):
        try:
            async with limit:
                async with self.slots:
                    sent = rec.now()
                    await self.send(index)
                    service = rec.now() - sent
                await self.after()
        except Exception as exc:  # noqa: BLE001
            rec.error(exc)
            return None
        return index, service, rec.now() - t0

    async def main(self) -> harness.Outcome:
        rec, limit = harness.Recorder(), asyncio.Semaphore(self.concurrency)
        t0 = rec.now()
        results = await asyncio.gather(*(self.op(i, t0, limit, rec) for i in range(self.n)))
        return self.outcome(t0, rec.now(), list(results), rec)

    def run(self) -> harness.Outcome:
        return self.loop.run_until_complete(self.main())

    def close(self) -> None:
        try:
            if self.target == "db":
                self.loop.run_until_complete(self.db.close())
            else:
                self.loop.run_until_complete(self.http.close())
        finally:
            self.loop.close()


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

    def __init__(self, params: dict, fixtures: dict) -> None:
        super().__init__(params, fixtures)
        # asyncio.to_thread uses the loop's default executor; make it (default size) and start
        # its threads now, so thread creation is not timed.
        workers = default_thread_count()
        self.executor = dbutil.started_executor(workers)
        self.loop.set_default_executor(self.executor)

    async def after(self) -> None:
        await asyncio.to_thread(time.sleep, self.block_s)

    def close(self) -> None:
        try:
            super().close()
        finally:
            self.executor.shutdown(wait=True)


VARIANTS = {
    "threads": Threads,
    "asyncio": Asyncio,
    "asyncio_blocking": AsyncioBlocking,
    "asyncio_to_thread": AsyncioToThread,
}
