//! The asyncio runtime study's chart: per operation, one bar per interpreter (or per event
//! loop) at its median cost relative to the base — the oldest interpreter, or asyncio's own
//! loop — so operations from 40 ns to 25 µs share one linear axis. Drawn for scenarios whose
//! cells carry per-operation figures (`asyncio_ops`); their throughput means nothing.

use std::collections::BTreeMap;

use super::bars::{Bar, BarChart, Group};
use super::{cells_of, machine_line, scenarios, slug, sort_versions, Chart, ChartFile};
use crate::analysis::ops::{loop_of as event_loop, op_label, op_order, op_stats, OpStats};
use crate::analysis::Report;
use crate::results::{Cell, Results};

/// Per-operation cost relative to a base interpreter or loop.
pub struct Ops;

/// Whether a scenario's cells carry per-operation figures (`extra.ops` in their runs).
pub fn has_ops(cells: &[&Cell]) -> bool {
    cells.iter().any(|c| crate::analysis::ops::has_ops(c))
}

/// One chart: `series` cells (one per bar colour) compared with `series[0]`.
fn chart(
    results: &Results,
    scenario: &str,
    series: &[(String, &Cell)],
    name: String,
    what: &str,
) -> Option<ChartFile> {
    if series.len() < 2 {
        return None;
    }
    let stats: Vec<BTreeMap<String, OpStats>> = series.iter().map(|(_, c)| op_stats(c)).collect();
    let mut ops: Vec<String> = stats[0].keys().cloned().collect();
    ops.sort_by_key(|o| op_order(o));
    let groups = ops
        .iter()
        .map(|op| {
            let base = stats[0][op].ns_median;
            let bars = stats
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    let st = s.get(op);
                    Bar {
                        label: String::new(),
                        series: i,
                        value: st.map(|st| st.ns_median / base).filter(|v| v.is_finite()),
                        lo: st.map_or(f64::NAN, |st| st.ns_min / base),
                        hi: st.map_or(f64::NAN, |st| st.ns_max / base),
                        missing: format!("{}: not measured", series[i].0),
                        note: st
                            .map_or_else(String::new, |st| format!(" ({})", micros(st.ns_median))),
                    }
                })
                .collect();
            Group {
                label: op_label(op),
                bars,
            }
        })
        .collect();
    let cells: Vec<&Cell> = series.iter().map(|(_, c)| *c).collect();
    let title = format!(
        "{scenario}: cost per operation relative to {} (lower is better)",
        series[0].0
    );
    let bars = BarChart {
        title: title.clone(),
        subtitle: machine_line(results, &cells),
        x_label: format!("time per operation ÷ {}'s ({what})", series[0].0),
        unit: "×".into(),
        legend: series.iter().map(|(l, _)| l.clone()).collect(),
        footnote: "Bars: median over runs of each run's median time per operation, over the base's median (in brackets: µs per operation); whiskers: the fastest and slowest run.".into(),
        groups,
    };
    Some(ChartFile {
        name,
        scenario: Some(scenario.to_string()),
        title,
        svg: bars.render(),
    })
}

fn micros(ns: f64) -> String {
    let us = ns / 1000.0;
    if us < 1.0 {
        format!("{us:.3} µs")
    } else if us < 10.0 {
        format!("{us:.2} µs")
    } else {
        format!("{us:.1} µs")
    }
}

impl Chart for Ops {
    fn kind(&self) -> &'static str {
        "ops"
    }

    fn render_svg(&self, report: &Report) -> Vec<ChartFile> {
        let results = report.results;
        let mut out = Vec::new();
        for scenario in scenarios(results) {
            let cells: Vec<&Cell> = cells_of(results, &scenario)
                .into_iter()
                .filter(|c| has_ops(&[c]))
                .collect();
            if cells.is_empty() {
                continue;
            }
            let mut loops: Vec<String> = cells.iter().map(|c| event_loop(c)).collect();
            loops.dedup();
            loops.sort_by_key(|l| (l != "asyncio", l.clone()));
            loops.dedup();
            let mut pythons: Vec<String> = cells.iter().map(|c| c.python.clone()).collect();
            sort_versions(&mut pythons);
            pythons.dedup();
            let find = |p: &str, l: &str| {
                cells
                    .iter()
                    .copied()
                    .find(|c| c.python == p && event_loop(c) == l)
            };
            // Interpreters compared, one chart per loop; loops compared, one per interpreter.
            for l in &loops {
                let series: Vec<(String, &Cell)> = pythons
                    .iter()
                    .filter_map(|p| Some((format!("Python {p}"), find(p, l)?)))
                    .collect();
                let name = format!("ops-python-{}-{}", slug(l), slug(&scenario));
                out.extend(chart(
                    results,
                    &scenario,
                    &series,
                    name,
                    &format!("loop {l}"),
                ));
            }
            for p in &pythons {
                let series: Vec<(String, &Cell)> = loops
                    .iter()
                    .filter_map(|l| Some((format!("loop {l}"), find(p, l)?)))
                    .collect();
                let name = format!("ops-loop-{}-{}", slug(p), slug(&scenario));
                out.extend(chart(
                    results,
                    &scenario,
                    &series,
                    name,
                    &format!("Python {p}"),
                ));
            }
        }
        out
    }
}
