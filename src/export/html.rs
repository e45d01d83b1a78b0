//! `report.html`: one self-contained page (inline CSS, inline SVG charts, no script, no
//! network) with the tables of `summary.md`, the charts, warnings and the environment.

use std::collections::BTreeSet;
use std::fmt::Write;

use super::markdown::{baseline_for, num, ratio_text};
use super::{params_text, Exporter};
use crate::chart::{self, svg::esc, ChartFile};
use crate::results::{Cell, CellStatus, Results};

/// The HTML exporter.
pub struct HtmlExporter;

const CSS: &str = "body{font-family:'DejaVu Sans',Verdana,Arial,sans-serif;color:#222;max-width:1100px;margin:24px auto;padding:0 16px;line-height:1.45}\
h1{font-size:1.6em;margin-bottom:.2em}h2{margin-top:2em;border-bottom:1px solid #ddd;padding-bottom:.2em}\
table{border-collapse:collapse;font-size:13px;margin:1em 0}th,td{border:1px solid #d5d5d5;padding:4px 8px;text-align:left;vertical-align:top}\
th{background:#f3f3f3}td.num{text-align:right;white-space:nowrap}\
td.sig{font-weight:bold}td.ns{color:#777;font-style:italic}td.failed{color:#b00020}\
figure{margin:1.2em 0}figure svg{max-width:100%;height:auto;display:block;border:1px solid #eee}\
p.note,li.note{color:#555;font-size:13px}ul.warn li{color:#7a4b00}code{background:#f5f5f5;padding:0 3px}";

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

fn table(out: &mut String, cells: &[&Cell], all: &[Cell]) {
    let keys: BTreeSet<String> = cells
        .iter()
        .flat_map(|c| c.params.keys().cloned())
        .collect();
    let (varying, constant): (Vec<String>, Vec<String>) = keys.into_iter().partition(|k| {
        cells
            .iter()
            .any(|c| c.params.get(k) != cells[0].params.get(k))
    });
    if !constant.is_empty() {
        let _ = writeln!(
            out,
            "<p>Parameters: <code>{}</code></p>",
            esc(&params_text(&cells[0].params, &constant))
        );
    }
    let base_variant = cells[0].variant.clone();
    let _ = writeln!(
        out,
        "<table><thead><tr><th>variant</th><th>python</th><th>params</th><th>throughput /s, median (min–max)</th><th>vs {} (95% CI)</th><th>wall s</th><th>CPU s</th><th>peak RSS Δ MiB</th><th>latency p50 / p95 / p99 / max ms</th><th>errors</th></tr></thead><tbody>",
        esc(&base_variant)
    );
    for c in cells {
        let params = esc(&params_text(&c.params, &varying));
        match &c.summary {
            Some(s) => {
                let t = &s.throughput_per_s;
                let vs = baseline_for(c, all, &base_variant)
                    .map(|b| ratio_text(c, b))
                    .unwrap_or_else(|| "–".into());
                let lat = s
                    .latency_ms
                    .as_ref()
                    .map(|l| {
                        format!(
                            "{} / {} / {} / {}",
                            num(l.p50),
                            num(l.p95),
                            num(l.p99),
                            num(l.max)
                        )
                    })
                    .unwrap_or_else(|| "–".into());
                let failed = if c.status == CellStatus::Failed {
                    " <span class=\"failed\">(failed)</span>"
                } else {
                    ""
                };
                let _ = writeln!(
                    out,
                    "<tr><td>{}{failed}</td><td>{}</td><td>{params}</td><td class=\"num\">{} ({}–{})</td><td class=\"{}\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{lat}</td><td class=\"num\">{}</td></tr>",
                    esc(&c.variant),
                    esc(&c.python),
                    num(t.median),
                    num(t.min),
                    num(t.max),
                    ratio_class(&vs),
                    esc(&vs),
                    num(s.wall_s.median),
                    num(s.cpu_s.median),
                    num(s.peak_rss_delta_mib.median),
                    s.errors
                );
            }
            None => {
                let why = c
                    .failure
                    .as_deref()
                    .unwrap_or("not measured")
                    .lines()
                    .next()
                    .unwrap_or("");
                let why: String = why.chars().take(160).collect();
                let _ = writeln!(
                    out,
                    "<tr><td>{} <span class=\"failed\">({})</span></td><td>{}</td><td>{params}</td><td class=\"failed\" colspan=\"7\">{}</td></tr>",
                    esc(&c.variant),
                    format!("{:?}", c.status).to_lowercase(),
                    esc(&c.python),
                    esc(&why)
                );
            }
        }
    }
    let _ = writeln!(out, "</tbody></table>");
    let service = cells
        .iter()
        .filter_map(|c| c.summary.as_ref()?.latency_ms.as_ref())
        .any(|l| l.kind == "service");
    if service {
        let _ = writeln!(out, "<p class=\"note\">Latency is per operation, closed loop, from the moment each operation was actually sent (service time), pooled over rounds.</p>");
    }
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
                } else {
                    out.push_str(p);
                }
            }
        }
    }
    out
}

/// Turns the Markdown that summary.md's shared sections write (headings, pipe tables, bullet
/// lists, paragraphs) into HTML, so the report carries the same tables.
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
                    let class = if c.contains("not significant") {
                        " class=\"ns\""
                    } else {
                        ""
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

fn environment(out: &mut String, r: &Results) {
    let e = &r.env;
    let _ = writeln!(out, "<h2 id=\"environment\">Environment</h2>\n<ul>");
    let _ = writeln!(
        out,
        "<li>CPU: {} ({} cores), governor: {}</li>",
        esc(&e.cpu_model),
        e.cores,
        esc(&e.governor)
    );
    let _ = writeln!(
        out,
        "<li>Memory: {} MiB; kernel {}</li>",
        e.memory_total_mib,
        esc(&e.kernel)
    );
    let la = |l: [f64; 3]| format!("{:.2} {:.2} {:.2}", l[0], l[1], l[2]);
    let _ = writeln!(
        out,
        "<li>Load average before: {}; after: {}</li>",
        la(e.load_avg_before),
        e.load_avg_after.map(la).unwrap_or_else(|| "–".into())
    );
    for p in &e.pythons {
        let pk: Vec<String> = p.packages.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let _ = writeln!(
            out,
            "<li>Python {} ({}, {}): {}</li>",
            esc(&p.version),
            esc(&p.implementation),
            esc(&p.compiler),
            esc(&pk.join(", "))
        );
    }
    if let Some(pg) = &e.postgres {
        let _ = writeln!(out, "<li>PostgreSQL: {}</li>", esc(pg));
    }
    if let Some(m) = &e.mock_http {
        let _ = writeln!(out, "<li>Mock HTTP server: {}</li>", esc(m));
    }
    let _ = writeln!(
        out,
        "<li>{} at commit {}; started {}</li>\n</ul>",
        esc(&r.generated_by),
        esc(&e.git_commit),
        esc(&r.started_at)
    );
}

impl Exporter for HtmlExporter {
    fn file_name(&self) -> &'static str {
        "report.html"
    }

    fn render(&self, r: &Results) -> anyhow::Result<Vec<u8>> {
        let charts = chart::render_all(r);
        let mut out = String::new();
        let _ = writeln!(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>asynclab results</title>\n<style>{CSS}</style>\n</head>\n<body>\n<h1>asynclab results</h1>");
        let _ = writeln!(
            out,
            "<p>{} rounds after {} warm-up(s), cells interleaved in rotating order, each run a fresh process; medians with min–max over rounds. Ratios are of median throughput with a bootstrap 95% interval paired by round; significance by a two-sided Mann–Whitney U test at α = 0.05.</p>",
            r.method.rounds, r.method.warmups
        );
        let _ = writeln!(out, "<p class=\"note\">A ratio in <b>bold</b> is significant: the test rejects \"no difference\" and its interval excludes 1. A ratio in <i>grey italics</i> is <i>not significant</i>: these rounds cannot tell it from no difference. <i>Too few rounds</i> means no result could have been significant with this many rounds (3 against 3 rounds: the smallest possible p is 0.1); raise <code>--rounds</code>.</p>");
        let mut note = String::new();
        super::runtime_tables::method_note(&mut note, r);
        out.push_str(&markdown_to_html(&note));
        let scenarios = chart::scenarios(r);
        let _ = writeln!(out, "<p>Scenarios: {} · <a href=\"#warnings\">warnings</a> · <a href=\"#environment\">environment</a></p>",
            scenarios.iter().map(|s| format!("<a href=\"#scenario-{0}\">{0}</a>", esc(s))).collect::<Vec<_>>().join(" · "));
        for s in &scenarios {
            let _ = writeln!(out, "<section id=\"scenario-{0}\">\n<h2>{0}</h2>", esc(s));
            let cells: Vec<&Cell> = r.cells.iter().filter(|c| &c.scenario == s).collect();
            table(&mut out, &cells, &r.cells);
            for c in charts.iter().filter(|c| c.scenario.as_ref() == Some(s)) {
                figure(&mut out, c);
            }
            let _ = writeln!(out, "</section>");
        }
        let mut studies = String::new();
        super::runtime_tables::render(&mut studies, r);
        out.push_str(&markdown_to_html(&studies));
        let others: Vec<&ChartFile> = charts.iter().filter(|c| c.scenario.is_none()).collect();
        if !others.is_empty() {
            let _ = writeln!(out, "<h2>Across scenarios</h2>");
            for c in others {
                figure(&mut out, c);
            }
        }
        let warnings: Vec<&String> = r
            .env
            .warnings
            .iter()
            .chain(r.cells.iter().flat_map(|c| c.warnings.iter()))
            .collect();
        let _ = writeln!(out, "<h2 id=\"warnings\">Warnings</h2>");
        if warnings.is_empty() {
            let _ = writeln!(out, "<p>None.</p>");
        } else {
            let _ = writeln!(out, "<ul class=\"warn\">");
            for w in warnings {
                let _ = writeln!(out, "<li>{}</li>", esc(w));
            }
            let _ = writeln!(out, "</ul>");
        }
        environment(&mut out, r);
        let _ = writeln!(out, "</body>\n</html>");
        Ok(out.into_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_sections_become_html() {
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
