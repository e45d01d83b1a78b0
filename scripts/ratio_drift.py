"""How far each ratio moved between two runs of the same command (docs/method.md).

    python3 scripts/ratio_drift.py results/A results/B

For every cell of both runs, the ratio of its median throughput to its scenario's baseline
variant (as the report's "vs" column names it) at the same interpreter, event loop and setting
(the matrix-axis values the decision table groups by); for a cell on another event loop than
asyncio's, also the ratio to the same cell on asyncio's loop (event_loops). Prints each ratio
in A and B and how far B's moved from A's, in percent, largest first. Reads only the two
results.json files; measures nothing.
"""

import json
import sys
from pathlib import Path


def load(path: str) -> dict:
    p = Path(path)
    return json.loads((p / "results.json" if p.is_dir() else p).read_text())


def medians(doc: dict) -> dict:
    """(scenario, variant, python, loop, setting) -> (median throughput of the cell's clean
    runs, whether its variants are alternatives with a baseline)."""
    out = {}
    for c in doc["cells"]:
        if c["status"] != "ok" or not c.get("summary"):
            continue
        loop = c.get("loop") or c["params"].get("loop") or "asyncio"
        # The setting (matrix-axis values, as the decision table groups cells), without the loop.
        rest = " ".join(t for t in c.get("group", "").split() if not t.startswith("loop="))
        key = (c["scenario"], c["variant"], c["python"], loop, rest)
        out[key] = (c["summary"]["throughput_per_s"]["median"], c.get("decide_by") != "none")
    return out


def ratios(doc: dict) -> dict:
    baselines = {name: s.get("baseline") for name, s in doc.get("scenarios", {}).items()}
    m = medians(doc)
    out = {}
    first = {}
    for scenario, variant, *_ in m:
        first.setdefault(scenario, variant)
    for (scenario, variant, python, loop, rest), (tp, compared) in m.items():
        base = baselines.get(scenario) or first[scenario]
        against = (scenario, base, python, loop, rest)
        if compared and variant != base and against in m:
            out[(scenario, f"{variant}/{base}", python, loop, rest)] = tp / m[against][0]
        on_asyncio = (scenario, variant, python, "asyncio", rest)
        if loop != "asyncio" and on_asyncio in m:
            out[(scenario, f"{variant} {loop}/asyncio", python, "", rest)] = tp / m[on_asyncio][0]
    return out


def main() -> int:
    if len(sys.argv) != 3:
        print("usage: ratio_drift.py RUN_A RUN_B (folders or results.json files)")
        return 2
    a, b = ratios(load(sys.argv[1])), ratios(load(sys.argv[2]))
    rows = [(abs(b[k] / a[k] - 1) * 100, k) for k in a if k in b and a[k] > 0]
    for drift, (scenario, ratio, python, _, rest) in sorted(rows, reverse=True):
        k = (scenario, ratio, python, _, rest)
        print(f"{drift:6.1f}%  {scenario:12} {ratio:34} {a[k]:9.3f} {b[k]:9.3f}  {python} {rest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
