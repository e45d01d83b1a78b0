//! One document structure for every human-readable output (hyperfine's `MarkupExporter` idea):
//! the report is built once as sections of headings, paragraphs, tables and lists whose cells
//! carry a typed [`Mark`]; [`Markdown`] and [`Html`] only supply the syntax.
//!
//! Prose may use inline `code`, **bold** and *italic*; everything that carries meaning (which
//! ratio is significant, which cell failed) is a [`Mark`], never a word to search for.

use std::fmt::Write;

use crate::chart::svg::esc;

/// What a table cell means, beyond its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// Nothing to mark.
    Plain,
    /// A significant difference.
    Significant,
    /// A difference these rounds cannot tell from none (too few rounds included).
    NotSignificant,
    /// Rounds that cannot be trusted to decide.
    Inconclusive,
    /// A cell that failed, or a check that did not hold.
    Failed,
}

impl Mark {
    /// The CSS class of the mark in HTML.
    pub fn class(self) -> Option<&'static str> {
        match self {
            Mark::Plain => None,
            Mark::Significant => Some("sig"),
            Mark::NotSignificant => Some("ns"),
            Mark::Inconclusive => Some("inconclusive"),
            Mark::Failed => Some("failed"),
        }
    }
}

/// A table cell: text and what it means.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// The text (inline markup allowed).
    pub text: String,
    /// Its meaning.
    pub mark: Mark,
}

impl Cell {
    /// A marked cell.
    pub fn marked(text: impl Into<String>, mark: Mark) -> Self {
        Cell {
            text: text.into(),
            mark,
        }
    }
}

impl From<String> for Cell {
    fn from(text: String) -> Self {
        Cell::marked(text, Mark::Plain)
    }
}

impl From<&str> for Cell {
    fn from(text: &str) -> Self {
        Cell::marked(text, Mark::Plain)
    }
}

/// A table: a header row and body rows of cells.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    /// Column titles.
    pub head: Vec<String>,
    /// Body rows.
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    /// A table with these column titles and no rows yet.
    pub fn new<S: Into<String>>(head: impl IntoIterator<Item = S>) -> Self {
        Table {
            head: head.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row.
    pub fn row<C: Into<Cell>>(&mut self, cells: impl IntoIterator<Item = C>) {
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }
}

/// One block of a section.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// A paragraph.
    Para(String),
    /// A table.
    Table(Table),
    /// A bullet list.
    List(Vec<String>),
    /// A bullet list whose items have details: Markdown shows one line per item, HTML folds
    /// the details under it (`<details>`).
    Folded(Vec<(String, Vec<String>)>),
}

/// A titled section (`##`), optionally a scenario's, so its charts go with it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Section {
    /// The heading.
    pub title: String,
    /// The scenario the section belongs to, if any.
    pub scenario: Option<String>,
    /// Its content.
    pub blocks: Vec<Block>,
}

impl Section {
    /// An empty section.
    pub fn new(title: impl Into<String>, scenario: Option<&str>) -> Self {
        Section {
            title: title.into(),
            scenario: scenario.map(String::from),
            blocks: Vec::new(),
        }
    }

    /// Appends a paragraph.
    pub fn para(&mut self, text: impl Into<String>) {
        self.blocks.push(Block::Para(text.into()));
    }

    /// Appends a table (nothing for a table without rows).
    pub fn table(&mut self, t: Table) {
        if !t.rows.is_empty() {
            self.blocks.push(Block::Table(t));
        }
    }

    /// Appends a bullet list (nothing for an empty one).
    pub fn list(&mut self, items: Vec<String>) {
        if !items.is_empty() {
            self.blocks.push(Block::List(items));
        }
    }
}

/// A whole document: a title, blocks before the first section, sections.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Doc {
    /// The `#` title.
    pub title: String,
    /// What comes before the first section.
    pub intro: Vec<Block>,
    /// The sections in order.
    pub sections: Vec<Section>,
}

/// Markdown syntax.
pub struct Markdown;

impl Markdown {
    /// Escapes what would break a table cell.
    fn cell(text: &str) -> String {
        text.replace('\n', " ")
    }

    /// One block, followed by a blank line.
    pub fn block(out: &mut String, b: &Block) {
        match b {
            Block::Para(p) => {
                let _ = writeln!(out, "{p}\n");
            }
            Block::List(items) => {
                for i in items {
                    let _ = writeln!(out, "- {i}");
                }
                out.push('\n');
            }
            Block::Folded(items) => {
                for (i, _) in items {
                    let _ = writeln!(out, "- {i}");
                }
                out.push('\n');
            }
            Block::Table(t) => {
                let _ = writeln!(out, "| {} |", t.head.join(" | "));
                let _ = writeln!(out, "|{}", "---|".repeat(t.head.len()));
                for r in &t.rows {
                    let cells: Vec<String> = r.iter().map(|c| Self::cell(&c.text)).collect();
                    let _ = writeln!(out, "| {} |", cells.join(" | "));
                }
                out.push('\n');
            }
        }
    }

    /// The document as Markdown.
    pub fn render(doc: &Doc) -> String {
        let mut out = format!("# {}\n\n", doc.title);
        for b in &doc.intro {
            Self::block(&mut out, b);
        }
        for s in &doc.sections {
            let _ = writeln!(out, "## {}\n", s.title);
            for b in &s.blocks {
                Self::block(&mut out, b);
            }
        }
        out
    }
}

/// HTML syntax (fragments; `export::html` makes the page around them).
pub struct Html;

/// `*text*` as `<i>text</i>` (text not starting or ending with a space); other asterisks kept.
fn italics(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(open) = rest.find('*') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('*') {
            Some(close)
                if close > 0 && !after.starts_with(' ') && !after[..close].ends_with(' ') =>
            {
                let _ = write!(out, "<i>{}</i>", &after[..close]);
                rest = &after[close + 1..];
            }
            _ => {
                out.push('*');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

impl Html {
    /// Inline markup: escaped text with `code` spans, **bold** and *italic*.
    pub fn inline(s: &str) -> String {
        let mut out = String::new();
        for (i, part) in s.split('`').enumerate() {
            if i % 2 == 1 {
                let _ = write!(out, "<code>{}</code>", esc(part));
                continue;
            }
            for (j, p) in esc(part).split("**").enumerate() {
                if j % 2 == 1 {
                    let _ = write!(out, "<b>{p}</b>");
                } else {
                    out.push_str(&italics(p));
                }
            }
        }
        out
    }

    /// One block.
    pub fn block(out: &mut String, b: &Block) {
        match b {
            Block::Para(p) => {
                let _ = writeln!(out, "<p>{}</p>", Self::inline(p));
            }
            Block::List(items) => {
                let _ = writeln!(out, "<ul>");
                for i in items {
                    let _ = writeln!(out, "<li>{}</li>", Self::inline(i));
                }
                let _ = writeln!(out, "</ul>");
            }
            Block::Folded(items) => {
                let _ = writeln!(out, "<ul>");
                for (i, details) in items {
                    if details.is_empty() {
                        let _ = writeln!(out, "<li>{}</li>", Self::inline(i));
                        continue;
                    }
                    let _ = writeln!(
                        out,
                        "<li><details><summary>{}</summary><ul>",
                        Self::inline(i)
                    );
                    for d in details {
                        let _ = writeln!(out, "<li>{}</li>", Self::inline(d));
                    }
                    let _ = writeln!(out, "</ul></details></li>");
                }
                let _ = writeln!(out, "</ul>");
            }
            Block::Table(t) => {
                let _ = write!(out, "<table><thead><tr>");
                for h in &t.head {
                    let _ = write!(out, "<th>{}</th>", Self::inline(h));
                }
                let _ = writeln!(out, "</tr></thead><tbody>");
                for r in &t.rows {
                    let _ = write!(out, "<tr>");
                    for c in r {
                        let class = c
                            .mark
                            .class()
                            .map(|k| format!(" class=\"{k}\""))
                            .unwrap_or_default();
                        let _ = write!(out, "<td{class}>{}</td>", Self::inline(&c.text));
                    }
                    let _ = writeln!(out, "</tr>");
                }
                let _ = writeln!(out, "</tbody></table>");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> Doc {
        let mut s = Section::new("Costs", Some("io_http"));
        s.para("Per op, `ns`.");
        let mut t = Table::new(["op", "ns"]);
        t.row([
            Cell::from("a<b"),
            Cell::marked("1.02× whatever words", Mark::NotSignificant),
        ]);
        s.table(t);
        s.list(vec!["one".into(), "**two**".into()]);
        Doc {
            title: "T".into(),
            intro: vec![],
            sections: vec![s],
        }
    }

    #[test]
    fn one_document_two_syntaxes() {
        let d = doc();
        assert_eq!(
            Markdown::render(&d),
            "# T\n\n## Costs\n\nPer op, `ns`.\n\n| op | ns |\n|---|---|\n| a<b | 1.02× whatever words |\n\n- one\n- **two**\n\n"
        );
        let mut html = String::new();
        for b in &d.sections[0].blocks {
            Html::block(&mut html, b);
        }
        assert_eq!(
            html,
            "<p>Per op, <code>ns</code>.</p>\n<table><thead><tr><th>op</th><th>ns</th></tr></thead><tbody>\n<tr><td>a&lt;b</td><td class=\"ns\">1.02× whatever words</td></tr>\n</tbody></table>\n<ul>\n<li>one</li>\n<li><b>two</b></li>\n</ul>\n"
        );
        assert_eq!(italics("a *b* c * d"), "a <i>b</i> c * d");
    }
}
