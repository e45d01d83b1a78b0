"""Database scenario: concurrent point selects on asynclab.items, ORM and raw, sync vs async.

Every variant runs the same `queries` point selects (query i fetches id (i * 7919) % 100000 + 1)
with `concurrency` workers that each pull the next query index from one shared counter, over
exactly `pool_size` connections (0: as many as workers), all opened and warmed in setup. A worker
borrows a connection per query; the latency clock starts once it holds one (the actual send).
Every variant does one round trip per query: raw connections run in autocommit, the ORM engines
use isolation_level AUTOCOMMIT (no BEGIN/ROLLBACK pair), and asyncpg's pool skips its reset query.
`extra` has `rows` and `checksum` (sum of `value`), identical across variants. The
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
        if self.count < 0 or self.concurrency < 1 or self.conns < 1:
            raise ValueError(f"need queries >= 0, concurrency >= 1, pool_size >= 0; got {params}")
        self.timeout = params["timeout_s"]
        self.urls = dbutil.urls(services["database_url"])

    def op(self, index: int) -> tuple[int, int | None]:
        return self.select(dbutil.item_id(index))

    def select(self, id_: int) -> tuple[int, int | None]:
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
        values = [v for v in payloads if v is not None]
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

    def select(self, id_: int) -> tuple[int, int | None]:
        conn = self.free.get(timeout=self.timeout)
        try:
            start = harness.now()
            with conn.cursor() as cur:
                cur.execute(dbutil.ITEM_SQL, (id_,))
                row = cur.fetchone()
            elapsed = harness.now() - start
        finally:
            self.free.put(conn)
        return elapsed, None if row is None else row[2]

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

        conns = []
        try:
            for _ in range(n):
                conn = psycopg.connect(self.urls.libpq, autocommit=True)
                conns.append(conn)
                conn.execute(dbutil.ITEM_SQL, (1,)).fetchone()
        except BaseException:
            dbutil.close_all(conns)
            raise
        return conns


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

    def select(self, id_: int) -> tuple[int, int | None]:
        with self.Session(self.engine) as session:
            session.connection()  # check a connection out of the pool before the clock starts
            start = harness.now()
            item = session.get(self.Item, id_)
            value = None if item is None else item.value
            return harness.now() - start, value

    def close(self) -> None:
        self.engine.dispose()


# --- asyncio drivers: `concurrency` tasks on one event loop ------------------------------------


class AsyncPointSelects(PointSelects):
    async def op(self, index: int) -> tuple[int, int | None]:
        return await self.select(dbutil.item_id(index))


class Asyncpg(AsyncPointSelects):
    """Raw asyncpg: `asyncpg.create_pool(min_size=N, max_size=N)`."""

    async def open(self, part: int = 0, parts: int = 1) -> None:
        self.pool = await dbutil.asyncpg_pool(self.urls.asyncpg, self.conns, self.timeout)

    async def select(self, id_: int) -> tuple[int, int | None]:
        async with self.pool.acquire(timeout=self.timeout) as conn:
            start = harness.now()
            row = await conn.fetchrow(dbutil.ITEM_SQL_DOLLAR, id_)
            elapsed = harness.now() - start
        return elapsed, None if row is None else row[2]

    async def close(self) -> None:
        await self.pool.close()


class Psycopg3Async(AsyncPointSelects):
    """psycopg 3 `AsyncConnection`s in an asyncio.Queue, borrowed one query at a time."""

    async def open(self, part: int = 0, parts: int = 1) -> None:
        import psycopg

        self.free: asyncio.Queue = asyncio.Queue()
        self.all = []
        for _ in range(self.conns):
            conn = await psycopg.AsyncConnection.connect(self.urls.libpq, autocommit=True)
            self.all.append(conn)
            await (await conn.execute(dbutil.ITEM_SQL, (1,))).fetchone()
            self.free.put_nowait(conn)

    async def select(self, id_: int) -> tuple[int, int | None]:
        conn = await asyncio.wait_for(self.free.get(), self.timeout)
        try:
            start = harness.now()
            cur = await conn.execute(dbutil.ITEM_SQL, (id_,))
            row = await cur.fetchone()
            elapsed = harness.now() - start
        finally:
            self.free.put_nowait(conn)
        return elapsed, None if row is None else row[2]

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

    async def select(self, id_: int) -> tuple[int, int | None]:
        async with self.Session(self.engine) as session:
            await session.connection()  # pool checkout before the clock starts
            start = harness.now()
            item = await session.get(self.Item, id_)
            value = None if item is None else item.value
            return harness.now() - start, value

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
