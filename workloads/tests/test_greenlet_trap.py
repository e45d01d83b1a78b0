"""greenlet_trap.py: the lazy-load trap raises MissingGreenlet; eager and explicit loads work."""

from __future__ import annotations

import greenlet_trap

# The session fixtures database_url and private_cluster (one server for all test modules).
pytest_plugins = ["pg_server"]

CASES = [
    "lazy_load_in_async",
    "selectinload",
    "joinedload",
    "awaitable_attrs",
    "lazy_raise",
    "lazy_load_in_sync",
]


def test_expected_books_follow_the_seed():
    assert greenlet_trap.expected_book_ids(1) == [1, 101, 201, 301, 401]
    assert greenlet_trap.expected_book_ids(100) == [100, 200, 300, 400, 500]


def test_every_case_behaves_as_expected(harness_run, database_url):
    run = harness_run("workloads/greenlet_trap.py", "cases", {}, {"database_url": database_url})
    assert run.returncode == 0, run.stderr
    assert run.events == ["ready", "go", "done", "result"]
    res = run.result
    rows = res["extra"]["rows"]
    assert [r["case"] for r in rows] == CASES
    assert all(r["ok"] for r in rows), rows
    assert res["ops"] == len(CASES) and res["errors"] == 0 and res["error_samples"] == []
    by_case = {r["case"]: r for r in rows}
    assert by_case["lazy_load_in_async"]["observed"].startswith("raises MissingGreenlet")
    assert by_case["lazy_raise"]["observed"].startswith("raises InvalidRequestError")
    assert "lazy='raise'" in by_case["lazy_raise"]["observed"]
    for case in ("selectinload", "joinedload", "awaitable_attrs", "lazy_load_in_sync"):
        assert by_case[case]["observed"] == "5 books, ids 1,101,201,301,401"


def test_other_author_and_observed_is_real(harness_run, database_url):
    run = harness_run(
        "workloads/greenlet_trap.py", "cases", {"author_id": 7}, {"database_url": database_url}
    )
    assert run.returncode == 0, run.stderr
    rows = {r["case"]: r for r in run.result["extra"]["rows"]}
    assert rows["joinedload"]["observed"] == "5 books, ids 7,107,207,307,407"
    assert all(r["ok"] for r in rows.values())
