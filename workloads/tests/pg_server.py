"""Session fixture: a seeded PostgreSQL for the database workloads (DATABASE_URL or a private one).

With `DATABASE_URL` set, that server is used (and seeded if the tables are missing). Otherwise the
fixture does what the driver's `--pg local` does: `initdb` in a temporary directory (as the
`postgres` user when running as root), `postgres` on a free loopback port, a database `asynclab`,
the seed; at the end the server is stopped (fast shutdown) and the directory removed.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

USER = DATABASE = "asynclab"
SERVER_SETTINGS = {
    "listen_addresses": "127.0.0.1",
    "max_connections": "250",
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
}
STARTUP_TIMEOUT_S = 30.0

# The driver's seed (src/services/postgres/seed.rs): its SQL file itself, run in one transaction
# under the driver's advisory lock ("asynclab" in ASCII) and marked with its version comment;
# test_shared_with_driver.py fails when these constants and seed.rs's differ.
SEED_SQL = (Path(__file__).resolve().parents[2] / "src/services/postgres/seed.sql").read_text()
LOCK_KEY = 0x6173_796E_636C_6162
SEED_COMMENT = "asynclab seed v1"
COUNTS = {"items": 100_000, "authors": 100, "books": 500}


def seed(url: str) -> str:
    """Create and fill the asynclab tables unless present with the right counts and version."""
    import psycopg2

    conn = psycopg2.connect(url, connect_timeout=10)
    try:
        with conn, conn.cursor() as cur:  # one transaction, committed on success
            cur.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
            cur.execute(
                "SELECT to_regclass('asynclab.items') IS NOT NULL"
                " AND to_regclass('asynclab.authors') IS NOT NULL"
                " AND to_regclass('asynclab.books') IS NOT NULL"
            )
            if cur.fetchone()[0]:
                cur.execute(
                    "SELECT (SELECT count(*) FROM asynclab.items),"
                    " (SELECT count(*) FROM asynclab.authors),"
                    " (SELECT count(*) FROM asynclab.books),"
                    " coalesce(obj_description('asynclab.items'::regclass, 'pg_class'), '')"
                )
                *counts, comment = cur.fetchone()
                if counts == list(COUNTS.values()) and comment == SEED_COMMENT:
                    return "already seeded"
            cur.execute(
                "CREATE SCHEMA IF NOT EXISTS asynclab;"
                " DROP TABLE IF EXISTS asynclab.books, asynclab.authors, asynclab.items;"
            )
            cur.execute(SEED_SQL)
            cur.execute(f"COMMENT ON TABLE asynclab.items IS '{SEED_COMMENT}'")
        return "seeded"
    finally:
        conn.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LocalCluster:
    """initdb + postgres in a temporary directory; `stop()` shuts it down and removes it all."""

    def __init__(self) -> None:
        missing = [b for b in ("initdb", "postgres") if shutil.which(b) is None]
        if missing:
            pytest.fail(
                f"PostgreSQL server binaries not on PATH ({', '.join(missing)}): install "
                "PostgreSQL or set DATABASE_URL to a server the tests may seed",
                pytrace=False,
            )
        self.dir = Path(tempfile.mkdtemp(prefix="asynclab-test-pg-"))
        self.data, self.log = self.dir / "data", self.dir / "postgres.log"
        self.proc: subprocess.Popen | None = None
        self.as_user: dict = {}
        if os.geteuid() == 0:  # initdb and postgres refuse to run as root
            import pwd

            try:
                pw = pwd.getpwnam("postgres")
            except KeyError:
                shutil.rmtree(self.dir, ignore_errors=True)
                pytest.fail(
                    "running as root, and initdb refuses root, but there is no `postgres` user: "
                    "create one (useradd --system postgres) or set DATABASE_URL",
                    pytrace=False,
                )
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
            self.as_user = {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": []}

    def start(self) -> str:
        init = [
            *("initdb", "-D", str(self.data), "-U", USER),
            *("--auth=trust", "--no-sync", "-E", "UTF8"),
        ]
        done = subprocess.run(
            init, cwd=self.dir, capture_output=True, text=True, check=False, **self.as_user
        )
        if done.returncode != 0:
            raise RuntimeError(f"initdb failed: {done.stderr.strip()[-2000:]}")
        for attempt in range(3):  # another process may grab the port between probe and bind
            port = free_port()
            settings = [f"-c{k}={v}" for k, v in SERVER_SETTINGS.items()]
            cmd = ["postgres", "-D", str(self.data), "-p", str(port), "-k", str(self.dir)]
            with open(self.log, "ab") as log:
                self.proc = subprocess.Popen(
                    [*cmd, *settings], cwd=self.dir, stdin=subprocess.DEVNULL, stdout=log,
                    stderr=subprocess.STDOUT, start_new_session=True, **self.as_user,
                )  # fmt: skip
            if self.wait_ready(port):
                break
            self.stop_server()
            if attempt == 2:
                raise RuntimeError(f"postgres did not start; log:\n{self.log_tail()}")
        self.execute(port, "postgres", f"CREATE DATABASE {DATABASE}")
        return f"postgresql://{USER}@127.0.0.1:{port}/{DATABASE}"

    def execute(self, port: int, dbname: str, sql: str) -> None:
        import psycopg2

        conn = psycopg2.connect(host="127.0.0.1", port=port, user=USER, dbname=dbname)
        try:
            conn.autocommit = True
            with conn.cursor() as cur:
                cur.execute(sql)
        finally:
            conn.close()

    def wait_ready(self, port: int) -> bool:
        import psycopg2

        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                psycopg2.connect(
                    host="127.0.0.1", port=port, user=USER, dbname="postgres", connect_timeout=2
                ).close()
                return True
            except psycopg2.OperationalError:
                time.sleep(0.05)
        return False

    def log_tail(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-2000:]
        except OSError:
            return ""

    def stop_server(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGINT)  # fast shutdown
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def stop(self) -> None:
        try:
            self.stop_server()
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


_private = {"cluster": False}


@pytest.fixture(scope="session")
def database_url():
    """`postgresql://...` of a seeded server: DATABASE_URL, else a throwaway local cluster."""
    url = os.environ.get("DATABASE_URL", "").strip()
    if url:
        seed(url)
        yield url
        return
    cluster = LocalCluster()
    try:
        url = cluster.start()
        seed(url)
        _private["cluster"] = True
        yield url
    finally:
        _private["cluster"] = False
        cluster.stop()


@pytest.fixture(scope="session")
def private_cluster(database_url) -> bool:
    """True when the server is the fixture's own (nobody else's connections to count)."""
    return _private["cluster"]
