//! How numbers are shown in tables, charts and terminal output: precision that follows size.

/// Formats a measured number with precision that follows its size (no value is altered
/// beyond display precision).
pub fn num(x: f64) -> String {
    if !x.is_finite() {
        return "–".into();
    }
    let a = x.abs();
    if a >= 100.0 {
        format!("{x:.0}")
    } else if a >= 10.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

/// [`num`] of an optional value, "–" when absent.
pub fn opt(x: Option<f64>) -> String {
    x.map(num).unwrap_or_else(|| "–".into())
}

/// A request rate: whole rates without decimals, others like any number.
pub fn rate(x: f64) -> String {
    if x.is_finite() && x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        num(x)
    }
}

/// A duration in seconds as people read it: `45 s`, `12.5 min`, `1.6 h`.
pub fn duration_s(s: f64) -> String {
    if s < 90.0 {
        format!("{s:.0} s")
    } else if s < 5400.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}
