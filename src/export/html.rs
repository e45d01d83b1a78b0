//! `report.html`: one self-contained page (inline CSS, inline SVG charts, no script, no
//! network): `summary.md` itself turned into HTML — so the tables, significance marks,
//! warnings and environment are always the same — with each scenario's charts in its section.

use std::fmt::Write;

use super::{Exporter, MarkdownExporter};
use crate::chart::{self, svg::esc, ChartFile};
use crate::results::Results;

/// The HTML exporter.
pub struct HtmlExporter;

const CSS: &str = "body{font-family:'DejaVu Sans',Verdana,Arial,sans-serif;color:#222;max-width:1100px;margin:24px auto;padding:0 16px;line-height:1.45}\
h1{font-size:1.6em;margin-bottom:.2em}h2{margin-top:2em;border-bottom:1px solid #ddd;padding-bottom:.2em}\
table{border-collapse:collapse;font-size:13px;margin:1em 0}th,td{border:1px solid #d5d5d5;padding:4px 8px;text-align:left;vertical-align:top}\
th{background:#f3f3f3}\
td.sig{font-weight:bold}td.ns{color:#777;font-style:italic}td.failed{color:#b00020}\
figure{margin:1.2em 0}figure svg{max-width:100%;height:auto;display:block;border:1px solid #eee}\
p.note{color:#555;font-size:13px}code{background:#f5f5f5;padding:0 3px}";

/// The CSS class of a ratio cell: `sig`, `ns` (not significant) or none.
fn ratio_class(text: &str) -> &'static str {
    if text.contains("not significant") {
        "ns"
    } else if text.contains("significant") {
        "sig"
    } else {
        ""
    }
}

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

/// Inline Markdown: escaped text with `code` spans and **bold**.
fn md_inline(s: &str) -> String {
    let mut out = String::new();
    for (i, part) in s.split('`').enumerate() {
        if i % 2 == 1 {
            let _ = write!(out, "<code>{}</code>", esc(part));
        } else {
            for (j, p) in esc(part).split("**").enumerate() {
                if j % 2 == 1 {
                    let _ = write!(out, "<b>{p}</b>");
                    continue;
                }
                out.push_str(&italics(p));
            }
        }
    }
    out
}

/// Turns the Markdown that summary.md is written in (headings, pipe tables, bullet lists,
/// paragraphs; `code`, **bold**, *italic*) into HTML. Table cells with a ratio verdict get the
/// class `sig` or `ns`, failed cells `failed`.
pub fn markdown_to_html(md: &str) -> String {
    let mut out = String::new();
    let lines: Vec<&str> = md.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_end();
        if line.is_empty() {
            i += 1;
        } else if let Some(h) = line.strip_prefix("### ") {
            let _ = writeln!(out, "<h3>{}</h3>", md_inline(h));
            i += 1;
        } else if let Some(h) = line.strip_prefix("## ") {
            let _ = writeln!(out, "<h2>{}</h2>", md_inline(h));
            i += 1;
        } else if line.starts_with('|') {
            let cells = |l: &str| -> Vec<String> {
                l.trim()
                    .trim_matches('|')
                    .split('|')
                    .map(|c| md_inline(c.trim()))
                    .collect()
            };
            let _ = write!(out, "<table><thead><tr>");
            for c in cells(line) {
                let _ = write!(out, "<th>{c}</th>");
            }
            let _ = writeln!(out, "</tr></thead><tbody>");
            i += 1;
            let separator =
                |l: &&str| l.starts_with("|-") || l.starts_with("| -") || l.starts_with("|:");
            if lines.get(i).is_some_and(separator) {
                i += 1;
            }
            while i < lines.len() && lines[i].starts_with('|') {
                let _ = write!(out, "<tr>");
                for c in cells(lines[i]) {
                    let class = match ratio_class(&c) {
                        "sig" => " class=\"sig\"",
                        "ns" => " class=\"ns\"",
                        _ if c.contains("(failed)") => " class=\"failed\"",
                        _ => "",
                    };
                    let _ = write!(out, "<td{class}>{c}</td>");
                }
                let _ = writeln!(out, "</tr>");
                i += 1;
            }
            let _ = writeln!(out, "</tbody></table>");
        } else if line.starts_with("- ") {
            let _ = writeln!(out, "<ul>");
            while i < lines.len() && lines[i].starts_with("- ") {
                let _ = writeln!(out, "<li>{}</li>", md_inline(&lines[i][2..]));
                i += 1;
            }
            let _ = writeln!(out, "</ul>");
        } else {
            let mut para = Vec::new();
            while i < lines.len()
                && !lines[i].trim().is_empty()
                && !lines[i].starts_with('|')
                && !lines[i].starts_with('#')
                && !lines[i].starts_with("- ")
            {
                para.push(md_inline(lines[i].trim()));
                i += 1;
            }
            let _ = writeln!(out, "<p>{}</p>", para.join(" "));
        }
    }
    out
}

fn figure(out: &mut String, c: &ChartFile) {
    let _ = writeln!(
        out,
        "<figure id=\"chart-{}\">\n{}</figure>",
        esc(&c.name),
        c.svg
    );
}

/// A fragment id for a heading: `scenario-<name>` for a scenario's section, else a slug.
fn heading_id(title: &str, scenarios: &[String]) -> String {
    if scenarios.iter().any(|s| s == title) {
        format!("scenario-{}", chart::slug(title))
    } else {
        chart::slug(&title.to_lowercase())
    }
}

/// Splits Markdown into the part before the first `## ` heading and the `## ` sections.
fn sections(md: &str) -> (String, Vec<(String, String)>) {
    let mut intro = String::new();
    let mut out: Vec<(String, String)> = Vec::new();
    for line in md.lines() {
        if let Some(title) = line.strip_prefix("## ") {
            out.push((title.trim().to_string(), String::new()));
        } else if let Some((_, body)) = out.last_mut() {
            body.push_str(line);
            body.push('\n');
        } else if !line.starts_with("# ") {
            intro.push_str(line);
            intro.push('\n');
        }
    }
    (intro, out)
}

const SIGNIFICANCE_NOTE: &str = "<p class=\"note\">A ratio in <b>bold</b> is significant: the test rejects \"no difference\" and its interval excludes 1. A ratio in <i>grey italics</i> is <i>not significant</i>: these rounds cannot tell it from no difference. <i>Too few rounds</i> means no result could have been significant with this many rounds (3 against 3 rounds: the smallest possible p is 0.1); raise <code>--rounds</code>.</p>";

impl Exporter for HtmlExporter {
    fn file_name(&self) -> &'static str {
        "report.html"
    }

    fn render(&self, r: &Results) -> anyhow::Result<Vec<u8>> {
        let md = String::from_utf8(MarkdownExporter.render(r)?)?;
        let charts = chart::render_all(r);
        let scenarios = chart::scenarios(r);
        let (intro, sections) = sections(&md);
        let mut out = String::new();
        let _ = writeln!(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>asynclab results</title>\n<style>{CSS}</style>\n</head>\n<body>\n<h1>asynclab results</h1>");
        out.push_str(&markdown_to_html(&intro));
        let _ = writeln!(out, "{SIGNIFICANCE_NOTE}");
        let nav: Vec<String> = sections
            .iter()
            .map(|(t, _)| format!("<a href=\"#{}\">{}</a>", heading_id(t, &scenarios), esc(t)))
            .collect();
        let _ = writeln!(out, "<p>Contents: {}</p>", nav.join(" · "));
        let mut placed = vec![false; charts.len()];
        for (title, body) in &sections {
            let _ = writeln!(
                out,
                "<section id=\"{}\">\n<h2>{}</h2>",
                heading_id(title, &scenarios),
                md_inline(title)
            );
            out.push_str(&markdown_to_html(body));
            for (i, c) in charts.iter().enumerate() {
                if !placed[i] && c.scenario.as_deref() == Some(title.as_str()) {
                    figure(&mut out, c);
                    placed[i] = true;
                }
            }
            let _ = writeln!(out, "</section>");
        }
        if placed.iter().any(|p| !p) {
            let _ = writeln!(out, "<section id=\"charts\">\n<h2>Other charts</h2>");
            for (c, _) in charts.iter().zip(&placed).filter(|(_, p)| !**p) {
                figure(&mut out, c);
            }
            let _ = writeln!(out, "</section>");
        }
        let _ = writeln!(out, "</body>\n</html>");
        Ok(out.into_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_sections_become_html() {
        assert_eq!(italics("a *b* c * d"), "a <i>b</i> c * d");
        let md = "## Costs\n\nPer op, `ns`.\n\n| op | ns |\n|---|---|\n| a<b | 1.02× not significant |\n\n- one\n- **two**\n";
        let html = markdown_to_html(md);
        assert_eq!(
            html,
            "<h2>Costs</h2>\n<p>Per op, <code>ns</code>.</p>\n<table><thead><tr><th>op</th><th>ns</th></tr></thead><tbody>\n<tr><td>a&lt;b</td><td class=\"ns\">1.02× not significant</td></tr>\n</tbody></table>\n<ul>\n<li>one</li>\n<li><b>two</b></li>\n</ul>\n"
        );
    }

    #[test]
    fn ratio_classes_follow_the_verdict() {
        assert_eq!(ratio_class("3.1× [2.9–3.3] significant"), "sig");
        assert_eq!(ratio_class("1.02× [0.97–1.06] not significant"), "ns");
        assert_eq!(
            ratio_class("9.13× [8.22–9.27] not significant (too few rounds)"),
            "ns"
        );
        assert_eq!(ratio_class("baseline"), "");
    }
}
