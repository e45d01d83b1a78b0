"""__NAME__: a workload of your own (written by `asynclab new-scenario __NAME__`; edit it).

One operation, run `operations` times by each of four concurrency models, one variant each:
`sync` (one after another), `threads` (a pool of `concurrency` threads), `asyncio` (at most
`concurrency` coroutines in flight on one event loop) and `multiprocessing` (`concurrency`
worker processes). The lab times the whole batch from outside and every operation from inside.

The operation here stands for a call that waits (`delay_ms`) and then does a little work (a
SHA-256 of `payload_bytes` bytes): replace both with your own. The driver runs this file beside
the lab's harness (`asynclab run --catalogue .../catalogue.toml --scenario __NAME__`).
"""

from __future__ import annotations

import asyncio
import hashlib
import time

import harness

# Every parameter the script reads, with its default: the catalogue's [scenario.params] and
# `--param KEY=VALUE` override them, and a name not listed here is refused.
PARAMS = {
    "operations": 40,
    "delay_ms": 10,
    "payload_bytes": 4096,
    "concurrency": 4,
    "loop": "asyncio",  # the event loop (`--loop`): asyncio, uvloop, ...
    "start_method": None,  # multiprocessing's start method (None: the platform default)
}


def work(payload: bytes) -> str:
    """The work one operation does once its wait is over."""
    return hashlib.sha256(payload).hexdigest()


class Operation(harness.Scenario):
    """What every variant shares. Nothing here is timed until `op`."""

    # --- set-up: untimed, and outside the memory delta -------------------------------------
    def __init__(self, params: dict, services: dict) -> None:
        # Read the parameters; open nothing here (it also runs in every worker process).
        super().__init__(params, services)
        self.count = params["operations"]  # operations in a run
        self.concurrency = params["concurrency"]  # threads, coroutines or processes
        self.delay_s = params["delay_ms"] / 1000
        self.payload = bytes(params["payload_bytes"])

    def open(self, part: int = 0, parts: int = 1) -> None:
        """Open what the operations share (a client, a connection pool), in the process that
        runs them; `services` holds the addresses of the services the catalogue asked for."""

    def open_worker(self) -> None:
        """Make what each worker thread keeps to itself (a session): `self.local.x = ...`."""

    # --- the timed operation: the lab reads the clock around each call ----------------------
    def op(self, index: int) -> str:
        time.sleep(self.delay_s)  # stands for a blocking call: a request, a query
        return work(self.payload)

    # --- after the timed run: what every variant must agree on ------------------------------
    def extra(self, payloads: list, model: harness.Model) -> dict:
        digests = set(payloads) - {None}
        if len(digests) > 1:
            raise RuntimeError(f"operations disagree: {sorted(digests)}")
        return {"digest": min(digests, default="")}


class AsyncOperation(Operation):
    """The same operation for the event loop: it awaits where the others block."""

    async def op(self, index: int) -> str:
        await asyncio.sleep(self.delay_s)  # stands for an awaited call
        return work(self.payload)


# The catalogue's `variants` name these keys, in report order (the first is the baseline).
VARIANTS = {
    "sync": harness.Sequential.of(Operation),
    "threads": harness.ThreadPool.of(Operation),
    "asyncio": harness.EventLoop.of(AsyncOperation),
    "multiprocessing": harness.ProcessPool.of(Operation),
}
