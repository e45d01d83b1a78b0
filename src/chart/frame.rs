//! The frame every chart is drawn in — title block, plot area, axes with ticks and labels,
//! legend, footnote — drawn once on the primitives of [`super::svg`].
//!
//! A chart kind describes its frame ([`Frame`]: captions, x axis, a y axis or labelled rows,
//! legend), calls [`Frame::draw`] and draws only its marks (bars, whiskers, curves, knee
//! markers) in the [`Plot`] it gets back, through the plot's scales. The frame lays everything
//! out: long titles and footnotes wrap, legends above the plot wrap into rows, and tick labels
//! that would overlap the previous one are left out (their grid lines stay).

use super::svg::{log_ticks, text_width, tick_label, zero_based_ticks, Anchor, Linear, Log, Svg};
use super::ChartFile;

/// Width of every chart, px.
pub const WIDTH: f64 = 820.0;
/// Margin left and right of the title block, the legend and the footnote, px.
const MARGIN: f64 = 16.0;
/// Grid lines.
const GRID: &str = "#e3e3e3";
/// The axis lines.
const AXIS: &str = "#888888";
/// Tick labels.
const TICK: &str = "#444444";
/// Axis labels.
const LABEL: &str = "#333333";
/// Legend text (and the marks' own labels).
pub const INK: &str = "#222222";
/// Space a legend row takes above the plot, px.
const LEGEND_ROW: f64 = 22.0;
/// Space a legend entry takes right of the plot, px.
const LEGEND_LINE: f64 = 18.0;
/// Line height of a wrapped title and of a wrapped footnote, px.
const TITLE_LINE: f64 = 18.0;
const FOOT_LINE: f64 = 13.0;

/// How values map to pixels along one axis.
#[derive(Debug, Clone, Copy)]
pub enum Scale {
    /// Evenly spaced values.
    Linear(Linear),
    /// Evenly spaced powers of ten (values > 0).
    Log(Log),
}

impl Scale {
    /// Pixel position of `v`.
    pub fn at(&self, v: f64) -> f64 {
        match self {
            Scale::Linear(s) => s.at(v),
            Scale::Log(s) => s.at(v),
        }
    }
}

/// One axis: a linear or log scale over a data range, its ticks and its label.
#[derive(Debug, Clone)]
pub struct Axis {
    label: String,
    log: bool,
    lo: f64,
    hi: f64,
    ticks: Vec<(f64, String)>,
}

impl Axis {
    /// Linear from 0 to a nice value at or above `max`, about five ticks (bar lengths).
    pub fn zero_based(label: &str, max: f64) -> Self {
        let (ticks, end) = zero_based_ticks(max, 5);
        Axis {
            label: label.into(),
            log: false,
            lo: 0.0,
            hi: end,
            ticks: labelled(&ticks),
        }
    }

    /// Linear over `[lo, hi]` with named ticks at the given values.
    pub fn linear(label: &str, lo: f64, hi: f64, ticks: Vec<(f64, String)>) -> Self {
        Axis {
            label: label.into(),
            log: false,
            lo,
            hi,
            ticks,
        }
    }

    /// Log over `[lo, hi]` (both > 0), ticks 1–2–5 per decade or finer ([`log_ticks`]).
    pub fn log(label: &str, lo: f64, hi: f64) -> Self {
        Self::log_at(label, lo, hi, &log_ticks(lo, hi))
    }

    /// Log over `[lo, hi]` (both > 0), ticks at `at` (e.g. the rates measured).
    pub fn log_at(label: &str, lo: f64, hi: f64, at: &[f64]) -> Self {
        Axis {
            label: label.into(),
            log: true,
            lo,
            hi,
            ticks: labelled(at),
        }
    }

    /// The scale from the data range to pixels `r0` (at `lo`) … `r1` (at `hi`).
    fn scale(&self, r0: f64, r1: f64) -> Scale {
        if self.log {
            Scale::Log(Log::new(self.lo, self.hi, r0, r1))
        } else {
            Scale::Linear(Linear {
                d0: self.lo,
                d1: self.hi,
                r0,
                r1,
            })
        }
    }
}

/// Ticks labelled by [`tick_label`].
fn labelled(values: &[f64]) -> Vec<(f64, String)> {
    values.iter().map(|v| (*v, tick_label(*v))).collect()
}

/// How a legend entry shows its series.
#[derive(Debug, Clone, Copy)]
pub enum Key {
    /// A filled square (bars).
    Swatch,
    /// A short line with this dash pattern (curves; "" is solid).
    Line(&'static str),
}

/// One legend entry.
#[derive(Debug, Clone)]
pub struct Entry {
    /// What the series is.
    pub label: String,
    /// Its colour.
    pub color: &'static str,
    /// How it is shown.
    pub key: Key,
}

/// Where the legend goes.
#[derive(Debug, Clone)]
pub enum Legend {
    /// No legend (the rows' labels name the marks).
    None,
    /// Entries side by side between the title block and the plot, wrapping into rows.
    Above(Vec<Entry>),
    /// One entry per line right of the plot.
    Right(Vec<Entry>),
}

/// What the plot's vertical extent is.
#[derive(Debug, Clone)]
pub enum Body {
    /// Rows of marks labelled left of the plot (bar charts), no y axis: the widest row label
    /// and the rows' total height, px. The plot's `y` maps a distance from the plot's top (px)
    /// to the page.
    Rows {
        /// Width of the label column, px.
        label_width: f64,
        /// Height of the rows, px.
        height: f64,
    },
    /// A y axis; the plot is as tall as the chart (at least 440 px, more for a long legend
    /// right of it).
    Y(Axis),
}

/// The words around a plot.
#[derive(Debug, Clone)]
pub struct Captions {
    /// Bold first line: what the chart shows (also the SVG's `<title>`).
    pub title: String,
    /// Second line: where it was measured ([`super::machine_line`]).
    pub subtitle: String,
    /// Under the x axis: how to read the marks.
    pub footnote: String,
}

/// Everything of a chart but its marks.
#[derive(Debug, Clone)]
pub struct Frame {
    /// Title, subtitle, footnote.
    pub captions: Captions,
    /// The horizontal axis.
    pub x: Axis,
    /// A y axis, or labelled rows.
    pub body: Body,
    /// The legend.
    pub legend: Legend,
}

/// A drawn frame, for the marks: the document, the plot area and its scales.
pub struct Plot {
    /// The document; marks are drawn into it after the frame.
    pub svg: Svg,
    /// Data to pixels, horizontally.
    pub x: Scale,
    /// Data to pixels, vertically (with [`Body::Rows`]: px from the plot's top to the page).
    pub y: Scale,
    /// Left edge of the plot area, px.
    pub left: f64,
    /// Right edge of the plot area, px.
    pub right: f64,
    /// Top edge of the plot area, px.
    pub top: f64,
    /// Bottom edge of the plot area (the x axis), px.
    pub bottom: f64,
    title: String,
}

impl Plot {
    /// The finished chart, named `name`, shown in `scenario`'s section.
    pub fn file(self, name: String, scenario: &str) -> ChartFile {
        ChartFile {
            name,
            scenario: Some(scenario.to_string()),
            title: self.title,
            svg: self.svg.finish(),
        }
    }
}

/// `s` broken at spaces into lines of at most `max` px at `size` px (a longer word keeps its
/// own line).
fn wrap(s: &str, size: f64, max: f64) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in s.split(' ') {
        match lines.last_mut() {
            Some(line) if text_width(&format!("{line} {word}"), size) <= max => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

/// The legend entries above the plot, in rows that fit the width: (row, x) of each.
fn legend_rows(entries: &[Entry]) -> Vec<(usize, f64)> {
    let (mut row, mut x) = (0, MARGIN);
    entries
        .iter()
        .map(|e| {
            let w = 16.0 + text_width(&e.label, 12.0);
            if x > MARGIN && x + w > WIDTH - MARGIN {
                row += 1;
                x = MARGIN;
            }
            let at = (row, x);
            x += w + 18.0;
            at
        })
        .collect()
}

/// Draws one legend key with its left end at `x`, centred on `y`.
fn key(svg: &mut Svg, e: &Entry, x: f64, y: f64) -> f64 {
    match e.key {
        Key::Swatch => {
            svg.rect(x, y - 6.0, 12.0, 12.0, e.color);
            16.0
        }
        Key::Line(dash) => {
            svg.line(x, y, x + 24.0, y, e.color, 2.0, dash);
            30.0
        }
    }
}

impl Frame {
    /// Lays the chart out and draws its frame; the marks go into the returned plot.
    pub fn draw(&self) -> Plot {
        let c = &self.captions;
        let title = wrap(&c.title, 15.0, WIDTH - 2.0 * MARGIN);
        let head = TITLE_LINE * (title.len() - 1) as f64;
        let foot = wrap(&c.footnote, 10.0, WIDTH - 2.0 * MARGIN);
        let foot_h = FOOT_LINE * (foot.len() - 1) as f64;
        let (above, right_entries): (&[Entry], &[Entry]) = match &self.legend {
            Legend::None => (&[], &[]),
            Legend::Above(e) => (e, &[]),
            Legend::Right(e) => (&[], e),
        };
        let rows_at = legend_rows(above);
        let above_h = rows_at
            .last()
            .map_or(0.0, |(r, _)| (r + 1) as f64 * LEGEND_ROW);
        let top = 60.0 + head + above_h;
        let right_w = if right_entries.is_empty() {
            8.0
        } else {
            right_entries
                .iter()
                .map(|e| text_width(&e.label, 11.0))
                .fold(120.0, f64::max)
                .min(300.0)
                + 40.0
        };
        let (left, right, bottom, height) = match &self.body {
            Body::Rows {
                label_width,
                height,
            } => {
                let bottom = top + height;
                (
                    MARGIN + label_width + 10.0,
                    WIDTH - 110.0,
                    bottom,
                    bottom + 58.0 + foot_h,
                )
            }
            Body::Y(_) => {
                let h = (140.0 + right_entries.len() as f64 * LEGEND_LINE).max(440.0)
                    + head
                    + above_h
                    + foot_h;
                (72.0, WIDTH - right_w - MARGIN, h - 58.0 - foot_h, h)
            }
        };
        let x = self.x.scale(left, right);
        let y = match &self.body {
            Body::Rows { height, .. } => Scale::Linear(Linear {
                d0: 0.0,
                d1: *height,
                r0: top,
                r1: bottom,
            }),
            Body::Y(axis) => axis.scale(bottom, top),
        };
        let mut svg = Svg::new(WIDTH, height, &c.title);
        for (i, line) in title.iter().enumerate() {
            let ty = 24.0 + TITLE_LINE * i as f64;
            svg.text(MARGIN, ty, 15.0, Anchor::Start, "#111111", "bold", line);
        }
        let sub_y = 42.0 + head;
        svg.text(
            MARGIN,
            sub_y,
            11.0,
            Anchor::Start,
            "#555555",
            "normal",
            &c.subtitle,
        );
        for (e, (row, lx)) in above.iter().zip(&rows_at) {
            let ly = sub_y + 16.0 + *row as f64 * LEGEND_ROW;
            let w = key(&mut svg, e, *lx, ly);
            svg.text(
                lx + w,
                ly + 4.0,
                12.0,
                Anchor::Start,
                INK,
                "normal",
                &e.label,
            );
        }
        for (i, e) in right_entries.iter().enumerate() {
            let (lx, ly) = (right + MARGIN, top + 8.0 + i as f64 * LEGEND_LINE);
            let w = key(&mut svg, e, lx, ly);
            svg.text(
                lx + w,
                ly + 4.0,
                11.0,
                Anchor::Start,
                INK,
                "normal",
                &e.label,
            );
        }
        if let Body::Y(axis) = &self.body {
            let mut last = f64::INFINITY;
            for (v, label) in &axis.ticks {
                let py = y.at(*v);
                svg.line(left, py, right, py, GRID, 1.0, "");
                if (last - py).abs() >= 12.0 {
                    svg.text(
                        left - 6.0,
                        py + 4.0,
                        11.0,
                        Anchor::End,
                        TICK,
                        "normal",
                        label,
                    );
                    last = py;
                }
            }
        }
        let mut last_end = f64::NEG_INFINITY;
        for (v, label) in &self.x.ticks {
            let px = x.at(*v);
            svg.line(px, top, px, bottom, GRID, 1.0, "");
            let half = text_width(label, 11.0) / 2.0;
            if px - half >= last_end + 4.0 {
                svg.text(
                    px,
                    bottom + 15.0,
                    11.0,
                    Anchor::Middle,
                    TICK,
                    "normal",
                    label,
                );
                last_end = px + half;
            }
        }
        svg.line(left, top, left, bottom, AXIS, 1.0, "");
        svg.line(left, bottom, right, bottom, AXIS, 1.0, "");
        let mid = (left + right) / 2.0;
        svg.text(
            mid,
            bottom + 32.0,
            12.0,
            Anchor::Middle,
            LABEL,
            "normal",
            &self.x.label,
        );
        if let Body::Y(axis) = &self.body {
            svg.vtext(18.0, (top + bottom) / 2.0, 12.0, &axis.label);
        }
        for (i, line) in foot.iter().enumerate() {
            let fy = bottom + 50.0 + FOOT_LINE * i as f64;
            svg.text(MARGIN, fy, 10.0, Anchor::Start, "#666666", "normal", line);
        }
        Plot {
            svg,
            x,
            y,
            left,
            right,
            top,
            bottom,
            title: c.title.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(legend: Legend, body: Body, footnote: &str) -> Frame {
        Frame {
            captions: Captions {
                title: "t".into(),
                subtitle: "s".into(),
                footnote: footnote.into(),
            },
            x: Axis::zero_based("x", 4.4),
            body,
            legend,
        }
    }

    #[test]
    fn long_text_wraps_at_spaces() {
        assert_eq!(wrap("a b c", 10.0, 1000.0), ["a b c"]);
        let lines = wrap(&"word ".repeat(60), 10.0, 300.0);
        assert!(lines.len() > 1);
        assert!(lines.iter().all(|l| text_width(l, 10.0) <= 300.0));
    }

    #[test]
    fn legends_above_wrap_into_rows_within_the_width() {
        let entries: Vec<Entry> = (0..12)
            .map(|i| Entry {
                label: format!("Python 3.{i}.0 with a long name"),
                color: "#000000",
                key: Key::Swatch,
            })
            .collect();
        let at = legend_rows(&entries);
        assert!(at.last().unwrap().0 > 0);
        for (e, (_, x)) in entries.iter().zip(&at) {
            assert!(x + 16.0 + text_width(&e.label, 12.0) <= WIDTH - MARGIN);
        }
    }

    #[test]
    fn rows_set_the_height_and_y_maps_row_offsets() {
        let p = frame(
            Legend::None,
            Body::Rows {
                label_width: 60.0,
                height: 100.0,
            },
            "f",
        )
        .draw();
        assert_eq!((p.top, p.bottom), (60.0, 160.0));
        assert_eq!(p.y.at(4.0), 64.0);
        assert_eq!(p.x.at(0.0), p.left);
        assert_eq!(
            p.x.at(5.0),
            p.right,
            "x ends at the nice tick above the maximum"
        );
        let long = frame(
            Legend::None,
            Body::Rows {
                label_width: 60.0,
                height: 100.0,
            },
            &["footnote"; 20].join(" "),
        )
        .draw();
        let svg = long.svg.finish();
        assert!(
            svg.contains(r#"height="231.0""#),
            "two footnote lines: {svg}"
        );
    }

    #[test]
    fn a_y_axis_fills_the_chart_and_crowded_tick_labels_are_dropped() {
        let mut f = frame(Legend::None, Body::Y(Axis::log("y", 1.0, 1000.0)), "f");
        f.x = Axis::log_at("x", 90.0, 1200.0, &[100.0, 101.0, 1000.0]);
        let p = f.draw();
        assert_eq!((p.top, p.bottom), (60.0, 382.0));
        assert!(p.y.at(1000.0) < p.y.at(1.0));
        let svg = p.svg.finish();
        assert!(svg.contains(">100<") && !svg.contains(">101<") && svg.contains(">1000<"));
    }
}
