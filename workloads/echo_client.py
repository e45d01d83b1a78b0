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


STREAMS = ("native", "stdlib")


def check_streams(streams: str) -> str:
    """`streams` as given, or a usage error naming the choices."""
    if streams not in STREAMS:
        raise harness.UsageError(f"streams={streams!r}: expected one of {', '.join(STREAMS)}")
    return streams


async def stdlib_open_connection(host: str, port: int) -> tuple:
    """asyncio's own `open_connection`, written out (as in asyncio/streams.py): stdlib streams
    over the loop's `create_connection`, even on a loop that installs native streams."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=2**16, loop=loop)
    protocol = asyncio.StreamReaderProtocol(reader, loop=loop)
    transport, _ = await loop.create_connection(lambda: protocol, host, port)
    return reader, asyncio.StreamWriter(transport, protocol, reader, loop)


async def stdlib_start_server(handler, host: str, port: int) -> asyncio.AbstractServer:
    """asyncio's own `start_server`, written out: stdlib streams over the loop's `create_server`."""
    loop = asyncio.get_running_loop()

    def factory() -> asyncio.StreamReaderProtocol:
        reader = asyncio.StreamReader(limit=2**16, loop=loop)
        return asyncio.StreamReaderProtocol(reader, handler, loop=loop)

    return await loop.create_server(factory, host, port)


def streams_impl(streams: str) -> str:
    """Whose `open_connection` a stream is made by: a loop's native one (rsloop installs its
    own into asyncio) or asyncio's."""
    if streams == "stdlib":
        return f"{__name__}.stdlib_open_connection"
    return f"{asyncio.open_connection.__module__}.{asyncio.open_connection.__qualname__}"


class EchoClient:
    """One stream to the echo service, opened in setup; a round trip: write, drain, readexactly.

    `streams`: `native` opens it with `asyncio.open_connection` as the running loop has it
    (rsloop's native streams on rsloop, asyncio's elsewhere); `stdlib` with asyncio's own
    streams on any loop."""

    def __init__(self, addr: str, nbytes: int, streams: str = "native") -> None:
        self.host, port = addr.rsplit(":", 1)
        self.port, self.payload = int(port), b"x" * nbytes
        self.streams = check_streams(streams)
        self.reader = self.writer = None

    async def open(self) -> None:
        connect = stdlib_open_connection if self.streams == "stdlib" else asyncio.open_connection
        self.reader, self.writer = await connect(self.host, self.port)
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
