"""Event-loop comparison: the same three workloads on asyncio's loop, uvloop or rsloop (`loop`).

Variants (each run is one batch in a fresh process, cyclic GC disabled during the timed part):
- `callbacks`: `callbacks` `call_soon` callbacks scheduled as one batch, then run to the last;
- `sleep0_tasks`: `tasks` tasks that each await `asyncio.sleep(0)`, created and gathered in
  batches of `batch`;
- `tcp_echo`: `round_trips` sequential round trips of `payload_bytes` bytes on one stream to the
  Rust echo service (write, drain, readexactly), the connection opened in setup.

The loop is made in setup (`harness.new_event_loop`; a loop that is not installed makes the cell
*skipped*, with the reason). `extra["elapsed_ms"]` is the timed part measured inside; the driver
measures wall time, CPU and peak RSS from outside.
"""

from __future__ import annotations

import asyncio
import gc

import harness
from echo_client import EchoClient, echo_addr

PARAMS = {
    "loop": "asyncio",
    "callbacks": 1_000_000,
    "tasks": 200_000,
    "batch": 5_000,
    "round_trips": 20_000,
    "payload_bytes": 1024,
}


class LoopWorkload(harness.EventLoopWorkload):
    """`main()` is the timed coroutine, run with cyclic GC off; it returns its operation count."""

    def run(self) -> harness.Outcome:
        gc.collect()
        with harness.gc_disabled():
            t0 = harness.now()
            ops = self.loop.run_until_complete(self.main())
            elapsed_ns = harness.now() - t0
        extra = {
            "kind": "event_loops",
            **harness.loop_facts(self.loop, self.params),
            "elapsed_ms": elapsed_ns / 1e6,
            "ns_per_op": elapsed_ns / ops,
        }
        return harness.Outcome(ops=ops, extra=extra)


class Callbacks(LoopWorkload):
    async def main(self) -> int:
        n, loop = int(self.params["callbacks"]), self.loop
        done = loop.create_future()
        count = 0

        def callback() -> None:
            nonlocal count
            count += 1
            if count == n:
                done.set_result(None)

        call_soon = loop.call_soon
        for _ in range(n):
            call_soon(callback)
        await done
        return count


async def _sleeper() -> None:
    await asyncio.sleep(0)


class Sleep0Tasks(LoopWorkload):
    async def main(self) -> int:
        total, batch = int(self.params["tasks"]), int(self.params["batch"])
        create, done = self.loop.create_task, 0
        while done < total:
            size = min(batch, total - done)
            await asyncio.gather(*[create(_sleeper()) for _ in range(size)])
            done += size
        return done


class TcpEcho(LoopWorkload):
    def __init__(self, params: dict, services: dict) -> None:
        super().__init__(params, services)
        addr = echo_addr(services, "tcp_echo")
        self.echo = EchoClient(addr, int(params["payload_bytes"]))
        self.loop.run_until_complete(self.echo.open())

    async def main(self) -> int:
        await self.echo.round_trips(int(self.params["round_trips"]))
        return int(self.params["round_trips"])

    async def aclose(self) -> None:
        await self.echo.close()


VARIANTS = {"callbacks": Callbacks, "sleep0_tasks": Sleep0Tasks, "tcp_echo": TcpEcho}
