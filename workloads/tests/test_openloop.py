"""Open-loop load: the schedule, the three drivers, and io_http's open-loop mode end to end.

The stall tests follow wrk2's argument. At `rate` requests per second (interval I = 1/rate) one
request at a time, a request that takes S instead of the usual few ms holds back every request
scheduled during those S: the j-th one behind it was intended at t_stall + j*I but cannot start
before t_stall + S, so its corrected latency is at least S - j*I whatever the service time. Its
uncorrected latency (from the actual send) stays the usual few ms. So with one stall among n
requests the top three corrected latencies are all >= S - 2I (the stall and the two behind it),
which puts the corrected p99 (linear interpolation between the sorted values at (n-1)*0.99)
above S - 2I once n <= 200; only the stalled request itself is slow uncorrected, and one value in
n > 100 cannot reach the uncorrected p99.
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import dbutil
import harness
import openloop

# The session fixture database_url (a seeded PostgreSQL) for the db hook's test.
pytest_plugins = ["pg_server"]


def p99(values: list[float]) -> float:
    """numpy's default (linear) percentile, as the driver computes it."""
    xs = sorted(values)
    pos = (len(xs) - 1) * 0.99
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def test_schedule_from_params():
    assert openloop.schedule({"rate_per_s": 0, "duration_s": 5}) is None
    s = openloop.schedule({"rate_per_s": 40, "duration_s": 2})
    assert s.count == 80 and s.offset_ns(0) == 0 and s.offset_ns(40) == 1_000_000_000
    assert openloop.schedule({"rate_per_s": 0.1, "duration_s": 1}).count == 1
    with pytest.raises(ValueError, match="rate_per_s"):
        openloop.schedule({"rate_per_s": -1, "duration_s": 1})
    with pytest.raises(ValueError, match="duration_s"):
        openloop.schedule({"rate_per_s": 10, "duration_s": 0})


# --- the drivers with a fake request: sleep 1 ms, or STALL_S for request STALL_AT --------------

RATE, COUNT, STALL_AT, STALL_S = 100, 60, 20, 0.2
SCHED = openloop.Schedule(RATE, COUNT / RATE)
ARGS = [STALL_S if i == STALL_AT else 0.001 for i in range(COUNT)]
INTERVAL_MS = 1000 / RATE


def sleeper(seconds: list[float]):
    """A fake request: request i sleeps seconds[i], its payload is 1."""

    def call(index: int) -> int:
        time.sleep(seconds[index])
        return 1

    return call


fake = sleeper(ARGS)


async def fake_async(index: int) -> int:
    await asyncio.sleep(ARGS[index])
    return 1


def check_stall(samples, t0, serial: bool) -> None:
    """Corrected latency (from the intended start) carries the stall onto the requests behind it
    when they share one worker; uncorrected (from the send) never does."""
    assert len(samples) == COUNT
    assert [s.intended_ns - t0 for s in samples] == [SCHED.offset_ns(i) for i in range(COUNT)]
    assert all(s.intended_ns <= s.sent_ns <= s.done_ns for s in samples)
    corrected = [(s.done_ns - s.intended_ns) / 1e6 for s in samples]
    uncorrected = [(s.done_ns - s.sent_ns) / 1e6 for s in samples]
    stall_ms = STALL_S * 1000
    assert uncorrected[STALL_AT] >= stall_ms
    after = STALL_AT + 1
    if serial:  # the next request cannot start before the stall ends: S - I at least
        assert corrected[after] >= stall_ms - INTERVAL_MS
        assert uncorrected[after] < stall_ms / 4
    else:  # another worker takes it on time
        assert corrected[after] < stall_ms / 4


def test_serial_driver_charges_the_stall_to_the_requests_behind():
    samples, t0 = openloop.run_serial(SCHED, fake)
    check_stall(samples, t0, serial=True)


@pytest.mark.parametrize("workers", [1, 2])
def test_pool_driver(workers):
    with ThreadPoolExecutor(workers) as pool:
        samples, t0 = openloop.run_pool(
            SCHED,
            lambda i, intended, deadline: pool.submit(openloop.timed, fake, i, intended, deadline),
            lambda f: f.result(),
        )
    check_stall(samples, t0, serial=workers == 1)


@pytest.mark.parametrize("concurrency", [1, 2])
def test_async_driver(concurrency):
    loop = asyncio.new_event_loop()
    try:
        samples, t0 = loop.run_until_complete(openloop.run_async(SCHED, concurrency, fake_async))
    finally:
        loop.close()
    check_stall(samples, t0, serial=concurrency == 1)


def run_driver(kind: str, sched, call):
    """Samples and t0 from one of the three drivers, one worker / slot."""
    if kind == "serial":
        return openloop.run_serial(sched, call)
    if kind == "pool":
        with ThreadPoolExecutor(1) as pool:
            return openloop.run_pool(
                sched,
                lambda i, intended, deadline: pool.submit(
                    openloop.timed, call, i, intended, deadline
                ),
                lambda f: f.result(),
            )

    async def acall(index):
        return call(index)

    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(openloop.run_async(sched, 1, acall))
    finally:
        loop.close()


@pytest.mark.parametrize("kind", ["serial", "pool", "async"])
def test_saturated_run_stops_sending_at_twice_the_duration(kind):
    # 20 requests at 100/s (0.2 s) that each take 50 ms: at most ~0.4 s / 50 ms = 8 are sent
    # before the deadline (2 x 0.2 s), the rest abandoned; achieved is ~20/s, not 100/s.
    sched = openloop.Schedule(100, 0.2)
    samples, t0 = run_driver(kind, sched, sleeper([0.05] * sched.count))
    sent = [s for s in samples if s.sent_ns is not None]
    assert all(s.sent_ns <= sched.deadline_ns(t0) for s in sent)
    extra = openloop.outcome(sched, samples, t0).extra
    assert extra["scheduled"] == 20 and extra["abandoned"] == 20 - len(sent)
    # One at a time, each >= 50 ms: at most 9 can start within the 0.4 s before the deadline.
    assert 1 <= len(sent) <= 9
    assert extra["achieved_rate_per_s"] < 0.5 * 100


def test_outcome_rates_and_errors():
    def flaky(i: int):
        if i == 3:
            raise ConnectionError("refused")
        if i == 4:
            raise harness.Failed("HTTP 503", 10)
        return 10

    sched = openloop.Schedule(50, 0.2)
    samples, t0 = openloop.run_serial(sched, flaky)
    out = openloop.outcome(sched, samples, t0, {"bytes_received": 1})
    assert out.ops == 8 and out.errors == 2 and out.latency_kind == "open-loop-corrected"
    assert out.error_samples == ["ConnectionError: refused", "HTTP 503"]
    res = out.to_result(0.2)
    assert len(res["latencies_ms"]) == len(res["latency_sets_ms"]["uncorrected"]) == 8
    assert all(
        c >= u
        for c, u in zip(res["latencies_ms"], res["latency_sets_ms"]["uncorrected"], strict=True)
    )
    extra = res["extra"]
    assert extra["offered_rate_per_s"] == 50 and extra["scheduled"] == 10
    assert extra["bytes_received"] == 1
    # Sends span 9 intervals plus the last send's lateness; plus one interval, that is the
    # offered rate less that lateness, never more than the offered rate.
    last_late_s = (samples[-1].sent_ns - samples[-1].intended_ns) / 1e9
    assert extra["achieved_rate_per_s"] == pytest.approx(10 / (10 / 50 + last_late_s))
    assert extra["achieved_rate_per_s"] <= 50
    lags = [(s.sent_ns - s.intended_ns) / 1e6 for s in samples]
    assert extra["max_start_lag_ms"] == pytest.approx(max(lags)) and min(lags) >= 0
    assert extra["abandoned"] == 0


# --- io_http in open-loop mode against the session's delay server -----------------------------

VARIANTS = ["sync", "threads", "multiprocessing", "asyncio", "httpx_async"]


def run_open(harness_run, http_url, variant, **params):
    base = {"delay_ms": 5, "bytes": 100, "concurrency": 1, "rate_per_s": 50, "duration_s": 1}
    run = harness_run(
        "workloads/io_http.py", variant, {**base, **params}, {"http_url": http_url}, timeout=90
    )
    assert run.returncode == 0, run.stderr
    assert run.events == ["ready", "go", "done", "result"]
    res = run.result
    n = round(res["extra"]["offered_rate_per_s"] * res["extra"]["duration_s"])
    assert res["ops"] == n and res["errors"] == 0 and res["extra"]["scheduled"] == n
    assert res["latency_kind"] == "open-loop-corrected"
    assert len(res["latency_sets_ms"]["uncorrected"]) == n
    assert res["extra"]["bytes_received"] == n * 100
    return res


@pytest.mark.parametrize("variant", VARIANTS)
def test_low_rate_without_stalls_corrected_matches_uncorrected(harness_run, http_url, variant):
    # 20/s with a 5 ms delay leaves every variant idle most of the time: requests start on time,
    # so the two latencies differ only by the hand-off to a worker and timer lateness (well
    # under a millisecond on an idle machine; a few ms when this 2-core box is busy).
    res = run_open(harness_run, http_url, variant, rate_per_s=20)
    corrected, uncorrected = res["latencies_ms"], res["latency_sets_ms"]["uncorrected"]
    lags = sorted(c - u for c, u in zip(corrected, uncorrected, strict=True))
    assert lags[0] >= 0, "a request cannot be sent before its intended start"
    assert lags[len(lags) // 2] < 5, f"median start lag {lags[len(lags) // 2]:.2f} ms"
    assert res["extra"]["achieved_rate_per_s"] >= 0.9 * 20


@pytest.mark.parametrize("variant", ["sync", "asyncio"])
def test_stall_grows_corrected_p99_only(harness_run, http_url, variant):
    # 150 requests at 50/s (I = 20 ms), one at a time; request 100 waits 600 ms. See the module
    # docstring: corrected p99 >= S - 2I = 560 ms; the uncorrected p99 is an ordinary request.
    stall_ms, interval_ms = 600, 20
    res = run_open(harness_run, http_url, variant, duration_s=3, stall_every=100, stall_ms=stall_ms)
    corrected, uncorrected = p99(res["latencies_ms"]), p99(res["latency_sets_ms"]["uncorrected"])
    assert corrected >= stall_ms - 2 * interval_ms, (corrected, uncorrected)
    assert uncorrected < stall_ms / 4, (corrected, uncorrected)
    assert corrected > 3 * uncorrected


def test_stall_needs_open_loop(harness_run, http_url):
    params = {"requests": 2, "delay_ms": 0, "stall_every": 2}
    run = harness_run("workloads/io_http.py", "sync", params, {"http_url": http_url})
    assert run.returncode == 1 and "rate_per_s" in run.message("error")["message"]


# --- db in open-loop mode --------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["psycopg2_threads", "sqlalchemy_sync", "asyncpg"])
def test_db_open_loop_runs_the_scheduled_queries(harness_run, database_url, variant):
    params = {"rate_per_s": 100, "duration_s": 0.5, "concurrency": 4}
    run = harness_run("workloads/db.py", variant, params, {"database_url": database_url})
    assert run.returncode == 0, run.stderr
    res = run.result
    assert res["ops"] == 50 and res["errors"] == 0, res["error_samples"]
    assert res["latency_kind"] == "open-loop-corrected"
    pairs = zip(res["latencies_ms"], res["latency_sets_ms"]["uncorrected"], strict=True)
    assert all(c >= u > 0 for c, u in pairs)
    expected = sum(dbutil.item_value(dbutil.item_id(i)) for i in range(50))
    assert res["extra"]["rows"] == 50 and res["extra"]["checksum"] == expected
    assert res["extra"]["offered_rate_per_s"] == 100


def test_db_processes_refuse_open_loop(harness_run, database_url):
    params = {"rate_per_s": 100, "duration_s": 0.5}
    run = harness_run("workloads/db.py", "multiprocessing", params, {"database_url": database_url})
    assert run.returncode == 1 and "open-loop" in run.message("error")["message"]
