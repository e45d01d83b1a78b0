//! `summary.md`: the report document in Markdown, for pasting into a decision record.

use super::markup::Markdown;
use super::{Exporter, Outputs};

/// The Markdown exporter.
pub struct MarkdownExporter;

impl Exporter for MarkdownExporter {
    fn file_name(&self) -> &'static str {
        "summary.md"
    }
    fn render(&self, o: &Outputs) -> anyhow::Result<Vec<u8>> {
        Ok(Markdown::render(&o.doc).into_bytes())
    }
}
