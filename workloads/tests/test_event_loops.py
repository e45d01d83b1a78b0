"""event_loops.py: each workload does exactly its operations on asyncio and uvloop; a loop that is
not installed makes the worker send a `skip` message with how to get it, an unknown loop is an
error."""

from __future__ import annotations

import pytest

pytest_plugins = ["echo_server"]

SCRIPT = "workloads/event_loops.py"
SMALL = {"callbacks": 2000, "tasks": 1200, "batch": 500, "round_trips": 50, "payload_bytes": 1024}
EXPECTED_OPS = {
    "callbacks": 2000,
    "sleep0_tasks": 1200,
    "sleep0_gathered": 1200,
    "tcp_echo": 50,
    "tcp_echo_inloop": 50,
}


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
@pytest.mark.parametrize("variant", sorted(EXPECTED_OPS))
def test_each_workload_does_its_operations(harness_run, echo_addr, variant, loop):
    params = {**SMALL, "loop": loop}
    run = harness_run(SCRIPT, variant, params, {"echo_addr": echo_addr})
    assert run.returncode == 0, run.stderr
    assert run.events == ["ready", "go", "done", "result"]
    res = run.result
    assert res["ops"] == EXPECTED_OPS[variant] and res["errors"] == 0
    extra = res["extra"]
    assert extra["loop"] == loop
    assert extra["loop_class"].split(".")[0] == ("uvloop" if loop == "uvloop" else "asyncio")
    assert 0 < extra["elapsed_ms"] <= res["inside_wall_s"] * 1000 + 1e-6
    assert extra["cpus"], "the CPUs the worker may run on"


@pytest.mark.parametrize("loop", ["asyncio", "uvloop", "rsloop"])
@pytest.mark.parametrize("variant", ["tcp_echo", "tcp_echo_inloop"])
@pytest.mark.parametrize("streams", ["native", "stdlib"])
def test_tcp_runs_on_the_streams_asked_for(harness_run, echo_addr, variant, loop, streams):
    if loop == "rsloop":
        pytest.importorskip("rsloop")
    params = {**SMALL, "loop": loop, "streams": streams}
    run = harness_run(SCRIPT, variant, params, {"echo_addr": echo_addr})
    assert run.returncode == 0, run.stderr
    assert run.result["ops"] == EXPECTED_OPS[variant]
    impl = run.result["extra"]["streams"]
    if streams == "stdlib":
        assert impl == "echo_client.stdlib_open_connection"
    elif loop == "rsloop":
        assert impl.startswith("rsloop."), impl
    else:
        assert impl == "asyncio.streams.open_connection", impl


def test_unknown_streams_are_an_error(harness_run, echo_addr):
    run = harness_run(SCRIPT, "tcp_echo", {**SMALL, "streams": "fast"}, {"echo_addr": echo_addr})
    assert run.returncode == 1
    assert "streams='fast': expected one of native, stdlib" in run.message("error")["message"]


@pytest.mark.parametrize("loop", ["zuvloop", "rsloop"])
def test_a_loop_that_is_not_installed_is_a_skip_with_the_reason(harness_run, loop):
    try:
        __import__(loop)
        pytest.skip(f"{loop} is installed here")
    except ImportError:
        pass
    run = harness_run(SCRIPT, "callbacks", {**SMALL, "loop": loop})
    assert run.returncode == 1 and run.events == ["skip"]
    skip = run.message("skip")
    assert skip["phase"] == "setup" and skip["kind"] == "missing_package"
    assert skip["reason"].startswith(f"loop {loop} is not installed in this environment")
    assert ("make rsloop" if loop == "rsloop" else "3.14 only") in skip["reason"]
    assert "Traceback" not in run.stderr


def test_an_unknown_loop_is_an_error_not_a_skip(harness_run):
    run = harness_run(SCRIPT, "callbacks", {**SMALL, "loop": "uvlop"})
    assert run.returncode == 1
    message = run.message("error")["message"]
    assert message.startswith("ValueError: unknown loop 'uvlop'") and "uvloop" in message
