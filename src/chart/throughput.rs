//! Throughput chart, one per scenario: a bar per cell at its median operations per second,
//! whiskers at the median's bootstrap 95 % interval (both from the cell's summary).

use super::bars::{cell_bars, BarChart, Interval};
use super::frame::Captions;
use super::{bars_footnote, ops_of, per_scenario, scenario_line, slug, Chart, ChartFile};
use crate::analysis::Report;

/// Median throughput per cell with 95 % interval whiskers.
pub struct Throughput;

impl Chart for Throughput {
    fn kind(&self) -> &'static str {
        "throughput"
    }

    fn render_svg(&self, report: &Report) -> Vec<ChartFile> {
        per_scenario(report, |s| {
            // Per-operation studies get the `ops` chart: their cells' throughput means nothing.
            if ops_of(report, &s.name).is_some() || super::held_study(report, &s.name) {
                return None;
            }
            let chart = BarChart {
                captions: Captions {
                    title: format!(
                        "{}: throughput, median operations per second (higher is better)",
                        s.name
                    ),
                    subtitle: scenario_line(report.results, s),
                    footnote: bars_footnote("throughput"),
                },
                x_label: "throughput, operations per second of wall time".into(),
                unit: "/s".into(),
                legend: Vec::new(),
                groups: cell_bars(s, |c| {
                    Some(Interval::of(&c.summary.as_ref()?.throughput_per_s, 1.0))
                }),
            };
            Some(
                chart
                    .draw()
                    .file(format!("throughput-{}", slug(&s.name)), &s.name),
            )
        })
    }
}
