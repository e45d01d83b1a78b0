//! Snapshot tests of every output (hyperfine's `export/tests.rs` idea, with insta): the
//! hand-made document `tests/data/results/snapshot.json` rendered as summary.md, report.html,
//! results.csv, the decision record (`asynclab adr`), the pyperf suite (`asynclab export
//! pyperf`) and each chart's SVG, each held against its file in `snapshots/` (`asynclab
//! compare`'s text, Markdown and JSON are snapshotted beside it, in `compare`'s own tests). No process, browser or database: the renderers only.
//! A change of wording or figure shows as a snapshot diff to review; docs/testing.md says how
//! to accept one. The outputs carry no clock or path of their own: the time, commit and
//! machine they print come from the document, and the paths (chart links, compared runs) are
//! given here as `asynclab` would print them for a folder named `run`, so nothing is redacted.

use super::adr;
use super::markup::Markdown;
use super::{pyperf, CsvExporter, Exporter, HtmlExporter, MarkdownExporter, Outputs};
use crate::analysis;
use crate::chart;
use crate::results::snapshot_fixture;

/// One report format's output for the document.
fn rendered(format: &dyn Exporter) -> String {
    let doc = snapshot_fixture();
    let report = analysis::analyze(&doc);
    let outputs = Outputs::new(&report);
    String::from_utf8(format.render(&outputs).unwrap()).unwrap()
}

#[test]
fn summary_md() {
    insta::assert_snapshot!(rendered(&MarkdownExporter));
}

#[test]
fn report_html() {
    insta::assert_snapshot!(rendered(&HtmlExporter));
}

#[test]
fn results_csv() {
    insta::assert_snapshot!(rendered(&CsvExporter));
}

#[test]
fn adr_md() {
    let doc = snapshot_fixture();
    let report = analysis::analyze(&doc);
    // The links `asynclab adr run` writes into run/adr.md once `asynclab report run` drew them.
    let links = adr::chart_links(&report, "charts");
    insta::assert_snapshot!(Markdown::render(&adr::build(&report, &links)));
}

#[test]
fn pyperf_json() {
    let suite = pyperf::suite(&snapshot_fixture());
    insta::assert_snapshot!(serde_json::to_string_pretty(&suite).unwrap());
}

#[test]
fn every_chart_svg() {
    let doc = snapshot_fixture();
    let report = analysis::analyze(&doc);
    let charts = chart::render_all(&report);
    let names: Vec<&str> = charts.iter().map(|c| c.name.as_str()).collect();
    insta::assert_snapshot!("chart_names", names.join("\n"));
    for c in &charts {
        // One element per line, so that a diff shows the elements that changed.
        insta::assert_snapshot!(format!("chart_{}", c.name), c.svg.replace("><", ">\n<"));
    }
}

#[test]
fn the_latency_chart_pools_the_runs_the_table_does() {
    let doc = snapshot_fixture();
    let spoiled = |c: &&crate::results::Cell| {
        c.runs
            .iter()
            .any(|r| r.interference.as_ref().is_some_and(|i| i.contaminated))
    };
    let cell = doc
        .cells
        .iter()
        .find(spoiled)
        .expect("a cell with a contaminated run");
    let all: usize = cell.runs.iter().map(|r| r.latencies_ms.len()).sum();
    let table_n = cell
        .summary
        .as_ref()
        .unwrap()
        .latency_ms
        .as_ref()
        .unwrap()
        .count;
    assert!(table_n < all, "the table leaves the contaminated run out");
    let report = analysis::analyze(&doc);
    let charts = chart::render_all(&report);
    let latency = charts
        .iter()
        .find(|c| c.name == format!("latency-{}", cell.scenario))
        .unwrap();
    let label = latency
        .svg
        .split("<text")
        .find(|t| t.contains(&format!(">{} ", cell.variant)) && t.contains("(n="))
        .expect("the cell's curve in the legend");
    assert!(label.contains(&format!("(n={table_n})")), "{label}");
}

#[test]
fn terminal_txt() {
    let doc = snapshot_fixture();
    let report = analysis::analyze(&doc);
    let text = super::terminal::render(&report);
    // The same figures as the tables: every decision's ratio, in the table's own words.
    for d in &report.decisions {
        let ratio = super::decision_section::ratio_text(d);
        assert!(text.contains(&ratio), "{ratio} missing from:\n{text}");
    }
    insta::assert_snapshot!(text);
}

#[test]
fn an_efficiency_over_the_physical_bound_is_flagged_not_printed_bare() {
    let mut doc = crate::results::quick_fixture();
    // Pure-Python work (CPU time = wall time), asyncio made faster than one thread can be.
    for c in doc.cells.iter_mut().filter(|c| c.scenario == "cpu") {
        for r in &mut c.runs {
            r.wall_s = r.cpu_s;
            if c.variant == "asyncio" {
                r.throughput_per_s *= 1.3;
            }
        }
        analysis::summary::derive_cell(c);
    }
    let report = analysis::analyze(&doc);
    let over: Vec<_> = report
        .scenarios
        .iter()
        .flat_map(|s| s.cpu_rows.iter())
        .filter(|r| r.above_physical_bound())
        .collect();
    assert!(!over.is_empty(), "the fixture's asyncio row is over 100%");
    let md = Markdown::render(&super::document::build(&report));
    let line = md
        .lines()
        .find(|l| l.starts_with("| asyncio") && l.contains("over the physical 100%"))
        .unwrap_or_else(|| panic!("no flagged asyncio row in:\n{md}"));
    assert!(line.contains("not a real gain"), "{line}");
}

#[test]
fn the_warnings_section_has_one_line_per_cause_and_html_folds_the_samples() {
    let mut doc = crate::results::quick_fixture();
    doc.env.warnings.push("the machine is busy".into());
    let report = analysis::analyze(&doc);
    assert!(
        report.warnings.iter().any(|g| !g.items.is_empty()),
        "the fixture has cells with round warnings: {:?}",
        report.warnings
    );
    let outputs = Outputs::new(&report);
    let md = String::from_utf8(MarkdownExporter.render(&outputs).unwrap()).unwrap();
    let section = md.split("## Warnings\n\n").nth(1).unwrap();
    let lines: Vec<&str> = section
        .lines()
        .take_while(|l| l.starts_with("- "))
        .collect();
    assert_eq!(lines.len(), report.warnings.len(), "{section}");
    let html = String::from_utf8(HtmlExporter.render(&outputs).unwrap()).unwrap();
    for g in report.warnings.iter().filter(|g| !g.items.is_empty()) {
        assert!(html.contains("<details><summary>"), "{html}");
        for item in &g.items {
            assert!(html.contains(&super::markup::Html::inline(item)), "{item}");
        }
    }
}

#[test]
fn the_answers_and_the_framework_come_first_and_unmeasured_rows_say_so() {
    use crate::catalogue::{Contrast, ContrastFigure, FrameworkRow};
    let mut doc = crate::results::quick_fixture();
    doc.scenarios.insert(
        "cpu".into(),
        crate::results::ScenarioInfo {
            title: "cpu".into(),
            question: "Does asyncio help CPU-bound work?".into(),
            baseline: None,
            contrasts: vec![Contrast {
                new: "asyncio".into(),
                base: "sync".into(),
                figure: ContrastFigure::Throughput,
                row: Some(FrameworkRow::CpuHeavy),
            }],
        },
    );
    let report = analysis::analyze(&doc);
    assert!(!report.contrasts.is_empty());
    let outputs = Outputs::new(&report);
    let md = String::from_utf8(MarkdownExporter.render(&outputs).unwrap()).unwrap();
    let answers = md.find("## Answers").expect("an Answers section");
    let framework = md
        .find("## Decision framework")
        .expect("a framework section");
    let detail = md.find("## cpu").expect("the cpu section");
    assert!(answers < framework && framework < detail, "answers first");
    let rows = md[framework..].split("\n## ").next().unwrap();
    assert!(rows.contains("| CPU-heavy work | `asyncio` against `sync`, throughput /s: "));
    assert_eq!(
        rows.matches("not measured by this run").count(),
        6,
        "{rows}"
    );
    let term = super::terminal::render(&report);
    assert!(term.contains("  asyncio against sync (Python "), "{term}");
}
