//! Latency percentile curves, one chart per scenario: for every cell, its pooled per-run
//! `latencies_ms` at p50 … p99.9 on a "nines" axis (the distance between p90, p99 and p99.9
//! is equal), latency on a log axis.
//!
//! A curve stops at the highest percentile its samples can resolve — where at least one
//! sample lies at or beyond it, `n · (1 − p) >= 1` — so 150 samples end at p99, not at an
//! interpolated p99.9.

use super::svg::{color, log_ticks, text_width, tick_label, Anchor, Linear, Log, Svg, DASHES};
use super::{
    cell_label, cells_of, machine_line, many_pythons, scenarios, slug, variant_index, varying_keys,
    Chart, ChartFile,
};
use crate::analysis::Report;
use crate::results::{Cell, Results};
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

/// One curve: label, colour index, dash index, points (percentile, ms), sample count.
struct Curve {
    label: String,
    series: usize,
    dash: usize,
    points: Vec<(f64, f64)>,
}

fn curve(c: &Cell, label: String, series: usize, dash: usize) -> Option<Curve> {
    let mut pooled: Vec<f64> = c
        .runs
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

/// What the latencies of these cells measure, for the axis label.
fn kind_text(cells: &[&Cell]) -> String {
    let mut kinds: Vec<&str> = cells
        .iter()
        .filter_map(|c| c.runs.first())
        .map(|r| r.latency_kind.as_str())
        .collect();
    kinds.sort_unstable();
    kinds.dedup();
    let describe = |k: &str| match k {
        "service" => "service time, from the actual send".to_string(),
        other => other.to_string(),
    };
    kinds
        .into_iter()
        .map(describe)
        .collect::<Vec<_>>()
        .join(" / ")
}

fn render(results: &Results, scenario: &str) -> Option<ChartFile> {
    let cells = cells_of(results, scenario);
    let varying = varying_keys(&cells, &[]);
    let py = many_pythons(&cells);
    let mut dash_of: Vec<(usize, usize)> = Vec::new(); // (variant index, curves so far)
    let curves: Vec<Curve> = cells
        .iter()
        .filter_map(|c| {
            let series = variant_index(&cells, &c.variant);
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
            curve(c, cell_label(c, &varying, py), series, dash)
        })
        .collect();
    if curves.is_empty() {
        return None;
    }
    let all = || curves.iter().flat_map(|c| c.points.iter().map(|p| p.1));
    let lo = all().fold(f64::INFINITY, f64::min) / 1.15;
    let hi = all().fold(0.0, f64::max) * 1.15;
    let legend_w = curves
        .iter()
        .map(|c| text_width(&c.label, 11.0))
        .fold(120.0, f64::max)
        .min(300.0)
        + 40.0;
    let (width, height) = (820.0, (140.0 + curves.len() as f64 * 18.0).max(440.0));
    let (left, right, top, bottom) = (72.0, width - legend_w - 16.0, 60.0, height - 62.0);
    let x = Linear {
        d0: nines(50.0),
        d1: nines(99.9),
        r0: left,
        r1: right,
    };
    let y = Log::new(lo, hi, bottom, top);
    let title =
        format!("{scenario}: latency percentiles per operation, pooled over rounds (log scale)");
    let mut svg = Svg::new(width, height, &title);
    svg.header(
        &title,
        &machine_line(results, cells.iter().map(|c| c.python.as_str())),
    );
    for t in log_ticks(lo, hi) {
        let py = y.at(t);
        svg.line(left, py, right, py, "#e3e3e3", 1.0, "");
        svg.text(
            left - 6.0,
            py + 4.0,
            11.0,
            Anchor::End,
            "#444444",
            "normal",
            &tick_label(t),
        );
    }
    for (p, name) in P_TICKS {
        let px = x.at(nines(p));
        svg.line(px, top, px, bottom, "#e3e3e3", 1.0, "");
        svg.text(
            px,
            bottom + 15.0,
            11.0,
            Anchor::Middle,
            "#444444",
            "normal",
            name,
        );
    }
    svg.line(left, top, left, bottom, "#888888", 1.0, "");
    svg.line(left, bottom, right, bottom, "#888888", 1.0, "");
    svg.text(
        (left + right) / 2.0,
        bottom + 32.0,
        12.0,
        Anchor::Middle,
        "#333333",
        "normal",
        "percentile of operations (nines scale)",
    );
    svg.vtext(
        18.0,
        (top + bottom) / 2.0,
        12.0,
        &format!("latency, ms ({})", kind_text(&cells)),
    );
    svg.text(16.0, height - 8.0, 10.0, Anchor::Start, "#666666", "normal", "Each curve stops at the highest percentile its n samples resolve (at least one sample at or beyond it).");
    for c in &curves {
        let pts: Vec<(f64, f64)> = c
            .points
            .iter()
            .map(|(p, v)| (x.at(nines(*p)), y.at(*v)))
            .collect();
        let dash = DASHES[c.dash % DASHES.len()];
        svg.polyline(&pts, color(c.series), 2.0, dash);
        if let Some(&(px, py)) = pts.last() {
            svg.circle(px, py, 3.0, color(c.series));
        }
    }
    let lx = right + 16.0;
    for (i, c) in curves.iter().enumerate() {
        let ly = top + 8.0 + i as f64 * 18.0;
        svg.line(
            lx,
            ly,
            lx + 24.0,
            ly,
            color(c.series),
            2.0,
            DASHES[c.dash % DASHES.len()],
        );
        svg.text(
            lx + 30.0,
            ly + 4.0,
            11.0,
            Anchor::Start,
            "#222222",
            "normal",
            &c.label,
        );
    }
    Some(ChartFile {
        name: format!("latency-{}", slug(scenario)),
        scenario: Some(scenario.to_string()),
        title,
        svg: svg.finish(),
    })
}

impl Chart for Latency {
    fn kind(&self) -> &'static str {
        "latency"
    }

    fn render_svg(&self, report: &Report) -> Vec<ChartFile> {
        let results = report.results;
        scenarios(results)
            .iter()
            .filter_map(|s| render(results, s))
            .collect()
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
