"""Memory scenario: N idle concurrent units (threads, asyncio tasks, processes) on one event.

The driver measures peak RSS from outside against the baseline taken at ready, so setup allocates
nothing per unit: every thread, task, process and barrier is made inside run().
"""

from __future__ import annotations

import asyncio
import threading

import harness

PARAMS = {"units": 1000, "loop": "asyncio", "start_method": None}
MAX_PROCESSES = 100
WAIT_S = 120.0


class Units(harness.Workload):
    def __init__(self, params: dict, fixtures: dict) -> None:
        self.units = params["units"]

    def outcome(self, rec: harness.Recorder) -> harness.Outcome:
        return rec.outcome({"units": self.units}, kind="since-start")


class Threads(Units):
    def run(self) -> harness.Outcome:
        rec, start = harness.Recorder(), harness.Recorder.now()
        started, wake = threading.Barrier(self.units + 1), threading.Event()

        def unit() -> None:
            started.wait(timeout=WAIT_S)
            wake.wait()
            rec.since(start)

        threads = [threading.Thread(target=unit) for _ in range(self.units)]
        for t in threads:
            t.start()
        started.wait(timeout=WAIT_S)
        wake.set()
        for t in threads:
            t.join()
        return self.outcome(rec)


class Asyncio(Units):
    def __init__(self, params: dict, fixtures: dict) -> None:
        super().__init__(params, fixtures)
        self.loop = harness.new_event_loop(params)

    async def main(self, start: int) -> harness.Outcome:
        rec, wake, all_started = harness.Recorder(), asyncio.Event(), asyncio.Event()
        started = 0

        async def unit() -> None:
            nonlocal started
            started += 1
            if started == self.units:
                all_started.set()
            await wake.wait()
            rec.since(start)

        tasks = [asyncio.create_task(unit()) for _ in range(self.units)]
        if tasks:
            await all_started.wait()
        wake.set()
        await asyncio.gather(*tasks)
        return self.outcome(rec)

    def run(self) -> harness.Outcome:
        return self.loop.run_until_complete(self.main(harness.Recorder.now()))

    def close(self) -> None:
        self.loop.close()


def _process_unit(index: int, started, wake, woke) -> None:
    started.wait(timeout=WAIT_S)
    wake.wait()
    woke[index] = harness.Recorder.now()


class Processes(Units):
    def __init__(self, params: dict, fixtures: dict) -> None:
        super().__init__(params, fixtures)
        if not 0 <= self.units <= MAX_PROCESSES:
            raise ValueError(
                f"processes: units={self.units} is not in 0..{MAX_PROCESSES} "
                "(one OS process per unit; use threads or asyncio for more)"
            )
        self.ctx = harness.mp_context(params)

    def run(self) -> harness.Outcome:
        rec, start = harness.Recorder(), harness.Recorder.now()
        ctx = self.ctx
        started, wake = ctx.Barrier(self.units + 1), ctx.Event()
        woke = ctx.Array("q", self.units, lock=False)  # perf_counter_ns is system-wide
        args = (started, wake, woke)
        procs = [ctx.Process(target=_process_unit, args=(i, *args)) for i in range(self.units)]
        for p in procs:
            p.start()
        started.wait(timeout=WAIT_S)  # a unit that died breaks the barrier instead of hanging
        wake.set()
        for i, p in enumerate(procs):
            p.join()
            if p.exitcode == 0:
                rec.add_ns(woke[i] - start)
            else:
                rec.error(f"unit process exited with {p.exitcode}")
        return self.outcome(rec)


VARIANTS = {"threads": Threads, "asyncio": Asyncio, "processes": Processes}
