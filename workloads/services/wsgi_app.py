"""The synchronous service under test: a Flask WSGI app for gunicorn (sync, gthread) and granian.

Blocking clients, one pool of each per worker process, made on first use after the server has
forked the worker: psycopg 3 through psycopg_pool (ASYNCLAB_DB_POOL connections, autocommit, so a
request is its queries and no BEGIN/COMMIT, as with asyncpg) and urllib3 (ASYNCLAB_UPSTREAM_POOL
keep-alive connections; a thread that finds them all busy waits for one, as the async clients do).
"""

from __future__ import annotations

import atexit
import os
import threading
from urllib.parse import urlsplit

import urllib3
from flask import Flask, Response, request
from psycopg_pool import ConnectionPool
from werkzeug.exceptions import HTTPException

import handlers
from handlers import CONFIG

app = Flask(__name__)

_lock = threading.Lock()
_clients: dict[str, object] = {"pid": None}


def _per_process() -> dict[str, object]:
    """This process's pools, (re)made when the pid changes: a forked worker never shares them."""
    if _clients["pid"] != os.getpid():
        with _lock:
            if _clients["pid"] != os.getpid():
                _clients.clear()
                _clients["pid"] = os.getpid()
    return _clients


def db_pool() -> ConnectionPool:
    clients = _per_process()
    pool = clients.get("db")
    if pool is None:
        url = CONFIG.require_database()
        with _lock:
            pool = clients.get("db")
            if pool is None:
                pool = ConnectionPool(
                    url, min_size=CONFIG.db_pool, max_size=CONFIG.db_pool, open=True,
                    kwargs={"autocommit": True}, timeout=handlers.WAIT_TIMEOUT_S,
                    name=f"asynclab-{os.getpid()}",
                )  # fmt: skip
                atexit.register(pool.close, timeout=1.0)
                clients["db"] = pool
    return pool  # type: ignore[return-value]


def upstream_pool() -> urllib3.HTTPConnectionPool:
    clients = _per_process()
    pool = clients.get("upstream")
    if pool is None:
        url = urlsplit(CONFIG.require_upstream())
        with _lock:
            pool = clients.get("upstream")
            if pool is None:
                pool = urllib3.HTTPConnectionPool(
                    url.hostname, url.port or 80, maxsize=CONFIG.upstream_pool, block=True,
                    retries=False,
                )  # fmt: skip
                clients["upstream"] = pool
    return pool  # type: ignore[return-value]


def answer(body: bytes, content_type: str = handlers.JSON_TYPE, status: int = 200) -> Response:
    # content_type (not mimetype) keeps the header exactly as given, with no charset appended.
    return Response(body, status=status, content_type=content_type)


@app.errorhandler(Exception)
def handler_error(exc: Exception) -> Response | HTTPException:
    if isinstance(exc, HTTPException):  # 404, 405: the framework's own answer, as in every app
        return exc
    status, body = handlers.error_answer(exc)
    return answer(body, handlers.PLAIN_TYPE, status)


@app.get("/plain")
def plain() -> Response:
    return answer(handlers.PLAIN_BODY, handlers.PLAIN_TYPE)


@app.get("/db")
def db() -> Response:
    raw = request.args.get("queries")
    ids = handlers.random_ids(handlers.clamp_queries(raw))
    with db_pool().connection() as conn, conn.cursor() as cur:
        rows = []
        for id_ in ids:
            cur.execute(handlers.ITEM_SQL_PERCENT, (id_,))
            rows.append(cur.fetchone())
    return answer(handlers.json_body(handlers.db_answer(rows, many=raw is not None)))


@app.get("/upstream")
def upstream() -> Response:
    delay_ms, nbytes = handlers.upstream_params(
        request.args.get("delay_ms"), request.args.get("bytes")
    )
    timeout = handlers.upstream_timeout(delay_ms)
    resp = upstream_pool().request(
        "GET", handlers.upstream_path(delay_ms, nbytes),
        timeout=urllib3.Timeout(total=timeout), pool_timeout=handlers.WAIT_TIMEOUT_S,
    )  # fmt: skip
    return answer(handlers.json_body(handlers.upstream_answer(resp.status, resp.data)))


@app.get("/cpu")
def cpu() -> Response:
    items = handlers.clamp_items(request.args.get("items"))
    return answer(handlers.json_body(handlers.render_cpu(items)))
