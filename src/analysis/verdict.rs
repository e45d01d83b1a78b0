//! Comparing two cells: their rounds paired once, the ratio with its interval, and a verdict.
//!
//! Every comparison of one run's cells (the scenario tables' "vs baseline" column, the
//! decision table, `compare --by`) pairs rounds here, so there is one definition of a pair
//! and one of "significant".

use serde::Serialize;

use crate::results::{Cell, RunRecord};
use crate::stats::{self, RatioEstimate};

/// What the rounds say about a difference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "verdict", content = "reason")]
pub enum Verdict {
    /// The test rejects "no difference" and the ratio's interval excludes 1.
    Significant,
    /// These rounds cannot tell the difference from none.
    NotSignificant,
    /// The test rejects "no difference" and the interval excludes 1, but it reaches into the
    /// noise band (`method.noise_threshold`): a difference too small to survive a second run.
    WithinNoise,
    /// No result could have been significant with this many rounds.
    TooFewRounds,
    /// The rounds cannot be trusted to decide (the reason says why).
    Inconclusive(String),
}

impl Verdict {
    /// Whether the difference counts.
    pub fn is_significant(&self) -> bool {
        matches!(self, Verdict::Significant)
    }
}

/// A ratio of medians with its interval and verdict (against a noise band of `noise_threshold`,
/// a fraction of the baseline: the run's `method.noise_threshold`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// `median(a) / median(b)` with a bootstrap 95 % interval.
    pub ratio: RatioEstimate,
    /// The Mann–Whitney test's p-value.
    pub p_value: f64,
    /// What the rounds say.
    pub verdict: Verdict,
}

/// Per-round values of two cells' clean runs, paired by round index (rounds one of them lacks
/// a clean run in are left out; contaminated runs never count).
pub fn paired_rounds(
    a: &Cell,
    b: &Cell,
    value: impl Fn(&RunRecord) -> f64,
) -> (Vec<f64>, Vec<f64>) {
    paired_rounds_where(a, b, |r| Some(value(r)))
}

/// [`paired_rounds`] for a figure that some runs lack (a per-operation figure): a round counts
/// when both clean runs have it.
pub fn paired_rounds_where(
    a: &Cell,
    b: &Cell,
    value: impl Fn(&RunRecord) -> Option<f64>,
) -> (Vec<f64>, Vec<f64>) {
    a.runs
        .iter()
        .filter(|ra| ra.is_clean())
        .filter_map(|ra| {
            let rb = b
                .runs
                .iter()
                .find(|r| r.round == ra.round && r.is_clean())?;
            Some((value(ra)?, value(rb)?))
        })
        .unzip()
}

/// Why a cell's rounds cannot decide anything: some round had no clean run (the machine
/// stayed busy through every repeat); None when every round has one.
pub fn busy_machine(cell: &Cell) -> Option<String> {
    let s = cell.summary.as_ref()?;
    let rounds: std::collections::BTreeSet<usize> = cell.runs.iter().map(|r| r.round).collect();
    (s.rounds_without_clean_run > 0).then(|| {
        format!(
            "machine busy ({} of {} rounds without a clean run)",
            s.rounds_without_clean_run,
            rounds.len()
        )
    })
}

/// Compares per-round values `a` with baseline values `b` of the same rounds; a difference
/// counts only beyond `1 ± noise_threshold`.
pub fn compare_paired(a: &[f64], b: &[f64], noise_threshold: f64) -> Comparison {
    let c = stats::compare_beyond(a, b, noise_threshold);
    let verdict = if c.within_noise {
        Verdict::WithinNoise
    } else {
        verdict_of(c.significant, a.len(), b.len(), c.verdict.alpha)
    };
    Comparison {
        ratio: c.ratio,
        p_value: c.verdict.p_value,
        verdict,
    }
}

/// The verdict of a test result on samples of these sizes.
pub fn verdict_of(significant: bool, n_a: usize, n_b: usize, alpha: f64) -> Verdict {
    if significant {
        Verdict::Significant
    } else if stats::min_possible_p(n_a, n_b) > alpha {
        Verdict::TooFewRounds
    } else {
        Verdict::NotSignificant
    }
}

/// Throughput of `cell` against `base`, round by round, beyond a noise band of
/// `noise_threshold`; None with fewer than two pairs. Inconclusive when either cell's machine
/// was busy.
pub fn throughput_vs(cell: &Cell, base: &Cell, noise_threshold: f64) -> Option<Comparison> {
    let (a, b) = paired_rounds(cell, base, |r| r.throughput_per_s);
    let mut c = (a.len() >= 2).then(|| compare_paired(&a, &b, noise_threshold))?;
    if let Some(why) = busy_machine(cell).or_else(|| busy_machine(base)) {
        c.verdict = Verdict::Inconclusive(why);
    }
    Some(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_difference_inside_the_noise_band_is_within_noise() {
        let base = [100.0, 101.0, 99.0, 100.5, 98.5, 100.2, 99.7, 101.3];
        let faster: Vec<f64> = base.iter().map(|x| x * 1.02).collect();
        assert_eq!(
            compare_paired(&faster, &base, 0.0).verdict,
            Verdict::Significant
        );
        let c = compare_paired(&faster, &base, 0.03);
        assert_eq!(c.verdict, Verdict::WithinNoise);
        assert!(!c.verdict.is_significant());
        // Too few rounds stays too few rounds, band or not.
        let c = compare_paired(&faster[..3], &base[..3], 0.03);
        assert_eq!(c.verdict, Verdict::TooFewRounds);
    }
}
