"""Correctness study, not a timing: how asyncio behaves where code commonly goes wrong.

One variant, `checks`, reports rows `{"case", "expected", "observed", "ok"}` in `extra["rows"]`;
`observed` is built from what really happened (exception types, task states, measured seconds),
never copied from `expected`. `ops` counts rows that behaved as expected, `errors` the others.
Runs on every interpreter from 3.10 (TaskGroup rows say "n/a" before 3.11; no `except*`).

- gather vs TaskGroup at the first error: what the caller sees, and whether the siblings finish
  or are cancelled;
- a forgotten `await`: the coroutine object is truthy; the RuntimeWarning appears only when the
  object is garbage collected (at once by reference counting, or at `gc.collect()` in a cycle);
- five 0.1 s "requests" with `time.sleep` in the coroutine (serial, ~0.5 s, and every other task
  stalls), `await asyncio.sleep` (~0.1 s) and `asyncio.to_thread(time.sleep)` (~0.1 s); a
  heartbeat task ticking every 10 ms shows the stall. Bounds are honest for a busy machine:
  blocking >= 0.49 s total and a heartbeat gap >= 0.45 s; the others 0.098-0.25 s and gaps < 0.25 s;
- fire-and-forget tasks with no reference kept, `gc.collect()` while they wait: all complete.
"""

from __future__ import annotations

import asyncio
import gc
import sys
import time
import warnings

import harness

PARAMS = {"loop": "asyncio", "request_s": 0.1, "requests": 5, "fire_and_forget": 200}

FAIL_AFTER_S, SIBLING_S = 0.01, (0.05, 0.1)


class Boom(ValueError):
    """The first error a child raises."""


async def _fail() -> None:
    await asyncio.sleep(FAIL_AFTER_S)
    raise Boom("first error")


async def _sibling(delay: float, states: dict, name: str) -> str:
    states[name] = "running"
    try:
        await asyncio.sleep(delay)
    except asyncio.CancelledError:
        states[name] = "cancelled"
        raise
    states[name] = "finished"
    return name


def _siblings_text(states: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(states.items()))


async def gather_first_error() -> list[tuple[str, str, str, bool]]:
    states: dict = {}
    seen, t0 = "returned normally", time.perf_counter()
    try:
        await asyncio.gather(
            _fail(), _sibling(SIBLING_S[0], states, "a"), _sibling(SIBLING_S[1], states, "b")
        )
    except BaseException as exc:  # noqa: BLE001 - observe whatever the caller gets
        seen = f"raises {type(exc).__name__} after {time.perf_counter() - t0:.2f} s"
    at_error = dict(states)
    await asyncio.sleep(max(SIBLING_S) + 0.05)  # give the siblings time to finish, if they run
    return [
        (
            "gather: what the caller sees at the first error",
            "raises Boom (the child's own exception) at once",
            seen,
            seen.startswith("raises Boom"),
        ),
        (
            "gather: the siblings after the first error",
            "still running at the error, then finished (gather does not cancel them)",
            f"at the error: {_siblings_text(at_error)}; later: {_siblings_text(states)}",
            set(at_error.values()) == {"running"} and set(states.values()) == {"finished"},
        ),
    ]


async def taskgroup_first_error() -> list[tuple[str, str, str, bool]]:
    cases = (
        "TaskGroup: what the caller sees at the first error",
        "TaskGroup: the siblings after the first error",
    )
    if not hasattr(asyncio, "TaskGroup"):
        na = f"n/a on {sys.version_info.major}.{sys.version_info.minor}"
        observed = f"{na} (asyncio has no TaskGroup)"
        return [(case, f"n/a before 3.11 ({na})", observed, True) for case in cases]
    states: dict = {}
    seen, inner = "returned normally", []
    try:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(_fail())
            tg.create_task(_sibling(SIBLING_S[0], states, "a"))
            tg.create_task(_sibling(SIBLING_S[1], states, "b"))
    except BaseException as exc:  # noqa: BLE001 - ExceptionGroup; no except* on 3.10
        inner = [type(e).__name__ for e in getattr(exc, "exceptions", ())]
        seen = f"raises {type(exc).__name__}[{', '.join(inner)}]"
    at_exit = dict(states)
    await asyncio.sleep(max(SIBLING_S) + 0.05)
    return [
        (
            cases[0],
            "raises ExceptionGroup[Boom]",
            seen,
            seen.startswith("raises ExceptionGroup") and inner == ["Boom"],
        ),
        (
            cases[1],
            "cancelled before the caller sees the error, never finished",
            f"when the caller sees it: {_siblings_text(at_exit)}; later: {_siblings_text(states)}",
            set(at_exit.values()) == {"cancelled"} and set(states.values()) == {"cancelled"},
        ),
    ]


async def _returns_false() -> bool:
    return False


def forgotten_await() -> list[tuple[str, str, str, bool]]:
    rows = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        coro = _returns_false()
        branch = "taken" if coro else "not taken"  # the bug: should have been `await ...`
        kind = type(coro).__name__
        after_call = len(caught)
        del coro  # the last reference: finalized now, by reference counting
        after_del = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    rows.append(
        (
            "forgotten await: the value tested",
            "a coroutine object, truthy: `if check():` takes the branch though check() is False",
            f"{kind} object; the branch was {branch}",
            kind == "coroutine" and branch == "taken",
        )
    )
    rows.append(
        (
            "forgotten await: when the RuntimeWarning appears",
            "not at the call; when the coroutine is garbage collected (`del`, refcount 0)",
            f"warnings at the call: {after_call}; after del: {'; '.join(after_del) or 'none'}",
            after_call == 0 and any("was never awaited" in m for m in after_del),
        )
    )
    with harness.gc_disabled(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        holder: list = [_returns_false()]
        holder.append(holder)  # a reference cycle: refcounting alone never frees it
        del holder
        before_gc = len(caught)
        gc.collect()
        after_gc = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    rows.append(
        (
            "forgotten await in a reference cycle: when the warning appears",
            "only at the cyclic garbage collection (gc.collect()), not at `del`",
            f"warnings after del: {before_gc}; after gc.collect(): {len(after_gc)}",
            before_gc == 0 and any("was never awaited" in m for m in after_gc),
        )
    )
    return rows


async def _heartbeat(gaps: list[float], stop: asyncio.Event) -> None:
    last = time.perf_counter()
    while not stop.is_set():
        await asyncio.sleep(0.01)
        now = time.perf_counter()
        gaps.append(now - last)
        last = now


async def five_requests(kind: str, n: int, request_s: float) -> tuple[float, float]:
    """Total seconds for `n` concurrent requests of `request_s`, and the heartbeat's worst gap."""

    async def request() -> None:
        if kind == "time.sleep":
            time.sleep(request_s)  # the bug: blocks the loop
        elif kind == "asyncio.sleep":
            await asyncio.sleep(request_s)
        else:
            await asyncio.to_thread(time.sleep, request_s)

    gaps: list[float] = []
    stop = asyncio.Event()
    beat = asyncio.ensure_future(_heartbeat(gaps, stop))
    await asyncio.sleep(0.02)  # the heartbeat is ticking
    t0 = time.perf_counter()
    await asyncio.gather(*(request() for _ in range(n)))
    total = time.perf_counter() - t0
    await asyncio.sleep(0.02)
    stop.set()
    await beat
    return total, max(gaps)


async def blocking_rows(n: int, request_s: float) -> list[tuple[str, str, str, bool]]:
    rows = []
    for kind in ("time.sleep", "asyncio.sleep", "asyncio.to_thread"):
        total, gap = await five_requests(kind, n, request_s)
        observed = f"{total:.3f} s total; heartbeat's longest gap {gap:.3f} s"
        if kind == "time.sleep":
            expected = f"serial: >= {n * request_s * 0.98:.2f} s, every other task stalled"
            ok = total >= n * request_s * 0.98 and gap >= (n - 0.5) * request_s
        else:
            expected = f"concurrent: about {request_s} s (< {2.5 * request_s:.2f} s), no stall"
            ok = request_s * 0.98 <= total < 2.5 * request_s and gap < 2.5 * request_s
        rows.append((f"{n} x {request_s} s requests with {kind}", expected, observed, ok))
    return rows


async def fire_and_forget(n: int) -> list[tuple[str, str, str, bool]]:
    done: list[int] = []

    async def job(i: int) -> None:
        await asyncio.sleep(0.02)
        done.append(i)

    for i in range(n):
        asyncio.ensure_future(job(i))  # no reference kept
    gc.collect()
    await asyncio.sleep(0.2)
    return [
        (
            f"{n} fire-and-forget tasks, no reference kept, gc.collect() while they wait",
            f"all {n} complete (the loop's timer handles keep them alive)",
            f"{len(done)} of {n} completed",
            len(done) == n,
        )
    ]


class Checks(harness.EventLoopWorkload):
    async def main(self) -> harness.Outcome:
        p = self.params
        rows = await gather_first_error()
        rows += await taskgroup_first_error()
        rows += forgotten_await()
        rows += await blocking_rows(int(p["requests"]), float(p["request_s"]))
        rows += await fire_and_forget(int(p["fire_and_forget"]))
        bad = [case for case, _, _, ok in rows if not ok]
        extra = {
            "kind": "behaviour",
            "python": sys.version.split()[0],
            "rows": [
                {"case": c, "expected": e, "observed": o, "ok": bool(ok)} for c, e, o, ok in rows
            ],
        }
        return harness.Outcome(
            ops=len(rows) - len(bad),
            errors=len(bad),
            error_samples=[f"not as expected: {c}" for c in bad],
            extra=extra,
        )


VARIANTS = {"checks": Checks}
