"""Event-loop comparison: the same three workloads on asyncio's loop, uvloop or rsloop (`loop`).

Variants (each run is one batch in a fresh process, cyclic GC disabled during the timed part):
- `callbacks`: `callbacks` `call_soon` callbacks scheduled as one batch, then run to the last;
- `sleep0_tasks`: `tasks` tasks that each await `asyncio.sleep(0)`, created and gathered in
  batches of `batch`;
- `tcp_echo`: `round_trips` sequential round trips of `payload_bytes` bytes on one stream to the
  Rust echo service (write, drain, readexactly), the connection opened in setup. `streams`:
  `native` opens it with `asyncio.open_connection` as the loop has it (rsloop installs its native
  fast streams there, as published; the other loops have none, so they get asyncio's),
  `stdlib` with asyncio's own streams on any loop.

The published comparison (`../shared/reference/published-figures.md`, section 4) shaped two of
these differently; its shapes run beside the lab's so each published ratio is compared like for
like:
- `sleep0_gathered`: the same tasks, but the coroutines are passed to `gather`, which wraps each
  in a task itself (`ensure_future`), as published; `sleep0_tasks` creates them first with
  `create_task`;
- `tcp_echo_inloop`: the same round trips, but to an echo server (`asyncio.start_server`) run by
  the same event loop in the same process, as published: each round trip then runs the loop's
  own server side too, so the loop's share of the work is larger than against the Rust peer,
  whose side runs in another process on its own schedule.

The loop is made in setup (`harness.new_event_loop`; a loop that is not installed makes the cell
*skipped*, with the reason). `extra["elapsed_ms"]` is the timed part measured inside; the driver
measures wall time, CPU and peak RSS from outside.
"""

from __future__ import annotations

import asyncio
import gc

import harness
from echo_client import EchoClient, check_streams, echo_addr, stdlib_start_server, streams_impl

PARAMS = {
    "loop": "asyncio",
    "callbacks": 1_000_000,
    "tasks": 200_000,
    "batch": 5_000,
    "round_trips": 20_000,
    "payload_bytes": 1024,
    "streams": "native",
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


class Sleep0Gathered(LoopWorkload):
    async def main(self) -> int:
        total, batch, done = int(self.params["tasks"]), int(self.params["batch"]), 0
        gather = asyncio.gather
        while done < total:
            size = min(batch, total - done)
            await gather(*[_sleeper() for _ in range(size)])
            done += size
        return done


class TcpEcho(LoopWorkload):
    def __init__(self, params: dict, services: dict) -> None:
        super().__init__(params, services)
        self.streams = check_streams(params.get("streams", "native"))
        self.echo = EchoClient(
            self.echo_server(services), int(params["payload_bytes"]), self.streams
        )
        self.loop.run_until_complete(self.echo.open())

    def echo_server(self, services: dict) -> str:
        """The host:port to echo against: the driver's Rust echo service."""
        return echo_addr(services, "tcp_echo")

    async def main(self) -> int:
        await self.echo.round_trips(int(self.params["round_trips"]))
        return int(self.params["round_trips"])

    def run(self) -> harness.Outcome:
        outcome = super().run()
        outcome.extra["streams"] = streams_impl(self.streams)
        return outcome

    async def aclose(self) -> None:
        await self.echo.close()


async def _echo_back(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """The in-loop echo server's side of one connection: what it reads, it writes back."""
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    finally:
        writer.close()


class TcpEchoInLoop(TcpEcho):
    """Round trips to an echo server on 127.0.0.1:0 served by this same loop (opened in setup)."""

    def echo_server(self, services: dict) -> str:
        start = stdlib_start_server if self.streams == "stdlib" else asyncio.start_server
        serve = start(_echo_back, "127.0.0.1", 0)
        self.server = self.loop.run_until_complete(serve)
        host, port = self.server.sockets[0].getsockname()[:2]
        return f"{host}:{port}"

    async def aclose(self) -> None:
        await super().aclose()
        self.server.close()
        await self.server.wait_closed()


VARIANTS = {
    "callbacks": Callbacks,
    "sleep0_tasks": Sleep0Tasks,
    "sleep0_gathered": Sleep0Gathered,
    "tcp_echo": TcpEcho,
    "tcp_echo_inloop": TcpEchoInLoop,
}
