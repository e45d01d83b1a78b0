//! Bootstrap percentile intervals for a median and for a ratio of medians (paired by round).
//!
//! A resample draws `n` indices with replacement from a seeded [`Rng`]; the statistic is
//! recomputed on it; the interval's ends are the 2.5th and 97.5th percentiles of the
//! resampled statistics, taken as outward-rounded order statistics (numpy's `"lower"` and
//! `"higher"` methods) so they are always values the bootstrap produced, never interpolated.
//!
//! **Why the interval is coarse with few rounds.** The median of a resample of `n` observed
//! values is itself an observed value (odd `n`) or the midpoint of two (even `n`), so the
//! bootstrap can only return such values, and with `n` = 3 each end of the interval is the
//! minimum or maximum: 7 of 27 equally likely index triples (≈ 26 %) have the minimum as their
//! median, far more than 2.5 %, so the interval is exactly `[min, max]`. With 5 rounds it is
//! still `[min, max]` (≈ 5.8 % per end); from 7 rounds on it begins to exclude the extremes.
//! The interval says "the median is somewhere among these rounds", not more; raise `--rounds`
//! for a tighter one. The percentile bootstrap also under-covers slightly for small `n`.

use serde::{Deserialize, Serialize};

use super::percentile::{lerp, median};
use super::rng::{seed_for, Rng};

/// Number of bootstrap resamples behind every reported interval.
pub const RESAMPLES: usize = 10_000;

/// Tail probability on each side of a 95 % interval.
const TAIL: f64 = 0.025;

/// The indices of `xs` in ascending order of value (stable, by [`f64::total_cmp`]).
fn argsort(xs: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..xs.len()).collect();
    order.sort_by(|&i, &j| xs[i].total_cmp(&xs[j]));
    order
}

/// Fills `counts` with how often each index of `0..counts.len()` is drawn in one resample.
fn draw_counts(rng: &mut Rng, counts: &mut [u32]) {
    counts.fill(0);
    let n = counts.len();
    for _ in 0..n {
        counts[rng.below(n)] += 1;
    }
}

/// The median of the resample that holds `counts[i]` copies of `xs[i]`, in O(n) by walking
/// `order` (the argsort of `xs`); the same value [`median`] gives for that multiset.
fn resample_median(xs: &[f64], order: &[usize], counts: &[u32]) -> f64 {
    let m: usize = counts.iter().map(|&c| c as usize).sum();
    let (lo_rank, hi_rank) = ((m - 1) / 2, m / 2);
    let mut seen = 0usize;
    let mut lo = None;
    for &i in order {
        seen += counts[i] as usize;
        if lo.is_none() && seen > lo_rank {
            lo = Some(xs[i]);
        }
        if seen > hi_rank {
            let lo = lo.unwrap_or(xs[i]);
            return if lo_rank == hi_rank {
                xs[i]
            } else {
                lerp(lo, xs[i], 0.5)
            };
        }
    }
    f64::NAN
}

/// The 2.5th and 97.5th percentiles of bootstrap statistics (NaN ones dropped), as
/// outward-rounded order statistics; NaN when nothing is left.
fn percentile_interval(mut stats: Vec<f64>) -> (f64, f64) {
    stats.retain(|x| !x.is_nan());
    if stats.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    stats.sort_by(f64::total_cmp);
    let last = (stats.len() - 1) as f64;
    let lo = (TAIL * last).floor() as usize;
    let hi = ((1.0 - TAIL) * last).ceil() as usize;
    (stats[lo], stats[hi.min(stats.len() - 1)])
}

/// Widens `(lo, hi)` to contain `point` when the point is a number. Monte Carlo noise could
/// otherwise exclude it in degenerate cases (very few resamples); with [`RESAMPLES`] this
/// does not change real intervals.
fn include(lo: f64, hi: f64, point: f64) -> (f64, f64) {
    if point.is_nan() {
        (lo, hi)
    } else {
        (lo.min(point), hi.max(point))
    }
}

/// 95 % bootstrap percentile interval of the median of `xs`, with `resamples` resamples from a
/// generator seeded with `seed`. `[x, x]` for a single value, NaN for none.
///
/// The interval always contains [`median`]`(xs)` and lies within `[min, max]`.
pub fn median_ci(xs: &[f64], resamples: usize, seed: u64) -> (f64, f64) {
    match xs.len() {
        0 => return (f64::NAN, f64::NAN),
        1 => return (xs[0], xs[0]),
        _ => {}
    }
    let order = argsort(xs);
    let mut rng = Rng::new(seed);
    let mut counts = vec![0u32; xs.len()];
    let medians = (0..resamples.max(1))
        .map(|_| {
            draw_counts(&mut rng, &mut counts);
            resample_median(xs, &order, &counts)
        })
        .collect();
    let (lo, hi) = percentile_interval(medians);
    include(lo, hi, median(xs))
}

/// The seed [`median_ci`] uses for a sample of `n` values in reports.
pub fn median_seed(n: usize) -> u64 {
    seed_for("asynclab/stats/median", &[n])
}

/// Ratio of two medians with a bootstrap interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RatioEstimate {
    /// `median(a) / median(b)`; NaN when a sample is empty (`null` in JSON).
    #[serde(with = "super::serde_nan")]
    pub ratio: f64,
    /// Lower end of the 95 % bootstrap percentile interval of the ratio.
    #[serde(with = "super::serde_nan")]
    pub ci95_low: f64,
    /// Upper end of the 95 % bootstrap percentile interval of the ratio.
    #[serde(with = "super::serde_nan")]
    pub ci95_high: f64,
    /// Whether rounds were resampled as pairs `(a_i, b_i)` (equal lengths) rather than each
    /// sample independently.
    pub paired: bool,
}

/// [`paired_ratio`] with an explicit number of resamples and seed.
///
/// Equal lengths: each resample draws round indices and takes `(a_i, b_i)` together, so drift
/// shared by the variants of one round (rounds interleave them) cancels in the ratio. Unequal
/// lengths: `a` and `b` are resampled independently and `paired` is false. A ratio whose
/// denominator is zero is ±inf; 0/0 resamples are dropped.
pub fn ratio_ci(a: &[f64], b: &[f64], resamples: usize, seed: u64) -> RatioEstimate {
    ratio_ci_with(a, b, a.len() == b.len(), resamples, seed)
}

/// [`ratio_ci`] with the pairing chosen by the caller (`paired` needs equal lengths).
fn ratio_ci_with(a: &[f64], b: &[f64], paired: bool, resamples: usize, seed: u64) -> RatioEstimate {
    let paired = paired && a.len() == b.len();
    let ratio = median(a) / median(b);
    if a.is_empty() || b.is_empty() {
        return RatioEstimate {
            ratio,
            ci95_low: f64::NAN,
            ci95_high: f64::NAN,
            paired,
        };
    }
    if a.len() == 1 && b.len() == 1 {
        return RatioEstimate {
            ratio,
            ci95_low: ratio,
            ci95_high: ratio,
            paired,
        };
    }
    let (order_a, order_b) = (argsort(a), argsort(b));
    let mut rng = Rng::new(seed);
    let mut counts_a = vec![0u32; a.len()];
    let mut counts_b = vec![0u32; b.len()];
    let ratios = (0..resamples.max(1))
        .map(|_| {
            draw_counts(&mut rng, &mut counts_a);
            let counts_b: &[u32] = if paired {
                &counts_a
            } else {
                draw_counts(&mut rng, &mut counts_b);
                &counts_b
            };
            resample_median(a, &order_a, &counts_a) / resample_median(b, &order_b, counts_b)
        })
        .collect();
    let (lo, hi) = percentile_interval(ratios);
    let (ci95_low, ci95_high) = include(lo, hi, ratio);
    RatioEstimate {
        ratio,
        ci95_low,
        ci95_high,
        paired,
    }
}

/// The seed [`paired_ratio`] uses for samples of these lengths.
pub fn ratio_seed(len_a: usize, len_b: usize) -> u64 {
    seed_for("asynclab/stats/ratio", &[len_a, len_b])
}

/// `median(a) / median(b)` with a 95 % bootstrap percentile interval from [`RESAMPLES`]
/// resamples of **round indices**: `a[i]` and `b[i]` must come from the same round. When the
/// lengths differ (a round failed for one variant) the samples are resampled independently
/// and `paired` is false. Deterministic: the seed depends only on the lengths.
///
/// For a single pair the interval is `[ratio, ratio]`; with empty input everything is NaN.
pub fn paired_ratio(a: &[f64], b: &[f64]) -> RatioEstimate {
    ratio_ci(a, b, RESAMPLES, ratio_seed(a.len(), b.len()))
}

/// `median(a) / median(b)` with each sample resampled on its own, for samples that share no
/// rounds (two separate runs): `paired` is false whatever the lengths. Deterministic.
pub fn independent_ratio(a: &[f64], b: &[f64]) -> RatioEstimate {
    let seed = seed_for("asynclab/stats/independent-ratio", &[a.len(), b.len()]);
    ratio_ci_with(a, b, false, RESAMPLES, seed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Probability that the bootstrap median of `n` (odd) distinct values is at most the
    /// `j`-th smallest (1-based): at least `(n+1)/2` of `n` draws fall among the `j` smallest.
    fn exact_cdf(n: usize, j: usize) -> f64 {
        let p = j as f64 / n as f64;
        let mut total = 0.0;
        for k in n.div_ceil(2)..=n {
            let binom = (0..k).fold(1.0, |c, i| c * (n - i) as f64 / (i + 1) as f64);
            total += binom * p.powi(k as i32) * (1.0 - p).powi((n - k) as i32);
        }
        total
    }

    #[test]
    fn resample_median_matches_median_of_the_multiset() {
        let xs = [5.0, 1.0, 4.0, 2.0, 3.0, 2.0];
        let order = argsort(&xs);
        let mut rng = Rng::new(3);
        let mut counts = vec![0u32; xs.len()];
        for _ in 0..200 {
            draw_counts(&mut rng, &mut counts);
            let multiset: Vec<f64> = xs
                .iter()
                .zip(&counts)
                .flat_map(|(&x, &c)| std::iter::repeat_n(x, c as usize))
                .collect();
            assert_eq!(resample_median(&xs, &order, &counts), median(&multiset));
        }
    }

    #[test]
    fn three_rounds_give_min_to_max() {
        // P(bootstrap median = min) = 7/27 for n = 3, so both ends are the extremes.
        assert!((exact_cdf(3, 1) - 7.0 / 27.0).abs() < 1e-12);
        let xs = [10.0, 30.0, 20.0];
        assert_eq!(median_ci(&xs, RESAMPLES, median_seed(3)), (10.0, 30.0));
    }

    #[test]
    fn order_statistics_chosen_match_the_exact_bootstrap_distribution() {
        // For odd n the exact bootstrap distribution of the median is binomial; check that
        // the Monte Carlo interval picks the order statistics it implies (for the n below
        // no CDF value is near 2.5 % or 97.5 %, so Monte Carlo noise cannot flip them).
        for n in [5usize, 7, 9, 11, 13] {
            let xs: Vec<f64> = (1..=n).map(|i| i as f64).collect();
            let lo_j = (1..=n).find(|&j| exact_cdf(n, j) > TAIL).unwrap();
            let hi_j = (1..=n).find(|&j| exact_cdf(n, j) >= 1.0 - TAIL).unwrap();
            let (lo, hi) = median_ci(&xs, RESAMPLES, median_seed(n));
            assert_eq!((lo, hi), (lo_j as f64, hi_j as f64), "n = {n}");
        }
    }

    #[test]
    fn small_and_empty_samples() {
        assert_eq!(median_ci(&[4.0], 100, 1), (4.0, 4.0));
        let (lo, hi) = median_ci(&[], 100, 1);
        assert!(lo.is_nan() && hi.is_nan());
        let r = paired_ratio(&[2.0], &[4.0]);
        assert_eq!(
            (r.ratio, r.ci95_low, r.ci95_high, r.paired),
            (0.5, 0.5, 0.5, true)
        );
        let r = paired_ratio(&[], &[1.0]);
        assert!(r.ratio.is_nan() && r.ci95_low.is_nan() && !r.paired);
    }

    #[test]
    fn pairing_cancels_shared_drift() {
        // Round-to-round drift shared by both variants; a is always exactly 2x b.
        let b = [100.0, 150.0, 80.0, 120.0, 95.0];
        let a: Vec<f64> = b.iter().map(|x| 2.0 * x).collect();
        let paired = paired_ratio(&a, &b);
        assert!(paired.paired);
        assert_eq!(
            (paired.ratio, paired.ci95_low, paired.ci95_high),
            (2.0, 2.0, 2.0)
        );
        // Without pairing the drift shows up as a wide interval.
        let unpaired = paired_ratio(&a, &b[..4]);
        assert!(!unpaired.paired);
        assert!(unpaired.ci95_high / unpaired.ci95_low > 1.3, "{unpaired:?}");
    }

    #[test]
    fn ratio_json_round_trip_keeps_nan() {
        let r = paired_ratio(&[], &[]);
        let text = serde_json::to_string(&r).unwrap();
        assert_eq!(
            text,
            r#"{"ratio":null,"ci95_low":null,"ci95_high":null,"paired":true}"#
        );
        let back: RatioEstimate = serde_json::from_str(&text).unwrap();
        assert!(back.ratio.is_nan() && back.paired);
    }
}
