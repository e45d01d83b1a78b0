//! Writes a results document out in several formats behind one `Exporter` interface.

mod csv;
pub mod decision;
mod html;
mod json;
mod markdown;
pub mod runtime_tables;
mod study_tables;

pub use self::csv::CsvExporter;
pub use self::html::HtmlExporter;
pub use self::json::JsonExporter;
pub use self::markdown::{num, MarkdownExporter};

use std::io::Write;
use std::path::Path;

use anyhow::Context;

use crate::results::Results;

/// One output format.
pub trait Exporter {
    /// File name inside the results folder.
    fn file_name(&self) -> &'static str;
    /// Renders the document.
    fn render(&self, results: &Results) -> anyhow::Result<Vec<u8>>;
}

/// Every exporter, in the order they are written.
pub fn all() -> Vec<Box<dyn Exporter>> {
    vec![
        Box::new(JsonExporter),
        Box::new(CsvExporter),
        Box::new(MarkdownExporter),
        Box::new(HtmlExporter),
    ]
}

/// Writes a file atomically: a temp file in the same folder, fsync, rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot write in {}", dir.display()))?;
    tmp.write_all(bytes)
        .and_then(|_| tmp.as_file().sync_all())
        .with_context(|| format!("cannot write {}", path.display()))?;
    tmp.persist(path)
        .with_context(|| format!("cannot replace {}", path.display()))?;
    Ok(())
}

/// Writes every format into `dir`, and the charts into `dir/charts/` (SVG and PNG).
pub fn write_all(results: &Results, dir: &Path) -> anyhow::Result<()> {
    for e in all() {
        write_atomic(&dir.join(e.file_name()), &e.render(results)?)?;
    }
    crate::chart::write_charts(results, dir)?;
    Ok(())
}

/// The parameters of a cell as `k=v` pairs.
pub fn params_text(
    params: &std::collections::BTreeMap<String, serde_json::Value>,
    keys: &[String],
) -> String {
    keys.iter()
        .filter_map(|k| {
            params
                .get(k)
                .map(|v| format!("{k}={}", v.to_string().trim_matches('"')))
        })
        .collect::<Vec<_>>()
        .join(" ")
}
