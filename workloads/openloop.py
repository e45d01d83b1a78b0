"""Open-loop load (wrk2's rule): requests on a fixed schedule, latency from the intended start.

With `rate_per_s` > 0 a run issues `round(rate_per_s * duration_s)` requests, request i intended
at t0 + i / rate_per_s whatever happened to the ones before it, and records two latencies each:

* corrected: from the intended start to completion. It includes waiting for a free worker,
  connection or slot and for the requests ahead of it; `latencies_ms`, kind
  `open-loop-corrected`.
* uncorrected: from the actual send to completion, what a closed-loop client sees; a stalled
  server hides in it because the requests queued behind the stall are timed from when they
  finally went out ("coordinated omission"); `latency_sets_ms["uncorrected"]`.

A saturated variant would need `count / capacity` to get through the schedule, so a run stops
sending once `2 * duration_s` have passed since t0; requests not sent by then are `abandoned`
(counted in `extra`, neither ops nor errors, never seen by the server). The sweep counts such a
run as saturated anyway; its latencies are those of the requests that were sent.

`extra` gains `offered_rate_per_s`, `achieved_rate_per_s` (requests sent per second: those sent
over the span from t0 to the last actual send plus one interval, which equals the offered rate
exactly when every request starts on time), `scheduled`, `abandoned` and `max_start_lag_ms` (the
largest actual-send-minus-intended gap).

Three drivers follow the variants' concurrency models; each returns the samples in schedule
order and t0. `run_serial`: one request at a time (sync), so a late request starts late.
`run_pool`: the calling thread sleeps until each intended time and hands the request to a pool
(threads, processes), where it queues for a free worker. `run_async`: a scheduler coroutine
sleeps until each intended time, waits for one of `concurrency` slots, then starts the request
as a task. `call(index) -> payload` is the scenario's operation; an exception it raises counts
as an error (a `Failed`, scripts' `harness.Failed`, keeps its payload). All clocks are
`time.perf_counter_ns` (shared by every process on Linux, so pool workers' send times compare
with the parent's). This module builds on `harness_outcome` alone; `harness_models` imports it
where a schedule is used.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from harness_outcome import Failed, Outcome, Recorder, describe_error

KIND = "open-loop-corrected"
UNCORRECTED = "uncorrected"
# Defaults the open-loop scripts merge into their PARAMS: rate 0 means closed loop.
PARAMS = {"rate_per_s": 0, "duration_s": 5}

now = time.perf_counter_ns


@dataclass(frozen=True)
class Schedule:
    """A fixed-rate schedule: `count` requests, request i intended `i / rate_per_s` after t0."""

    rate_per_s: float
    duration_s: float

    @property
    def count(self) -> int:
        return max(1, round(self.rate_per_s * self.duration_s))

    def offset_ns(self, i: int) -> int:
        return round(i * 1e9 / self.rate_per_s)

    def deadline_ns(self, t0: int) -> int:
        """No request is sent after this: twice the schedule's length past t0."""
        return t0 + round(2e9 * self.duration_s)


def schedule(params: dict) -> Schedule | None:
    """The open-loop schedule `params` ask for, or None for closed loop (`rate_per_s` 0)."""
    rate, duration = float(params.get("rate_per_s") or 0), float(params.get("duration_s") or 0)
    if rate < 0 or not math.isfinite(rate):
        raise ValueError(f"rate_per_s must be 0 (closed loop) or a positive rate, got {rate}")
    if rate == 0:
        return None
    if duration <= 0 or not math.isfinite(duration):
        raise ValueError(f"duration_s must be positive in open-loop mode, got {duration}")
    return Schedule(rate, duration)


class Sample(NamedTuple):
    """One request's clock readings (perf_counter_ns), what `call` returned and its error;
    `sent_ns` is None for a request abandoned at the deadline."""

    intended_ns: int
    sent_ns: int | None
    done_ns: int
    payload: Any
    error: str | None


def sleep_until(target_ns: int) -> None:
    delta = target_ns - now()
    if delta > 0:
        time.sleep(delta / 1e9)


def failure(exc: Exception) -> tuple[Any, str]:
    """(payload, description) of a request that raised: a `Failed` keeps its payload."""
    return (exc.payload if isinstance(exc, Failed) else None), describe_error(exc)


def timed(call: Callable[[int], Any], index: int, intended_ns: int, deadline_ns: int) -> Sample:
    """Does one request and reads the clock around it, unless the deadline has passed;
    module-level so that a process pool can pickle it."""
    sent = now()
    if sent > deadline_ns:
        return Sample(intended_ns, None, sent, None, None)
    try:
        payload, error = call(index), None
    except Exception as exc:  # noqa: BLE001 - a failed request is an error, not a crash
        payload, error = failure(exc)
    return Sample(intended_ns, sent, now(), payload, error)


def run_serial(sched: Schedule, call: Callable[[int], Any]) -> tuple[list[Sample], int]:
    """One request at a time in the calling thread: a request behind a slow one starts late."""
    samples, t0 = [], now()
    deadline = sched.deadline_ns(t0)
    for i in range(sched.count):
        intended = t0 + sched.offset_ns(i)
        sleep_until(intended)
        samples.append(timed(call, i, intended, deadline))
        if samples[-1].sent_ns is None:
            break
    return samples, t0


def run_pool(
    sched: Schedule, submit: Callable[[int, int, int], Any], collect: Callable[[Any], Sample]
) -> tuple[list[Sample], int]:
    """Hands each request to a pool at its intended time: `submit(arg_index, intended_ns,
    deadline_ns)` returns a handle (the pool runs `timed`), `collect(handle)` waits for its
    Sample."""
    handles, t0 = [], now()
    deadline = sched.deadline_ns(t0)
    for i in range(sched.count):
        intended = t0 + sched.offset_ns(i)
        sleep_until(intended)
        handles.append(submit(i, intended, deadline))
    return [collect(h) for h in handles], t0


async def run_async(
    sched: Schedule, concurrency: int, call: Callable[[int], Awaitable[Any]]
) -> tuple[list[Sample], int]:
    """A scheduler coroutine starts each request as a task at its intended time, at most
    `concurrency` in flight; a request that finds no free slot waits for one, late."""
    slots = asyncio.Semaphore(concurrency)

    async def one(index: int, intended: int) -> Sample:
        sent = now()
        try:
            payload, error = await call(index), None
        except Exception as exc:  # noqa: BLE001
            payload, error = failure(exc)
        finally:
            done = now()
            slots.release()
        return Sample(intended, sent, done, payload, error)

    tasks, t0 = [], now()
    deadline = sched.deadline_ns(t0)
    for i in range(sched.count):
        intended = t0 + sched.offset_ns(i)
        delta = intended - now()
        if delta > 0:
            await asyncio.sleep(delta / 1e9)
        await slots.acquire()
        if now() > deadline:
            slots.release()
            break
        tasks.append(asyncio.create_task(one(i, intended)))
    return list(await asyncio.gather(*tasks)), t0


def outcome(
    sched: Schedule, samples: Sequence[Sample], t0: int, extra: dict | None = None
) -> Outcome:
    """The run's Outcome: corrected latencies as the main set, uncorrected as a named set
    (both in schedule order, successful requests only), rates in `extra`."""
    rec, uncorrected_ms = Recorder(), []
    samples = [s for s in samples if s.sent_ns is not None]
    for s in samples:
        if s.error is None:
            rec.add(s.done_ns - s.intended_ns)
            uncorrected_ms.append((s.done_ns - s.sent_ns) / 1e6)
        else:
            rec.error(s.error)
    last_sent = max((s.sent_ns for s in samples), default=t0)
    span_s = (last_sent - t0) / 1e9 + 1 / sched.rate_per_s
    rates = {
        "offered_rate_per_s": sched.rate_per_s,
        "achieved_rate_per_s": len(samples) / span_s,
        "scheduled": sched.count,
        "abandoned": sched.count - len(samples),
        "duration_s": sched.duration_s,
        "max_start_lag_ms": max((s.sent_ns - s.intended_ns for s in samples), default=0) / 1e6,
    }
    out = rec.outcome({**(extra or {}), **rates}, kind=KIND)
    out.latency_sets = {UNCORRECTED: uncorrected_ms}
    return out
