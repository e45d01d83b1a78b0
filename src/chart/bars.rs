//! Horizontal bars with 95 % interval whiskers, the marks of the throughput, memory, grouped
//! and ops charts: one row per bar, rows in labelled groups, value printed at the bar's end,
//! inside the shared frame (`frame.rs`) with a zero-based x axis.

use super::frame::{Axis, Body, Captions, Entry, Frame, Key, Legend, Plot, INK};
use super::svg::{color, text_width, value_label, Anchor};
use super::{cell_label, many_pythons, variant_index};
use crate::analysis::scenario::ScenarioReport;
use crate::results::{Cell, CellStatus};
use crate::stats::Summary;

/// A bar's length and whisker ends, as the analysis gives them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// Bar length (a median).
    pub value: f64,
    /// Lower whisker end.
    pub lo: f64,
    /// Upper whisker end.
    pub hi: f64,
}

impl Interval {
    /// A summary's median and bootstrap 95 % interval, times `scale` (a unit change).
    pub fn of(s: &Summary, scale: f64) -> Self {
        Interval {
            value: s.median * scale,
            lo: s.ci95_low * scale,
            hi: s.ci95_high * scale,
        }
    }
}

/// One bar.
pub struct Bar {
    /// Row label (empty in grouped charts, where the legend names the series).
    pub label: String,
    /// Series index: picks the colour.
    pub series: usize,
    /// Length and whiskers; `None` (or a non-finite length) draws no bar and prints `missing`.
    pub value: Option<Interval>,
    /// Why there is no value (e.g. "failed").
    pub missing: String,
    /// Printed after the value (e.g. " (failed, 2 rounds)"); usually empty.
    pub note: String,
}

impl Bar {
    /// The bar's length when it has a finite one.
    fn length(&self) -> Option<f64> {
        self.value.map(|v| v.value).filter(|v| v.is_finite())
    }
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
    /// Title, machine line, what bars and whiskers are.
    pub captions: Captions,
    /// Label of the value axis, with its unit.
    pub x_label: String,
    /// Unit appended to printed values (e.g. "/s").
    pub unit: String,
    /// Series names for a legend (empty: no legend).
    pub legend: Vec<String>,
    /// Rows.
    pub groups: Vec<Group>,
}

const ROW: f64 = 22.0;
const BAR: f64 = 14.0;
const GAP: f64 = 10.0;

/// One bar per cell of a scenario, in the document's order: labelled by variant and the
/// varying parameters (failed cells marked), coloured by variant, `figure` of the cell as its
/// length (`None`: "failed: no measurement").
pub fn cell_bars(s: &ScenarioReport, figure: impl Fn(&Cell) -> Option<Interval>) -> Vec<Group> {
    let py = many_pythons(&s.cells);
    s.cells
        .iter()
        .map(|c| {
            let failed = if c.status == CellStatus::Failed {
                " (failed)"
            } else {
                ""
            };
            Group {
                label: String::new(),
                bars: vec![Bar {
                    label: format!("{}{failed}", cell_label(c, &s.varying_params, py)),
                    series: variant_index(&s.cells, &c.variant),
                    value: figure(c),
                    missing: "failed: no measurement".into(),
                    note: String::new(),
                }],
            }
        })
        .collect()
}

impl BarChart {
    /// The frame with the bars drawn in it.
    pub fn draw(&self) -> Plot {
        let grouped = self.groups.iter().any(|g| g.bars.len() > 1);
        let label_width = self
            .groups
            .iter()
            .flat_map(|g| {
                std::iter::once(text_width(&g.label, 12.0))
                    .chain(g.bars.iter().map(|b| text_width(&b.label, 12.0)))
            })
            .fold(60.0, f64::max)
            .min(360.0);
        let rows: usize = self.groups.iter().map(|g| g.bars.len()).sum();
        let groups_gap = if grouped {
            GAP * (self.groups.len().saturating_sub(1)) as f64
        } else {
            0.0
        };
        let max = self
            .groups
            .iter()
            .flat_map(|g| g.bars.iter())
            .filter_map(|b| Some(b.value?.hi.max(b.length()?)))
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        let legend = if self.legend.is_empty() {
            Legend::None
        } else {
            let entry = |(i, name): (usize, &String)| Entry {
                label: name.clone(),
                color: color(i),
                key: Key::Swatch,
            };
            Legend::Above(self.legend.iter().enumerate().map(entry).collect())
        };
        let mut plot = Frame {
            captions: self.captions.clone(),
            x: Axis::zero_based(&self.x_label, max),
            body: Body::Rows {
                label_width,
                height: rows as f64 * ROW + groups_gap + 8.0,
            },
            legend,
        }
        .draw();
        let mut y = 4.0;
        for g in &self.groups {
            let group_top = y;
            for b in &g.bars {
                let cy = plot.y.at(y + ROW / 2.0);
                self.bar(&mut plot, b, cy);
                y += ROW;
            }
            if !g.label.is_empty() && (grouped || g.bars.iter().all(|b| b.label.is_empty())) {
                let mid = plot.y.at((group_top + y) / 2.0);
                let x = plot.left - 8.0;
                plot.svg
                    .text(x, mid + 4.0, 12.0, Anchor::End, INK, "normal", &g.label);
            }
            if grouped {
                y += GAP;
            }
        }
        plot
    }

    /// One bar centred on `cy`: its label, the bar, the whisker, the printed value.
    fn bar(&self, plot: &mut Plot, b: &Bar, cy: f64) {
        let (left, x, svg) = (plot.left, plot.x, &mut plot.svg);
        if !b.label.is_empty() {
            svg.text(
                left - 8.0,
                cy + 4.0,
                12.0,
                Anchor::End,
                INK,
                "normal",
                &b.label,
            );
        }
        let (Some(v), Some(iv)) = (b.length(), b.value) else {
            svg.text(
                left + 6.0,
                cy + 4.0,
                11.0,
                Anchor::Start,
                "#B00020",
                "normal",
                &b.missing,
            );
            return;
        };
        svg.rect(left, cy - BAR / 2.0, x.at(v) - left, BAR, color(b.series));
        let mut end = x.at(v);
        if iv.lo.is_finite() && iv.hi.is_finite() && iv.hi > iv.lo {
            let (pl, ph) = (x.at(iv.lo), x.at(iv.hi));
            svg.line(pl, cy, ph, cy, INK, 1.2, "");
            svg.line(pl, cy - 4.0, pl, cy + 4.0, INK, 1.2, "");
            svg.line(ph, cy - 4.0, ph, cy + 4.0, INK, 1.2, "");
            end = end.max(ph);
        }
        let label = format!("{}{}{}", value_label(v), self.unit, b.note);
        svg.text(
            end + 6.0,
            cy + 4.0,
            11.0,
            Anchor::Start,
            INK,
            "normal",
            &label,
        );
    }
}
