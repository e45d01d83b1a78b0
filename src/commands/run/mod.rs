//! `asynclab run`: its arguments and four stages, each a function in its own file:
//! [`plan`] (check the flags, read the catalogue, expand the matrices, rounds per scenario) →
//! [`services`] (start what the scenarios need) → [`measure`] (the interleaved rounds,
//! results.json saved after every run) → [`write`] (every output, and the exit code).

use std::path::PathBuf;

use clap::Args;

use super::envs::EnvArgs;
use crate::interrupt;
use crate::runner::matrix::ParamOverride;
use crate::services::postgres::PgBackend;

pub mod measure;
pub mod placement;
pub mod plan;
pub mod services;
pub mod write;

pub use plan::EVENT_LOOPS;

/// `asynclab run`.
#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    /// Environments and workloads.
    #[command(flatten)]
    pub env: EnvArgs,
    /// Scenarios to run, comma-separated, or `all`.
    #[arg(long, value_delimiter = ',', required = true)]
    pub scenario: Vec<String>,
    /// Fewer rounds (3) and the catalogue's quick parameters.
    #[arg(long)]
    pub quick: bool,
    /// Results folder (default results/<timestamp>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Measured rounds (default: the scenario's `rounds` in the catalogue, else 5; at most 3
    /// with --quick).
    #[arg(long)]
    pub rounds: Option<usize>,
    /// Warm-up runs per cell before the first round (default: the scenario's `warmups`, else 1).
    #[arg(long)]
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
    /// Scenarios without a service (cpu, memory) get every CPU under each.
    #[arg(long, value_enum, default_value = "shared")]
    pub placement: placement::Policy,
    /// Override a parameter for every variant: KEY=VALUE, or KEY=V1,V2 for a matrix axis.
    #[arg(long = "param", value_name = "KEY=VALUE[,VALUE]")]
    pub params: Vec<ParamOverride>,
    /// Open-loop rate sweep: `rate_per_s` as a matrix axis (requests per second), or `auto`
    /// to double from 10/s until each variant saturates; the report marks each variant's knee.
    #[arg(long, value_name = "R1,R2,...|auto")]
    pub rates: Option<crate::runner::sweep::Rates>,
    /// Where PostgreSQL comes from.
    #[arg(long, value_enum, default_value = "auto")]
    pub pg: PgBackend,
    /// Image for `--pg container` (and `auto`); `make docker-image` builds
    /// asynclab/postgres:15-debian locally for machines without a registry.
    #[arg(long, env = "ASYNCLAB_PG_IMAGE", default_value = "postgres:16")]
    pub pg_image: String,
    /// Exit 1 when any cell reports errors, variants that must agree do not, or a cell is
    /// inconclusive because the machine stayed busy (what `make test-db` uses); without it only
    /// crashed or hung cells do.
    #[arg(long)]
    pub strict: bool,
    /// A run during which other programs used more than this many cores' worth of CPU (or the
    /// hypervisor took as much as steal) is contaminated: kept, repeated, left out.
    #[arg(long, value_name = "CORES", default_value_t = crate::runner::interference::DEFAULT_MAX_FOREIGN_CORES)]
    pub max_foreign_cores: f64,
    /// How many times a contaminated run is repeated in its round before the cell is left
    /// inconclusive.
    #[arg(long, value_name = "N", default_value_t = crate::runner::interference::DEFAULT_REPEATS)]
    pub repeats: usize,
}

/// Plans, starts the services, measures and writes; the exit code of [`write::finish`].
pub fn execute(args: &RunArgs) -> anyhow::Result<i32> {
    let plan = plan::plan(args)?;
    // Guards that stop the services on return, error or Ctrl-C.
    let services = services::start(&plan, args.pg, &args.pg_image)?;
    interrupt::check()?;
    let dir = write::out_dir(args)?;
    let results = measure::new_document(args, &plan, &services);
    eprintln!("asynclab: writing results to {}", dir.display());
    write::mark_latest(&dir);
    let (cells, outcome) = measure::measure(args, &plan, &services, results.clone(), &dir);
    write::finish(args, &plan, results, cells, outcome, &dir)
}
