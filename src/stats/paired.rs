//! The paired comparison of two variants measured in the same rounds: each round's log ratio
//! `ln(a_i / b_i)` is one sample, tested with a one-sample Student t test against 0 and given
//! a t interval, both turned back into a ratio (the geometric mean of the per-round ratios).
//!
//! **Why the round is the sample.** The host's speed moves fast (on the lab's 2-core VM, 5 s
//! averages of a fixed loop are 26% apart) and both sides of a round meet the same stretch of
//! it more than any two rounds do; the per-round ratio cancels what they share, and a pooled
//! rank test of all of `a` against all of `b` cannot (randomized multiple interleaved trials,
//! Abedi & Brecht, ICPE 2017). Rounds run their cells in a random order, so under "no
//! difference" each log ratio is as likely to be `+d` as `-d`: symmetric about 0, where the t
//! test holds its level, and heavy tails (a burst that hit one side of one round) make it
//! conservative rather than loose (`analysis/stopping_tests.rs` checks both on synthetic
//! rounds shaped like this host's noise). Unlike a rank test it can decide with
//! [`MIN_PAIRED_ROUNDS`] rounds: a sign-flip or signed-rank test on 5 pairs cannot go below
//! p = 2/32.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

use super::bootstrap::RatioEstimate;

/// Fewest rounds a paired comparison decides on: with 2 the spread of the log ratios rests on
/// one difference, and one burst decides the verdict.
pub const MIN_PAIRED_ROUNDS: usize = 3;

/// The smallest p the paired test can give with `rounds` rounds: 1 below
/// [`MIN_PAIRED_ROUNDS`] (it does not decide there), else none above 0.
pub fn smallest_p(rounds: usize) -> f64 {
    if rounds < MIN_PAIRED_ROUNDS {
        1.0
    } else {
        0.0
    }
}

/// Name of the test in reports and `results.json`.
pub const PAIRED_T: &str = "paired t test on per-round log ratios, two-sided";

/// A paired comparison of `a` against `b`, round by round.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairedTest {
    /// `exp(mean ln(a_i / b_i))` with its 95% t interval; `paired` is true.
    pub ratio: RatioEstimate,
    /// Two-sided p of "the mean log ratio is 0".
    pub p_value: f64,
    /// Standard deviation of the per-round log ratios (0 with one round).
    pub log_sd: f64,
    /// Rounds (pairs) compared.
    pub rounds: usize,
}

/// The two-sided critical value of Student's t with `df` degrees of freedom at level
/// `two_sided` (the `1 − two_sided / 2` quantile). The 95% interval's values, asked for every
/// comparison, are computed once (the inversion is a numeric search).
pub fn t_quantile(df: usize, two_sided: f64) -> f64 {
    static T95: std::sync::OnceLock<Vec<f64>> = std::sync::OnceLock::new();
    let invert = |df: usize, two_sided: f64| {
        let t = StudentsT::new(0.0, 1.0, df as f64).expect("df >= 1");
        t.inverse_cdf(1.0 - two_sided / 2.0)
    };
    if two_sided == 0.05 && (1..=256).contains(&df) {
        return T95.get_or_init(|| (1..=256).map(|d| invert(d, 0.05)).collect())[df - 1];
    }
    invert(df, two_sided)
}

/// Two-sided p of a t statistic with `df` degrees of freedom, floored at the smallest positive
/// f64 so it stays in `(0, 1]`.
fn t_p(t_stat: f64, df: usize) -> f64 {
    let t = StudentsT::new(0.0, 1.0, df as f64).expect("df >= 1");
    (2.0 * t.sf(t_stat.abs())).clamp(f64::MIN_POSITIVE, 1.0)
}

/// The paired test of `a` against `b`, where `a[i]` and `b[i]` come from round `i`. None when
/// the lengths differ, a sample is empty, or a value is not positive and finite (a ratio of
/// logs needs both): the caller falls back to a test that needs neither.
pub fn paired_log_ratio(a: &[f64], b: &[f64]) -> Option<PairedTest> {
    let ok = |x: &f64| x.is_finite() && *x > 0.0;
    if a.len() != b.len() || a.is_empty() || !a.iter().chain(b).all(ok) {
        return None;
    }
    let d: Vec<f64> = a.iter().zip(b).map(|(x, y)| x.ln() - y.ln()).collect();
    let n = d.len();
    let mean = d.iter().sum::<f64>() / n as f64;
    let at = |x: f64| RatioEstimate {
        ratio: mean.exp(),
        ci95_low: (mean - x).exp(),
        ci95_high: (mean + x).exp(),
        paired: true,
    };
    if n == 1 {
        return Some(PairedTest {
            ratio: at(0.0),
            p_value: 1.0,
            log_sd: 0.0,
            rounds: 1,
        });
    }
    let sd = (d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();
    let se = sd / (n as f64).sqrt();
    let df = n - 1;
    // Equal log ratios in every round: no spread to test against, so any shift is certain
    // (a deterministic figure) and none is no difference at all.
    let (half, p_value) = if se <= f64::EPSILON * mean.abs().max(1.0) {
        (0.0, if mean == 0.0 { 1.0 } else { f64::MIN_POSITIVE })
    } else {
        (t_quantile(df, 0.05) * se, t_p(mean / se, df))
    };
    Some(PairedTest {
        ratio: at(half),
        p_value,
        log_sd: sd,
        rounds: n,
    })
}

/// The smallest difference, as a fraction, that `rounds` paired rounds whose log ratios spread
/// by `log_sd` can tell from none at two-sided level `alpha`: the half-width of the interval
/// such rounds give, `exp(t · sd / √n) − 1`. Infinite below [`MIN_PAIRED_ROUNDS`].
pub fn resolution(log_sd: f64, rounds: usize, alpha: f64) -> f64 {
    if rounds < MIN_PAIRED_ROUNDS {
        return f64::INFINITY;
    }
    (t_quantile(rounds - 1, alpha) * log_sd / (rounds as f64).sqrt()).exp() - 1.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(x: f64, y: f64, rel: f64) -> bool {
        (x - y).abs() <= rel * y.abs()
    }

    #[test]
    fn matches_scipy_ttest_1samp_on_log_ratios() {
        // scipy.stats.ttest_1samp(np.log(a / b), 0): t = 2.1186, p = 0.101502 (df 4), and
        // scipy.stats.t.ppf(0.975, 4) = 2.7764451051977934 (scipy 1.17).
        let a = [105.0, 98.0, 112.0, 103.0, 109.0];
        let b = [100.0, 101.0, 100.0, 99.0, 100.0];
        let t = paired_log_ratio(&a, &b).unwrap();
        assert!(close(t_quantile(4, 0.05), 2.776_445_105_197_793_4, 1e-9));
        let d: Vec<f64> = a
            .iter()
            .zip(&b)
            .map(|(x, y): (&f64, &f64)| (x / y).ln())
            .collect();
        let mean = d.iter().sum::<f64>() / 5.0;
        assert!(close(t.ratio.ratio, mean.exp(), 1e-12));
        assert!(t.ratio.ci95_low < t.ratio.ratio && t.ratio.ratio < t.ratio.ci95_high);
        assert!(
            close(t.p_value, 0.101_501_978_934_548_74, 1e-9),
            "{}",
            t.p_value
        );
        assert_eq!(t.rounds, 5);
    }

    #[test]
    fn a_shift_shared_by_both_sides_of_every_round_cancels() {
        // Rounds 40% apart in speed, the variant always 10% faster: the pairs see it exactly.
        let b = [100.0, 140.0, 70.0, 120.0];
        let a: Vec<f64> = b.iter().map(|x| x * 1.1).collect();
        let t = paired_log_ratio(&a, &b).unwrap();
        assert!(close(t.ratio.ratio, 1.1, 1e-12));
        assert!(t.p_value < 1e-100);
        assert!(close(t.ratio.ci95_low, 1.1, 1e-9) && close(t.ratio.ci95_high, 1.1, 1e-9));
        let same = paired_log_ratio(&b, &b).unwrap();
        assert_eq!((same.ratio.ratio, same.p_value), (1.0, 1.0));
    }

    #[test]
    fn what_it_cannot_test_it_leaves_to_the_caller() {
        assert!(paired_log_ratio(&[1.0, 2.0], &[1.0]).is_none());
        assert!(paired_log_ratio(&[], &[]).is_none());
        assert!(paired_log_ratio(&[1.0, 0.0], &[1.0, 1.0]).is_none());
        assert!(paired_log_ratio(&[1.0, f64::NAN], &[1.0, 1.0]).is_none());
        let one = paired_log_ratio(&[2.0], &[1.0]).unwrap();
        assert_eq!((one.ratio.ratio, one.p_value), (2.0, 1.0));
    }

    #[test]
    fn resolution_narrows_with_rounds_and_is_unknown_below_three() {
        assert!(resolution(0.05, 2, 0.05).is_infinite());
        let (r5, r20) = (resolution(0.05, 5, 0.05), resolution(0.05, 20, 0.05));
        assert!(r20 < r5 && r20 > 0.0, "{r5} {r20}");
        // 2.776 · 0.05 / √5 = 0.0621 in logs.
        assert!(close(r5, 0.0621_f64.exp() - 1.0, 1e-3), "{r5}");
    }
}
