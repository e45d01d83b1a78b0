//! `asynclab report DIR`: rebuilds summary.md, results.csv, report.html and charts/ from
//! DIR/results.json, which it only reads: an older run's document is never rewritten.

use std::path::PathBuf;

use clap::Args;

use crate::export;

/// `asynclab report`.
#[derive(Debug, Args, Clone)]
pub struct ReportArgs {
    /// A results folder holding results.json.
    pub dir: PathBuf,
}

/// Loads the document and writes every report from it; results.json is left as it is.
pub fn execute(a: &ReportArgs) -> anyhow::Result<i32> {
    let results = crate::analysis::summary::load(&a.dir.join("results.json"))?;
    let summary = export::write_reports(&results, &a.dir)?;
    print!("{summary}");
    println!("report regenerated in {}", a.dir.display());
    Ok(0)
}
