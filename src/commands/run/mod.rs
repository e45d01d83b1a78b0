//! `asynclab run`: its arguments and four stages, each a function in its own file:
//! [`plan`] (check the flags, read the catalogue, expand the matrices, rounds per scenario) →
//! [`services`] (start what the scenarios need) → [`measure`] (the interleaved rounds,
//! results.json saved after every run) → [`write`] (every output, and the exit code).
//! A `--study` file is merged into the flags first ([`resolve`]); `--dry-run` stops
//! after the plan ([`dry_run`]); [`progress`] shows the runs done while measuring.

use std::collections::BTreeMap;
use std::path::PathBuf;

use clap::Args;

use super::envs::EnvArgs;
use crate::interrupt;
use crate::results::{SkippedPython, SkippedScenario};
use crate::runner::matrix::ParamOverride;
use crate::services::postgres::PgBackend;
use crate::study::{Study, StudyPlan};

pub mod budget;
pub mod dry_run;
pub mod hosts;
pub mod measure;
pub mod placement;
pub mod plan;
pub mod progress;
pub mod resolve;
pub mod services;
pub mod write;

pub use plan::EVENT_LOOPS;

/// `asynclab run`.
#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    /// Environments and workloads.
    #[command(flatten)]
    pub env: EnvArgs,
    /// Scenarios to run, comma-separated, or `all` (or the study file's `scenarios`).
    #[arg(long, value_delimiter = ',', required_unless_present = "study")]
    pub scenario: Vec<String>,
    /// Only these variants of each scenario, comma-separated (`asynclab list` names them), as
    /// if the catalogue listed only those: the baseline stays the scenario's when kept, else is
    /// the first kept; a comparison of its question that loses a side is left out.
    #[arg(long, value_delimiter = ',', value_name = "VARIANT[,VARIANT]")]
    pub variants: Vec<String>,
    /// A study file (TOML) with the run's choices: scenarios, params, interpreters, loops,
    /// rounds...; flags given here override it (see workloads/studies/example.toml).
    #[arg(long, value_name = "FILE.toml")]
    pub study: Option<PathBuf>,
    /// Print the plan (scenarios, cells, rounds, runs, an estimate of the time) and stop: no
    /// services, no workers, no results folder.
    #[arg(long)]
    pub dry_run: bool,
    /// Fewer rounds and the catalogue's quick parameters: each scenario runs its catalogue
    /// `quick_rounds` where it has them, else its rounds capped at 3 (`--dry-run` lists them).
    #[arg(long)]
    pub quick: bool,
    /// Results folder (default results/<timestamp>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Measured rounds of every scenario, with or without --quick (default: the scenario's
    /// `rounds` in the catalogue, else 5; under --quick its `quick_rounds`, else those capped
    /// at 3).
    #[arg(long, short = 'r')]
    pub rounds: Option<usize>,
    /// Adaptive rounds: after the rounds above, check every cell after each round and stop it
    /// once the comparisons it takes part in are settled (significantly different, equal
    /// within the noise band, or inconclusive), up to this many rounds. α is split over the
    /// looks so equal variants are called different no more often than with fixed rounds
    /// (docs/method.md). A scenario with at least this many rounds keeps them fixed.
    #[arg(long, value_name = "N")]
    pub max_rounds: Option<usize>,
    /// A time budget for the run, from the services' start: every cell runs its minimum rounds,
    /// then adaptive rounds (up to --max-rounds, default 10) go on only while the scenario's
    /// share of the budget has room for another round; the report says which comparisons it
    /// left open. E.g. 10m, 90s, 1h30m.
    #[arg(long, value_name = "DURATION")]
    pub budget: Option<budget::Budget>,
    /// Warm-up runs per cell before the first round (default: the scenario's `warmups`, else 1).
    #[arg(long, short = 'w')]
    pub warmups: Option<usize>,
    /// Event loops to compare, comma-separated (asyncio, uvloop, rsloop, zuvloop): the `loop`
    /// parameter as a matrix axis. A loop not installed in an environment is skipped, with why.
    #[arg(long = "loop", value_delimiter = ',', value_name = "LOOP[,LOOP]")]
    pub event_loops: Vec<String>,
    /// Pin every worker (and its children) to these CPUs, e.g. `--cpus 0` or `--cpus 0,1`,
    /// whatever `--placement` says about workers.
    #[arg(long, value_delimiter = ',', value_name = "CPU[,CPU]")]
    pub cpus: Vec<usize>,
    /// Where the services (and the driver) and the workers run: `shared` (the default) puts
    /// them all on the first CPU; `split` puts the services on the first CPU and their
    /// scenarios' workers on the others; `unpinned` lets the kernel place everything.
    /// Scenarios without a service get every CPU under each [default: shared].
    #[arg(long, value_enum)]
    pub placement: Option<placement::Policy>,
    /// Override a parameter for every variant: KEY=VALUE, or KEY=V1,V2 for a matrix axis.
    #[arg(long = "param", value_name = "KEY=VALUE[,VALUE]")]
    pub params: Vec<ParamOverride>,
    /// Open-loop rate sweep: `rate_per_s` as a matrix axis (requests per second), or `auto`
    /// to double from 10/s until each variant saturates; the report marks each variant's knee.
    #[arg(long, value_name = "R1,R2,...|auto")]
    pub rates: Option<crate::runner::sweep::Rates>,
    /// Where the roles run: `local` (every role on this machine, the default) or `containers`
    /// (the client, the server (mock servers, services under test) and PostgreSQL each in its
    /// own container on a private network of the local Docker engine, with its own CPU set;
    /// the run builds the image from Debian's packages when it is missing or out of date).
    /// docs/hosts.md has the details.
    #[arg(long, value_enum, value_name = "local|containers")]
    pub hosts: Option<crate::hosts::Hosts>,
    /// Put the database role on this Docker engine (`tcp://HOST:2375`, `unix:///PATH`):
    /// PostgreSQL runs in a container there, as with `--pg container` and `DOCKER_HOST`; an
    /// image the engine lacks is copied from this machine's engine, where `make docker-image`
    /// builds it. TechEmpower's --database-host.
    #[arg(long, value_name = "ENGINE")]
    pub database_host: Option<String>,
    /// Where PostgreSQL comes from [default: auto].
    #[arg(long, value_enum)]
    pub pg: Option<PgBackend>,
    /// Image for `--pg container` (and `auto`); `make docker-image` builds
    /// asynclab/postgres:15-debian locally for machines without a registry [default:
    /// postgres:16].
    #[arg(long, env = "ASYNCLAB_PG_IMAGE")]
    pub pg_image: Option<String>,
    /// Exit 1 when any cell reports errors, variants that must agree do not, or a cell is
    /// inconclusive because the machine stayed busy (what `make test-db` uses); without it only
    /// crashed or hung cells do.
    #[arg(long)]
    pub strict: bool,
    /// Run no A/A twin (a second copy of each scenario's baseline cell in every round): the
    /// report then states no resolution. For runs that check correctness, not differences
    /// (the lab's own tests set ASYNCLAB_NO_TWINS=1, but for the one that checks the twins).
    #[arg(long, env = "ASYNCLAB_NO_TWINS")]
    pub no_twins: bool,
    /// A run during which other programs used more than this many cores' worth of CPU (or the
    /// hypervisor took as much as steal) is contaminated: kept, repeated, left out [default:
    /// 0.1].
    #[arg(long, value_name = "CORES")]
    pub max_foreign_cores: Option<f64>,
    /// How many times a contaminated run is repeated in its round before the cell is left
    /// inconclusive [default: 3].
    #[arg(long, value_name = "N")]
    pub repeats: Option<usize>,
    /// Differences smaller than this fraction of the baseline are never called significant: a
    /// ratio counts only when its 95% interval lies beyond 1 ± this (criterion's noise
    /// threshold; recorded as `method.noise_threshold`) [default: 0.03, the most a ratio moved
    /// between two identical quiet runs here, rounded up].
    #[arg(long, value_name = "FRACTION")]
    pub noise_threshold: Option<f64>,
    /// Significance level of the two-sided test every verdict uses (the paired t test on
    /// per-round log ratios), strictly between 0 and 1 (recorded as `method.alpha`) [default:
    /// 0.05].
    #[arg(long, value_name = "ALPHA")]
    pub alpha: Option<f64>,
    /// Seed of the random order of the cells within each round, to replay a run's order
    /// (recorded as `method.order_seed`) [default: drawn from the clock].
    #[arg(long, value_name = "N")]
    pub order_seed: Option<u64>,
    /// Also write the results document to FILE (besides the results folder).
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    /// Also write summary.md to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_markdown: Option<PathBuf>,
    /// Also write results.csv to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<PathBuf>,
    /// Save this run as the baseline NAME (results/baselines/NAME/results.json), replacing a
    /// baseline of that name (criterion's --save-baseline).
    #[arg(long, value_name = "NAME")]
    pub save_baseline: Option<String>,
    /// Compare this run with the baseline NAME saved earlier, cell by cell, as `asynclab
    /// compare` does (criterion's --baseline); shown, not a gate.
    #[arg(long, value_name = "NAME")]
    pub baseline: Option<String>,
    /// Rounds and warm-ups of single scenarios, from a study file's `[plans.NAME]`.
    #[arg(skip)]
    pub plans: BTreeMap<String, StudyPlan>,
    /// Pass/fail thresholds by scenario, from a study file's `[thresholds]`.
    #[arg(skip)]
    pub thresholds: BTreeMap<String, Vec<String>>,
}

impl RunArgs {
    /// `--pg`, else auto.
    pub fn pg(&self) -> PgBackend {
        self.pg.unwrap_or(PgBackend::Auto)
    }

    /// `--pg-image`, else postgres:16.
    pub fn pg_image(&self) -> &str {
        self.pg_image.as_deref().unwrap_or("postgres:16")
    }

    /// `--placement`, else shared.
    pub fn placement(&self) -> placement::Policy {
        self.placement.unwrap_or(placement::Policy::Shared)
    }

    /// `--max-foreign-cores`, else the default.
    pub fn max_foreign_cores(&self) -> f64 {
        self.max_foreign_cores
            .unwrap_or(crate::runner::interference::DEFAULT_MAX_FOREIGN_CORES)
    }

    /// `--noise-threshold`, else the default.
    pub fn noise_threshold(&self) -> f64 {
        self.noise_threshold
            .unwrap_or(crate::stats::DEFAULT_NOISE_THRESHOLD)
    }

    /// `--alpha`, else the default.
    pub fn alpha(&self) -> f64 {
        self.alpha.unwrap_or(crate::stats::ALPHA)
    }

    /// `--max-rounds`, else the budget's default when `--budget` is given.
    pub fn max_rounds(&self) -> Option<usize> {
        self.max_rounds
            .or(self.budget.map(|_| budget::DEFAULT_MAX_ROUNDS))
    }

    /// `--repeats`, else the default.
    pub fn repeats(&self) -> usize {
        self.repeats
            .unwrap_or(crate::runner::interference::DEFAULT_REPEATS)
    }

    /// The command line with its study file merged in (flags given win); unchanged without
    /// `--study`.
    pub fn with_study(&self) -> anyhow::Result<RunArgs> {
        match &self.study {
            None => Ok(self.clone()),
            Some(path) => {
                let study = Study::load(path)?;
                Ok(resolve::apply(&study, &path.display().to_string(), self)?)
            }
        }
    }
}

/// Merges the `--study` file into the flags, then plans, starts the services, measures and
/// writes; the exit code of [`write::finish`].
pub fn execute(cli: &RunArgs) -> anyhow::Result<i32> {
    execute_resolved(&cli.with_study()?)
}

/// [`execute`] with the study already merged into `args` (what `rerun` calls).
pub fn execute_resolved(args: &RunArgs) -> anyhow::Result<i32> {
    let mapped;
    let args = match &args.database_host {
        Some(engine) => {
            mapped = hosts::database_on(args, engine)?;
            &mapped
        }
        None => args,
    };
    let plan = plan::plan(args)?;
    for m in &plan.missing_pythons {
        eprintln!(
            "asynclab: skipping Python {} ({}); the other interpreters run, and --strict makes this an error",
            m.spec, m.reason
        );
    }
    for name in args.save_baseline.iter().chain(&args.baseline) {
        write::check_baseline_name(name)?;
    }
    if let Some(name) = &args.baseline {
        let path = write::baseline_dir(name).join("results.json");
        if !path.is_file() {
            return Err(crate::error::UsageError::Flag {
                flag: "--baseline",
                message: format!(
                    "no baseline {name:?}: {} does not exist; save one with --save-baseline {name}",
                    path.display()
                ),
            }
            .into());
        }
    }
    let deployed = crate::hosts::Deployed::from_env()?;
    let deploy = deployed.is_none() && args.hosts == Some(crate::hosts::Hosts::Containers);
    if deploy {
        hosts::check(&plan)?;
    }
    if args.dry_run {
        dry_run::print(args, &plan);
        return Ok(0);
    }
    if deploy {
        return hosts::execute(args);
    }
    if deployed.is_none() {
        // Containers and networks of a run that was SIGKILLed.
        crate::hosts::sweep::sweep_reachable();
    }
    // Servers under test whose driver was SIGKILLed before it could stop them.
    let swept = crate::services::under_test::sweep_orphans();
    if !swept.is_empty() {
        eprintln!(
            "asynclab: stopped {} server-under-test process(es) a killed run left behind (pids {:?})",
            swept.len(),
            swept
        );
    }
    // The budget's clock starts with the services.
    let clock = std::time::Instant::now();
    // Guards that stop the services on return, error or Ctrl-C.
    let services = services::start(
        &plan,
        args.pg(),
        args.pg_image(),
        args.strict,
        deployed.as_ref(),
    )?;
    interrupt::check()?;
    let (plan, skipped) = match &services.missing {
        Some(m) => {
            let (plan, names) = plan.without(m.service);
            eprintln!(
                "asynclab: skipping {} (they need {}, which could not be had: {}); the other scenarios run, and --strict makes this an error",
                names.join(", "),
                m.service.name(),
                m.reason
            );
            let skipped = names
                .into_iter()
                .map(|scenario| SkippedScenario {
                    scenario,
                    service: m.service.name().to_string(),
                    reason: m.reason.clone(),
                })
                .collect();
            (plan, skipped)
        }
        None => (plan, Vec::new()),
    };
    let dir = write::out_dir(args)?;
    let mut results = measure::new_document(args, &plan, &services);
    results.skipped = skipped;
    results.skipped_pythons = plan
        .missing_pythons
        .iter()
        .map(|m| SkippedPython {
            python: m.spec.clone(),
            reason: m.reason.clone(),
        })
        .collect();
    eprintln!("asynclab: writing results to {}", dir.display());
    write::mark_latest(&dir);
    let (measured, outcome) =
        measure::measure(args, &plan, &services, results.clone(), &dir, clock);
    write::finish(args, &plan, results, measured, outcome, &dir)
}
