//! Medians and percentiles: linear interpolation between closest ranks (numpy's default).
//!
//! Definition (Hyndman & Fan type 7, numpy `method="linear"`, R's default, Excel's
//! `PERCENTILE.INC`): for `n` sorted values `x[0] <= … <= x[n-1]` and `p` in `0..=100`, let
//! `h = (p / 100) · (n − 1)`; the percentile is `x[⌊h⌋] + (h − ⌊h⌋) · (x[⌊h⌋+1] − x[⌊h⌋])`.
//! So `p = 0` is the minimum, `p = 100` the maximum, and `p = 50` the usual median (the mean
//! of the two middle values for even `n`).
//!
//! Values are ordered with [`f64::total_cmp`]; NaN inputs are not meaningful here (they sort
//! to an end and are otherwise treated as numbers) and callers should not pass them.

/// A sorted copy of `xs` (ascending, by [`f64::total_cmp`]).
pub(crate) fn sorted_copy(xs: &[f64]) -> Vec<f64> {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// `a + t·(b − a)` for `a <= b` and `t` in `[0, 1)`, kept inside `[a, b]` so that rounding
/// can never push a percentile outside its bracketing values (this keeps percentiles monotone
/// in `p` and within `[min, max]`).
pub(crate) fn lerp(a: f64, b: f64, t: f64) -> f64 {
    if t <= 0.0 || a == b {
        return a;
    }
    (a + (b - a) * t).max(a).min(b)
}

/// The median of values already sorted ascending; NaN when empty.
pub(crate) fn median_of_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => sorted[n / 2],
        _ => lerp(sorted[n / 2 - 1], sorted[n / 2], 0.5),
    }
}

/// The `p`-th percentile of values already sorted ascending (see the module doc).
///
/// `p` is clamped to `0..=100`; NaN for an empty slice or a NaN `p`.
pub(crate) fn percentile_of_sorted(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    if n == 0 || p.is_nan() {
        return f64::NAN;
    }
    let h = (p.clamp(0.0, 100.0) / 100.0) * (n - 1) as f64;
    let lo = h.floor() as usize;
    if lo >= n - 1 {
        return sorted[n - 1];
    }
    lerp(sorted[lo], sorted[lo + 1], h - lo as f64)
}

/// The median of `xs` (the mean of the two middle values for an even count); NaN when empty.
///
/// Equal to `percentile(xs, 50.0)`.
pub fn median(xs: &[f64]) -> f64 {
    median_of_sorted(&sorted_copy(xs))
}

/// The `p`-th percentile of `xs`, `p` in `0..=100` (clamped), by linear interpolation between
/// closest ranks — the same definition as numpy's default (`numpy.percentile(xs, p)`,
/// `method="linear"`). NaN for an empty slice.
///
/// Sorts a copy of `xs`; for many percentiles of one large array use [`percentiles_sorted`].
pub fn percentile(xs: &[f64], p: f64) -> f64 {
    percentile_of_sorted(&sorted_copy(xs), p)
}

/// Several percentiles of an already ascending-sorted slice (e.g. pooled latencies), without
/// re-sorting; same definition as [`percentile`]. Every entry is NaN when `sorted` is empty.
///
/// The slice must be sorted ascending (checked in debug builds only); sort it with
/// `v.sort_by(f64::total_cmp)`.
pub fn percentiles_sorted(sorted: &[f64], ps: &[f64]) -> Vec<f64> {
    debug_assert!(
        sorted.windows(2).all(|w| w[0].total_cmp(&w[1]).is_le()),
        "percentiles_sorted needs an ascending slice"
    );
    ps.iter()
        .map(|&p| percentile_of_sorted(sorted, p))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_known_values() {
        assert!(median(&[]).is_nan());
        assert_eq!(median(&[3.0]), 3.0);
        assert_eq!(median(&[3.0, 1.0]), 2.0);
        assert_eq!(median(&[5.0, 1.0, 3.0]), 3.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[1.0, 1.0, 1.0, 100.0]), 1.0);
    }

    #[test]
    fn percentile_matches_numpy_linear() {
        // numpy.percentile(xs, p) with numpy 2.x defaults.
        let xs = [15.0, 20.0, 35.0, 40.0, 50.0];
        assert_eq!(percentile(&xs, 0.0), 15.0);
        assert_eq!(percentile(&xs, 100.0), 50.0);
        assert_eq!(percentile(&xs, 50.0), 35.0);
        assert!((percentile(&xs, 40.0) - 29.0).abs() < 1e-12);
        assert!((percentile(&xs, 30.0) - 23.0).abs() < 1e-12);
        assert!((percentile(&xs, 95.0) - 48.0).abs() < 1e-12);
        let ys = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0];
        assert!((percentile(&ys, 25.0) - 1.75).abs() < 1e-12);
        assert!((percentile(&ys, 75.0) - 5.25).abs() < 1e-12);
        assert!((percentile(&ys, 99.0) - 8.79).abs() < 1e-12);
        assert!((percentile(&ys, 10.0) - 1.0).abs() < 1e-12);
        assert!((percentile(&ys, 20.0) - 1.4).abs() < 1e-12);
    }

    #[test]
    fn percentile_edge_cases() {
        assert!(percentile(&[], 50.0).is_nan());
        assert!(percentile(&[1.0, 2.0], f64::NAN).is_nan());
        assert_eq!(percentile(&[7.0], 0.0), 7.0);
        assert_eq!(percentile(&[7.0], 100.0), 7.0);
        assert_eq!(percentile(&[1.0, 2.0], -5.0), 1.0);
        assert_eq!(percentile(&[1.0, 2.0], 500.0), 2.0);
    }

    #[test]
    fn percentiles_sorted_agrees_with_percentile() {
        let mut v: Vec<f64> = (0..1000)
            .map(|i| ((i * 7919) % 1000) as f64 / 10.0)
            .collect();
        let ps = [0.0, 50.0, 95.0, 99.0, 99.9, 100.0];
        let one_by_one: Vec<f64> = ps.iter().map(|&p| percentile(&v, p)).collect();
        v.sort_by(f64::total_cmp);
        assert_eq!(percentiles_sorted(&v, &ps), one_by_one);
        assert!(percentiles_sorted(&[], &ps).iter().all(|x| x.is_nan()));
    }
}
