//! Outlier rounds (Iglewicz–Hoaglin modified z-scores) and the one-line warnings a report
//! shows about a sample: too few rounds, large run-to-run spread, outlier rounds.

use super::percentile::median;
use super::summary::{mean, stddev};

/// The modified z-score above which a round is called an outlier (Iglewicz & Hoaglin 1993).
pub const OUTLIER_THRESHOLD: f64 = 3.5;

/// Coefficient of variation above which [`warnings`] reports the spread.
pub const CV_WARNING: f64 = 0.10;

/// An outlier round is only reported when it is also this far from the median, as a fraction:
/// when the rounds agree to a fraction of a per cent the MAD is tiny, and a round 0.3 % off
/// scores a huge z without meaning anything (an open-loop run at a fixed rate, for instance).
pub const OUTLIER_MIN_DEVIATION: f64 = 0.02;

/// Fewer rounds than this get a "too few rounds" warning and no outlier detection.
pub const MIN_ROUNDS: usize = 3;

/// Modified z-scores `0.6745 · (x − median) / MAD`, where MAD is the median absolute
/// deviation from the median (Iglewicz & Hoaglin; 0.6745 makes the MAD a consistent
/// estimate of the standard deviation for normal data).
///
/// When MAD = 0 (more than half the values are identical) the score is the limit of the
/// formula: 0 for values equal to the median and ±inf for any other value. So an all-equal
/// sample has no outliers, and a value that differs from a majority of identical rounds is
/// flagged.
pub fn modified_z_scores(xs: &[f64]) -> Vec<f64> {
    let med = median(xs);
    let deviations: Vec<f64> = xs.iter().map(|x| (x - med).abs()).collect();
    let mad = median(&deviations);
    xs.iter()
        .map(|&x| {
            let d = x - med;
            if mad > 0.0 {
                0.6745 * d / mad
            } else if d == 0.0 {
                0.0
            } else {
                d.signum() * f64::INFINITY
            }
        })
        .collect()
}

/// Indices (ascending) of the values whose modified z-score exceeds `threshold` in absolute
/// value (use [`OUTLIER_THRESHOLD`], 3.5). Samples with fewer than [`MIN_ROUNDS`] values have
/// no outliers. See [`modified_z_scores`] for the MAD = 0 case.
pub fn modified_z_outliers(xs: &[f64], threshold: f64) -> Vec<usize> {
    if xs.len() < MIN_ROUNDS {
        return Vec::new();
    }
    modified_z_scores(xs)
        .iter()
        .enumerate()
        .filter(|(_, z)| z.abs() > threshold)
        .map(|(i, _)| i)
        .collect()
}

/// A number with about four significant digits, for warnings ("1503", "12.35", "0.01235").
fn short(x: f64) -> String {
    if !x.is_finite() || x == 0.0 {
        return format!("{x}");
    }
    let magnitude = x.abs().log10().floor() as i32;
    if magnitude >= 4 {
        return format!("{x:.0}");
    }
    if magnitude < -4 {
        return format!("{x:.3e}");
    }
    let text = format!("{x:.*}", (3 - magnitude) as usize);
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// What a warning about a sample of rounds is about: the report groups warnings by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Cause {
    /// Fewer than [`MIN_ROUNDS`] rounds.
    TooFewRounds,
    /// A coefficient of variation above [`CV_WARNING`].
    Spread,
    /// Rounds with a modified z-score above [`OUTLIER_THRESHOLD`].
    Outliers,
}

impl Cause {
    /// The cause and what to do, once for every sample it touched.
    pub fn headline(self) -> String {
        match self {
            Cause::TooFewRounds => format!(
                "fewer than {MIN_ROUNDS} rounds: too few for an interval or a significance test; use --rounds 5 or more"
            ),
            Cause::Spread => format!(
                "run-to-run spread above {:.0}% (CV): the machine may be busy; close other programs, pin CPUs or raise --rounds",
                CV_WARNING * 100.0
            ),
            Cause::Outliers => format!(
                "outlier rounds (modified z > {OUTLIER_THRESHOLD}): something else probably ran meanwhile; the medians resist them, but rerun or raise --rounds if it recurs"
            ),
        }
    }
}

/// One warning about one sample of rounds.
#[derive(Debug, Clone, PartialEq)]
pub struct RoundWarning {
    /// What it is about.
    pub cause: Cause,
    /// The sample it is about (`io/asyncio throughput`).
    pub label: String,
    /// The figures behind it (`spread 18%`, `round 3 = 812.2 vs median 1500`).
    pub detail: String,
    /// The whole one-line warning.
    pub text: String,
}

/// Warnings about a sample of rounds (`xs[i]` is round `i + 1`), each saying what is
/// suspicious and what to do, in the spirit of pyperf and hyperfine:
///
/// * fewer than 3 rounds: no interval or significance is possible;
/// * coefficient of variation above 10 %: the machine may be busy;
/// * outlier rounds by modified z-score above 3.5.
///
/// Empty when nothing is suspicious.
pub fn round_warnings(label: &str, xs: &[f64]) -> Vec<RoundWarning> {
    let n = xs.len();
    let mut out = Vec::new();
    let mut warn = |cause, detail: String, text: String| {
        out.push(RoundWarning {
            cause,
            label: label.to_string(),
            detail,
            text,
        })
    };
    if n < MIN_ROUNDS {
        warn(
            Cause::TooFewRounds,
            format!("{n} round{}", if n == 1 { "" } else { "s" }),
            format!(
                "{label}: only {n} round{} — too few for an interval or a significance test; use --rounds 5 or more",
                if n == 1 { "" } else { "s" }
            ),
        );
    }
    let cv = stddev(xs) / mean(xs).abs();
    if cv > CV_WARNING {
        warn(
            Cause::Spread,
            format!("{:.0}%", cv * 100.0),
            format!(
                "{label}: run-to-run spread is {:.0}% (CV) — the machine may be busy; close other programs, pin CPUs or raise --rounds",
                cv * 100.0
            ),
        );
    }
    let med = median(xs);
    let outliers: Vec<usize> = modified_z_outliers(xs, OUTLIER_THRESHOLD)
        .into_iter()
        .filter(|&i| ((xs[i] - med) / med).abs() > OUTLIER_MIN_DEVIATION)
        .collect();
    if !outliers.is_empty() {
        let k = outliers.len();
        let which: Vec<String> = outliers
            .iter()
            .map(|&i| format!("round {} = {}", i + 1, short(xs[i])))
            .collect();
        let (verb, them) = if k == 1 {
            ("is an outlier", "it")
        } else {
            ("are outliers", "them")
        };
        let detail = format!("{} vs median {}", which.join(", "), short(median(xs)));
        warn(
            Cause::Outliers,
            detail.clone(),
            format!(
                "{label}: {k} of {n} rounds {verb} (modified z > {OUTLIER_THRESHOLD}): {detail} — something else probably ran meanwhile; the median resists {them}, but rerun or raise --rounds if it recurs"
            ),
        );
    }
    out
}

/// The texts of [`round_warnings`].
pub fn warnings(label: &str, xs: &[f64]) -> Vec<String> {
    round_warnings(label, xs)
        .into_iter()
        .map(|w| w.text)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iglewicz_hoaglin_example() {
        // median 3, MAD 1: z(20) = 0.6745 · 17 = 11.5.
        let xs = [2.0, 3.0, 3.0, 4.0, 20.0, 1.0, 3.5];
        let z = modified_z_scores(&xs);
        assert!((z[4] - 0.6745 * 17.0 / 1.0).abs() < 1e-12, "{z:?}");
        assert_eq!(modified_z_outliers(&xs, OUTLIER_THRESHOLD), vec![4]);
        assert!(modified_z_outliers(&[1.0, 2.0, 3.0, 4.0, 5.0], OUTLIER_THRESHOLD).is_empty());
    }

    #[test]
    fn zero_mad_flags_only_values_off_the_median() {
        assert!(modified_z_outliers(&[5.0; 6], OUTLIER_THRESHOLD).is_empty());
        assert_eq!(
            modified_z_outliers(&[5.0, 5.0, 5.0, 9.0], OUTLIER_THRESHOLD),
            vec![3]
        );
        assert!(modified_z_outliers(&[5.0, 900.0], OUTLIER_THRESHOLD).is_empty());
    }

    #[test]
    fn tiny_deviations_are_not_reported_even_with_a_huge_z() {
        // MAD 0.01: round 5 scores z = 0.6745 * 0.2 / 0.01 = 13.5 but is 1 % off the median.
        let xs = [19.78, 19.78, 19.79, 19.77, 19.98];
        assert_eq!(modified_z_outliers(&xs, OUTLIER_THRESHOLD), vec![4]);
        assert!(warnings("x", &xs).is_empty(), "{:?}", warnings("x", &xs));
        let xs = [19.78, 19.78, 19.79, 19.77, 25.0];
        let w = warnings("x", &xs);
        assert!(w.iter().any(|w| w.contains("round 5 = 25 ")), "{w:?}");
    }

    #[test]
    fn warning_texts() {
        assert!(warnings("x", &[100.0, 101.0, 99.0, 100.5, 99.5]).is_empty());
        assert_eq!(
            warnings("io/asyncio throughput", &[100.0, 130.0]),
            vec![
                "io/asyncio throughput: only 2 rounds — too few for an interval or a significance test; use --rounds 5 or more",
                "io/asyncio throughput: run-to-run spread is 18% (CV) — the machine may be busy; close other programs, pin CPUs or raise --rounds",
            ]
        );
        assert_eq!(
            warnings("cpu/sync throughput", &[1503.0, 1498.0, 812.25, 1510.0, 1500.0]),
            vec![
                "cpu/sync throughput: run-to-run spread is 23% (CV) — the machine may be busy; close other programs, pin CPUs or raise --rounds",
                "cpu/sync throughput: 1 of 5 rounds is an outlier (modified z > 3.5): round 3 = 812.2 vs median 1500 — something else probably ran meanwhile; the median resists it, but rerun or raise --rounds if it recurs",
            ]
        );
        let w = warnings("t", &[10.0, 10.0, 10.0, 10.0, 90.0, 0.5]);
        assert!(
            w[1].contains("2 of 6 rounds are outliers")
                && w[1].contains("round 5 = 90, round 6 = 0.5"),
            "{w:?}"
        );
        assert_eq!(warnings("t", &[4.0]).len(), 1);
        assert!(warnings("t", &[])[0].contains("only 0 rounds"));
    }

    #[test]
    fn short_numbers() {
        assert_eq!(short(1503.0), "1503");
        assert_eq!(short(123456.7), "123457");
        assert_eq!(short(12.3456), "12.35");
        assert_eq!(short(0.012345), "0.01235");
        assert_eq!(short(2.0), "2");
        assert_eq!(short(0.0), "0");
        assert_eq!(short(-3.5), "-3.5");
    }
}
