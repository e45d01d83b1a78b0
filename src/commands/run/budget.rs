//! `--budget`: a time budget for the run, and each scenario's deadline under it. Every scenario
//! first runs its minimum rounds whatever the budget says; rounds past the minimum start only
//! while the scenario's share of the budget, counted from the services' start, has room for one
//! more. Shares follow each scenario's minimum runs, and a scenario that settles early leaves
//! its unspent time to the ones after it (the deadlines are cumulative).

use std::time::Instant;

use super::plan::RunPlan;
pub use crate::budget::Budget;

/// The most rounds a cell gets under a budget when `--max-rounds` is not given.
pub const DEFAULT_MAX_ROUNDS: usize = 10;

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
