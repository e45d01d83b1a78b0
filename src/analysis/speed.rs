//! The machine's speed over a run, from the machine-speed probe timed around every run.
//!
//! The probe (`runner::interference::probe_ms`) is a fixed walk over 4 MiB, the fastest of
//! three, so what moves it is how fast the CPU and the caches and memory it shares run it: a
//! host slowing the VM (a neighbour on the same core or cache, frequency) shows there even when
//! /proc sees no foreign CPU and no steal. Its range over a run says how far apart in machine
//! speed the runs that a ratio compares were measured. What it cannot see: it runs in the
//! driver between runs, and a VM's CPUs can slow each on its own, in phases of about a second
//! (docs/defaults.md has the measurement), so a quiet probe does not show that a worker's CPU
//! held its speed during its run.

use crate::results::Cell;

/// A probe spread (95th percentile over 5th, minus one: one probe caught in a guest stall does
/// not count) above this calls the machine's speed unsteady. A steady machine keeps its probes
/// well within it, and a run's work moves about three times as much as the probe around it, so
/// at a 10% spread the work can move far beyond the 3–5% that ratios should hold. The figures
/// it was chosen from are the earlier, register-only probe's; docs/defaults.md has them and
/// what is known of the current probe.
pub const UNSTEADY_SPREAD: f64 = 0.10;

/// The probe's figures over a set of runs, ms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProbeRange {
    /// Fastest probe.
    pub min_ms: f64,
    /// 5th percentile.
    pub p5_ms: f64,
    /// Median probe.
    pub median_ms: f64,
    /// 95th percentile.
    pub p95_ms: f64,
    /// Slowest probe.
    pub max_ms: f64,
    /// Probes counted (two per run: before `go`, after `done`).
    pub probes: usize,
}

impl ProbeRange {
    /// The 95th percentile over the 5th, minus one.
    pub fn spread(&self) -> f64 {
        self.p95_ms / self.p5_ms - 1.0
    }

    /// Whether the machine's speed moved more than [`UNSTEADY_SPREAD`].
    pub fn unsteady(&self) -> bool {
        self.spread() > UNSTEADY_SPREAD
    }
}

/// The probe range over `cells`' runs (all of them, contaminated or not: the machine's speed
/// is the question); None when no run was probed.
pub fn probe_range<'a>(cells: impl IntoIterator<Item = &'a Cell>) -> Option<ProbeRange> {
    let probes: Vec<f64> = cells
        .into_iter()
        .flat_map(|c| c.runs.iter())
        .filter_map(|r| r.interference.as_ref())
        .flat_map(|i| [i.probe_before_ms, i.probe_after_ms])
        .collect();
    ProbeRange::of(&probes)
}

impl ProbeRange {
    /// The figures of a set of probes, ms (non-finite and zero ones left out); None when empty.
    pub fn of(probes: &[f64]) -> Option<ProbeRange> {
        let probes: Vec<f64> = probes
            .iter()
            .copied()
            .filter(|ms| ms.is_finite() && *ms > 0.0)
            .collect();
        if probes.is_empty() {
            return None;
        }
        Some(ProbeRange {
            min_ms: probes.iter().copied().fold(f64::INFINITY, f64::min),
            p5_ms: crate::stats::percentile::percentile(&probes, 5.0),
            median_ms: crate::stats::median(&probes),
            p95_ms: crate::stats::percentile::percentile(&probes, 95.0),
            max_ms: probes.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            probes: probes.len(),
        })
    }
}

/// The report's warning when the machine's speed moved during the run (`p`: over every run).
pub fn warning(p: &ProbeRange) -> Option<String> {
    p.unsteady().then(|| {
        format!(
            "the machine's speed moved during this run: the machine-speed probe's 5th to 95th percentile took {:.2}–{:.2} ms (median {:.2}, {:.0}% apart, over {} probes): a host slowing this VM shows there even when foreign CPU and steal stay near zero. What holds on such a machine: verdicts judged round by round (each round runs every cell, in a random order, so what the host did to a round it did to both sides), the run's resolution (its A/A twins), more rounds (`--max-rounds`), and a second run that reproduces the first (`asynclab compare FIRST SECOND --reproduce`); waiting for a quiet machine does not, since this host's speed does not settle",
            p.p5_ms,
            p.p95_ms,
            p.median_ms,
            p.spread() * 100.0,
            p.probes,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cell(probes: &[(f64, f64)]) -> Cell {
        let runs: Vec<_> = probes
            .iter()
            .enumerate()
            .map(|(i, (b, a))| {
                json!({"round": i, "wall_s": 1.0, "inside_wall_s": 1.0, "cpu_s": 1.0,
                "baseline_rss_mib": 1.0, "peak_rss_mib": 1.0, "peak_rss_delta_mib": 0.0,
                "ops": 1, "errors": 0, "server_requests": null, "throughput_per_s": 1.0,
                "latency_kind": "service", "latencies_ms": [], "error_samples": [],
                "interference": {"foreign_cpu_s": 0.0, "foreign_cores": 0.0, "steal_s": 0.0,
                    "involuntary_switches": 0, "probe_before_ms": b, "probe_after_ms": a,
                    "contaminated": false}})
            })
            .collect();
        serde_json::from_value(json!({"id": "cpu/sync/3.12.1/", "scenario": "cpu",
            "variant": "sync", "python": "3.12.1", "params": {}, "status": "ok",
            "failure": null, "runs": runs, "summary": null, "warnings": []}))
        .unwrap()
    }

    #[test]
    fn a_steady_probe_is_steady_and_a_moving_one_is_not() {
        let steady = probe_range([&cell(&[(5.0, 5.1), (5.2, 5.05)])]).unwrap();
        assert_eq!((steady.min_ms, steady.max_ms, steady.probes), (5.0, 5.2, 4));
        assert!(!steady.unsteady());
        let moving = probe_range([&cell(&[(6.8, 7.0), (8.7, 8.0)])]).unwrap();
        assert!(moving.unsteady(), "{:?}", moving.spread());
        let one_stall: Vec<(f64, f64)> = (0..20)
            .map(|i| (5.0, if i == 7 { 9.0 } else { 5.1 }))
            .collect();
        let stalled = probe_range([&cell(&one_stall)]).unwrap();
        assert!(
            !stalled.unsteady(),
            "one slow probe of 40 is a stall, not a slower machine"
        );
        assert!(probe_range([&cell(&[])]).is_none());
    }
}
