//! Where a run's time went: the runs' timelines added up into the timed regions, the workers'
//! start-up and set-up, their exit with the closing probe, the warm-up runs, and the driver's
//! work between runs.

use crate::results::{Cell, Timeline};

/// A run's time by phase, in seconds, over every run that recorded its timeline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeAccount {
    /// Measured runs counted (repeats of contaminated runs included: each took its time).
    pub runs: usize,
    /// Warm-up runs counted.
    pub warmups: usize,
    /// From the first run's spawn to the last run's exit.
    pub span_s: f64,
    /// Go to done: what the figures measure.
    pub timed_s: f64,
    /// Spawn to ready: interpreter start-up, imports, the worker's set-up.
    pub startup_s: f64,
    /// Ready to go (the driver's readings before the timed region) and done to exit (the
    /// result, the worker's exit, the closing machine-speed probe).
    pub around_s: f64,
    /// Warm-up runs, spawn to exit.
    pub warmup_s: f64,
    /// From one run's exit to the next run's spawn: saving the document, the stopping rule, and
    /// between scenarios the reference clients.
    pub between_s: f64,
}

/// The account of every run with a timeline; None when no run has one (older documents, or a
/// run interrupted before its first run).
pub fn account(cells: &[Cell]) -> Option<TimeAccount> {
    let measured: Vec<Timeline> = cells
        .iter()
        .flat_map(|c| c.runs.iter().filter_map(|r| r.timeline))
        .collect();
    if measured.is_empty() {
        return None;
    }
    let warm: Vec<Timeline> = cells
        .iter()
        .flat_map(|c| c.warmup_timelines.iter().copied())
        .collect();
    let sum = |f: fn(&Timeline) -> f64| measured.iter().map(f).sum::<f64>();
    let mut all: Vec<Timeline> = measured.iter().chain(&warm).copied().collect();
    all.sort_by(|a, b| a.spawned_s.total_cmp(&b.spawned_s));
    let between_s = all
        .windows(2)
        .map(|w| (w[1].spawned_s - w[0].exited_s).max(0.0))
        .sum();
    let last_exit = all.iter().map(|t| t.exited_s).fold(f64::MIN, f64::max);
    Some(TimeAccount {
        runs: measured.len(),
        warmups: warm.len(),
        span_s: last_exit - all[0].spawned_s,
        timed_s: sum(|t| t.done_s - t.go_s),
        startup_s: sum(|t| t.ready_s - t.spawned_s),
        around_s: sum(|t| (t.go_s - t.ready_s) + (t.exited_s - t.done_s)),
        warmup_s: warm.iter().map(|t| t.exited_s - t.spawned_s).sum(),
        between_s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(spawned_s: f64, startup: f64, timed: f64) -> Timeline {
        let ready_s = spawned_s + startup;
        Timeline {
            spawned_s,
            ready_s,
            go_s: ready_s + 0.1,
            done_s: ready_s + 0.1 + timed,
            exited_s: ready_s + 0.1 + timed + 0.2,
        }
    }

    #[test]
    fn phases_add_up_to_the_span() {
        let w = line(0.0, 1.0, 1.0);
        let a = line(w.exited_s + 0.25, 1.0, 5.0);
        let b = line(a.exited_s + 0.5, 2.0, 3.0);
        let t = account_of(&[b, a], &[w]);
        assert_eq!((t.runs, t.warmups), (2, 1));
        assert!((t.timed_s - 8.0).abs() < 1e-9);
        assert!((t.startup_s - 3.0).abs() < 1e-9);
        assert!((t.around_s - 0.6).abs() < 1e-9);
        assert!((t.warmup_s - 2.3).abs() < 1e-9);
        assert!((t.between_s - 0.75).abs() < 1e-9);
        let parts = t.timed_s + t.startup_s + t.around_s + t.warmup_s + t.between_s;
        assert!((parts - t.span_s).abs() < 1e-9, "{parts} vs {}", t.span_s);
    }

    fn account_of(lines: &[Timeline], warm: &[Timeline]) -> TimeAccount {
        let mut cell: Cell = serde_json::from_value(serde_json::json!({
            "id": "x", "scenario": "s", "variant": "v", "python": "3.12", "params": {},
            "status": "ok", "failure": null, "runs": [], "summary": null, "warnings": []
        }))
        .unwrap();
        for t in lines {
            let mut r: crate::results::RunRecord = serde_json::from_value(serde_json::json!({
                "round": 0, "wall_s": 1.0, "inside_wall_s": 1.0, "cpu_s": 0.1,
                "baseline_rss_mib": 1.0, "peak_rss_mib": 1.0, "peak_rss_delta_mib": 0.0,
                "ops": 10, "errors": 0, "server_requests": null, "throughput_per_s": 1.0,
                "latency_kind": "service", "latencies_ms": [1.0], "error_samples": [],
            }))
            .unwrap();
            r.timeline = Some(*t);
            cell.runs.push(r);
        }
        cell.warmup_timelines = warm.to_vec();
        account(&[cell]).unwrap()
    }
}
