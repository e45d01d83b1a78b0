//! Horizontal bar layout with 95 % interval whiskers, shared by the throughput, memory and
//! grouped charts: one row per bar, rows in labelled groups, value printed at the bar's end.

use super::svg::{
    color, text_width, tick_label, value_label, zero_based_ticks, Anchor, Linear, Svg,
};

/// One bar: a median with its interval.
pub struct Bar {
    /// Row label (empty in grouped charts, where the legend names the series).
    pub label: String,
    /// Series index: picks the colour.
    pub series: usize,
    /// Bar length (the median); `None` draws no bar and prints `missing` instead.
    pub value: Option<f64>,
    /// Lower whisker end.
    pub lo: f64,
    /// Upper whisker end.
    pub hi: f64,
    /// Why there is no value (e.g. "failed").
    pub missing: String,
    /// Printed after the value (e.g. " (failed, 2 rounds)"); usually empty.
    pub note: String,
}

/// Bars that belong together, under one label.
pub struct Group {
    /// Label shown left of the group (may be empty).
    pub label: String,
    /// The bars, top to bottom.
    pub bars: Vec<Bar>,
}

/// A complete horizontal bar chart.
pub struct BarChart {
    /// Bold first line.
    pub title: String,
    /// Second line: machine, interpreters, rounds.
    pub subtitle: String,
    /// Label of the value axis, with its unit.
    pub x_label: String,
    /// Unit appended to printed values (e.g. "/s").
    pub unit: String,
    /// Series names for a legend (empty: no legend).
    pub legend: Vec<String>,
    /// Line under the axis saying what bars and whiskers are.
    pub footnote: String,
    /// Rows.
    pub groups: Vec<Group>,
}

const WIDTH: f64 = 820.0;
const ROW: f64 = 22.0;
const BAR: f64 = 14.0;
const GAP: f64 = 10.0;

impl BarChart {
    /// Renders the chart as SVG.
    pub fn render(&self) -> String {
        let grouped = self.groups.iter().any(|g| g.bars.len() > 1);
        let label_w = self
            .groups
            .iter()
            .flat_map(|g| {
                std::iter::once(text_width(&g.label, 12.0))
                    .chain(g.bars.iter().map(|b| text_width(&b.label, 12.0)))
            })
            .fold(60.0, f64::max)
            .min(360.0);
        let left = 16.0 + label_w + 10.0;
        let right = WIDTH - 110.0;
        let legend_h = if self.legend.is_empty() { 0.0 } else { 22.0 };
        let top = 58.0 + legend_h;
        let rows: usize = self.groups.iter().map(|g| g.bars.len()).sum();
        let groups_gap = if grouped {
            GAP * (self.groups.len().saturating_sub(1)) as f64
        } else {
            0.0
        };
        let plot_h = rows as f64 * ROW + groups_gap + 8.0;
        let height = top + plot_h + 56.0;
        let mut svg = Svg::new(WIDTH, height, &self.title);
        svg.header(&self.title, &self.subtitle);
        if !self.legend.is_empty() {
            let mut x = 16.0;
            for (i, name) in self.legend.iter().enumerate() {
                svg.rect(x, 52.0, 12.0, 12.0, color(i));
                svg.text(
                    x + 16.0,
                    62.0,
                    12.0,
                    Anchor::Start,
                    "#222222",
                    "normal",
                    name,
                );
                x += 16.0 + text_width(name, 12.0) + 18.0;
            }
        }
        let max = self
            .groups
            .iter()
            .flat_map(|g| g.bars.iter())
            .filter(|b| b.value.is_some())
            .map(|b| b.hi.max(b.value.unwrap_or(0.0)))
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        let (ticks, end) = zero_based_ticks(max, 5);
        let x = Linear {
            d0: 0.0,
            d1: end,
            r0: left,
            r1: right,
        };
        let bottom = top + plot_h;
        for t in &ticks {
            let px = x.at(*t);
            svg.line(px, top, px, bottom, "#e3e3e3", 1.0, "");
            svg.text(
                px,
                bottom + 15.0,
                11.0,
                Anchor::Middle,
                "#444444",
                "normal",
                &tick_label(*t),
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
            &self.x_label,
        );
        svg.text(
            16.0,
            height - 8.0,
            10.0,
            Anchor::Start,
            "#666666",
            "normal",
            &self.footnote,
        );
        let mut y = top + 4.0;
        for g in &self.groups {
            let group_top = y;
            for b in &g.bars {
                let cy = y + ROW / 2.0;
                if !b.label.is_empty() {
                    svg.text(
                        left - 8.0,
                        cy + 4.0,
                        12.0,
                        Anchor::End,
                        "#222222",
                        "normal",
                        &b.label,
                    );
                }
                match b.value {
                    Some(v) if v.is_finite() => {
                        svg.rect(left, cy - BAR / 2.0, x.at(v) - left, BAR, color(b.series));
                        let (lo, hi) = (b.lo, b.hi);
                        let mut end_px = x.at(v);
                        if lo.is_finite() && hi.is_finite() && hi > lo {
                            let (pl, ph) = (x.at(lo), x.at(hi));
                            svg.line(pl, cy, ph, cy, "#222222", 1.2, "");
                            svg.line(pl, cy - 4.0, pl, cy + 4.0, "#222222", 1.2, "");
                            svg.line(ph, cy - 4.0, ph, cy + 4.0, "#222222", 1.2, "");
                            end_px = end_px.max(ph);
                        }
                        let label = format!("{}{}{}", value_label(v), self.unit, b.note);
                        svg.text(
                            end_px + 6.0,
                            cy + 4.0,
                            11.0,
                            Anchor::Start,
                            "#222222",
                            "normal",
                            &label,
                        );
                    }
                    _ => {
                        svg.text(
                            left + 6.0,
                            cy + 4.0,
                            11.0,
                            Anchor::Start,
                            "#B00020",
                            "normal",
                            &b.missing,
                        );
                    }
                }
                y += ROW;
            }
            if !g.label.is_empty() && (grouped || g.bars.iter().all(|b| b.label.is_empty())) {
                let mid = (group_top + y) / 2.0;
                svg.text(
                    left - 8.0,
                    mid + 4.0,
                    12.0,
                    Anchor::End,
                    "#222222",
                    "normal",
                    &g.label,
                );
            }
            if grouped {
                y += GAP;
            }
        }
        svg.finish()
    }
}
