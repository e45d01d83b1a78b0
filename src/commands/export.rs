//! `asynclab export FORMAT DIR`: a run's results in another tool's format. `pyperf` writes one
//! pyperf 2.x suite file per run folder ([`crate::export::pyperf`]), so `python -m pyperf
//! compare_to a.json b.json`, `stats` and `hist` read the lab's clean runs.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Subcommand};

use super::adr::results_dir;
use crate::export::{pyperf, write_atomic};

/// `asynclab export`.
#[derive(Debug, Args, Clone)]
pub struct ExportArgs {
    /// The format to write.
    #[command(subcommand)]
    pub format: ExportFormat,
}

/// The formats `export` writes.
#[derive(Debug, Subcommand, Clone)]
pub enum ExportFormat {
    /// pyperf's JSON: one benchmark per cell (name = cell id), values = wall seconds per
    /// operation of each clean run.
    Pyperf(PyperfArgs),
}

/// `asynclab export pyperf`.
#[derive(Debug, Args, Clone)]
pub struct PyperfArgs {
    /// A results folder holding results.json (or the results.json itself).
    pub dir: PathBuf,
    /// Folder to write `<run folder name>.json` into (default: DIR/pyperf.json).
    #[arg(long, value_name = "OUTDIR")]
    pub out: Option<PathBuf>,
}

/// Writes the export; prints where, and which cells had no clean run to export.
pub fn execute(a: &ExportArgs) -> anyhow::Result<i32> {
    let ExportFormat::Pyperf(p) = &a.format;
    let results = crate::analysis::summary::load(&p.dir)?;
    let dir = results_dir(&p.dir);
    let file = match &p.out {
        None => dir.join("pyperf.json"),
        Some(out) => {
            std::fs::create_dir_all(out)
                .with_context(|| format!("--out: cannot create {}", out.display()))?;
            let name = dir
                .canonicalize()
                .ok()
                .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_else(|| "results".into());
            out.join(format!("{name}.json"))
        }
    };
    let suite = pyperf::suite(&results);
    write_atomic(&file, &serde_json::to_vec_pretty(&suite)?)?;
    for id in pyperf::left_out(&results) {
        eprintln!("note: {id} has no clean run with operations; left out of the pyperf suite");
    }
    println!(
        "pyperf suite written to {} ({} benchmark(s), {})",
        file.display(),
        suite["benchmarks"].as_array().map_or(0, Vec::len),
        pyperf::VALUE_MEANING
    );
    Ok(0)
}
