"""The one handler logic every service under test shares: endpoints, answers and configuration.

No framework is imported here. Each app (`wsgi_app`, `asgi_app`, `aiohttp_app`) only adapts
these functions to its framework, so the servers differ in how they run handlers, never in what
the handlers do. The lab's load generator checks every answer against the same rules
(`src/loadgen/check.rs`): `/plain` gives `Hello, World!`; `/db` a row whose value is
`item_value(id)`; `/cpu` the checksum of `render_cpu`; `/upstream` the upstream's status and
byte count.
"""

from __future__ import annotations

import json
import os
import random

PLAIN_BODY = b"Hello, World!"
# The seeded table (src/services/postgres/seed.sql): ids 1..ITEM_COUNT, value (id * 7919) % 100000.
ITEM_COUNT = 100_000
SQL_PSYCOPG = "SELECT id, value FROM asynclab.items WHERE id = %s"
SQL_ASYNCPG = "SELECT id, value FROM asynclab.items WHERE id = $1"
MAX_QUERIES = 500
MAX_ITEMS = 10_000

DATABASE_URL = os.environ.get("ASYNCLAB_DATABASE_URL", "")
UPSTREAM_URL = os.environ.get("ASYNCLAB_UPSTREAM_URL", "").rstrip("/")
DB_POOL = max(1, int(os.environ.get("ASYNCLAB_DB_POOL", "1")))
UPSTREAM_POOL = max(1, int(os.environ.get("ASYNCLAB_UPSTREAM_POOL", str(DB_POOL))))


class Unavailable(Exception):
    """A service the endpoint needs was not given (answered 503 with this message)."""


def item_value(item_id: int) -> int:
    return (item_id * 7919) % 100_000


def random_ids(n: int) -> list[int]:
    return [random.randint(1, ITEM_COUNT) for _ in range(n)]


def clamp(raw: str | None, default: int, low: int, high: int) -> int:
    """A query parameter as TechEmpower reads it: missing or not a number gives `default`."""
    try:
        value = int(raw) if raw is not None else default
    except ValueError:
        value = default
    return max(low, min(high, value))


def queries_of(raw: str | None) -> int | None:
    """`/db?queries=N`: None for a single query (one object), else N clamped to 1..500 (a list)."""
    return None if raw is None else clamp(raw, 1, 1, MAX_QUERIES)


def db_answer(rows: list[tuple[int, int]], queries: int | None) -> bytes:
    objects = [{"id": i, "value": v} for i, v in rows]
    return to_json(objects[0] if queries is None else objects)


def render_cpu(items: int) -> dict:
    """A fixed pure-Python render of `items` rows: the CPU a template of that size costs."""
    rows = [{"name": f"item-{i}", "value": item_value(i)} for i in range(1, items + 1)]
    html = "".join(f"<tr><td>{r['name']}</td><td>{r['value']}</td></tr>" for r in rows)
    return {"items": items, "checksum": sum(r["value"] for r in rows), "bytes": len(html)}


def cpu_answer(raw: str | None) -> bytes:
    return to_json(render_cpu(clamp(raw, 100, 1, MAX_ITEMS)))


def upstream_target(delay_raw: str | None, bytes_raw: str | None) -> str:
    """The URL of the upstream call: the mock server's `/delay/{ms}?bytes=N`."""
    if not UPSTREAM_URL:
        raise Unavailable("no upstream: ASYNCLAB_UPSTREAM_URL is not set")
    try:
        delay = max(0.0, float(delay_raw)) if delay_raw is not None else 10.0
    except ValueError:
        delay = 10.0
    nbytes = clamp(bytes_raw, 64, 0, 1_000_000)
    return f"{UPSTREAM_URL}/delay/{delay:g}?bytes={nbytes}"


def upstream_answer(status: int, body: bytes) -> bytes:
    return to_json({"status": status, "bytes": len(body)})


def need_database() -> str:
    if not DATABASE_URL:
        raise Unavailable("no database: ASYNCLAB_DATABASE_URL is not set")
    return DATABASE_URL


def to_json(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()
