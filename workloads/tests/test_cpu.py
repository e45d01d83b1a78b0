"""cpu.py: every variant does `jobs` jobs and finds the same number of primes."""

from __future__ import annotations

import sys

import pytest

import cpu

PRIMES_BELOW_20000 = 2262


def test_count_primes_small_cases():
    assert [cpu.count_primes(n) for n in (0, 2, 3, 4, 10, 100)] == [0, 0, 1, 2, 4, 25]
    assert cpu.count_primes(20_000) == PRIMES_BELOW_20000


@pytest.mark.parametrize(
    "variant, params",
    [
        ("sync", {}),
        ("asyncio", {}),
        ("asyncio", {"loop": "uvloop"}),
        ("threads", {}),
        ("threads", {"concurrency": 2}),
        ("multiprocessing", {}),
        ("multiprocessing", {"concurrency": 3, "start_method": "spawn"}),
    ],
)
def test_variants_agree(harness_run, variant, params):
    run = harness_run("workloads/cpu.py", variant, {"n": 20_000, "jobs": 4, **params})
    assert run.returncode == 0, run.stderr
    res = run.result
    assert res["ops"] == 4 and res["errors"] == 0 and len(res["latencies_ms"]) == 4
    assert res["extra"]["primes"] == PRIMES_BELOW_20000
    assert res["extra"]["cpu_count"] >= 1
    if variant == "multiprocessing":
        assert res["extra"]["workers"] == params.get("concurrency", res["extra"]["cpu_count"])


def test_interpreters_agree_or_are_skipped_before_3_14(harness_run):
    run = harness_run("workloads/cpu.py", "interpreters", {"n": 20_000, "jobs": 4})
    if sys.version_info < (3, 14):
        assert run.returncode == 1 and run.events == ["skip"], run.stderr
        skip = run.message("skip")
        assert skip["kind"] == "unsupported" and "Python 3.14 or later" in skip["reason"]
        return
    assert run.returncode == 0, run.stderr
    res = run.result
    assert res["ops"] == 4 and res["errors"] == 0
    assert res["extra"]["primes"] == PRIMES_BELOW_20000
    assert res["extra"]["worker_start_ms"] > 0 and res["extra"]["call_overhead_us"] > 0
