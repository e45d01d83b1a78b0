//! Throughput chart, one per scenario: a bar per cell at its median operations per second,
//! whiskers at the median's bootstrap 95 % interval.

use super::bars::{Bar, BarChart, Group};
use super::{
    bars_footnote, cell_label, cells_of, machine_line, many_pythons, scenarios, slug,
    variant_index, varying_keys, Chart, ChartFile,
};
use crate::analysis::Report;
use crate::results::CellStatus;

/// Median throughput per cell with 95 % interval whiskers.
pub struct Throughput;

impl Chart for Throughput {
    fn kind(&self) -> &'static str {
        "throughput"
    }

    fn render_svg(&self, report: &Report) -> Vec<ChartFile> {
        let results = report.results;
        scenarios(results)
            .into_iter()
            // Per-operation studies get the `ops` chart: their cells' throughput means nothing.
            .filter(|s| !super::ops::has_ops(&cells_of(results, s)))
            .map(|scenario| {
                let cells = cells_of(results, &scenario);
                let varying = varying_keys(&cells, &[]);
                let py = many_pythons(&cells);
                let groups = cells
                    .iter()
                    .map(|c| {
                        let t = c.summary.as_ref().map(|s| &s.throughput_per_s);
                        let failed = c.status == CellStatus::Failed;
                        Group {
                            label: String::new(),
                            bars: vec![Bar {
                                label: format!(
                                    "{}{}",
                                    cell_label(c, &varying, py),
                                    if failed { " (failed)" } else { "" }
                                ),
                                series: variant_index(&cells, &c.variant),
                                value: t.map(|t| t.median).filter(|m| m.is_finite()),
                                lo: t.map_or(f64::NAN, |t| t.ci95_low),
                                hi: t.map_or(f64::NAN, |t| t.ci95_high),
                                missing: "failed: no measurement".into(),
                                note: String::new(),
                            }],
                        }
                    })
                    .collect();
                let title = format!(
                    "{scenario}: throughput, median operations per second (higher is better)"
                );
                let chart = BarChart {
                    title: title.clone(),
                    subtitle: machine_line(results, &cells),
                    x_label: "throughput, operations per second of wall time".into(),
                    unit: "/s".into(),
                    legend: Vec::new(),
                    footnote: bars_footnote("throughput"),
                    groups,
                };
                ChartFile {
                    name: format!("throughput-{}", slug(&scenario)),
                    scenario: Some(scenario),
                    title,
                    svg: chart.render(),
                }
            })
            .collect()
    }
}
