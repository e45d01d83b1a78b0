"""What the pytest fixtures share with the driver: the worker environment and the seed SQL are
the driver's own files; the seed's constants, kept here too, must equal seed.rs's."""

from __future__ import annotations

import os
import re

import pg_server
from conftest import WORKER_ENV, WORKLOADS, child_env

SEED_RS = WORKLOADS.parent / "src/services/postgres/seed.rs"


def rust_const(name: str) -> int:
    """The integer value of `const NAME: T = ...;` in seed.rs."""
    found = re.search(rf"const {name}: \w+ = (0x[0-9a-fA-F_]+|[0-9_]+);", SEED_RS.read_text())
    assert found, f"no const {name} in {SEED_RS}"
    return int(found[1].replace("_", ""), 0)


def test_the_fixture_env_is_the_driver_file(monkeypatch):
    monkeypatch.setenv("ASYNCLAB_NOT_KEPT", "1")
    monkeypatch.setenv("LANG", "C.UTF-8")
    env = child_env()
    assert "ASYNCLAB_NOT_KEPT" not in env and env["LANG"] == "C.UTF-8"
    assert env["PYTHONHASHSEED"] == "0" and env["PYTHONDONTWRITEBYTECODE"] == "1"
    assert env["PATH"] == os.environ["PATH"]
    assert 'include_str!("worker_env.txt")' in (WORKER_ENV.parent / "process.rs").read_text()


def test_the_seed_sql_is_the_driver_file():
    assert (
        pg_server.SEED_SQL.startswith("-- ") and "CREATE TABLE asynclab.items" in pg_server.SEED_SQL
    )
    assert 'include_str!("seed.sql")' in SEED_RS.read_text()


def test_the_seed_constants_equal_the_drivers():
    assert pg_server.LOCK_KEY == rust_const("LOCK_KEY")
    assert pg_server.SEED_COMMENT == f"asynclab seed v{rust_const('SEED_VERSION')}"
    assert 'format!("asynclab seed v{SEED_VERSION}")' in SEED_RS.read_text()
    for table, count in pg_server.COUNTS.items():
        assert count == rust_const(f"{table.upper()}_ROWS"), table
        insert = re.search(
            rf"INSERT INTO asynclab\.{table} .* generate_series\(1, (\d+)\)", pg_server.SEED_SQL
        )
        assert insert and int(insert[1]) == count, table
