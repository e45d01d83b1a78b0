//! The database endpoint of services under test at 0 and 20 ms of round trip to a real
//! PostgreSQL (the lab's delay line between the server and the database): every cell within
//! what its connections allow by Little's law, and the report's crossover stating, from the
//! run, which kind led at each round trip. Nothing here assumes which kind wins.

use crate::common;

use std::time::Duration;

use asynclab::analysis::service_questions::Question;
use asynclab::analysis::services::{finding, kind_crossovers};
use common::*;

const RTT_MS: f64 = 20.0;

#[test]
fn the_report_says_which_kind_wins_at_each_round_trip_from_the_run() {
    let _alone = alone();
    let tmp = tempfile::tempdir().unwrap();
    let cat = tmp.path().join("catalogue.toml");
    std::fs::write(
        &cat,
        format!(
            r#"[[scenario]]
name = "svc_db"
driver = "loadgen"
title = "the database endpoint at two round trips"
services = ["postgres"]
variants = ["gunicorn_gthread", "uvicorn"]
timeout_s = 60

[scenario.params]
endpoint = "db"
connections = 100
rate_per_s = 0
duration_s = 2
warmup_s = 0.5
rtt_ms = [0, {RTT_MS}]
"#
        ),
    )
    .unwrap();
    let dir = tmp.path().join("run");
    bin()
        .args([
            "run",
            "--scenario",
            "svc_db",
            // Three rounds, the fewest the paired test decides from (MIN_PAIRED_ROUNDS): the
            // assertions below need a verdict that can be significant, not a particular one,
            // and every run is checked against Little's law on its own (four rounds: 66 s in
            // CI).
            "--rounds",
            "3",
            "--warmups",
            "0",
        ])
        .arg("--catalogue")
        .arg(&cat)
        .arg("--out")
        .arg(&dir)
        .timeout(Duration::from_secs(600))
        .assert()
        .success();
    let doc = asynclab::analysis::summary::load(&dir).unwrap();
    for c in &doc.cells {
        assert_eq!(
            c.status,
            asynclab::results::CellStatus::Ok,
            "{}: {:?}",
            c.id,
            c.failure
        );
        let rtt = c.params["rtt_ms"].as_f64().unwrap();
        for r in &c.runs {
            assert_eq!(r.errors, 0, "{}: {:?}", c.id, r.error_samples);
            let s = r.extra.server.as_ref().unwrap();
            // Each query holds one of the server's database connections for at least the
            // round trip: at most that many answers per round trip, plus those in flight.
            if rtt > 0.0 {
                let conns = (s.db_pool_per_worker * s.workers) as f64;
                let bound = conns * (r.wall_s * 1000.0 / rtt + 1.0);
                let done = (r.ops + r.errors) as f64;
                assert!(
                    done <= bound,
                    "{}: {done} answers in {:.2} s over {conns} connections, above {bound}",
                    c.id,
                    r.wall_s
                );
            }
        }
    }
    // The report states the crossover the analysis finds, at both round trips.
    let refs: Vec<&asynclab::results::Cell> = doc.cells.iter().collect();
    let rule = asynclab::analysis::comparison::Rule::of(&doc.method);
    let xs = kind_crossovers(&refs, rule, &Default::default());
    assert_eq!(xs.len(), 1, "one setting: {xs:?}");
    let x = &xs[0];
    assert_eq!(x.axis, "rtt_ms");
    let at: Vec<f64> = x.points.iter().map(|p| p.at).collect();
    assert_eq!(at, [0.0, RTT_MS]);
    for p in &x.points {
        assert_eq!(
            (p.best_sync.as_str(), p.best_async.as_str()),
            ("gunicorn_gthread", "uvicorn")
        );
        let c = p.async_vs_sync.as_ref().expect("three rounds compare");
        assert_ne!(
            c.verdict,
            asynclab::analysis::comparison::Verdict::TooFewRounds,
            "three rounds can be significant"
        );
    }
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    let sentence = finding(x);
    assert!(summary.contains(&sentence), "summary.md lacks: {sentence}");
    eprintln!("{sentence}");
    // The framework's service questions: every setting is high-concurrency I/O, only the one
    // without a round trip is a localhost database, and the table names the kind the rounds do.
    let report = asynclab::analysis::analyze(&doc);
    let asked = |q: Question| -> Vec<&str> {
        report
            .service_answers
            .iter()
            .filter(|a| a.question == q)
            .map(|a| a.setting.as_str())
            .collect()
    };
    let both = ["rtt_ms=0", "rtt_ms=20"];
    assert_eq!(asked(Question::HighConcurrencyIo), both);
    assert_eq!(asked(Question::StrictP99), both);
    assert_eq!(asked(Question::LocalhostDatabase), ["rtt_ms=0"]);
    for a in &report.service_answers {
        let c = a.async_advantage.as_ref().expect("three rounds compare");
        let kind = match a.leader() {
            Some(k) => format!("**{k}**"),
            None => format!("neither ({})", c.verdict.text()),
        };
        let row = format!("| {} | svc_db | {} |", a.question.text(), a.setting);
        let line = summary
            .lines()
            .find(|l| l.starts_with(&row))
            .unwrap_or_else(|| panic!("summary.md has no row {row}"));
        assert!(line.trim_end().ends_with(&format!("| {kind} |")), "{line}");
    }
}
