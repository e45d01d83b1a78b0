//! Latency percentile curves, one chart per scenario: for every cell, its pooled per-run
//! `latencies_ms` at p50 … p99.9 on a "nines" axis (the distance between p90, p99 and p99.9
//! is equal), latency on a log axis.
//!
//! The curves are the one figure the analysis does not hold (its summaries keep p50, p95, p99
//! and max), so this chart takes the percentiles of each cell's pooled samples itself, with
//! `stats::percentiles_sorted`.
//!
//! A curve stops at the highest percentile its samples can resolve — where at least one
//! sample lies at or beyond it, `n · (1 − p) >= 1` — so 150 samples end at p99, not at an
//! interpolated p99.9.

use super::frame::{Axis, Body, Captions, Entry, Frame, Key, Legend};
use super::svg::{color, DASHES};
use super::{
    cell_label, many_pythons, per_scenario, scenario_line, slug, variant_index, Chart, ChartFile,
};
use crate::analysis::measured::MeasuredRuns;
use crate::analysis::scenario::ScenarioReport;
use crate::analysis::Report;
use crate::results::Cell;
use crate::stats::percentiles_sorted;

/// Latency percentile curves per variant.
pub struct Latency;

/// Percentiles a curve passes through.
pub const PERCENTILES: [f64; 17] = [
    50.0, 60.0, 70.0, 75.0, 80.0, 85.0, 90.0, 92.5, 95.0, 96.0, 97.0, 98.0, 99.0, 99.5, 99.75,
    99.8, 99.9,
];

/// Axis ticks on the percentile axis.
const P_TICKS: [(f64, &str); 6] = [
    (50.0, "p50"),
    (75.0, "p75"),
    (90.0, "p90"),
    (95.0, "p95"),
    (99.0, "p99"),
    (99.9, "p99.9"),
];

/// Smallest latency drawn on the log axis (non-positive samples are clamped to it), ms.
const FLOOR_MS: f64 = 1e-3;

/// Position of percentile `p` on the nines axis: `log10(1 / (1 − p/100))`.
pub fn nines(p: f64) -> f64 {
    (1.0 / (1.0 - p / 100.0)).log10()
}

/// The percentiles a sample of `n` values resolves (`n · (1 − p) >= 1`), at least p50.
pub fn resolvable(n: usize) -> Vec<f64> {
    PERCENTILES
        .iter()
        .copied()
        .enumerate()
        .filter(|(i, p)| *i == 0 || n as f64 * (1.0 - p / 100.0) >= 1.0 - 1e-9)
        .map(|(_, p)| p)
        .collect()
}

/// One curve: label, colour index, dash pattern, points (percentile, ms).
struct Curve {
    label: String,
    series: usize,
    dash: &'static str,
    points: Vec<(f64, f64)>,
}

fn curve(c: &Cell, label: String, series: usize, dash: &'static str) -> Option<Curve> {
    let mut pooled: Vec<f64> = MeasuredRuns::of(c)
        .iter()
        .flat_map(|r| r.latencies_ms.iter().copied())
        .filter(|x| x.is_finite())
        .collect();
    if pooled.is_empty() {
        return None;
    }
    pooled.sort_by(f64::total_cmp);
    let ps = resolvable(pooled.len());
    let values = percentiles_sorted(&pooled, &ps);
    Some(Curve {
        label: format!("{label} (n={})", pooled.len()),
        series,
        dash,
        points: ps
            .into_iter()
            .zip(values)
            .map(|(p, v)| (p, v.max(FLOOR_MS)))
            .collect(),
    })
}

/// What the latencies of a scenario measure (the analysis' `latency_kinds`), for the axis.
fn kind_text(s: &ScenarioReport) -> String {
    let describe = |k: &str| match k {
        "service" => "service time, from the actual send".to_string(),
        other => other.to_string(),
    };
    s.latency_kinds
        .iter()
        .map(|k| describe(k))
        .collect::<Vec<_>>()
        .join(" / ")
}

fn render(report: &Report, s: &ScenarioReport) -> Option<ChartFile> {
    let cells = &s.cells;
    let py = many_pythons(cells);
    let mut dash_of: Vec<(usize, usize)> = Vec::new(); // (variant index, curves so far)
    let curves: Vec<Curve> = cells
        .iter()
        .filter_map(|c| {
            let series = variant_index(cells, &c.variant);
            let dash = match dash_of.iter_mut().find(|(v, _)| *v == series) {
                Some((_, n)) => {
                    *n += 1;
                    *n - 1
                }
                None => {
                    dash_of.push((series, 1));
                    0
                }
            };
            let label = cell_label(c, &s.varying_params, py);
            curve(c, label, series, DASHES[dash % DASHES.len()])
        })
        .collect();
    if curves.is_empty() {
        return None;
    }
    let all = || curves.iter().flat_map(|c| c.points.iter().map(|p| p.1));
    let lo = all().fold(f64::INFINITY, f64::min) / 1.15;
    let hi = all().fold(0.0, f64::max) * 1.15;
    let ticks = P_TICKS
        .iter()
        .map(|(p, n)| (nines(*p), n.to_string()))
        .collect();
    let legend = curves
        .iter()
        .map(|c| Entry {
            label: c.label.clone(),
            color: color(c.series),
            key: Key::Line(c.dash),
        })
        .collect();
    let frame = Frame {
        captions: Captions {
            title: format!(
                "{}: latency percentiles per operation, pooled over rounds (log scale)",
                s.name
            ),
            subtitle: scenario_line(report.results, s),
            footnote: "Each curve stops at the highest percentile its n samples resolve (at least one sample at or beyond it).".into(),
        },
        x: Axis::linear(
            "percentile of operations (nines scale)",
            nines(50.0),
            nines(99.9),
            ticks,
        ),
        body: Body::Y(Axis::log(
            &format!("latency, ms ({})", kind_text(s)),
            lo,
            hi,
        )),
        legend: Legend::Right(legend),
    };
    let mut plot = frame.draw();
    for c in &curves {
        let pts: Vec<(f64, f64)> = c
            .points
            .iter()
            .map(|(p, v)| (plot.x.at(nines(*p)), plot.y.at(*v)))
            .collect();
        plot.svg.polyline(&pts, color(c.series), 2.0, c.dash);
        if let Some(&(px, py)) = pts.last() {
            plot.svg.circle(px, py, 3.0, color(c.series));
        }
    }
    Some(plot.file(format!("latency-{}", slug(&s.name)), &s.name))
}

impl Chart for Latency {
    fn kind(&self) -> &'static str {
        "latency"
    }

    fn render_svg(&self, report: &Report) -> Vec<ChartFile> {
        per_scenario(report, |s| render(report, s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curves_stop_where_samples_run_out() {
        assert_eq!(*resolvable(150).last().unwrap(), 99.0);
        assert_eq!(*resolvable(1000).last().unwrap(), 99.9);
        assert_eq!(resolvable(1), vec![50.0]);
        assert_eq!(*resolvable(24).last().unwrap(), 95.0);
    }

    #[test]
    fn nines_axis_spaces_p90_p99_p999_evenly() {
        let d1 = nines(99.0) - nines(90.0);
        let d2 = nines(99.9) - nines(99.0);
        assert!((d1 - 1.0).abs() < 1e-9 && (d2 - 1.0).abs() < 1e-9);
    }
}
