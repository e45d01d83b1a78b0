"""db.py against a seeded PostgreSQL: every variant fetches the same rows over N connections."""

from __future__ import annotations

import threading
import time

import pytest

import db
import dbutil
import harness

# The session fixtures database_url and private_cluster (one server for all test modules).
pytest_plugins = ["pg_server"]

QUERIES = 500
# The server's connection count is checked only on the fixture's own cluster. On DATABASE_URL's
# server other clients' connections would be counted too, so the tests that count report a
# skip with this reason once every other check of theirs has passed.
SHARED_SERVER = "connections not counted: DATABASE_URL is a server other clients may use"
EXPECTED_CHECKSUM = sum(dbutil.item_value(dbutil.item_id(i)) for i in range(QUERIES))


class ConnectionWatcher:
    """Polls pg_stat_activity while a run goes on; `peak` is the most client connections seen."""

    def __init__(self, url: str) -> None:
        import psycopg2

        self.conn = psycopg2.connect(url)
        self.conn.autocommit = True
        self.peak, self.stop = 0, threading.Event()
        self.thread = threading.Thread(target=self.poll, daemon=True)

    def poll(self) -> None:
        with self.conn.cursor() as cur:
            while not self.stop.is_set():
                cur.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                    " AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
                )
                self.peak = max(self.peak, cur.fetchone()[0])
                time.sleep(0.01)

    def __enter__(self) -> ConnectionWatcher:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join()
        self.conn.close()


def run_db(harness_run, url, variant, **params):
    run = harness_run(
        "workloads/db.py", variant, {"queries": QUERIES, **params}, {"database_url": url}
    )
    assert run.returncode == 0, run.stderr
    assert run.events == ["ready", "go", "done", "result"]
    return run.result


def test_item_ids_are_a_permutation():
    ids = [dbutil.item_id(i) for i in range(dbutil.ITEMS)]
    assert sorted(ids) == list(range(1, dbutil.ITEMS + 1))
    assert dbutil.item_id(0) == 1 and dbutil.item_id(1) == 7920


def test_urls_for_every_library():
    u = dbutil.urls("postgresql://me:p%40ss@127.0.0.1:5433/lab?sslmode=disable")
    assert u.libpq == u.asyncpg == "postgresql://me:p%40ss@127.0.0.1:5433/lab?sslmode=disable"
    assert u.sqlalchemy_sync == "postgresql+psycopg2://me:p%40ss@127.0.0.1:5433/lab?sslmode=disable"
    assert u.sqlalchemy_async.startswith("postgresql+asyncpg://me:p%40ss@127.0.0.1:5433/lab")
    assert dbutil.urls("postgres://u@h/d").asyncpg == "postgresql://u@h/d"
    with pytest.raises(ValueError):
        dbutil.urls("mysql://u@h/d")


def test_shares():
    assert harness.shares(10, 3) == [4, 3, 3] and harness.shares(2, 2) == [1, 1]


@pytest.mark.parametrize("variant", list(db.VARIANTS))
def test_variants_fetch_the_same_rows(harness_run, database_url, private_cluster, variant):
    with ConnectionWatcher(database_url) as watcher:
        res = run_db(harness_run, database_url, variant, concurrency=10)
    assert res["errors"] == 0 and res["error_samples"] == [], res["error_samples"]
    assert res["ops"] == QUERIES and len(res["latencies_ms"]) == QUERIES
    assert min(res["latencies_ms"]) > 0
    assert res["extra"]["rows"] == QUERIES
    assert res["extra"]["checksum"] == EXPECTED_CHECKSUM
    assert res["extra"]["workers"] == 10 and res["extra"]["connections"] == 10
    if not private_cluster:
        pytest.skip(SHARED_SERVER)
    assert watcher.peak == 10, f"{variant} held {watcher.peak} connections, not 10"


@pytest.mark.parametrize("variant", ["psycopg2_threads", "sqlalchemy_async", "multiprocessing"])
def test_fewer_connections_than_workers(harness_run, database_url, private_cluster, variant):
    with ConnectionWatcher(database_url) as watcher:
        res = run_db(harness_run, database_url, variant, concurrency=8, pool_size=3)
    assert res["errors"] == 0 and res["ops"] == QUERIES
    assert res["extra"]["checksum"] == EXPECTED_CHECKSUM and res["extra"]["connections"] == 3
    if not private_cluster:
        pytest.skip(SHARED_SERVER)
    assert watcher.peak == 3


@pytest.mark.parametrize("variant", list(db.VARIANTS))
def test_a_request_of_k_queries_fetches_k_rows_each(harness_run, database_url, variant):
    k, requests = 3, 100
    res = run_db(
        harness_run, database_url, variant, queries=requests, queries_per_request=k, concurrency=4
    )
    assert res["errors"] == 0 and res["ops"] == requests, res["error_samples"]
    assert res["extra"]["rows"] == k * requests
    ids = (dbutil.item_id(i) for i in range(k * requests))
    assert res["extra"]["checksum"] == sum(dbutil.item_value(i) for i in ids)


def test_unreachable_server_fails_in_setup(harness_run):
    run = harness_run(
        "workloads/db.py",
        "asyncpg",
        {"queries": 1},
        {"database_url": "postgresql://x@127.0.0.1:9/x"},
    )
    assert run.returncode == 1 and run.events == ["error"]
    assert run.message("error")["phase"] == "setup"
