"""The services under test (workloads/services/): each start command serves every endpoint the
same way and stops on SIGTERM with no process left (the /db checks are in test_services_db.py)."""

from __future__ import annotations

import sys
import threading
import time

import pytest

import dbutil
from service_runner import (
    REFERENCES,
    ROOMS,
    SERVERS,
    SERVICES,
    STOP_WITHIN_S,
    Service,
    catalogue_servers,
    free_port,
    service_env,
)

sys.path.insert(0, str(SERVICES))
import handlers  # noqa: E402 - workloads/services/ is put on the path just above


def test_handlers_agree_with_the_seed_the_db_workloads_use():
    assert handlers.ITEM_COUNT == dbutil.ITEMS
    assert all(handlers.item_value(i) == dbutil.item_value(i) for i in (1, 2, 7919, 100_000))


def test_parameters_are_clamped_as_documented():
    assert [handlers.clamp_queries(r) for r in (None, "", "x", "0", "-3", "7", "501")] == [
        *(1, 1, 1, 1, 1, 7, 500)
    ]
    assert [handlers.clamp_items(r) for r in (None, "x", "0", "10", "10001")] == [
        *(100, 100, 1, 10, 10_000)
    ]
    assert handlers.upstream_params(None, None) == (10.0, 64)
    assert handlers.upstream_params("0.5", "0") == (0.5, 0)
    for bad in (("x", None), (None, "1.5"), ("-1", None), ("nan", None), (None, "-1")):
        with pytest.raises(handlers.BadRequest):
            handlers.upstream_params(*bad)
    assert handlers.upstream_path(10.0, 64) == "/delay/10?bytes=64"
    assert handlers.upstream_path(0.5, 0) == "/delay/0.5?bytes=0"


def test_render_cpu_is_deterministic_and_checksummed():
    first = handlers.render_cpu(10)
    assert first == handlers.render_cpu(10)
    assert first["items"] == 10
    assert first["checksum"] == sum(handlers.item_value(i) for i in range(1, 11))
    assert handlers.render_cpu(20)["bytes"] > first["bytes"] > 0


def test_a_missing_backend_is_a_one_line_503():
    config = handlers.Config(None, None, 1, 1)
    for require in (config.require_database, config.require_upstream):
        with pytest.raises(handlers.Unavailable) as raised:
            require()
        status, body = handlers.error_answer(raised.value)
        assert status == 503 and body and b"\n" not in body


@pytest.mark.parametrize("name", list(SERVERS))
def test_server_serves_every_endpoint_and_stops_on_sigterm(name, http_url):
    service = Service(name, service_env(ASYNCLAB_UPSTREAM_URL=http_url))
    try:
        service.wait_ready()
        plain = service.get("/plain")
        assert (plain.status, plain.content_type) == (200, "text/plain")
        assert plain.body == handlers.PLAIN_BODY == b"Hello, World!"

        cpu = service.get("/cpu?items=10")
        assert cpu.status == 200
        assert cpu.json() == handlers.render_cpu(10)
        assert cpu.json()["checksum"] == sum((i * 7919) % 100_000 for i in range(1, 11))
        assert service.get("/cpu").json()["items"] == handlers.DEFAULT_ITEMS

        upstream = service.get("/upstream?delay_ms=5&bytes=10")
        assert upstream.status == 200, upstream.body
        assert upstream.json() == {"status": 200, "bytes": 10}
        assert service.get("/upstream").json() == {"status": 200, "bytes": 64}
        bad = service.get("/upstream?delay_ms=soon")
        assert (bad.status, bad.content_type) == (400, "text/plain")

        no_db = service.get("/db")
        assert (no_db.status, no_db.content_type) == (503, "text/plain")
        assert b"ASYNCLAB_DATABASE_URL" in no_db.body and b"\n" not in no_db.body

        # The keep-alive connection stays open across the SIGTERM, as a load generator's may.
        left = service.stop()
        assert not left, f"{name}: {STOP_WITHIN_S} s after SIGTERM still running: {left}"
        assert service.proc.returncode is not None, f"{name}: the server process did not exit"
    finally:
        service.kill()


@pytest.mark.parametrize("name", list(SERVERS))
def test_a_request_in_flight_does_not_keep_the_server_past_sigterm(name, http_url):
    service = Service(name, service_env(ASYNCLAB_UPSTREAM_URL=http_url))
    try:
        service.wait_ready()
        slow = threading.Thread(target=service.get_quietly, args=("/upstream?delay_ms=30000",))
        slow.start()
        time.sleep(0.5)  # the request is in a worker, waiting on the upstream
        left = service.stop()
        assert not left, f"{name}: {STOP_WITHIN_S} s after SIGTERM still running: {left}"
        slow.join(timeout=5)
    finally:
        service.kill()


@pytest.mark.parametrize("name", list(SERVERS))
def test_a_failing_backend_is_answered_500_not_left_hanging(name):
    closed = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    service = Service(name, service_env(ASYNCLAB_UPSTREAM_URL=closed))
    try:
        service.wait_ready()
        started = time.monotonic()
        failed = service.get("/upstream?delay_ms=0")
        assert (failed.status, failed.content_type) == (500, "text/plain"), failed.body
        assert failed.body.startswith(b"handler error: ") and b"\n" not in failed.body
        assert time.monotonic() - started < 5
        assert service.get("/plain").status == 200  # the worker still serves
        assert not service.stop()
    finally:
        service.kill()


def test_every_catalogue_server_is_tested():
    # Here, in test_ws_rooms.py (the WebSocket rooms) or by the Rust tests (the lab's own).
    assert sorted(catalogue_servers()) == sorted([*SERVERS, *ROOMS, *REFERENCES])
