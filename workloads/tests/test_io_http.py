"""io_http.py against a throwaway delay server: counts, errors and sync vs concurrent wall time."""

from __future__ import annotations

import pytest

REQUESTS, DELAY_MS, CONCURRENCY = 20, 50, 10
SERIAL_S = REQUESTS * DELAY_MS / 1000
ALL_VARIANTS = ["sync", "threads", "multiprocessing", "asyncio", "httpx_async"]


def run_io(harness_run, http_url, variant, **params):
    base = {"requests": REQUESTS, "delay_ms": DELAY_MS, "concurrency": CONCURRENCY, "bytes": 100}
    run = harness_run("workloads/io_http.py", variant, {**base, **params}, {"http_url": http_url})
    assert run.returncode == 0, run.stderr
    assert run.events == ["ready", "go", "done", "result"]
    return run.result


def test_sync_is_serial(harness_run, http_url):
    res = run_io(harness_run, http_url, "sync")
    assert res["ops"] == REQUESTS and res["errors"] == 0
    assert res["inside_wall_s"] >= SERIAL_S
    assert len(res["latencies_ms"]) == REQUESTS and min(res["latencies_ms"]) >= DELAY_MS
    assert res["extra"]["bytes_received"] == REQUESTS * 100


@pytest.mark.parametrize(
    "variant, params",
    [
        ("threads", {}),
        ("multiprocessing", {}),
        ("asyncio", {}),
        ("asyncio", {"loop": "uvloop"}),
        ("httpx_async", {}),
    ],
)
def test_concurrent_variants_overlap(harness_run, http_url, variant, params):
    res = run_io(harness_run, http_url, variant, **params)
    assert res["ops"] == REQUESTS and res["errors"] == 0 and res["error_samples"] == []
    assert len(res["latencies_ms"]) == REQUESTS and min(res["latencies_ms"]) >= DELAY_MS
    assert res["extra"]["bytes_received"] == REQUESTS * 100
    # 20 requests in waves of 10 need ~2 delays; serial would need 20.
    assert res["inside_wall_s"] < SERIAL_S / 2


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_http_errors_are_counted_not_fatal(harness_run, http_url, variant):
    res = run_io(harness_run, http_url, variant, requests=6, delay_ms=0, status=503)
    assert res["ops"] == 0 and res["errors"] == 6 and res["latencies_ms"] == []
    assert res["error_samples"] == ["HTTP 503"] * 5
    assert res["extra"]["bytes_received"] == 6 * 100  # error bodies still arrive


def test_connection_errors_are_counted_not_fatal(harness_run):
    res = run_io(
        harness_run, "http://127.0.0.1:9", "asyncio", requests=3, delay_ms=0, warm_connections=False
    )
    assert res["ops"] == 0 and res["errors"] == 3
    assert res["error_samples"][0].startswith("ClientConnectorError")
