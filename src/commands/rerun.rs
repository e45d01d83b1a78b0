//! `asynclab rerun DIR`: runs again what DIR/results.json was made with — the resolved study
//! in its `invocation` block — on this machine or another; flags given here override it.

use std::path::PathBuf;

use clap::Args;

use super::envs::EnvArgs;
use super::run::placement::Policy;
use super::run::{self, resolve, RunArgs};
use crate::error::UsageError;
use crate::results::{json_path, Results};
use crate::services::postgres::PgBackend;

/// `asynclab rerun`.
#[derive(Debug, Args, Clone)]
pub struct RerunArgs {
    /// The results folder (or results.json) to run again.
    pub dir: PathBuf,
    /// Environments and workloads; `--python` replaces the recorded interpreters.
    #[command(flatten)]
    pub env: EnvArgs,
    /// Results folder of the new run (default results/<timestamp>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Where PostgreSQL comes from, instead of the recorded choice.
    #[arg(long, value_enum)]
    pub pg: Option<PgBackend>,
    /// Image for `--pg container`, instead of the recorded one.
    #[arg(long, env = "ASYNCLAB_PG_IMAGE")]
    pub pg_image: Option<String>,
    /// Where services and workers run (shared, split, unpinned), instead of the recorded one.
    #[arg(long, value_enum)]
    pub placement: Option<Policy>,
    /// Pin the workers to these CPUs, instead of the recorded ones.
    #[arg(long, value_delimiter = ',', value_name = "CPU[,CPU]")]
    pub cpus: Vec<usize>,
    /// Print the plan and stop (see `run --dry-run`).
    #[arg(long)]
    pub dry_run: bool,
}

/// The `run` command line these flags stand for, before the recorded study is merged in.
fn flags(a: &RerunArgs) -> RunArgs {
    RunArgs {
        env: a.env.clone(),
        scenario: Vec::new(),
        variants: Vec::new(),
        study: None,
        dry_run: a.dry_run,
        quick: false,
        out: a.out.clone(),
        rounds: None,
        max_rounds: None,
        budget: None,
        warmups: None,
        event_loops: Vec::new(),
        cpus: a.cpus.clone(),
        placement: a.placement,
        params: Vec::new(),
        rates: None,
        hosts: None,
        database_host: None,
        pg: a.pg,
        pg_image: a.pg_image.clone(),
        strict: false,
        no_twins: false,
        max_foreign_cores: None,
        repeats: None,
        noise_threshold: None,
        alpha: None,
        // A rerun draws its own order: it reproduces the run, not its luck.
        order_seed: None,
        export_json: None,
        export_markdown: None,
        export_csv: None,
        save_baseline: None,
        baseline: None,
        plans: Default::default(),
        thresholds: Default::default(),
    }
}

/// How to run a document from before reruns by hand, from what it does record.
fn by_hand(doc: &Results) -> String {
    let mut scenarios: Vec<String> = doc.scenarios.keys().cloned().collect();
    for c in &doc.cells {
        if !scenarios.contains(&c.scenario) {
            scenarios.push(c.scenario.clone());
        }
    }
    let pythons: Vec<String> = doc
        .env
        .pythons
        .iter()
        .map(|p| p.version.split('.').take(2).collect::<Vec<_>>().join("."))
        .collect();
    let mut cmd = format!(
        "asynclab run --scenario {} --python {} --rounds {} --warmups {}",
        scenarios.join(","),
        pythons.join(","),
        doc.method.rounds,
        doc.method.warmups
    );
    if doc.method.quick {
        cmd.push_str(" --quick");
    }
    cmd
}

/// Loads DIR/results.json, merges its study with the flags, and runs it.
pub fn execute(a: &RerunArgs) -> anyhow::Result<i32> {
    let doc = Results::load(&a.dir)?;
    let file = json_path(&a.dir).display().to_string();
    let Some(invocation) = &doc.invocation else {
        return Err(UsageError::Study(format!(
            "{file} predates reruns (it has no invocation block); run it by hand: {} (each cell's parameters are in the document; add --param KEY=VALUE for any that differ from the catalogue's)",
            by_hand(&doc)
        ))
        .into());
    };
    let source = format!("{file} (invocation.study)");
    let args = resolve::apply(&invocation.study, &source, &flags(a))?;
    eprintln!(
        "asynclab: rerunning {} ({})",
        file,
        invocation.argv.join(" ")
    );
    run::execute_resolved(&args)
}
