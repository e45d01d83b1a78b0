"""pyperf cross-check of asyncio_ops: `bench_async_func` for create_task + await and sleep(0).

Run as a pyperf script (pyperf spawns its own worker processes, calibrates loops, warms up):

    python pyperf_check.py --processes 10 --values 3 --loop asyncio --output out.json

asyncio_ops's `pyperf` variant runs it and `summarize()` turns pyperf's JSON into the figures the
report puts beside the lab's. Like the lab, it disables cyclic GC in the workers, so the two
differ in method (pyperf's processes, calibration and loop) and not in what is timed. pyperf
times `await func()`, so its create_task figure includes one extra coroutine call (tens of ns).
"""

from __future__ import annotations

import asyncio
import gc
import statistics
from pathlib import Path

import harness

BENCHMARKS = ("create_task_await", "sleep0")


async def _anoop() -> None:
    return None


async def create_task_await() -> None:
    await asyncio.create_task(_anoop())


def summarize(path: str | Path) -> dict:
    """pyperf's result file as {"pyperf_version", "benchmarks": {name: figures in ns}}."""
    import pyperf

    suite = pyperf.BenchmarkSuite.load(str(path))
    out = {}
    for bench in suite.get_benchmarks():
        values = bench.get_values()  # seconds per `await func()`
        out[bench.get_name()] = {
            "mean_ns": statistics.fmean(values) * 1e9,
            "stdev_ns": (statistics.stdev(values) if len(values) > 1 else 0.0) * 1e9,
            "median_ns": statistics.median(values) * 1e9,
            "values": len(values),
            "processes": bench.get_nrun(),
            "loops": bench.get_loops(),
        }
    return {"pyperf_version": pyperf.__version__, "benchmarks": out}


def add_cmdline_args(cmd: list[str], args) -> None:
    """Pass --loop on to pyperf's worker processes."""
    cmd.extend(("--loop", args.loop))


def main() -> None:
    import pyperf

    runner = pyperf.Runner(add_cmdline_args=add_cmdline_args)
    runner.argparser.add_argument("--loop", default="asyncio")
    args = runner.parse_args()
    gc.disable()

    def factory() -> asyncio.AbstractEventLoop:
        return harness.new_event_loop({"loop": args.loop})

    runner.bench_async_func("create_task_await", create_task_await, loop_factory=factory)
    runner.bench_async_func("sleep0", asyncio.sleep, 0, loop_factory=factory)


if __name__ == "__main__":
    main()
