//! `--budget`: a time budget for the run, and each scenario's deadline under it. Every scenario
//! first runs its minimum rounds whatever the budget says; rounds past the minimum start only
//! while the scenario's share of the budget, counted from the services' start, has room for one
//! more. Shares follow each scenario's minimum runs, and a scenario that settles early leaves
//! its unspent time to the ones after it (the deadlines are cumulative).

use std::str::FromStr;
use std::time::{Duration, Instant};

use super::plan::RunPlan;

/// The most rounds a cell gets under a budget when `--max-rounds` is not given.
pub const DEFAULT_MAX_ROUNDS: usize = 10;

/// A run's time budget.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget(pub Duration);

impl FromStr for Budget {
    type Err = String;

    /// `90s`, `10m`, `1h`, `1h30m` or a bare number of seconds.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || format!("{s:?} is not a duration; give e.g. 10m, 90s or 1h30m");
        let t = s.trim();
        if let Ok(secs) = t.parse::<f64>() {
            return (secs.is_finite() && secs > 0.0)
                .then(|| Budget(Duration::from_secs_f64(secs)))
                .ok_or_else(bad);
        }
        let (mut total, mut number) = (0.0, String::new());
        for ch in t.chars() {
            match ch {
                '0'..='9' | '.' => number.push(ch),
                'h' | 'm' | 's' if !number.is_empty() => {
                    let v: f64 = number.parse().map_err(|_| bad())?;
                    total += v * match ch {
                        'h' => 3600.0,
                        'm' => 60.0,
                        _ => 1.0,
                    };
                    number.clear();
                }
                _ => return Err(bad()),
            }
        }
        if !(number.is_empty() && total.is_finite() && total > 0.0) {
            return Err(bad());
        }
        Ok(Budget(Duration::from_secs_f64(total)))
    }
}

/// Each planned scenario's deadline under `budget` counted from `start`: the start plus the
/// budget's share of the scenarios up to and including it, by their minimum runs.
pub fn deadlines(plan: &RunPlan, budget: Budget, start: Instant) -> Vec<Instant> {
    let minimum: Vec<usize> = plan
        .scenarios
        .iter()
        .map(|s| s.specs.len() * (s.plan.warmups + s.plan.rounds))
        .collect();
    let total: usize = minimum.iter().sum::<usize>().max(1);
    let mut so_far = 0;
    minimum
        .iter()
        .map(|m| {
            so_far += m;
            start + budget.0.mul_f64(so_far as f64 / total as f64)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_in_the_forms_people_write() {
        let secs = |s: &str| Budget::from_str(s).map(|b| b.0.as_secs_f64());
        assert_eq!(secs("90s"), Ok(90.0));
        assert_eq!(secs("10m"), Ok(600.0));
        assert_eq!(secs("1h30m"), Ok(5400.0));
        assert_eq!(secs("2.5m"), Ok(150.0));
        assert_eq!(secs("45"), Ok(45.0));
        for bad in ["", "0", "-5", "10x", "m", "10m5", "ten minutes"] {
            let e = Budget::from_str(bad).unwrap_err();
            assert!(e.contains("10m, 90s"), "{bad}: {e}");
        }
    }
}
