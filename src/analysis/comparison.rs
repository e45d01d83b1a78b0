//! The one comparison producer (hyperfine's `relative_speed` idea): a ratio with its 95 %
//! interval, the test's p, and the [`Verdict`] under one [`Rule`]. Cells of one run are judged
//! round by round (the paired t test on per-round log ratios); two runs, whose rounds share
//! nothing, by the Mann–Whitney test.
//!
//! The scenario tables' "vs baseline" column, the decision table, the network sweeps, the ADR,
//! `compare` and the notes under every table get their comparisons and their wording here, so
//! "significant" means one thing everywhere: the test rejects "no difference" at α **and** the
//! ratio's 95 % interval lies wholly beyond the noise band `[1 / (1 + t), 1 + t]` (criterion's
//! noise-threshold rule; `t` = 0 asks only that it exclude 1).

use serde::Serialize;

use super::measured::{busy_machine, paired_rounds_where};
use crate::results::{Cell, Method};
use crate::stats::{self, Looks, RatioEstimate};

/// How a difference is judged: the test's significance level and the noise band.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rule {
    /// Significance level of the comparison's two-sided test.
    pub alpha: f64,
    /// The smallest difference that counts, as a fraction of the baseline.
    pub noise_threshold: f64,
    /// The looks of adaptive rounds, over which `alpha` is split ([`Looks::alpha_at`]); None
    /// for fixed rounds, where the one look at the end spends all of it.
    #[serde(skip)]
    pub looks: Option<Looks>,
    /// The run's resolution for the cells compared, as a fraction (`analysis::resolution`): a
    /// ratio nearer 1 than this is never significant. 0 where no A/A twin measured it.
    pub floor: f64,
}

impl Rule {
    /// The lab's defaults: α and the noise threshold `run` uses unless told, fixed rounds, no
    /// resolution floor.
    pub const DEFAULT: Rule = Rule {
        alpha: stats::ALPHA,
        noise_threshold: stats::DEFAULT_NOISE_THRESHOLD,
        looks: None,
        floor: 0.0,
    };

    /// The rule a run was analysed with: its significance level and noise threshold (the
    /// defaults where the document records none).
    pub fn of(method: &Method) -> Rule {
        Rule {
            alpha: method.alpha(),
            noise_threshold: method.noise_threshold(),
            looks: None,
            floor: 0.0,
        }
    }

    /// The significance level a comparison of `n` rounds is tested at: `alpha` with fixed
    /// rounds, the look's share of it with adaptive ones.
    pub fn alpha_for(&self, n: usize) -> f64 {
        match self.looks {
            None => self.alpha,
            Some(looks) => looks.alpha_at(n, self.alpha),
        }
    }

    /// This rule for comparing rounds of `cells` of one run: with the looks of their adaptive
    /// rounds when they had them.
    pub fn for_cells(self, cells: &[&Cell]) -> Rule {
        let looks = cells
            .iter()
            .find_map(|c| c.adaptive.as_ref())
            .map(|a| a.looks());
        Rule {
            looks: looks.or(self.looks),
            ..self
        }
    }

    /// The noise band `[1 / (1 + t), 1 + t]`.
    pub fn band(&self) -> (f64, f64) {
        let t = self.noise_threshold.max(0.0);
        (1.0 / (1.0 + t), 1.0 + t)
    }

    /// The noise band in percent, as shown (two decimals at most).
    pub fn band_pct(&self) -> f64 {
        (self.noise_threshold * 1e4).round() / 100.0
    }

    /// What `interval` (its name in the sentence) must clear besides the test, in words.
    pub fn band_text(&self, interval: &str) -> String {
        if self.noise_threshold > 0.0 {
            format!(
                "with {interval} wholly beyond 1 ± {}% (the noise threshold: a smaller difference is *within noise* and not counted)",
                self.band_pct()
            )
        } else {
            format!("with {interval} excluding 1")
        }
    }

    /// The sentence that says what each verdict under a ratio column means.
    pub fn verdict_note(&self) -> String {
        let band = if self.noise_threshold > 0.0 {
            format!(
                "its 95% interval lies wholly beyond 1 ± {}% (the noise threshold)",
                self.band_pct()
            )
        } else {
            "its 95% interval excludes 1".to_string()
        };
        format!(
            "A ratio is the geometric mean of the per-round ratios (each round runs both cells, in a random order); it is *significant* when a two-sided paired t test on the per-round log ratios rejects \"no difference\" at α = {} and {band}. *Within noise*: the test rejects it but the interval reaches into the noise band, or the ratio is nearer 1 than the scenario's resolution (what its A/A twin, the baseline run twice in every round, says this run can tell apart): a difference too small to survive a second run. *Not significant*: these rounds cannot tell it from no difference. *Too few rounds*: no result could have been significant with this many rounds (fewer than 3 paired rounds); raise `--rounds`. *Inconclusive*: the machine stayed busy through every repeat of some round, so the rounds decide nothing.",
            self.alpha
        )
    }
}

/// What the rounds say about a difference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "verdict", content = "reason")]
pub enum Verdict {
    /// The test rejects "no difference" and the ratio's interval lies beyond the noise band.
    Significant,
    /// These rounds cannot tell the difference from none.
    NotSignificant,
    /// The test rejects "no difference" and the interval excludes 1, but it reaches into the
    /// noise band, or the ratio lies within the run's resolution ([`Rule::floor`]): a
    /// difference too small to survive a second run.
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

    /// The verdict in words, as every table prints it.
    pub fn text(&self) -> String {
        match self {
            Verdict::Significant => "significant".into(),
            Verdict::NotSignificant => "not significant".into(),
            Verdict::WithinNoise => "not significant (within noise)".into(),
            Verdict::TooFewRounds => "not significant (too few rounds)".into(),
            Verdict::Inconclusive(why) => format!("inconclusive: {why}"),
        }
    }
}

/// How the two samples' values relate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pairing {
    /// `a[i]` and `b[i]` come from the same round (cells of one run, interleaved).
    ByRound,
    /// Nothing pairs them (two runs, whose rounds share nothing).
    Independent,
}

/// A ratio `a / b` with its interval, the test's p and the verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// Paired by round: the geometric mean of the per-round ratios with its 95% t interval;
    /// otherwise `median(a) / median(b)` with a bootstrap 95% interval.
    pub ratio: RatioEstimate,
    /// The test's two-sided p-value.
    pub p_value: f64,
    /// Which test gave it ([`stats::PAIRED_T`] or [`stats::significance::MANN_WHITNEY`]).
    pub test: &'static str,
    /// Values in `a` and in `b`.
    pub n: (usize, usize),
    /// What the rounds say.
    pub verdict: Verdict,
}

/// Compares values `a` with baseline values `b` under `rule`. Rounds of one run
/// ([`Pairing::ByRound`]) are judged by their per-round log ratios ([`stats::paired_log_ratio`]);
/// samples that share no rounds, or pairs it cannot take (unequal lengths, a value that is not
/// positive), by the Mann–Whitney test and a bootstrap interval of the ratio of medians.
pub fn compare(a: &[f64], b: &[f64], pairing: Pairing, rule: Rule) -> Comparison {
    let paired = match pairing {
        Pairing::ByRound => stats::paired_log_ratio(a, b),
        Pairing::Independent => None,
    };
    let alpha = rule.alpha_for(a.len().min(b.len()));
    let (ratio, p_value, test, smallest_p) = match paired {
        Some(t) => (
            t.ratio,
            t.p_value,
            stats::PAIRED_T,
            stats::paired::smallest_p(t.rounds),
        ),
        None => (
            match pairing {
                Pairing::ByRound => stats::paired_ratio(a, b),
                Pairing::Independent => stats::independent_ratio(a, b),
            },
            stats::mann_whitney(a, b).p_value,
            stats::significance::MANN_WHITNEY,
            stats::min_possible_p(a.len(), b.len()),
        ),
    };
    let beyond = |band: f64| ratio.ci95_low > 1.0 + band || ratio.ci95_high < 1.0 / (1.0 + band);
    let rejects = p_value <= alpha && smallest_p <= alpha;
    let resolved = ratio.ratio.ln().abs() >= rule.floor.max(0.0).ln_1p();
    let verdict = if rejects && beyond(rule.noise_threshold.max(0.0)) && resolved {
        Verdict::Significant
    } else if rejects && beyond(0.0) {
        Verdict::WithinNoise
    } else if alpha <= 0.0 || smallest_p > alpha {
        Verdict::TooFewRounds
    } else {
        Verdict::NotSignificant
    };
    Comparison {
        ratio,
        p_value,
        test,
        n: (a.len(), b.len()),
        verdict,
    }
}

/// How [`compare`] judges samples with this pairing, in words: the ratio, its interval and the
/// test (pairs it cannot take fall back to the unpaired words' test).
pub fn method_text(pairing: Pairing) -> &'static str {
    match pairing {
        Pairing::ByRound => "ratio = the geometric mean of the per-round ratios with a 95% t interval; p from a two-sided paired t test on the per-round log ratios",
        Pairing::Independent => "ratio = median NEW / median BASE with an unpaired bootstrap 95% interval; p from a two-sided Mann–Whitney U test",
    }
}

/// The ways a comparison can be settled, in the order reports count them ([`settled`]).
pub const SETTLED: [&str; 3] = ["different", "equal within noise", "inconclusive"];

/// Whether `c` settles its question for good, and how: a significant difference, equal within
/// the noise band (its interval lies wholly inside `[1 / (1 + t), 1 + t]`, so no difference
/// that counts), or inconclusive (a round without a clean run never gets one). None while
/// more rounds could still change the verdict.
pub fn settled(c: &Comparison, rule: Rule) -> Option<&'static str> {
    let [different, equal, inconclusive] = SETTLED;
    let (low, high) = rule.band();
    match c.verdict {
        Verdict::Significant => Some(different),
        Verdict::Inconclusive(_) => Some(inconclusive),
        _ if rule.noise_threshold > 0.0 && c.ratio.ci95_low >= low && c.ratio.ci95_high <= high => {
            Some(equal)
        }
        _ => None,
    }
}

/// [`compare`] of two cells of one run, round by round, on one figure; None with fewer than
/// two pairs. Inconclusive when either cell's machine was busy. Cells measured in adaptive
/// rounds are tested at the share of α their look may spend.
pub fn cells(
    cell: &Cell,
    base: &Cell,
    figure: impl Fn(&crate::results::RunRecord) -> f64,
    rule: Rule,
) -> Option<Comparison> {
    cells_where(cell, base, |r| Some(figure(r)), rule)
}

/// [`cells`] on a figure some runs lack (rounds where either run lacks it are left out).
pub fn cells_where(
    cell: &Cell,
    base: &Cell,
    figure: impl Fn(&crate::results::RunRecord) -> Option<f64>,
    rule: Rule,
) -> Option<Comparison> {
    let rule = rule.for_cells(&[cell, base]);
    let (a, b) = paired_rounds_where(cell, base, figure);
    let mut c = (a.len() >= 2).then(|| compare(&a, &b, Pairing::ByRound, rule))?;
    if let Some(why) = busy_machine(cell).or_else(|| busy_machine(base)) {
        c.verdict = Verdict::Inconclusive(why);
    }
    Some(c)
}

/// Throughput of `cell` against `base` ([`cells`]).
pub fn throughput_vs(cell: &Cell, base: &Cell, rule: Rule) -> Option<Comparison> {
    cells(cell, base, |r| r.throughput_per_s, rule)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(t: f64) -> Rule {
        Rule {
            alpha: stats::ALPHA,
            noise_threshold: t,
            looks: None,
            floor: 0.0,
        }
    }

    #[test]
    fn a_difference_inside_the_noise_band_is_within_noise() {
        let base = [100.0, 101.0, 99.0, 100.5, 98.5, 100.2, 99.7, 101.3];
        let faster: Vec<f64> = base.iter().map(|x| x * 1.02).collect();
        let by = Pairing::ByRound;
        assert_eq!(
            compare(&faster, &base, by, rule(0.0)).verdict,
            Verdict::Significant
        );
        let c = compare(&faster, &base, by, rule(0.03));
        assert_eq!(c.verdict, Verdict::WithinNoise);
        assert!(!c.verdict.is_significant());
        // Too few rounds stays too few rounds, band or not: two pairs decide nothing, three do.
        let c = compare(&faster[..2], &base[..2], by, rule(0.0));
        assert_eq!(c.verdict, Verdict::TooFewRounds);
        let c = compare(&faster[..3], &base[..3], by, rule(0.0));
        assert_eq!((c.verdict, c.test), (Verdict::Significant, stats::PAIRED_T));
    }

    #[test]
    fn alpha_is_the_rules() {
        let base = [100.0, 101.0, 99.0, 100.5, 98.5];
        let faster: Vec<f64> = base.iter().map(|x| x * 1.5).collect();
        let c = compare(&faster, &base, Pairing::ByRound, rule(0.03));
        assert_eq!(c.verdict, Verdict::Significant);
        // Two runs share no rounds: the rank test's 5 against 5 cannot reach p below 2/252, so
        // at α = 0.001 it is too few rounds; paired, the same rounds decide.
        let strict = Rule {
            alpha: 0.001,
            noise_threshold: 0.03,
            looks: None,
            floor: 0.0,
        };
        let c = compare(&faster, &base, Pairing::Independent, strict);
        assert_eq!(c.verdict, Verdict::TooFewRounds);
        let c = compare(&faster, &base, Pairing::ByRound, strict);
        assert_eq!(c.verdict, Verdict::Significant);
    }

    #[test]
    fn the_note_names_the_band_and_alpha() {
        let note = rule(0.03).verdict_note();
        assert!(
            note.contains("1 ± 3%") && note.contains("α = 0.05"),
            "{note}"
        );
        assert!(rule(0.0).verdict_note().contains("excludes 1"));
    }
}
