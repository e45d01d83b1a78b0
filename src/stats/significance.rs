//! Significance of a difference between two samples: the Mann–Whitney U test and the smallest
//! p-value it can give. `analysis::comparison` combines it with the ratio's interval and the
//! noise band into the lab's one verdict.
//!
//! **Few rounds cannot be significant.** Without ties the most extreme arrangement of two
//! samples has probability `1 / C(n1 + n2, n1)` on each side, so the smallest two-sided p
//! is `2 / C(n1 + n2, n1)`: 0.1 for 3 vs 3 rounds, 0.057 for 3 vs 4, 0.029 for 4 vs 4,
//! 0.0079 for 5 vs 5. With 3 vs 3 rounds nothing can reach α = 0.05 however different the
//! numbers are, so a report must say "not significant (too few rounds)" rather than "no
//! difference"; [`min_possible_p`] tells callers when that is the case.

use serde::Serialize;

/// The significance level used for verdicts.
pub const ALPHA: f64 = 0.05;

/// Name of the test in [`RankTest::test`].
pub const MANN_WHITNEY: &str = "Mann-Whitney U, two-sided";

/// Up to this many values in both samples together the p-value is exact.
pub const EXACT_MAX_TOTAL: usize = 40;

/// The outcome of a two-sample test.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankTest {
    /// Which test: `"Mann-Whitney U, two-sided"`.
    pub test: &'static str,
    /// How the p-value was obtained: `"exact"`, `"normal approximation"` (with tie and
    /// continuity corrections) or `"none (empty sample)"`.
    pub method: &'static str,
    /// Two-sided p-value, in `(0, 1]`.
    pub p_value: f64,
    /// Whether `p_value <= alpha`.
    pub significant: bool,
    /// The significance level, [`ALPHA`].
    pub alpha: f64,
}

/// Binomial coefficient `C(n, k)` as an f64 (exact while it fits in 53 bits).
fn binomial(n: usize, k: usize) -> f64 {
    let k = k.min(n - k);
    (0..k).fold(1.0, |c, i| c * (n - i) as f64 / (i + 1) as f64)
}

/// The smallest two-sided p-value the Mann–Whitney test can give for samples of these sizes:
/// `2 / C(n1 + n2, n1)` (capped at 1), reached when the samples do not overlap at all; 1 if
/// a sample is empty. When it exceeds [`ALPHA`] no result can be significant, and a report
/// should say "not significant (too few rounds)".
pub fn min_possible_p(n1: usize, n2: usize) -> f64 {
    if n1 == 0 || n2 == 0 {
        return 1.0;
    }
    (2.0 / binomial(n1 + n2, n1)).min(1.0)
}

/// Doubled mid-ranks of the pooled sample (integers: tied values at 1-based positions
/// `i..=j` all get `i + j`), in pooled order, with a flag telling which came from `a`, and
/// the sizes of the tie groups.
fn doubled_midranks(a: &[f64], b: &[f64]) -> (Vec<(u64, bool)>, Vec<usize>) {
    let mut pooled: Vec<(f64, bool)> = a
        .iter()
        .map(|&x| (x, true))
        .chain(b.iter().map(|&x| (x, false)))
        .collect();
    pooled.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut ranks = Vec::with_capacity(pooled.len());
    let mut groups = Vec::new();
    let mut start = 0;
    while start < pooled.len() {
        let mut end = start + 1;
        while end < pooled.len() && pooled[end].0 == pooled[start].0 {
            end += 1;
        }
        let doubled = (start + 1 + end) as u64;
        ranks.extend(
            pooled[start..end]
                .iter()
                .map(|&(_, from_a)| (doubled, from_a)),
        );
        groups.push(end - start);
        start = end;
    }
    (ranks, groups)
}

/// Exact two-sided p-value of the rank-sum test, conditional on the tie pattern: the null
/// distribution of the sum of (doubled) ranks of `k`-subsets is counted by dynamic
/// programming (the classic `f(k, s) = f(k, s) + f(k − 1, s − r)` recurrence over the pooled
/// values; without ties it is the standard U distribution). `p = 2 · min(P(W ≤ w), P(W ≥ w))`,
/// capped at 1, from exact integer counts — so swapping the samples gives the same p.
fn exact_p(ranks: &[u64], observed: u64, k: usize) -> f64 {
    let max_sum: u64 = {
        let mut r: Vec<u64> = ranks.to_vec();
        r.sort_unstable();
        r.iter().rev().take(k).sum()
    };
    let width = max_sum as usize + 1;
    // ways[j][s]: number of j-subsets of the values seen so far whose rank sum is s.
    let mut ways = vec![vec![0u64; width]; k + 1];
    ways[0][0] = 1;
    for (seen, &r) in ranks.iter().enumerate() {
        let r = r as usize;
        for j in (1..=k.min(seen + 1)).rev() {
            let (below, above) = ways.split_at_mut(j);
            let (prev, cur) = (&below[j - 1], &mut above[0]);
            for s in r..width {
                cur[s] += prev[s - r];
            }
        }
    }
    let dist = &ways[k];
    let w = observed as usize;
    let total: u64 = dist.iter().sum();
    let lower: u64 = dist[..=w.min(width - 1)].iter().sum();
    let upper: u64 = dist[w.min(width)..].iter().sum();
    ((2 * lower.min(upper)) as f64 / total as f64).min(1.0)
}

/// Upper tail of the standard normal distribution, `P(Z > z)`.
///
/// Uses the Chebyshev fit of `erfc` from Numerical Recipes (`erfcc`), relative error below
/// 1.2e-7 everywhere — ample for a p-value.
pub fn normal_sf(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.5 * x);
    let poly = -1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let erfc = t * (-x * x + poly).exp();
    if z >= 0.0 {
        0.5 * erfc
    } else {
        1.0 - 0.5 * erfc
    }
}

/// Two-sided Mann–Whitney U test (equivalently the Wilcoxon rank-sum test) of whether `a`
/// and `b` come from the same distribution, at α = [`ALPHA`].
///
/// * Exact p-value when `a.len() + b.len() <= 40` ([`EXACT_MAX_TOTAL`]; this covers
///   `n1, n2 <= 20`): the U distribution is enumerated by the standard recurrence. With ties
///   the enumeration uses mid-ranks and is conditional on the tie pattern (a permutation
///   test), which keeps p ≥ [`min_possible_p`] — the normal approximation can be
///   anti-conservative for tiny tied samples.
/// * Otherwise the normal approximation with tie correction and continuity correction
///   (as `scipy.stats.mannwhitneyu(method="asymptotic")`).
///
/// Without ties the p-values equal scipy's `method="exact"`. The p-value is in `(0, 1]`
/// (floored at the smallest positive f64 if the normal tail underflows) and does not depend
/// on the argument order. An empty sample gives p = 1. With 3 vs 3 rounds p ≥ 0.1, so
/// nothing can be significant: check [`min_possible_p`] and say "too few rounds".
pub fn mann_whitney(a: &[f64], b: &[f64]) -> RankTest {
    let verdict = |method, p_value: f64| RankTest {
        test: MANN_WHITNEY,
        method,
        p_value,
        significant: p_value <= ALPHA,
        alpha: ALPHA,
    };
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 {
        return verdict("none (empty sample)", 1.0);
    }
    let (ranks, groups) = doubled_midranks(a, b);
    let doubled_sum =
        |from_a: bool| -> u64 { ranks.iter().filter(|r| r.1 == from_a).map(|r| r.0).sum() };
    let n = n1 + n2;
    if n <= EXACT_MAX_TOTAL {
        // Count subsets of the smaller sample's size (fewer states); identical p either way.
        let smaller_is_a = n1 <= n2;
        let doubled: Vec<u64> = ranks.iter().map(|r| r.0).collect();
        let k = n1.min(n2);
        return verdict("exact", exact_p(&doubled, doubled_sum(smaller_is_a), k));
    }
    // Doubled U statistics are integers: 2·U_a = 2·R_a − n1(n1 + 1).
    let u2_a = doubled_sum(true) - (n1 * (n1 + 1)) as u64;
    let u2_b = doubled_sum(false) - (n2 * (n2 + 1)) as u64;
    let u = u2_a.max(u2_b) as f64 / 2.0;
    let (n1f, n2f, nf) = (n1 as f64, n2 as f64, n as f64);
    let ties: f64 = groups.iter().map(|&t| (t as f64).powi(3) - t as f64).sum();
    let variance = n1f * n2f / 12.0 * ((nf + 1.0) - ties / (nf * (nf - 1.0)));
    if variance <= 0.0 {
        return verdict("normal approximation", 1.0);
    }
    let z = (u - n1f * n2f / 2.0 - 0.5) / variance.sqrt();
    let p = (2.0 * normal_sf(z)).clamp(f64::MIN_POSITIVE, 1.0);
    verdict("normal approximation", p)
}

/// The smallest difference a verdict counts by default, as a fraction of the baseline: a ratio
/// is significant only when its whole interval lies beyond `1 ± 3 %` (criterion's
/// `noise_threshold` rule, in ratio terms `[1 / 1.03, 1.03]`). It is just above how far the
/// lab's ratios move between two identical runs on a quiet machine: a smaller difference would
/// not survive a second run even when one run's rounds call it significant. docs/defaults.md
/// has the runs it was chosen from.
pub const DEFAULT_NOISE_THRESHOLD: f64 = 0.03;

/// Whether `t` can be a noise threshold: a finite fraction of the baseline, from 0 to below 1.
pub fn valid_noise_threshold(t: f64) -> bool {
    t.is_finite() && (0.0..1.0).contains(&t)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Reference values from scipy 1.17 (computed once in a throwaway venv).
    const SCIPY_5_4: f64 = 0.111_111_111_111_111_1;
    const SCIPY_9_9: f64 = 0.135_911_147_675_853_55;
    /// Brute-force permutation p (all 70 splits, mid-ranks) for the tied 4 vs 4 case.
    const SCIPY_PERM_TIES: f64 = 0.2;
    const SCIPY_ASYMPTOTIC: f64 = 0.070_931_566_703_466_7;
    /// `scipy.stats.norm.sf(z)`.
    const NORM_SF: [(f64, f64); 13] = [
        (-3.0, 0.998_650_101_968_369_9),
        (-1.5, 0.933_192_798_731_141_9),
        (-0.3, 0.617_911_422_188_952_6),
        (0.0, 0.5),
        (0.5, 0.308_537_538_725_986_9),
        (1.0, 0.158_655_253_931_457_07),
        (1.959_963_984_540_054, 0.025),
        (2.5, 0.006_209_665_325_776_132),
        (3.0, 0.001_349_898_031_630_093_3),
        (4.0, 3.167_124_183_311_986e-5),
        (5.0, 2.866_515_718_791_933e-7),
        (6.0, 9.865_876_450_376_946e-10),
        (8.0, 6.220_960_574_271_74e-16),
    ];

    fn p(a: &[f64], b: &[f64]) -> f64 {
        mann_whitney(a, b).p_value
    }

    fn close(x: f64, y: f64, rel: f64) -> bool {
        (x - y).abs() <= rel * y.abs()
    }

    #[test]
    fn min_possible_p_known_values() {
        assert_eq!(min_possible_p(3, 3), 0.1);
        assert!(close(min_possible_p(3, 4), 2.0 / 35.0, 1e-15));
        assert!(close(min_possible_p(4, 4), 2.0 / 70.0, 1e-15));
        assert!(close(min_possible_p(5, 5), 2.0 / 252.0, 1e-15));
        assert!(close(min_possible_p(8, 8), 2.0 / 12870.0, 1e-15));
        assert_eq!(min_possible_p(1, 1), 1.0);
        assert_eq!(min_possible_p(0, 5), 1.0);
        assert!(min_possible_p(3, 3) > ALPHA && min_possible_p(4, 4) < ALPHA);
    }

    #[test]
    fn exact_p_matches_scipy_without_ties() {
        // scipy.stats.mannwhitneyu(a, b, method="exact") (two-sided), scipy 1.17.
        assert_eq!(p(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]), 0.1);
        assert!(close(
            p(&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0]),
            0.028_571_428_571_428_57,
            1e-12
        ));
        assert!(close(p(&[1.0, 3.0, 5.0], &[2.0, 4.0, 6.0]), 0.7, 1e-12));
        assert_eq!(p(&[1.0, 4.0, 5.0], &[2.0, 3.0, 6.0]), 1.0);
        let a = [19.0, 22.0, 16.0, 29.0, 24.0];
        let b = [20.0, 11.0, 17.0, 12.0];
        assert!(close(p(&a, &b), SCIPY_5_4, 1e-12));
        let a = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30];
        let b = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.07, 3.15, 1.28];
        assert!(close(p(&a, &b), SCIPY_9_9, 1e-12));
    }

    #[test]
    fn exact_p_with_ties_is_a_permutation_test() {
        // Brute force over all C(6, 3) = 20 splits: the observed split is the most extreme
        // of its kind, so p = 2/20 — never below min_possible_p, unlike the normal
        // approximation (which gives 0.047 here and would call 3 vs 3 rounds significant).
        assert_eq!(p(&[1.0, 1.0, 1.0], &[2.0, 2.0, 2.0]), 0.1);
        assert!(close(
            p(&[1.0, 2.0, 2.0, 3.0], &[2.0, 3.0, 4.0, 4.0]),
            SCIPY_PERM_TIES,
            1e-12
        ));
    }

    #[test]
    fn normal_approximation_matches_scipy() {
        // scipy.stats.mannwhitneyu(a, b, method="asymptotic"), 25 vs 20 values, with ties.
        let a: Vec<f64> = (0..25).map(|i| ((i * 37) % 23) as f64).collect();
        let b: Vec<f64> = (0..20).map(|i| ((i * 17) % 19) as f64 + 6.0).collect();
        let v = mann_whitney(&a, &b);
        assert_eq!(v.method, "normal approximation");
        assert!(close(v.p_value, SCIPY_ASYMPTOTIC, 1e-6), "{}", v.p_value);
        assert_eq!(v.p_value, mann_whitney(&b, &a).p_value);
    }

    #[test]
    fn normal_sf_matches_scipy() {
        for (z, sf) in NORM_SF {
            assert!(
                close(normal_sf(z), sf, 2e-7),
                "z = {z}: {} vs {sf}",
                normal_sf(z)
            );
        }
    }

    #[test]
    fn identical_and_empty_samples() {
        let v = mann_whitney(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]);
        assert_eq!((v.p_value, v.significant), (1.0, false));
        let v = mann_whitney(&[], &[1.0]);
        assert_eq!(
            (v.p_value, v.significant, v.method),
            (1.0, false, "none (empty sample)")
        );
        let many: Vec<f64> = vec![5.0; 50];
        assert_eq!(mann_whitney(&many, &many).p_value, 1.0);
    }
}
