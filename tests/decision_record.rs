//! `asynclab adr` on a real (tiny, `--quick`) run and on a copy of it with one round of one
//! cell made contaminated: every option, every decision's interval and verdict, and every
//! caveat the report model has (contaminated runs, inconclusive cells and settings, busy-machine
//! warnings, the database backend, the interpreters) is in the record — checked against
//! `asynclab::analysis` itself, never against summary.md.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use asynclab::analysis::{
    self, comparison::Verdict, decision::Decision, scenario::cell_interference,
};
use asynclab::format::num;
use common::*;
use serde_json::Value;

/// One tiny io_http run for every test here: 10 requests at 10 and 20 ms (two settings).
fn tiny_run() -> &'static Path {
    static RUN: OnceLock<tempfile::TempDir> = OnceLock::new();
    RUN.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        bin()
            .args([
                "run",
                "--scenario",
                "io_http",
                "--quick",
                "--python",
                "3.12",
            ])
            .args([
                "--param",
                "requests=10",
                "--param",
                "delay_ms=10,20",
                "--out",
            ])
            .arg(tmp.path().join("run"))
            .timeout(Duration::from_secs(600))
            .assert()
            .success();
        tmp
    })
    .path()
}

/// The text of the `## title` section of a Markdown document.
fn section<'a>(md: &'a str, title: &str) -> &'a str {
    let start = md
        .find(&format!("\n## {title}\n"))
        .unwrap_or_else(|| panic!("no section {title}:\n{md}"));
    let rest = &md[start + 4 + title.len()..];
    &rest[..rest.find("\n## ").unwrap_or(rest.len())]
}

/// `asynclab adr DIR [--out FILE]`; the record's text.
fn adr(dir: &Path, out: Option<&Path>) -> String {
    let mut cmd = bin();
    cmd.arg("adr").arg(dir);
    if let Some(o) = out {
        cmd.arg("--out").arg(o);
    }
    cmd.assert().success();
    std::fs::read_to_string(out.map(PathBuf::from).unwrap_or(dir.join("adr.md"))).unwrap()
}

fn interval(d: &Decision) -> String {
    format!(
        "{}× [{}–{}]",
        num(d.ratio.ratio),
        num(d.ratio.ci95_low),
        num(d.ratio.ci95_high)
    )
}

/// Checks the record of `dir` against the analysis of its results.json; the number of
/// (contaminated-cell, inconclusive-cell) caveats found.
fn check_against_model(dir: &Path, md: &str) -> (usize, usize) {
    // As `asynclab adr` reads it: the figures derived again from the runs.
    let results = analysis::summary::load(dir).unwrap();
    let report = analysis::analyze(&results);
    for title in [
        "Status",
        "Context and Problem Statement",
        "Decision Drivers",
        "Considered Options",
        "Decision Outcome",
        "Consequences",
        "Confidence: how far to trust it",
    ] {
        section(md, title);
    }
    let context = section(md, "Context and Problem Statement");
    let options = section(md, "Considered Options");
    for sc in &report.scenarios {
        let q = &sc.info.expect("the run records its scenarios").question;
        assert!(!q.is_empty() && context.contains(q.as_str()), "{q}");
        for c in &sc.cells {
            assert!(
                options.contains(&format!("| {} | **{}** |", sc.name, c.variant)),
                "option {} missing:\n{options}",
                c.variant
            );
        }
    }
    let outcome = section(md, "Decision Outcome");
    assert!(
        !report.decisions.is_empty(),
        "a throughput scenario decides"
    );
    for d in &report.decisions {
        let line = outcome
            .lines()
            .find(|l| l.starts_with(&format!("- **{}** ({},", d.scenario, d.group)))
            .unwrap_or_else(|| panic!("no outcome line for {}:\n{outcome}", d.group));
        assert!(line.contains(&interval(d)), "{line}");
        assert!(
            line.contains(&format!("runner-up {}", d.runner_up)),
            "{line}"
        );
        match &d.verdict {
            Verdict::Significant => {
                assert!(line.contains(&format!("chosen option **{}**, ", d.winner)))
            }
            Verdict::Inconclusive(why) => {
                assert!(line.contains("no option chosen"), "{line}");
                assert!(line.contains(why.as_str()), "{line}");
            }
            Verdict::NotSignificant | Verdict::WithinNoise | Verdict::TooFewRounds => {
                assert!(line.contains("only provisionally"), "{line}")
            }
        }
    }
    let trust = section(md, "Confidence: how far to trust it");
    let (mut contaminated, mut inconclusive) = (0, 0);
    for c in &results.cells {
        let Some(i) = cell_interference(c) else {
            continue;
        };
        if i.contaminated_runs > 0 {
            contaminated += 1;
            assert!(
                trust.contains(&format!(
                    "`{}`: {} contaminated run(s) left out",
                    c.id, i.contaminated_runs
                )),
                "{}:\n{trust}",
                c.id
            );
        }
        if let Some(why) = &i.busy {
            inconclusive += 1;
            assert!(
                trust.contains(&format!("`{}`: inconclusive: {why}", c.id)),
                "{}:\n{trust}",
                c.id
            );
        }
    }
    let most = results
        .cells
        .iter()
        .filter_map(cell_interference)
        .map(|i| i.foreign_cpu_s_max)
        .fold(f64::NEG_INFINITY, f64::max);
    if most.is_finite() {
        assert!(
            trust.contains(&format!(
                "Foreign CPU (other programs): at most {} s in one run",
                num(most)
            )),
            "{trust}"
        );
    }
    for d in &report.decisions {
        if let Verdict::Inconclusive(why) = &d.verdict {
            assert!(trust.contains(&format!("no recommendation, inconclusive: {why}")));
        }
    }
    for w in &report.warnings {
        assert!(
            trust.contains(&format!("Warning: {}", w.headline)),
            "{}",
            w.headline
        );
    }
    match &results.env.postgres {
        Some(pg) => assert!(trust.contains(&format!("PostgreSQL backend: {pg}"))),
        None => assert!(trust.contains("PostgreSQL backend: none used.")),
    }
    for p in &results.env.pythons {
        assert!(trust.contains(&format!(
            "Python {} ({}), built with {}",
            p.version, p.implementation, p.compiler
        )));
    }
    assert!(trust.contains(&format!("Rounds: {} after", results.method.rounds)));
    (contaminated, inconclusive)
}

#[test]
fn the_record_of_a_real_run_matches_the_report_model() {
    let dir = tiny_run().join("run");
    let md = adr(&dir, None);
    check_against_model(&dir, &md);
    // Charts are linked relative to the record, and the report drew them.
    let links: Vec<&str> = md
        .split("](")
        .skip(1)
        .filter_map(|s| s.split(')').next())
        .collect();
    assert!(links.iter().any(|l| l.ends_with("throughput-io_http.svg")));
    for l in &links {
        assert!(dir.join(l).is_file(), "{l} does not exist");
    }
    // Elsewhere, the links climb back to the run's charts.
    let docs = tiny_run().join("docs/decisions");
    std::fs::create_dir_all(&docs).unwrap();
    let out = docs.join("0001-io.md");
    let elsewhere = adr(&dir, Some(&out));
    let link = elsewhere
        .split("](")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .unwrap();
    assert!(link.starts_with("../../run/charts/"), "{link}");
    assert!(docs.join(link).is_file(), "{link}");
}

#[test]
fn contaminated_and_inconclusive_cells_are_caveats() {
    let run = tiny_run().join("run");
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("results.json")).unwrap()).unwrap();
    // One round of the asyncio cell at 10 ms never ran clean; the machine was said to be busy.
    let cell = doc["cells"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|c| c["variant"] == "asyncio" && c["group"] == "delay_ms=10")
        .expect("the asyncio cell at 10 ms");
    let python = cell["python"].as_str().unwrap().to_string();
    let round = cell["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["interference"]["contaminated"] == false)
        .expect("a clean run")["round"]
        .clone();
    let mut marked = 0;
    for r in cell["runs"].as_array_mut().unwrap() {
        if r["round"] == round && r["interference"]["contaminated"] == false {
            r["interference"]["contaminated"] = true.into();
            r["interference"]["reason"] = "forced by the test".into();
            marked += 1;
        }
    }
    assert!(marked > 0);
    // The summary is left as it was: the lab derives it from the runs when it reads them.
    doc["env"]["warnings"]
        .as_array_mut()
        .unwrap()
        .push("the machine is busy (forced by the test)".into());
    let copy = tiny_run().join("forced");
    std::fs::create_dir_all(&copy).unwrap();
    std::fs::write(copy.join("results.json"), serde_json::to_vec(&doc).unwrap()).unwrap();
    let md = adr(&copy, None);
    let (contaminated, inconclusive) = check_against_model(&copy, &md);
    assert!(contaminated >= 1 && inconclusive >= 1, "{md}");
    let outcome = section(&md, "Decision Outcome");
    assert!(
        outcome.contains(&format!(
            "- **io_http** (delay_ms=10, Python {python}): no option chosen"
        )),
        "{outcome}"
    );
    assert!(md.contains("Warning: the machine is busy (forced by the test)"));
}
