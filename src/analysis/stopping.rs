//! When a cell of adaptive rounds may stop: the comparisons its scenario's question asks for
//! (each cell against its baseline, the catalogue's contrasts, and the decision table's winner
//! against its runner-up), each judged by the lab's one comparison rule at the look's share of
//! α, and settled ([`comparison::settled`]) or still open. The runner asks this after every
//! round from the minimum on; a cell stops once every comparison it takes part in is settled.

use std::collections::BTreeMap;

use super::comparison::{self, Comparison, Rule};
use super::scenario::baseline_for;
use super::{contrasts, decision};
use crate::catalogue::{ContrastFigure, DecideBy};
use crate::results::{Cell, CellStatus, ScenarioInfo, StopCause};

/// One comparison between two cells of the batch, by index, and what it is called in words.
struct Pair {
    cells: (usize, usize),
    figure: ContrastFigure,
    what: String,
    comparison: Option<Comparison>,
}

/// The figure a scenario ranks its variants by.
fn figure(decide_by: DecideBy) -> ContrastFigure {
    if decide_by == DecideBy::Memory {
        ContrastFigure::Memory
    } else {
        ContrastFigure::Throughput
    }
}

/// Every comparison the question asks for among `cells` (one scenario's batch).
fn pairs(cells: &[Cell], info: &ScenarioInfo, rule: Rule) -> Vec<Pair> {
    let usable: Vec<usize> = (0..cells.len())
        .filter(|&i| {
            let c = &cells[i];
            c.twin_of.is_none()
                && matches!(c.status, CellStatus::Running | CellStatus::Ok)
                && c.summary.as_ref().is_some_and(|s| s.errors == 0)
        })
        .collect();
    let index = |c: &Cell| cells.iter().position(|x| x.id == c.id);
    let refs: Vec<&Cell> = usable.iter().map(|&i| &cells[i]).collect();
    let mut out: Vec<Pair> = Vec::new();
    let mut push = |i: usize, j: usize, what: String, f: ContrastFigure| {
        let (a, b) = (i.min(j), i.max(j));
        let same = |p: &Pair| (p.cells.0.min(p.cells.1), p.cells.0.max(p.cells.1)) == (a, b);
        if out.iter().any(|p| same(p) && p.figure == f) {
            return;
        }
        out.push(Pair {
            cells: (i, j),
            figure: f,
            what,
            comparison: contrasts::compare(&cells[i], &cells[j], f, rule),
        });
    };
    if let Some(base) = info.baseline.as_deref() {
        for &i in &usable {
            let c = &cells[i];
            if !decision::ranks(c) {
                continue;
            }
            if let Some(j) = baseline_for(c, &refs, base).and_then(index) {
                if j != i {
                    let what = format!("{} vs {}", c.variant, cells[j].variant);
                    push(i, j, what, figure(c.decide_by));
                }
            }
        }
    }
    for (contrast, new, base) in contrasts::pairs(&info.contrasts, &refs) {
        if let (Some(i), Some(j)) = (index(new), index(base)) {
            let what = format!("{} vs {}", contrast.new, contrast.base);
            push(i, j, what, contrast.figure);
        }
    }
    // The decision table's winner against its runner-up, in each setting.
    let mut settings: BTreeMap<(&str, &str), Vec<&Cell>> = BTreeMap::new();
    for &c in refs.iter().filter(|c| decision::ranks(c)) {
        settings.entry((&c.group, &c.python)).or_default().push(c);
    }
    for members in settings.values() {
        if let [w, r, ..] = decision::best_first(members)[..] {
            if let (Some(i), Some(j)) = (index(w), index(r)) {
                let what = format!("{} vs {}", w.variant, r.variant);
                push(i, j, what, figure(w.decide_by));
            }
        }
    }
    out
}

/// For each of `cells` (one scenario's batch): Ok(why) when every comparison it takes part in
/// is settled, so it may stop; Err(which are open) while one is (fewer than two paired rounds
/// count as open). A cell in no comparison has nothing more to learn from its rounds. An A/A
/// twin takes part in none and runs as long as the cell it repeats, so the two stay paired.
pub fn settle(cells: &[Cell], info: &ScenarioInfo, rule: Rule) -> Vec<Result<String, String>> {
    let own = own_comparisons(cells, info, rule);
    cells
        .iter()
        .zip(&own)
        .map(|(c, mine)| {
            let original = c
                .twin_of
                .as_ref()
                .and_then(|id| cells.iter().position(|x| &x.id == id));
            match original {
                Some(j) => own[j].clone(),
                None => mine.clone(),
            }
        })
        .collect()
}

/// [`settle`] for each cell by the comparisons it takes part in itself.
fn own_comparisons(cells: &[Cell], info: &ScenarioInfo, rule: Rule) -> Vec<Result<String, String>> {
    let pairs = pairs(cells, info, rule);
    (0..cells.len())
        .map(|i| {
            let mine: Vec<&Pair> = pairs
                .iter()
                .filter(|p| p.cells.0 == i || p.cells.1 == i)
                .collect();
            if mine.is_empty() {
                return Ok("no comparison to settle".to_string());
            }
            let (mut settled, mut open) = (Vec::new(), Vec::new());
            for p in mine {
                let rule = rule.for_cells(&[&cells[p.cells.0], &cells[p.cells.1]]);
                match &p.comparison {
                    Some(c) => match comparison::settled(c, rule) {
                        Some(s) => settled.push(format!("{}: {s}", p.what)),
                        None => open.push(format!("{}: {}", p.what, c.verdict.text())),
                    },
                    None => open.push(format!("{}: fewer than two paired rounds", p.what)),
                }
            }
            if open.is_empty() {
                Ok(settled.join("; "))
            } else {
                Err(open.join("; "))
            }
        })
        .collect()
}

/// How a run's adaptive cells stopped.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StopCounts {
    /// Cells that stopped with every comparison settled.
    pub settled: usize,
    /// Cells that reached their maximum with a comparison still open.
    pub at_max: usize,
    /// Cells the time budget stopped with a comparison still open.
    pub by_budget: usize,
    /// Mean measured rounds over all of them.
    pub mean_rounds: f64,
    /// The most rounds any of them could run.
    pub max_rounds: usize,
}

/// `rounds` of a run's plan as a count: "5", or "5 to 10 (adaptive)" when its cells ran
/// adaptive rounds.
pub fn rounds_text(rounds: usize, cells: &[Cell]) -> String {
    match counts(cells) {
        Some(c) if c.max_rounds > rounds => format!("{rounds} to {} (adaptive)", c.max_rounds),
        _ => rounds.to_string(),
    }
}

/// How the adaptive cells of `cells` stopped; None when none had adaptive rounds.
pub fn counts(cells: &[Cell]) -> Option<StopCounts> {
    let stops: Vec<_> = cells
        .iter()
        .filter_map(|c| c.adaptive.as_ref()?.stop.as_ref())
        .collect();
    (!stops.is_empty()).then(|| StopCounts {
        settled: stops
            .iter()
            .filter(|s| s.cause == StopCause::Settled)
            .count(),
        at_max: stops
            .iter()
            .filter(|s| s.cause == StopCause::Maximum)
            .count(),
        by_budget: stops
            .iter()
            .filter(|s| s.cause == StopCause::Budget)
            .count(),
        mean_rounds: stops.iter().map(|s| s.rounds as f64).sum::<f64>() / stops.len() as f64,
        max_rounds: cells
            .iter()
            .filter_map(|c| Some(c.adaptive.as_ref()?.max_rounds))
            .max()
            .unwrap_or(0),
    })
}

#[cfg(test)]
#[path = "stopping_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "host_noise_tests.rs"]
mod host_noise_tests;
