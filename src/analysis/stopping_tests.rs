//! The stopping rule on synthetic rounds with known answers, through the real scheduler:
//! equal variants, 5%, 10% and 50% apart, many seeds each.

use std::collections::BTreeMap;

use super::*;
use crate::results::RunRecord;
use crate::runner::executor::{Executor, RunError};
use crate::runner::matrix::CellSpec;
use crate::runner::scheduler::tests::spec;
use crate::runner::scheduler::{new_cell, run_interleaved, Plan};
use crate::runner::tally::Tally;
use crate::stats::rng::Rng;

/// Noise of one run around its variant's true throughput (3%, a quiet run here), and the drift
/// of the machine's speed that every cell of a round shares (5%: this VM's speed moves).
const RUN_NOISE: f64 = 0.03;
const ROUND_DRIFT: f64 = 0.05;

/// Draws throughputs: "sync" at 100/s, "asyncio" at 100 × `ratio`, each run with its noise
/// and its round's drift.
struct Synthetic {
    ratio: f64,
    rng: Rng,
    drift: BTreeMap<usize, f64>,
}

impl Synthetic {
    fn normal(&mut self) -> f64 {
        // Box–Muller from two uniforms in (0, 1].
        let mut u = || (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let (u1, u2) = (1.0 - u(), u());
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

impl Executor for Synthetic {
    fn execute(&mut self, cell: &CellSpec, round: Option<usize>) -> Result<RunRecord, RunError> {
        let key = round.unwrap_or(usize::MAX);
        let drift = match self.drift.get(&key) {
            Some(&d) => d,
            None => {
                let d = ROUND_DRIFT * self.normal();
                self.drift.insert(key, d);
                d
            }
        };
        let truth = if cell.variant == "asyncio" {
            100.0 * self.ratio
        } else {
            100.0
        };
        let tput = truth * (drift + RUN_NOISE * self.normal()).exp();
        Ok(serde_json::from_value(serde_json::json!({
            "round": round.unwrap_or(0), "wall_s": 1.0, "inside_wall_s": 1.0, "cpu_s": 0.5,
            "baseline_rss_mib": 10.0, "peak_rss_mib": 12.0, "peak_rss_delta_mib": 2.0,
            "ops": 100, "errors": 0, "server_requests": null, "throughput_per_s": tput,
            "latency_kind": "service", "latencies_ms": [], "error_samples": [],
        }))
        .unwrap())
    }
}

const RULE: Rule = Rule {
    alpha: 0.05,
    noise_threshold: 0.03,
    looks: None,
    floor: 0.0,
};

/// One run of sync and asyncio at `ratio` under `rounds..=max_rounds`: the asyncio cell's
/// rounds and whether the report calls it significantly different.
fn simulate(ratio: f64, rounds: usize, max_rounds: usize, seed: u64) -> (usize, bool) {
    let specs = [spec("sync"), spec("asyncio")];
    let mut cells: Vec<Cell> = specs.iter().map(new_cell).collect();
    let info = ScenarioInfo {
        title: String::new(),
        question: String::new(),
        baseline: Some("sync".into()),
        contrasts: Vec::new(),
    };
    let plan = Plan {
        rounds,
        max_rounds,
        warmups: 0,
        deadline: None,
        repeats: 0,
        derive: crate::analysis::summary::derive_cell,
        order_seed: seed,
    };
    let mut exec = Synthetic {
        ratio,
        rng: Rng::new(seed),
        drift: BTreeMap::new(),
    };
    let mut tally = Tally {
        done: 0,
        total: plan.runs(2),
    };
    run_interleaved(
        &specs,
        plan,
        &mut exec,
        &mut cells,
        &mut |_| Ok(()),
        &mut |c| settle(c, &info, RULE),
        &mut tally,
        &mut |_, _| {},
    )
    .unwrap();
    let c = comparison::throughput_vs(&cells[1], &cells[0], RULE).unwrap();
    (cells[1].runs.len(), c.verdict.is_significant())
}

/// Share of `seeds` runs called significant, and the mean rounds, at `ratio`.
fn rates(ratio: f64, rounds: usize, max_rounds: usize, seeds: u64) -> (f64, f64) {
    let (mut hits, mut spent) = (0, 0);
    for seed in 0..seeds {
        let (n, sig) = simulate(ratio, rounds, max_rounds, 1_000 + seed);
        hits += usize::from(sig);
        spent += n;
    }
    (hits as f64 / seeds as f64, spent as f64 / seeds as f64)
}

#[test]
fn equal_variants_are_called_different_no_more_often_than_with_fixed_rounds() {
    let (adaptive, rounds) = rates(1.0, 4, 10, 200);
    let (fixed, _) = rates(1.0, 5, 5, 200);
    eprintln!("equal: adaptive 4-10 {adaptive:.4} ({rounds:.2} rounds), fixed 5 {fixed:.4}");
    assert!(adaptive <= RULE.alpha, "{adaptive}");
    assert!(
        adaptive <= fixed + 1.0 / 200.0,
        "adaptive {adaptive}, fixed {fixed}"
    );
}

#[test]
fn fifty_percent_apart_stops_at_the_minimum() {
    for seed in 0..30 {
        assert_eq!(simulate(1.5, 4, 10, seed), (4, true), "seed {seed}");
    }
}

#[test]
fn whatever_fixed_rounds_at_the_minimum_find_adaptive_rounds_find_too() {
    // The first look spends enough of α for the smallest p of 4 against 4 rounds, so every
    // draw fixed rounds call different (the same first four rounds) adaptive ones do too.
    for ratio in [1.05, 1.10] {
        let (mut fixed, mut adaptive, mut rounds) = (0, 0, 0);
        for seed in 0..100 {
            let (_, f) = simulate(ratio, 4, 4, seed);
            let (n, a) = simulate(ratio, 4, 10, seed);
            assert!(
                !f || a,
                "{ratio}, seed {seed}: fixed found it, adaptive did not"
            );
            fixed += usize::from(f);
            adaptive += usize::from(a);
            rounds += n;
        }
        eprintln!("{ratio}: found by adaptive 4-10 {adaptive}/100 ({} rounds on average), by fixed 4 {fixed}/100", rounds as f64 / 100.0);
    }
}
