"""The worker side of asynclab: the driver/worker protocol (docs/protocol.md), run as
`python harness.py --script S --variant V ...`, and the names workload scripts use.

A script defines a `Scenario`, its set-up and its one operation, and picks a model per variant,
as pyperf's `bench_func` / `bench_async_func` let a benchmark define only the function:

    class Get(harness.Scenario):
        def __init__(self, params, services):
            super().__init__(params, services)
            self.count, self.concurrency = params["requests"], params["concurrency"]
            self.url = services["http_url"]

        def open_worker(self):  # in each worker thread (or process), untimed
            self.local.session = requests.Session()

        def op(self, index):  # one operation; the model reads the clock around it
            return len(self.local.session.get(self.url).content)

    VARIANTS = {"sync": harness.Sequential.of(Get), "threads": harness.ThreadPool.of(Get)}

The worker's modules import one way (pyperf's `_bench` / `_worker` / `_runner` split):
`harness_outcome` (what a run reports: `Outcome`, `Recorder`, `Failed`, `Skip`) imports none of
them; `openloop` (open-loop schedules) builds on it; `harness_models` (the concurrency models,
`Scenario`, `Sequential`, `ThreadPool`, `EventLoop`, `ProcessPool`, `Workload`...) on both;
`harness_interpreters` (`InterpreterPool`, subinterpreters) on the models; and this module, the
protocol, on all of them. It re-exports their public names, so a script needs
only `import harness` (`harness.Sequential.of(...)`, `harness.Outcome`, `harness.Skip`).
"""

from __future__ import annotations

import sys

if __name__ == "__main__":
    # Run as the worker: hand over at once to the importable module `harness`, before this copy
    # imports or defines anything. Scripts `import harness` and must share its classes; and
    # compiling and running that second copy after the standard modules were loaded left its
    # garbage as free heap that the memory scenario's units reused (1,000 tasks measured
    # 0.46 KiB each instead of 0.79). Done first, the modules that stay fill those holes.
    import harness

    sys.exit(harness.main())

# The imports follow the hand-over above on purpose.
# ruff: noqa: E402

import argparse
import importlib.metadata
import importlib.util
import json
import os
import platform
import re
import sysconfig
import time
import traceback
from pathlib import Path
from typing import Any

from harness_interpreters import InterpreterPool, interpreters_module
from harness_models import (
    OPTIONAL_LOOPS,
    Counter,
    EventLoop,
    EventLoopWorkload,
    Model,
    ProcessPool,
    Scenario,
    Sequential,
    ThreadPool,
    Workload,
    drain,
    drain_async,
    gc_disabled,
    loop_facts,
    mp_context,
    new_event_loop,
    now,
    payload_only,
    shares,
    started_threads,
)
from harness_outcome import (
    MAX_ERROR_SAMPLES,
    SKIP_KINDS,
    Failed,
    Outcome,
    Recorder,
    Skip,
    describe_error,
)

# The names scripts use as `harness.X`; all but `UsageError` are defined in the modules below.
__all__ = [
    "MAX_ERROR_SAMPLES",
    "OPTIONAL_LOOPS",
    "SKIP_KINDS",
    "Counter",
    "EventLoop",
    "EventLoopWorkload",
    "Failed",
    "InterpreterPool",
    "Model",
    "Outcome",
    "ProcessPool",
    "Recorder",
    "Scenario",
    "Sequential",
    "Skip",
    "ThreadPool",
    "UsageError",
    "Workload",
    "describe_error",
    "drain",
    "drain_async",
    "gc_disabled",
    "interpreters_module",
    "loop_facts",
    "mp_context",
    "new_event_loop",
    "now",
    "payload_only",
    "shares",
    "started_threads",
]


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


# Parameters the driver acts on for every scenario with a service: the round trip (ms) of the
# delay line it puts in front of the services, and its jitter. The service addresses a script
# is given already go through that line, so scripts need not read them.
DRIVER_PARAMS = {"rtt_ms": 0, "jitter_ms": 0}


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
    defaults = {**DRIVER_PARAMS, **defaults}
    unknown = sorted(set(params) - set(defaults))
    if unknown:
        known = ", ".join(sorted(defaults))
        raise UsageError(f"unknown params {unknown} for {module.__name__}; known: {known}")
    return variants[variant], {**defaults, **params}


def provenance() -> str:
    """Where this interpreter comes from: its base prefix, and the Debian package when it is one
    (a Debian root of `asynclab pythons add`, or the system's)."""
    where = sys.base_prefix
    status = Path("/var/lib/dpkg/status")
    package = f"python{sys.version_info.major}.{sys.version_info.minor}"
    if where == "/usr" and status.is_file():
        text = status.read_text(errors="replace")
        start = text.find(f"Package: {package}\n")
        if start >= 0:
            block = text[start : text.find("\n\n", start)]
            version = next((ln[9:] for ln in block.splitlines() if ln.startswith("Version: ")), "")
            debian = Path("/etc/debian_version")
            suite = debian.read_text().strip() if debian.is_file() else "?"
            return f"Debian package {package} {version} (debian_version {suite}), prefix {where}"
    return f"prefix {where}"


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
        "gil_enabled": sys._is_gil_enabled() if hasattr(sys, "_is_gil_enabled") else True,
        "provenance": provenance(),
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
    """Reports why the run ended early: a `skip` message for a `Skip` (the cell cannot run here),
    else an `error` message; the traceback goes to stderr unless the reason says it all."""
    if isinstance(exc, Skip):
        print(f"skip ({exc.kind}): {exc}", file=sys.stderr)
        message = {"event": "skip", "phase": phase, "kind": exc.kind, "reason": str(exc)}
    else:
        if isinstance(exc, UsageError):
            print(describe_error(exc), file=sys.stderr)
        else:
            traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
        message = {"event": "error", "phase": phase, "message": describe_error(exc)}
    try:
        ctl.send(message)
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
