//! Which runs a figure comes from: the one clean-run rule every summary, table, chart, export
//! and comparison asks (criterion's `Sample` idea: the constructor enforces it).
//!
//! A run is **contaminated** when the interference it met while timed spoiled it
//! (`interference.contaminated`; the runner decided that and repeated the run in its round).
//! A cell's measured runs are its clean runs, or when none is clean the last try of each round
//! (so a round counts once however often it was repeated): the figure is still shown, and its
//! comparisons say the machine was busy ([`busy_machine`]). Only the
//! interference table, whose subject contaminated runs are, reads them otherwise.

use std::collections::BTreeSet;
use std::ops::Deref;

use crate::results::{Cell, RunRecord};

/// Whether a run was spoiled by other work on the machine (false before that was measured).
fn contaminated(r: &RunRecord) -> bool {
    r.interference.as_ref().is_some_and(|i| i.contaminated)
}

/// The runs a cell's figures come from; built only by [`MeasuredRuns::of`] or
/// [`MeasuredRuns::from_runs`], which apply the rule.
#[derive(Debug, Clone)]
pub struct MeasuredRuns<'a> {
    runs: Vec<&'a RunRecord>,
    clean: bool,
    contaminated: usize,
    rounds_without_clean_run: usize,
}

impl<'a> MeasuredRuns<'a> {
    /// The measured runs of `cell`.
    pub fn of(cell: &'a Cell) -> Self {
        Self::from_runs(&cell.runs)
    }

    /// The measured runs among `all` (one cell's runs, warm-ups excluded).
    pub fn from_runs(all: &'a [RunRecord]) -> Self {
        let clean: Vec<&RunRecord> = all.iter().filter(|r| !contaminated(r)).collect();
        let rounds = |rs: &[&RunRecord]| rs.iter().map(|r| r.round).collect::<BTreeSet<_>>();
        let every: Vec<&RunRecord> = all.iter().collect();
        let rounds_without_clean_run = rounds(&every).difference(&rounds(&clean)).count();
        let contaminated = all.len() - clean.len();
        let last_tries = || -> Vec<&RunRecord> {
            let last = |r: &&RunRecord| all.iter().rposition(|x| x.round == r.round);
            (0..all.len())
                .filter(|&i| last(&&all[i]) == Some(i))
                .map(|i| &all[i])
                .collect()
        };
        MeasuredRuns {
            clean: !clean.is_empty() || all.is_empty(),
            runs: if clean.is_empty() {
                last_tries()
            } else {
                clean
            },
            contaminated,
            rounds_without_clean_run,
        }
    }

    /// Whether the runs are clean ones: false when none was, and every run stands in.
    pub fn clean(&self) -> bool {
        self.clean
    }

    /// Runs left out as contaminated.
    pub fn contaminated(&self) -> usize {
        self.contaminated
    }

    /// Rounds in which no run was clean: the machine stayed busy through every repeat.
    pub fn rounds_without_clean_run(&self) -> usize {
        self.rounds_without_clean_run
    }

    /// The measured run of `round`.
    pub fn in_round(&self, round: usize) -> Option<&'a RunRecord> {
        self.runs.iter().copied().find(|r| r.round == round)
    }

    /// One figure of every measured run.
    pub fn values(&self, figure: impl Fn(&RunRecord) -> f64) -> Vec<f64> {
        self.runs.iter().map(|r| figure(r)).collect()
    }
}

impl<'a> Deref for MeasuredRuns<'a> {
    type Target = [&'a RunRecord];
    fn deref(&self) -> &Self::Target {
        &self.runs
    }
}

/// Per-round values of two cells' measured runs, paired by round (a round one of them lacks
/// is left out); `value` may decline a run that lacks the figure.
pub fn paired_rounds_where(
    a: &Cell,
    b: &Cell,
    value: impl Fn(&RunRecord) -> Option<f64>,
) -> (Vec<f64>, Vec<f64>) {
    let (ma, mb) = (MeasuredRuns::of(a), MeasuredRuns::of(b));
    ma.iter()
        .filter_map(|ra| {
            let rb = mb.in_round(ra.round)?;
            Some((value(ra)?, value(rb)?))
        })
        .unzip()
}

/// [`paired_rounds_where`] for a figure every run has.
pub fn paired_rounds(
    a: &Cell,
    b: &Cell,
    value: impl Fn(&RunRecord) -> f64,
) -> (Vec<f64>, Vec<f64>) {
    paired_rounds_where(a, b, |r| Some(value(r)))
}

/// Why a cell's rounds cannot decide anything: some round had no clean run (the machine
/// stayed busy through every repeat); None when every round has one.
pub fn busy_machine(cell: &Cell) -> Option<String> {
    let m = MeasuredRuns::of(cell);
    let rounds: BTreeSet<usize> = cell.runs.iter().map(|r| r.round).collect();
    (m.rounds_without_clean_run() > 0).then(|| {
        format!(
            "machine busy ({} of {} rounds without a clean run)",
            m.rounds_without_clean_run(),
            rounds.len()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(round: usize, contaminated: bool, tput: f64) -> RunRecord {
        let mut r: RunRecord = serde_json::from_value(serde_json::json!({
            "round": round, "wall_s": 1.0, "inside_wall_s": 1.0, "cpu_s": 0.1,
            "baseline_rss_mib": 1.0, "peak_rss_mib": 1.0, "peak_rss_delta_mib": 0.0,
            "ops": 10, "errors": 0, "server_requests": null, "throughput_per_s": tput,
            "latency_kind": "service", "latencies_ms": [1.0], "error_samples": [],
        }))
        .unwrap();
        r.interference = Some(crate::results::Interference {
            foreign_cpu_s: 0.0,
            foreign_cores: 0.0,
            steal_s: 0.0,
            kernel_cpu_s: 0.0,
            involuntary_switches: 0,
            probe_before_ms: 1.0,
            probe_after_ms: 1.0,
            contaminated,
            reason: contaminated.then(|| "busy".into()),
        });
        r
    }

    #[test]
    fn contaminated_runs_are_left_out_unless_none_is_clean() {
        let all = [run(0, true, 1.0), run(0, false, 10.0), run(1, false, 11.0)];
        let m = MeasuredRuns::from_runs(&all);
        assert_eq!(m.values(|r| r.throughput_per_s), [10.0, 11.0]);
        assert_eq!((m.contaminated(), m.rounds_without_clean_run()), (1, 0));
        assert!(m.clean());
        let busy = [run(0, true, 1.0), run(0, true, 2.0), run(1, true, 3.0)];
        let m = MeasuredRuns::from_runs(&busy);
        assert_eq!(
            m.values(|r| r.throughput_per_s),
            [2.0, 3.0],
            "the last try of each round, so the figure is still shown"
        );
        assert!(!m.clean());
        assert_eq!((m.contaminated(), m.rounds_without_clean_run()), (3, 2));
    }
}
