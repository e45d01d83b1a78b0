//! What a run can tell apart, measured in the run: each A/A twin (a second copy of a scenario's
//! baseline cell, run in the same rounds) against the cell it repeats, by the lab's one
//! comparison, and the smallest difference such rounds could call ([`stats::paired::resolution`]).
//!
//! **The rule.** A scenario's resolution is the largest of its twins' (one per interpreter):
//! "differences under ±x% cannot be told apart in this run". Every comparison of that scenario's
//! cells is judged with it as a floor ([`Rule::floor`]): a ratio nearer 1 than the resolution is
//! never called significant, whatever its own test says. A twin called *different* from its
//! original is a false positive the run made, and the report says so.

use std::collections::BTreeMap;

use super::comparison::{self, Comparison, Rule};
use super::measured::paired_rounds;
use crate::catalogue::DecideBy;
use crate::results::{Cell, Results, RunRecord};
use crate::stats;

/// One A/A twin against the cell it repeats.
#[derive(Debug, Clone)]
pub struct Twin {
    /// The scenario.
    pub scenario: String,
    /// The variant both ran.
    pub variant: String,
    /// The interpreter.
    pub python: String,
    /// The matrix setting (empty: the scenario's only one).
    pub setting: String,
    /// What was compared, as the tables name it.
    pub figure: &'static str,
    /// The twin against the original, round by round; None with fewer than two paired rounds.
    pub aa: Option<Comparison>,
    /// The smallest difference, as a fraction, these rounds could call; None where it cannot
    /// be known (fewer than 3 rounds, or a figure that is not positive).
    pub resolution: Option<f64>,
}

impl Twin {
    /// Whether the run called two copies of one cell different: a false positive.
    pub fn called_different(&self) -> bool {
        self.aa.as_ref().is_some_and(|c| c.verdict.is_significant())
    }
}

/// The figure a scenario ranks by, as the twin is compared on it.
fn figure(decide_by: DecideBy) -> (&'static str, fn(&RunRecord) -> f64) {
    match decide_by {
        DecideBy::Memory => ("peak memory delta (MiB)", |r| r.peak_rss_delta_mib),
        _ => ("throughput /s", |r| r.throughput_per_s),
    }
}

/// Every twin of `results` against its original, under the run's `rule`.
pub fn twins(results: &Results, rule: Rule) -> Vec<Twin> {
    results
        .twins
        .iter()
        .filter_map(|t| {
            let id = t.twin_of.as_deref()?;
            let original = results.cells.iter().find(|c| c.id == id)?;
            Some(twin(t, original, rule))
        })
        .collect()
}

fn twin(t: &Cell, original: &Cell, rule: Rule) -> Twin {
    let (name, value) = figure(original.decide_by);
    let (a, b) = paired_rounds(t, original, value);
    let rule = rule.for_cells(&[t, original]);
    let resolution = stats::paired_log_ratio(&a, &b).and_then(|p| {
        let r = stats::paired::resolution(p.log_sd, p.rounds, rule.alpha_for(p.rounds));
        r.is_finite().then_some(r)
    });
    Twin {
        scenario: original.scenario.clone(),
        variant: original.variant.clone(),
        python: original.python.clone(),
        setting: original.group.clone(),
        figure: name,
        aa: comparison::cells(t, original, value, rule),
        resolution,
    }
}

/// Each scenario's resolution: the largest of its twins'.
#[derive(Debug, Clone, Default)]
pub struct Floors(BTreeMap<String, f64>);

impl Floors {
    /// The floors of `twins`.
    pub fn of(twins: &[Twin]) -> Floors {
        let mut m: BTreeMap<String, f64> = BTreeMap::new();
        for t in twins {
            if let Some(r) = t.resolution {
                let e = m.entry(t.scenario.clone()).or_insert(0.0);
                *e = e.max(r);
            }
        }
        Floors(m)
    }

    /// The floors of a results document under its own rule.
    pub fn of_results(results: &Results) -> Floors {
        Floors::of(&twins(results, Rule::of(&results.method)))
    }

    /// The resolution of `scenario`; None where no twin measured it.
    pub fn get(&self, scenario: &str) -> Option<f64> {
        self.0.get(scenario).copied()
    }

    /// `rule` for comparing cells of `scenario`: with its resolution as the floor.
    pub fn rule(&self, rule: Rule, scenario: &str) -> Rule {
        Rule {
            floor: self.get(scenario).unwrap_or(0.0),
            ..rule
        }
    }
}

/// A run's rule with its scenarios' floors, passed by value where comparisons of several
/// scenarios' cells are made: [`RunRule::at`] is the rule for one scenario's cells.
#[derive(Debug, Clone, Copy)]
pub struct RunRule<'a> {
    /// The run's rule.
    pub rule: Rule,
    /// Its scenarios' resolutions.
    pub floors: &'a Floors,
}

impl RunRule<'_> {
    /// The rule for comparing cells of `scenario`.
    pub fn at(&self, scenario: &str) -> Rule {
        self.floors.rule(self.rule, scenario)
    }
}
