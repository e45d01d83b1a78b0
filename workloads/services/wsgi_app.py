"""The sync service under test: Flask (WSGI), for gunicorn's sync and gthread workers and granian.

Each worker process opens its own pools on first use (after gunicorn forks it): a psycopg 3
connection pool of `ASYNCLAB_DB_POOL` connections and a keep-alive urllib3 pool to the upstream.
"""

from __future__ import annotations

import os
import threading

import urllib3
from flask import Flask, Response, request

import handlers

app = Flask(__name__)
JSON = "application/json"

_lock = threading.Lock()
_pools: dict[str, object] = {"pid": None}


def pools() -> dict[str, object]:
    """This process's pools, opened once per process (a forked worker opens its own)."""
    if _pools["pid"] != os.getpid():
        with _lock:
            if _pools["pid"] != os.getpid():
                _pools["db"] = None
                _pools["http"] = urllib3.PoolManager(maxsize=handlers.UPSTREAM_POOL, block=True)
                _pools["pid"] = os.getpid()
    return _pools


def db_pool():
    p = pools()
    if p["db"] is None:
        with _lock:
            if p["db"] is None:
                from psycopg_pool import ConnectionPool

                p["db"] = ConnectionPool(
                    handlers.need_database(),
                    min_size=handlers.DB_POOL,
                    max_size=handlers.DB_POOL,
                    open=True,
                )
    return p["db"]


@app.errorhandler(handlers.Unavailable)
def unavailable(exc: handlers.Unavailable) -> Response:
    return Response(str(exc), status=503, mimetype="text/plain")


@app.get("/plain")
def plain() -> Response:
    return Response(handlers.PLAIN_BODY, mimetype="text/plain")


@app.get("/db")
def db() -> Response:
    queries = handlers.queries_of(request.args.get("queries"))
    ids = handlers.random_ids(queries or 1)
    with db_pool().connection() as conn:
        rows = [conn.execute(handlers.SQL_PSYCOPG, (i,)).fetchone() for i in ids]
    return Response(handlers.db_answer(rows, queries), mimetype=JSON)


@app.get("/upstream")
def upstream() -> Response:
    url = handlers.upstream_target(request.args.get("delay_ms"), request.args.get("bytes"))
    r = pools()["http"].request("GET", url)
    return Response(handlers.upstream_answer(r.status, r.data), mimetype=JSON)


@app.get("/cpu")
def cpu() -> Response:
    return Response(handlers.cpu_answer(request.args.get("items")), mimetype=JSON)
