//! Stage 4 of `asynclab run`: the results folder, every output written from the measured
//! cells, and the exit-code policy (1 for failed cells, and with `--strict` for errors and
//! disagreeing variants).

use std::path::{Path, PathBuf};

use anyhow::Context;

use super::plan::RunPlan;
use super::RunArgs;
use crate::error::UsageError;
use crate::results::{CellStatus, Results};
use crate::runner::checks;
use crate::{analysis, envinfo, export};

/// The results folder: `--out`, or `results/<timestamp>`; refuses to overwrite results.
pub fn out_dir(args: &RunArgs) -> anyhow::Result<PathBuf> {
    let dir = match &args.out {
        Some(d) => d.clone(),
        None => {
            PathBuf::from("results").join(chrono::Utc::now().format("%Y%m%d-%H%M%S").to_string())
        }
    };
    if dir.join("results.json").exists() {
        return Err(UsageError::Flag {
            flag: "--out",
            message: format!("{} already holds results.json; choose a new folder so no measurement is overwritten", dir.display()),
        }
        .into());
    }
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("--out: cannot create {}", dir.display()))?;
    Ok(dir)
}

/// Points `results/latest` at the newest run (best effort).
pub fn mark_latest(dir: &Path) {
    if let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) {
        let link = parent.join("latest");
        let _ = std::fs::remove_file(&link);
        let _ = std::os::unix::fs::symlink(name, &link);
    }
}

/// Completes the document (cells, sweeps, load after, disagreements) and writes every output
/// into `dir` — also after an interrupted or failed measurement, whose error is then returned.
/// Otherwise the exit code: 1 when a cell failed, or with `--strict` when a cell had errors or
/// variants that must agree did not; else 0.
pub fn finish(
    args: &RunArgs,
    plan: &RunPlan,
    mut results: Results,
    measured: super::measure::Measured,
    outcome: anyhow::Result<()>,
    dir: &Path,
) -> anyhow::Result<i32> {
    results.cells = measured.cells;
    results.ceilings = measured.ceilings;
    analysis::summary::derive(&mut results);
    results.env.load_avg_after = Some(envinfo::load_avg());
    let disagreements = checks::disagreements(&results.cells, &plan.scenario_refs());
    results.env.warnings.extend(disagreements.iter().cloned());
    let summary = export::write_all(&results, dir)?;
    outcome?;
    print!("{summary}");
    Ok(exit_code(&results, &disagreements, args.strict, dir))
}

/// Says what was skipped and what failed; the exit code of a run that measured to the end.
fn exit_code(results: &Results, disagreements: &[String], strict: bool, dir: &Path) -> i32 {
    let failed: Vec<&str> = results
        .cells
        .iter()
        .filter(|c| c.status == CellStatus::Failed)
        .map(|c| c.id.as_str())
        .collect();
    println!("asynclab: report in {}", dir.join("summary.md").display());
    for c in results
        .cells
        .iter()
        .filter(|c| c.status == CellStatus::Skipped)
    {
        let why = c.failure.as_deref().unwrap_or("");
        eprintln!("asynclab: skipped {}: {why}", c.id);
    }
    if !failed.is_empty() {
        eprintln!(
            "asynclab: {} cell(s) failed ({}); see the failure column of {}",
            failed.len(),
            failed.join(", "),
            dir.join("summary.md").display()
        );
        return 1;
    }
    let inconclusive: Vec<String> = results
        .cells
        .iter()
        .filter_map(|c| {
            crate::analysis::measured::busy_machine(c)
                .map(|why| format!("{} inconclusive: {why}", c.id))
        })
        .collect();
    if !inconclusive.is_empty() && !strict {
        eprintln!(
            "asynclab: {} cell(s) inconclusive: the machine stayed busy through every repeat of some round; their figures decide nothing (stop other work and re-run, or see --max-foreign-cores)",
            inconclusive.len()
        );
    }
    if strict {
        let with_errors: Vec<String> = results
            .cells
            .iter()
            .filter_map(|c| {
                c.summary
                    .as_ref()
                    .filter(|s| s.errors > 0)
                    .map(|s| format!("{} ({} errors)", c.id, s.errors))
            })
            .collect();
        for line in with_errors
            .iter()
            .chain(disagreements.iter())
            .chain(inconclusive.iter())
        {
            eprintln!("asynclab: --strict: {line}");
        }
        if !with_errors.is_empty() || !disagreements.is_empty() || !inconclusive.is_empty() {
            return 1;
        }
    }
    0
}
