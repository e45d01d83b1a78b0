//! Snapshot tests of every output (hyperfine's `export/tests.rs` idea, with insta): the
//! hand-made document `tests/data/results/snapshot.json` rendered as summary.md, report.html,
//! results.csv, the decision record (`asynclab adr`), the pyperf suite (`asynclab export
//! pyperf`), each chart's SVG and `asynclab compare`'s text, Markdown and JSON, each held
//! against its file in `snapshots/`. No process, browser or database: the renderers only.
//! A change of wording or figure shows as a snapshot diff to review; docs/testing.md says how
//! to accept one. The outputs carry no clock or path of their own: the time, commit and
//! machine they print come from the document, and the paths (chart links, compared runs) are
//! given here as `asynclab` would print them for a folder named `run`, so nothing is redacted.

use std::time::Duration;

use super::adr;
use super::markup::Markdown;
use super::{pyperf, CsvExporter, Exporter, HtmlExporter, JsonExporter, MarkdownExporter, Outputs};
use crate::analysis;
use crate::chart;
use crate::compare::{self, Gate, Metric};
use crate::python::PythonEnv;
use crate::results::{snapshot_fixture, Results, SNAPSHOT_FIXTURE};
use crate::runner::matrix::CellSpec;
use crate::runner::summarize::summarize_cell;

/// Setting this rewrites snapshot.json's summaries and warnings from its runs, after its runs
/// were edited by hand.
const REWRITE: &str = "ASYNCLAB_REWRITE_SNAPSHOT_DOC";

/// Every cell's summary and warnings as the runner computes them from its runs.
fn summarized(mut doc: Results) -> Results {
    for c in &mut doc.cells {
        if c.runs.is_empty() {
            c.summary = None;
            c.warnings = Vec::new();
            continue;
        }
        let spec = CellSpec {
            id: c.id.clone(),
            scenario: c.scenario.clone(),
            script: "unused.py".into(),
            variant: c.variant.clone(),
            params: c.params.clone(),
            python: PythonEnv::fake(&c.python),
            timeout: Duration::from_secs(1),
            services: Vec::new(),
            check_server_requests: c.runs.iter().any(|r| r.server_requests.is_some()),
            group: c.group.clone(),
            decide_by: c.decide_by.clone(),
            cpus: Vec::new(),
            network: None,
        };
        let (summary, warnings) = summarize_cell(&spec, &c.runs);
        c.summary = Some(summary);
        c.warnings = warnings;
    }
    doc
}

#[test]
fn the_documents_summaries_are_the_runners() {
    let doc = snapshot_fixture();
    let want = JsonExporter.render(&summarized(doc.clone())).unwrap();
    if std::env::var_os(REWRITE).is_some() {
        std::fs::write(SNAPSHOT_FIXTURE, &want).unwrap();
        return;
    }
    assert!(
        JsonExporter.render(&doc).unwrap() == want,
        "{SNAPSHOT_FIXTURE}: a summary or warning is not what its runs give; after editing runs, \
         rerun this test with {REWRITE}=1 to recompute them"
    );
}

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

/// `asynclab compare run new`: the document against a copy in which threads took 25% longer
/// on io_http (a regression) and create_task_await 20% longer per operation (too few rounds to
/// tell), on a later commit.
fn compared() -> compare::Report {
    let base = snapshot_fixture();
    let mut new = base.clone();
    new.env.git_commit = "89abcdef0123456789abcdef0123456789abcdef".into();
    for c in &mut new.cells {
        for r in &mut c.runs {
            if c.scenario == "io_http" && c.variant == "threads" {
                r.wall_s *= 1.25;
                r.throughput_per_s = r.ops as f64 / r.wall_s;
            }
            let op = r
                .extra
                .ops
                .as_mut()
                .and_then(|o| o.get_mut("create_task_await"));
            if let Some(ns) = op.and_then(|f| f.ns_per_op_median.as_mut()) {
                *ns *= 1.2;
            }
        }
    }
    let new = summarized(new);
    let gate = Gate {
        metric: Metric::Throughput,
        threshold_pct: 10.0,
        alpha: 0.05,
    };
    compare::compare_runs(&base, &new, gate, ("run", "new")).unwrap()
}

#[test]
fn compare_text() {
    insta::assert_snapshot!(compare::render(&compared()));
}

#[test]
fn compare_markdown() {
    insta::assert_snapshot!(compare::formats::markdown(&compared()));
}

#[test]
fn compare_json() {
    let json = compare::formats::json(&compared());
    insta::assert_snapshot!(serde_json::to_string_pretty(&json).unwrap());
}
