"""latency_tail.py: service vs from-batch latencies, and head-of-line blocking made visible."""

from __future__ import annotations

import pytest

import latency_tail

# The session fixtures database_url and private_cluster (one server for all test modules).
pytest_plugins = ["pg_server"]

REQUESTS = 100


def run_tail(harness_run, services, variant, **params):
    params = {"requests": REQUESTS, **params}
    run = harness_run("workloads/latency_tail.py", variant, params, services)
    assert run.returncode == 0, run.stderr
    assert run.events == ["ready", "go", "done", "result"]
    res = run.result
    assert res["errors"] == 0 and res["error_samples"] == [], res["error_samples"]
    service, from_batch = res["latencies_ms"], res["latency_sets_ms"]["from_batch"]
    assert res["ops"] == REQUESTS and len(service) == REQUESTS and len(from_batch) == REQUESTS
    assert res["latency_kind"] == "service"
    pairs = zip(service, from_batch, strict=True)
    assert all(fb >= s > 0 for s, fb in pairs), "queueing cannot be negative"
    assert max(from_batch) <= res["extra"]["batch_ms"] <= res["inside_wall_s"] * 1000
    return res


def test_percentile_is_nearest_rank():
    values = [float(v) for v in range(1, 101)]
    assert latency_tail.percentile(values, 50) == 50.0
    assert latency_tail.percentile(values, 99) == 99.0
    assert latency_tail.percentile([3.0], 50) == 3.0 and latency_tail.percentile([], 50) is None


@pytest.mark.parametrize("variant", list(latency_tail.VARIANTS))
def test_db_target(harness_run, database_url, variant):
    res = run_tail(harness_run, {"database_url": database_url}, variant, block_ms=1)
    extra = res["extra"]
    assert extra["target"] == "db" and extra["pool_size"] == 10
    assert extra["concurrency"] == (10 if variant == "threads" else REQUESTS)
    # 100 ops over 10 connections: most ops waited behind others, so the median op's time from
    # the batch start is well above its own service time.
    assert extra["from_batch_p50_ms"] > extra["service_p50_ms"]


def test_db_sleep_is_in_the_service_time(harness_run, database_url):
    res = run_tail(harness_run, {"database_url": database_url}, "asyncio", sleep_ms=20)
    assert min(res["latencies_ms"]) >= 20
    # ten waves of 20 ms: the last op finishes at least 200 ms after the batch start
    assert max(res["latency_sets_ms"]["from_batch"]) >= 200


@pytest.mark.parametrize("variant", ["threads", "asyncio"])
def test_http_target(harness_run, http_url, variant):
    res = run_tail(harness_run, {"http_url": http_url}, variant, target="http", delay_ms=10)
    assert min(res["latencies_ms"]) >= 10 and res["extra"]["target"] == "http"


def test_blocking_call_stalls_the_loop(harness_run, database_url):
    services = {"database_url": database_url}
    blocking = run_tail(harness_run, services, "asyncio_blocking", block_ms=20)
    to_thread = run_tail(harness_run, services, "asyncio_to_thread", block_ms=20)
    # 100 sleeps of 20 ms run one after another on the loop: >= 2 s for the batch.
    assert blocking["extra"]["batch_ms"] >= REQUESTS * 20
    assert blocking["extra"]["from_batch_p50_ms"] > to_thread["extra"]["from_batch_p50_ms"]
    # The stall also lands in other ops' service times: a result that arrived during someone
    # else's sleep is only seen when the loop runs again.
    assert blocking["extra"]["service_p50_ms"] > 20 > to_thread["extra"]["service_p50_ms"]


def test_unknown_target_is_a_setup_error(harness_run):
    run = harness_run("workloads/latency_tail.py", "threads", {"target": "smtp"}, {})
    assert run.returncode == 1 and run.events == ["error"]
    assert "unknown target" in run.message("error")["message"]
