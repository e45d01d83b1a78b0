"""Client of the echo service (the driver's TCP echo server) for asyncio_ops and event_loops."""

from __future__ import annotations

import asyncio

import harness


def echo_addr(services: dict, what: str) -> str:
    """The echo service's host:port, or a usage error saying what needs it."""
    addr = services.get("echo_addr")
    if not addr:
        raise harness.UsageError(f"{what} needs the echo service (echo_addr)")
    return addr


class EchoClient:
    """One stream to the echo service, opened in setup; a round trip: write, drain, readexactly."""

    def __init__(self, addr: str, nbytes: int) -> None:
        self.host, port = addr.rsplit(":", 1)
        self.port, self.payload = int(port), b"x" * nbytes
        self.reader = self.writer = None

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        await self.round_trips(10)  # the first round trips pay for buffers, outside the timing

    async def round_trips(self, n: int) -> int:
        """`n` round trips, one after another; the ns they took."""
        write, drain, read = self.writer.write, self.writer.drain, self.reader.readexactly
        payload, size, it = self.payload, len(self.payload), range(n)
        t0 = harness.now()
        for _ in it:
            write(payload)
            await drain()
            if len(await read(size)) != size:
                raise RuntimeError("short echo")
        return harness.now() - t0

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            await self.writer.wait_closed()
