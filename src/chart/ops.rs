//! The asyncio runtime study's chart: per operation, one bar per interpreter (or per event
//! loop) at its median cost relative to the base — the oldest interpreter, or asyncio's own
//! loop — so operations from 40 ns to 25 µs share one linear axis. Drawn for scenarios whose
//! cells carry per-operation figures (`asyncio_ops`); their throughput means nothing.
//!
//! The figures are the analysis' (`analysis::runtime::OpsReport`: every operation's
//! [`OpStats`] per cell, its loops and interpreters), so the chart and the summary's
//! per-operation tables agree; the chart only divides them by the base's median.

use super::bars::{Bar, BarChart, Group, Interval};
use super::frame::Captions;
use super::{machine_line, per_scenario, slug, Chart, ChartFile};
use crate::analysis::ops::{loop_of, op_label, op_order, version_key, OpStats};
use crate::analysis::runtime::{OpsReport, REFERENCE_LOOP};
use crate::analysis::Report;

/// Per-operation cost relative to a base interpreter or loop.
pub struct Ops;

/// One bar colour: its legend label, the loop and the interpreter it stands for.
struct Series {
    label: String,
    event_loop: String,
    python: String,
}

/// The analysis' figures for `op` in the cell of one series.
fn stats<'r>(ops: &'r OpsReport, s: &Series, op: &str) -> Option<&'r OpStats> {
    ops.details
        .iter()
        .find(|(o, c, _)| o == op && c.python == s.python && loop_of(c) == s.event_loop)
        .map(|(_, _, st)| st)
}

/// One chart: `series` (one per bar colour) compared with `series[0]`.
fn chart(
    report: &Report,
    ops: &OpsReport,
    series: &[Series],
    name: String,
    what: &str,
) -> Option<ChartFile> {
    let base = series.first().filter(|_| series.len() >= 2)?;
    let mut names: Vec<&String> = ops.details.iter().map(|(o, _, _)| o).collect();
    names.sort_by_key(|o| op_order(o));
    names.dedup();
    let groups = names
        .into_iter()
        .filter_map(|op| {
            let base_ns = stats(ops, base, op)?.ns_median;
            let bar = |(i, s): (usize, &Series)| {
                let st = stats(ops, s, op);
                Bar {
                    label: String::new(),
                    series: i,
                    value: st.map(|st| Interval {
                        value: st.ns_median / base_ns,
                        lo: st.ns_min / base_ns,
                        hi: st.ns_max / base_ns,
                    }),
                    missing: format!("{}: not measured", s.label),
                    note: st.map_or_else(String::new, |st| format!(" ({})", micros(st.ns_median))),
                }
            };
            Some(Group {
                label: op_label(op),
                bars: series.iter().enumerate().map(bar).collect(),
            })
        })
        .collect();
    let chart = BarChart {
        captions: Captions {
            title: format!(
                "{}: cost per operation relative to {} (lower is better)",
                ops.scenario, base.label
            ),
            subtitle: machine_line(
                report.results,
                &ops.scenario,
                series.iter().map(|s| s.python.as_str()),
            ),
            footnote: "Bars: median over runs of each run's median time per operation, over the base's median (in brackets: µs per operation); whiskers: the fastest and slowest run.".into(),
        },
        x_label: format!("time per operation ÷ {}'s ({what})", base.label),
        unit: "×".into(),
        legend: series.iter().map(|s| s.label.clone()).collect(),
        groups,
    };
    Some(chart.draw().file(name, &ops.scenario))
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

/// A scenario's ops charts: interpreters compared, one chart per loop; loops compared, one
/// per interpreter.
fn render(report: &Report, ops: &OpsReport) -> Vec<ChartFile> {
    let mut loops: Vec<&str> = ops.tables.iter().map(|t| t.event_loop.as_str()).collect();
    loops.sort_by_key(|l| (*l != REFERENCE_LOOP, *l));
    let mut pythons: Vec<&str> = ops
        .tables
        .iter()
        .flat_map(|t| t.pythons.iter().map(String::as_str))
        .collect();
    pythons.sort_by_key(|p| version_key(p));
    pythons.dedup();
    let measured = |l: &str, p: &str| {
        ops.tables
            .iter()
            .any(|t| t.event_loop == l && t.pythons.iter().any(|tp| tp == p))
    };
    let series = |l: &str, p: &str, label: String| {
        measured(l, p).then(|| Series {
            label,
            event_loop: l.to_string(),
            python: p.to_string(),
        })
    };
    let named = |dim: &str, v: &str| match dim {
        "python" => format!("Python {v}"),
        _ => format!("loop {v}"),
    };
    let mut out = Vec::new();
    // Interpreters compared, one chart per loop; loops compared, one per interpreter.
    for (by, fixed_dim, fixed, varied) in [
        ("python", "loop", &loops, &pythons),
        ("loop", "python", &pythons, &loops),
    ] {
        for f in fixed {
            let s: Vec<Series> = varied
                .iter()
                .filter_map(|v| {
                    let (l, p) = if by == "python" { (*f, *v) } else { (*v, *f) };
                    series(l, p, named(by, v))
                })
                .collect();
            let name = format!("ops-{by}-{}-{}", slug(f), slug(&ops.scenario));
            out.extend(chart(report, ops, &s, name, &named(fixed_dim, f)));
        }
    }
    out
}

impl Chart for Ops {
    fn kind(&self) -> &'static str {
        "ops"
    }

    fn render_svg(&self, report: &Report) -> Vec<ChartFile> {
        per_scenario(report, |s| {
            super::ops_of(report, &s.name).map_or_else(Vec::new, |ops| render(report, ops))
        })
    }
}
