"""CPU-bound scenario: count primes below n, `jobs` times; sync, asyncio, threads, processes."""

from __future__ import annotations

import asyncio
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import harness

PARAMS = {"n": 500_000, "jobs": 8, "concurrency": 0, "loop": "asyncio", "start_method": None}


def count_primes(n: int) -> int:
    """Primes below n by trial division: deliberately pure-Python work that holds the GIL."""
    count = 1 if n > 2 else 0
    for k in range(3, n, 2):
        i = 3
        while i * i <= k:
            if k % i == 0:
                break
            i += 2
        else:
            count += 1
    return count


def timed_job(n: int) -> tuple[int, int]:
    """(prime count, job latency in ns)."""
    start = harness.Recorder.now()
    return count_primes(n), harness.Recorder.now() - start


class Jobs(harness.Workload):
    """Run `jobs` jobs through `self.map` and check they all found the same number of primes."""

    def __init__(self, params: dict, fixtures: dict) -> None:
        self.n, self.jobs = params["n"], params["jobs"]
        self.workers = 1

    def map(self, n: int, jobs: int) -> list[tuple[int, int]]:
        return [timed_job(n) for _ in range(jobs)]

    def run(self) -> harness.Outcome:
        rec, counts = harness.Recorder(), set()
        for count, elapsed in self.map(self.n, self.jobs):
            counts.add(count)
            rec.add_ns(elapsed)
        if len(counts) > 1:
            raise RuntimeError(f"jobs disagree on the prime count: {sorted(counts)}")
        extra = {"primes": min(counts, default=0), "cpu_count": os.cpu_count()}
        return rec.outcome({**extra, "workers": self.workers})


class Asyncio(Jobs):
    def __init__(self, params: dict, fixtures: dict) -> None:
        super().__init__(params, fixtures)
        self.loop = harness.new_event_loop(params)

    async def job(self, n: int) -> tuple[int, int]:
        return timed_job(n)

    async def gather(self, n: int, jobs: int) -> list[tuple[int, int]]:
        return list(await asyncio.gather(*(self.job(n) for _ in range(jobs))))

    def map(self, n: int, jobs: int) -> list[tuple[int, int]]:
        return self.loop.run_until_complete(self.gather(n, jobs))

    def close(self) -> None:
        self.loop.close()


class Threads(Jobs):
    def __init__(self, params: dict, fixtures: dict) -> None:
        super().__init__(params, fixtures)
        self.workers = params["concurrency"] or self.jobs
        self.pool = ThreadPoolExecutor(max_workers=self.workers)
        barrier = threading.Barrier(self.workers)  # forces every worker thread to exist now
        for f in [self.pool.submit(barrier.wait, 30) for _ in range(self.workers)]:
            f.result()

    def map(self, n: int, jobs: int) -> list[tuple[int, int]]:
        return list(self.pool.map(timed_job, [n] * jobs))

    def close(self) -> None:
        self.pool.shutdown(wait=True)


def _wait(barrier) -> None:
    barrier.wait(timeout=60)


class Processes(Jobs):
    def __init__(self, params: dict, fixtures: dict) -> None:
        super().__init__(params, fixtures)
        self.workers = params["concurrency"] or os.cpu_count() or 1
        ctx = harness.mp_context(params)
        barrier = ctx.Barrier(self.workers + 1)  # returns once every worker process is up
        self.pool = ctx.Pool(self.workers, initializer=_wait, initargs=(barrier,))
        barrier.wait(timeout=60)

    def map(self, n: int, jobs: int) -> list[tuple[int, int]]:
        return self.pool.map(timed_job, [n] * jobs, chunksize=1)

    def close(self) -> None:
        self.pool.close()
        self.pool.join()


VARIANTS = {"sync": Jobs, "asyncio": Asyncio, "threads": Threads, "multiprocessing": Processes}
