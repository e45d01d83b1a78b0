"""What a worker's run reports (the result model of the harness): `Outcome`, `Recorder`,
`Failed`, and `Skip` for a cell that cannot run here.

The bottom of the worker's modules: it imports none of them, so `openloop`, `harness_models` and
`harness` (the protocol) can all build on it. Scripts reach these names through `harness`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

MAX_ERROR_SAMPLES = 5


@dataclass
class Outcome:
    """What `run()` returns; kept raw (ns allowed) so nothing is converted inside the timing.

    `ops` counts successful operations (one latency each), `errors` failed ones.
    """

    ops: int
    errors: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    latencies_ns: Iterable[int] = field(default_factory=list)
    error_samples: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    latency_kind: str = "service"
    latency_sets: dict[str, list[float]] = field(default_factory=dict)

    def to_result(self, inside_wall_s: float) -> dict[str, Any]:
        latencies = [float(x) for x in self.latencies_ms]
        latencies.extend(ns / 1e6 for ns in self.latencies_ns)
        return {
            "event": "result",
            "ops": int(self.ops),
            "errors": int(self.errors),
            "latencies_ms": latencies,
            "latency_kind": self.latency_kind,
            "inside_wall_s": inside_wall_s,
            "error_samples": [str(s) for s in self.error_samples[:MAX_ERROR_SAMPLES]],
            "extra": self.extra,
            "latency_sets_ms": {k: [float(x) for x in v] for k, v in self.latency_sets.items()},
        }


class Failed(Exception):
    """An operation that failed but still produced its payload (an HTTP error status has a body):
    counted as an error described by `message` alone, its payload kept for `Scenario.extra`."""

    def __init__(self, message: str, payload: Any = None) -> None:
        super().__init__(message)
        self.payload = payload


# Why a cell is skipped: the `kind` of the protocol's `skip` message (docs/protocol.md), and
# what each means. The driver reads the same names (src/runner/executor.rs, `SkipKind`).
SKIP_KINDS = {
    "missing_package": "an optional package (an event loop) is not installed in this environment",
    "unsupported": "this interpreter or platform cannot run the cell",
}


class Skip(Exception):
    """The cell cannot run in this environment: the worker sends a `skip` message with `kind`
    (one of `SKIP_KINDS`) and this reason, and the driver marks the cell *skipped*, not failed."""

    def __init__(self, reason: str, kind: str = "missing_package") -> None:
        if kind not in SKIP_KINDS:
            raise ValueError(f"unknown skip kind {kind!r}; known: {', '.join(SKIP_KINDS)}")
        super().__init__(reason)
        self.kind = kind


def describe_error(exc: BaseException | str) -> str:
    """One-line 'Type: message' text for an exception (a `Failed`'s message alone)."""
    if isinstance(exc, str):
        return exc
    text = str(exc).strip().splitlines()
    if isinstance(exc, Failed):
        return text[0] if text else "failed"
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


@dataclass
class Recorder:
    """One worker's operations (or a run's, merged): the latency of each that succeeded, the
    payload of each attempted (None for one that raised), the failures counted and the first
    `MAX_ERROR_SAMPLES` described. Each worker has its own, so it takes no lock."""

    latencies_ns: list[int] = field(default_factory=list)
    payloads: list = field(default_factory=list)
    errors: int = 0
    error_samples: list[str] = field(default_factory=list)

    def add(self, elapsed_ns: int, payload: Any = None) -> None:
        self.latencies_ns.append(elapsed_ns)
        self.payloads.append(payload)

    def error(self, exc: BaseException | str) -> None:
        self.errors += 1
        if len(self.error_samples) < MAX_ERROR_SAMPLES:
            self.error_samples.append(describe_error(exc))
        self.payloads.append(exc.payload if isinstance(exc, Failed) else None)

    @classmethod
    def merged(cls, parts: Iterable[Recorder]) -> Recorder:
        total = cls()
        for part in parts:
            total.latencies_ns += part.latencies_ns
            total.payloads += part.payloads
            total.errors += part.errors
            total.error_samples += part.error_samples
        del total.error_samples[MAX_ERROR_SAMPLES:]
        return total

    def outcome(self, extra: dict | None = None, kind: str = "service") -> Outcome:
        return Outcome(
            ops=len(self.latencies_ns),
            errors=self.errors,
            latencies_ns=self.latencies_ns,
            error_samples=self.error_samples,
            extra=extra or {},
            latency_kind=kind,
        )
