"""memory.py: every variant reports one op and one wake-up latency per unit."""

from __future__ import annotations

import sys

import pytest


@pytest.mark.parametrize(
    "variant, units",
    [("threads", 200), ("asyncio", 1000), ("processes", 10), ("threads", 0), ("asyncio", 0)],
)
def test_units(harness_run, variant, units):
    run = harness_run("workloads/memory.py", variant, {"units": units})
    assert run.returncode == 0, run.stderr
    res = run.result
    assert res["ops"] == units and res["errors"] == 0 and len(res["latencies_ms"]) == units
    assert res["extra"]["units"] == units and res["latency_kind"] == "since-start"
    assert all(0 < ms < res["inside_wall_s"] * 1000 for ms in res["latencies_ms"])


def test_processes_refuse_more_than_100(harness_run):
    run = harness_run("workloads/memory.py", "processes", {"units": 101})
    assert run.returncode == 1 and run.events == ["error"]
    message = run.message("error")["message"]
    assert message.startswith("ValueError:") and "101" in message


def test_interpreters_are_skipped_before_3_14_or_report_each_unit(harness_run):
    run = harness_run("workloads/memory.py", "interpreters", {"units": 20})
    if sys.version_info < (3, 14):
        assert run.returncode == 1 and run.events == ["skip"], run.stderr
        assert "Python 3.14 or later" in run.message("skip")["reason"]
        return
    assert run.returncode == 0, run.stderr
    assert run.result["ops"] == 20 and len(run.result["latencies_ms"]) == 20
