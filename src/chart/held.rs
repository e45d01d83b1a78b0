//! Held connections: the server tree's RSS against the idle connections asked for, one line per
//! server, on log scales (the connections asked for grow tenfold). A server that held fewer than
//! it was asked for says so in its legend entry.
//!
//! Reads the analysis' held rows (`report.held`, `analysis::held`), so the chart and the
//! held-connections table always agree.

use super::frame::{Axis, Body, Captions, Entry, Frame, Key, Legend};
use super::svg::color;
use super::{machine_line, size_lines, Chart, ChartFile};
use crate::analysis::held::HeldRow;
use crate::analysis::Report;

/// RSS against connections held.
pub struct HeldChart;

/// The size this chart draws against.
const SIZE: &str = "hold";

fn render(report: &Report, rows: &[&HeldRow]) -> Option<ChartFile> {
    let first = rows.first()?;
    let variants = size_lines::variants(rows, |r| &r.variant);
    let mut asked: Vec<f64> = rows.iter().map(|r| r.asked as f64).collect();
    asked.sort_by(f64::total_cmp);
    asked.dedup();
    let ys: Vec<f64> = rows
        .iter()
        .map(|r| r.rss_after_mib.median)
        .filter(|y| y.is_finite() && *y > 0.0)
        .collect();
    let (lo, hi) = (
        ys.iter().copied().fold(f64::INFINITY, f64::min),
        ys.iter().copied().fold(0.0f64, f64::max),
    );
    if ys.is_empty() || asked.len() < 2 {
        return None;
    }
    let legend: Vec<Entry> = variants
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let short = rows
                .iter()
                .filter(|r| &r.variant == v && !r.held_all())
                .map(|r| format!("{} of {}", r.held, r.asked))
                .collect::<Vec<_>>();
            let label = if short.is_empty() {
                v.to_string()
            } else {
                format!("{v} (held {})", short.join(", "))
            };
            Entry {
                label,
                color: color(i),
                key: Key::Line(""),
            }
        })
        .collect();
    let setting = size_lines::setting_without(&first.setting, SIZE);
    let at = if setting.is_empty() {
        String::new()
    } else {
        format!(", {setting}")
    };
    let frame = Frame {
        captions: Captions {
            title: format!(
                "{}: server memory against idle keep-alive connections held{at}",
                first.scenario
            ),
            subtitle: machine_line(report.results, &first.scenario, [first.python.as_str()]),
            footnote: "Points: median over runs of the server tree's summed RSS (from /proc) after the connections were opened and held idle; the kernel's socket buffers are not in it.".into(),
        },
        x: Axis::log_at(
            "idle keep-alive connections asked for",
            asked[0] / 1.5,
            asked[asked.len() - 1] * 1.5,
            &asked,
        ),
        body: Body::Y(Axis::log(
            "server tree RSS, MiB (connections held)",
            lo / 1.3,
            hi * 1.3,
        )),
        legend: Legend::Right(legend),
    };
    let mut plot = frame.draw();
    let series: Vec<Vec<(f64, f64)>> = variants
        .iter()
        .map(|v| {
            rows.iter()
                .filter(|r| &r.variant == v && r.rss_after_mib.median > 0.0)
                .map(|r| (r.asked as f64, r.rss_after_mib.median))
                .collect()
        })
        .collect();
    size_lines::draw(&mut plot, &series);
    let name = size_lines::file_name("held", &first.scenario, &setting, &first.python);
    Some(plot.file(name, &first.scenario))
}

impl Chart for HeldChart {
    fn kind(&self) -> &'static str {
        "held"
    }

    fn render_svg(&self, report: &Report) -> Vec<ChartFile> {
        size_lines::groups(&report.held, |r| {
            let setting = size_lines::setting_without(&r.setting, SIZE);
            (r.scenario.clone(), r.python.clone(), setting)
        })
        .iter()
        .filter_map(|rows| render(report, rows))
        .collect()
    }
}
