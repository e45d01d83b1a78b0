"""Per-operation cost of asyncio's own machinery, measured so that the figures can be trusted.

Variant `ops` times, per operation: a plain function call, awaiting a coroutine,
`await asyncio.sleep(0)`, `create_task` + await, `gather` per coroutine (over `gather_small` and
`gather_large` coroutines), an awaited `Queue` put/get pair, an uncontended `Lock` acquire/release
(`async with`) and a TCP echo round trip over loopback against the Rust echo service (write,
drain, readexactly on one stream opened in setup). Only APIs that exist on Python 3.10.

Method (the lessons of pyperf): the event loop and the connection are made in setup; every op's
iteration count is calibrated in setup (untimed) so one timed value lasts at least `min_time_ms`;
each timed value is measured inside the loop with `perf_counter_ns` around a plain `for` loop (so
every figure includes one loop step, like pyperf's and timeit's); the ops are measured interleaved
(op1 … opN, repeated `repetitions` times) with cyclic GC disabled and a `gc.collect()` (untimed)
before each value. Per op: median, mean and standard deviation over the repetitions.

Two checks flag a figure that still times set-up:
- doubling: every value is also taken with twice the iterations; the per-op figures (the fastest
  of the repetitions, since noise on a busy machine only adds time) must agree within
  `doubling_tolerance`, else the op is still timing per-value set-up;
- same work: a per-*call* set-up cost (a loop created for every call) grows with the iterations,
  so doubling cannot see it. An op that repeats the work of another op but adds set-up names that
  op in `same_work_as`; its figure may exceed it by at most `same_work_tolerance`. The deliberately
  mis-timed `asyncio_run_per_call` (`include_mistimed = true`: `asyncio.run()` around one
  create_task + await, so the loop is created inside the timed region) is caught this way.

Variant `pyperf` runs `pyperf_check.py` (pyperf's `bench_async_func`) for create_task + await and
sleep(0) in a subprocess and reports pyperf's figures for the report to put beside the lab's.
"""

from __future__ import annotations

import asyncio
import gc
import math
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import harness
from echo_client import EchoClient, echo_addr

PARAMS = {
    "loop": "asyncio",
    "ops": "all",
    "min_time_ms": 100.0,
    "repetitions": 5,
    "gather_small": 100,
    "gather_large": 100000,
    "echo_bytes": 64,
    "include_mistimed": False,
    "doubling_tolerance": 0.05,
    "same_work_tolerance": 0.25,
    "pyperf_processes": 10,
    "pyperf_values": 3,
    "timeout_s": 600.0,
}

perf_ns = time.perf_counter_ns


def _noop() -> None:
    return None


async def _anoop() -> None:
    return None


# --- timers: n iterations -> elapsed ns, measured inside (set-up before t0 is untimed) ----------


def time_plain_call(n: int) -> int:
    f, it = _noop, range(n)
    t0 = perf_ns()
    for _ in it:
        f()
    return perf_ns() - t0


async def time_await_coroutine(n: int) -> int:
    f, it = _anoop, range(n)
    t0 = perf_ns()
    for _ in it:
        await f()
    return perf_ns() - t0


async def time_sleep0(n: int) -> int:
    sleep, it = asyncio.sleep, range(n)
    t0 = perf_ns()
    for _ in it:
        await sleep(0)
    return perf_ns() - t0


async def time_create_task_await(n: int) -> int:
    create, f, it = asyncio.create_task, _anoop, range(n)
    t0 = perf_ns()
    for _ in it:
        await create(f())
    return perf_ns() - t0


def gather_timer(k: int) -> Callable:
    """A timer for `await gather(*k coroutines)`; per coroutine = elapsed / (n * k)."""

    async def time_gather(n: int) -> int:
        gather, f, it, inner = asyncio.gather, _anoop, range(n), range(k)
        t0 = perf_ns()
        for _ in it:
            await gather(*[f() for _ in inner])
        return perf_ns() - t0

    return time_gather


async def time_queue_put_get(n: int) -> int:
    q = asyncio.Queue()
    put, get, it = q.put, q.get, range(n)
    t0 = perf_ns()
    for _ in it:
        await put(None)
        await get()
    return perf_ns() - t0


async def time_lock(n: int) -> int:
    lock, it = asyncio.Lock(), range(n)
    t0 = perf_ns()
    for _ in it:
        async with lock:
            pass
    return perf_ns() - t0


async def _task_once() -> None:
    await asyncio.create_task(_anoop())


def time_asyncio_run_per_call(n: int) -> int:
    """DELIBERATELY MIS-TIMED: a fresh event loop per call, created inside the timed region."""
    run, f, it = asyncio.run, _task_once, range(n)
    t0 = perf_ns()
    for _ in it:
        run(f())
    return perf_ns() - t0


# --- the method: calibration, interleaved repetitions, checks ------------------------------------


@dataclass
class Op:
    """One timed operation."""

    name: str
    timer: Callable[[int], int]  # n iterations -> elapsed ns
    per_iteration: int = 1  # operations per iteration (gather: coroutines per gather)
    same_work_as: str | None = None  # op doing the same work with set-up outside the timing
    iterations: int = 0  # calibrated count for one timed value


def timed(op: Op, n: int) -> int:
    """One timed value of `n` iterations; garbage collected first (untimed)."""
    gc.collect()
    return op.timer(n)


def calibrate(op: Op, min_ns: float) -> int:
    """Iterations for one value of at least `min_ns` (untimed): grow until a value reaches it,
    then scale to aim 10% above (`measure` re-takes a value that still comes out short)."""
    n = 1
    while True:
        ns = timed(op, n)
        if ns >= min_ns:
            return max(1, math.ceil(n * 1.1 * min_ns / ns))
        n = math.ceil(n * (10.0 if ns <= 0 else min(10.0, max(2.0, 1.3 * min_ns / ns))))


def measure(ops: list[Op], repetitions: int, min_ns: float) -> dict[str, dict[str, list[float]]]:
    """Per op, per-op ns of every repetition with 1x and 2x the iterations, interleaved (op1 …
    opN, repeated). Every kept value lasts at least `min_ns`: when the calibrated count comes out
    short (the machine got faster than at calibration), the count is raised and the pair
    re-taken (`retaken`)."""
    out = {op.name: {"single": [], "double": [], "single_ms": [], "retaken": 0} for op in ops}
    for rep in range(repetitions):
        for op in ops:
            rec = out[op.name]
            while True:
                values = {}
                for mult in (1, 2) if rep % 2 == 0 else (2, 1):
                    values[mult] = timed(op, op.iterations * mult)
                if values[1] >= min_ns:
                    break
                op.iterations = max(
                    op.iterations + 1, math.ceil(op.iterations * 1.1 * min_ns / max(values[1], 1))
                )
                rec["retaken"] += 1
            n, per = op.iterations, op.per_iteration
            rec["single"].append(values[1] / (n * per))
            rec["double"].append(values[2] / (2 * n * per))
            rec["single_ms"].append(values[1] / 1e6)
    return out


def summarize(
    ops: list[Op],
    samples: dict[str, dict[str, list[float]]],
    doubling_tolerance: float,
    same_work_tolerance: float,
) -> dict[str, dict]:
    """The `extra["ops"]` table: statistics, ratios and the two set-up checks per op."""
    table: dict[str, dict] = {}
    for op in ops:
        s = samples[op.name]
        median = statistics.median(s["single"])
        # Noise on a busy machine only adds time, so the check compares the minima.
        doubled = min(s["double"])
        change = doubled / min(s["single"]) - 1.0
        table[op.name] = {
            "ns_per_op_median": median,
            "ns_per_op_mean": statistics.fmean(s["single"]),
            "ns_per_op_stddev": statistics.stdev(s["single"]) if len(s["single"]) > 1 else 0.0,
            "ns_per_op_min": min(s["single"]),
            "repetitions": len(s["single"]),
            "iterations": op.iterations,
            "ops_per_iteration": op.per_iteration,
            "timed_ms_min": min(s["single_ms"]),
            "retaken": s["retaken"],
            "doubling_ns_per_op": doubled,
            "doubling_change": change,
            "doubling_ok": abs(change) <= doubling_tolerance,
            "same_work_as": op.same_work_as,
        }
    plain = table.get("plain_call", {}).get("ns_per_op_median")
    for row in table.values():
        row["ratio_to_plain_call"] = row["ns_per_op_median"] / plain if plain else None
        ref = table.get(row["same_work_as"] or "")
        ratio = row["ns_per_op_median"] / ref["ns_per_op_median"] if ref else None
        row["same_work_ratio"] = ratio
        row["same_work_ok"] = ratio is None or ratio <= 1.0 + same_work_tolerance
        flags = []
        if not row["doubling_ok"]:
            flags.append(
                f"still timing set-up: twice the iterations moved the per-op figure by "
                f"{row['doubling_change']:+.1%} (tolerance ±{doubling_tolerance:.0%})"
            )
        if not row["same_work_ok"]:
            flags.append(
                f"times set-up: {ratio:.1f}x {row['same_work_as']}, the same work with the "
                f"loop outside the timed region (tolerance +{same_work_tolerance:.0%})"
            )
        row["timing_ok"] = not flags
        row["flag"] = "; ".join(flags) or None
    return table


def build_ops(params: dict, loop: asyncio.AbstractEventLoop, echo: EchoClient | None) -> list[Op]:
    """The ops to time, in measuring order, filtered by `params["ops"]`."""

    def on_loop(coro_timer: Callable) -> Callable[[int], int]:
        return lambda n: loop.run_until_complete(coro_timer(n))

    small, large = int(params["gather_small"]), int(params["gather_large"])
    ops = [
        Op("plain_call", time_plain_call),
        Op("await_coroutine", on_loop(time_await_coroutine)),
        Op("sleep0", on_loop(time_sleep0)),
        Op("create_task_await", on_loop(time_create_task_await)),
        Op(f"gather_{small}", on_loop(gather_timer(small)), per_iteration=small),
        Op(f"gather_{large}", on_loop(gather_timer(large)), per_iteration=large),
        Op("queue_put_get", on_loop(time_queue_put_get)),
        Op("lock_acquire_release", on_loop(time_lock)),
    ]
    if echo is not None:
        ops.append(Op("tcp_echo_round_trip", on_loop(echo.round_trips)))
    if params["include_mistimed"]:

        def mistimed(n: int) -> int:
            try:
                return time_asyncio_run_per_call(n)
            finally:
                asyncio.set_event_loop(loop)  # asyncio.run() leaves no current loop behind

        ops.append(Op("asyncio_run_per_call", mistimed, same_work_as="create_task_await"))
    wanted = str(params["ops"])
    if wanted != "all":
        names = [w.strip() for w in wanted.split(",") if w.strip()]
        known = {op.name for op in ops}
        unknown = sorted(set(names) - known)
        if unknown:
            raise harness.UsageError(f"ops: unknown {unknown}; known: {', '.join(sorted(known))}")
        if "plain_call" not in names:
            names.insert(0, "plain_call")  # every ratio is against it
        ops = [op for op in ops if op.name in names]
    return ops


class Ops(harness.EventLoopWorkload):
    """Variant `ops`: calibrate in setup, measure interleaved in run()."""

    def __init__(self, params: dict, services: dict) -> None:
        self.repetitions = int(params["repetitions"])
        if self.repetitions < 1:
            raise harness.UsageError("repetitions must be at least 1")
        super().__init__(params, services)
        self.echo = None
        if services.get("echo_addr") or "tcp_echo_round_trip" in str(params["ops"]):
            addr = echo_addr(services, "tcp_echo_round_trip")
            self.echo = EchoClient(addr, int(params["echo_bytes"]))
            self.loop.run_until_complete(self.echo.open())
        self.ops = build_ops(params, self.loop, self.echo)
        self.min_ns = float(params["min_time_ms"]) * 1e6
        with harness.gc_disabled():
            for op in self.ops:
                op.iterations = calibrate(op, self.min_ns)

    def run(self) -> harness.Outcome:
        with harness.gc_disabled():
            samples = measure(self.ops, self.repetitions, self.min_ns)
        p = self.params
        table = summarize(
            self.ops, samples, float(p["doubling_tolerance"]), float(p["same_work_tolerance"])
        )
        executed = sum(3 * op.iterations * op.per_iteration * self.repetitions for op in self.ops)
        extra = {
            "kind": "asyncio_ops",
            **harness.loop_facts(self.loop, p),
            "min_time_ms": float(p["min_time_ms"]),
            "repetitions": self.repetitions,
            "doubling_tolerance": float(p["doubling_tolerance"]),
            "doubling_compares": "fastest per-op value of 2x vs of 1x the iterations",
            "same_work_tolerance": float(p["same_work_tolerance"]),
            "echo_bytes": int(p["echo_bytes"]) if self.echo else None,
            "ops": table,
        }
        return harness.Outcome(ops=executed, extra=extra)

    async def aclose(self) -> None:
        if self.echo is not None:
            await self.echo.close()


class Pyperf(harness.Workload):
    """Variant `pyperf`: pyperf's bench_async_func in its own worker processes (pyperf_check.py)."""

    def __init__(self, params: dict, services: dict) -> None:
        self.params = params
        self.script = Path(__file__).with_name("pyperf_check.py")
        self.tmp = tempfile.TemporaryDirectory(prefix="asynclab-pyperf-")
        self.out = Path(self.tmp.name) / "pyperf.json"
        harness.new_event_loop(params).close()  # a loop that is not installed is skipped here
        self.cmd = [
            sys.executable,
            str(self.script),
            "--quiet",
            "--processes",
            str(int(params["pyperf_processes"])),
            "--values",
            str(int(params["pyperf_values"])),
            "--min-time",
            str(float(params["min_time_ms"]) / 1000),
            "--loop",
            str(params["loop"]),
            "--output",
            str(self.out),
        ]

    def run(self) -> harness.Outcome:
        proc = subprocess.run(
            self.cmd, capture_output=True, text=True, timeout=float(self.params["timeout_s"])
        )
        if proc.returncode != 0:
            tail = " | ".join(proc.stderr.strip().splitlines()[-5:])
            raise RuntimeError(f"pyperf_check.py exited {proc.returncode}: {tail}")
        import pyperf_check

        extra = {"kind": "pyperf", "loop": self.params["loop"], **pyperf_check.summarize(self.out)}
        return harness.Outcome(ops=len(extra["benchmarks"]), extra=extra)

    def close(self) -> None:
        self.tmp.cleanup()


VARIANTS = {"ops": Ops, "pyperf": Pyperf}
