//! Command-line definitions (clap); validation that names the flag lives in `options`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::runner::matrix::ParamOverride;
use crate::services::postgres::PgBackend;

/// asynclab: does Python asyncio beat sync code, threads or processes for this workload?
#[derive(Debug, Parser)]
#[command(name = "asynclab", version, about)]
pub struct Opts {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run scenarios' matrices and write results, CSV and a summary.
    Run(RunArgs),
    /// List the scenarios in the catalogue.
    List(CommonArgs),
    /// Build (or reuse) the Python environments for the given interpreters.
    Envs(EnvArgs),
    /// Serve the mock HTTP server alone until Ctrl-C.
    MockServer(MockServerArgs),
    /// Measure the mock server's delay accuracy and throughput on this machine.
    SelfCheck,
    /// Say what the machine has and what is missing, with the fix for each.
    Doctor,
    /// Per-request translation: asyncio time per request from a run's asyncio_ops figures, and
    /// the share of the request an interpreter upgrade would save.
    Cost(CostArgs),
    /// Regenerate results.csv, summary.md, report.html and charts/ from DIR/results.json without re-running.
    Report(ReportArgs),
    /// Regression gate: compare two runs (or two interpreters / event loops of one run) cell by
    /// cell; exit 1 when a cell is significantly worse than the threshold allows.
    Compare(CompareArgs),
}

/// Where the workloads and environments live.
#[derive(Debug, Args, Clone)]
pub struct CommonArgs {
    /// Folder with catalogue.toml, harness.py and the scripts.
    #[arg(long, default_value = "workloads")]
    pub workloads: PathBuf,
}

/// `asynclab envs`.
#[derive(Debug, Args, Clone)]
pub struct EnvArgs {
    /// Shared folder options.
    #[command(flatten)]
    pub common: CommonArgs,
    /// Interpreters: versions like 3.12 or paths, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub python: Vec<String>,
    /// Folder for the environments.
    #[arg(long, default_value = ".venvs")]
    pub venvs: PathBuf,
}

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
    /// Pin every worker (and its children) to these CPUs, e.g. `--cpus 0` or `--cpus 0,1`.
    #[arg(long, value_delimiter = ',', value_name = "CPU[,CPU]")]
    pub cpus: Vec<usize>,
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
    /// Exit 1 when any cell reports errors or variants that must agree do not (what
    /// `make test-db` uses); without it only crashed or hung cells do.
    #[arg(long)]
    pub strict: bool,
}

/// `asynclab mock-server`.
#[derive(Debug, Args, Clone)]
pub struct MockServerArgs {
    /// Port (0 picks a free one).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// Address to bind; loopback unless told otherwise.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: std::net::IpAddr,
}

/// `asynclab report`.
#[derive(Debug, Args, Clone)]
pub struct ReportArgs {
    /// A results folder holding results.json.
    pub dir: PathBuf,
}

/// `asynclab compare`.
#[derive(Debug, Args, Clone)]
pub struct CompareArgs {
    /// The baseline: a results folder or a results.json path.
    pub base: PathBuf,
    /// The run to judge (a results folder or results.json); omit it with --by.
    pub new: Option<PathBuf>,
    /// Fail when a cell is worse than BASE by more than this many percent (and significantly).
    #[arg(long, default_value_t = 10.0, value_name = "PCT")]
    pub threshold: f64,
    /// The per-run number compared: throughput (higher is better), wall, cpu or rss (lower is better).
    #[arg(long, value_enum, default_value = "throughput")]
    pub metric: crate::compare::Metric,
    /// Compare within BASE: DIM is python or loop, then the baseline value and the new value
    /// (e.g. `--by python 3.10 3.12`); cells are paired by round.
    #[arg(long, num_args = 3, value_names = ["DIM", "BASE_VALUE", "NEW_VALUE"])]
    pub by: Option<Vec<String>>,
}

/// `asynclab cost`.
#[derive(Debug, Args, Clone)]
pub struct CostArgs {
    /// A results folder (or results.json) with asyncio_ops cells.
    #[arg(default_value = "results/latest")]
    pub dir: PathBuf,
    /// Tasks created and awaited per request.
    #[arg(long, default_value_t = 20)]
    pub tasks: u32,
    /// Queue put/get pairs per request.
    #[arg(long, default_value_t = 40)]
    pub queue_ops: u32,
    /// TCP round trips per request.
    #[arg(long, default_value_t = 3)]
    pub round_trips: u32,
    /// The request's total time in milliseconds, for the share an upgrade saves.
    #[arg(long, default_value_t = 20.0)]
    pub request_ms: f64,
    /// The interpreter upgrades are measured from (default: the oldest in the run).
    #[arg(long)]
    pub base: Option<String>,
}
