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

/// Where baseline `name` is kept.
pub fn baseline_dir(name: &str) -> PathBuf {
    PathBuf::from("results").join("baselines").join(name)
}

/// A baseline's name: letters, digits, `-`, `_` and `.` (it names a folder).
pub fn check_baseline_name(name: &str) -> anyhow::Result<()> {
    let ok = !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if !ok {
        return Err(UsageError::Flag {
            flag: "--baseline/--save-baseline",
            message: format!(
                "{name:?} is not a baseline name; use letters, digits, '-', '_' and '.'"
            ),
        }
        .into());
    }
    Ok(())
}

/// Saves the run as a baseline and compares it with one, as asked.
fn baselines(args: &RunArgs, results: &Results, dir: &Path) -> anyhow::Result<()> {
    if let Some(name) = &args.baseline {
        let base_dir = baseline_dir(name);
        let base = analysis::summary::load(&base_dir)?;
        let gate = crate::compare::Gate {
            metric: crate::compare::Metric::Throughput,
            threshold_pct: crate::compare::DEFAULT_THRESHOLD * 100.0,
            alpha: args.alpha(),
        };
        let names = (format!("baseline {name}"), dir.display().to_string());
        let report = crate::compare::compare_runs(&base, results, gate, (&names.0, &names.1))?;
        println!("against the baseline {name} ({}):", base_dir.display());
        print!("{}", crate::compare::render(&report));
    }
    if let Some(name) = &args.save_baseline {
        let to = baseline_dir(name);
        std::fs::create_dir_all(&to)
            .with_context(|| format!("--save-baseline: cannot create {}", to.display()))?;
        std::fs::copy(dir.join("results.json"), to.join("results.json"))
            .with_context(|| format!("--save-baseline: cannot write {}", to.display()))?;
        println!("asynclab: saved as the baseline {name} ({})", to.display());
    }
    Ok(())
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
    results.twins = measured.twins;
    results.ceilings = measured.ceilings;
    analysis::summary::derive(&mut results);
    results.env.load_avg_after = Some(envinfo::load_avg());
    let disagreements = checks::disagreements(&results.cells, &plan.scenario_refs());
    results.env.warnings.extend(disagreements.iter().cloned());
    let summary = export::write_all(&results, dir)?;
    for (file, copy) in [
        ("results.json", &args.export_json),
        ("summary.md", &args.export_markdown),
        ("results.csv", &args.export_csv),
    ] {
        if let Some(to) = copy {
            std::fs::copy(dir.join(file), to).with_context(|| {
                format!(
                    "cannot export {file} to {}: is its folder there?",
                    to.display()
                )
            })?;
        }
    }
    outcome?;
    print!("{summary}");
    baselines(args, &results, dir)?;
    let code = exit_code(&results, &disagreements, args.strict, dir);
    let missed = analysis::thresholds::check(&results)
        .iter()
        .filter(|c| !c.passed)
        .count();
    if missed > 0 {
        eprintln!("asynclab: {missed} threshold check(s) failed (the thresholds lines above)");
        return Ok(code.max(1));
    }
    Ok(code)
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
