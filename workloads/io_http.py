"""I/O-bound scenario: N HTTP GETs to the mock server's /delay endpoint, sync vs concurrent.

Closed loop by default: `requests` GETs as fast as each variant can. With `rate_per_s` > 0 the
run is open loop instead (workloads/openloop.py): `rate_per_s * duration_s` GETs on a fixed
schedule, `requests` unused; every `stall_every`-th of them (1-based) asks for `stall_ms` instead
of `delay_ms`, a server that stalls now and then. The operation is one GET; its payload is the
body's size (`extra["bytes_received"]`, error bodies included).
"""

from __future__ import annotations

import asyncio

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


def target_url(params: dict, services: dict) -> str:
    base = services["http_url"].rstrip("/")
    url = f"{base}/delay/{params['delay_ms']}?bytes={params['bytes']}"
    return url if params["status"] == 200 else f"{url}&status={params['status']}"


def request_urls(params: dict, services: dict, sched: openloop.Schedule | None) -> list[str]:
    """Each request's URL, built here in setup: in open loop every `stall_every`-th stalls."""
    every = int(params["stall_every"])
    if sched is None and every:
        raise ValueError("stall_every needs open-loop mode: set rate_per_s > 0 as well")
    if every < 0:
        raise ValueError(f"stall_every must be 0 (no stalls) or a positive count, got {every}")
    normal = target_url(params, services)
    if sched is None:
        return [normal] * params["requests"]
    stalled = target_url({**params, "delay_ms": params["stall_ms"]}, services)
    return [stalled if every and (i + 1) % every == 0 else normal for i in range(sched.count)]


def checked(status: int, body: bytes) -> int:
    """The operation's payload, the body's size; a status other than 2xx fails it."""
    if not 200 <= status < 300:
        raise harness.Failed(f"HTTP {status}", len(body))
    return len(body)


class Http(harness.Scenario):
    """What every variant shares: the URLs, the timeout, the connections to warm."""

    def __init__(self, params: dict, services: dict) -> None:
        super().__init__(params, services)
        self.count, self.concurrency = params["requests"], params["concurrency"]
        self.timeout = params["timeout_s"]
        self.urls = request_urls(params, services, self.schedule)
        # Keep-alive connections are opened in setup on `/__stats`, which the mock server does not
        # count, so the request-count check still sees only the timed requests. A service keeps
        # its pool warm; `warm_connections = false` times connecting too.
        self.warm_url = services["http_url"].rstrip("/") + "/__stats"
        if not params["warm_connections"]:
            self.warm_url = None

    def extra(self, payloads: list, model: harness.Model) -> dict:
        return {"bytes_received": sum(p or 0 for p in payloads)}


class Blocking(Http):
    """requests: one Session per worker thread (or process), made and warmed in setup."""

    def __init__(self, params: dict, services: dict) -> None:
        super().__init__(params, services)
        self.sessions: list[requests.Session] = []

    def open_worker(self) -> None:
        import netrc  # noqa: F401 - requests imports it on its first request: pay that here

        session = self.local.session = requests.Session()
        self.sessions.append(session)
        if self.warm_url is not None:
            session.get(self.warm_url, timeout=30).content  # noqa: B018 - read it: reuse

    def op(self, index: int) -> int:
        resp = self.local.session.get(self.urls[index], timeout=self.timeout)
        return checked(resp.status_code, resp.content)

    def close(self) -> None:
        for session in self.sessions:
            session.close()


class Async(Http):
    """asyncio: one client made on the loop in setup, a connection per in-flight slot warmed."""

    async def open(self, part: int = 0, parts: int = 1) -> None:
        self.client = await self.connect()
        if self.warm_url is not None:  # one connection per in-flight slot, opened concurrently
            await asyncio.gather(*(self.get(self.warm_url) for _ in range(self.concurrency)))

    async def connect(self):
        raise NotImplementedError

    async def get(self, url: str) -> tuple[int, bytes]:
        raise NotImplementedError

    async def op(self, index: int) -> int:
        return checked(*await self.get(self.urls[index]))

    async def close(self) -> None:
        await self.client.close()


class Aiohttp(Async):
    async def connect(self):
        import aiohttp

        connector = aiohttp.TCPConnector(limit=self.concurrency)
        timeout = aiohttp.ClientTimeout(total=self.timeout)
        return aiohttp.ClientSession(connector=connector, timeout=timeout)

    async def get(self, url: str) -> tuple[int, bytes]:
        async with self.client.get(url) as resp:
            return resp.status, await resp.read()


class Httpx(Async):
    async def connect(self):
        import anyio
        import httpx

        await anyio.sleep(0)  # loads anyio's backend for this loop now, not on the first request
        limits = httpx.Limits(
            max_connections=self.concurrency, max_keepalive_connections=self.concurrency
        )
        return httpx.AsyncClient(limits=limits, timeout=self.timeout)

    async def get(self, url: str) -> tuple[int, bytes]:
        resp = await self.client.get(url)
        return resp.status_code, resp.content

    async def close(self) -> None:
        await self.client.aclose()


VARIANTS = {
    "sync": harness.Sequential.of(Blocking),
    "threads": harness.ThreadPool.of(Blocking),
    "multiprocessing": harness.ProcessPool.of(Blocking),
    "asyncio": harness.EventLoop.of(Aiohttp),
    "httpx_async": harness.EventLoop.of(Httpx),
}
