//! The command line (clap): `Opts` and the subcommands; each subcommand's arguments live with
//! it in `commands/`.

use std::path::PathBuf;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::catalogue::Catalogue;

use crate::commands::adr::AdrArgs;
use crate::commands::compare::CompareArgs;
use crate::commands::cost::CostArgs;
use crate::commands::envs::EnvArgs;
use crate::commands::export::ExportArgs;
use crate::commands::mock_server::MockServerArgs;
use crate::commands::report::ReportArgs;
use crate::commands::rerun::RerunArgs;
use crate::commands::run::RunArgs;
use crate::commands::CommonArgs;

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
    Run(Box<RunArgs>),
    /// The worker of a `loadgen` cell: starts a service under test and drives it (the runner
    /// starts it; not for use by hand).
    #[command(hide = true)]
    Loadgen(crate::commands::loadgen::LoadgenArgs),
    /// The lab's own WebSocket chat room, the fan-out scenario's reference server (the runner
    /// starts it; not for use by hand).
    #[command(hide = true)]
    RoomServer(crate::commands::room_server::RoomServerArgs),
    /// Run again what DIR/results.json was made with (its `invocation.study`), here or on
    /// another machine; --out, --python and the like override.
    Rerun(RerunArgs),
    /// List the scenarios in the catalogue.
    List(CommonArgs),
    /// Build (or reuse) the Python environments for the given interpreters.
    Envs(EnvArgs),
    /// Interpreters the host cannot run as they are (3.14, 3.15): Debian roots made with
    /// debootstrap (`pythons add 3.14`, `pythons list`).
    Pythons(crate::commands::pythons::PythonsArgs),
    /// Serve the mock HTTP server alone until Ctrl-C.
    MockServer(MockServerArgs),
    /// Drive an HTTP address with the lab's load generator alone (open loop with --rate, as
    /// wrk2 and oha -q do); one JSON line of what it saw.
    Load(crate::commands::load::LoadArgs),
    /// Put a network distance in front of a TCP service: a delay line (round trip, jitter,
    /// bandwidth cap) on a loopback port, until Ctrl-C.
    DelayProxy(crate::commands::delay_proxy::DelayProxyArgs),
    /// Measure the mock server's delay accuracy and throughput on this machine.
    SelfCheck(crate::commands::self_check::SelfCheckArgs),
    /// Say what the machine has and what is missing, with the fix for each.
    Doctor(crate::commands::doctor::DoctorArgs),
    /// Per-request translation: asyncio time per request from a run's asyncio_ops figures, and
    /// the share of the request an interpreter upgrade would save.
    Cost(CostArgs),
    /// Regenerate results.csv, summary.md, report.html and charts/ from DIR/results.json without re-running.
    Report(ReportArgs),
    /// Regression gate: compare two runs (or two interpreters / event loops of one run) cell by
    /// cell; exit 1 when a cell is significantly worse than the threshold allows.
    Compare(CompareArgs),
    /// Write an architecture decision record (MADR) from DIR/results.json: the questions, the
    /// variants as options, the recommendation per setting, its costs and how far to trust it.
    Adr(AdrArgs),
    /// Write a run in another tool's format (`export pyperf DIR`: a pyperf suite).
    Export(ExportArgs),
    /// Write a workload of your own to start from: DIR/NAME.py (sync, threads, asyncio and
    /// multiprocessing variants of one operation) and its entry in DIR/catalogue.toml.
    NewScenario(crate::commands::new_scenario::NewScenarioArgs),
}

impl Opts {
    /// Parses the process's command line, with the help texts that quote the catalogue taken
    /// from the catalogue itself (`run --help` lists its scenarios, the ones without a service
    /// and its parameters). Where no catalogue can be read (outside a checkout, or a broken
    /// one: `run` names that error itself), the help stays generic.
    pub fn parse_quoting_catalogue() -> Opts {
        let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
        let mut cmd = Opts::command();
        if let Ok(cat) = Catalogue::load(&workloads_dir(&args)) {
            cmd = cmd.mut_subcommand("run", |run| quote_catalogue(run, &cat));
        }
        let matches = cmd.get_matches_from(args);
        Opts::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
    }
}

/// `--workloads DIR` (or `--workloads=DIR`) from the raw arguments, else the default folder.
fn workloads_dir(args: &[std::ffi::OsString]) -> PathBuf {
    let mut it = args.iter().map(|a| a.to_string_lossy());
    while let Some(a) = it.next() {
        if a == "--workloads" {
            if let Some(v) = it.next() {
                return PathBuf::from(v.as_ref());
            }
        } else if let Some(v) = a.strip_prefix("--workloads=") {
            return PathBuf::from(v);
        }
    }
    PathBuf::from("workloads")
}

/// `run`'s help with the catalogue's names where the text refers to them.
fn quote_catalogue(run: clap::Command, cat: &Catalogue) -> clap::Command {
    let names = |pick: &dyn Fn(&crate::catalogue::Scenario) -> bool| {
        cat.scenarios
            .iter()
            .filter(|s| pick(s))
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let all = names(&|_| true);
    let serviceless = names(&|s| s.services.is_empty());
    let params: std::collections::BTreeSet<&str> = cat
        .scenarios
        .iter()
        .flat_map(|s| s.params.keys().map(String::as_str))
        .collect();
    let params = params.into_iter().collect::<Vec<_>>().join(", ");
    let set = |a: clap::Arg, extra: String| {
        let base = a
            .get_long_help()
            .or(a.get_help())
            .map(ToString::to_string)
            .unwrap_or_default();
        // The addition goes before clap's "[default: ...]", which ends the text.
        let at = base.find(" [default:").unwrap_or(base.len());
        let text = format!("{}{extra}{}", &base[..at], &base[at..]);
        a.help(text.clone()).long_help(text)
    };
    run.mut_arg("scenario", |a| set(a, format!(" In the catalogue: {all}.")))
        .mut_arg("placement", |a| {
            set(
                a,
                format!(" Scenarios without a service here: {serviceless}."),
            )
        })
        .mut_arg("params", |a| {
            set(a, format!(" The catalogue's parameters: {params}."))
        })
}
