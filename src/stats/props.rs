//! Property tests (proptest) of the statistics module: invariants that must hold for any
//! input, with few cases and resamples so the suite stays fast.

use proptest::prelude::*;

use super::bootstrap::{median_ci, ratio_ci};
use super::*;

/// Resamples for bootstrap properties that do not depend on the count.
const FEW: usize = 500;

fn config() -> ProptestConfig {
    // No regression files: they would land outside src/stats; failures print their input.
    ProptestConfig {
        cases: 64,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Fewer cases for properties of the public functions that run the full
/// [`RESAMPLES`](super::RESAMPLES) bootstrap (about 15 ms a call in a debug build).
fn heavy_config() -> ProptestConfig {
    ProptestConfig {
        cases: 24,
        ..config()
    }
}

/// Round-like values: positive, several magnitudes, sometimes tied.
fn value() -> impl Strategy<Value = f64> {
    prop_oneof![1e-3..1e6f64, (1u32..20).prop_map(f64::from),]
}

fn sample(min: usize, max: usize) -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(value(), min..=max)
}

/// Any finite values, including negative ones and zero.
fn signed_sample(min: usize, max: usize) -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(
        prop_oneof![-1e9..1e9f64, (-5i32..5).prop_map(f64::from)],
        min..=max,
    )
}

fn min_max(xs: &[f64]) -> (f64, f64) {
    (
        xs.iter().copied().fold(f64::INFINITY, f64::min),
        xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    )
}

fn approx(x: f64, y: f64, scale: f64) -> bool {
    (x - y).abs() <= 1e-9 * scale
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn median_within_min_max(xs in signed_sample(1, 40)) {
        let (lo, hi) = min_max(&xs);
        let m = median(&xs);
        prop_assert!(lo <= m && m <= hi, "{m} not in [{lo}, {hi}]");
        prop_assert_eq!(m, percentile(&xs, 50.0));
    }

    #[test]
    fn percentile_monotone_in_p(xs in signed_sample(1, 40), p1 in 0.0..=100.0f64, p2 in 0.0..=100.0f64) {
        let (p1, p2) = if p1 <= p2 { (p1, p2) } else { (p2, p1) };
        prop_assert!(percentile(&xs, p1) <= percentile(&xs, p2));
    }

    #[test]
    fn percentile_ends_are_min_and_max(xs in signed_sample(1, 40)) {
        let (lo, hi) = min_max(&xs);
        prop_assert_eq!(percentile(&xs, 0.0), lo);
        prop_assert_eq!(percentile(&xs, 100.0), hi);
    }

    #[test]
    fn percentiles_sorted_agrees(xs in signed_sample(1, 60), ps in prop::collection::vec(0.0..=100.0f64, 1..6)) {
        let mut sorted = xs.clone();
        sorted.sort_by(f64::total_cmp);
        let each: Vec<f64> = ps.iter().map(|&p| percentile(&xs, p)).collect();
        prop_assert_eq!(percentiles_sorted(&sorted, &ps), each);
    }

    #[test]
    fn few_resample_interval_still_contains_median(xs in signed_sample(2, 12), seed in any::<u64>()) {
        let (lo, hi) = median_ci(&xs, 20, seed);
        let (mn, mx) = min_max(&xs);
        let m = median(&xs);
        prop_assert!(mn <= lo && lo <= m && m <= hi && hi <= mx);
    }

    #[test]
    fn ratio_interval_contains_ratio(a in sample(1, 10), b in sample(1, 10)) {
        let r = ratio_ci(&a, &b, FEW, 9);
        prop_assert_eq!(r.paired, a.len() == b.len());
        prop_assert!(r.ci95_low <= r.ratio && r.ratio <= r.ci95_high, "{r:?}");
        // Every resampled ratio lies between min(a)/max(b) and max(a)/min(b).
        let ((amin, amax), (bmin, bmax)) = (min_max(&a), min_max(&b));
        prop_assert!(amin / bmax <= r.ci95_low && r.ci95_high <= amax / bmin, "{r:?}");
    }

    #[test]
    fn mann_whitney_p_in_unit_interval_and_symmetric(a in sample(1, 25), b in sample(1, 25)) {
        let ab = mann_whitney(&a, &b);
        let ba = mann_whitney(&b, &a);
        prop_assert!(ab.p_value > 0.0 && ab.p_value <= 1.0, "{ab:?}");
        prop_assert_eq!(ab.p_value, ba.p_value);
        prop_assert!(ab.p_value >= min_possible_p(a.len(), b.len()) || ab.method != "exact");
    }

    #[test]
    fn mann_whitney_identical_samples_not_significant(a in sample(1, 25)) {
        let v = mann_whitney(&a, &a);
        prop_assert!(!v.significant, "{v:?}");
    }

    #[test]
    fn outliers_are_valid_indices(xs in signed_sample(0, 30)) {
        let out = modified_z_outliers(&xs, OUTLIER_THRESHOLD);
        prop_assert!(out.windows(2).all(|w| w[0] < w[1]));
        prop_assert!(out.iter().all(|&i| i < xs.len()));
        // Fewer than half the values can be outliers: the median and MAD resist them.
        prop_assert!(out.len() * 2 <= xs.len(), "{out:?} of {xs:?}");
    }

    #[test]
    fn warnings_are_single_lines_with_the_label(xs in signed_sample(0, 12)) {
        for w in warnings("cell/x", &xs) {
            prop_assert!(w.starts_with("cell/x: ") && !w.contains('\n'), "{w}");
        }
    }
}

proptest! {
    #![proptest_config(heavy_config())]

    #[test]
    fn summary_interval_contains_median_within_min_max(xs in sample(1, 12)) {
        let s = summarize(&xs);
        prop_assert!(s.ci95_low <= s.median && s.median <= s.ci95_high, "{s:?}");
        prop_assert!(s.min <= s.ci95_low && s.ci95_high <= s.max, "{s:?}");
    }

    #[test]
    fn summary_ignores_round_order(xs in sample(1, 12), rot in 0usize..12) {
        let mut ys = xs.clone();
        ys.rotate_left(rot % xs.len());
        let (s, t) = (summarize(&xs), summarize(&ys));
        prop_assert_eq!((s.median, s.ci95_low, s.ci95_high), (t.median, t.ci95_low, t.ci95_high));
    }

    #[test]
    fn scaling_scales_median_and_interval(xs in sample(1, 12), c in 1e-3..1e3f64) {
        let s = summarize(&xs);
        let scaled: Vec<f64> = xs.iter().map(|x| x * c).collect();
        let t = summarize(&scaled);
        let scale = c * s.max;
        prop_assert!(approx(t.median, c * s.median, scale), "{t:?} vs {s:?}");
        prop_assert!(approx(t.ci95_low, c * s.ci95_low, scale), "{t:?} vs {s:?}");
        prop_assert!(approx(t.ci95_high, c * s.ci95_high, scale), "{t:?} vs {s:?}");
    }

    #[test]
    fn ratio_with_itself_is_one(xs in sample(1, 12)) {
        prop_assert!(!mann_whitney(&xs, &xs).significant);
        let r = paired_ratio(&xs, &xs);
        prop_assert!(r.paired);
        prop_assert_eq!(r.ratio, 1.0);
        prop_assert!(r.ci95_low <= 1.0 && 1.0 <= r.ci95_high, "{r:?}");
    }

    #[test]
    fn bootstrap_is_deterministic(a in sample(1, 12), b in sample(1, 12)) {
        // Compared as JSON text (NaN != NaN in memory): reports must be byte-identical.
        let s1 = serde_json::to_string(&summarize(&a)).unwrap();
        let s2 = serde_json::to_string(&summarize(&a)).unwrap();
        prop_assert_eq!(s1, s2);
        let r1 = serde_json::to_string(&paired_ratio(&a, &b)).unwrap();
        let r2 = serde_json::to_string(&paired_ratio(&a, &b)).unwrap();
        prop_assert_eq!(r1, r2);
        prop_assert_eq!(median_ci(&a, FEW, 5), median_ci(&a, FEW, 5));
    }

    #[test]
    fn mann_whitney_separated_eight_vs_eight_significant(a in sample(8, 8), gap in 1.0..100.0f64) {
        let top = min_max(&a).1;
        let b: Vec<f64> = a.iter().map(|x| x + top + gap).collect();
        let v = mann_whitney(&a, &b);
        prop_assert!(v.significant, "{v:?}");
        prop_assert!((v.p_value - min_possible_p(8, 8)).abs() < 1e-15);
        prop_assert!(mann_whitney(&b, &a).significant);
    }
}
