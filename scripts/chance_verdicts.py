"""How often the verdict rule calls two equal variants different, on this machine's noise.

    python3 scripts/chance_verdicts.py RUN [RUN ...] [--variants sync,asyncio] [--draws 10000]

Pools the clean runs of the given variants of one scenario (cpu by default) from each run's
results.json, each run divided by its cell's median (so only the run-to-run noise is left),
then draws 5 and 5 of them at random, again and again, as if two *equal* variants had run 5
rounds each. Every draw gets the lab's rule (src/stats/significance.rs): a two-sided exact
Mann-Whitney test at 0.05 and the paired bootstrap 95% interval of the ratio of medians, which
must also lie beyond 1 +- the noise threshold. Prints the share of draws called significantly
faster, for each threshold. A sketch of the rule, not the lab's code: no ties are expected in
throughputs, and the bootstrap draws 1,000 resamples from Python's generator, not 10,000 from
the lab's. Reads only the results files; measures nothing.
"""

import argparse
import itertools
import json
import math
import random
from pathlib import Path

ROUNDS = 5
ALPHA = 0.05


def load(path: str) -> dict:
    p = Path(path)
    return json.loads((p / "results.json" if p.is_dir() else p).read_text())


def median(xs: list) -> float:
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def noise(docs: list, scenario: str, variants: list) -> list:
    """Each clean run's throughput over its cell's median, pooled over cells and runs."""
    out = []
    for doc in docs:
        for c in doc["cells"]:
            if c["scenario"] != scenario or c["variant"] not in variants:
                continue
            xs = [
                r["throughput_per_s"]
                for r in c["runs"]
                if not (r.get("interference") or {}).get("contaminated")
            ]
            if xs:
                m = median(xs)
                out += [x / m for x in xs]
    return out


def u_counts(n: int) -> dict:
    """How many of the C(2n, n) splits give each Mann-Whitney U, for n against n."""
    counts: dict = {}
    for pick in itertools.combinations(range(2 * n), n):
        u = sum(pick) - n * (n - 1) // 2
        counts[u] = counts.get(u, 0) + 1
    return counts


def mann_whitney_p(a: list, b: list, counts: dict) -> float:
    u = sum(1 for x in a for y in b if x > y)
    total = sum(counts.values())
    lower = sum(v for k, v in counts.items() if k <= u)
    upper = sum(v for k, v in counts.items() if k >= u)
    return min(1.0, 2 * min(lower, upper) / total)


def ratio_interval(a: list, b: list, rng: random.Random, resamples: int = 1000) -> tuple:
    """Paired bootstrap 95% interval of median(a) / median(b)."""
    n = len(a)
    stats = []
    for _ in range(resamples):
        idx = [rng.randrange(n) for _ in range(n)]
        stats.append(median([a[i] for i in idx]) / median([b[i] for i in idx]))
    stats.sort()
    return stats[int(0.025 * (resamples - 1))], stats[math.ceil(0.975 * (resamples - 1))]


def chance(values: list, thresholds: list, draws: int, seed: int = 7) -> dict:
    """Share of draws of equal variants called significantly faster, per threshold."""
    rng = random.Random(seed)
    counts = u_counts(ROUNDS)
    hits = dict.fromkeys(thresholds, 0)
    for _ in range(draws):
        a = [rng.choice(values) for _ in range(ROUNDS)]
        b = [rng.choice(values) for _ in range(ROUNDS)]
        if mann_whitney_p(a, b, counts) > ALPHA:
            continue
        low, _ = ratio_interval(a, b, rng)
        for t in thresholds:
            hits[t] += low > 1 + t
    return {t: h / draws for t, h in hits.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", help="results folders or results.json files")
    ap.add_argument("--scenario", default="cpu")
    ap.add_argument("--variants", default="sync,asyncio")
    ap.add_argument("--draws", type=int, default=10_000)
    args = ap.parse_args()
    values = noise([load(r) for r in args.runs], args.scenario, args.variants.split(","))
    if len(values) < ROUNDS:
        raise SystemExit(
            f"chance_verdicts: {len(values)} clean runs; give runs with at least {ROUNDS}"
        )
    spread = f"{min(values):.3f}-{max(values):.3f}"
    print(f"{len(values)} clean runs, each over its cell's median: {spread}")
    for t, share in chance(values, [0.0, 0.03, 0.05], args.draws).items():
        print(
            f"noise threshold {t:.0%}: {share:.2%} of {args.draws} draws of equal variants"
            " called significantly faster"
        )


if __name__ == "__main__":
    main()
