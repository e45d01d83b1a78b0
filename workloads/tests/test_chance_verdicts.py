"""scripts/chance_verdicts.py: the verdict rule's sketch against known answers."""

import importlib.util
import json
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location(
    "chance_verdicts", ROOT / "scripts" / "chance_verdicts.py"
)
chance_verdicts = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(chance_verdicts)
QUICK = json.loads((ROOT / "tests" / "data" / "results" / "quick.json").read_text())


def test_mann_whitney_is_exact_for_five_against_five():
    counts = chance_verdicts.u_counts(5)
    assert sum(counts.values()) == 252
    # Perfectly separated: 2 / C(10, 5), as scipy's exact test and src/stats/significance.rs.
    p = chance_verdicts.mann_whitney_p([6, 7, 8, 9, 10], [1, 2, 3, 4, 5], counts)
    assert p == 2 / 252
    assert chance_verdicts.mann_whitney_p([1, 3, 5, 7, 9], [2, 4, 6, 8, 10], counts) > 0.5


def test_the_noise_is_each_run_over_its_cells_median():
    values = chance_verdicts.noise([QUICK], "cpu", ["sync", "asyncio"])
    runs = [
        r
        for c in QUICK["cells"]
        if c["scenario"] == "cpu" and c["variant"] in ("sync", "asyncio")
        for r in c["runs"]
        if not (r.get("interference") or {}).get("contaminated")
    ]
    assert len(values) == len(runs) > 0
    assert 1.0 in values


def test_no_noise_no_verdict_and_a_wider_band_calls_fewer():
    assert chance_verdicts.chance([1.0] * 10, [0.0], 200) == {0.0: 0.0}
    rng = random.Random(3)
    values = [rng.lognormvariate(0, 0.15) for _ in range(60)]
    shares = chance_verdicts.chance(values, [0.0, 0.03, 0.05], 400)
    assert shares[0.0] >= shares[0.03] >= shares[0.05]
    # Equal variants are called faster at most about as often as the test's one-sided alpha.
    assert shares[0.0] <= 0.05
