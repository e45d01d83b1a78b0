//! Renders the report model (`analysis`) into files: `summary.md`, `report.html` and
//! `results.csv` behind one [`Exporter`] interface, plus `results.json` (the results document
//! itself) and the charts. The report is analysed once, built into one [`markup::Doc`] once and
//! its charts drawn once, whatever the number of formats. [`adr`] renders the same model as
//! a decision record (`asynclab adr`), [`pyperf`] the runs as a pyperf suite (`asynclab export
//! pyperf`).

pub mod adr;
mod answer_tables;
mod csv;
mod decision_section;
pub mod document;
mod fanout_tables;
mod held_tables;
mod html;
pub mod json;
mod markdown;
pub mod markup;
mod network_tables;
pub mod pyperf;
mod resolution_section;
pub use resolution_section::line as resolution_line;
pub use scenario_tables::ratio_text;
mod role_tables;
mod runtime_tables;
mod scenario_tables;
mod service_tables;
mod slow_tables;
mod sweep_tables;
pub mod terminal;

pub use self::csv::CsvExporter;
pub use self::html::HtmlExporter;
pub use self::json::JsonExporter;
pub use self::markdown::MarkdownExporter;

use std::io::Write;
use std::path::Path;

use anyhow::Context;

use crate::analysis::{self, Report};
use crate::chart::{self, ChartFile};
use crate::results::Results;

/// What every report format renders: the analysed report, its document and its charts.
pub struct Outputs<'a> {
    /// The analysis of the results.
    pub report: &'a Report<'a>,
    /// The report as one document.
    pub doc: markup::Doc,
    /// Every chart.
    pub charts: Vec<ChartFile>,
}

impl<'a> Outputs<'a> {
    /// Builds the document and draws the charts of a report.
    pub fn new(report: &'a Report<'a>) -> Self {
        Outputs {
            report,
            doc: document::build(report),
            charts: chart::render_all(report),
        }
    }
}

/// One report format.
pub trait Exporter {
    /// File name inside the results folder.
    fn file_name(&self) -> &'static str;
    /// Renders the report.
    fn render(&self, out: &Outputs) -> anyhow::Result<Vec<u8>>;
}

/// Every report format, in the order they are written.
pub fn all() -> Vec<Box<dyn Exporter>> {
    vec![
        Box::new(CsvExporter),
        Box::new(MarkdownExporter),
        Box::new(HtmlExporter),
    ]
}

/// Writes a file atomically: a temp file in the same folder, fsync, rename. The file gets
/// the usual mode (0666 less the umask, 0644 under the common umask 022), not the temp file's
/// private 0600, so a shared results folder is readable by others.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)
        .with_context(|| format!("cannot write in {}", dir.display()))?;
    tmp.write_all(bytes)
        .and_then(|_| tmp.as_file().sync_all())
        .with_context(|| format!("cannot write {}", path.display()))?;
    tmp.persist(path)
        .with_context(|| format!("cannot replace {}", path.display()))?;
    Ok(())
}

/// Writes `results.json` into `dir`, atomically.
pub fn write_results(results: &Results, dir: &Path) -> anyhow::Result<()> {
    write_atomic(&dir.join("results.json"), &JsonExporter.render(results)?)
}

/// Writes every report format into `dir` and the charts into `dir/charts/` (SVG and PNG),
/// from one analysis; `results.json` is left as it is. Returns the terminal summary of the
/// same analysis ([`terminal`]).
pub fn write_reports(results: &Results, dir: &Path) -> anyhow::Result<String> {
    let report = analysis::analyze(results);
    let outputs = Outputs::new(&report);
    for e in all() {
        write_atomic(&dir.join(e.file_name()), &e.render(&outputs)?)?;
    }
    let charts_dir = dir.join("charts");
    std::fs::create_dir_all(&charts_dir)
        .with_context(|| format!("cannot create {}", charts_dir.display()))?;
    for c in &outputs.charts {
        write_atomic(
            &charts_dir.join(format!("{}.svg", c.name)),
            c.svg.as_bytes(),
        )?;
        let png =
            chart::png::svg_to_png(&c.svg).with_context(|| format!("rendering {}.png", c.name))?;
        write_atomic(&charts_dir.join(format!("{}.png", c.name)), &png)?;
    }
    Ok(terminal::render(&report))
}

/// Writes `results.json` and every report format; returns the terminal summary.
pub fn write_all(results: &Results, dir: &Path) -> anyhow::Result<String> {
    write_results(results, dir)?;
    write_reports(results, dir)
}

#[cfg(test)]
mod tests;
