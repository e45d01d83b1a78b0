//! Per-sample summary over rounds: n, median with a bootstrap 95 % interval, min, max, mean,
//! sample standard deviation and coefficient of variation.

use serde::{Deserialize, Serialize};

use super::bootstrap::{median_ci, median_seed, RESAMPLES};
use super::percentile::{median_of_sorted, sorted_copy};

/// The arithmetic mean; NaN when empty.
pub fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// The sample standard deviation (divisor `n − 1`, two-pass); NaN for fewer than 2 values.
pub fn stddev(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return f64::NAN;
    }
    let m = mean(xs);
    let ss: f64 = xs.iter().map(|x| (x - m) * (x - m)).sum();
    (ss / (xs.len() - 1) as f64).sqrt()
}

/// What a report shows for one measured quantity over rounds.
///
/// Undefined values are NaN in memory and `null` in JSON: everything when `n = 0`; `stddev`
/// and `cv` when `n = 1`; `cv` when the mean is 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of values (rounds).
    pub n: usize,
    /// The median, the headline number.
    #[serde(with = "super::serde_nan")]
    pub median: f64,
    /// The smallest value.
    #[serde(with = "super::serde_nan")]
    pub min: f64,
    /// The largest value.
    #[serde(with = "super::serde_nan")]
    pub max: f64,
    /// The arithmetic mean.
    #[serde(with = "super::serde_nan")]
    pub mean: f64,
    /// Sample standard deviation (divisor `n − 1`).
    #[serde(with = "super::serde_nan")]
    pub stddev: f64,
    /// Coefficient of variation, `stddev / |mean|`, as a fraction (0.14 = 14 %).
    #[serde(with = "super::serde_nan")]
    pub cv: f64,
    /// Lower end of the 95 % bootstrap percentile interval of the median.
    #[serde(with = "super::serde_nan")]
    pub ci95_low: f64,
    /// Upper end of the 95 % bootstrap percentile interval of the median.
    #[serde(with = "super::serde_nan")]
    pub ci95_high: f64,
}

/// Summarizes a sample (one value per round).
///
/// The interval is a bootstrap 95 % percentile interval of the median from
/// [`RESAMPLES`] resamples with a fixed seed derived from the sample size, so the same input
/// always gives the same output (and rescaled or reordered input gives the rescaled interval).
/// For `n < 2` it is `[x, x]`. It is coarse with few rounds: it can only return observed
/// values (or midpoints of two for even `n`), and for `n = 3` (and `n = 5`) it is exactly
/// `[min, max]` — see [`super::bootstrap`]. It always contains the median and lies within
/// `[min, max]`.
pub fn summarize(xs: &[f64]) -> Summary {
    let sorted = sorted_copy(xs);
    let n = sorted.len();
    let (min, max) = match n {
        0 => (f64::NAN, f64::NAN),
        _ => (sorted[0], sorted[n - 1]),
    };
    let mean = mean(xs);
    let stddev = stddev(xs);
    let (ci95_low, ci95_high) = median_ci(&sorted, RESAMPLES, median_seed(n));
    Summary {
        n,
        median: median_of_sorted(&sorted),
        min,
        max,
        mean,
        stddev,
        cv: stddev / mean.abs(),
        ci95_low,
        ci95_high,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_stddev_known_values() {
        assert!(mean(&[]).is_nan());
        assert_eq!(mean(&[1.0, 2.0, 3.0, 4.0]), 2.5);
        assert!(stddev(&[5.0]).is_nan());
        // Sample sd of 2, 4, 4, 4, 5, 5, 7, 9 is sqrt(32 / 7).
        let sd = stddev(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert!((sd - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert_eq!(stddev(&[3.0, 3.0, 3.0]), 0.0);
    }

    #[test]
    fn summary_of_three_rounds() {
        let s = summarize(&[102.0, 98.0, 100.0]);
        assert_eq!(
            (s.n, s.median, s.min, s.max, s.mean),
            (3, 100.0, 98.0, 102.0, 100.0)
        );
        assert!((s.stddev - 2.0).abs() < 1e-12);
        assert!((s.cv - 0.02).abs() < 1e-12);
        // With 3 rounds the bootstrap interval of the median is honestly min..max.
        assert_eq!((s.ci95_low, s.ci95_high), (98.0, 102.0));
    }

    #[test]
    fn summary_of_one_and_zero_values() {
        let s = summarize(&[7.5]);
        assert_eq!(
            (s.n, s.median, s.min, s.max, s.ci95_low, s.ci95_high),
            (1, 7.5, 7.5, 7.5, 7.5, 7.5)
        );
        assert!(s.stddev.is_nan() && s.cv.is_nan());
        let e = summarize(&[]);
        assert_eq!(e.n, 0);
        assert!(e.median.is_nan() && e.ci95_low.is_nan() && e.min.is_nan());
    }

    #[test]
    fn json_round_trip_with_undefined_fields() {
        let s = summarize(&[7.5]);
        let text = serde_json::to_string(&s).unwrap();
        assert!(
            text.contains(r#""stddev":null"#) && text.contains(r#""cv":null"#),
            "{text}"
        );
        let back: Summary = serde_json::from_str(&text).unwrap();
        assert_eq!(back.median, 7.5);
        assert!(back.stddev.is_nan());
        let full = summarize(&[1.0, 2.0, 4.0]);
        let back: Summary = serde_json::from_str(&serde_json::to_string(&full).unwrap()).unwrap();
        // serde_json parses floats to within 1 ulp unless its `float_roundtrip` feature is on.
        assert_eq!(
            (back.n, back.median, back.ci95_low, back.ci95_high),
            (3, 2.0, 1.0, 4.0)
        );
        assert!((back.stddev - full.stddev).abs() <= 4.0 * f64::EPSILON * full.stddev);
    }
}
