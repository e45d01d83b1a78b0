//! A tiny SVG writer, axis scales and tick choice: the primitives the chart frame
//! (`frame.rs`) and every chart kind's marks are drawn with.
//!
//! Output is deterministic: coordinates are printed with one decimal, numbers in labels with
//! a fixed rule ([`tick_label`]), nothing depends on time or hash order.

use std::fmt::Write;

/// Font stack of every chart: DejaVu Sans (Debian's `fonts-dejavu-core`) first, so the PNG
/// renderer and browsers lay text out alike.
pub const FONT: &str = "DejaVu Sans, Verdana, Arial, sans-serif";

/// Okabe–Ito colours (distinguishable with colour-vision deficiencies), then a few more.
pub const PALETTE: [&str; 10] = [
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000",
    "#999999", "#882255",
];

/// Dash patterns for lines that share a colour.
pub const DASHES: [&str; 4] = ["", "7 4", "2 3", "9 3 2 3"];

/// The colour for series `i`.
pub fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// A coordinate with one decimal (`-0.0` printed as `0.0`).
pub fn f(x: f64) -> String {
    let s = format!("{x:.1}");
    if s == "-0.0" {
        "0.0".into()
    } else {
        s
    }
}

/// Escapes text for XML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Approximate width in pixels of `s` at `size` px in DejaVu Sans (its glyphs average about
/// 0.6 em); used only for layout, generously.
pub fn text_width(s: &str, size: f64) -> f64 {
    s.chars().count() as f64 * size * 0.62
}

/// Horizontal text anchor.
#[derive(Debug, Clone, Copy)]
pub enum Anchor {
    /// Text starts at x.
    Start,
    /// Text is centred on x.
    Middle,
    /// Text ends at x.
    End,
}

impl Anchor {
    fn name(self) -> &'static str {
        match self {
            Anchor::Start => "start",
            Anchor::Middle => "middle",
            Anchor::End => "end",
        }
    }
}

/// The `stroke-dasharray` attribute for a dash pattern (nothing for a solid line).
fn dash_attr(dash: &str) -> String {
    if dash.is_empty() {
        String::new()
    } else {
        format!(r#" stroke-dasharray="{dash}""#)
    }
}

/// An SVG document being written.
pub struct Svg {
    buf: String,
}

impl Svg {
    /// Starts a document of `width` × `height` px with a white background.
    pub fn new(width: f64, height: f64, title: &str) -> Self {
        let mut buf = String::new();
        let _ = write!(
            buf,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="{FONT}" font-size="12" role="img">"#,
            w = f(width),
            h = f(height)
        );
        let _ = write!(buf, "<title>{}</title>", esc(title));
        let _ = write!(
            buf,
            r##"<rect x="0" y="0" width="{}" height="{}" fill="#ffffff"/>"##,
            f(width),
            f(height)
        );
        Svg { buf }
    }

    /// A filled rectangle.
    pub fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, fill: &str) {
        let _ = write!(
            self.buf,
            r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{fill}"/>"#,
            f(x),
            f(y),
            f(w.max(0.0)),
            f(h.max(0.0))
        );
    }

    /// A straight line; `dash` is an SVG dash array or empty.
    #[allow(clippy::too_many_arguments)]
    pub fn line(
        &mut self,
        x1: f64,
        y1: f64,
        x2: f64,
        y2: f64,
        stroke: &str,
        width: f64,
        dash: &str,
    ) {
        let dash = dash_attr(dash);
        let _ = write!(
            self.buf,
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{stroke}" stroke-width="{}"{dash}/>"#,
            f(x1),
            f(y1),
            f(x2),
            f(y2),
            f(width)
        );
    }

    /// An open polyline through `points`.
    pub fn polyline(&mut self, points: &[(f64, f64)], stroke: &str, width: f64, dash: &str) {
        let pts: Vec<String> = points
            .iter()
            .map(|(x, y)| format!("{},{}", f(*x), f(*y)))
            .collect();
        let dash = dash_attr(dash);
        let _ = write!(
            self.buf,
            r#"<polyline points="{}" fill="none" stroke="{stroke}" stroke-width="{}" stroke-linejoin="round"{dash}/>"#,
            pts.join(" "),
            f(width)
        );
    }

    /// A filled circle.
    pub fn circle(&mut self, x: f64, y: f64, r: f64, fill: &str) {
        let _ = write!(
            self.buf,
            r#"<circle cx="{}" cy="{}" r="{}" fill="{fill}"/>"#,
            f(x),
            f(y),
            f(r)
        );
    }

    /// Text at (x, y) (baseline); `weight` "bold" or "normal".
    #[allow(clippy::too_many_arguments)]
    pub fn text(
        &mut self,
        x: f64,
        y: f64,
        size: f64,
        anchor: Anchor,
        fill: &str,
        weight: &str,
        s: &str,
    ) {
        let weight = if weight == "bold" {
            r#" font-weight="bold""#
        } else {
            ""
        };
        let _ = write!(
            self.buf,
            r#"<text x="{}" y="{}" font-size="{}" text-anchor="{}" fill="{fill}"{weight}>{}</text>"#,
            f(x),
            f(y),
            f(size),
            anchor.name(),
            esc(s)
        );
    }

    /// Text rotated by −90° around (x, y), for a vertical axis label.
    pub fn vtext(&mut self, x: f64, y: f64, size: f64, s: &str) {
        let _ = write!(
            self.buf,
            r##"<text x="{x}" y="{y}" font-size="{}" text-anchor="middle" fill="#333333" transform="rotate(-90 {x} {y})">{}</text>"##,
            f(size),
            esc(s),
            x = f(x),
            y = f(y)
        );
    }

    /// Closes the document.
    pub fn finish(mut self) -> String {
        self.buf.push_str("</svg>\n");
        self.buf
    }
}

/// A linear map from a data interval to a pixel interval.
#[derive(Debug, Clone, Copy)]
pub struct Linear {
    /// Data start.
    pub d0: f64,
    /// Data end.
    pub d1: f64,
    /// Pixel position of `d0`.
    pub r0: f64,
    /// Pixel position of `d1`.
    pub r1: f64,
}

impl Linear {
    /// Pixel position of `x`.
    pub fn at(&self, x: f64) -> f64 {
        let span = self.d1 - self.d0;
        if span == 0.0 {
            return self.r0;
        }
        self.r0 + (x - self.d0) / span * (self.r1 - self.r0)
    }
}

/// A log10 map from a positive data interval to a pixel interval.
#[derive(Debug, Clone, Copy)]
pub struct Log {
    /// The linear map of log10 values.
    pub lin: Linear,
}

impl Log {
    /// A log scale over `[d0, d1]` (both > 0).
    pub fn new(d0: f64, d1: f64, r0: f64, r1: f64) -> Self {
        Log {
            lin: Linear {
                d0: d0.log10(),
                d1: d1.log10(),
                r0,
                r1,
            },
        }
    }
    /// Pixel position of `x` (> 0).
    pub fn at(&self, x: f64) -> f64 {
        self.lin.at(x.log10())
    }
}

/// A "nice" step (1, 2 or 5 × 10^k) giving about `n` intervals over `span`.
fn nice_step(span: f64, n: usize) -> f64 {
    let raw = span / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let m = if norm <= 1.0 {
        1.0
    } else if norm <= 2.0 {
        2.0
    } else if norm <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

/// Ticks from 0 to at least `max` at a nice step; returns (ticks, axis end).
pub fn zero_based_ticks(max: f64, n: usize) -> (Vec<f64>, f64) {
    let max = if max.is_finite() && max > 0.0 {
        max
    } else {
        1.0
    };
    let step = nice_step(max, n);
    let count = (max / step).ceil().max(1.0) as usize;
    let ticks: Vec<f64> = (0..=count).map(|i| i as f64 * step).collect();
    let end = ticks[ticks.len() - 1];
    (ticks, end)
}

/// Ticks for a log axis over `[lo, hi]`: 1-2-5 per decade, or every integer multiple, or
/// linear nice steps when the range is narrower than that gives ticks for.
pub fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let inside = |mults: &[f64]| -> Vec<f64> {
        let mut out = Vec::new();
        let (d0, d1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
        for d in d0..=d1 {
            for m in mults {
                let v = m * 10f64.powi(d);
                let v = round_sig(v);
                if v >= lo && v <= hi {
                    out.push(v);
                }
            }
        }
        out
    };
    let t = inside(&[1.0, 2.0, 5.0]);
    if t.len() >= 3 {
        return t;
    }
    let t = inside(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
    if t.len() >= 3 {
        return t;
    }
    let step = nice_step(hi - lo, 4);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last)
        .map(|i| round_sig(i as f64 * step))
        .filter(|v| *v > 0.0)
        .collect()
}

/// Rounds to 12 significant digits, removing binary noise from tick arithmetic.
fn round_sig(v: f64) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let mag = 10f64.powi(11 - v.abs().log10().floor() as i32);
    (v * mag).round() / mag
}

/// A tick label: integers without decimals, others with as few decimals as they need (max 4).
pub fn tick_label(v: f64) -> String {
    let v = round_sig(v);
    if v.abs() >= 1e6 {
        return format!("{:.0}k", v / 1e3);
    }
    for d in 0..=4 {
        let s = format!("{v:.d$}");
        if (s.parse::<f64>().unwrap_or(v) - v).abs() <= v.abs() * 1e-9 {
            return s;
        }
    }
    format!("{v:.4}")
}

/// A value label with three significant digits (like the tables' precision rule).
pub fn value_label(x: f64) -> String {
    crate::format::num(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinates_and_escaping_are_fixed() {
        assert_eq!(f(-0.04), "0.0");
        assert_eq!(f(12.345), "12.3");
        assert_eq!(esc("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
    }

    #[test]
    fn zero_based_ticks_cover_the_maximum() {
        let (t, end) = zero_based_ticks(439.3, 5);
        assert_eq!(t, vec![0.0, 100.0, 200.0, 300.0, 400.0, 500.0]);
        assert_eq!(end, 500.0);
        let (t, end) = zero_based_ticks(2.2, 5);
        assert!(end >= 2.2 && t.len() >= 3 && t.len() <= 7, "{t:?}");
    }

    #[test]
    fn log_ticks_fit_the_range() {
        assert_eq!(
            log_ticks(0.8, 120.0),
            vec![1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]
        );
        let narrow = log_ticks(95.0, 160.0);
        assert!(narrow.len() >= 2, "{narrow:?}");
        assert!(
            narrow.iter().all(|v| (95.0..=160.0).contains(v)),
            "{narrow:?}"
        );
        assert_eq!(tick_label(0.1 + 0.2), "0.3");
        assert_eq!(tick_label(200.0), "200");
    }

    #[test]
    fn log_scale_maps_decades_evenly() {
        let s = Log::new(1.0, 100.0, 0.0, 200.0);
        assert!((s.at(10.0) - 100.0).abs() < 1e-9);
    }
}
