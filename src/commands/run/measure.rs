//! Stage 3 of `asynclab run`: the results document's header, then every scenario's cells
//! measured in interleaved rounds, results.json saved atomically after every run.

use std::path::Path;

use super::plan::RunPlan;
use super::progress::Display;
use super::resolve;
use super::services::Services;
use super::RunArgs;
use crate::catalogue::Scenario;
use crate::export;
use crate::results::{
    CeilingRecord, Cell, Invocation, Method, Results, ScenarioInfo, ScenarioPlan, SCHEMA_VERSION,
};
use crate::runner::process::ProcessExecutor;
use crate::runner::scheduler::{new_cell, run_interleaved};
use crate::runner::sweep::{self, Saturation};
use crate::runner::tally::Tally;
use crate::runner::{ceiling, interference};
use crate::{analysis, envinfo, interrupt};

/// How long other programs' CPU is watched before the run, for the busy warning: long enough
/// for the tolerated 0.1 cores to show as three 10 ms clock ticks.
const BUSY_WINDOW: std::time::Duration = std::time::Duration::from_millis(300);

/// The document before any cell: who wrote it, when, on what, and how it is measured.
pub fn new_document(args: &RunArgs, plan: &RunPlan, services: &Services) -> Results {
    let mut env = envinfo::collect(&plan.pythons, &plan.harness);
    let idle = interference::idle_window(BUSY_WINDOW, &services.pids());
    env.warnings.extend(envinfo::busy_warning(
        idle.foreign_cores,
        args.max_foreign_cores(),
        BUSY_WINDOW,
    ));
    env.mock_http = services.routes.direct.http_url.clone();
    env.postgres = services.pg.as_ref().map(|p| p.describe());
    let first = plan.scenarios[0].plan;
    Results {
        schema_version: SCHEMA_VERSION,
        generated_by: format!("asynclab {}", env!("CARGO_PKG_VERSION")),
        started_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        env,
        method: Method {
            rounds: first.rounds,
            warmups: first.warmups,
            order: "interleaved: every cell once per round, in a random order drawn for each round"
                .into(),
            order_seed: Some(first.order_seed),
            quick: args.quick,
            cpus: args.cpus.clone(),
            placement: Some(plan.placement.record(services.not_placed())),
            scenario_plans: plan
                .scenarios
                .iter()
                .filter(|s| (s.plan.rounds, s.plan.warmups) != (first.rounds, first.warmups))
                .map(|s| {
                    let p = ScenarioPlan {
                        rounds: s.plan.rounds,
                        warmups: s.plan.warmups,
                    };
                    (s.scenario.name.clone(), p)
                })
                .collect(),
            noise_threshold: Some(args.noise_threshold()),
            alpha: Some(args.alpha()),
            adaptive: adaptive_rounds(args, plan),
            budget_s: args.budget.map(|b| b.0.as_secs_f64()),
            interference: Some(crate::results::InterferencePolicy {
                max_foreign_cores: args.max_foreign_cores(),
                floor_s: interference::FOREIGN_FLOOR_S,
                repeats: args.repeats(),
                probe: Some(interference::PROBE_WORK.into()),
            }),
            delay_lines: services.delay_line_records(),
            hosts: services.hosts.clone(),
            wake_hold: Some(services.wake.detail.clone()),
        },
        scenarios: plan
            .scenarios
            .iter()
            .map(|s| (s.scenario.name.clone(), scenario_info(&s.scenario)))
            .collect(),
        cells: Vec::new(),
        sweeps: Vec::new(),
        invocation: Some(invocation(args, plan)),
        ceilings: Vec::new(),
        twins: Vec::new(),
        skipped: Vec::new(),
        skipped_pythons: Vec::new(),
    }
}

/// The adaptive rounds' rule in words, when any scenario of the plan has them.
/// With scenarios of other rounds, the rule is the first adaptive scenario's, followed by every
/// scenario's own least and most rounds.
fn adaptive_rounds(args: &RunArgs, plan: &RunPlan) -> Option<String> {
    let p = plan.scenarios.iter().find(|s| s.plan.adaptive())?.plan;
    let looks = crate::stats::Looks {
        min: p.rounds,
        max: p.max_rounds,
    };
    let own: Vec<String> = plan
        .scenarios
        .iter()
        .filter(|s| (s.plan.rounds, s.plan.max_rounds) != (p.rounds, p.max_rounds))
        .map(|s| {
            format!(
                "{} {} to {}",
                s.scenario.name, s.plan.rounds, s.plan.max_rounds
            )
        })
        .collect();
    let rule = looks.describe(args.alpha());
    Some(if own.is_empty() {
        rule
    } else {
        format!("{rule} (other scenarios' rounds: {})", own.join(", "))
    })
}

/// What the results document records of a scenario: its title, its question and the baseline
/// the catalogue resolved ([`Scenario::baseline_variant`]), which every comparison reads.
pub fn scenario_info(s: &Scenario) -> ScenarioInfo {
    ScenarioInfo {
        title: s.title.clone(),
        question: s.question.clone(),
        baseline: Some(s.baseline_variant().to_string()),
        contrasts: s.contrast.clone(),
    }
}

/// This command line, where it ran, and the study it resolved to.
pub fn invocation(args: &RunArgs, plan: &RunPlan) -> Invocation {
    Invocation {
        argv: std::env::args().collect(),
        cwd: std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default(),
        study: resolve::resolved(args, plan),
    }
}

/// The runs the plan holds before any repeat: every scenario's cells × (warm-ups + rounds).
pub fn planned_runs(plan: &RunPlan) -> usize {
    plan.scenarios
        .iter()
        .map(|s| s.plan.runs(s.specs.len()))
        .sum()
}

/// The analysis's knee rule, as `--rates auto` asks it which sweeps to stop.
struct Knees;

impl Saturation for Knees {
    fn saturated(&self, measured: &[Cell]) -> Vec<crate::catalogue::SweepKey> {
        analysis::sweep::saturated(measured)
    }
}

/// What measuring produced: the cells, and the reference clients' ceilings.
pub struct Measured {
    /// Every cell measured, also when measuring stopped early (A/A twins apart).
    pub cells: Vec<Cell>,
    /// The A/A twins measured.
    pub twins: Vec<Cell>,
    /// The reference runs of the scenarios with a `ceiling`.
    pub ceilings: Vec<CeilingRecord>,
}

/// Measures every scenario in turn (one batch, or one per rate for `--rates auto`), then its
/// reference client when it has one, saving `header` with everything so far to
/// `dir/results.json` after every run. Returns what was measured, also when measuring stopped
/// early, and how it ended (an error: a run could not be saved, or Ctrl-C).
pub fn measure(
    args: &RunArgs,
    plan: &RunPlan,
    services: &Services,
    header: Results,
    dir: &Path,
    clock: std::time::Instant,
) -> (Measured, anyhow::Result<()>) {
    let deadlines = args
        .budget
        .map(|b| super::budget::deadlines(plan, b, clock));
    let mut exec = ProcessExecutor {
        harness: plan.harness.clone(),
        server_logs: dir.join("server-logs"),
        services: services.routes.clone(),
        http_requests: services.http_requests(),
        service_pids: services.pids(),
        roles: services.roles.clone(),
        server_role: services.server_role.clone(),
        limits: interference::Limits {
            max_foreign_cores: args.max_foreign_cores(),
        },
    };
    let mut measured: Vec<Cell> = Vec::new();
    let mut twins: Vec<Cell> = Vec::new();
    let mut ceilings: Vec<CeilingRecord> = Vec::new();
    let mut tally = Tally {
        done: 0,
        total: planned_runs(plan),
    };
    let mut display = Display::new(tally.total);
    let rule = analysis::comparison::Rule {
        alpha: args.alpha(),
        noise_threshold: args.noise_threshold(),
        looks: None,
        floor: 0.0,
    };
    let outcome = (|| -> anyhow::Result<()> {
        let auto = args.rates == Some(sweep::Rates::Auto);
        for (k, planned) in plan.scenarios.iter().enumerate() {
            let scenario_plan = crate::runner::scheduler::Plan {
                deadline: deadlines.as_ref().map(|d| d[k]),
                ..planned.plan
            };
            let mut batches = sweep::Batches::new(planned.specs.clone(), auto);
            let mut first = true;
            while let Some(specs) = batches.next_batch(&measured, &Knees) {
                // The first batch is in the plan's total; an auto sweep's next rates add theirs.
                if !first {
                    tally.total += planned.plan.runs(specs.len());
                }
                first = false;
                let mut cells: Vec<Cell> = specs.iter().map(new_cell).collect();
                let info = scenario_info(&planned.scenario);
                let mut settle = |cells: &[Cell]| analysis::stopping::settle(cells, &info, rule);
                let mut save = |current: &[Cell]| -> anyhow::Result<()> {
                    let mut doc = header.clone();
                    let (now_twins, now_cells): (Vec<&Cell>, Vec<&Cell>) =
                        current.iter().partition(|c| c.twin_of.is_some());
                    doc.cells = measured.iter().chain(now_cells).cloned().collect();
                    doc.twins = twins.iter().chain(now_twins).cloned().collect();
                    doc.ceilings = ceilings.clone();
                    doc.sweeps = analysis::sweep::analyze(&doc.cells);
                    export::write_results(&doc, dir)
                };
                let r = run_interleaved(
                    &specs,
                    scenario_plan,
                    &mut exec,
                    &mut cells,
                    &mut save,
                    &mut settle,
                    &mut tally,
                    &mut |t, e| display.show(t, e),
                );
                let (new_twins, new_cells): (Vec<Cell>, Vec<Cell>) =
                    cells.into_iter().partition(|c| c.twin_of.is_some());
                measured.extend(new_cells);
                twins.extend(new_twins);
                r?;
            }
            let refs = ceiling::plans(
                &planned.scenario.name,
                planned.scenario.ceiling.as_deref(),
                &planned.specs,
            );
            if !refs.is_empty() {
                eprintln!(
                    "asynclab: {}: the Rust reference client ({}) at {} setting(s), up to {} round(s)",
                    planned.scenario.name,
                    refs[0].client(),
                    refs.len(),
                    planned.plan.rounds
                );
                let records = ceiling::measure(&refs, &services.routes, planned.plan.rounds);
                ceilings.extend(records);
                interrupt::check()?;
                let mut doc = header.clone();
                doc.cells = measured.clone();
                doc.twins = twins.clone();
                doc.ceilings = ceilings.clone();
                doc.sweeps = analysis::sweep::analyze(&doc.cells);
                export::write_results(&doc, dir)?;
            }
        }
        Ok(())
    })();
    display.finish(&tally);
    (
        Measured {
            cells: measured,
            twins,
            ceilings,
        },
        outcome,
    )
}
