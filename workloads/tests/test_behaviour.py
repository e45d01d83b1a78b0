"""behaviour.py: every asyncio behaviour check matches its expectation on this interpreter, and
the observed text comes from what happened."""

from __future__ import annotations

import asyncio
import sys

import behaviour

SCRIPT = "workloads/behaviour.py"


def test_every_check_behaves_as_expected(harness_run):
    run = harness_run(SCRIPT, "checks", {}, timeout=60)
    assert run.returncode == 0, run.stderr
    res = run.result
    rows = {r["case"]: r for r in res["extra"]["rows"]}
    assert all(r["ok"] for r in rows.values()), [r for r in rows.values() if not r["ok"]]
    assert res["ops"] == len(rows) == 11 and res["errors"] == 0
    gather = rows["gather: the siblings after the first error"]["observed"]
    assert gather.endswith("later: a finished, b finished")
    tg = rows["TaskGroup: what the caller sees at the first error"]["observed"]
    if sys.version_info >= (3, 11):
        assert tg == "raises ExceptionGroup[Boom]"
    else:
        assert tg.startswith("n/a on 3.10")
    blocking = rows["5 x 0.1 s requests with time.sleep"]["observed"]
    assert float(blocking.split(" s total")[0]) >= 0.49


def test_blocking_requests_are_serial_and_stall_the_loop():
    loop = asyncio.new_event_loop()
    try:
        total, gap = loop.run_until_complete(behaviour.five_requests("time.sleep", 3, 0.05))
        assert total >= 3 * 0.05 * 0.98 and gap >= 2.5 * 0.05
        total, gap = loop.run_until_complete(behaviour.five_requests("asyncio.sleep", 3, 0.05))
        assert 0.05 * 0.98 <= total < 3 * 0.05
    finally:
        loop.close()


def test_forgotten_await_rows_observe_the_coroutine_and_its_warning():
    rows = behaviour.forgotten_await()
    assert [r[3] for r in rows] == [True, True, True]
    assert rows[0][2] == "coroutine object; the branch was taken"
    assert "was never awaited" in rows[1][2]
    assert rows[2][2] == "warnings after del: 0; after gc.collect(): 1"
