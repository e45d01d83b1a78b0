//! Memory chart, one per scenario: peak RSS above the ready baseline, per unit (KiB, the
//! analysis' `memory_per_unit`) when every measured cell has a positive `units` parameter (the
//! memory study), else per cell (MiB, the cell's summary); whiskers at the bootstrap 95 %
//! interval of the median, in the same unit.

use super::bars::{cell_bars, BarChart, Interval};
use super::frame::Captions;
use super::{bars_footnote, per_scenario, scenario_line, slug, Chart, ChartFile};
use crate::analysis::scenario::ScenarioReport;
use crate::analysis::Report;
use crate::results::Cell;

/// Peak RSS delta per unit or per cell.
pub struct Memory;

/// A cell's peak RSS Δ per unit, KiB (its interval scaled alike), when the analysis has it.
fn per_unit(s: &ScenarioReport, c: &Cell) -> Option<Interval> {
    let u = s
        .memory_per_unit
        .iter()
        .find(|u| u.cell.id == c.id && u.units > 0)?;
    let m = &c.summary.as_ref()?.peak_rss_delta_mib;
    let kib = |mib: f64| mib * 1024.0 / u.units as f64;
    Some(Interval {
        value: u.per_unit_kib,
        lo: kib(m.ci95_low),
        hi: kib(m.ci95_high),
    })
}

fn render(report: &Report, s: &ScenarioReport) -> Option<ChartFile> {
    let measured: Vec<&&Cell> = s.cells.iter().filter(|c| c.summary.is_some()).collect();
    if measured.is_empty() {
        return None;
    }
    let units = measured.iter().all(|c| per_unit(s, c).is_some());
    let groups = cell_bars(s, |c| match units {
        true => per_unit(s, c),
        false => Some(Interval::of(&c.summary.as_ref()?.peak_rss_delta_mib, 1.0)),
    });
    let (what, axis, unit) = if units {
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
    let chart = BarChart {
        captions: Captions {
            title: format!("{}: {what}", s.name),
            subtitle: scenario_line(report.results, s),
            footnote: bars_footnote("peak RSS delta"),
        },
        x_label: axis.into(),
        unit: unit.into(),
        legend: Vec::new(),
        groups,
    };
    Some(
        chart
            .draw()
            .file(format!("memory-{}", slug(&s.name)), &s.name),
    )
}

impl Chart for Memory {
    fn kind(&self) -> &'static str {
        "memory"
    }

    fn render_svg(&self, report: &Report) -> Vec<ChartFile> {
        per_scenario(report, |s| {
            if super::held_study(report, &s.name) {
                return None;
            }
            render(report, s)
        })
    }
}
