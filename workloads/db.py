"""Database scenario: concurrent point selects on asynclab.items, ORM and raw, sync vs async.

Every variant runs the same `queries` requests with `concurrency` workers that each pull the
next request index from one shared counter, over exactly `pool_size` connections (0: as many as
workers), all opened and warmed in setup. A request is `queries_per_request` (k) point selects
run one after another on one borrowed connection, as a service's handler would: request i
fetches ids (j * 7919) % 100000 + 1 for j in i*k .. i*k+k-1. The latency clock starts once the
worker holds the connection (the first send) and stops at the last row.
Every variant does one round trip per query: raw connections run in autocommit, the ORM engines
use isolation_level AUTOCOMMIT (no BEGIN/ROLLBACK pair), and asyncpg's pool skips its reset query.
`extra` has `rows` and `checksum` (sum of `value`) over every query, identical across variants. The
multiprocessing variant is psycopg2_threads in min(concurrency, pool_size, CPUs) processes, each
with its share of the threads and connections.

Open loop (`rate_per_s` > 0, workloads/openloop.py): `rate_per_s * duration_s` queries on a fixed
schedule instead, handed to the same workers (threads) or started as tasks with at most
`concurrency` in flight (asyncio); the uncorrected latency there runs from the worker picking the
query up, connection borrow included. The multiprocessing variant has no open-loop mode yet.
"""

from __future__ import annotations

import asyncio
import functools
import os
import queue

import dbutil
import harness
import openloop

PARAMS = {
    "queries": 4000,
    "queries_per_request": 1,
    "concurrency": 10,
    "pool_size": 0,
    "timeout_s": 30.0,
    "loop": "asyncio",
    "start_method": None,
    **openloop.PARAMS,
}


@functools.cache
def item_model():
    """The ORM mapping of asynclab.items (built on first use: raw variants never import it)."""
    from sqlalchemy import Integer, Text
    from sqlalchemy.orm import DeclarativeBase, mapped_column

    class Base(DeclarativeBase):
        pass

    class Item(Base):
        __tablename__ = "items"
        __table_args__ = {"schema": "asynclab"}
        id = mapped_column(Integer, primary_key=True)
        name = mapped_column(Text, nullable=False)
        value = mapped_column(Integer, nullable=False)

    return Item


class PointSelects(harness.Scenario):
    """The operation: query `index`'s point select, timed from the send; its payload is the
    row's value (None: no row). Subclasses borrow a connection and run it (`select`)."""

    self_timed = True

    def __init__(self, params: dict, services: dict) -> None:
        super().__init__(params, services)
        self.count, self.concurrency = int(params["queries"]), int(params["concurrency"])
        self.conns = int(params["pool_size"]) or self.concurrency
        self.per_request = int(params["queries_per_request"])
        if self.count < 0 or self.concurrency < 1 or self.conns < 1 or self.per_request < 1:
            raise ValueError(
                "need queries >= 0, queries_per_request >= 1, concurrency >= 1, pool_size >= 0;"
                f" got {params}"
            )
        self.timeout = params["timeout_s"]
        self.urls = dbutil.urls(services["database_url"])

    def ids(self, index: int) -> list[int]:
        """The ids request `index` fetches, in order."""
        k = self.per_request
        return [dbutil.item_id(index * k + j) for j in range(k)]

    def op(self, index: int) -> tuple[int, list]:
        return self.select(self.ids(index))

    def select(self, ids: list[int]) -> tuple[int, list]:
        """Runs the point selects of `ids` on one connection: (elapsed ns, each row's value or
        None for no row)."""
        raise NotImplementedError

    def engine_options(self) -> dict:
        """The ORM variants' pool: exactly `pool_size` connections, autocommit."""
        return {
            "pool_size": self.conns,
            "max_overflow": 0,
            "pool_timeout": self.timeout,
            "isolation_level": "AUTOCOMMIT",
        }

    def extra(self, payloads: list, model: harness.Model) -> dict:
        values = [v for p in payloads if p is not None for v in p if v is not None]
        extra = {"rows": len(values), "checksum": sum(values), "connections": self.conns}
        if isinstance(model, harness.ProcessPool):
            return {**extra, "workers": model.workers, "processes": model.processes}
        return {**extra, "workers": model.workers}


# --- blocking drivers: worker threads (psycopg2 also in processes) -----------------------------


class RawConnections(PointSelects):
    """A queue of raw DB-API connections, borrowed one query at a time."""

    def open(self, part: int = 0, parts: int = 1) -> None:
        self.free: queue.Queue = queue.Queue()
        self.all = self.connect(harness.shares(self.conns, parts)[part])
        for conn in self.all:
            self.free.put(conn)

    def connect(self, n: int) -> list:
        raise NotImplementedError

    def select(self, ids: list[int]) -> tuple[int, list]:
        conn = self.free.get(timeout=self.timeout)
        values = []
        try:
            start = harness.now()
            with conn.cursor() as cur:
                for id_ in ids:
                    cur.execute(dbutil.ITEM_SQL, (id_,))
                    row = cur.fetchone()
                    values.append(None if row is None else row[2])
            elapsed = harness.now() - start
        finally:
            self.free.put(conn)
        return elapsed, values

    def close(self) -> None:
        dbutil.close_all(self.all)


class Psycopg2(RawConnections):
    def connect(self, n: int) -> list:
        return dbutil.psycopg2_connections(self.urls.libpq, n)


class Psycopg2Processes(Psycopg2):
    def __init__(self, params: dict, services: dict) -> None:
        super().__init__(params, services)
        if self.schedule is not None:
            raise ValueError("db's multiprocessing variant has no open-loop mode (rate_per_s)")


class Psycopg3(RawConnections):
    def connect(self, n: int) -> list:
        import psycopg

        def connect():
            conn = psycopg.connect(self.urls.libpq, autocommit=True)
            conn.execute(dbutil.ITEM_SQL, (1,)).fetchone()
            return conn

        return dbutil.open_concurrently(connect, n)


class SqlalchemySync(PointSelects):
    """ORM: a Session per query (`Session.get(Item, id)`) on a psycopg2 engine of N connections."""

    def open(self, part: int = 0, parts: int = 1) -> None:
        from sqlalchemy import create_engine
        from sqlalchemy.orm import Session

        self.Item, self.Session = item_model(), Session
        self.engine = create_engine(self.urls.sqlalchemy_sync, **self.engine_options())
        held = [self.engine.connect() for _ in range(self.conns)]  # N distinct connections
        try:
            for conn in held:
                with Session(bind=conn) as session:
                    session.get(self.Item, 1)
        finally:
            for conn in held:
                conn.close()

    def select(self, ids: list[int]) -> tuple[int, list]:
        with self.Session(self.engine) as session:
            session.connection()  # check a connection out of the pool before the clock starts
            start = harness.now()
            items = [session.get(self.Item, id_) for id_ in ids]
            values = [None if item is None else item.value for item in items]
            return harness.now() - start, values

    def close(self) -> None:
        self.engine.dispose()


# --- asyncio drivers: `concurrency` tasks on one event loop ------------------------------------


class AsyncPointSelects(PointSelects):
    async def op(self, index: int) -> tuple[int, list]:
        return await self.select(self.ids(index))


class Asyncpg(AsyncPointSelects):
    """Raw asyncpg: `asyncpg.create_pool(min_size=N, max_size=N)`."""

    async def open(self, part: int = 0, parts: int = 1) -> None:
        self.pool = await dbutil.asyncpg_pool(self.urls.asyncpg, self.conns, self.timeout)

    async def select(self, ids: list[int]) -> tuple[int, list]:
        async with self.pool.acquire(timeout=self.timeout) as conn:
            start = harness.now()
            rows = [await conn.fetchrow(dbutil.ITEM_SQL_DOLLAR, id_) for id_ in ids]
            elapsed = harness.now() - start
        return elapsed, [None if row is None else row[2] for row in rows]

    async def close(self) -> None:
        await self.pool.close()


class Psycopg3Async(AsyncPointSelects):
    """psycopg 3 `AsyncConnection`s in an asyncio.Queue, borrowed one query at a time."""

    async def open(self, part: int = 0, parts: int = 1) -> None:
        import psycopg

        async def connect():
            conn = await psycopg.AsyncConnection.connect(self.urls.libpq, autocommit=True)
            await (await conn.execute(dbutil.ITEM_SQL, (1,))).fetchone()
            return conn

        self.free: asyncio.Queue = asyncio.Queue()
        made = await asyncio.gather(*(connect() for _ in range(self.conns)), return_exceptions=True)
        self.all = [c for c in made if not isinstance(c, BaseException)]
        failed = [c for c in made if isinstance(c, BaseException)]
        if failed:
            await self.close()
            raise failed[0]
        for conn in self.all:
            self.free.put_nowait(conn)

    async def select(self, ids: list[int]) -> tuple[int, list]:
        conn = await asyncio.wait_for(self.free.get(), self.timeout)
        values = []
        try:
            start = harness.now()
            for id_ in ids:
                cur = await conn.execute(dbutil.ITEM_SQL, (id_,))
                row = await cur.fetchone()
                values.append(None if row is None else row[2])
            elapsed = harness.now() - start
        finally:
            self.free.put_nowait(conn)
        return elapsed, values

    async def close(self) -> None:
        for conn in self.all:
            try:
                await conn.close()
            except Exception:  # noqa: BLE001
                pass


class SqlalchemyAsync(AsyncPointSelects):
    """ORM: an AsyncSession per query (`await session.get(Item, id)`) on an asyncpg engine."""

    async def open(self, part: int = 0, parts: int = 1) -> None:
        from sqlalchemy.ext.asyncio import AsyncSession, create_async_engine

        self.Item, self.Session = item_model(), AsyncSession
        self.engine = create_async_engine(self.urls.sqlalchemy_async, **self.engine_options())
        held = []
        try:
            for _ in range(self.conns):
                held.append(await self.engine.connect())
            for conn in held:
                async with AsyncSession(bind=conn) as session:
                    await session.get(self.Item, 1)
        finally:
            for conn in held:
                await conn.close()

    async def select(self, ids: list[int]) -> tuple[int, list]:
        async with self.Session(self.engine) as session:
            await session.connection()  # pool checkout before the clock starts
            start = harness.now()
            values = []
            for id_ in ids:
                item = await session.get(self.Item, id_)
                values.append(None if item is None else item.value)
            return harness.now() - start, values

    async def close(self) -> None:
        await self.engine.dispose()


def process_count(s: PointSelects) -> int:
    return max(1, min(s.concurrency, s.conns, os.cpu_count() or 1))


VARIANTS = {
    "sqlalchemy_sync": harness.ThreadPool.of(SqlalchemySync),
    "sqlalchemy_async": harness.EventLoop.of(SqlalchemyAsync),
    "psycopg2_threads": harness.ThreadPool.of(Psycopg2),
    "psycopg3_threads": harness.ThreadPool.of(Psycopg3),
    "psycopg3_async": harness.EventLoop.of(Psycopg3Async),
    "asyncpg": harness.EventLoop.of(Asyncpg),
    "multiprocessing": harness.ProcessPool.of(Psycopg2Processes, processes=process_count),
}
