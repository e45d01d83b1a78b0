//! `results.json`: the results document itself, pretty-printed (not a rendering of the report).

use crate::results::Results;

/// The JSON writer.
pub struct JsonExporter;

impl JsonExporter {
    /// The document's bytes.
    pub fn render(&self, results: &Results) -> anyhow::Result<Vec<u8>> {
        let mut out = serde_json::to_vec_pretty(results)?;
        out.push(b'\n');
        Ok(out)
    }
}
