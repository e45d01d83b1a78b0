"""I/O-bound scenario: N HTTP GETs to the mock server's /delay endpoint, sync vs concurrent.

Closed loop by default: `requests` GETs as fast as each variant can. With `rate_per_s` > 0 the
run is open loop instead (workloads/openloop.py): `rate_per_s * duration_s` GETs on a fixed
schedule, `requests` unused; every `stall_every`-th of them (1-based) asks for `stall_ms` instead
of `delay_ms`, a server that stalls now and then.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import requests

import harness
import openloop

PARAMS = {
    "requests": 50,
    "delay_ms": 100,
    "bytes": 1024,
    "status": 200,
    "concurrency": 10,
    "timeout_s": 30.0,
    "loop": "asyncio",
    "start_method": None,
    "warm_connections": True,
    **openloop.PARAMS,
    "stall_every": 0,
    "stall_ms": 1000,
}


def warm_url(params: dict, fixtures: dict) -> str | None:
    """The URL used to open keep-alive connections in setup: `/__stats`, which the mock server
    does not count, so the request-count check still sees only the timed requests. A service
    keeps its pool warm; `warm_connections = false` times connecting too."""
    if not params["warm_connections"]:
        return None
    return fixtures["http_url"].rstrip("/") + "/__stats"


def warm(session: requests.Session, url: str | None) -> None:
    if url is not None:
        session.get(url, timeout=30).content  # noqa: B018 - read the body so the connection is reused


def target_url(params: dict, fixtures: dict) -> str:
    base = fixtures["http_url"].rstrip("/")
    url = f"{base}/delay/{params['delay_ms']}?bytes={params['bytes']}"
    return url if params["status"] == 200 else f"{url}&status={params['status']}"


def open_loop_plan(params: dict, fixtures: dict) -> tuple[openloop.Schedule, list[str]] | None:
    """Open-loop mode: the schedule and each scheduled request's URL (built here, in setup)."""
    sched, every = openloop.schedule(params), int(params["stall_every"])
    if sched is None:
        if every:
            raise ValueError("stall_every needs open-loop mode: set rate_per_s > 0 as well")
        return None
    if every < 0:
        raise ValueError(f"stall_every must be 0 (no stalls) or a positive count, got {every}")
    normal = target_url(params, fixtures)
    stalled = target_url({**params, "delay_ms": params["stall_ms"]}, fixtures)
    urls = [stalled if every and (i + 1) % every == 0 else normal for i in range(sched.count)]
    return sched, urls


def open_loop_outcome(sched: openloop.Schedule, samples, t0: int) -> harness.Outcome:
    received = sum(s.payload or 0 for s in samples)
    return openloop.outcome(sched, samples, t0, {"bytes_received": received})


def get_once(session: requests.Session, url: str, timeout: float) -> tuple[int, str | None]:
    """One blocking GET for the open-loop drivers (which time it): (bytes, error or None)."""
    resp = session.get(url, timeout=timeout)
    body = resp.content
    return len(body), None if 200 <= resp.status_code < 300 else f"HTTP {resp.status_code}"


def fetch(session: requests.Session, url: str, timeout: float) -> tuple[int, int, str | None]:
    """One blocking GET: (latency_ns, bytes_received, error or None)."""
    start = harness.Recorder.now()
    try:
        resp = session.get(url, timeout=timeout)
        body = resp.content
    except Exception as exc:  # noqa: BLE001 - a failed request is an error, not a crash
        return harness.Recorder.now() - start, 0, harness.describe_error(exc)
    elapsed = harness.Recorder.now() - start
    error = None if 200 <= resp.status_code < 300 else f"HTTP {resp.status_code}"
    return elapsed, len(body), error


class BlockingWorkload(harness.Workload):
    """Shared shape of sync, threads and multiprocessing: map `fetch` over the request indices."""

    def __init__(self, params: dict, fixtures: dict) -> None:
        self.n = params["requests"]
        self.url = target_url(params, fixtures)
        self.timeout = params["timeout_s"]
        self.warm_url = warm_url(params, fixtures)
        self.plan = open_loop_plan(params, fixtures)

    def map(self, indices: range):
        raise NotImplementedError

    def run_open_loop(self, sched: openloop.Schedule, urls: list[str]):
        """(samples, t0) of an open-loop run."""
        raise NotImplementedError

    def run(self) -> harness.Outcome:
        if self.plan is not None:
            return open_loop_outcome(self.plan[0], *self.run_open_loop(*self.plan))
        rec, received = harness.Recorder(), 0
        for elapsed, nbytes, error in self.map(range(self.n)):
            received += nbytes
            if error is None:
                rec.add_ns(elapsed)
            else:
                rec.error(error)
        return rec.outcome({"bytes_received": received})


def preload_lazy_imports() -> None:
    """requests imports netrc on its first request: pay that here, in setup, not in the run."""
    import netrc  # noqa: F401


class Sync(BlockingWorkload):
    def __init__(self, params: dict, fixtures: dict) -> None:
        super().__init__(params, fixtures)
        preload_lazy_imports()
        self.session = requests.Session()
        warm(self.session, self.warm_url)

    def map(self, indices: range):
        return [fetch(self.session, self.url, self.timeout) for _ in indices]

    def run_open_loop(self, sched: openloop.Schedule, urls: list[str]):
        return openloop.run_serial(sched, self._get, urls)

    def _get(self, url: str) -> tuple[int, str | None]:
        return get_once(self.session, url, self.timeout)

    def close(self) -> None:
        self.session.close()


class Threads(BlockingWorkload):
    def __init__(self, params: dict, fixtures: dict) -> None:
        super().__init__(params, fixtures)
        workers = params["concurrency"]
        self.local, self.sessions = threading.local(), []
        self.pool = ThreadPoolExecutor(max_workers=workers)
        barrier = threading.Barrier(workers)  # every worker thread exists and has its session
        for f in [self.pool.submit(self._warm, barrier) for _ in range(workers)]:
            f.result()

    def _warm(self, barrier: threading.Barrier) -> None:
        preload_lazy_imports()
        self.local.session = requests.Session()
        warm(self.local.session, self.warm_url)
        self.sessions.append(self.local.session)
        barrier.wait(timeout=30)

    def _fetch(self, _index: int):
        return fetch(self.local.session, self.url, self.timeout)

    def map(self, indices: range):
        return list(self.pool.map(self._fetch, indices))

    def run_open_loop(self, sched: openloop.Schedule, urls: list[str]):
        def submit(i: int, intended_ns: int, deadline_ns: int):
            return self.pool.submit(openloop.timed, self._get, urls[i], intended_ns, deadline_ns)

        return openloop.run_pool(sched, submit, lambda future: future.result())

    def _get(self, url: str) -> tuple[int, str | None]:
        return get_once(self.local.session, url, self.timeout)

    def close(self) -> None:
        self.pool.shutdown(wait=True)
        for session in self.sessions:
            session.close()


_worker: dict = {}


def _init_worker(url: str, timeout: float, warm_with: str | None, barrier) -> None:
    preload_lazy_imports()
    _worker.update(session=requests.Session(), url=url, timeout=timeout)
    warm(_worker["session"], warm_with)
    barrier.wait(timeout=60)


def _fetch_in_worker(_index: int):
    return fetch(_worker["session"], _worker["url"], _worker["timeout"])


def _get_in_worker(url: str) -> tuple[int, str | None]:
    return get_once(_worker["session"], url, _worker["timeout"])


class Processes(BlockingWorkload):
    def __init__(self, params: dict, fixtures: dict) -> None:
        super().__init__(params, fixtures)
        ctx, workers = harness.mp_context(params), params["concurrency"]
        barrier = ctx.Barrier(workers + 1)  # returns once every worker ran its initializer
        initargs = (self.url, self.timeout, self.warm_url, barrier)
        self.pool = ctx.Pool(workers, initializer=_init_worker, initargs=initargs)
        barrier.wait(timeout=60)

    def map(self, indices: range):
        return self.pool.map(_fetch_in_worker, indices, chunksize=1)

    def run_open_loop(self, sched: openloop.Schedule, urls: list[str]):
        def submit(i: int, intended_ns: int, deadline_ns: int):
            args = (_get_in_worker, urls[i], intended_ns, deadline_ns)
            return self.pool.apply_async(openloop.timed, args)

        return openloop.run_pool(sched, submit, lambda result: result.get())

    def close(self) -> None:
        self.pool.close()
        self.pool.join()


class AsyncWorkload(harness.Workload):
    """asyncio variants: a client made on the loop in setup, a Semaphore(concurrency) per run."""

    def __init__(self, params: dict, fixtures: dict) -> None:
        self.n, self.concurrency = params["requests"], params["concurrency"]
        self.url, self.timeout = target_url(params, fixtures), params["timeout_s"]
        self.plan = open_loop_plan(params, fixtures)
        self.loop = harness.new_event_loop(params)
        self.client = self.loop.run_until_complete(self.open())
        url = warm_url(params, fixtures)
        if url is not None:  # one connection per in-flight slot, opened concurrently
            self.loop.run_until_complete(
                asyncio.gather(*(self.get(url) for _ in range(self.concurrency)))
            )

    async def open(self):
        raise NotImplementedError

    async def get(self, url: str | None = None) -> tuple[int, bytes]:
        raise NotImplementedError

    async def one(self, sem: asyncio.Semaphore, rec: harness.Recorder) -> int:
        async with sem:
            start = rec.now()
            try:
                status, body = await self.get()
            except Exception as exc:  # noqa: BLE001
                rec.error(exc)
                return 0
            if 200 <= status < 300:
                rec.since(start)
            else:
                rec.error(f"HTTP {status}")
            return len(body)

    async def get_open_loop(self, url: str) -> tuple[int, str | None]:
        status, body = await self.get(url)
        return len(body), None if 200 <= status < 300 else f"HTTP {status}"

    async def main(self) -> harness.Outcome:
        if self.plan is not None:
            sched, urls = self.plan
            samples, t0 = await openloop.run_async(
                sched, self.concurrency, self.get_open_loop, urls
            )
            return open_loop_outcome(sched, samples, t0)
        rec, sem = harness.Recorder(), asyncio.Semaphore(self.concurrency)
        sizes = await asyncio.gather(*(self.one(sem, rec) for _ in range(self.n)))
        return rec.outcome({"bytes_received": sum(sizes)})

    def run(self) -> harness.Outcome:
        return self.loop.run_until_complete(self.main())

    def close(self) -> None:
        self.loop.run_until_complete(self.client_close())
        self.loop.close()

    async def client_close(self) -> None:
        await self.client.close()


class Aiohttp(AsyncWorkload):
    async def open(self):
        import aiohttp

        connector = aiohttp.TCPConnector(limit=self.concurrency)
        timeout = aiohttp.ClientTimeout(total=self.timeout)
        return aiohttp.ClientSession(connector=connector, timeout=timeout)

    async def get(self, url: str | None = None) -> tuple[int, bytes]:
        async with self.client.get(url or self.url) as resp:
            return resp.status, await resp.read()


class Httpx(AsyncWorkload):
    async def open(self):
        import anyio
        import httpx

        await anyio.sleep(0)  # loads anyio's backend for this loop now, not on the first request
        limits = httpx.Limits(
            max_connections=self.concurrency, max_keepalive_connections=self.concurrency
        )
        return httpx.AsyncClient(limits=limits, timeout=self.timeout)

    async def get(self, url: str | None = None) -> tuple[int, bytes]:
        resp = await self.client.get(url or self.url)
        return resp.status_code, resp.content

    async def client_close(self) -> None:
        await self.client.aclose()


VARIANTS = {
    "sync": Sync,
    "threads": Threads,
    "multiprocessing": Processes,
    "asyncio": Aiohttp,
    "httpx_async": Httpx,
}
