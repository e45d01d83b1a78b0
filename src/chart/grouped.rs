//! Grouped bars for the interpreter and event-loop studies: median throughput per variant
//! (× the other varying parameters), one bar per Python version or per `loop` value. Drawn
//! only for scenarios measured on more than one interpreter or event loop.

use std::collections::BTreeMap;

use super::bars::{Bar, BarChart, Group};
use super::{
    bars_footnote, cell_label, cells_of, machine_line, scenarios, slug, sort_versions,
    varying_keys, Chart, ChartFile,
};
use crate::analysis::Report;
use crate::results::{Cell, CellStatus, Results};

/// Variant × python, or variant × event loop.
pub struct Grouped;

/// What a bar within a group stands for.
#[derive(Clone, Copy)]
enum Dim {
    Python,
    Loop,
}

impl Dim {
    fn name(self) -> &'static str {
        match self {
            Dim::Python => "python",
            Dim::Loop => "loop",
        }
    }
    fn value(self, c: &Cell) -> String {
        match self {
            Dim::Python => c.python.clone(),
            Dim::Loop => event_loop(c),
        }
    }
}

use crate::analysis::ops::loop_of as event_loop;

fn render(results: &Results, scenario: &str, dim: Dim) -> Option<ChartFile> {
    let cells = cells_of(results, scenario);
    if super::ops::has_ops(&cells) {
        return None;
    }
    let mut values: Vec<String> = cells.iter().map(|c| dim.value(c)).collect();
    sort_versions(&mut values);
    values.dedup();
    if values.len() < 2 {
        return None;
    }
    let skip: &[&str] = match dim {
        Dim::Python => &[],
        Dim::Loop => &["loop"],
    };
    let varying = varying_keys(&cells, skip);
    let python_differs =
        matches!(dim, Dim::Loop) && cells.iter().any(|c| c.python != cells[0].python);
    // Groups in first-seen order of their label; bars ordered by the dimension's values.
    let mut order: Vec<String> = Vec::new();
    let mut members: BTreeMap<String, Vec<&Cell>> = BTreeMap::new();
    for c in &cells {
        let label = cell_label(c, &varying, python_differs);
        if !order.contains(&label) {
            order.push(label.clone());
        }
        members.entry(label).or_default().push(c);
    }
    let groups = order
        .iter()
        .map(|label| {
            let bars = values
                .iter()
                .enumerate()
                .filter_map(|(i, v)| {
                    let c = members[label].iter().find(|c| &dim.value(c) == v)?;
                    let t = c.summary.as_ref().map(|s| &s.throughput_per_s);
                    Some(Bar {
                        label: String::new(),
                        series: i,
                        value: t.map(|t| t.median).filter(|m| m.is_finite()),
                        lo: t.map_or(f64::NAN, |t| t.ci95_low),
                        hi: t.map_or(f64::NAN, |t| t.ci95_high),
                        missing: format!("{v}: failed"),
                        note: match c.status {
                            CellStatus::Failed => format!(" (failed, {} rounds)", c.runs.len()),
                            _ => String::new(),
                        },
                    })
                })
                .collect();
            Group {
                label: label.clone(),
                bars,
            }
        })
        .collect();
    let legend = values
        .iter()
        .map(|v| match dim {
            Dim::Python => format!("Python {v}"),
            Dim::Loop => format!("loop {v}"),
        })
        .collect();
    let by = match dim {
        Dim::Python => "by Python version",
        Dim::Loop => "by event loop",
    };
    let title = format!("{scenario}: median throughput {by} (higher is better)");
    let chart = BarChart {
        title: title.clone(),
        subtitle: machine_line(results, &cells),
        x_label: "throughput, operations per second of wall time".into(),
        unit: "/s".into(),
        legend,
        footnote: bars_footnote("throughput"),
        groups,
    };
    Some(ChartFile {
        name: format!("grouped-{}-{}", dim.name(), slug(scenario)),
        scenario: Some(scenario.to_string()),
        title,
        svg: chart.render(),
    })
}

impl Chart for Grouped {
    fn kind(&self) -> &'static str {
        "grouped"
    }

    fn render_svg(&self, report: &Report) -> Vec<ChartFile> {
        let results = report.results;
        scenarios(results)
            .iter()
            .flat_map(|s| {
                [
                    render(results, s, Dim::Python),
                    render(results, s, Dim::Loop),
                ]
            })
            .flatten()
            .collect()
    }
}
