//! Results → the report model, computed once (criterion's analysis stage).
//!
//! [`analyze`] reads a results document and decides everything an output shows: per scenario
//! the rows with their ratios and verdicts, the per-operation and event-loop figures, the
//! open-loop sweeps and knees, the decision table, the warnings. `export` and `chart` render
//! this model and compute no statistic of their own. Which sections a scenario gets follows
//! from its catalogue entry (`decide_by`, `baseline`) and the kinds of extras its runs carry.

pub mod comparison;
pub mod contrasts;
pub mod cost;
pub mod decision;
pub mod fanout;
pub mod held;
pub mod like_for_like;
pub mod measured;
pub mod network;
pub mod ops;
pub mod resolution;
pub mod roles;
pub mod runtime;
pub mod scenario;
pub mod service_questions;
pub mod services;
pub mod slow_consumer;
pub mod speed;
pub mod stopping;
pub mod summary;
pub mod sweep;
pub mod thresholds;
pub mod time_account;
pub mod warnings;

use std::collections::BTreeMap;

use serde_json::Value;

use crate::results::{Results, Sweep};

/// Everything the outputs show, computed once from a results document.
#[derive(Debug, Clone)]
pub struct Report<'a> {
    /// The document analysed (for the environment, method and raw cells).
    pub results: &'a Results,
    /// How every comparison of the report was judged (α and the run's noise band).
    pub rule: comparison::Rule,
    /// One entry per scenario, in the document's order.
    pub scenarios: Vec<scenario::ScenarioReport<'a>>,
    /// Per-operation sections, for scenarios whose runs carry `extra.ops`.
    pub ops: Vec<runtime::OpsReport<'a>>,
    /// Event-loop comparisons, for scenarios whose runs carry `extra.elapsed_ms`.
    pub loops: Vec<runtime::LoopReport>,
    /// Open-loop rate sweeps with their knees.
    pub sweeps: Vec<Sweep>,
    /// Per sweep setting, every variant at the rates they all carried (up to the slowest knee).
    pub like_for_like: Vec<like_for_like::LikeForLike>,
    /// The decision table's rows.
    pub decisions: Vec<decision::Decision>,
    /// Each A/A twin against the cell it repeats: what the run could tell apart.
    pub twins: Vec<resolution::Twin>,
    /// Each scenario's resolution, the floor its comparisons were judged with.
    pub floors: resolution::Floors,
    /// Sweeps along the delay line's round trip (`rtt_ms`), with their crossovers.
    pub network: Vec<network::NetworkSweep>,
    /// The Rust reference clients' ceilings, with each variant's fraction of them.
    pub ceilings: Vec<network::CeilingRow>,
    /// Services under test: what each server cost beside what it served.
    pub services: Vec<services::ServiceRow>,
    /// Services under test that held idle connections: how many, memory per connection and
    /// the trickle's p99 while they were held.
    pub held: Vec<held::HeldRow>,
    /// What the other roles cost per operation when they ran apart (`--hosts containers`).
    pub roles: Vec<roles::RoleRow>,
    /// WebSocket rooms: who joined, memory per client, delivery latency, whether each kept up.
    pub fanout: Vec<fanout::FanoutRow>,
    /// WebSocket rooms with a client that stopped reading: what each server did about it.
    pub slow_consumers: Vec<slow_consumer::SlowRow>,
    /// Services under test: the best sync server against the best async one along the round
    /// trip (or the upstream's delay), and where the lead changes kind.
    pub service_crossovers: Vec<services::KindCrossover>,
    /// The decision framework's questions about services, answered per setting.
    pub service_answers: Vec<service_questions::ServiceAnswer>,
    /// The machine-speed probe over every run, when runs were probed.
    pub machine_speed: Option<speed::ProbeRange>,
    /// Where the run's time went, when its runs recorded their timelines.
    pub time_account: Option<time_account::TimeAccount>,
    /// The environment's warnings, the machine's speed when it moved, then the cells' round
    /// warnings grouped by cause.
    pub warnings: Vec<warnings::WarningGroup>,
    /// Each scenario's catalogue contrasts in every setting both variants ran in.
    pub contrasts: Vec<contrasts::ContrastRow>,
    /// The study's thresholds, each against the cells it reads.
    pub thresholds: Vec<thresholds::ThresholdCheck>,
}

/// The scenario names of a document, in first-seen order.
pub fn scenario_names(results: &Results) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for c in &results.cells {
        if !names.contains(&c.scenario) {
            names.push(c.scenario.clone());
        }
    }
    names
}

/// Analyses a results document.
pub fn analyze(results: &Results) -> Report<'_> {
    let rule = comparison::Rule::of(&results.method);
    let twins = resolution::twins(results, rule);
    let floors = resolution::Floors::of(&twins);
    let mut scenarios = Vec::new();
    let mut ops = Vec::new();
    let mut loops = Vec::new();
    for name in scenario_names(results) {
        let cells: Vec<_> = results
            .cells
            .iter()
            .filter(|c| c.scenario == name)
            .collect();
        ops.extend(runtime::ops_report(&name, &cells, floors.rule(rule, &name)));
        loops.extend(runtime::loop_report(
            &name,
            &cells,
            floors.rule(rule, &name),
        ));
        scenarios.push(scenario::analyze(
            &name,
            cells,
            results.scenarios.get(&name),
            results.env.cores,
            floors.rule(rule, &name),
        ));
    }
    let machine_speed = speed::probe_range(&results.cells);
    let warnings = warnings::group(
        results,
        results
            .env
            .warnings
            .iter()
            .cloned()
            .chain(machine_speed.as_ref().and_then(speed::warning)),
    );
    let decisions = decision::decisions(results, rule);
    let sweeps = sweep::analyze(&results.cells);
    let like_for_like = like_for_like::analyze(&sweeps);
    let all_cells: Vec<_> = results.cells.iter().collect();
    Report {
        results,
        rule,
        scenarios,
        ops,
        loops,
        service_answers: service_questions::answers(&all_cells, &like_for_like, rule, &floors),
        like_for_like,
        sweeps,
        network: network::analyze(&results.cells, &decisions, &results.ceilings),
        ceilings: network::ceiling_rows(&results.cells, &results.ceilings),
        services: services::rows(&all_cells),
        held: held::rows(&all_cells),
        roles: roles::rows(&all_cells),
        fanout: fanout::rows(&all_cells),
        slow_consumers: slow_consumer::rows(&all_cells),
        service_crossovers: services::kind_crossovers(&all_cells, rule, &floors),
        decisions,
        twins,
        floors,
        machine_speed,
        time_account: time_account::account(&results.cells),
        warnings,
        thresholds: thresholds::check(results),
        contrasts: contrasts::rows(results, rule),
    }
}

/// The parameters `keys` of a cell as `k=v` pairs.
pub fn params_text(params: &BTreeMap<String, Value>, keys: &[String]) -> String {
    keys.iter()
        .filter_map(|k| {
            params
                .get(k)
                .map(|v| format!("{k}={}", v.to_string().trim_matches('"')))
        })
        .collect::<Vec<_>>()
        .join(" ")
}
