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
//! possible p fits in its share: for the paired test, from
//! [`MIN_PAIRED_ROUNDS`](super::paired::MIN_PAIRED_ROUNDS) on) gets [`FIRST_SHARE`] of α, and
//! the rest is spread evenly over the looks after it up to the maximum: with looks from 3 to 10
//! rounds, `α_3 = 0.5α` and `α_4 … α_10 = 0.5α / 7` each. Large differences settle at the first
//! look, as fixed rounds settle them; the even spread keeps the later looks, where the small
//! differences are decided, as able to reject as the first of them (an earlier split that halved
//! each later look's share left the tenth look 1/64 of the fourth's, and a 10% difference on
//! this host's noise almost never settled: `analysis/host_noise_tests.rs`).

use super::paired::smallest_p;

/// Share of α the first deciding look spends (all of it when it is the only look).
pub const FIRST_SHARE: f64 = 0.5;

/// The looks of an adaptive plan: a check after every round from `min` to `max` rounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Looks {
    /// Rounds before the first look.
    pub min: usize,
    /// Rounds at the last look; no cell runs more.
    pub max: usize,
}

impl Looks {
    /// The first round count at or after `min` at which the paired test can reject at
    /// significance level `alpha`; None when none up to `max` can.
    pub fn first_deciding(&self, alpha: f64) -> Option<usize> {
        self.first_deciding_with(alpha, smallest_p)
    }

    /// [`Looks::first_deciding`] for a test whose smallest p with `n` rounds is `floor(n)`.
    pub fn first_deciding_with(&self, alpha: f64, floor: impl Fn(usize) -> f64) -> Option<usize> {
        (self.min.max(1)..=self.max).find(|&n| floor(n) <= FIRST_SHARE * alpha)
    }

    /// The significance level the look after `n` rounds may spend out of a total `alpha`: 0
    /// before the first deciding look and after the last.
    pub fn alpha_at(&self, n: usize, alpha: f64) -> f64 {
        self.alpha_at_with(n, alpha, smallest_p)
    }

    /// [`Looks::alpha_at`] for a test whose smallest p with `n` rounds is `floor(n)`.
    pub fn alpha_at_with(&self, n: usize, alpha: f64, floor: impl Fn(usize) -> f64) -> f64 {
        let Some(first) = self.first_deciding_with(alpha, floor) else {
            return 0.0;
        };
        if n < first || n > self.max {
            0.0
        } else if first == self.max {
            alpha
        } else if n == first {
            FIRST_SHARE * alpha
        } else {
            (1.0 - FIRST_SHARE) * alpha / (self.max - first) as f64
        }
    }

    /// The whole schedule in words, as results.json and the report record it.
    pub fn describe(&self, alpha: f64) -> String {
        let first = match self.first_deciding(alpha) {
            Some(f) => format!(
                "the first look that can reject ({f} rounds) spends {:.0}% of α, the rest is spread evenly over the later looks",
                FIRST_SHARE * 100.0,
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
    use crate::stats::{min_possible_p, MIN_PAIRED_ROUNDS};

    /// The rank test's smallest p with `n` against `n` rounds.
    fn rank_floor(n: usize) -> f64 {
        min_possible_p(n, n)
    }

    #[test]
    fn the_looks_never_spend_more_than_alpha() {
        for alpha in [0.001, 0.01, 0.05, 0.1, 0.5] {
            for min in 1..8 {
                for max in min..25 {
                    let looks = Looks { min, max };
                    let spent: f64 = (0..=40).map(|n| looks.alpha_at(n, alpha)).sum();
                    assert!(spent <= alpha * (1.0 + 1e-12), "{looks:?} {alpha}: {spent}");
                    let spent: f64 = (0..=40)
                        .map(|n| looks.alpha_at_with(n, alpha, rank_floor))
                        .sum();
                    assert!(spent <= alpha * (1.0 + 1e-12), "{looks:?} {alpha}: {spent}");
                }
            }
        }
    }

    #[test]
    fn the_paired_test_decides_from_three_rounds() {
        let looks = Looks { min: 3, max: 20 };
        assert_eq!(looks.first_deciding(0.05), Some(MIN_PAIRED_ROUNDS));
        assert_eq!(Looks { min: 1, max: 20 }.first_deciding(0.05), Some(3));
        assert!((looks.alpha_at(3, 0.05) - 0.025).abs() < 1e-12);
        for n in 4..=20 {
            assert!((looks.alpha_at(n, 0.05) - 0.025 / 17.0).abs() < 1e-12);
        }
        assert_eq!(Looks { min: 3, max: 3 }.alpha_at(3, 0.05), 0.05);
        assert_eq!(looks.alpha_at(2, 0.05), 0.0);
        assert_eq!(looks.alpha_at(21, 0.05), 0.0);
        assert_eq!(Looks { min: 1, max: 2 }.first_deciding(0.05), None);
    }

    #[test]
    fn for_a_rank_test_the_first_look_waits_for_its_smallest_p() {
        let looks = Looks { min: 3, max: 20 };
        assert_eq!(
            looks.first_deciding_with(0.05, rank_floor),
            Some(5),
            "4 v 4: smallest p 0.029 > 0.025"
        );
        assert_eq!(looks.alpha_at_with(4, 0.05, rank_floor), 0.0);
        // 5 v 5 cannot reach 0.5 × 0.01 = 0.005 (its smallest p is 0.0079); 6 v 6 can.
        assert_eq!(
            Looks { min: 3, max: 10 }.first_deciding_with(0.01, rank_floor),
            Some(6)
        );
        assert_eq!(
            Looks { min: 3, max: 5 }.first_deciding_with(0.001, rank_floor),
            None
        );
    }
}
