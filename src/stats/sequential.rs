//! Repeated looks at a growing sample without inflating the false-positive rate: the
//! significance level each look may spend, for adaptive rounds (`--max-rounds`).
//!
//! **Why a schedule.** Testing at α after every round and stopping at the first "significant"
//! calls equal variants different far more often than α: every look is another chance. The
//! lab splits α over the looks instead (alpha spending, bounded by the union bound): look `n`
//! rejects only when `p_n ≤ α_n`, and `Σ α_n ≤ α`, so under "no difference" the chance that
//! *any* look rejects is at most α, whatever the looks' correlation and whichever look a report
//! later reads. It is conservative (the looks are strongly correlated, so the true rate is
//! lower), distribution-free like the test itself, and needs no simulation to be valid.
//!
//! **The split.** The first look that can decide (the first round count `n ≥ min` whose smallest
//! possible two-sided Mann–Whitney p, `2 / C(2n, n)`, fits in its share) gets
//! [`FIRST_SHARE`] of α; each later look gets half of the one before, starting from
//! [`SECOND_SHARE`]: `α_f = 0.6α, α_{f+1} = 0.2α, α_{f+2} = 0.1α, ...`, which sums to α over an
//! unbounded number of looks. Most differences the lab meets are either large (settled at the
//! first look, as fixed rounds settle them) or small; the halving keeps every later look able to
//! reject, because the smallest possible p falls by more than 3× per round while the share
//! halves.

use super::significance::min_possible_p;

/// Share of α the first deciding look spends.
pub const FIRST_SHARE: f64 = 0.6;
/// Share of α the second deciding look spends; each later look spends half the one before.
pub const SECOND_SHARE: f64 = 0.2;

/// The looks of an adaptive plan: a check after every round from `min` to `max` rounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Looks {
    /// Rounds before the first look.
    pub min: usize,
    /// Rounds at the last look; no cell runs more.
    pub max: usize,
}

impl Looks {
    /// The first round count at or after `min` at which a look can reject at significance
    /// level `alpha` (`n` against `n` rounds); None when none up to `max` can.
    pub fn first_deciding(&self, alpha: f64) -> Option<usize> {
        (self.min.max(1)..=self.max).find(|&n| min_possible_p(n, n) <= FIRST_SHARE * alpha)
    }

    /// The significance level the look after `n` rounds may spend out of a total `alpha`: 0
    /// before the first deciding look and after the last.
    pub fn alpha_at(&self, n: usize, alpha: f64) -> f64 {
        let Some(first) = self.first_deciding(alpha) else {
            return 0.0;
        };
        if n < first || n > self.max {
            0.0
        } else if n == first {
            FIRST_SHARE * alpha
        } else {
            SECOND_SHARE * alpha * 0.5f64.powi((n - first - 1) as i32)
        }
    }

    /// The whole schedule in words, as results.json and the report record it.
    pub fn describe(&self, alpha: f64) -> String {
        let first = match self.first_deciding(alpha) {
            Some(f) => format!(
                "the first look that can reject ({f} rounds) spends {:.0}% of α, each later one half the one before, starting at {:.0}%",
                FIRST_SHARE * 100.0,
                SECOND_SHARE * 100.0
            ),
            None => "no look up to the maximum can reject at this α".to_string(),
        };
        format!(
            "Adaptive rounds: {} to {}, a look after every round; α = {alpha} split over the looks (alpha spending, union bound): {first}",
            self.min, self.max
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_looks_never_spend_more_than_alpha() {
        for alpha in [0.001, 0.01, 0.05, 0.1, 0.5] {
            for min in 1..8 {
                for max in min..25 {
                    let looks = Looks { min, max };
                    let spent: f64 = (0..=40).map(|n| looks.alpha_at(n, alpha)).sum();
                    assert!(spent <= alpha * (1.0 + 1e-12), "{looks:?} {alpha}: {spent}");
                }
            }
        }
    }

    #[test]
    fn at_the_default_alpha_every_look_from_four_rounds_can_reject() {
        let looks = Looks { min: 3, max: 20 };
        assert_eq!(
            looks.first_deciding(0.05),
            Some(4),
            "4 v 4: smallest p 0.029"
        );
        for n in 4..=20 {
            let a = looks.alpha_at(n, 0.05);
            assert!(min_possible_p(n, n) <= a, "{n} rounds: α_n {a}");
        }
        assert_eq!(looks.alpha_at(3, 0.05), 0.0);
        assert_eq!(looks.alpha_at(21, 0.05), 0.0);
        assert!((looks.alpha_at(4, 0.05) - 0.03).abs() < 1e-12);
        assert!((looks.alpha_at(5, 0.05) - 0.01).abs() < 1e-12);
        assert!((looks.alpha_at(6, 0.05) - 0.005).abs() < 1e-12);
    }

    #[test]
    fn the_first_look_moves_with_the_minimum_and_alpha() {
        assert_eq!(Looks { min: 6, max: 10 }.first_deciding(0.05), Some(6));
        // 5 v 5 cannot reach 0.6 × 0.01 = 0.006 (its smallest p is 0.0079); 6 v 6 can.
        assert_eq!(Looks { min: 3, max: 10 }.first_deciding(0.01), Some(6));
        assert_eq!(Looks { min: 3, max: 5 }.first_deciding(0.001), None);
        assert_eq!(Looks { min: 3, max: 5 }.alpha_at(5, 0.001), 0.0);
    }
}
