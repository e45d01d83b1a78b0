//! Grouped bars for the interpreter and event-loop studies: median throughput per variant
//! (× the other varying parameters), one bar per Python version or per `loop` value, each
//! from the cell's summary. Drawn only for scenarios measured on more than one interpreter or
//! event loop (and not for per-operation studies, which get the `ops` chart).

use std::collections::BTreeMap;

use super::bars::{Bar, BarChart, Group, Interval};
use super::frame::Captions;
use super::{
    bars_footnote, cell_label, ops_of, per_scenario, scenario_line, slug, sort_versions, Chart,
    ChartFile,
};
use crate::analysis::ops::loop_of;
use crate::analysis::scenario::ScenarioReport;
use crate::analysis::Report;
use crate::results::{Cell, CellStatus};

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
            Dim::Loop => loop_of(c),
        }
    }
    fn legend(self, v: &str) -> String {
        match self {
            Dim::Python => format!("Python {v}"),
            Dim::Loop => format!("loop {v}"),
        }
    }
    fn by(self) -> &'static str {
        match self {
            Dim::Python => "by Python version",
            Dim::Loop => "by event loop",
        }
    }
}

fn render(report: &Report, s: &ScenarioReport, dim: Dim) -> Option<ChartFile> {
    if ops_of(report, &s.name).is_some() {
        return None;
    }
    let cells = &s.cells;
    let mut values: Vec<String> = cells.iter().map(|c| dim.value(c)).collect();
    sort_versions(&mut values);
    values.dedup();
    if values.len() < 2 {
        return None;
    }
    // Within a group the bars differ in `dim`: it is no part of the group's label.
    let varying: Vec<String> = match dim {
        Dim::Python => s.varying_params.clone(),
        Dim::Loop => s
            .varying_params
            .iter()
            .filter(|k| *k != "loop")
            .cloned()
            .collect(),
    };
    let python_differs =
        matches!(dim, Dim::Loop) && cells.iter().any(|c| c.python != cells[0].python);
    // Groups in first-seen order of their label; bars ordered by the dimension's values.
    let mut order: Vec<String> = Vec::new();
    let mut members: BTreeMap<String, Vec<&Cell>> = BTreeMap::new();
    for c in cells {
        let label = cell_label(c, &varying, python_differs);
        if !order.contains(&label) {
            order.push(label.clone());
        }
        members.entry(label).or_default().push(c);
    }
    let bar = |i: usize, v: &String, c: &Cell| Bar {
        label: String::new(),
        series: i,
        value: c
            .summary
            .as_ref()
            .map(|s| Interval::of(&s.throughput_per_s, 1.0)),
        missing: format!("{v}: failed"),
        note: match c.status {
            CellStatus::Failed => format!(" (failed, {} rounds)", c.runs.len()),
            _ => String::new(),
        },
    };
    let groups = order
        .iter()
        .map(|label| Group {
            label: label.clone(),
            bars: values
                .iter()
                .enumerate()
                .filter_map(|(i, v)| {
                    let c = members[label].iter().find(|c| &dim.value(c) == v)?;
                    Some(bar(i, v, c))
                })
                .collect(),
        })
        .collect();
    let chart = BarChart {
        captions: Captions {
            title: format!(
                "{}: median throughput {} (higher is better)",
                s.name,
                dim.by()
            ),
            subtitle: scenario_line(report.results, s),
            footnote: bars_footnote("throughput"),
        },
        x_label: "throughput, operations per second of wall time".into(),
        unit: "/s".into(),
        legend: values.iter().map(|v| dim.legend(v)).collect(),
        groups,
    };
    let name = format!("grouped-{}-{}", dim.name(), slug(&s.name));
    Some(chart.draw().file(name, &s.name))
}

impl Chart for Grouped {
    fn kind(&self) -> &'static str {
        "grouped"
    }

    fn render_svg(&self, report: &Report) -> Vec<ChartFile> {
        per_scenario(report, |s| {
            [Dim::Python, Dim::Loop]
                .into_iter()
                .filter_map(|d| render(report, s, d))
                .collect::<Vec<_>>()
        })
    }
}
