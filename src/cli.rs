//! Command-line definitions (clap); validation that names the flag lives in `options`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::fixtures::postgres::PgBackend;
use crate::runner::matrix::ParamOverride;

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
    /// Regenerate results.csv and summary.md from DIR/results.json without re-running.
    Report(ReportArgs),
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
    /// Measured rounds (default 5, or 3 with --quick).
    #[arg(long)]
    pub rounds: Option<usize>,
    /// Warm-up runs per cell before the first round.
    #[arg(long, default_value_t = 1)]
    pub warmups: usize,
    /// Override a parameter for every variant: KEY=VALUE, or KEY=V1,V2 for a matrix axis.
    #[arg(long = "param", value_name = "KEY=VALUE[,VALUE]")]
    pub params: Vec<ParamOverride>,
    /// Where PostgreSQL comes from.
    #[arg(long, value_enum, default_value = "auto")]
    pub pg: PgBackend,
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
