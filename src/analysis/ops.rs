//! Per-operation figures (`extra.ops`, `extra.benchmarks`) over a cell's runs: the readers
//! that the report's per-operation tables, its chart, `compare --by` and `cost` share.

use std::collections::BTreeMap;

use crate::extras::OpFigure;
use crate::results::{Cell, RunRecord};
use crate::stats;

/// The op names the per-request mix is made of.
pub const TASK_OP: &str = "create_task_await";
/// Queue put/get pair.
pub const QUEUE_OP: &str = "queue_put_get";
/// TCP echo round trip.
pub const ECHO_OP: &str = "tcp_echo_round_trip";

/// One operation's figures in one cell, over the cell's runs (fresh processes).
#[derive(Debug, Clone, PartialEq)]
pub struct OpStats {
    /// Median over runs of each run's median ns per op.
    pub ns_median: f64,
    /// Smallest run median, ns.
    pub ns_min: f64,
    /// Largest run median, ns.
    pub ns_max: f64,
    /// Mean of the run medians, ns.
    pub ns_mean: f64,
    /// Standard deviation of the run medians, ns (0 with one run).
    pub ns_stddev: f64,
    /// Median over runs of the within-run standard deviation (over repetitions), ns.
    pub within_run_stddev_ns: f64,
    /// Median over runs of the ratio to the plain call.
    pub ratio_to_plain_call: Option<f64>,
    /// The doubling change (2x vs 1x iterations) furthest from zero over runs, as a fraction.
    pub doubling_change_worst: f64,
    /// Runs measured.
    pub runs: usize,
    /// Runs in which a set-up check flagged the op.
    pub flagged_runs: usize,
    /// The first flag text seen, when any run was flagged.
    pub flag: Option<String>,
}

/// Whether a cell's runs carry per-operation figures.
pub fn has_ops(cell: &Cell) -> bool {
    cell.runs.iter().any(|r| r.extra.ops.is_some())
}

/// Per-op figures of a cell whose runs carry `extra.ops`, keyed by op name.
pub fn op_stats(cell: &Cell) -> BTreeMap<String, OpStats> {
    let mut per_op: BTreeMap<String, Vec<&OpFigure>> = BTreeMap::new();
    for run in super::measured::MeasuredRuns::of(cell).iter() {
        for (name, row) in run.extra.ops.iter().flatten() {
            per_op.entry(name.clone()).or_default().push(row);
        }
    }
    per_op
        .into_iter()
        .filter_map(|(name, rows)| {
            let col = |k: fn(&OpFigure) -> Option<f64>| {
                rows.iter().filter_map(|r| k(r)).collect::<Vec<_>>()
            };
            let medians = col(|r| r.ns_per_op_median);
            if medians.is_empty() {
                return None;
            }
            let ratios = col(|r| r.ratio_to_plain_call);
            let flagged: Vec<&&OpFigure> =
                rows.iter().filter(|r| r.timing_ok == Some(false)).collect();
            let stats = OpStats {
                ns_median: stats::median(&medians),
                ns_min: medians.iter().copied().fold(f64::INFINITY, f64::min),
                ns_max: medians.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                ns_mean: stats::mean(&medians),
                ns_stddev: if medians.len() > 1 {
                    stats::stddev(&medians)
                } else {
                    0.0
                },
                within_run_stddev_ns: stats::median(&col(|r| r.ns_per_op_stddev)),
                ratio_to_plain_call: (!ratios.is_empty()).then(|| stats::median(&ratios)),
                doubling_change_worst: col(|r| r.doubling_change)
                    .into_iter()
                    .fold(0.0, |w: f64, c| if c.abs() > w.abs() { c } else { w }),
                runs: medians.len(),
                flagged_runs: flagged.len(),
                flag: flagged.first().and_then(|r| r.flag.clone()),
            };
            Some((name, stats))
        })
        .collect()
}

/// Sort key for op names: the script's order, `gather_N` by N, unknown names last.
pub fn op_order(name: &str) -> (usize, u64, String) {
    const ORDER: &[&str] = &[
        "plain_call",
        "await_coroutine",
        "sleep0",
        "create_task_await",
        "gather_",
        "queue_put_get",
        "lock_acquire_release",
        "tcp_echo_round_trip",
        "asyncio_run_per_call",
    ];
    let rank = ORDER
        .iter()
        .position(|o| name == *o || (o.ends_with('_') && name.starts_with(o)))
        .unwrap_or(ORDER.len());
    let n = name
        .strip_prefix("gather_")
        .and_then(|k| k.parse().ok())
        .unwrap_or(0);
    (rank, n, name.to_string())
}

/// "3.10.13" as numbers, for ordering interpreters (non-numeric parts last).
pub fn version_key(v: &str) -> Vec<u64> {
    v.split(['.', '+', 'a', 'b', 'r', 'c', 't'])
        .map(|p| p.parse().unwrap_or(u64::MAX))
        .collect()
}

/// The cell's event loop: the `loop` field, else the `loop` parameter, else `asyncio`.
pub fn loop_of(c: &Cell) -> String {
    c.event_loop
        .clone()
        .or_else(|| {
            c.params
                .get("loop")
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
        })
        .unwrap_or_else(|| "asyncio".into())
}

/// Readable name of an asyncio_ops operation.
pub fn op_label(op: &str) -> String {
    match op {
        "plain_call" => "plain function call".into(),
        "await_coroutine" => "await a coroutine".into(),
        "sleep0" => "await asyncio.sleep(0)".into(),
        "create_task_await" => "create_task + await".into(),
        "queue_put_get" => "Queue put/get pair".into(),
        "lock_acquire_release" => "uncontended Lock acquire/release".into(),
        "tcp_echo_round_trip" => "TCP echo round trip".into(),
        "asyncio_run_per_call" => "asyncio.run() per call (deliberately mis-timed)".into(),
        other => match other.strip_prefix("gather_") {
            Some(k) => format!("gather, per coroutine (of {k})"),
            None => other.to_string(),
        },
    }
}

/// pyperf's figures for one benchmark, each the median over the cell's runs, in ns.
#[derive(Debug, Clone, PartialEq)]
pub struct PyperfFigure {
    /// Median of the runs' medians, ns.
    pub median_ns: f64,
    /// Median of the runs' means, ns.
    pub mean_ns: f64,
    /// Median of the runs' standard deviations, ns.
    pub stdev_ns: f64,
}

/// Whether a cell's runs carry pyperf results.
pub fn has_benchmarks(cell: &Cell) -> bool {
    cell.runs.iter().any(|r| r.extra.benchmarks.is_some())
}

/// pyperf's figures for `bench` over a cell's runs; None when no run has them.
pub fn pyperf_figure(cell: &Cell, bench: &str) -> Option<PyperfFigure> {
    let get = |k: fn(&crate::extras::PyperfBenchmark) -> Option<f64>| -> Vec<f64> {
        super::measured::MeasuredRuns::of(cell)
            .iter()
            .filter_map(|r| k(r.extra.benchmarks.as_ref()?.get(bench)?))
            .collect()
    };
    let (medians, means, sds) = (
        get(|b| b.median_ns),
        get(|b| b.mean_ns),
        get(|b| b.stdev_ns),
    );
    (!medians.is_empty()).then(|| PyperfFigure {
        median_ns: stats::median(&medians),
        mean_ns: stats::median(&means),
        stdev_ns: stats::median(&sds),
    })
}

/// The benchmark names of a cell's pyperf results, sorted by [`op_order`].
pub fn benchmark_names(cell: &Cell) -> Vec<String> {
    let mut names: Vec<String> = cell
        .runs
        .iter()
        .flat_map(|r| r.extra.benchmarks.iter().flat_map(|b| b.keys().cloned()))
        .collect();
    names.sort_by_key(|n| op_order(n));
    names.dedup();
    names
}

/// One operation's figure in one run (ns per op, lower is better): `extra.ops.NAME` (the lab's
/// median) or `extra.benchmarks.NAME` (pyperf's median).
pub fn op_ns(r: &RunRecord, op: &str) -> Option<f64> {
    let e = &r.extra;
    e.ops
        .as_ref()
        .and_then(|o| o.get(op)?.ns_per_op_median)
        .or_else(|| e.benchmarks.as_ref()?.get(op)?.median_ns)
}

/// The operations a cell measured per run (lab or pyperf), in the report's order; empty for
/// ordinary cells.
pub fn op_names(c: &Cell) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for r in &c.runs {
        let lab = r.extra.ops.iter().flat_map(|o| o.keys());
        let pyperf = r.extra.benchmarks.iter().flat_map(|o| o.keys());
        for name in lab.chain(pyperf) {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
    }
    names.sort_by_key(|n| op_order(n));
    names
}
