//! asynclab: does Python asyncio beat sync code, threads or processes for this workload shape?
//!
//! Data flows one way: options -> catalogue -> matrix of cells -> scheduler -> executor ->
//! child process -> result -> stats -> exporters. [`run`] is the whole program, so tests call
//! it directly; `main.rs` only parses and prints errors.
//!
//! Modules:
//! - [`cli`]: `Opts` and the `Command` enum; [`commands`]: one file per subcommand, owning its
//!   arguments, its flag checks and its `execute` ([`commands::run`] in stages: plan, start
//!   services, measure, write).
//! - [`catalogue`]: workloads/catalogue.toml; [`results`]: the results document and its one
//!   loader; [`error`]: usage errors naming the flag and the fix; [`budget`]: `--budget`'s
//!   durations; [`study`]: study files and
//!   the resolved study each results.json embeds (what `rerun` runs again); [`toml_input`]: the
//!   key path and line of a fault in either.
//! - [`runner`]: matrix, interleaving scheduler, process executor, sampler, rate sweeps;
//!   [`stats`]: medians, intervals, tests; [`python`]: interpreters and environments;
//!   [`envinfo`] and [`doctor`]: the machine.
//! - [`services`]: the servers the lab runs (mock HTTP, TCP echo, PostgreSQL) and the Python
//!   services under test it starts for `loadgen` cells; [`loadgen`]: the lab's own HTTP load
//!   generator (open and closed loop) that drives them.
//! - [`reference`]: the Rust reference clients (reqwest, tokio-postgres) whose throughput is
//!   the ceiling each Python variant is shown as a fraction of.
//! - [`analysis`]: the report model derived from the results; [`export`] and [`chart`]:
//!   results.json, CSV, summary.md, report.html, charts; [`format`]: numbers for tables;
//!   [`extras`]: the typed scenario-specific figures; [`compare`]: the regression gate
//!   (text, Markdown or JSON, with environment warnings); `export::adr`: a decision record;
//!   `export::pyperf`: a pyperf suite;
//!   [`cost`]: asyncio time per request.
//! - [`hosts`]: where the client, server and database roles run (`--hosts containers`: each in
//!   its own container), the round trips between them, and the sweep of what a killed run left.
//! - [`interrupt`]: Ctrl-C stops workers and keeps what was measured.
//! - [`procfs`]: every read of /proc (process stat, status, threads, children; /proc/stat),
//!   beneath the runner and the services.

pub mod affinity;
pub mod analysis;
pub mod budget;
pub mod catalogue;
pub mod chart;
pub mod cli;
pub mod commands;
pub mod compare;
pub mod cost;
pub mod doctor;
pub mod envinfo;
pub mod error;
pub mod export;
pub mod extras;
pub mod format;
pub mod hosts;
pub mod interrupt;
pub mod loadgen;
pub mod procfs;
pub mod python;
pub mod reference;
pub mod results;
pub mod runner;
pub mod services;
pub mod stats;
pub mod study;
pub mod threshold;
pub mod toml_input;

use cli::Command;
pub use cli::Opts;

/// Runs a parsed command line; the exit code on success.
pub fn run(opts: Opts) -> anyhow::Result<i32> {
    interrupt::install();
    match opts.command {
        Command::Run(a) => commands::run::execute(&a),
        Command::Rerun(a) => commands::rerun::execute(&a),
        Command::Loadgen(a) => commands::loadgen::execute(&a),
        Command::RoomServer(a) => commands::room_server::execute(&a),
        Command::List(a) => commands::list::execute(&a),
        Command::Envs(a) => commands::envs::execute(&a),
        Command::Pythons(a) => commands::pythons::execute(&a),
        Command::MockServer(a) => commands::mock_server::execute(&a),
        Command::Load(a) => commands::load::execute(&a),
        Command::DelayProxy(a) => commands::delay_proxy::execute(&a),
        Command::SelfCheck(args) => commands::self_check::execute(&args),
        Command::Doctor(a) => commands::doctor::execute(&a),
        Command::Cost(a) => commands::cost::execute(&a),
        Command::Report(a) => commands::report::execute(&a),
        Command::Compare(a) => commands::compare::execute(&a),
        Command::Adr(a) => commands::adr::execute(&a),
        Command::Export(a) => commands::export::execute(&a),
        Command::NewScenario(a) => commands::new_scenario::execute(&a),
    }
}
