//! Held connections: per cell whose runs carry `extra.held`, how many idle keep-alive
//! connections the server kept open, what each cost its process tree in memory (read from
//! outside, before opening and after holding), and the p99 of the trickle sent across them
//! while they were held. Medians over the cell's measured runs, with intervals.

use super::measured::MeasuredRuns;
use super::services::server_kind;
use crate::results::{Cell, RunRecord};
use crate::stats::{self, summarize, Summary};

/// One cell that held connections.
#[derive(Debug, Clone, PartialEq)]
pub struct HeldRow {
    /// Scenario name.
    pub scenario: String,
    /// Variant (the server's name).
    pub variant: String,
    /// Interpreter version.
    pub python: String,
    /// The cell's matrix setting (`hold=1000`).
    pub setting: String,
    /// `sync` or `async`.
    pub kind: String,
    /// Connections asked for.
    pub asked: u64,
    /// The fewest the server still held at the end of a run (after the trickle).
    pub held: u64,
    /// The most whose first request failed in a run.
    pub failed: u64,
    /// Server RSS per held connection, KiB, over the runs in which it held any.
    pub kib_per_connection: Option<Summary>,
    /// The server tree's RSS with the connections held, MiB.
    pub rss_after_mib: Summary,
    /// The trickle's p99 from each request's intended start, ms.
    pub trickle_p99_ms: Summary,
    /// The first message of a failed first request, if any.
    pub first_failure: Option<String>,
}

impl HeldRow {
    /// Whether the server held every connection asked for to the end of every run.
    pub fn held_all(&self) -> bool {
        self.held == self.asked && self.failed == 0
    }
}

/// A run's server RSS per held connection, KiB (NaN when it held none or carries no figure).
pub fn kib_per_connection(r: &RunRecord) -> f64 {
    r.extra
        .held
        .as_ref()
        .and_then(|h| h.kib_per_connection)
        .unwrap_or(f64::NAN)
}

/// The rows of every cell that held connections, in document order.
pub fn rows(cells: &[&Cell]) -> Vec<HeldRow> {
    cells.iter().filter_map(|c| row(c)).collect()
}

fn row(c: &Cell) -> Option<HeldRow> {
    let runs = MeasuredRuns::of(c);
    let held: Vec<(&RunRecord, &crate::extras::HeldFigures)> = runs
        .iter()
        .filter_map(|r| r.extra.held.as_ref().map(|h| (*r, h)))
        .collect();
    let (_, first) = held.first()?;
    let kib: Vec<f64> = held
        .iter()
        .filter_map(|(_, h)| h.kib_per_connection)
        .collect();
    Some(HeldRow {
        scenario: c.scenario.clone(),
        variant: c.variant.clone(),
        python: c.python.clone(),
        setting: c.group.clone(),
        kind: server_kind(c).unwrap_or_default(),
        asked: first.asked,
        held: held.iter().map(|(_, h)| h.open_at_end).min().unwrap_or(0),
        failed: held.iter().map(|(_, h)| h.failed).max().unwrap_or(0),
        kib_per_connection: (!kib.is_empty()).then(|| summarize(&kib)),
        rss_after_mib: summarize(
            &held
                .iter()
                .map(|(_, h)| h.rss_after_mib)
                .collect::<Vec<_>>(),
        ),
        trickle_p99_ms: summarize(&held.iter().map(|(r, _)| run_p99(r)).collect::<Vec<_>>()),
        first_failure: held
            .iter()
            .find_map(|(_, h)| h.error_samples.first().cloned()),
    })
}

/// A run's p99 of its main latency set, ms (NaN when it has none).
pub fn run_p99(r: &RunRecord) -> f64 {
    let mut v = r.latencies_ms.clone();
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return f64::NAN;
    }
    stats::percentiles_sorted(&v, &[99.0])[0]
}
