"""Event-loop comparison: the same three workloads on asyncio's loop, uvloop or rsloop (`loop`).

Variants (each run is one batch in a fresh process, cyclic GC disabled during the timed part):
- `callbacks`: `callbacks` `call_soon` callbacks scheduled as one batch, then run to the last;
- `sleep0_tasks`: `tasks` tasks that each await `asyncio.sleep(0)`, created and gathered in
  batches of `batch`;
- `tcp_echo`: `round_trips` sequential round trips of `payload_bytes` bytes on one stream to the
  Rust echo fixture (write, drain, readexactly), the connection opened in setup.

The loop is made in setup (`harness.new_event_loop`; a loop that is not installed makes the cell
*skipped*, with the reason). `extra["elapsed_ms"]` is the timed part measured inside; the driver
measures wall time, CPU and peak RSS from outside.
"""

from __future__ import annotations

import asyncio
import gc
import os
import time

import harness

PARAMS = {
    "loop": "asyncio",
    "callbacks": 1_000_000,
    "tasks": 200_000,
    "batch": 5_000,
    "round_trips": 20_000,
    "payload_bytes": 1024,
}


class LoopWorkload(harness.Workload):
    """A loop made in setup; `main()` is the timed coroutine, run with cyclic GC off."""

    def __init__(self, params: dict, fixtures: dict) -> None:
        self.params = params
        self.loop = harness.new_event_loop(params)

    async def main(self) -> int:
        """The workload; returns the number of operations done."""
        raise NotImplementedError

    def run(self) -> harness.Outcome:
        was_enabled = gc.isenabled()
        gc.collect()
        gc.disable()
        try:
            t0 = time.perf_counter_ns()
            ops = self.loop.run_until_complete(self.main())
            elapsed_ns = time.perf_counter_ns() - t0
        finally:
            if was_enabled:
                gc.enable()
        extra = {
            "kind": "event_loops",
            "loop": self.params["loop"],
            "loop_class": f"{type(self.loop).__module__}.{type(self.loop).__name__}",
            "elapsed_ms": elapsed_ns / 1e6,
            "ns_per_op": elapsed_ns / ops,
            "cpus": sorted(os.sched_getaffinity(0)),
        }
        return harness.Outcome(ops=ops, extra=extra)

    def close(self) -> None:
        self.loop.close()


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
    def __init__(self, params: dict, fixtures: dict) -> None:
        super().__init__(params, fixtures)
        addr = fixtures.get("echo_addr")
        if not addr:
            raise harness.UsageError("tcp_echo needs the echo fixture (echo_addr)")
        self.host, port = addr.rsplit(":", 1)
        self.port, self.payload = int(port), b"x" * int(params["payload_bytes"])
        self.reader, self.writer = self.loop.run_until_complete(self.connect())

    async def connect(self):
        reader, writer = await asyncio.open_connection(self.host, self.port)
        for _ in range(10):  # first round trips pay for buffers, outside the timing
            writer.write(self.payload)
            await writer.drain()
            await reader.readexactly(len(self.payload))
        return reader, writer

    async def main(self) -> int:
        write, drain, read = self.writer.write, self.writer.drain, self.reader.readexactly
        payload, size = self.payload, len(self.payload)
        for _ in range(int(self.params["round_trips"])):
            write(payload)
            await drain()
            if len(await read(size)) != size:
                raise RuntimeError("short echo")
        return int(self.params["round_trips"])

    def close(self) -> None:
        self.writer.close()
        self.loop.run_until_complete(self.writer.wait_closed())
        super().close()


VARIANTS = {"callbacks": Callbacks, "sleep0_tasks": Sleep0Tasks, "tcp_echo": TcpEcho}
