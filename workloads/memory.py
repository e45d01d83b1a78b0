"""Memory scenario: N idle concurrent units (threads, asyncio tasks, processes, subinterpreters)
on one event.

The driver measures the peak RSS over the baseline at ready, so a unit carries nothing but itself:
setup allocates the bookkeeping (an int64 per unit for its latency, since the start), and nothing
grows while units wait or wake. asyncio units wait on one `Semaphore(0)`, released `WAKE_BATCH` at
a time, as `Event.set()` would queue a wake-up callback (~150 bytes) for all N at once."""

from __future__ import annotations

import asyncio
import contextvars
import os
import threading
from array import array

import harness

PARAMS = {"units": 1000, "loop": "asyncio", "start_method": None}
MAX_PROCESSES = 100
MAX_INTERPRETERS = 100
WAIT_S = 120.0
WAKE_BATCH = 64  # asyncio units released per loop iteration


class Units(harness.Workload):
    def __init__(self, params: dict, services: dict) -> None:
        self.units, self.finished, self.lock = params["units"], 0, threading.Lock()
        self.woke_ns = array("q", bytes(8 * self.units))
        super().__init__(params, services)

    def woke(self, *_) -> None:
        """A unit woke: its latency since the start, in wake-up order."""
        with self.lock:
            self.woke_ns[self.finished] = harness.now() - self.start
            self.finished += 1
        if self.finished == self.units:
            self.all_woke.set()

    def run_units(self, units: list, started, wake) -> None:
        """Threads or processes: started, all waiting, woken, joined."""
        for unit in units:
            unit.start()
        started.wait(timeout=WAIT_S)  # a unit that died breaks the barrier instead of hanging
        wake.set()
        for unit in units:
            unit.join()

    def outcome(self, rec: harness.Recorder | None = None) -> harness.Outcome:
        rec = rec or harness.Recorder(latencies_ns=self.woke_ns)  # in ms after `done`, untimed
        return rec.outcome({"units": self.units}, kind="since-start")


class Threads(Units):
    def run(self) -> harness.Outcome:
        self.start, self.all_woke = harness.now(), threading.Event()
        started, wake, woke = threading.Barrier(self.units + 1), threading.Event(), self.woke

        def unit() -> None:
            started.wait(timeout=WAIT_S)
            wake.wait()
            woke()

        self.run_units([threading.Thread(target=unit) for _ in range(self.units)], started, wake)
        return self.outcome()


class Asyncio(Units, harness.EventLoopWorkload):
    async def main(self) -> harness.Outcome:
        self.start, self.all_woke = harness.now(), asyncio.Event()
        gate, woke, context = asyncio.Semaphore(0), self.woke, contextvars.copy_context()
        # A unit is a task on the gate; its done callback (kept in the task) records its wake-up.
        for _ in range(self.units):
            asyncio.create_task(gate.acquire()).add_done_callback(woke, context=context)
        await asyncio.sleep(0)  # callbacks run in order: every unit has started waiting
        for i in range(self.units):
            gate.release()
            if i % WAKE_BATCH == WAKE_BATCH - 1:
                await asyncio.sleep(0)  # these wake and finish before the next are released
        if self.units:
            await self.all_woke.wait()
        return self.outcome()


def _process_unit(index: int, started, wake, woke) -> None:
    started.wait(timeout=WAIT_S)
    wake.wait()
    woke[index] = harness.now()


class Processes(Units):
    def __init__(self, params: dict, services: dict) -> None:
        super().__init__(params, services)
        if not 0 <= self.units <= MAX_PROCESSES:
            raise ValueError(
                f"processes: units={self.units} is not in 0..{MAX_PROCESSES} "
                "(one OS process per unit; use threads or asyncio for more)"
            )
        self.ctx = harness.mp_context(params)
        self.woke_at = self.ctx.Array("q", self.units, lock=False)  # perf_counter_ns: system-wide

    def run(self) -> harness.Outcome:
        start, ctx, rec = harness.now(), self.ctx, harness.Recorder()
        started, wake = ctx.Barrier(self.units + 1), ctx.Event()
        args = (started, wake, self.woke_at)
        procs = [ctx.Process(target=_process_unit, args=(i, *args)) for i in range(self.units)]
        self.run_units(procs, started, wake)
        for i, p in enumerate(procs):
            if p.exitcode == 0:
                rec.add(self.woke_at[i] - start)
            else:
                rec.error(f"unit process exited with {p.exitcode}")
        return self.outcome(rec)


# What a subinterpreter unit runs: no module of the lab's, only a blocking read, so the unit costs
# one interpreter and its thread. `started` and `wake` are pipe descriptors (shareable ints).
_INTERPRETER_UNIT = "import os\nos.write(started, b'x')\nos.read(wake, 1)\n"


class Interpreters(Units):
    """One subinterpreter per unit (Python 3.14+), each on a thread of its own, blocked reading
    one byte from a pipe (an OS wait, as a thread's `Event.wait` is; `concurrent.interpreters`'
    own queues poll every 10 ms). Woken by N bytes written at once."""

    def __init__(self, params: dict, services: dict) -> None:
        self.interpreters = harness.interpreters_module()  # a Skip before 3.14
        super().__init__(params, services)
        if not 0 <= self.units <= MAX_INTERPRETERS:
            raise ValueError(
                f"interpreters: units={self.units} is not in 0..{MAX_INTERPRETERS} "
                "(one interpreter per unit; use threads or asyncio for more)"
            )

    def run(self) -> harness.Outcome:
        self.start, self.all_woke = harness.now(), threading.Event()
        started_r, started_w = os.pipe()
        wake_r, wake_w = os.pipe()
        interps, rec = [], harness.Recorder()

        def unit(interp) -> None:
            try:
                interp.exec(_INTERPRETER_UNIT)
            except Exception as exc:  # noqa: BLE001 - a unit that failed is an error
                rec.error(exc)
                os.write(started_w, b"!")  # counted as started, so the wait below ends
                return
            self.woke()

        threads = []
        try:
            for _ in range(self.units):
                interp = self.interpreters.create()
                interps.append(interp)
                interp.prepare_main(started=started_w, wake=wake_r)
                threads.append(threading.Thread(target=unit, args=(interp,)))
            for t in threads:
                t.start()
            seen = 0
            while seen < self.units:
                seen += len(os.read(started_r, self.units - seen))
            os.write(wake_w, b"x" * self.units)
            for t in threads:
                t.join()
        finally:
            for interp in interps:
                interp.close()
            for fd in (started_r, started_w, wake_r, wake_w):
                os.close(fd)
        if rec.errors:
            return rec.outcome({"units": self.units}, kind="since-start")
        return self.outcome()


VARIANTS = {
    "threads": Threads,
    "asyncio": Asyncio,
    "processes": Processes,
    "interpreters": Interpreters,
}
