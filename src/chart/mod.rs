//! Charts of the report model (`analysis::Report`) behind one [`Chart`] interface: SVG always,
//! PNG beside it.
//!
//! Each chart kind is one file and one entry in [`registry`]; adding a kind (e.g. the
//! open-loop `load_sweep.rs`: latency against offered load with the knee marked) means
//! writing a type that implements [`Chart`] and adding one line to [`registry`]. Everything
//! else — `DIR/charts/*.svg|png`, the inline charts of `report.html`, `make charts` — follows.
//!
//! A kind takes its series from the analysis (per-scenario cells and varying parameters,
//! per-operation figures, sweeps and knees), computes no statistic the analysis has, and
//! draws only its marks: title block, axes, ticks, legend and footnote are the shared frame
//! of `frame.rs`, drawn on the SVG primitives of `svg.rs`.
//!
//! Charts are deterministic: the same `results.json` gives byte-identical files (no
//! timestamps, stable ordering, fixed float formatting), so `asynclab report` can be re-run.

pub mod bars;
pub mod fanout;
pub mod frame;
pub mod grouped;
pub mod held;
pub mod latency;
pub mod load_sweep;
pub mod memory;
pub mod network_sweep;
pub mod ops;
pub mod png;
pub mod size_lines;
pub mod slow_consumer;
pub mod svg;
pub mod throughput;

use std::collections::BTreeMap;

use serde_json::Value;

use crate::analysis::runtime::OpsReport;
use crate::analysis::scenario::ScenarioReport;
use crate::analysis::{params_text, Report};
use crate::results::{Cell, Results};

/// One rendered chart.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartFile {
    /// File stem, unique in the results folder: `<kind>-<scenario>` (e.g. `throughput-io_http`).
    pub name: String,
    /// The scenario it belongs to, so the HTML report shows it in that scenario's section;
    /// `None` for charts across scenarios.
    pub scenario: Option<String>,
    /// What it shows (also the SVG's `<title>`).
    pub title: String,
    /// The SVG document (no XML declaration, so it can be inlined in HTML).
    pub svg: String,
}

/// A kind of chart.
pub trait Chart {
    /// Short name, the file-name prefix (`throughput`, `latency`, ...).
    fn kind(&self) -> &'static str;
    /// The charts of this kind for a results document (none when it does not apply).
    fn render_svg(&self, report: &Report) -> Vec<ChartFile>;
}

/// Every chart kind, in the order the report shows them within a scenario.
///
/// Extension point: a new kind is one more line here (the open-loop mode adds
/// `Box::new(load_sweep::LoadSweep)` after `grouped`).
pub fn registry() -> Vec<Box<dyn Chart>> {
    vec![
        Box::new(throughput::Throughput),
        Box::new(latency::Latency),
        Box::new(memory::Memory),
        Box::new(grouped::Grouped),
        Box::new(load_sweep::LoadSweep),
        Box::new(network_sweep::NetworkSweepChart),
        Box::new(held::HeldChart),
        Box::new(fanout::FanoutChart),
        Box::new(slow_consumer::SlowConsumerChart),
        Box::new(ops::Ops),
    ]
}

/// All charts: scenario by scenario (in the document's order), kinds in [`registry`] order;
/// charts that belong to no scenario last.
pub fn render_all(report: &Report) -> Vec<ChartFile> {
    let mut all: Vec<ChartFile> = registry()
        .iter()
        .flat_map(|k| k.render_svg(report))
        .collect();
    let rank = |c: &ChartFile| -> usize {
        c.scenario
            .as_ref()
            .and_then(|s| report.scenarios.iter().position(|o| &o.name == s))
            .unwrap_or(usize::MAX)
    };
    // Stable sort: within a scenario the registry order is kept.
    all.sort_by_key(rank);
    all
}

/// One kind's charts over every scenario: `draw` on each, in the document's order.
pub fn per_scenario<I: IntoIterator<Item = ChartFile>>(
    report: &Report,
    draw: impl Fn(&ScenarioReport) -> I,
) -> Vec<ChartFile> {
    report.scenarios.iter().flat_map(draw).collect()
}

/// The per-operation figures of a scenario, when its cells carry them (`extra.ops`).
pub fn ops_of<'r>(report: &'r Report, scenario: &str) -> Option<&'r OpsReport<'r>> {
    report.ops.iter().find(|o| o.scenario == scenario)
}

/// Whether `scenario`'s cells held idle connections or joined WebSocket rooms: the `held`,
/// `fanout` or `slow_consumer` charts answer it, and its throughput (the trickle's or the messages' schedule) and peak RSS
/// Δ (over the timed load, not the connections) charts would only mislead.
pub fn held_study(report: &Report, scenario: &str) -> bool {
    report.held.iter().any(|r| r.scenario == scenario)
        || report.fanout.iter().any(|r| r.scenario == scenario)
        || report.slow_consumers.iter().any(|r| r.scenario == scenario)
}

/// A file-name-safe form of a scenario name.
pub fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Whether cells differ in interpreter.
pub fn many_pythons(cells: &[&Cell]) -> bool {
    cells.iter().any(|c| c.python != cells[0].python)
}

/// "asyncio concurrency=50" (+ " py3.12.1" when interpreters differ): a cell's label.
pub fn cell_label(cell: &Cell, varying: &[String], with_python: bool) -> String {
    series_label(
        &cell.variant,
        &cell.params,
        &cell.python,
        varying,
        with_python,
    )
}

/// "variant k=v …" of the parameters `varying` (+ " pyX" when `with_python`): the label of a
/// cell or of a sweep.
pub fn series_label(
    variant: &str,
    params: &BTreeMap<String, Value>,
    python: &str,
    varying: &[String],
    with_python: bool,
) -> String {
    let mut s = variant.to_string();
    let p = params_text(params, varying);
    if !p.is_empty() {
        s.push(' ');
        s.push_str(&p);
    }
    if with_python {
        s.push_str(&format!(" py{python}"));
    }
    s
}

/// Index of the cell's variant among the scenario's variants (first-seen order): its colour,
/// the same in every chart of that scenario.
pub fn variant_index(cells: &[&Cell], variant: &str) -> usize {
    let mut seen: Vec<&str> = Vec::new();
    for c in cells {
        if !seen.contains(&c.variant.as_str()) {
            seen.push(&c.variant);
        }
    }
    seen.iter().position(|v| *v == variant).unwrap_or(0)
}

/// Sorts version strings numerically (3.9 < 3.10 < 3.12.1), others after, by text.
pub fn sort_versions(v: &mut [String]) {
    let key = |s: &String| -> (Vec<u64>, String) {
        let nums: Option<Vec<u64>> = s.split('.').map(|p| p.parse().ok()).collect();
        match nums {
            Some(n) => (n, String::new()),
            None => (vec![u64::MAX], s.clone()),
        }
    };
    v.sort_by_key(key);
}

/// The subtitle every chart carries: what machine, which interpreters, and how many rounds
/// `scenario` was measured with (its own plan's, which may differ from the run's).
pub fn machine_line<'a>(
    results: &Results,
    scenario: &str,
    pythons: impl IntoIterator<Item = &'a str>,
) -> String {
    let mut pythons: Vec<String> = pythons.into_iter().map(str::to_string).collect();
    sort_versions(&mut pythons);
    pythons.dedup();
    let e = &results.env;
    let quick = if results.method.quick {
        ", --quick"
    } else {
        ""
    };
    format!(
        "{} ({} cores) · Python {} · {} rounds{quick} · {}",
        e.cpu_model,
        e.cores,
        pythons.join(", "),
        results.method.rounds_of(scenario),
        short_commit(&e.git_commit)
    )
}

/// [`machine_line`] for the interpreters of a scenario's cells.
pub fn scenario_line(results: &Results, s: &ScenarioReport) -> String {
    machine_line(results, &s.name, s.cells.iter().map(|c| c.python.as_str()))
}

/// "asynclab 3c37845" from a full commit hash (keeps a `-dirty` mark).
fn short_commit(commit: &str) -> String {
    let dirty = commit.ends_with("-dirty");
    let hash: String = commit.trim_end_matches("-dirty").chars().take(7).collect();
    if hash.is_empty() {
        "asynclab".into()
    } else {
        format!("asynclab {hash}{}", if dirty { "-dirty" } else { "" })
    }
}

/// The footnote of bar charts.
pub fn bars_footnote(what: &str) -> String {
    format!("Bars: median {what} over rounds (each a fresh process); whiskers: bootstrap 95% interval of the median.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_sort_numerically() {
        let mut v = vec![
            "3.12.1".to_string(),
            "3.9.2".into(),
            "3.10.13".into(),
            "pypy".into(),
        ];
        sort_versions(&mut v);
        assert_eq!(v, ["3.9.2", "3.10.13", "3.12.1", "pypy"]);
    }

    #[test]
    fn each_chart_names_its_own_scenarios_rounds() {
        // 5 rounds, asyncio_ops 3 of its own (method.scenario_plans).
        let doc = crate::results::snapshot_fixture();
        let report = crate::analysis::analyze(&doc);
        let charts = render_all(&report);
        for (scenario, rounds) in [("asyncio_ops", "3 rounds"), ("io_http", "5 rounds")] {
            let mine: Vec<&ChartFile> = charts
                .iter()
                .filter(|c| c.scenario.as_deref() == Some(scenario))
                .collect();
            assert!(!mine.is_empty(), "{scenario} has charts");
            for c in mine {
                assert!(c.svg.contains(&format!(" · {rounds}")), "{}", c.name);
            }
        }
    }

    #[test]
    fn commit_is_shortened_with_its_dirty_mark() {
        assert_eq!(short_commit("3c378452631b-dirty"), "asynclab 3c37845-dirty");
        assert_eq!(short_commit(""), "asynclab");
    }
}
