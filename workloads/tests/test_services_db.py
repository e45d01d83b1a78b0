"""/db of every service under test against a seeded PostgreSQL: TechEmpower's /db and /queries
answers, each row's value checked the way the load generator checks it."""

from __future__ import annotations

import sys

import pytest

from service_runner import SERVERS, SERVICES, Service, service_env

sys.path.insert(0, str(SERVICES))
import handlers  # noqa: E402 - workloads/services/ is put on the path just above

# The session fixture database_url (one server for all test modules).
pytest_plugins = ["pg_server"]

POOL = 2  # connections per worker process


def check_rows(rows: list) -> None:
    for row in rows:
        assert set(row) == {"id", "value"}, row
        assert 1 <= row["id"] <= handlers.ITEM_COUNT, row
        assert row["value"] == handlers.item_value(row["id"]), row


@pytest.mark.parametrize("name", list(SERVERS))
def test_db_answers_the_seeded_rows(name, database_url):
    env = service_env(ASYNCLAB_DATABASE_URL=database_url, ASYNCLAB_DB_POOL=str(POOL))
    service = Service(name, env)
    try:
        service.wait_ready()
        one = service.get("/db")
        assert one.status == 200, one.body
        single = one.json()
        assert isinstance(single, dict)
        check_rows([single])

        for query, count in [("3", 3), ("0", 1), ("x", 1), ("", 1), ("501", 500)]:
            answer = service.get(f"/db?queries={query}")
            assert answer.status == 200, (query, answer.body)
            rows = answer.json()
            assert isinstance(rows, list) and len(rows) == count, (query, rows)
            check_rows(rows)

        no_upstream = service.get("/upstream")
        assert (no_upstream.status, no_upstream.content_type) == (503, "text/plain")
        assert b"ASYNCLAB_UPSTREAM_URL" in no_upstream.body
        assert not service.stop(), f"{name}: processes left after SIGTERM"
    finally:
        service.kill()
