//! `results.json`: the full document, pretty-printed.

use super::Exporter;
use crate::results::Results;

/// The JSON exporter.
pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn file_name(&self) -> &'static str {
        "results.json"
    }
    fn render(&self, results: &Results) -> anyhow::Result<Vec<u8>> {
        let mut out = serde_json::to_vec_pretty(results)?;
        out.push(b'\n');
        Ok(out)
    }
}
