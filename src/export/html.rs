//! `report.html`: one self-contained page (inline CSS, inline SVG charts, no script, no
//! network) rendering the same report document as `summary.md` — the tables, their marks,
//! warnings and environment come from one model — with each scenario's charts in its section.

use std::fmt::Write;

use super::markup::{Html, Section};
use super::{Exporter, Outputs};
use crate::chart::{svg::esc, ChartFile};

/// The HTML exporter.
pub struct HtmlExporter;

const CSS: &str = "body{font-family:'DejaVu Sans',Verdana,Arial,sans-serif;color:#222;max-width:1100px;margin:24px auto;padding:0 16px;line-height:1.45}\
h1{font-size:1.6em;margin-bottom:.2em}h2{margin-top:2em;border-bottom:1px solid #ddd;padding-bottom:.2em}\
table{border-collapse:collapse;font-size:13px;margin:1em 0}th,td{border:1px solid #d5d5d5;padding:4px 8px;text-align:left;vertical-align:top}\
th{background:#f3f3f3}\
td.sig{font-weight:bold}td.ns{color:#777;font-style:italic}td.inconclusive{color:#8a6d00;font-style:italic}td.failed{color:#b00020}\
figure{margin:1.2em 0}figure svg{max-width:100%;height:auto;display:block;border:1px solid #eee}\
p.note{color:#555;font-size:13px}code{background:#f5f5f5;padding:0 3px}";

fn figure(out: &mut String, c: &ChartFile) {
    let _ = writeln!(
        out,
        "<figure id=\"chart-{}\">\n{}</figure>",
        esc(&c.name),
        c.svg
    );
}

/// A fragment id for a section: `scenario-<name>` for a scenario's first section, else a slug
/// of its title.
fn section_id(s: &Section, first_of_scenario: bool) -> String {
    match &s.scenario {
        Some(name) if first_of_scenario => format!("scenario-{}", crate::chart::slug(name)),
        _ => crate::chart::slug(&s.title.to_lowercase()),
    }
}

/// How the tables mark a verdict; what each verdict means is the intro's note, from the run's
/// own comparison rule.
const MARKS_NOTE: &str = "<p class=\"note\">A ratio in <b>bold</b> is significant; in <i>grey italics</i> it is not (not significant, within noise, or too few rounds), as the note above defines them.</p>";

impl Exporter for HtmlExporter {
    fn file_name(&self) -> &'static str {
        "report.html"
    }

    fn render(&self, o: &Outputs) -> anyhow::Result<Vec<u8>> {
        let doc = &o.doc;
        let mut out = String::new();
        let _ = writeln!(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{0}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<h1>{0}</h1>", esc(&doc.title));
        for b in &doc.intro {
            Html::block(&mut out, b);
        }
        let _ = writeln!(out, "{MARKS_NOTE}");
        let mut seen: Vec<&str> = Vec::new();
        let ids: Vec<String> = doc
            .sections
            .iter()
            .map(|s| {
                let first = s.scenario.as_deref().is_some_and(|n| !seen.contains(&n));
                if let Some(n) = &s.scenario {
                    seen.push(n);
                }
                section_id(s, first)
            })
            .collect();
        let nav: Vec<String> = doc
            .sections
            .iter()
            .zip(&ids)
            .map(|(s, id)| format!("<a href=\"#{id}\">{}</a>", esc(&s.title)))
            .collect();
        let _ = writeln!(out, "<p>Contents: {}</p>", nav.join(" · "));
        let mut placed = vec![false; o.charts.len()];
        for (s, id) in doc.sections.iter().zip(&ids) {
            let _ = writeln!(
                out,
                "<section id=\"{id}\">\n<h2>{}</h2>",
                Html::inline(&s.title)
            );
            for b in &s.blocks {
                Html::block(&mut out, b);
            }
            for (i, c) in o.charts.iter().enumerate() {
                if !placed[i] && s.scenario.is_some() && c.scenario == s.scenario {
                    figure(&mut out, c);
                    placed[i] = true;
                }
            }
            let _ = writeln!(out, "</section>");
        }
        if placed.iter().any(|p| !p) {
            let _ = writeln!(out, "<section id=\"charts\">\n<h2>Other charts</h2>");
            for (c, _) in o.charts.iter().zip(&placed).filter(|(_, p)| !**p) {
                figure(&mut out, c);
            }
            let _ = writeln!(out, "</section>");
        }
        let _ = writeln!(out, "</body>\n</html>");
        Ok(out.into_bytes())
    }
}
