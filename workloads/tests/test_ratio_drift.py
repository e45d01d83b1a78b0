"""scripts/ratio_drift.py: the ratios it reads from a results.json and how far they moved."""

import copy
import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location("ratio_drift", ROOT / "scripts" / "ratio_drift.py")
ratio_drift = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(ratio_drift)
QUICK = json.loads((ROOT / "tests" / "data" / "results" / "quick.json").read_text())


def test_every_variant_is_compared_with_its_scenarios_baseline():
    r = ratio_drift.ratios(QUICK)
    names = sorted(k[1] for k in r)
    assert names == [
        "asyncio/sync",
        "asyncio/sync",
        "multiprocessing/sync",
        "multiprocessing/sync",
        "threads/sync",
        "threads/sync",
    ]
    sync = {c["scenario"]: c for c in QUICK["cells"] if c["variant"] == "sync"}
    asy = next(c for c in QUICK["cells"] if c["scenario"] == "cpu" and c["variant"] == "asyncio")
    want = (
        asy["summary"]["throughput_per_s"]["median"]
        / sync["cpu"]["summary"]["throughput_per_s"]["median"]
    )
    got = next(v for k, v in r.items() if k[0] == "cpu" and k[1] == "asyncio/sync")
    assert got == want


def test_a_baseline_ten_percent_slower_moves_its_ratios_by_a_ninth():
    moved = copy.deepcopy(QUICK)
    for c in moved["cells"]:
        if c["scenario"] == "cpu" and c["variant"] == "sync":
            c["summary"]["throughput_per_s"]["median"] *= 0.9
    a, b = ratio_drift.ratios(QUICK), ratio_drift.ratios(moved)
    for k in a:
        expected = 1 / 0.9 if k[0] == "cpu" else 1.0
        assert abs(b[k] / a[k] - expected) < 1e-12, k
