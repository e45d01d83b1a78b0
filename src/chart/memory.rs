//! Memory chart, one per scenario: peak RSS above the ready baseline, per unit (KiB) when
//! every measured cell has a numeric `units` parameter (the memory study), else per cell (MiB).

use super::bars::{Bar, BarChart, Group};
use super::{
    bars_footnote, cell_label, cells_of, machine_line, many_pythons, scenarios, slug,
    variant_index, varying_keys, Chart, ChartFile,
};
use crate::analysis::Report;
use crate::results::{Cell, CellStatus};

/// Peak RSS delta per unit or per cell.
pub struct Memory;

/// The cell's `units` parameter when it is a positive number.
pub fn units(cell: &Cell) -> Option<f64> {
    cell.params
        .get("units")
        .and_then(|v| v.as_f64())
        .filter(|u| *u > 0.0)
}

impl Chart for Memory {
    fn kind(&self) -> &'static str {
        "memory"
    }

    fn render_svg(&self, report: &Report) -> Vec<ChartFile> {
        let results = report.results;
        let mut out = Vec::new();
        for scenario in scenarios(results) {
            let cells = cells_of(results, &scenario);
            let measured: Vec<&&Cell> = cells.iter().filter(|c| c.summary.is_some()).collect();
            if measured.is_empty() {
                continue;
            }
            let per_unit = measured.iter().all(|c| units(c).is_some());
            let varying = varying_keys(&cells, &[]);
            let py = many_pythons(&cells);
            let groups = cells
                .iter()
                .map(|c| {
                    // Per unit: MiB × 1024 / units = KiB per unit.
                    let scale = match (per_unit, units(c)) {
                        (true, Some(u)) => 1024.0 / u,
                        _ => 1.0,
                    };
                    let m = c.summary.as_ref().map(|s| &s.peak_rss_delta_mib);
                    Group {
                        label: String::new(),
                        bars: vec![Bar {
                            label: format!(
                                "{}{}",
                                cell_label(c, &varying, py),
                                if c.status == CellStatus::Failed {
                                    " (failed)"
                                } else {
                                    ""
                                }
                            ),
                            series: variant_index(&cells, &c.variant),
                            value: m.map(|m| m.median * scale).filter(|v| v.is_finite()),
                            lo: m.map_or(f64::NAN, |m| m.ci95_low * scale),
                            hi: m.map_or(f64::NAN, |m| m.ci95_high * scale),
                            missing: "failed: no measurement".into(),
                            note: String::new(),
                        }],
                    }
                })
                .collect();
            let (what, axis, unit) = if per_unit {
                (
                    "peak RSS per unit above the ready baseline (lower is better)",
                    "peak RSS of the process tree above its baseline at ready ÷ units, KiB per unit",
                    " KiB",
                )
            } else {
                (
                    "peak RSS above the ready baseline (lower is better)",
                    "peak RSS of the process tree above its baseline at ready, MiB",
                    " MiB",
                )
            };
            let title = format!("{scenario}: {what}");
            let chart = BarChart {
                title: title.clone(),
                subtitle: machine_line(results, &cells),
                x_label: axis.into(),
                unit: unit.into(),
                legend: Vec::new(),
                footnote: bars_footnote("peak RSS delta"),
                groups,
            };
            out.push(ChartFile {
                name: format!("memory-{}", slug(&scenario)),
                scenario: Some(scenario),
                title,
                svg: chart.render(),
            });
        }
        out
    }
}
