"""Database scenario: concurrent point selects on asynclab.items, ORM and raw, sync vs async.

Every variant runs the same `queries` point selects (query i fetches id (i * 7919) % 100000 + 1)
with `concurrency` workers that each pull the next query index from one shared counter, over
exactly `pool_size` connections (0: as many as workers), all opened and warmed in setup. A worker
borrows a connection per query; the latency clock starts once it holds one (the actual send).
Every variant does one round trip per query: raw connections run in autocommit, the ORM engines
use isolation_level AUTOCOMMIT (no BEGIN/ROLLBACK pair), and asyncpg's pool skips its reset query.
`extra` has `rows` and `checksum` (sum of `value`), identical across variants.

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


def sizes(params: dict) -> tuple[int, int, int]:
    """(queries, workers, connections), validated."""
    queries, workers = int(params["queries"]), int(params["concurrency"])
    conns = int(params["pool_size"]) or workers
    if queries < 0 or workers < 1 or conns < 1:
        raise ValueError(f"need queries >= 0, concurrency >= 1, pool_size >= 0; got {params}")
    return queries, workers, conns


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


def open_loop_outcome(sched: openloop.Schedule, samples, t0: int, w) -> harness.Outcome:
    """An open-loop run's Outcome with the closed-loop runs' `extra` (rows, checksum, ...)."""
    values = [s.payload for s in samples if s.sent_ns is not None and s.error is None]
    values = [v for v in values if v is not None]
    extra = {"rows": len(values), "checksum": sum(values), "connections": w.conns}
    return openloop.outcome(sched, samples, t0, {**extra, "workers": w.workers})


def tally(results) -> tuple[int, int]:
    """Sum of per-worker (rows, checksum) pairs."""
    rows = checksum = 0
    for r, c in results:
        rows, checksum = rows + r, checksum + c
    return rows, checksum


# --- threads: `workers` threads drain the counter -----------------------------------------------


class ThreadWorkload(harness.Workload):
    """Blocking variants: started worker threads, each looping over counter indices."""

    def __init__(self, params: dict, fixtures: dict) -> None:
        self.n, self.workers, self.conns = sizes(params)
        self.schedule = openloop.schedule(params)
        self.timeout = params["timeout_s"]
        self.urls = dbutil.urls(fixtures["database_url"])
        self.open()
        self.pool = dbutil.started_executor(self.workers)

    def open(self) -> None:
        raise NotImplementedError

    def query(self, id_: int) -> tuple[int, int | None]:
        """One point select: (latency ns from the send, the row's value or None)."""
        raise NotImplementedError

    def drain(self, counter: dbutil.Counter, rec: harness.Recorder) -> tuple[int, int]:
        rows = checksum = 0
        while (index := counter.take()) is not None:
            try:
                elapsed, value = self.query(dbutil.item_id(index))
            except Exception as exc:  # noqa: BLE001 - a failed query is an error, not a crash
                rec.error(exc)
                continue
            rec.add_ns(elapsed)
            if value is not None:
                rows, checksum = rows + 1, checksum + value
        return rows, checksum

    def one(self, index: int) -> tuple[int | None, None]:
        """One open-loop query (openloop times it): (the row's value, no error)."""
        return self.query(dbutil.item_id(index))[1], None

    def run(self) -> harness.Outcome:
        if self.schedule is not None:

            def submit(i: int, intended_ns: int, deadline_ns: int):
                return self.pool.submit(openloop.timed, self.one, i, intended_ns, deadline_ns)

            samples, t0 = openloop.run_pool(self.schedule, submit, lambda f: f.result())
            return open_loop_outcome(self.schedule, samples, t0, self)
        rec, counter = harness.Recorder(), dbutil.Counter(self.n)
        futures = [self.pool.submit(self.drain, counter, rec) for _ in range(self.workers)]
        rows, checksum = tally(f.result() for f in futures)
        extra = {"rows": rows, "checksum": checksum, "connections": self.conns}
        return rec.outcome({**extra, "workers": self.workers})

    def close(self) -> None:
        self.pool.shutdown(wait=True)
        self.close_connections()

    def close_connections(self) -> None:
        pass


class RawThreads(ThreadWorkload):
    """A queue of raw DB-API connections, borrowed one query at a time."""

    def open(self) -> None:
        self.free: queue.Queue = queue.Queue()
        self.all = self.connect()
        for conn in self.all:
            self.free.put(conn)

    def connect(self) -> list:
        raise NotImplementedError

    def query(self, id_: int) -> tuple[int, int | None]:
        conn = self.free.get(timeout=self.timeout)
        try:
            start = harness.Recorder.now()
            with conn.cursor() as cur:
                cur.execute(dbutil.ITEM_SQL, (id_,))
                row = cur.fetchone()
            elapsed = harness.Recorder.now() - start
        finally:
            self.free.put(conn)
        return elapsed, None if row is None else row[2]

    def close_connections(self) -> None:
        dbutil.close_all(self.all)


class Psycopg2Threads(RawThreads):
    def connect(self) -> list:
        return dbutil.psycopg2_connections(self.urls.libpq, self.conns)


class Psycopg3Threads(RawThreads):
    def connect(self) -> list:
        import psycopg

        conns = []
        try:
            for _ in range(self.conns):
                conn = psycopg.connect(self.urls.libpq, autocommit=True)
                conns.append(conn)
                conn.execute(dbutil.ITEM_SQL, (1,)).fetchone()
        except BaseException:
            dbutil.close_all(conns)
            raise
        return conns


class SqlalchemySync(ThreadWorkload):
    """ORM: a Session per query (`Session.get(Item, id)`) on a psycopg2 engine of N connections."""

    def open(self) -> None:
        from sqlalchemy import create_engine
        from sqlalchemy.orm import Session

        self.Item, self.Session = item_model(), Session
        self.engine = create_engine(
            self.urls.sqlalchemy_sync,
            pool_size=self.conns,
            max_overflow=0,
            pool_timeout=self.timeout,
            isolation_level="AUTOCOMMIT",
        )
        held = [self.engine.connect() for _ in range(self.conns)]  # N distinct connections
        try:
            for conn in held:
                with Session(bind=conn) as session:
                    session.get(self.Item, 1)
        finally:
            for conn in held:
                conn.close()

    def query(self, id_: int) -> tuple[int, int | None]:
        with self.Session(self.engine) as session:
            session.connection()  # check a connection out of the pool before the clock starts
            start = harness.Recorder.now()
            item = session.get(self.Item, id_)
            value = None if item is None else item.value
            return harness.Recorder.now() - start, value

    def close_connections(self) -> None:
        self.engine.dispose()


# --- asyncio: `workers` tasks drain the counter on one event loop --------------------------------


class AsyncWorkload(harness.Workload):
    """asyncio variants: loop and connections made in setup, `workers` tasks per run."""

    def __init__(self, params: dict, fixtures: dict) -> None:
        self.n, self.workers, self.conns = sizes(params)
        self.schedule = openloop.schedule(params)
        self.timeout = params["timeout_s"]
        self.urls = dbutil.urls(fixtures["database_url"])
        self.loop = harness.new_event_loop(params)
        self.loop.run_until_complete(self.open())

    async def open(self) -> None:
        raise NotImplementedError

    async def query(self, id_: int) -> tuple[int, int | None]:
        raise NotImplementedError

    async def drain(self, counter: dbutil.Counter, rec: harness.Recorder) -> tuple[int, int]:
        rows = checksum = 0
        while (index := counter.take()) is not None:
            try:
                elapsed, value = await self.query(dbutil.item_id(index))
            except Exception as exc:  # noqa: BLE001
                rec.error(exc)
                continue
            rec.add_ns(elapsed)
            if value is not None:
                rows, checksum = rows + 1, checksum + value
        return rows, checksum

    async def one(self, index: int) -> tuple[int | None, None]:
        """One open-loop query (openloop times it): (the row's value, no error)."""
        return (await self.query(dbutil.item_id(index)))[1], None

    async def main(self) -> harness.Outcome:
        if (sched := self.schedule) is not None:
            indices = range(sched.count)
            samples, t0 = await openloop.run_async(sched, self.workers, self.one, indices)
            return open_loop_outcome(sched, samples, t0, self)
        rec, counter = harness.Recorder(), dbutil.Counter(self.n)
        results = await asyncio.gather(*(self.drain(counter, rec) for _ in range(self.workers)))
        rows, checksum = tally(results)
        extra = {"rows": rows, "checksum": checksum, "connections": self.conns}
        return rec.outcome({**extra, "workers": self.workers})

    def run(self) -> harness.Outcome:
        return self.loop.run_until_complete(self.main())

    def close(self) -> None:
        try:
            self.loop.run_until_complete(self.aclose())
        finally:
            self.loop.close()

    async def aclose(self) -> None:
        pass


class Asyncpg(AsyncWorkload):
    """Raw asyncpg: `asyncpg.create_pool(min_size=N, max_size=N)`."""

    async def open(self) -> None:
        self.pool = await dbutil.asyncpg_pool(self.urls.asyncpg, self.conns, self.timeout)

    async def query(self, id_: int) -> tuple[int, int | None]:
        async with self.pool.acquire(timeout=self.timeout) as conn:
            start = harness.Recorder.now()
            row = await conn.fetchrow(dbutil.ITEM_SQL_DOLLAR, id_)
            elapsed = harness.Recorder.now() - start
        return elapsed, None if row is None else row[2]

    async def aclose(self) -> None:
        await self.pool.close()


class Psycopg3Async(AsyncWorkload):
    """psycopg 3 `AsyncConnection`s in an asyncio.Queue, borrowed one query at a time."""

    async def open(self) -> None:
        import psycopg

        self.free: asyncio.Queue = asyncio.Queue()
        self.all = []
        for _ in range(self.conns):
            conn = await psycopg.AsyncConnection.connect(self.urls.libpq, autocommit=True)
            self.all.append(conn)
            await (await conn.execute(dbutil.ITEM_SQL, (1,))).fetchone()
            self.free.put_nowait(conn)

    async def query(self, id_: int) -> tuple[int, int | None]:
        conn = await asyncio.wait_for(self.free.get(), self.timeout)
        try:
            start = harness.Recorder.now()
            cur = await conn.execute(dbutil.ITEM_SQL, (id_,))
            row = await cur.fetchone()
            elapsed = harness.Recorder.now() - start
        finally:
            self.free.put_nowait(conn)
        return elapsed, None if row is None else row[2]

    async def aclose(self) -> None:
        for conn in self.all:
            try:
                await conn.close()
            except Exception:  # noqa: BLE001
                pass


class SqlalchemyAsync(AsyncWorkload):
    """ORM: an AsyncSession per query (`await session.get(Item, id)`) on an asyncpg engine."""

    async def open(self) -> None:
        from sqlalchemy.ext.asyncio import AsyncSession, create_async_engine

        self.Item, self.Session = item_model(), AsyncSession
        self.engine = create_async_engine(
            self.urls.sqlalchemy_async,
            pool_size=self.conns,
            max_overflow=0,
            pool_timeout=self.timeout,
            isolation_level="AUTOCOMMIT",
        )
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

    async def query(self, id_: int) -> tuple[int, int | None]:
        async with self.Session(self.engine) as session:
            await session.connection()  # pool checkout before the clock starts
            start = harness.Recorder.now()
            item = await session.get(self.Item, id_)
            value = None if item is None else item.value
            return harness.Recorder.now() - start, value

    async def aclose(self) -> None:
        await self.engine.dispose()


# --- multiprocessing: P processes, each with its share of the threads and connections ------------


def _child(pipe, dsn: str, workers: int, conns: int, counter, timeout: float) -> None:
    """A worker process: open its connections, then serve runs until told to stop (None)."""
    try:
        free: queue.Queue = queue.Queue()
        all_conns = dbutil.psycopg2_connections(dsn, conns)
        for conn in all_conns:
            free.put(conn)
        pool = dbutil.started_executor(workers)
    except BaseException as exc:
        pipe.send(("error", harness.describe_error(exc)))
        raise
    pipe.send(("ready", os.getpid()))

    def take(total: int) -> int | None:
        with counter.get_lock():
            index = counter.value
            if index >= total:
                return None
            counter.value = index + 1
            return index

    def drain(total: int, rec: harness.Recorder) -> tuple[int, int]:
        rows = checksum = 0
        while (index := take(total)) is not None:
            try:
                conn = free.get(timeout=timeout)
                try:
                    start = harness.Recorder.now()
                    with conn.cursor() as cur:
                        cur.execute(dbutil.ITEM_SQL, (dbutil.item_id(index),))
                        row = cur.fetchone()
                    rec.since(start)
                finally:
                    free.put(conn)
            except Exception as exc:  # noqa: BLE001
                rec.error(exc)
                continue
            if row is not None:
                rows, checksum = rows + 1, checksum + row[2]
        return rows, checksum

    try:
        while (total := pipe.recv()) is not None:
            rec = harness.Recorder()
            futures = [pool.submit(drain, total, rec) for _ in range(workers)]
            rows, checksum = tally(f.result() for f in futures)
            pipe.send(("result", rec.latencies_ns, rec.errors, rec.error_samples, rows, checksum))
    finally:
        pool.shutdown(wait=True)
        dbutil.close_all(all_conns)


class Processes(harness.Workload):
    """P = min(concurrency, pool_size, cpu_count) processes sharing one counter; psycopg2."""

    def __init__(self, params: dict, fixtures: dict) -> None:
        if openloop.schedule(params) is not None:
            raise ValueError("db's multiprocessing variant has no open-loop mode (rate_per_s)")
        self.n, self.workers, self.conns = sizes(params)
        procs = max(1, min(self.workers, self.conns, os.cpu_count() or 1))
        self.ctx, dsn = harness.mp_context(params), dbutil.urls(fixtures["database_url"]).libpq
        self.counter = self.ctx.Value("q", 0)
        self.procs, self.pipes = [], []
        threads_each = dbutil.shares(self.workers, procs)
        plan = zip(threads_each, dbutil.shares(self.conns, procs), strict=True)
        try:
            for workers, conns in plan:
                parent, child = self.ctx.Pipe()
                args = (child, dsn, workers, conns, self.counter, params["timeout_s"])
                proc = self.ctx.Process(target=_child, args=args, daemon=True)
                proc.start()
                child.close()
                self.procs.append(proc)
                self.pipes.append(parent)
            for pipe in self.pipes:
                if not pipe.poll(60):
                    raise TimeoutError("a worker process did not connect within 60 s")
                kind, detail = pipe.recv()
                if kind != "ready":
                    raise RuntimeError(f"worker process setup failed: {detail}")
        except BaseException:
            self.close()
            raise

    def run(self) -> harness.Outcome:
        with self.counter.get_lock():
            self.counter.value = 0
        for pipe in self.pipes:
            pipe.send(self.n)
        rec, results = harness.Recorder(), []
        for pipe in self.pipes:
            _, latencies, errors, samples, rows, checksum = pipe.recv()
            rec.latencies_ns.extend(latencies)
            rec.errors += errors
            rec.error_samples.extend(samples)
            results.append((rows, checksum))
        rows, checksum = tally(results)
        extra = {"rows": rows, "checksum": checksum, "connections": self.conns}
        return rec.outcome({**extra, "workers": self.workers, "processes": len(self.procs)})

    def close(self) -> None:
        for pipe in self.pipes:
            try:
                pipe.send(None)
            except OSError:
                pass
        for proc in self.procs:
            proc.join(timeout=30)
            if proc.is_alive():
                proc.kill()
                proc.join()
        for pipe in self.pipes:
            pipe.close()


VARIANTS = {
    "sqlalchemy_sync": SqlalchemySync,
    "sqlalchemy_async": SqlalchemyAsync,
    "psycopg2_threads": Psycopg2Threads,
    "psycopg3_threads": Psycopg3Threads,
    "psycopg3_async": Psycopg3Async,
    "asyncpg": Asyncpg,
    "multiprocessing": Processes,
}
