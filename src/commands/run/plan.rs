//! Stage 1 of `asynclab run`: checks the flags against the catalogue and this machine, finds
//! the interpreters and expands each scenario's matrix with its rounds and warm-ups.

use std::path::PathBuf;

use super::placement::Placement;
use super::RunArgs;
use crate::catalogue::{
    held_connections, room_clients, Scenario, Service, CLIENTS_PARAM, HOLD_PARAM,
};
use crate::commands::envs::{prepare_pythons, MissingPython};
use crate::commands::loadgen_cell::{server_cores, Cell};
use crate::error::UsageError;
use crate::python::PythonEnv;
use crate::runner::matrix::{self, CellSpec, ParamOverride};
use crate::runner::scheduler::Plan;
use crate::runner::sweep;

/// Event loops `--loop` accepts (the harness knows how to make each, or says how to get it).
pub const EVENT_LOOPS: &[&str] = &["asyncio", "uvloop", "rsloop", "zuvloop"];

/// One scenario of the run: its catalogue entry, rounds and warm-ups, and matrix cells.
pub struct PlannedScenario {
    /// The scenario from the catalogue.
    pub scenario: Scenario,
    /// Its rounds and warm-ups (catalogue, flags and `--quick` combined), and how often a
    /// run the machine interfered with is repeated.
    pub plan: Plan,
    /// Its matrix: one spec per cell.
    pub specs: Vec<CellSpec>,
}

/// What a run will measure, decided before anything starts.
pub struct RunPlan {
    /// The scenarios in the order given (`all`: the catalogue's order).
    pub scenarios: Vec<PlannedScenario>,
    /// The interpreters' environments, one per distinct version.
    pub pythons: Vec<PythonEnv>,
    /// Interpreters asked for that could not be found, left out of the matrices.
    pub missing_pythons: Vec<MissingPython>,
    /// The absolute path of `workloads/harness.py`.
    pub harness: PathBuf,
    /// Which CPUs the services, the driver and each scenario's workers get.
    pub placement: Placement,
}

impl RunPlan {
    /// The scenarios' catalogue entries.
    pub fn scenario_refs(&self) -> Vec<&Scenario> {
        self.scenarios.iter().map(|s| &s.scenario).collect()
    }

    /// Whether any scenario needs `service`.
    pub fn needs(&self, service: Service) -> bool {
        self.scenarios
            .iter()
            .any(|s| s.scenario.services.contains(&service))
    }

    /// The plan without the scenarios that need `service`, and their names.
    pub fn without(mut self, service: Service) -> (RunPlan, Vec<String>) {
        let (out, kept): (Vec<_>, Vec<_>) = self
            .scenarios
            .into_iter()
            .partition(|s| s.scenario.services.contains(&service));
        self.scenarios = kept;
        let names = out.into_iter().map(|s| s.scenario.name).collect();
        (self, names)
    }
}

/// Checks the flags, reads the catalogue, prepares the interpreters and expands the matrices.
pub fn plan(args: &RunArgs) -> anyhow::Result<RunPlan> {
    let workloads = &args.env.common.workloads;
    let cat = args.env.common.catalogue()?;
    let names: Vec<String> = if args.scenario.iter().any(|s| s == "all") {
        cat.names()
    } else {
        args.scenario.clone()
    };
    let scenarios = names
        .iter()
        .map(|n| cat.get(n))
        .collect::<Result<Vec<_>, _>>()?;
    let narrowed = crate::catalogue::narrow(&scenarios, &args.variants).map_err(|message| {
        UsageError::Flag {
            flag: "--variants",
            message,
        }
    })?;
    let scenarios: Vec<&Scenario> = narrowed.iter().collect();
    let overrides = with_loop_axis(&args.params, &args.event_loops)?;
    let overrides = sweep::with_rates(&overrides, args.rates.as_ref(), &scenarios)?;
    matrix::check_overrides(&scenarios, &overrides)?;
    if args.rounds == Some(0) {
        return Err(UsageError::Flag {
            flag: "--rounds",
            message: "must be at least 1 (3 or more to get an interval)".into(),
        }
        .into());
    }
    if let Some(max) = args.max_rounds {
        if !(2..=crate::stats::significance::EXACT_MAX_TOTAL / 2).contains(&max) {
            return Err(UsageError::Flag {
                flag: "--max-rounds",
                message: format!(
                    "{max} is not a round count adaptive rounds can use; give 2 to {} (e.g. 10)",
                    crate::stats::significance::EXACT_MAX_TOTAL / 2
                ),
            }
            .into());
        }
    }
    check_cpus(&args.cpus)?;
    if !(args.max_foreign_cores().is_finite() && args.max_foreign_cores() >= 0.0) {
        return Err(UsageError::Flag {
            flag: "--max-foreign-cores",
            message: format!(
                "{} is not a number of cores; give e.g. 0.1 (a tenth of one core's time)",
                args.max_foreign_cores()
            ),
        }
        .into());
    }
    if !crate::stats::significance::valid_noise_threshold(args.noise_threshold()) {
        return Err(UsageError::Flag {
            flag: "--noise-threshold",
            message: format!(
                "{} is not a fraction of the baseline; give e.g. 0.03 (differences under 3% are not called significant), 0 for none",
                args.noise_threshold()
            ),
        }
        .into());
    }
    let alpha = args.alpha();
    if !(alpha > 0.0 && alpha < 1.0) {
        return Err(UsageError::Flag {
            flag: "--alpha",
            message: format!(
                "{alpha} is not a significance level; give a number strictly between 0 and 1, like 0.05"
            ),
        }
        .into());
    }
    let order_seed = args.order_seed.unwrap_or_else(|| {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        now.map_or(0, |d| d.as_nanos() as u64) ^ u64::from(std::process::id())
    });
    let plans: Vec<Plan> = scenarios
        .iter()
        .map(|s| {
            let own = args.plans.get(&s.name).copied().unwrap_or_default();
            let given = own.rounds.or(args.rounds);
            let (rounds, warmups) = s.plan(given, own.warmups.or(args.warmups), args.quick);
            let max_rounds = args.max_rounds().unwrap_or(rounds).max(rounds);
            Plan {
                rounds: adaptive_minimum(rounds, max_rounds, given.is_some(), alpha),
                max_rounds,
                warmups,
                deadline: None,
                repeats: args.repeats(),
                derive: crate::analysis::summary::derive_cell,
                order_seed,
            }
        })
        .collect();
    let harness = std::path::absolute(workloads.join("harness.py"))?;
    if !harness.is_file() {
        anyhow::bail!(
            "{} not found: pass --workloads DIR pointing at the asynclab workloads folder",
            harness.display()
        );
    }
    let (pythons, missing_pythons) = prepare_pythons(&args.env, &scenarios, args.strict)?;
    // An interpreter that cannot be found is skipped when another one can run the plan;
    // --strict, or nothing left to run on, makes it the error it is.
    if let Some(m) = missing_pythons.first() {
        if args.strict || pythons.is_empty() {
            anyhow::bail!("{}", m.reason);
        }
    }
    let placement = Placement::decide(
        args.placement(),
        &crate::affinity::allowed_cpus(),
        &args.cpus,
    );
    let mut planned = Vec::new();
    for (s, plan) in scenarios.into_iter().zip(plans) {
        let mut specs = matrix::expand(
            s,
            &std::path::absolute(&cat.dir)?,
            &pythons,
            &overrides,
            args.quick,
        )?;
        let loadgen = s.driver == crate::catalogue::Driver::Loadgen;
        // A load generator runs beside the lab's services; its server gets the other CPUs.
        let cpus = if loadgen {
            &placement.service_cpus
        } else {
            placement.worker_cpus(!s.services.is_empty())
        };
        for spec in &mut specs {
            spec.cpus = cpus.to_vec();
            if loadgen {
                for (param, n) in [
                    (HOLD_PARAM, held_connections(&spec.params)),
                    (CLIENTS_PARAM, room_clients(&spec.params)),
                ] {
                    if let Some(n) = n {
                        crate::loadgen::hold::check_limits(param, n as usize)
                            .map_err(|e| anyhow::anyhow!("scenario {}: {e}", s.name))?;
                    }
                }
                let server = cat.server(&s.name, &spec.variant)?;
                let params = spec.params.clone().into_iter().collect();
                let cores = server_cores(&placement.server_under_test_cpus);
                Cell::read(&params, server, cores).map_err(|e| {
                    anyhow::anyhow!("scenario {}, variant {}: {e}", s.name, spec.variant)
                })?;
                spec.server = Some(matrix::ServerUnderTest {
                    server: server.clone(),
                    dir: std::path::absolute(cat.dir.join(&server.dir))?,
                    cpus: placement.server_under_test_cpus.clone(),
                });
            }
        }
        if !args.no_twins && plan.rounds >= crate::stats::MIN_PAIRED_ROUNDS {
            specs.extend(twins(s, &specs));
        }
        planned.push(PlannedScenario {
            scenario: s.clone(),
            plan,
            specs,
        });
    }
    Ok(RunPlan {
        scenarios: planned,
        pythons,
        missing_pythons,
        harness,
        placement,
    })
}

/// Suffix of an A/A twin's cell id.
pub const TWIN_SUFFIX: &str = "/twin";

/// The A/A twins of one scenario's `specs`: for each interpreter, a copy of the first cell of
/// the baseline variant, run in the same rounds, so its ratio to the original shows what the
/// run can tell apart (`analysis::resolution`). Only where the scenario ranks its variants by
/// a figure of the run (throughput or memory) measured closed loop: an open-loop cell's
/// throughput is the rate it was offered.
fn twins(s: &Scenario, specs: &[CellSpec]) -> Vec<CellSpec> {
    if s.decide_by == crate::catalogue::DecideBy::None {
        return Vec::new();
    }
    let base = s.baseline_variant();
    let mut out: Vec<CellSpec> = Vec::new();
    for spec in specs {
        let taken = out.iter().any(|t| t.python.version == spec.python.version);
        if taken || spec.variant != base || crate::catalogue::offered_rate(&spec.params).is_some() {
            continue;
        }
        let mut twin = spec.clone();
        twin.id = format!("{}{TWIN_SUFFIX}", spec.id);
        twin.twin_of = Some(spec.id.clone());
        out.push(twin);
    }
    out
}

/// `--param` overrides plus `--loop L1,L2` as the `loop` parameter's matrix axis.
fn with_loop_axis(
    params: &[ParamOverride],
    loops: &[String],
) -> Result<Vec<ParamOverride>, UsageError> {
    let mut out = params.to_vec();
    if loops.is_empty() {
        return Ok(out);
    }
    let flag = "--loop";
    if let Some(bad) = loops.iter().find(|l| !EVENT_LOOPS.contains(&l.as_str())) {
        let message = format!(
            "unknown event loop '{bad}'; known: {}",
            EVENT_LOOPS.join(", ")
        );
        return Err(UsageError::Flag { flag, message });
    }
    if params.iter().any(|p| p.key == "loop") {
        let message = "given together with --param loop=...; use one of them".into();
        return Err(UsageError::Flag { flag, message });
    }
    out.push(ParamOverride {
        key: "loop".into(),
        values: loops.to_vec(),
    });
    Ok(out)
}

/// Checks `--cpus` against the CPUs this machine has.
fn check_cpus(cpus: &[usize]) -> Result<(), UsageError> {
    // SAFETY: sysconf has no preconditions.
    let configured = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) }.max(1) as usize;
    match cpus.iter().find(|&&c| c >= configured) {
        Some(c) => Err(UsageError::Flag {
            flag: "--cpus",
            message: format!(
                "CPU {c} does not exist; this machine has CPUs 0..={} (e.g. --cpus 0 or --cpus 0,1)",
                configured - 1
            ),
        }),
        None => Ok(()),
    }
}

/// The least rounds of an adaptive plan: a catalogue default below the first look that can
/// reject at `alpha` is raised to it, since a cell stopped there (by a time budget) could not
/// have settled a difference; rounds the user gave are kept as given.
fn adaptive_minimum(rounds: usize, max_rounds: usize, given: bool, alpha: f64) -> usize {
    if given || max_rounds <= rounds {
        return rounds;
    }
    let looks = crate::stats::sequential::Looks {
        min: rounds,
        max: max_rounds,
    };
    looks.first_deciding(alpha).unwrap_or(rounds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_adaptive_minimum_from_the_catalogue_starts_at_the_first_look_that_can_reject() {
        // The paired test decides nothing on 2 rounds and can from 3.
        assert_eq!(adaptive_minimum(2, 10, false, 0.05), 3);
        assert_eq!(adaptive_minimum(3, 10, false, 0.05), 3);
        assert_eq!(adaptive_minimum(5, 10, false, 0.05), 5);
        assert_eq!(adaptive_minimum(2, 10, true, 0.05), 2, "--rounds 2 is kept");
        assert_eq!(
            adaptive_minimum(3, 3, false, 0.05),
            3,
            "fixed rounds are kept"
        );
    }
}
