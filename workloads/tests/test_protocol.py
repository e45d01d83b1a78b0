"""The child side of docs/protocol.md: handshake order, timing boundaries, failures, skips,
--describe."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

from conftest import HARNESS, run_harness

SCRIPT = '''
"""A test workload: optional sleep in setup, optional failures."""

import time

import harness


class Trivial(harness.Workload):
    def __init__(self, params, services):
        time.sleep(params.get("setup_sleep_s", 0))
        if params.get("fail_setup"):
            raise RuntimeError("boom in setup")
        if params.get("skip_setup"):
            raise harness.Skip("no such device here", kind=params["skip_setup"])
        self.params = params

    def run(self):
        if self.params.get("fail_run"):
            raise ValueError("boom in run")
        if self.params.get("skip_run"):
            raise harness.Skip("gone missing")
        rec = harness.Recorder()
        for _ in range(3):
            start = harness.now()
            sum(range(1000))
            rec.add(harness.now() - start)
        rec.error(OSError("sample"))
        return rec.outcome({"services": self.services_seen})

    services_seen = None


def setup(params, services):
    workload = Trivial(params, services)
    workload.services_seen = services
    return workload


VARIANTS = {"trivial": setup, "other": setup}
'''


def script(tmp_path):
    path = tmp_path / "trivial_script.py"
    path.write_text(textwrap.dedent(SCRIPT))
    return path


def test_handshake_order_and_result(tmp_path, harness_run):
    run = harness_run(script(tmp_path), "trivial", {}, {"http_url": "x"}, pause_before_go=0.3)
    assert run.events == ["ready", "go", "done", "result"], run.stderr
    assert run.returncode == 0
    assert isinstance(run.message("ready")["pid"], int)
    res = run.result
    assert res["ops"] == 3 and res["errors"] == 1 and len(res["latencies_ms"]) == 3
    assert res["error_samples"] == ["OSError: sample"]
    assert res["latency_kind"] == "service"
    assert res["extra"] == {"services": {"http_url": "x"}}
    assert 0 <= res["inside_wall_s"] < 0.5


def test_nothing_is_timed_before_go(tmp_path, harness_run):
    run = harness_run(script(tmp_path), "trivial", {"setup_sleep_s": 0.5})
    assert run.returncode == 0, run.stderr
    assert run.result["inside_wall_s"] < 0.5
    assert run.go_to_done_s is not None and run.go_to_done_s < 0.5


def test_unknown_variant(tmp_path, harness_run):
    run = harness_run(script(tmp_path), "nope")
    assert run.returncode == 1 and run.events == ["error"]
    message = run.message("error")["message"]
    assert "'nope'" in message and "other, trivial" in message


def test_error_in_setup(tmp_path, harness_run):
    run = harness_run(script(tmp_path), "trivial", {"fail_setup": True})
    assert run.returncode == 1 and run.events == ["error"]
    assert run.message("error") == {
        "event": "error",
        "phase": "setup",
        "message": "RuntimeError: boom in setup",
    }
    assert "Traceback" in run.stderr and "boom in setup" in run.stderr


def test_error_in_run(tmp_path, harness_run):
    run = harness_run(script(tmp_path), "trivial", {"fail_run": True})
    assert run.returncode == 1 and run.events == ["ready", "go", "error"]
    assert run.message("error")["message"] == "ValueError: boom in run"
    assert run.message("error")["phase"] == "run"
    assert "Traceback" in run.stderr


def test_skip_in_setup_is_a_skip_message_with_its_kind(tmp_path, harness_run):
    run = harness_run(script(tmp_path), "trivial", {"skip_setup": "unsupported"})
    assert run.returncode == 1 and run.events == ["skip"], run.stderr
    assert run.message("skip") == {
        "event": "skip",
        "phase": "setup",
        "kind": "unsupported",
        "reason": "no such device here",
    }
    assert "Traceback" not in run.stderr and "no such device here" in run.stderr


def test_skip_in_run_defaults_to_a_missing_package(tmp_path, harness_run):
    run = harness_run(script(tmp_path), "trivial", {"skip_run": True})
    assert run.returncode == 1 and run.events == ["ready", "go", "skip"], run.stderr
    skip = run.message("skip")
    assert (skip["phase"], skip["kind"], skip["reason"]) == (
        "run",
        "missing_package",
        "gone missing",
    )


def test_a_skip_of_no_known_kind_is_an_error(tmp_path, harness_run):
    run = harness_run(script(tmp_path), "trivial", {"skip_setup": "tired"})
    assert run.returncode == 1 and run.events == ["error"]
    message = run.message("error")["message"]
    assert message.startswith("ValueError: unknown skip kind 'tired'") and "unsupported" in message


def test_stdin_closed_without_go(tmp_path, harness_run):
    run = harness_run(script(tmp_path), "trivial", send_go=False)
    assert run.returncode == 1 and run.events == ["ready", "stdin-closed", "error"]
    assert "expected 'go'" in run.message("error")["message"]


def test_unknown_param_is_rejected(harness_run):
    run = harness_run("workloads/cpu.py", "sync", {"jbos": 2})
    assert run.returncode == 1 and run.events == ["error"]
    assert "jbos" in run.message("error")["message"]


def test_describe():
    run = run_harness(["--describe"])
    assert run.returncode == 0 and run.events == ["describe"], run.stderr
    desc = run.message("describe")
    assert desc["python"].count(".") == 2 and desc["implementation"] == "cpython"
    assert desc["executable"] and "compiler" in desc and "config_args" in desc
    for name in ("aiohttp", "requests", "httpx", "uvloop", "asyncpg", "sqlalchemy", "pyperf"):
        assert desc["packages"][name], name


FORKING_SCRIPT = '''
"""A test workload whose run leaves a forked child sleeping after the harness exits."""

import os
import time

import harness


class Forks(harness.Workload):
    def run(self):
        if os.fork() == 0:
            time.sleep(3)
            os._exit(0)
        return harness.Outcome(ops=1)


VARIANTS = {"forks": lambda params, services: Forks()}
'''


def test_forked_children_do_not_hold_the_ctl_pipe(tmp_path, harness_run):
    path = tmp_path / "forking_script.py"
    path.write_text(textwrap.dedent(FORKING_SCRIPT))
    start = time.monotonic()
    run = harness_run(path, "forks")
    assert run.returncode == 0 and run.events == ["ready", "go", "done", "result"], run.stderr
    assert time.monotonic() - start < 2.5  # EOF came with the harness's exit, not the child's


def test_missing_ctl_fd_exits_2():
    proc = subprocess.run(
        [sys.executable, str(HARNESS), "--describe", "--ctl-fd", "97"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 2 and "ctl fd 97" in proc.stderr
