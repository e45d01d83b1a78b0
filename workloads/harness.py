"""Child side of the driver/worker protocol (docs/protocol.md) and helpers for workload scripts."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import importlib.metadata
import importlib.util
import json
import multiprocessing
import os
import platform
import re
import sys
import sysconfig
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MAX_ERROR_SAMPLES = 5


class Workload:
    """What a script's setup returns: `run()` is timed, `close()` is the untimed teardown."""

    def run(self) -> Outcome:
        raise NotImplementedError

    def close(self) -> None:
        pass


@dataclass
class Outcome:
    """What `run()` returns; kept raw (ns allowed) so nothing is converted inside the timing.

    `ops` counts successful operations (one latency each), `errors` failed ones.
    """

    ops: int
    errors: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    latencies_ns: list[int] = field(default_factory=list)
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


def describe_error(exc: BaseException | str) -> str:
    """One-line 'Type: message' text for an exception (or a plain string)."""
    if isinstance(exc, str):
        return exc
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


class Recorder:
    """Per-op latencies (perf_counter_ns) and errors; safe to share between threads."""

    now = staticmethod(time.perf_counter_ns)

    def __init__(self) -> None:
        self.latencies_ns: list[int] = []
        self.errors = 0
        self.error_samples: list[str] = []
        self._lock = threading.Lock()

    def add_ns(self, ns: int) -> None:
        self.latencies_ns.append(ns)  # list.append is atomic

    def since(self, start_ns: int) -> None:
        self.latencies_ns.append(time.perf_counter_ns() - start_ns)

    def error(self, exc: BaseException | str) -> None:
        with self._lock:
            self.errors += 1
            if len(self.error_samples) < MAX_ERROR_SAMPLES:
                self.error_samples.append(describe_error(exc))

    def outcome(
        self, extra: dict | None = None, kind: str = "service", ops: int | None = None
    ) -> Outcome:
        """The run's Outcome; `ops` (successful operations) defaults to one per latency."""
        return Outcome(
            ops=len(self.latencies_ns) if ops is None else ops,
            errors=self.errors,
            latencies_ns=self.latencies_ns,
            error_samples=self.error_samples,
            extra=extra or {},
            latency_kind=kind,
        )


class Skip(Exception):
    """The cell cannot run in this environment (an optional package is missing): the driver marks
    it *skipped* with this reason instead of failed (the error message starts with `skip:`)."""


# Optional event loops: module name and how to get it when it is not installed.
OPTIONAL_LOOPS = {
    "uvloop": "it is pinned in workloads/requirements; rebuild the environment with "
    "`asynclab envs --python X.Y` (or `make envs`)",
    "rsloop": "it is an opt-in extra with no wheels for this platform; `make rsloop` builds it "
    "from source into the environments (needs cargo; 2-4 minutes per interpreter)",
    "zuvloop": "it ships wheels for CPython 3.14 only and cannot be installed on this interpreter",
}


def new_event_loop(params: dict) -> asyncio.AbstractEventLoop:
    """A fresh event loop of the kind `params["loop"]` names: `asyncio` or an optional loop
    (`uvloop`, `rsloop`, `zuvloop`); raises `Skip` when that loop is not installed here."""
    kind = params.get("loop", "asyncio")
    if kind == "asyncio":
        loop = asyncio.new_event_loop()
    elif kind in OPTIONAL_LOOPS:
        try:
            module = importlib.import_module(kind)
        except ImportError as exc:
            raise Skip(
                f"loop {kind} is not installed in this environment (Python "
                f"{platform.python_version()}, {sys.executable}): {OPTIONAL_LOOPS[kind]} ({exc})"
            ) from exc
        loop = module.new_event_loop()
    else:
        known = ", ".join(["asyncio", *OPTIONAL_LOOPS])
        raise ValueError(f"unknown loop {kind!r}; known: {known}")
    asyncio.set_event_loop(loop)
    loop.run_until_complete(asyncio.sleep(0))  # first-iteration costs are paid here, untimed
    return loop


def mp_context(params: dict):
    """The multiprocessing context for `params["start_method"]` (None: the platform default)."""
    return multiprocessing.get_context(params.get("start_method") or None)


# --- the child side of the protocol -------------------------------------------------------------


class UsageError(Exception):
    """A bad invocation (unknown variant or parameter): reported without a traceback."""


class Channel:
    """The write-only ctl pipe: one JSON object per line, each written whole by an os.write loop."""

    def __init__(self, fd: int) -> None:
        os.fstat(fd)  # fails early if the driver did not pass the fd
        self.fd = fd
        os.set_inheritable(fd, False)
        # A forked worker (multiprocessing) must not hold the pipe open or write to it.
        os.register_at_fork(after_in_child=self._close_in_child)

    def _close_in_child(self) -> None:
        try:
            os.close(self.fd)
        except OSError:
            pass

    def send(self, message: dict) -> None:
        data = (json.dumps(message, separators=(",", ":"), allow_nan=False) + "\n").encode()
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view) :]


def load_script(path: str):
    """Import a workload script by path, as a module named after its file (picklable by name)."""
    script = Path(path).resolve()
    if str(script.parent) not in sys.path:
        sys.path.insert(0, str(script.parent))
    spec = importlib.util.spec_from_file_location(script.stem, script)
    if spec is None or spec.loader is None:
        raise UsageError(f"cannot load script {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[script.stem] = module
    spec.loader.exec_module(module)
    return module


def resolve(module, variant: str, params: dict) -> tuple[Any, dict]:
    """The variant's setup function and the params with the script's PARAMS defaults filled in."""
    variants = getattr(module, "VARIANTS", None)
    if not isinstance(variants, dict):
        raise UsageError(f"{module.__name__}: no VARIANTS dict")
    if variant not in variants:
        known = ", ".join(sorted(variants))
        raise UsageError(f"unknown variant {variant!r} for {module.__name__}; known: {known}")
    defaults = getattr(module, "PARAMS", None)
    if defaults is None:
        return variants[variant], dict(params)
    unknown = sorted(set(params) - set(defaults))
    if unknown:
        known = ", ".join(sorted(defaults))
        raise UsageError(f"unknown params {unknown} for {module.__name__}; known: {known}")
    return variants[variant], {**defaults, **params}


def describe() -> dict:
    packages = {}
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"]
        if name:
            packages[re.sub(r"[-_.]+", "-", name).lower()] = dist.version
    return {
        "event": "describe",
        "python": platform.python_version(),
        "implementation": sys.implementation.name,
        "executable": sys.executable,
        "compiler": sysconfig.get_config_var("CC"),
        "config_args": sysconfig.get_config_var("CONFIG_ARGS"),
        "gil_disabled": bool(sysconfig.get_config_var("Py_GIL_DISABLED")),
        "packages": dict(sorted(packages.items())),
    }


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--script")
    parser.add_argument("--variant")
    parser.add_argument("--params", type=json.loads, default={})
    parser.add_argument("--services", type=json.loads, default={})
    parser.add_argument("--ctl-fd", type=int, default=3)
    parser.add_argument("--describe", action="store_true")
    args = parser.parse_args(argv)
    if not args.describe and not (args.script and args.variant):
        parser.error("--script and --variant are required (or --describe)")
    for name in ("params", "services"):
        if not isinstance(getattr(args, name), dict):
            parser.error(f"--{name} must be a JSON object")
    return args


def fail(ctl: Channel, phase: str, exc: BaseException) -> int:
    message = f"skip: {exc}" if isinstance(exc, Skip) else describe_error(exc)
    if isinstance(exc, UsageError | Skip):
        print(message, file=sys.stderr)
    else:
        traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
    try:
        ctl.send({"event": "error", "phase": phase, "message": message})
    except OSError:
        pass
    return 1


def wait_for_go() -> None:
    line = sys.stdin.buffer.readline() if sys.stdin is not None else b""
    if line.strip() != b"go":
        raise UsageError(f"expected 'go' on stdin, got {line[:40]!r}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        ctl = Channel(args.ctl_fd)
    except OSError as exc:
        print(f"harness: ctl fd {args.ctl_fd} is not open: {exc}", file=sys.stderr)
        return 2
    if args.describe:
        ctl.send(describe())
        return 0
    phase, workload = "setup", None
    try:
        setup, params = resolve(load_script(args.script), args.variant, args.params)
        workload = setup(params, args.services)
        ctl.send({"event": "ready", "pid": os.getpid()})
        phase = "go"
        wait_for_go()
        phase = "run"
        start = time.perf_counter()
        outcome = workload.run()
        inside = time.perf_counter() - start
        ctl.send({"event": "done"})
        phase = "result"
        ctl.send(outcome.to_result(inside))
        phase, closing, workload = "teardown", workload, None
        closing.close()
    except BaseException as exc:  # noqa: BLE001 - report everything, including KeyboardInterrupt
        code = fail(ctl, phase, exc)
        if workload is not None:
            try:
                workload.close()
            except BaseException:  # noqa: BLE001
                traceback.print_exc(file=sys.stderr)
        return code
    return 0


if __name__ == "__main__":
    # Run main() from the importable module `harness`, so that scripts doing `import harness`
    # share its classes instead of getting a second copy of this file.
    import harness

    sys.exit(harness.main())
