//! A slow consumer, second by second: per server, the other clients' largest delivery latency
//! of each second's messages (log scale, the bound drawn across; a gap is a second of which
//! nothing was delivered), and the server tree's RSS, on the schedule's clock.
//!
//! Reads the analysis' slow-consumer rows (`report.slow_consumers`,
//! `analysis::slow_consumer`), medians over runs second by second, so the charts and the
//! slow-consumer table always agree.

use super::frame::{Axis, Body, Captions, Entry, Frame, Key, Legend, Plot};
use super::svg::color;
use super::{machine_line, size_lines, Chart, ChartFile};
use crate::analysis::slow_consumer::SlowRow;
use crate::analysis::Report;

/// The two timelines of slow-consumer rooms.
pub struct SlowConsumerChart;

/// Seconds 0, 5, 10, … (every 10 past a minute) up to `seconds`.
fn second_ticks(seconds: usize) -> Vec<(f64, String)> {
    let step = if seconds > 60 { 10 } else { 5 };
    (0..=seconds)
        .step_by(step)
        .map(|s| (s as f64, s.to_string()))
        .collect()
}

/// Draws `run` (pixels) in series `i`'s colour, a dot when it is one reading, and empties it.
fn flush(plot: &mut Plot, i: usize, run: &mut Vec<(f64, f64)>) {
    match run.len() {
        0 => {}
        1 => plot.svg.circle(run[0].0, run[0].1, 2.5, color(i)),
        _ => plot.svg.polyline(run, color(i), 2.0, ""),
    }
    run.clear();
}

/// Each unbroken run of readings as one line: second `s`'s value is drawn at `s + 0.5`, the
/// middle of its second.
fn draw_series(plot: &mut Plot, i: usize, values: &[Option<f64>]) {
    let mut run: Vec<(f64, f64)> = Vec::new();
    for (s, v) in values.iter().enumerate() {
        match v {
            Some(y) if *y > 0.0 => run.push((plot.x.at(s as f64 + 0.5), plot.y.at(*y))),
            _ => flush(plot, i, &mut run),
        }
    }
    flush(plot, i, &mut run);
}

/// What both charts share: the legend, the x axis and the captions' subtitle.
fn frame(report: &Report, rows: &[&SlowRow], title: String, footnote: &str, y: Axis) -> Frame {
    let first = rows[0];
    let seconds = rows
        .iter()
        .map(|r| r.max_ms_by_second.len().max(r.rss_by_second.len()))
        .max()
        .unwrap_or(0);
    let legend = rows
        .iter()
        .enumerate()
        .map(|(i, r)| Entry {
            label: {
                let (room, slow) = r.effects();
                format!(
                    "{} ({}): {}; {}",
                    r.variant,
                    r.kind,
                    room.words(),
                    slow.words()
                )
            },
            color: color(i),
            key: Key::Line(""),
        })
        .collect();
    Frame {
        captions: Captions {
            title,
            subtitle: machine_line(report.results, &first.scenario, [first.python.as_str()]),
            footnote: footnote.into(),
        },
        x: Axis::linear(
            "seconds from the schedule's start",
            0.0,
            seconds as f64,
            second_ticks(seconds),
        ),
        body: Body::Y(y),
        legend: Legend::Above(legend),
    }
}

fn latency(report: &Report, rows: &[&SlowRow]) -> Option<ChartFile> {
    let first = rows.first()?;
    let ys: Vec<f64> = rows
        .iter()
        .flat_map(|r| r.max_ms_by_second.iter().flatten().copied())
        .chain([first.bound_ms])
        .filter(|y| y.is_finite() && *y > 0.0)
        .collect();
    let lo = ys.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = ys.iter().copied().fold(0.0f64, f64::max);
    if ys.len() < 2 {
        return None;
    }
    let title = format!(
        "{}: the other clients' largest delivery latency, second by second, while {} of {} clients does not read",
        first.scenario, first.slow, first.clients
    );
    let footnote = "Each second of the schedule: the largest latency, from a message's intended send (corrected), of its deliveries to the clients that read; median over runs. A gap: nothing of that second's messages reached them in most runs. Dashed: the bound.";
    let y = Axis::log("largest delivery latency, ms", lo / 1.5, hi * 1.5);
    let mut plot = frame(report, rows, title, footnote, y).draw();
    let bound = plot.y.at(first.bound_ms);
    plot.svg.polyline(
        &[(plot.left, bound), (plot.right, bound)],
        "#888888",
        1.5,
        "4 3",
    );
    for (i, r) in rows.iter().enumerate() {
        draw_series(&mut plot, i, &r.max_ms_by_second);
    }
    let name = size_lines::file_name("slow_consumer-latency", &first.scenario, "", &first.python);
    Some(plot.file(name, &first.scenario))
}

fn memory(report: &Report, rows: &[&SlowRow]) -> Option<ChartFile> {
    let first = rows.first()?;
    let hi = rows
        .iter()
        .flat_map(|r| r.rss_by_second.iter().flatten().copied())
        .fold(0.0f64, f64::max);
    if hi <= 0.0 {
        return None;
    }
    let title = format!(
        "{}: the server's memory, second by second, while {} of {} clients does not read",
        first.scenario, first.slow, first.clients
    );
    let footnote = "Each second from the schedule's start: the largest summed RSS of the server's process tree, read from /proc outside the server every 100 ms; median over runs. It holds what the server buffered for the slow client and anything else it kept.";
    let y = Axis::zero_based("server RSS, MiB", hi);
    let mut plot = frame(report, rows, title, footnote, y).draw();
    for (i, r) in rows.iter().enumerate() {
        draw_series(&mut plot, i, &r.rss_by_second);
    }
    let name = size_lines::file_name("slow_consumer-memory", &first.scenario, "", &first.python);
    Some(plot.file(name, &first.scenario))
}

impl Chart for SlowConsumerChart {
    fn kind(&self) -> &'static str {
        "slow_consumer"
    }

    fn render_svg(&self, report: &Report) -> Vec<ChartFile> {
        size_lines::groups(&report.slow_consumers, |r| {
            (r.scenario.clone(), r.python.clone())
        })
        .iter()
        .flat_map(|rows| [latency(report, rows), memory(report, rows)])
        .flatten()
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_every_five_seconds_then_every_ten() {
        assert_eq!(second_ticks(12).len(), 3);
        assert_eq!(second_ticks(90)[1].0, 10.0);
    }
}
