"""Memory per idle subinterpreter, measured with nothing of the lab's: the cross-check of the memory
scenario's `interpreters` variant (tests/interpreters.rs).

Usage: python3.14 scripts/bare_interpreters_memory.py N
Prints one JSON line: {"units": N, "rss_delta_kib": ..., "per_unit_kib": ...}, where the delta is
the process's resident set (VmRSS) with N interpreters each blocked on its own thread, less the
resident set before the first was made.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from concurrent import interpreters

UNIT = "import os\nos.write(started, b'x')\nos.read(wake, 1)\n"


def rss_kib() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS in /proc/self/status")


def main(n: int) -> None:
    started_r, started_w = os.pipe()
    wake_r, wake_w = os.pipe()
    before = rss_kib()
    interps = [interpreters.create() for _ in range(n)]
    threads = []
    for interp in interps:
        interp.prepare_main(started=started_w, wake=wake_r)
        threads.append(threading.Thread(target=interp.exec, args=(UNIT,)))
    for t in threads:
        t.start()
    seen = 0
    while seen < n:
        seen += len(os.read(started_r, n - seen))
    during = rss_kib()
    os.write(wake_w, b"x" * n)
    for t in threads:
        t.join()
    for interp in interps:
        interp.close()
    delta = during - before
    print(json.dumps({"units": n, "rss_delta_kib": delta, "per_unit_kib": delta / n}))


if __name__ == "__main__":
    main(int(sys.argv[1]))
