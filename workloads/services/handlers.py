"""The handler logic every service under test shares: parameters, answers, SQL, config.

No framework is imported here. Each app (wsgi_app.py, asgi_app.py, aiohttp_app.py) only moves
bytes between its framework and these functions, so a difference between two servers is the
server's and the concurrency model's, never a difference of handler code. JSON is stdlib `json`
with the same separators everywhere.
"""

from __future__ import annotations

import html
import json
import logging
import math
import os
import random
from dataclasses import dataclass

PLAIN_BODY = b"Hello, World!"
JSON_TYPE = "application/json"
PLAIN_TYPE = "text/plain"

# asynclab.items as the driver seeds it (src/services/postgres/seed.sql): ids 1..ITEM_COUNT,
# value = item_value(id).
ITEM_COUNT = 100_000
ITEM_SQL_DOLLAR = "SELECT id, value FROM asynclab.items WHERE id = $1"  # asyncpg
ITEM_SQL_PERCENT = "SELECT id, value FROM asynclab.items WHERE id = %s"  # psycopg 3

# /db?queries=N: N is clamped to 1..MAX_QUERIES, and anything that is not an integer counts as 1.
MAX_QUERIES = 500
# /cpu?items=K: K is clamped to 1..MAX_ITEMS; absent or not an integer means DEFAULT_ITEMS.
DEFAULT_ITEMS = 100
MAX_ITEMS = 10_000
# /upstream?delay_ms=D&bytes=B defaults.
DEFAULT_DELAY_MS = 10.0
DEFAULT_BYTES = 64

# Waiting for a pooled connection, or for a query, longer than this is a handler error (500): a
# handler never hangs. Upstream requests get this much on top of the delay they ask for.
WAIT_TIMEOUT_S = 30.0

log = logging.getLogger("asynclab.services")


def item_value(id_: int) -> int:
    """The `value` the seed stored for `id_`; the load generator checks every row against it."""
    return (id_ * 7919) % 100_000


def random_ids(n: int) -> list[int]:
    """`n` ids drawn uniformly from the seeded table (repeats allowed, as in TechEmpower)."""
    return [random.randint(1, ITEM_COUNT) for _ in range(n)]


def clamp_queries(raw: str | None) -> int:
    """TechEmpower's rule for `queries`: missing or not an integer -> 1, else clamped to 1..500."""
    try:
        n = int(raw) if raw is not None else 1
    except ValueError:
        return 1
    return min(max(n, 1), MAX_QUERIES)


def clamp_items(raw: str | None) -> int:
    """`items` of /cpu: missing or not an integer -> DEFAULT_ITEMS, else clamped to 1..MAX_ITEMS."""
    try:
        k = int(raw) if raw is not None else DEFAULT_ITEMS
    except ValueError:
        return DEFAULT_ITEMS
    return min(max(k, 1), MAX_ITEMS)


def db_answer(rows: list[tuple[int, int]], many: bool) -> dict | list[dict]:
    """/db's answer: one `{"id", "value"}` object without `queries`, a list of them with it."""
    objects = [{"id": id_, "value": value} for id_, value in rows]
    return objects if many else objects[0]


def render_cpu(items: int) -> dict:
    """A fixed pure-Python render of `items` rows into an HTML-like page, and what it made.

    The same work for the same `items` on every server: build one small dict per row, format
    and escape each into a list item, join them. `checksum` lets the client check the answer.
    """
    rows = [{"name": f"item-{i}", "value": item_value(i)} for i in range(1, items + 1)]
    parts = ['<ul class="items">']
    for row in rows:
        parts.append(
            f'<li><span class="name">{html.escape(row["name"])}</span>'
            f'<span class="value">{row["value"]}</span></li>'
        )
    parts.append("</ul>")
    rendered = "\n".join(parts)
    return {
        "items": items,
        "checksum": sum(row["value"] for row in rows),
        "bytes": len(rendered.encode()),
    }


class BadRequest(ValueError):
    """A query parameter the endpoint cannot use: answered 400 with the message."""


class Unavailable(RuntimeError):
    """The endpoint's backend is not configured: answered 503 with the message."""


def upstream_params(delay_raw: str | None, bytes_raw: str | None) -> tuple[float, int]:
    """`delay_ms` (milliseconds, fractions allowed, >= 0) and `bytes` (>= 0) of /upstream."""
    try:
        delay_ms = float(delay_raw) if delay_raw is not None else DEFAULT_DELAY_MS
        nbytes = int(bytes_raw) if bytes_raw is not None else DEFAULT_BYTES
    except ValueError as exc:
        raise BadRequest(f"bad /upstream parameter: {exc}") from None
    if not math.isfinite(delay_ms) or delay_ms < 0 or nbytes < 0:
        raise BadRequest("bad /upstream parameter: delay_ms and bytes must be finite and >= 0")
    return delay_ms, nbytes


def upstream_path(delay_ms: float, nbytes: int) -> str:
    """The mock server's request: `GET /delay/{ms}?bytes=N` answers N zero bytes after ms."""
    ms = str(int(delay_ms)) if float(delay_ms).is_integer() else repr(float(delay_ms))
    return f"/delay/{ms}?bytes={nbytes}"


def upstream_timeout(delay_ms: float) -> float:
    """Seconds an upstream request may take in all: the delay it asks for plus WAIT_TIMEOUT_S."""
    return delay_ms / 1000 + WAIT_TIMEOUT_S


def upstream_answer(status: int, body: bytes) -> dict:
    """/upstream's answer: the upstream's status and how many body bytes came back."""
    return {"status": status, "bytes": len(body)}


def json_body(obj: object) -> bytes:
    """The one JSON encoding every app sends."""
    return json.dumps(obj, separators=(",", ":")).encode()


def error_answer(exc: BaseException) -> tuple[int, bytes]:
    """Status and one-line text body for a failed handler: 400, 503, or 500 for anything else.

    Unexpected errors are logged with their traceback once per process (a broken backend under
    load would otherwise flood the log); every one of them is still answered 500.
    """
    if isinstance(exc, BadRequest):
        return 400, str(exc).encode()
    if isinstance(exc, Unavailable):
        return 503, str(exc).encode()
    if not _logged_error[0]:
        _logged_error[0] = True
        log.error("handler error (later ones are answered 500 without a log line)", exc_info=exc)
    line = f"handler error: {type(exc).__name__}: {exc}".splitlines()[0]
    return 500, line.encode(errors="replace")


_logged_error = [False]


@dataclass(frozen=True)
class Config:
    """The services' environment, read once per process."""

    database_url: str | None  # ASYNCLAB_DATABASE_URL: postgresql://...; None: /db answers 503
    upstream_url: str | None  # ASYNCLAB_UPSTREAM_URL: http://127.0.0.1:PORT; None: 503
    db_pool: int  # ASYNCLAB_DB_POOL: database connections per worker process (default 1)
    upstream_pool: int  # ASYNCLAB_UPSTREAM_POOL: upstream connections per process (default db_pool)

    def require_database(self) -> str:
        if not self.database_url:
            raise Unavailable("ASYNCLAB_DATABASE_URL is not set: /db has no database")
        return self.database_url

    def require_upstream(self) -> str:
        if not self.upstream_url:
            raise Unavailable("ASYNCLAB_UPSTREAM_URL is not set: /upstream has no upstream")
        return self.upstream_url


def _positive(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise SystemExit(f"{name}={raw!r}: expected a whole number >= 1")
    return value


def load_config() -> Config:
    """Config from the environment; a malformed pool size stops the process with a message."""
    db_pool = _positive("ASYNCLAB_DB_POOL", 1)
    return Config(
        database_url=os.environ.get("ASYNCLAB_DATABASE_URL", "").strip() or None,
        upstream_url=os.environ.get("ASYNCLAB_UPSTREAM_URL", "").strip().rstrip("/") or None,
        db_pool=db_pool,
        upstream_pool=_positive("ASYNCLAB_UPSTREAM_POOL", db_pool),
    )


CONFIG = load_config()
