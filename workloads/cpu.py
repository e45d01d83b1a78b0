"""CPU-bound scenario: count primes below n, `jobs` times; sync, asyncio, threads, processes,
subinterpreters.

The operation is one job, `count_primes(n)`; every job must find the same number of primes.
`concurrency` 0 means one thread per job, or one process per CPU.
"""

from __future__ import annotations

import os

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


class Jobs(harness.Scenario):
    def __init__(self, params: dict, services: dict) -> None:
        super().__init__(params, services)
        self.n, self.count, self.concurrency = params["n"], params["jobs"], params["concurrency"]

    def op(self, index: int) -> int:
        return count_primes(self.n)

    def extra(self, payloads: list, model: harness.Model) -> dict:
        counts = set(payloads) - {None}
        if len(counts) > 1:
            raise RuntimeError(f"jobs disagree on the prime count: {sorted(counts)}")
        # The jobs of the asyncio variant run one after another in one thread.
        pools = harness.ThreadPool | harness.ProcessPool | harness.InterpreterPool
        workers = model.workers if isinstance(model, pools) else 1
        extra = {"primes": min(counts, default=0), "cpu_count": os.cpu_count(), "workers": workers}
        if isinstance(model, harness.InterpreterPool):
            extra["worker_start_ms"] = model.worker_start_ms
            extra["call_overhead_us"] = model.call_overhead_us
        return extra


VARIANTS = {
    "sync": harness.Sequential.of(Jobs),
    # One coroutine per job, each running its job without yielding, as `gather` would.
    "asyncio": harness.EventLoop.of(Jobs, workers=lambda s: max(1, s.count)),
    "threads": harness.ThreadPool.of(Jobs, workers=lambda s: s.concurrency or s.count),
    "multiprocessing": harness.ProcessPool.of(
        Jobs, workers=lambda s: s.concurrency or os.cpu_count() or 1
    ),
    # One subinterpreter (its own GIL) per CPU, in this process: Python 3.14 and later.
    "interpreters": harness.InterpreterPool.of(
        Jobs, workers=lambda s: s.concurrency or os.cpu_count() or 1
    ),
}
