//! Open-loop rate sweep, one chart per scenario with sweeps: corrected p50 (dashed) and p99
//! (solid) latency against offered rate, both axes log scale, one colour per variant, each
//! variant's knee (the highest rate sustained before it saturated) ringed and labelled, and
//! saturated points drawn hollow.
//!
//! Reads `results.sweeps` (`runner::sweep::analyze`), so the chart and the summary's sweep
//! tables always agree.

use super::svg::{color, log_ticks, text_width, tick_label, Anchor, Log, Svg};
use super::{cells_of, machine_line, scenarios, slug, Chart, ChartFile};
use crate::analysis::params_text;
use crate::analysis::Report;
use crate::results::Results;
use crate::results::Sweep;

/// Latency against offered load per variant, knee marked.
pub struct LoadSweep;

fn label(s: &Sweep, keys: &[String], with_python: bool) -> String {
    let mut out = s.variant.clone();
    let p = params_text(&s.params, keys);
    if !p.is_empty() {
        out.push(' ');
        out.push_str(&p);
    }
    if with_python {
        out.push_str(&format!(" py{}", s.python));
    }
    out
}

/// (rate, p50, p99, saturated) of the points that have latencies.
fn series(s: &Sweep) -> Vec<(f64, f64, f64, bool)> {
    s.points
        .iter()
        .filter_map(|p| {
            Some((
                p.offered_rate_per_s,
                p.corrected_p50_ms?.max(1e-3),
                p.corrected_p99_ms?.max(1e-3),
                p.saturated,
            ))
        })
        .collect()
}

fn render(results: &Results, scenario: &str) -> Option<ChartFile> {
    let sweeps: Vec<&Sweep> = results
        .sweeps
        .iter()
        .filter(|s| s.scenario == scenario)
        .collect();
    let data: Vec<Vec<(f64, f64, f64, bool)>> = sweeps.iter().map(|s| series(s)).collect();
    if data.iter().all(|d| d.is_empty()) {
        return None;
    }
    let keys = crate::analysis::sweep::varying_params(&sweeps);
    let py = sweeps.iter().any(|s| s.python != sweeps[0].python);
    let labels: Vec<String> = sweeps.iter().map(|s| label(s, &keys, py)).collect();
    let pts = || data.iter().flatten();
    let (mut x_lo, mut x_hi) = pts().fold((f64::INFINITY, 0.0f64), |(lo, hi), p| {
        (lo.min(p.0), hi.max(p.0))
    });
    x_lo /= 1.25;
    x_hi *= 1.25;
    let y_lo = pts().map(|p| p.1).fold(f64::INFINITY, f64::min) / 1.3;
    let y_hi = pts().map(|p| p.2).fold(0.0, f64::max) * 1.3;

    let legend_w = labels
        .iter()
        .map(|l| text_width(&format!("{l} p99"), 11.0))
        .fold(140.0, f64::max)
        .min(300.0)
        + 40.0;
    let rows = sweeps.len() * 2 + 3;
    let (width, height) = (820.0, (140.0 + rows as f64 * 18.0).max(440.0));
    let (left, right, top, bottom) = (72.0, width - legend_w - 16.0, 60.0, height - 62.0);
    let x = Log::new(x_lo, x_hi, left, right);
    let y = Log::new(y_lo, y_hi, bottom, top);
    let title = format!(
        "{scenario}: open-loop latency against offered load (corrected, from the intended start; log scales)"
    );
    let mut svg = Svg::new(width, height, &title);
    let cells = cells_of(results, scenario);
    svg.header(
        &title,
        &machine_line(results, cells.iter().map(|c| c.python.as_str())),
    );
    for t in log_ticks(y_lo, y_hi) {
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
    let mut rates: Vec<f64> = pts().map(|p| p.0).collect();
    rates.sort_by(f64::total_cmp);
    rates.dedup();
    for r in &rates {
        let px = x.at(*r);
        svg.line(px, top, px, bottom, "#e3e3e3", 1.0, "");
        svg.text(
            px,
            bottom + 15.0,
            11.0,
            Anchor::Middle,
            "#444444",
            "normal",
            &tick_label(*r),
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
        "offered rate, requests per second",
    );
    svg.vtext(
        18.0,
        (top + bottom) / 2.0,
        12.0,
        "latency from the intended start, ms",
    );
    svg.text(
        16.0,
        height - 8.0,
        10.0,
        Anchor::Start,
        "#666666",
        "normal",
        "Solid p99, dashed p50. Ringed: the knee. Hollow: saturated (its latencies are a lower bound: the run stops sending at 2 × its duration).",
    );
    let mut placed: Vec<(f64, f64, f64)> = Vec::new(); // knee labels: x, baseline y, width
    for (i, (s, d)) in sweeps.iter().zip(&data).enumerate() {
        let c = color(i);
        let p99: Vec<(f64, f64)> = d.iter().map(|p| (x.at(p.0), y.at(p.2))).collect();
        let p50: Vec<(f64, f64)> = d.iter().map(|p| (x.at(p.0), y.at(p.1))).collect();
        svg.polyline(&p99, c, 2.0, "");
        svg.polyline(&p50, c, 1.5, "7 4");
        for (p, (px, py)) in d.iter().zip(&p99) {
            svg.circle(*px, *py, 3.5, c);
            if p.3 {
                svg.circle(*px, *py, 2.0, "#ffffff");
            }
        }
        if let Some(k) = s.knee_rate_per_s {
            if let Some(p) = d.iter().find(|p| p.0 == k) {
                let (px, py) = (x.at(p.0), y.at(p.2));
                svg.circle(px, py, 7.0, c);
                svg.circle(px, py, 5.0, "#ffffff");
                svg.circle(px, py, 3.5, c);
                // Labels move up until they clear the ones already placed.
                let text = format!("knee {}/s", tick_label(k));
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
                svg.text(px, ty, 11.0, Anchor::Middle, c, "bold", &text);
            }
        }
    }
    let lx = right + 16.0;
    let mut ly = top + 8.0;
    for (i, l) in labels.iter().enumerate() {
        for (dash, what) in [("", "p99"), ("7 4", "p50")] {
            svg.line(lx, ly, lx + 24.0, ly, color(i), 2.0, dash);
            let text = format!("{l} {what}");
            svg.text(
                lx + 30.0,
                ly + 4.0,
                11.0,
                Anchor::Start,
                "#222222",
                "normal",
                &text,
            );
            ly += 18.0;
        }
    }
    Some(ChartFile {
        name: format!("load_sweep-{}", slug(scenario)),
        scenario: Some(scenario.to_string()),
        title,
        svg: svg.finish(),
    })
}

impl Chart for LoadSweep {
    fn kind(&self) -> &'static str {
        "load_sweep"
    }

    fn render_svg(&self, report: &Report) -> Vec<ChartFile> {
        let results = report.results;
        let mut names = scenarios(results);
        for s in &results.sweeps {
            if !names.contains(&s.scenario) {
                names.push(s.scenario.clone());
            }
        }
        names.iter().filter_map(|s| render(results, s)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Knee, SweepPoint};

    fn point(rate: f64, p99: f64, saturated: bool) -> SweepPoint {
        SweepPoint {
            cell_id: format!("io_http/threads/3.12.1/rate_per_s={rate}"),
            offered_rate_per_s: rate,
            achieved_rate_per_s: Some(rate),
            corrected_p50_ms: Some(101.0),
            corrected_p99_ms: Some(p99),
            uncorrected_p50_ms: Some(101.0),
            uncorrected_p99_ms: Some(105.0),
            abandoned: 0,
            saturated,
            reason: saturated.then(|| "achieved 95/s".into()),
        }
    }

    #[test]
    fn knee_is_ringed_and_labelled_and_rendering_is_deterministic() {
        let results: Results = serde_json::from_value(serde_json::json!({
            "schema_version": 1, "generated_by": "t", "started_at": "2026-01-01T00:00:00Z",
            "env": {"cpu_model": "cpu", "cores": 2, "governor": "-", "kernel": "k",
                    "memory_total_mib": 1, "load_avg_before": [0.0, 0.0, 0.0],
                    "load_avg_after": null, "git_commit": "abc", "pythons": [],
                    "postgres": null, "mock_http": null, "warnings": []},
            "method": {"rounds": 1, "warmups": 0, "order": "o", "quick": false},
            "cells": [],
        }))
        .unwrap();
        let mut results = results;
        results.sweeps = vec![Sweep {
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
        let charts = LoadSweep.render_svg(&crate::analysis::analyze(&results));
        assert_eq!(charts.len(), 1);
        let svg = &charts[0].svg;
        assert_eq!(charts[0].name, "load_sweep-io_http");
        assert!(svg.contains("knee 100/s"), "{svg}");
        assert!(svg.contains("offered rate, requests per second"));
        assert!(svg.contains("threads p99") && svg.contains("threads p50"));
        assert_eq!(
            LoadSweep.render_svg(&crate::analysis::analyze(&results))[0].svg,
            *svg
        );
        results.sweeps.clear();
        assert!(LoadSweep
            .render_svg(&crate::analysis::analyze(&results))
            .is_empty());
    }
}
