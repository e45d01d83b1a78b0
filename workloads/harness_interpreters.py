"""The `InterpreterPool` model: a scenario's operations on subinterpreters (PEP 734, Python 3.14's
`concurrent.interpreters`), each with a GIL of its own, in one process.

Each of `workers` threads owns one interpreter, made in setup: the interpreter gets the main
one's `sys.path` (a new interpreter computes its own, without the script's folder), then builds
the scenario and opens its share, as a `ProcessPool` worker process does. Calls cross by pickle:
the function by reference (its module imported in the interpreter), the arguments and the result
by value. A closed-loop run gives each interpreter its share of the operations up front (there is
no shared counter across interpreters); open loop hands each scheduled operation to the next free
thread, which calls its interpreter.

Set-up measures what the model costs beside the work: how long making one interpreter ready took
(`worker_start_ms`, median over the pool) and the round trip of a call that does nothing
(`call_overhead_us`, median of `CALL_SAMPLES`), both outside the timed run; the scenario's
`extra` reads them from the model.

Imports run one way: this module builds on `harness_models` and `harness_outcome`; `harness`
re-exports `InterpreterPool`.
"""

from __future__ import annotations

import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from harness_models import Model, drain, now, shares
from harness_outcome import Recorder, Skip, describe_error

CALL_SAMPLES = 200  # no-op calls timed in setup for `call_overhead_us`

_in_interpreter: dict = {}  # inside a subinterpreter: its scenario


def interpreters_module():
    """`concurrent.interpreters`, or a Skip naming the version that has it."""
    try:
        from concurrent import interpreters
    except ImportError:
        version = ".".join(map(str, sys.version_info[:3]))
        raise Skip(
            f"subinterpreters need Python 3.14 or later (concurrent.interpreters, PEP 734); "
            f"this is Python {version}",
            kind="unsupported",
        ) from None
    return interpreters


class InterpreterPool(Model):
    """`workers` subinterpreters, one per thread, each with the scenario set up for its share."""

    def __init__(self, scenario, params: dict, services: dict, workers=None):
        interpreters = interpreters_module()
        super().__init__(scenario, params, services, workers)
        self.interps, start_ms = [], []
        path = f"import sys; sys.path[:] = {list(sys.path)!r}"
        try:
            for part in range(self.workers):
                t0 = now()
                interp = interpreters.create()
                self.interps.append(interp)
                interp.exec(path)
                interp.call(_start_interpreter, scenario, params, services, part, self.workers)
                start_ms.append((now() - t0) / 1e6)
        except interpreters.ExecutionFailed as exc:
            self.close()
            raise RuntimeError(f"interpreter setup failed: {describe_error(exc)}") from None
        self.worker_start_ms = _median(start_ms)
        self.call_overhead_us = _call_overhead_us(self.interps[0])
        free = list(self.interps)
        lock, self.local = threading.Lock(), threading.local()

        def bind() -> None:
            with lock:
                self.local.interp = free.pop()

        self.pool = ThreadPoolExecutor(self.workers, initializer=bind)
        # Every thread started and bound now, not on the first timed submit.
        barrier = threading.Barrier(self.workers)
        for f in [self.pool.submit(barrier.wait) for _ in range(self.workers)]:
            f.result()

    def call(self, fn, *args) -> Any:
        """`fn(*args)` in the calling thread's interpreter."""
        return self.local.interp.call(fn, *args)

    def run_closed_loop(self) -> Recorder:
        futures, first = [], 0
        for n in shares(self.scenario.count, self.workers):
            if n:
                futures.append(self.pool.submit(self.call, _drain_in_interpreter, first, n))
            first += n
        return Recorder.merged(f.result() for f in futures)

    def run_open_loop(self, schedule) -> tuple[list, int]:
        import openloop

        def submit(index: int, intended_ns: int, deadline_ns: int):
            args = (openloop.timed, _op_in_interpreter, index, intended_ns, deadline_ns)
            return self.pool.submit(self.call, *args)

        return openloop.run_pool(schedule, submit, lambda future: future.result())

    def close(self) -> None:
        pool = getattr(self, "pool", None)
        if pool is not None:
            pool.shutdown(wait=True)
        for interp in self.interps:
            try:
                interp.call(_close_in_interpreter)
            finally:
                interp.close()
        self.interps = []


def _call_overhead_us(interp) -> float:
    """Median round trip of a call that does nothing, µs: what crossing costs per call."""
    times = []
    for _ in range(CALL_SAMPLES):
        t0 = now()
        interp.call(_noop)
        times.append((now() - t0) / 1e3)
    return _median(times)


def _median(values: list[float]) -> float:
    """The middle value (statistics' import cost stays out of every worker)."""
    v = sorted(values)
    return (v[(len(v) - 1) // 2] + v[len(v) // 2]) / 2


def _noop() -> None:
    pass


def _start_interpreter(scenario, params: dict, services: dict, part: int, parts: int) -> None:
    """Inside a new interpreter: the scenario, its share opened, its one worker ready."""
    s = scenario(params, services)
    s.open(part, parts)
    s.open_worker()
    _in_interpreter["scenario"] = s


def _drain_in_interpreter(first: int, n: int) -> Recorder:
    """Inside an interpreter: operations `first` to `first + n - 1`, one after another."""
    s, indices = _in_interpreter["scenario"], iter(range(first, first + n))
    return drain(s.op, lambda: next(indices, None), s.self_timed)


def _op_in_interpreter(index: int) -> Any:
    """Inside an interpreter: one open-loop operation (openloop.timed reads the clocks)."""
    s = _in_interpreter["scenario"]
    return s.op(index)[1] if s.self_timed else s.op(index)


def _close_in_interpreter() -> None:
    s = _in_interpreter.pop("scenario", None)
    if s is not None:
        s.close()
