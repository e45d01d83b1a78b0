"""The concurrency models a workload script runs its operation on, and what they are made of.

A script defines a `Scenario`, its set-up and its one operation, and picks a model per variant,
as pyperf's `bench_func` / `bench_async_func` let a benchmark define only the function (see
`harness` for an example). The models, each a `Workload`: `Sequential` (one at a time),
`ThreadPool` (`workers` started threads), `EventLoop` (`workers` coroutines on one loop, so at
most that many operations in flight) and `ProcessPool` (worker processes, each with its share of
the threads). In a closed-loop run every worker pulls the next operation index from one shared
counter until `count` are done; in open loop (`rate_per_s` > 0, workloads/openloop.py) the
operations follow a fixed schedule. Scripts whose timed part is not N operations (a study, a
calibrated timing) subclass `EventLoopWorkload` or `Workload` directly.

Imports run one way: this module builds on `harness_outcome` (and on `openloop`, imported where
an open-loop schedule is used); `harness`, the protocol, builds on this one and re-exports its
public names, which scripts reach as `harness.X`.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import inspect
import multiprocessing
import multiprocessing.util
import os
import platform
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from harness_outcome import Outcome, Recorder, Skip, describe_error

now = time.perf_counter_ns


class Workload:
    """What a script's setup returns: `run()` is timed, `close()` is the untimed teardown."""

    def __init__(self, params: dict | None = None, services: dict | None = None) -> None:
        self.params = params

    def run(self) -> Outcome:
        raise NotImplementedError

    def close(self) -> None:
        pass


# --- what the models are made of -----------------------------------------------------------


# Optional event loops: module name and how to get it when it is not installed.
OPTIONAL_LOOPS = {
    "uvloop": "it is pinned in workloads/requirements; rebuild the environment with "
    "`asynclab envs --python X.Y` (or `make envs`)",
    "rsloop": "it is an opt-in extra with no wheels for this platform; `make rsloop` builds it "
    "from source into the environments (needs cargo; 2-4 minutes per interpreter)",
    "zuvloop": "it ships wheels for CPython 3.14 only and cannot be installed on this interpreter",
}


def new_event_loop(params: dict) -> asyncio.AbstractEventLoop:
    """A fresh event loop of the kind `params["loop"]` names: `asyncio` or an optional loop
    (`uvloop`, `rsloop`, `zuvloop`); raises `Skip` when that loop is not installed here."""
    kind = params.get("loop", "asyncio")
    if kind == "asyncio":
        loop = asyncio.new_event_loop()
    elif kind in OPTIONAL_LOOPS:
        try:
            module = importlib.import_module(kind)
        except ImportError as exc:
            raise Skip(
                f"loop {kind} is not installed in this environment (Python "
                f"{platform.python_version()}, {sys.executable}): {OPTIONAL_LOOPS[kind]} ({exc})",
                kind="missing_package",
            ) from exc
        loop = module.new_event_loop()
    else:
        known = ", ".join(["asyncio", *OPTIONAL_LOOPS])
        raise ValueError(f"unknown loop {kind!r}; known: {known}")
    asyncio.set_event_loop(loop)
    loop.run_until_complete(asyncio.sleep(0))  # first-iteration costs are paid here, untimed
    return loop


def loop_facts(loop: asyncio.AbstractEventLoop, params: dict) -> dict:
    """`extra` keys of the event-loop studies: the loop asked for, its class, the usable CPUs."""
    return {
        "loop": params.get("loop", "asyncio"),
        "loop_class": f"{type(loop).__module__}.{type(loop).__name__}",
        "cpus": sorted(os.sched_getaffinity(0)),
    }


class gc_disabled:  # noqa: N801 - used like contextlib's lower-case helpers
    """Cyclic GC off inside the block (restored to its previous state after)."""

    def __enter__(self) -> None:
        self.was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc) -> None:
        if self.was_enabled:
            gc.enable()


def mp_context(params: dict):
    """The multiprocessing context for `params["start_method"]` (None: the platform default)."""
    return multiprocessing.get_context(params.get("start_method") or None)


def shares(total: int, parts: int) -> list[int]:
    """`total` split into `parts` near-equal non-negative integers (larger ones first)."""
    base, rest = divmod(total, parts)
    return [base + (1 if k < rest else 0) for k in range(parts)]


def started_threads(workers: int, prepare: Callable[[], None] | None = None) -> ThreadPoolExecutor:
    """A ThreadPoolExecutor whose `workers` threads exist now (not on first use, timed), each
    having run `prepare()` once; a `prepare` that fails in one thread fails them all at once."""
    pool = ThreadPoolExecutor(max_workers=workers)
    barrier = threading.Barrier(workers)  # holds each thread until all exist: one call per thread

    def start() -> None:
        try:
            if prepare is not None:
                prepare()
        except BaseException:
            barrier.abort()
            raise
        barrier.wait(timeout=60)

    futures = [pool.submit(start) for _ in range(workers)]
    failures = [exc for exc in (f.exception() for f in futures) if exc is not None]
    if failures:
        pool.shutdown(wait=True)
        broken = threading.BrokenBarrierError
        raise next((e for e in failures if not isinstance(e, broken)), failures[0])
    return pool


class Counter:
    """Hands out the operation indices 0..total-1 once each, to whichever worker asks first."""

    def __init__(self, total: int) -> None:
        self.total, self.next = total, 0
        self._lock = threading.Lock()  # needed by threads (and free-threaded builds); cheap

    def take(self) -> int | None:
        with self._lock:
            index = self.next
            if index >= self.total:
                return None
            self.next = index + 1
            return index


def drain(op: Callable, take: Callable[[], int | None], self_timed: bool) -> Recorder:
    """One worker of a closed-loop run: `op` on each index `take` hands it, until none is left."""
    rec = Recorder()
    while (index := take()) is not None:
        try:
            if self_timed:
                elapsed, payload = op(index)
            else:
                start = now()
                payload = op(index)
                elapsed = now() - start
        except Exception as exc:  # noqa: BLE001 - a failed operation is an error, not a crash
            rec.error(exc)
            continue
        rec.add(elapsed, payload)
    return rec


async def drain_async(op: Callable, take: Callable[[], int | None], self_timed: bool) -> Recorder:
    """`drain` as a coroutine: `op` is a coroutine function, or a plain one called in the task."""
    rec, awaits = Recorder(), inspect.iscoroutinefunction(op)
    while (index := take()) is not None:
        try:
            if self_timed:
                elapsed, payload = await op(index)
            else:
                start = now()
                payload = (await op(index)) if awaits else op(index)
                elapsed = now() - start
        except Exception as exc:  # noqa: BLE001
            rec.error(exc)
            continue
        rec.add(elapsed, payload)
    return rec


def payload_only(op: Callable) -> Callable:
    """A self-timed `op` reduced to its payload, for open loop (which reads its own clocks)."""
    if inspect.iscoroutinefunction(op):

        async def call(index: int) -> Any:
            return (await op(index))[1]

        return call
    return lambda index: op(index)[1]


# --- the scenario and the models that run it --------------------------------------------------


class Scenario:
    """A scenario's set-up and its one operation, which a model runs `count` times (closed loop)
    or on `schedule` (open loop, when the params ask for it: `rate_per_s` > 0).

    `__init__(params, services)` reads the parameters and opens nothing: under `ProcessPool` it
    also runs in every worker process. `open(part, parts)` opens what the operations share
    (connections, a client) in the process that runs them; under `ProcessPool` that is process
    `part` of `parts`, which opens its share. `open_worker()` makes what each worker thread keeps
    to itself. `op(index)` is one operation (under `EventLoop`, usually a coroutine function):
    it returns a payload for `extra` or raises, which counts an error (`Failed` keeps a payload).
    The model reads the clock around each call, except for a `self_timed` scenario, whose op
    returns `(elapsed_ns, payload)` so that a wait before its own clock starts (borrowing a
    connection) is not charged to it. Under `EventLoop`, `open`, `op` and `close` may be
    coroutine functions; every hook runs untimed but `begin`, `op`, `extra` and `outcome`.
    """

    count = 0  # operations in a closed-loop run
    concurrency = 1  # workers a model starts unless the variant says otherwise
    self_timed = False

    def __init__(self, params: dict, services: dict) -> None:
        # openloop is imported where used, never at the top of this module: a script that does
        # not use it must not load it (its compile garbage would lower the memory scenario's
        # figures). It needs only harness_outcome, so the import runs one way.
        import openloop

        self.params = params
        self.schedule = openloop.schedule(params)
        self.local = threading.local()  # for open_worker's per-thread state

    def open(self, part: int = 0, parts: int = 1) -> Any:
        pass

    def open_worker(self) -> None:
        pass

    def begin(self) -> None:
        """Called at the start of the timed run, before the first operation."""

    def op(self, index: int) -> Any:
        raise NotImplementedError

    def extra(self, payloads: list, model: Model) -> dict:
        """The run's `extra` from the payloads of the operations attempted."""
        return {}

    def outcome(self, rec: Recorder, model: Model) -> Outcome:
        """A closed-loop run's Outcome."""
        return rec.outcome(self.extra(rec.payloads, model))

    def close(self) -> Any:
        pass


class Model(Workload):
    """Runs a Scenario (made in setup) with `workers` working at once: `workers(scenario)` when
    the variant passes it, else the scenario's `concurrency`."""

    def __init__(self, scenario: type[Scenario], params: dict, services: dict, workers=None):
        self.scenario = scenario(params, services)
        self.workers = int(workers(self.scenario) if workers else self.scenario.concurrency)
        if self.workers < 1:
            raise ValueError(f"{type(self).__name__} needs at least one worker, got {self.workers}")

    @classmethod
    def of(cls, scenario: type[Scenario], **sizes) -> Callable[[dict, dict], Model]:
        """The setup function of a variant that runs `scenario` on this model."""
        return lambda params, services: cls(scenario, params, services, **sizes)

    def run(self) -> Outcome:
        s = self.scenario
        s.begin()
        if s.schedule is None:
            return s.outcome(self.run_closed_loop(), self)
        import openloop

        samples, t0 = self.run_open_loop(s.schedule)
        payloads = [x.payload for x in samples if x.sent_ns is not None]
        return openloop.outcome(s.schedule, samples, t0, s.extra(payloads, self))

    def run_closed_loop(self) -> Recorder:
        raise NotImplementedError

    def run_open_loop(self, schedule) -> tuple[list, int]:
        """(samples, t0) of an open-loop run (workloads/openloop.py)."""
        raise NotImplementedError

    def payload_op(self) -> Callable:
        op = self.scenario.op
        return payload_only(op) if self.scenario.self_timed else op


class Sequential(Model):
    """One operation at a time in the calling thread (sync code)."""

    def __init__(self, scenario: type[Scenario], params: dict, services: dict):
        super().__init__(scenario, params, services, workers=lambda _: 1)
        self.scenario.open()
        self.scenario.open_worker()

    def run_closed_loop(self) -> Recorder:
        s = self.scenario
        return drain(s.op, Counter(s.count).take, s.self_timed)

    def run_open_loop(self, schedule) -> tuple[list, int]:
        import openloop

        return openloop.run_serial(schedule, self.payload_op())

    def close(self) -> None:
        self.scenario.close()


class ThreadPool(Model):
    """`workers` threads, started (and through `open_worker`) in setup."""

    def __init__(self, scenario: type[Scenario], params: dict, services: dict, workers=None):
        super().__init__(scenario, params, services, workers)
        self.scenario.open()
        self.pool = started_threads(self.workers, self.scenario.open_worker)

    def run_closed_loop(self) -> Recorder:
        s = self.scenario
        args = (s.op, Counter(s.count).take, s.self_timed)
        futures = [self.pool.submit(drain, *args) for _ in range(min(self.workers, s.count))]
        return Recorder.merged(f.result() for f in futures)

    def run_open_loop(self, schedule) -> tuple[list, int]:
        import openloop

        op = self.payload_op()

        def submit(index: int, intended_ns: int, deadline_ns: int):
            return self.pool.submit(openloop.timed, op, index, intended_ns, deadline_ns)

        return openloop.run_pool(schedule, submit, lambda future: future.result())

    def close(self) -> None:
        self.pool.shutdown(wait=True)
        self.scenario.close()


class EventLoopWorkload(Workload):
    """A workload whose timed part is one coroutine, `main()`, on an event loop made in setup
    (`new_event_loop`, so the `loop` parameter picks it); `aclose()` is its teardown on the loop."""

    def __init__(self, params: dict, services: dict) -> None:
        super().__init__(params, services)
        self.loop = new_event_loop(params)

    async def main(self) -> Outcome:
        raise NotImplementedError

    def run(self) -> Outcome:
        return self.loop.run_until_complete(self.main())

    async def aclose(self) -> None:
        pass

    def close(self) -> None:
        try:
            self.loop.run_until_complete(self.aclose())
        finally:
            self.loop.close()


async def _awaited(value: Any) -> Any:
    return (await value) if inspect.isawaitable(value) else value


class EventLoop(Model, EventLoopWorkload):
    """`workers` coroutines on one event loop made in setup: at most `workers` operations in
    flight. `open` runs on the loop in setup, `close` in teardown."""

    def __init__(self, scenario: type[Scenario], params: dict, services: dict, workers=None):
        EventLoopWorkload.__init__(self, params, services)
        Model.__init__(self, scenario, params, services, workers)
        self.loop.run_until_complete(_awaited(self.scenario.open()))

    def run_closed_loop(self) -> Recorder:
        return self.loop.run_until_complete(self.drain_all())

    async def drain_all(self) -> Recorder:
        s = self.scenario
        args = (s.op, Counter(s.count).take, s.self_timed)
        parts = [drain_async(*args) for _ in range(min(self.workers, s.count))]
        return Recorder.merged(await asyncio.gather(*parts))

    def run_open_loop(self, schedule) -> tuple[list, int]:
        import openloop

        return self.loop.run_until_complete(
            openloop.run_async(schedule, self.workers, self.payload_op())
        )

    async def aclose(self) -> None:
        await _awaited(self.scenario.close())


class ProcessPool(Model):
    """`processes` worker processes (default: one per worker), started and through their set-up
    in setup. Process k runs `open(k, processes)` and its share of the `workers` threads (each
    through `open_worker`); in a closed-loop run they all pull from one shared counter."""

    def __init__(self, scenario, params: dict, services: dict, workers=None, processes=None):
        super().__init__(scenario, params, services, workers)
        self.processes = int(processes(self.scenario) if processes else self.workers)
        ctx = mp_context(params)
        self.counter, failures = ctx.Value("q", 0), ctx.SimpleQueue()
        barrier = ctx.Barrier(self.processes + 1)  # passed once every process is set up
        sizes = (self.workers, self.processes, ctx.Value("i", 0))
        initargs = (scenario, params, services, sizes, self.counter, barrier, failures)
        self.pool = ctx.Pool(self.processes, initializer=_start_process, initargs=initargs)
        try:
            barrier.wait(timeout=60)
        except threading.BrokenBarrierError:
            self.pool.terminate()
            why = failures.get() if not failures.empty() else "timed out after 60 s"
            raise RuntimeError(f"worker process setup failed: {why}") from None

    def run_closed_loop(self) -> Recorder:
        with self.counter.get_lock():
            self.counter.value = 0
        totals = [self.scenario.count] * self.processes
        return Recorder.merged(self.pool.map(_drain_in_process, totals, chunksize=1))

    def run_open_loop(self, schedule) -> tuple[list, int]:
        import openloop

        def submit(index: int, intended_ns: int, deadline_ns: int):
            args = (_op_in_process, index, intended_ns, deadline_ns)
            return self.pool.apply_async(openloop.timed, args)

        return openloop.run_pool(schedule, submit, lambda result: result.get())

    def close(self) -> None:
        self.pool.close()
        self.pool.join()


_in_process: dict = {}  # a ProcessPool worker's scenario, threads and the shared counter


def _start_process(scenario, params, services, sizes, counter, barrier, failures) -> None:
    """ProcessPool's initializer: the scenario, its share of resources and threads, set up."""
    workers, processes, parts_taken = sizes
    try:
        with parts_taken.get_lock():
            part, parts_taken.value = parts_taken.value, parts_taken.value + 1
        s = scenario(params, services)
        s.open(part, processes)
        threads = shares(workers, processes)[part]
        pool = started_threads(threads, s.open_worker) if threads > 1 else None
        if pool is None or s.schedule is not None:  # open loop runs in the main thread
            s.open_worker()
        multiprocessing.util.Finalize(None, s.close, exitpriority=10)  # on the worker's exit
        _in_process.update(scenario=s, pool=pool, threads=threads, counter=counter)
    except BaseException as exc:
        failures.put(describe_error(exc))
        barrier.abort()
        raise
    barrier.wait(timeout=60)


def _drain_in_process(total: int) -> Recorder:
    """This process's part of a closed-loop run: its threads drain the shared counter."""
    s, pool, counter = _in_process["scenario"], _in_process["pool"], _in_process["counter"]

    def take() -> int | None:
        with counter.get_lock():
            index = counter.value
            if index >= total:
                return None
            counter.value = index + 1
            return index

    if pool is None:
        return drain(s.op, take, s.self_timed)
    futures = [pool.submit(drain, s.op, take, s.self_timed) for _ in range(_in_process["threads"])]
    return Recorder.merged(f.result() for f in futures)


def _op_in_process(index: int) -> Any:
    """One open-loop operation in a ProcessPool worker (openloop.timed reads the clocks)."""
    s = _in_process["scenario"]
    return s.op(index)[1] if s.self_timed else s.op(index)
