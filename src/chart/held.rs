//! Held connections: the server tree's RSS against the idle connections asked for, one line per
//! server, on log scales (the connections asked for grow tenfold). A server that held fewer than
//! it was asked for says so in its legend entry.
//!
//! Reads the analysis' held rows (`report.held`, `analysis::held`), so the chart and the
//! held-connections table always agree.

use super::frame::{Axis, Body, Captions, Entry, Frame, Key, Legend};
use super::svg::color;
use super::{machine_line, slug, Chart, ChartFile};
use crate::analysis::held::HeldRow;
use crate::analysis::Report;

/// RSS against connections held.
pub struct HeldChart;

/// A row's setting without its `hold` value: the rows a chart draws share it.
fn setting_without_hold(r: &HeldRow) -> String {
    r.setting
        .split(' ')
        .filter(|kv| !kv.is_empty() && !kv.starts_with("hold="))
        .collect::<Vec<_>>()
        .join(" ")
}

fn render(report: &Report, rows: &[&HeldRow]) -> Option<ChartFile> {
    let first = rows.first()?;
    let mut variants: Vec<&str> = Vec::new();
    for r in rows {
        if !variants.contains(&r.variant.as_str()) {
            variants.push(&r.variant);
        }
    }
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
                .filter(|r| r.variant == *v && !r.held_all())
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
    let setting = setting_without_hold(first);
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
    for (i, v) in variants.iter().enumerate() {
        let mut pts: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| r.variant == *v && r.rss_after_mib.median > 0.0)
            .map(|r| (r.asked as f64, r.rss_after_mib.median))
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let pts: Vec<(f64, f64)> = pts
            .into_iter()
            .map(|(x, y)| (plot.x.at(x), plot.y.at(y)))
            .collect();
        plot.svg.polyline(&pts, color(i), 2.0, "");
        for (px, py) in &pts {
            plot.svg.circle(*px, *py, 3.5, color(i));
        }
    }
    let suffix = if setting.is_empty() {
        String::new()
    } else {
        format!("-{}", slug(&setting.replace(' ', "_")))
    };
    let name = format!(
        "held-{}{suffix}-py{}",
        slug(&first.scenario),
        slug(&first.python)
    );
    Some(plot.file(name, &first.scenario))
}

impl Chart for HeldChart {
    fn kind(&self) -> &'static str {
        "held"
    }

    fn render_svg(&self, report: &Report) -> Vec<ChartFile> {
        let mut keys: Vec<(String, String, String)> = Vec::new();
        for r in &report.held {
            let key = (
                r.scenario.clone(),
                r.python.clone(),
                setting_without_hold(r),
            );
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        keys.iter()
            .filter_map(|(scenario, python, setting)| {
                let rows: Vec<&HeldRow> = report
                    .held
                    .iter()
                    .filter(|r| {
                        &r.scenario == scenario
                            && &r.python == python
                            && &setting_without_hold(r) == setting
                    })
                    .collect();
                render(report, &rows)
            })
            .collect()
    }
}
