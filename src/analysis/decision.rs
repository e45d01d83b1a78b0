//! The decision table's rows: per scenario and setting, the measured winner, its ratio against
//! the runner-up with a paired interval, and whether the gap beats the run-to-run spread.

use super::comparison::{compare, settled, Pairing, Rule, Verdict};
use super::measured::{busy_machine, paired_rounds, MeasuredRuns};
use super::ops::version_key;
use super::resolution::Floors;
use crate::catalogue::DecideBy;
use crate::results::{Cell, CellStatus, Results, RunRecord};
use crate::stats;
use std::collections::BTreeMap;

/// One row of the decision table.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// Scenario name.
    pub scenario: String,
    /// The setting compared (matrix-axis values), may be empty.
    pub group: String,
    /// Interpreter version.
    pub python: String,
    /// What was ranked: "throughput /s" or "peak RSS Δ".
    pub metric: &'static str,
    /// The best variant by the measured medians (recommended only when the verdict is not
    /// inconclusive).
    pub winner: String,
    /// The second best variant.
    pub runner_up: String,
    /// How much better the winner is (≥ 1), with a paired bootstrap 95% interval.
    pub ratio: stats::RatioEstimate,
    /// True when the winner's worst round beats the runner-up's best round.
    pub beyond_spread: bool,
    /// What the per-round values say about the gap.
    pub verdict: Verdict,
    /// How the verdict is final ([`super::comparison::settled`]: "different", "equal within
    /// noise", "inconclusive"); None while more rounds could still change it.
    pub settled: Option<&'static str>,
}

/// The metric a decision ranks by, of one run.
fn metric(memory: bool) -> impl Fn(&RunRecord) -> f64 {
    move |r| {
        if memory {
            r.peak_rss_delta_mib
        } else {
            r.throughput_per_s
        }
    }
}

/// Whether the decision table ranks `c`: its scenario ranks its variants, and it ran closed loop
/// (open-loop cells send at a fixed rate, so their throughput tracks the offered rate, not the
/// variant: they belong to the load-sweep table).
pub(crate) fn ranks(c: &Cell) -> bool {
    c.decide_by.ranks() && crate::catalogue::offered_rate(&c.params).is_none()
}

/// `cells` (one setting of one scenario) best first by the median over measured runs of the
/// figure their scenario ranks by (higher throughput, or lower peak RSS Δ); ties keep their order.
pub(crate) fn best_first<'a>(cells: &[&'a Cell]) -> Vec<&'a Cell> {
    let Some(first) = cells.first() else {
        return Vec::new();
    };
    let memory = first.decide_by == DecideBy::Memory;
    // Higher is better for throughput; for memory, rank by the negated delta.
    let score = |c: &Cell| {
        let m = stats::median(&MeasuredRuns::of(c).values(metric(memory)));
        if memory {
            -m
        } else {
            m
        }
    };
    let mut ranked = cells.to_vec();
    ranked.sort_by(|a, b| score(b).total_cmp(&score(a)));
    ranked
}

/// Computes the table from the measured cells; cells that failed or reported errors are left out.
pub fn decisions(results: &Results, rule: Rule) -> Vec<Decision> {
    let floors = Floors::of(&super::resolution::twins(results, rule));
    // Rows by scenario name, then setting in the plan's order (the catalogue's matrix order, so
    // concurrency=5 comes before concurrency=10, which text order would put first), then
    // interpreter, oldest first.
    let mut setting_rank: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for c in &results.cells {
        let next = setting_rank.len();
        setting_rank.entry((&c.scenario, &c.group)).or_insert(next);
    }
    type RowKey = (String, usize, Vec<u64>, String, String);
    let mut groups: BTreeMap<RowKey, Vec<&Cell>> = BTreeMap::new();
    for c in &results.cells {
        let usable = c.status == CellStatus::Ok
            && c.summary
                .as_ref()
                .is_some_and(|s| s.errors == 0 && s.rounds > 0);
        if usable && ranks(c) {
            let rank = setting_rank[&(c.scenario.as_str(), c.group.as_str())];
            groups
                .entry((
                    c.scenario.clone(),
                    rank,
                    version_key(&c.python),
                    c.group.clone(),
                    c.python.clone(),
                ))
                .or_default()
                .push(c);
        }
    }
    let mut out = Vec::new();
    for ((scenario, _, _, group, python), cells) in groups {
        if cells.len() < 2 {
            continue;
        }
        let memory = cells[0].decide_by == DecideBy::Memory;
        let ranked = best_first(&cells);
        let (w, r) = (ranked[0], ranked[1]);
        let (a, b) = paired_rounds(w, r, metric(memory));
        let rule = floors.rule(rule, &scenario).for_cells(&[w, r]);
        // Express the ratio as "winner is N× better": throughput w/r, memory r/w.
        let mut cmp = if memory {
            compare(&b, &a, Pairing::ByRound, rule)
        } else {
            compare(&a, &b, Pairing::ByRound, rule)
        };
        // A busy machine decides nothing: the figure is shown, no variant recommended.
        if let Some(why) = cells.iter().find_map(|c| busy_machine(c)) {
            cmp.verdict = Verdict::Inconclusive(why);
        }
        let (wmin, wmax) = (
            a.iter().copied().fold(f64::INFINITY, f64::min),
            a.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        );
        let (rmin, rmax) = (
            b.iter().copied().fold(f64::INFINITY, f64::min),
            b.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        );
        let paired = !a.is_empty() && !b.is_empty();
        let beyond_spread = paired && if memory { wmax < rmin } else { wmin > rmax };
        out.push(Decision {
            scenario,
            group,
            python,
            metric: if memory {
                "peak RSS Δ (lower is better)"
            } else {
                "throughput /s"
            },
            winner: w.variant.clone(),
            runner_up: r.variant.clone(),
            settled: settled(&cmp, rule),
            ratio: cmp.ratio,
            beyond_spread,
            verdict: cmp.verdict,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_come_in_the_plans_order_not_text_order() {
        let mut results = crate::results::quick_fixture();
        let pair: Vec<Cell> = results.cells.iter().take(2).cloned().collect();
        results.cells.clear();
        for group in ["concurrency=5", "concurrency=10"] {
            for c in &pair {
                let mut c = c.clone();
                c.group = group.to_string();
                c.decide_by = DecideBy::Throughput;
                results.cells.push(c);
            }
        }
        let settings: Vec<String> = decisions(&results, Rule::of(&results.method))
            .into_iter()
            .map(|d| d.group)
            .collect();
        assert_eq!(settings, ["concurrency=5", "concurrency=10"]);
    }
}
