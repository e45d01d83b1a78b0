//! Open-loop rate sweep, one chart per scenario with sweeps: corrected p50 (dashed) and p99
//! (solid) latency against offered rate, both axes log scale, one colour per variant, each
//! variant's knee (the highest rate sustained before it saturated) ringed and labelled, and
//! saturated points drawn hollow.
//!
//! Reads the analysis' sweeps (`report.sweeps`, `analysis::sweep`: points, saturation and
//! knees), so the chart and the summary's sweep tables always agree.

use super::frame::{Axis, Body, Captions, Entry, Frame, Key, Legend, Plot};
use super::svg::{color, text_width, tick_label, Anchor};
use super::{per_scenario, scenario_line, series_label, slug, Chart, ChartFile};
use crate::analysis::scenario::ScenarioReport;
use crate::analysis::sweep::varying_params;
use crate::analysis::Report;
use crate::results::Sweep;

/// Latency against offered load per variant, knee marked.
pub struct LoadSweep;

/// Dash pattern of the p50 curves (p99 is solid).
const P50_DASH: &str = "7 4";

/// One point of a sweep's curves.
struct Point {
    rate: f64,
    p50: f64,
    p99: f64,
    saturated: bool,
}

/// The points that have latencies (floored at 1 µs for the log axis).
fn series(s: &Sweep) -> Vec<Point> {
    s.points
        .iter()
        .filter_map(|p| {
            Some(Point {
                rate: p.offered_rate_per_s,
                p50: p.corrected_p50_ms?.max(1e-3),
                p99: p.corrected_p99_ms?.max(1e-3),
                saturated: p.saturated,
            })
        })
        .collect()
}

fn render(report: &Report, scenario: &ScenarioReport) -> Option<ChartFile> {
    let name = &scenario.name;
    let sweeps: Vec<&Sweep> = report
        .sweeps
        .iter()
        .filter(|s| &s.scenario == name)
        .collect();
    let data: Vec<Vec<Point>> = sweeps.iter().map(|s| series(s)).collect();
    if data.iter().all(|d| d.is_empty()) {
        return None;
    }
    let keys = varying_params(&sweeps);
    let py = sweeps.iter().any(|s| s.python != sweeps[0].python);
    let pts = || data.iter().flatten();
    let (x_lo, x_hi) = pts().fold((f64::INFINITY, 0.0f64), |(lo, hi), p| {
        (lo.min(p.rate), hi.max(p.rate))
    });
    let y_lo = pts().map(|p| p.p50).fold(f64::INFINITY, f64::min) / 1.3;
    let y_hi = pts().map(|p| p.p99).fold(0.0, f64::max) * 1.3;
    let mut rates: Vec<f64> = pts().map(|p| p.rate).collect();
    rates.sort_by(f64::total_cmp);
    rates.dedup();
    let legend = sweeps
        .iter()
        .enumerate()
        .flat_map(|(i, s)| {
            let l = series_label(&s.variant, &s.params, &s.python, &keys, py);
            [("", "p99"), (P50_DASH, "p50")].map(|(dash, what)| Entry {
                label: format!("{l} {what}"),
                color: color(i),
                key: Key::Line(dash),
            })
        })
        .collect();
    let frame = Frame {
        captions: Captions {
            title: format!(
                "{name}: open-loop latency against offered load (corrected, from the intended start; log scales)"
            ),
            subtitle: scenario_line(report.results, scenario),
            footnote: "Solid p99, dashed p50. Ringed: the knee. Hollow: saturated (its latencies are a lower bound: the run stops sending at 2 × its duration).".into(),
        },
        x: Axis::log_at(
            "offered rate, requests per second",
            x_lo / 1.25,
            x_hi * 1.25,
            &rates,
        ),
        body: Body::Y(Axis::log("latency from the intended start, ms", y_lo, y_hi)),
        legend: Legend::Right(legend),
    };
    let mut plot = frame.draw();
    let mut placed: Vec<(f64, f64, f64)> = Vec::new(); // knee labels: x, baseline y, width
    for (i, (s, d)) in sweeps.iter().zip(&data).enumerate() {
        let c = color(i);
        let at = |p: &Point, v: f64| (plot.x.at(p.rate), plot.y.at(v));
        let p99: Vec<(f64, f64)> = d.iter().map(|p| at(p, p.p99)).collect();
        let p50: Vec<(f64, f64)> = d.iter().map(|p| at(p, p.p50)).collect();
        plot.svg.polyline(&p99, c, 2.0, "");
        plot.svg.polyline(&p50, c, 1.5, P50_DASH);
        for (p, (px, py)) in d.iter().zip(&p99) {
            plot.svg.circle(*px, *py, 3.5, c);
            if p.saturated {
                plot.svg.circle(*px, *py, 2.0, "#ffffff");
            }
        }
        let knee = s
            .knee_rate_per_s
            .and_then(|k| d.iter().find(|p| p.rate == k));
        if let Some(p) = knee {
            let (px, py) = at(p, p.p99);
            knee_mark(&mut plot, &mut placed, px, py, p.rate, c);
        }
    }
    Some(plot.file(format!("load_sweep-{}", slug(name)), name))
}

/// The knee at (px, py): ringed, labelled "knee N/s" above it, the label moved up until it
/// clears the labels in `placed` (x, baseline y, width each), which it joins.
fn knee_mark(
    plot: &mut Plot,
    placed: &mut Vec<(f64, f64, f64)>,
    px: f64,
    py: f64,
    rate: f64,
    c: &'static str,
) {
    plot.svg.circle(px, py, 7.0, c);
    plot.svg.circle(px, py, 5.0, "#ffffff");
    plot.svg.circle(px, py, 3.5, c);
    let text = format!("knee {}/s", tick_label(rate));
    let w = text_width(&text, 11.0);
    let mut ty = py - 11.0;
    let clash = |ty: f64, (x0, y0, w0): &(f64, f64, f64)| {
        (px - x0).abs() < (w + w0) / 2.0 && (ty - y0).abs() < 20.0
    };
    // Each step lands 20 px above the highest clashing label: the loop ends.
    while let Some(y0) = placed
        .iter()
        .filter(|p| clash(ty, p))
        .map(|p| p.1)
        .reduce(f64::min)
    {
        ty = y0 - 20.0;
    }
    placed.push((px, ty, w));
    plot.svg
        .text(px, ty, 11.0, Anchor::Middle, c, "bold", &text);
}

impl Chart for LoadSweep {
    fn kind(&self) -> &'static str {
        "load_sweep"
    }

    fn render_svg(&self, report: &Report) -> Vec<ChartFile> {
        per_scenario(report, |s| render(report, s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Knee, Results, SweepPoint};

    fn point(rate: f64, p99: f64, saturated: bool) -> SweepPoint {
        SweepPoint {
            cell_id: format!("io_http/threads/3.12.1/rate_per_s={rate}"),
            offered_rate_per_s: rate,
            achieved_rate_per_s: Some(rate),
            corrected_p50_ms: Some(101.0),
            corrected_p99_ms: Some(p99),
            corrected_p99_9_ms: None,
            uncorrected_p50_ms: Some(101.0),
            uncorrected_p99_ms: Some(105.0),
            abandoned: 0,
            saturated,
            reason: saturated.then(|| "achieved 95/s".into()),
        }
    }

    #[test]
    fn knee_is_ringed_and_labelled_and_rendering_is_deterministic() {
        // One (skipped) cell makes the scenario; the sweep is set on the analysed report.
        let results: Results = serde_json::from_value(serde_json::json!({
            "schema_version": 1, "generated_by": "t", "started_at": "2026-01-01T00:00:00Z",
            "env": {"cpu_model": "cpu", "cores": 2, "governor": "-", "kernel": "k",
                    "memory_total_mib": 1, "load_avg_before": [0.0, 0.0, 0.0],
                    "load_avg_after": null, "git_commit": "abc", "pythons": [],
                    "postgres": null, "mock_http": null, "warnings": []},
            "method": {"rounds": 1, "warmups": 0, "order": "o", "quick": false},
            "cells": [{"id": "io_http/threads/3.12.1/rate_per_s=50", "scenario": "io_http",
                       "variant": "threads", "python": "3.12.1", "loop": null,
                       "params": {"rate_per_s": 50}, "status": "skipped", "failure": null,
                       "runs": [], "summary": null, "warnings": []}],
        }))
        .unwrap();
        let mut report = crate::analysis::analyze(&results);
        report.sweeps = vec![Sweep {
            scenario: "io_http".into(),
            variant: "threads".into(),
            python: "3.12.1".into(),
            params: Default::default(),
            reference_ms: Some(100.0),
            points: vec![
                point(50.0, 110.0, false),
                point(100.0, 300.0, false),
                point(200.0, 2500.0, true),
            ],
            knee: Knee::Reached,
            knee_rate_per_s: Some(100.0),
            saturated_rate_per_s: Some(200.0),
        }];
        let charts = LoadSweep.render_svg(&report);
        assert_eq!(charts.len(), 1);
        let svg = &charts[0].svg;
        assert_eq!(charts[0].name, "load_sweep-io_http");
        assert!(svg.contains("knee 100/s"), "{svg}");
        assert!(svg.contains("offered rate, requests per second"));
        assert!(svg.contains("threads p99") && svg.contains("threads p50"));
        assert_eq!(LoadSweep.render_svg(&report)[0].svg, *svg);
        report.sweeps.clear();
        assert!(LoadSweep.render_svg(&report).is_empty());
    }
}
