//! WebSocket fan-out: each server's p99 delivery latency against the clients in its room, on
//! log scales (the rooms grow tenfold), with the bound a room must keep drawn across. A room
//! that did not keep up says so in its server's legend entry.
//!
//! Reads the analysis' fan-out rows (`report.fanout`, `analysis::fanout`), so the chart, the
//! fan-out table and the WebSocket question always agree.

use super::frame::{Axis, Body, Captions, Entry, Frame, Key, Legend};
use super::svg::color;
use super::{machine_line, size_lines, Chart, ChartFile};
use crate::analysis::fanout::FanoutRow;
use crate::analysis::Report;

/// Delivery p99 against room size.
pub struct FanoutChart;

/// The size this chart draws against.
const SIZE: &str = "clients";

fn render(report: &Report, rows: &[&FanoutRow]) -> Option<ChartFile> {
    let first = rows.first()?;
    let variants = size_lines::variants(rows, |r| &r.variant);
    let mut clients: Vec<f64> = rows.iter().map(|r| r.clients as f64).collect();
    clients.sort_by(f64::total_cmp);
    clients.dedup();
    let ys: Vec<f64> = rows
        .iter()
        .map(|r| r.p99_ms.median)
        .chain([first.bound_ms])
        .filter(|y| y.is_finite() && *y > 0.0)
        .collect();
    if ys.len() < 2 || clients.len() < 2 {
        return None;
    }
    let (lo, hi) = (
        ys.iter().copied().fold(f64::INFINITY, f64::min),
        ys.iter().copied().fold(0.0f64, f64::max),
    );
    let mut legend: Vec<Entry> = variants
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let lost: Vec<String> = rows
                .iter()
                .filter(|r| &r.variant == v && !r.keeps_up())
                .map(|r| r.clients.to_string())
                .collect();
            let label = if lost.is_empty() {
                v.to_string()
            } else {
                format!("{v} (did not keep up at {})", lost.join(", "))
            };
            Entry {
                label,
                color: color(i),
                key: Key::Line(""),
            }
        })
        .collect();
    legend.push(Entry {
        label: format!("the bound, {} ms", crate::format::num(first.bound_ms)),
        color: "#888888",
        key: Key::Line("4 3"),
    });
    let setting = size_lines::setting_without(&first.setting, SIZE);
    let at = if setting.is_empty() {
        String::new()
    } else {
        format!(", {setting}")
    };
    let frame = Frame {
        captions: Captions {
            title: format!(
                "{}: p99 delivery latency of a broadcast against clients in the room{at}",
                first.scenario
            ),
            subtitle: machine_line(report.results, &first.scenario, [first.python.as_str()]),
            footnote: "Points: median over runs of each run's p99 over every delivery, from the message's intended send to a client's receipt (corrected: a late send, a slow read and a slow broadcast all count).".into(),
        },
        x: Axis::log_at(
            "WebSocket clients in the room",
            clients[0] / 1.5,
            clients[clients.len() - 1] * 1.5,
            &clients,
        ),
        body: Body::Y(Axis::log("p99 delivery latency, ms", lo / 1.5, hi * 1.5)),
        legend: Legend::Right(legend),
    };
    let mut plot = frame.draw();
    let bound_y = plot.y.at(first.bound_ms);
    let (x0, x1) = (
        plot.x.at(clients[0] / 1.5),
        plot.x.at(clients[clients.len() - 1] * 1.5),
    );
    plot.svg
        .polyline(&[(x0, bound_y), (x1, bound_y)], "#888888", 1.5, "4 3");
    let series: Vec<Vec<(f64, f64)>> = variants
        .iter()
        .map(|v| {
            rows.iter()
                .filter(|r| &r.variant == v && r.p99_ms.median > 0.0)
                .map(|r| (r.clients as f64, r.p99_ms.median))
                .collect()
        })
        .collect();
    size_lines::draw(&mut plot, &series);
    let name = size_lines::file_name("fanout", &first.scenario, &setting, &first.python);
    Some(plot.file(name, &first.scenario))
}

impl Chart for FanoutChart {
    fn kind(&self) -> &'static str {
        "fanout"
    }

    fn render_svg(&self, report: &Report) -> Vec<ChartFile> {
        size_lines::groups(&report.fanout, |r| {
            let setting = size_lines::setting_without(&r.setting, SIZE);
            (r.scenario.clone(), r.python.clone(), setting)
        })
        .iter()
        .filter_map(|rows| render(report, rows))
        .collect()
    }
}
