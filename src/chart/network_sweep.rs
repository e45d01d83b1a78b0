//! Network sweep, two charts per sweep along `rtt_ms`: throughput against the round trip
//! (one line per variant, the Rust reference client dashed grey) and p99 latency against it,
//! both on log scales;
//! the RTT where the lead changes is marked with a vertical line on both.
//!
//! Reads the analysis' network sweeps (`report.network`, `analysis::network`), so the charts
//! and the summary's tables always agree.

use super::frame::{Axis, Body, Captions, Entry, Frame, Key, Legend};
use super::svg::{color, tick_label, Anchor};
use super::{machine_line, slug, Chart, ChartFile};
use crate::analysis::network::{finding, Crossover, NetworkSweep};
use crate::analysis::Report;

/// Throughput and p99 against the delay line's round trip.
pub struct NetworkSweepChart;

/// Grey of the reference client's line.
const REFERENCE: &str = "#777777";

/// Which of the two charts.
#[derive(Clone, Copy)]
enum Measure {
    Throughput,
    P99,
}

fn render(report: &Report, s: &NetworkSweep, m: Measure) -> Option<ChartFile> {
    let value = |p: &crate::analysis::network::NetworkPoint| match m {
        Measure::Throughput => Some(p.throughput_per_s.median),
        Measure::P99 => p.p99_ms,
    };
    let mut hi = s
        .series
        .iter()
        .flat_map(|v| v.points.iter().filter_map(value))
        .fold(0.0f64, f64::max);
    if let Measure::Throughput = m {
        hi = s.ceiling_per_s.iter().flatten().fold(hi, |a, b| a.max(*b));
    }
    if hi <= 0.0 {
        return None;
    }
    let lo = s
        .series
        .iter()
        .flat_map(|v| v.points.iter().filter_map(value))
        .chain(
            s.ceiling_per_s
                .iter()
                .flatten()
                .copied()
                .filter(|_| matches!(m, Measure::Throughput)),
        )
        .filter(|v| *v > 0.0)
        .fold(hi, f64::min);
    let x_hi = s.rtts_ms.last().copied().unwrap_or(1.0).max(1.0);
    let ticks = s.rtts_ms.iter().map(|r| (*r, tick_label(*r))).collect();
    let mut legend: Vec<Entry> = s
        .series
        .iter()
        .enumerate()
        .map(|(i, v)| Entry {
            label: v.variant.clone(),
            color: color(i),
            key: Key::Line(""),
        })
        .collect();
    let has_reference =
        matches!(m, Measure::Throughput) && s.ceiling_per_s.iter().any(|c| c.is_some());
    if has_reference {
        legend.push(Entry {
            label: "Rust reference".into(),
            color: REFERENCE,
            key: Key::Line("6 4"),
        });
    }
    let at = if s.setting.is_empty() {
        String::new()
    } else {
        format!(", {}", s.setting)
    };
    let (what, y_label, kind) = match m {
        Measure::Throughput => (
            "throughput",
            "operations per second (median over rounds)",
            "network_throughput",
        ),
        Measure::P99 => (
            "p99 latency",
            "p99 latency, ms (from the actual send)",
            "network_p99",
        ),
    };
    let frame = Frame {
        captions: Captions {
            title: format!(
                "{}: {what} against the round trip to the service{at}",
                s.scenario
            ),
            subtitle: machine_line(report.results, &s.scenario, [s.python.as_str()]),
            footnote: finding(s),
        },
        x: Axis::linear(
            "round trip added by the delay line, ms",
            0.0,
            x_hi * 1.05,
            ticks,
        ),
        // Log: throughput falls about as 1/RTT, and a ratio between variants should look the
        // same at every RTT.
        body: Body::Y(Axis::log(y_label, lo / 1.3, hi * 1.3)),
        legend: Legend::Right(legend),
    };
    let mut plot = frame.draw();
    for (i, v) in s.series.iter().enumerate() {
        let pts: Vec<(f64, f64)> = v
            .points
            .iter()
            .filter_map(|p| Some((plot.x.at(p.rtt_ms), plot.y.at(value(p)?))))
            .collect();
        plot.svg.polyline(&pts, color(i), 2.0, "");
        for (px, py) in &pts {
            plot.svg.circle(*px, *py, 3.5, color(i));
        }
    }
    if has_reference {
        let pts: Vec<(f64, f64)> = s
            .rtts_ms
            .iter()
            .zip(&s.ceiling_per_s)
            .filter_map(|(r, c)| Some((plot.x.at(*r), plot.y.at((*c)?))))
            .collect();
        plot.svg.polyline(&pts, REFERENCE, 1.5, "6 4");
    }
    if let Crossover::Changes {
        last_rtt_ms,
        at_rtt_ms,
        after,
        ..
    } = &s.crossover
    {
        let x = plot.x.at((last_rtt_ms + at_rtt_ms) / 2.0);
        plot.svg
            .line(x, plot.top, x, plot.bottom, "#000000", 1.0, "3 3");
        let label = format!("{after} leads from {} ms", tick_label(*at_rtt_ms));
        plot.svg.text(
            x + 4.0,
            plot.top + 14.0,
            11.0,
            Anchor::Start,
            "#000000",
            "bold",
            &label,
        );
    }
    let setting = if s.setting.is_empty() {
        String::new()
    } else {
        format!("-{}", slug(&s.setting.replace(' ', "_")))
    };
    let name = format!(
        "{kind}-{}{setting}-py{}",
        slug(&s.scenario),
        slug(&s.python)
    );
    Some(plot.file(name, &s.scenario))
}

impl Chart for NetworkSweepChart {
    fn kind(&self) -> &'static str {
        "network"
    }

    fn render_svg(&self, report: &Report) -> Vec<ChartFile> {
        report
            .network
            .iter()
            .flat_map(|s| {
                [Measure::Throughput, Measure::P99]
                    .into_iter()
                    .filter_map(|m| render(report, s, m))
                    .collect::<Vec<_>>()
            })
            .collect()
    }
}
