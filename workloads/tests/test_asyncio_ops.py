"""asyncio_ops.py: calibration, interleaving, the two set-up checks (the mis-timed case must be
flagged), a real run through the harness, and the pyperf cross-check's plumbing."""

from __future__ import annotations

import math

import pytest

import asyncio_ops
from asyncio_ops import Op, calibrate, measure, summarize

pytest_plugins = ["echo_server"]

SCRIPT = "workloads/asyncio_ops.py"


def fake_op(name: str, ns_per_iteration: float, setup_ns: float = 0.0, **kw) -> Op:
    """An op whose timer costs `ns_per_iteration` per iteration plus `setup_ns` per value."""
    return Op(name, lambda n: int(setup_ns + n * ns_per_iteration), **kw)


def test_calibration_reaches_the_minimum_with_little_overshoot():
    op = fake_op("x", 1000.0)
    n = calibrate(op, min_ns=1e6)
    assert n * 1000.0 >= 1e6
    assert n * 1000.0 <= 1.2e6  # aims 10% above
    slow = fake_op("slow", 5e6)  # one iteration already exceeds the minimum
    assert calibrate(slow, min_ns=1e6) == 1


def test_short_values_are_retaken_so_every_kept_value_lasts_the_minimum():
    speed = {"ns": 1000.0}
    op = Op("speeds_up", lambda n: int(n * speed["ns"]))
    op.iterations = calibrate(op, min_ns=1e6)
    speed["ns"] = 400.0  # the machine got faster after calibration
    samples = measure([op], repetitions=3, min_ns=1e6)["speeds_up"]
    assert samples["retaken"] >= 1
    assert min(samples["single_ms"]) >= 1.0
    assert samples["single"] == [pytest.approx(400.0)] * 3


def test_measurement_interleaves_ops_within_each_repetition():
    order: list[str] = []

    def recording(name: str) -> Op:
        return Op(name, lambda n: order.append(name) or int(n * 1e6))

    ops = [recording("a"), recording("b")]
    for op in ops:
        op.iterations = 1
    measure(ops, repetitions=2, min_ns=1e6)
    assert order == ["a", "a", "b", "b", "a", "a", "b", "b"]  # 1x and 2x of a, then of b


def test_summary_statistics_ratios_and_checks():
    ops = [fake_op("plain_call", 50.0), fake_op("twice", 100.0)]
    for op in ops:
        op.iterations = 10
    samples = {
        "plain_call": {"single": [50.0, 52.0, 48.0], "double": [49.0] * 3, "single_ms": [1.0]},
        "twice": {"single": [100.0, 110.0, 90.0], "double": [130.0] * 3, "single_ms": [1.0]},
    }
    for s in samples.values():
        s["retaken"] = 0
    table = summarize(ops, samples, doubling_tolerance=0.05, same_work_tolerance=0.25)
    plain, twice = table["plain_call"], table["twice"]
    assert plain["ns_per_op_median"] == 50.0 and plain["ns_per_op_mean"] == 50.0
    assert plain["ns_per_op_stddev"] == pytest.approx(2.0)
    assert plain["doubling_change"] == pytest.approx(49.0 / 48.0 - 1)  # compares the minima
    assert plain["doubling_ok"] and plain["timing_ok"] and plain["flag"] is None
    assert twice["ratio_to_plain_call"] == pytest.approx(2.0)
    assert twice["doubling_change"] == pytest.approx(130.0 / 90.0 - 1)
    assert not twice["doubling_ok"] and not twice["timing_ok"]
    assert twice["flag"].startswith("still timing set-up")


def test_doubling_catches_set_up_paid_once_per_timed_value():
    # 2 ms of set-up per value on a 100 ns op: 1x and 2x differ by far more than 5%.
    op = fake_op("setup_per_value", 100.0, setup_ns=2e6)
    op.iterations = calibrate(op, min_ns=3e6)
    table = summarize([op], measure([op], 2, 3e6), 0.05, 0.25)
    assert not table["setup_per_value"]["doubling_ok"]


def test_doubling_cannot_see_per_call_set_up_but_same_work_does():
    # asyncio.run() per call: 40 µs of loop set-up per iteration on top of the 3 µs of work.
    ops = [
        fake_op("plain_call", 50.0),
        fake_op("create_task_await", 3000.0),
        fake_op("per_call_setup", 43000.0, same_work_as="create_task_await"),
    ]
    for op in ops:
        op.iterations = calibrate(op, min_ns=1e6)
    row = summarize(ops, measure(ops, 2, 1e6), 0.05, 0.25)["per_call_setup"]
    assert row["doubling_ok"], "per-call set-up scales with the iterations"
    assert row["same_work_ratio"] == pytest.approx(43000.0 / 3000.0)
    assert not row["same_work_ok"] and not row["timing_ok"]
    assert "times set-up" in row["flag"]


def test_op_selection_validates_names():
    params = {**asyncio_ops.PARAMS, "ops": "sleep0,nope"}
    with pytest.raises(Exception, match="unknown"):
        asyncio_ops.build_ops(params, loop=None, echo=None)
    params["ops"] = "sleep0"
    names = [op.name for op in asyncio_ops.build_ops(params, loop=None, echo=None)]
    assert names == ["plain_call", "sleep0"], "plain_call is always measured: ratios need it"


def test_a_real_run_flags_the_mistimed_case(harness_run, echo_addr):
    params = {
        "min_time_ms": 5.0,
        "repetitions": 2,
        "gather_large": 1000,
        "include_mistimed": True,
    }
    run = harness_run(SCRIPT, "ops", params, {"echo_addr": echo_addr}, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.events == ["ready", "go", "done", "result"]
    extra = run.result["extra"]
    ops = extra["ops"]
    assert list(ops) == [
        "plain_call",
        "await_coroutine",
        "sleep0",
        "create_task_await",
        "gather_100",
        "gather_1000",
        "queue_put_get",
        "lock_acquire_release",
        "tcp_echo_round_trip",
        "asyncio_run_per_call",
    ]
    for name, row in ops.items():
        assert row["repetitions"] == 2, name
        assert row["timed_ms_min"] >= 5.0, name
        assert row["ns_per_op_median"] > 0 and math.isfinite(row["ns_per_op_median"]), name
    assert ops["plain_call"]["ratio_to_plain_call"] == 1.0
    assert ops["create_task_await"]["ratio_to_plain_call"] > 1.0
    assert ops["gather_1000"]["ops_per_iteration"] == 1000
    # The deliberately mis-timed case (a loop created inside the timed region per call) must be
    # flagged: this is the test that fails if the checks let it through.
    mistimed = ops["asyncio_run_per_call"]
    assert mistimed["same_work_as"] == "create_task_await"
    assert mistimed["same_work_ratio"] > 1.25
    assert mistimed["timing_ok"] is False
    assert "times set-up" in mistimed["flag"]
    assert ops["create_task_await"]["same_work_ok"] is True
    assert extra["loop"] == "asyncio" and extra["echo_bytes"] == 64


def test_uvloop_runs_the_same_ops(harness_run, echo_addr):
    params = {"min_time_ms": 2.0, "repetitions": 1, "ops": "sleep0,tcp_echo_round_trip"}
    params["loop"] = "uvloop"
    run = harness_run(SCRIPT, "ops", params, {"echo_addr": echo_addr}, timeout=60)
    assert run.returncode == 0, run.stderr
    extra = run.result["extra"]
    assert extra["loop_class"].startswith("uvloop")
    assert set(extra["ops"]) == {"plain_call", "sleep0", "tcp_echo_round_trip"}


def test_pyperf_variant_reports_pyperf_figures(harness_run):
    params = {"pyperf_processes": 1, "pyperf_values": 1, "min_time_ms": 1.0}
    run = harness_run(SCRIPT, "pyperf", params, timeout=120)
    assert run.returncode == 0, run.stderr
    extra = run.result["extra"]
    assert extra["kind"] == "pyperf" and extra["pyperf_version"]
    assert set(extra["benchmarks"]) == {"create_task_await", "sleep0"}
    for name, bench in extra["benchmarks"].items():
        assert bench["values"] >= 1 and bench["processes"] >= 1, name
        assert 0 < bench["mean_ns"] < 1e7, name
