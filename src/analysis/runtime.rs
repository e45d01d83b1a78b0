//! The runtime study's part of the report model, for any scenario whose runs carry the extras
//! it needs: per-operation cost by interpreter (`extra.ops`), pyperf's cross-check beside it
//! (`extra.benchmarks`), and event loops compared on a timed batch (`extra.elapsed_ms`).
//!
//! Their tables call no verdict, but each ratio they print (an interpreter against the oldest, a
//! loop against asyncio) is also judged round by round like any comparison of two cells
//! ([`comparison::cells_where`]), so that a second run can be checked against the first.

use std::collections::BTreeMap;

use super::comparison::{self, Comparison, Rule};
use super::ops::{
    benchmark_names, has_benchmarks, has_ops, loop_of, op_order, op_stats, pyperf_figure,
    version_key, OpStats, PyperfFigure,
};
use crate::results::{Cell, CellStatus};
use crate::stats;

/// pyperf and the lab must agree within this fraction.
pub const PYPERF_TOLERANCE: f64 = 0.10;
/// The loop other loops are compared with.
pub const REFERENCE_LOOP: &str = "asyncio";

/// One operation on one interpreter, in a per-loop table.
#[derive(Debug, Clone, PartialEq)]
pub struct OpEntry {
    /// The figures over runs.
    pub stats: OpStats,
    /// Median over the base interpreter's median (None on the base itself).
    pub vs_base: Option<f64>,
    /// The same ratio judged round by round (None on the base, or with fewer than two pairs).
    pub paired: Option<Comparison>,
}

/// One operation's row of a per-loop table.
#[derive(Debug, Clone, PartialEq)]
pub struct OpRow {
    /// Operation name.
    pub op: String,
    /// One entry per interpreter of the table (None: not measured there).
    pub entries: Vec<Option<OpEntry>>,
}

/// Per-operation cost for one loop across interpreters.
#[derive(Debug, Clone, PartialEq)]
pub struct OpsTable {
    /// The loop.
    pub event_loop: String,
    /// Interpreters, oldest first; the first is the base.
    pub pythons: Vec<String>,
    /// One row per operation.
    pub rows: Vec<OpRow>,
}

/// pyperf's figure for one benchmark beside the lab's.
#[derive(Debug, Clone)]
pub struct PyperfRow<'a> {
    /// The pyperf cell.
    pub cell: &'a Cell,
    /// The benchmark (an operation name).
    pub op: String,
    /// The lab's median ns for the operation, same interpreter and loop.
    pub lab_ns: Option<f64>,
    /// pyperf's figures, when it measured.
    pub pyperf: Option<PyperfFigure>,
    /// pyperf over the lab, minus 1.
    pub difference: Option<f64>,
    /// Whether the two agree within [`PYPERF_TOLERANCE`].
    pub agree: Option<bool>,
}

/// The per-operation section of one scenario.
#[derive(Debug, Clone)]
pub struct OpsReport<'a> {
    /// Scenario name.
    pub scenario: String,
    /// Cells that carry per-operation figures.
    pub lab: Vec<&'a Cell>,
    /// One table per loop (the reference loop first).
    pub tables: Vec<OpsTable>,
    /// pyperf's cross-check rows.
    pub pyperf: Vec<PyperfRow<'a>>,
    /// Every (operation, cell) with its figures, ordered by operation, loop, interpreter.
    pub details: Vec<(String, &'a Cell, OpStats)>,
    /// Cells not measured, grouped by reason: "loop status on python: why" → variants.
    pub missing: BTreeMap<String, Vec<String>>,
}

/// One loop's figure for a workload on one interpreter.
#[derive(Debug, Clone, PartialEq)]
pub enum LoopEntry {
    /// Measured: ms per batch over runs, and the time relative to the reference loop.
    Measured {
        /// ms per batch over runs.
        ms: stats::Summary,
        /// Median over the reference loop's median (None for the reference itself).
        vs_reference: Option<f64>,
        /// The same ratio judged round by round (None for the reference itself, or with fewer
        /// than two pairs).
        paired: Option<Comparison>,
        /// Median peak RSS Δ, MiB.
        peak_rss_delta_mib: Option<f64>,
    },
    /// The cell exists but has no runs ("skipped" or "failed").
    NotMeasured(&'static str),
    /// No such cell.
    Absent,
}

/// One workload on one interpreter, across loops.
#[derive(Debug, Clone, PartialEq)]
pub struct LoopRow {
    /// The workload (variant), with the other parameters that vary between the scenario's
    /// cells (`tcp_echo streams=stdlib`) when there are any.
    pub variant: String,
    /// Interpreter.
    pub python: String,
    /// One entry per loop of the report.
    pub entries: Vec<LoopEntry>,
}

/// Event loops compared on one scenario's timed batches.
#[derive(Debug, Clone)]
pub struct LoopReport {
    /// Scenario name.
    pub scenario: String,
    /// Loops, the reference first.
    pub loops: Vec<String>,
    /// Rows by workload, then interpreter.
    pub rows: Vec<LoopRow>,
    /// Cells not measured: "loop status on python: why" → workloads.
    pub missing: BTreeMap<String, Vec<String>>,
}

/// The first line of why a cell was not measured, at most 200 characters.
pub fn why(c: &Cell) -> String {
    let text = c.failure.as_deref().unwrap_or("not measured");
    text.lines()
        .next()
        .unwrap_or("")
        .chars()
        .take(200)
        .collect()
}

fn status_word(c: &Cell) -> &'static str {
    if c.status == CellStatus::Skipped {
        "skipped"
    } else {
        "failed"
    }
}

fn pythons_of(cells: &[&Cell]) -> Vec<String> {
    let mut v: Vec<String> = cells.iter().map(|c| c.python.clone()).collect();
    v.sort_by_key(|p| version_key(p));
    v.dedup();
    v
}

fn loops_of(cells: &[&Cell]) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for c in cells {
        let l = loop_of(c);
        if !v.contains(&l) {
            v.push(l);
        }
    }
    v.sort_by_key(|l| l != REFERENCE_LOOP);
    v
}

/// The lab's median ns for `op` in one run.
fn lab_ns(r: &crate::results::RunRecord, op: &str) -> Option<f64> {
    r.extra.ops.as_ref()?.get(op)?.ns_per_op_median
}

fn ops_table(event_loop: &str, cells: &[&Cell], rule: Rule) -> Option<OpsTable> {
    let pythons = pythons_of(cells);
    let measured = |p: &str| {
        cells
            .iter()
            .copied()
            .find(|c| c.python == p && !c.runs.is_empty())
    };
    let by_python: BTreeMap<String, BTreeMap<String, OpStats>> = cells
        .iter()
        .filter(|c| !c.runs.is_empty())
        .map(|c| (c.python.clone(), op_stats(c)))
        .collect();
    let mut names: Vec<String> = by_python.values().flat_map(|m| m.keys().cloned()).collect();
    names.sort_by_key(|n| op_order(n));
    names.dedup();
    if names.is_empty() {
        return None;
    }
    let base = &pythons[0];
    let rows = names
        .iter()
        .map(|op| {
            let base_ns = by_python
                .get(base)
                .and_then(|m| m.get(op))
                .map(|s| s.ns_median);
            let entries = pythons
                .iter()
                .map(|p| {
                    let s = by_python.get(p)?.get(op)?;
                    let paired = match (measured(p), measured(base)) {
                        (Some(c), Some(b)) if p != base => {
                            comparison::cells_where(c, b, |r| lab_ns(r, op), rule)
                        }
                        _ => None,
                    };
                    Some(OpEntry {
                        vs_base: base_ns.filter(|_| p != base).map(|b| s.ns_median / b),
                        stats: s.clone(),
                        paired,
                    })
                })
                .collect();
            OpRow {
                op: op.clone(),
                entries,
            }
        })
        .collect();
    Some(OpsTable {
        event_loop: event_loop.to_string(),
        pythons,
        rows,
    })
}

fn pyperf_rows<'a>(cells: &[&'a Cell], lab: &[&'a Cell]) -> Vec<PyperfRow<'a>> {
    let mut out = Vec::new();
    for &p in cells.iter().filter(|c| has_benchmarks(c)) {
        let lab_cell = lab
            .iter()
            .find(|c| c.python == p.python && loop_of(c) == loop_of(p) && !c.runs.is_empty());
        let lab_stats = lab_cell.map(|c| op_stats(c)).unwrap_or_default();
        for op in benchmark_names(p) {
            let lab_ns = lab_stats.get(&op).map(|s| s.ns_median);
            let pyperf = pyperf_figure(p, &op);
            let difference = match (&pyperf, lab_ns) {
                (Some(f), Some(l)) => Some(f.median_ns / l - 1.0),
                _ => None,
            };
            out.push(PyperfRow {
                cell: p,
                op,
                lab_ns,
                agree: difference.map(|d| d.abs() <= PYPERF_TOLERANCE),
                pyperf,
                difference,
            });
        }
    }
    out
}

/// The per-operation section of a scenario whose cells carry `extra.ops`; None otherwise.
pub fn ops_report<'a>(name: &str, cells: &[&'a Cell], rule: Rule) -> Option<OpsReport<'a>> {
    let lab: Vec<&Cell> = cells.iter().copied().filter(|c| has_ops(c)).collect();
    if lab.is_empty() {
        return None;
    }
    let tables = loops_of(&lab)
        .iter()
        .filter_map(|l| {
            let in_loop: Vec<&Cell> = lab.iter().copied().filter(|c| &loop_of(c) == l).collect();
            ops_table(l, &in_loop, rule)
        })
        .collect();
    let mut details: Vec<(String, &Cell, OpStats)> = lab
        .iter()
        .flat_map(|&c| op_stats(c).into_iter().map(move |(n, s)| (n, c, s)))
        .collect();
    details.sort_by(|a, b| {
        (op_order(&a.0), loop_of(a.1), version_key(&a.1.python)).cmp(&(
            op_order(&b.0),
            loop_of(b.1),
            version_key(&b.1.python),
        ))
    });
    let mut missing: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for c in cells.iter().filter(|c| c.summary.is_none()) {
        let key = format!(
            "{} {} on {}: {}",
            loop_of(c),
            status_word(c),
            c.python,
            why(c)
        );
        missing.entry(key).or_default().push(c.variant.clone());
    }
    Some(OpsReport {
        scenario: name.to_string(),
        pyperf: pyperf_rows(cells, &lab),
        lab,
        tables,
        details,
        missing,
    })
}

/// ms per batch of one run: the worker's own `elapsed_ms`, else its timed wall time.
fn run_ms(r: &crate::results::RunRecord) -> f64 {
    r.extra.elapsed_ms.unwrap_or(r.inside_wall_s * 1000.0)
}

/// ms per batch of each measured run.
fn elapsed_ms(c: &Cell) -> Vec<f64> {
    super::measured::MeasuredRuns::of(c)
        .iter()
        .map(|r| run_ms(r))
        .collect()
}

/// Parameters other than `loop` whose values differ between `cells` (a matrix axis such as
/// `streams=native,stdlib`), sorted.
fn axes_beside_loop(cells: &[&Cell]) -> Vec<String> {
    let mut keys: Vec<String> = cells
        .iter()
        .flat_map(|c| c.params.keys().cloned())
        .collect();
    keys.sort();
    keys.dedup();
    keys.retain(|k| {
        k != "loop" && {
            let first = cells.first().and_then(|c| c.params.get(k));
            cells.iter().any(|c| c.params.get(k) != first)
        }
    });
    keys
}

/// A cell's row in the loop table: its variant, then `key=value` of each axis.
fn row_label(c: &Cell, axes: &[String]) -> String {
    let mut label = c.variant.clone();
    for k in axes {
        if let Some(v) = c.params.get(k) {
            let v = v.as_str().map_or_else(|| v.to_string(), str::to_string);
            label.push_str(&format!(" {k}={v}"));
        }
    }
    label
}

/// Event loops compared, for a scenario whose runs carry `extra.elapsed_ms`; None otherwise.
pub fn loop_report(name: &str, cells: &[&Cell], rule: Rule) -> Option<LoopReport> {
    let timed = cells
        .iter()
        .any(|c| c.runs.iter().any(|r| r.extra.elapsed_ms.is_some()));
    if !timed {
        return None;
    }
    let loops = loops_of(cells);
    let pythons = pythons_of(cells);
    let axes = axes_beside_loop(cells);
    let mut variants: Vec<String> = Vec::new();
    for c in cells {
        let row = row_label(c, &axes);
        if !variants.contains(&row) {
            variants.push(row);
        }
    }
    let mut rows = Vec::new();
    let mut missing: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for v in &variants {
        for p in &pythons {
            let cell_for = |l: &str| {
                cells
                    .iter()
                    .copied()
                    .find(|c| row_label(c, &axes) == *v && &c.python == p && loop_of(c) == l)
            };
            let reference_cell = cell_for(REFERENCE_LOOP).filter(|c| !c.runs.is_empty());
            let reference = reference_cell
                .map(|c| stats::median(&elapsed_ms(c)))
                .filter(|m| m.is_finite());
            let entries = loops
                .iter()
                .map(|l| match cell_for(l) {
                    Some(c) if !c.runs.is_empty() => {
                        let ms = stats::summarize(&elapsed_ms(c));
                        let vs_reference = reference
                            .filter(|_| l != REFERENCE_LOOP)
                            .map(|r| ms.median / r);
                        let paired = reference_cell
                            .filter(|_| l != REFERENCE_LOOP)
                            .and_then(|b| comparison::cells(c, b, run_ms, rule));
                        LoopEntry::Measured {
                            ms,
                            vs_reference,
                            paired,
                            peak_rss_delta_mib: c
                                .summary
                                .as_ref()
                                .map(|s| s.peak_rss_delta_mib.median),
                        }
                    }
                    Some(c) => {
                        let key = format!("{l} {} on {p}: {}", status_word(c), why(c));
                        missing.entry(key).or_default().push(c.variant.clone());
                        LoopEntry::NotMeasured(status_word(c))
                    }
                    None => LoopEntry::Absent,
                })
                .collect();
            rows.push(LoopRow {
                variant: v.to_string(),
                python: p.clone(),
                entries,
            });
        }
    }
    Some(LoopReport {
        scenario: name.to_string(),
        loops,
        rows,
        missing,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// An event_loops cell with one run that took `ms` for its batch.
    fn cell(variant: &str, event_loop: &str, streams: &str, ms: f64) -> Cell {
        let run: Value = json!({"round": 0, "wall_s": 1.0, "inside_wall_s": 1.0, "cpu_s": 1.0,
            "baseline_rss_mib": 1.0, "peak_rss_mib": 1.0, "peak_rss_delta_mib": 0.0,
            "ops": 1, "errors": 0, "server_requests": null, "throughput_per_s": 1.0,
            "latency_kind": "service", "latencies_ms": [], "error_samples": [],
            "extra": {"elapsed_ms": ms}});
        serde_json::from_value(json!({
            "id": format!("event_loops/{variant}/3.14.10/loop={event_loop},streams={streams}"),
            "scenario": "event_loops", "variant": variant, "python": "3.14.10",
            "loop": event_loop, "params": {"loop": event_loop, "streams": streams, "tasks": 5},
            "status": "ok", "failure": null, "runs": [run], "summary": null, "warnings": []
        }))
        .unwrap()
    }

    #[test]
    fn an_axis_beside_the_loop_gets_rows_of_its_own() {
        let cells = [
            cell("tcp_echo", "asyncio", "native", 700.0),
            cell("tcp_echo", "rsloop", "native", 300.0),
            cell("tcp_echo", "asyncio", "stdlib", 710.0),
            cell("tcp_echo", "rsloop", "stdlib", 500.0),
        ];
        let refs: Vec<&Cell> = cells.iter().collect();
        let report = loop_report("event_loops", &refs, Rule::DEFAULT).unwrap();
        let labels: Vec<&str> = report.rows.iter().map(|r| r.variant.as_str()).collect();
        assert_eq!(
            labels,
            ["tcp_echo streams=native", "tcp_echo streams=stdlib"],
            "tasks=5 is the same everywhere, so it is no axis"
        );
        let ratio = |row: &LoopRow| match &row.entries[1] {
            LoopEntry::Measured { vs_reference, .. } => vs_reference.unwrap(),
            _ => panic!("rsloop measured"),
        };
        assert!((ratio(&report.rows[0]) - 300.0 / 700.0).abs() < 1e-9);
        assert!((ratio(&report.rows[1]) - 500.0 / 710.0).abs() < 1e-9);
    }

    #[test]
    fn a_contaminated_run_is_left_out_of_the_loop_table() {
        let mut rsloop = cell("tcp_echo", "rsloop", "native", 300.0);
        let mut busy = rsloop.runs[0].clone();
        busy.extra.elapsed_ms = Some(5000.0);
        busy.interference = Some(
            serde_json::from_value(json!({"foreign_cpu_s": 4.0,
            "foreign_cores": 0.8, "steal_s": 0.0, "involuntary_switches": 9,
            "probe_before_ms": 1.0, "probe_after_ms": 1.0, "contaminated": true}))
            .unwrap(),
        );
        rsloop.runs.insert(0, busy);
        let cells = [cell("tcp_echo", "asyncio", "native", 700.0), rsloop];
        let refs: Vec<&Cell> = cells.iter().collect();
        let report = loop_report("event_loops", &refs, Rule::DEFAULT).unwrap();
        match &report.rows[0].entries[1] {
            LoopEntry::Measured { vs_reference, .. } => {
                assert!((vs_reference.unwrap() - 300.0 / 700.0).abs() < 1e-9)
            }
            _ => panic!("rsloop measured"),
        }
    }

    #[test]
    fn a_loop_ratio_is_also_judged_round_by_round() {
        // Each round runs both loops; the host slows a round for both, so the pairs hold.
        let timed = |event_loop: &str, ms: &[f64]| {
            let mut c = cell("tcp_echo", event_loop, "native", ms[0]);
            let first = c.runs[0].clone();
            c.runs = ms
                .iter()
                .enumerate()
                .map(|(round, &m)| {
                    let mut r = first.clone();
                    r.round = round;
                    r.extra.elapsed_ms = Some(m);
                    r
                })
                .collect();
            c
        };
        let cells = [
            timed("asyncio", &[700.0, 900.0, 650.0, 1000.0]),
            timed("uvloop", &[300.0, 390.0, 280.0, 430.0]),
        ];
        let refs: Vec<&Cell> = cells.iter().collect();
        let report = loop_report("event_loops", &refs, Rule::DEFAULT).unwrap();
        let LoopEntry::Measured { paired, .. } = &report.rows[0].entries[1] else {
            panic!("uvloop measured")
        };
        let c = paired.as_ref().expect("four paired rounds");
        assert!((c.ratio.ratio - 0.43).abs() < 0.01, "{c:?}");
        assert!(c.verdict.is_significant(), "{c:?}");
        let LoopEntry::Measured { paired, .. } = &report.rows[0].entries[0] else {
            panic!("asyncio measured")
        };
        assert!(
            paired.is_none(),
            "the reference is not compared with itself"
        );
    }
}
