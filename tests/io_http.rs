//! The I/O-bound study end to end: a real `run --scenario io_http --quick` against the mock
//! server, checked against Little's law, the server's request count and the JSON Schema.

use crate::common;

use std::time::{Duration, Instant};

use common::*;

/// Throughput Little's law allows: requests in flight divided by the server's delay.
fn littles_law_per_s(concurrency: f64, requests: f64, delay_ms: f64) -> f64 {
    concurrency.min(requests) / (delay_ms / 1000.0)
}

#[test]
fn quick_io_http_meets_littles_law_and_the_schema() {
    let _alone = alone();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("run");
    let started = Instant::now();
    bin()
        .env_remove("ASYNCLAB_NO_TWINS")
        // Little's law bounds every run, whatever its length: 20 requests (two full batches of
        // the ten threads or processes) test it as the quick 50 do, and sync's runs, ten with
        // its A/A twin's, take 20 × 100 ms = 2 s each instead of 5 (this test: 77 s to 41 s
        // here).
        .args([
            "run",
            "--scenario",
            "io_http",
            "--quick",
            "--param",
            "requests=20",
        ])
        .arg("--out")
        .arg(&dir)
        .timeout(Duration::from_secs(300))
        .assert()
        .success();
    eprintln!(
        "io_http --quick took {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let r = results(&dir);

    // The document matches the committed schema.
    let errors = schema_errors(&r);
    assert!(errors.is_empty(), "schema violations: {errors:#?}");
    // The mock server's timer ran with the wake-up latency request (root here) or says why not.
    let wake = r["method"]["wake_hold"].as_str().unwrap();
    assert!(
        wake.starts_with("held at 0 µs") || wake.starts_with("not held ("),
        "{wake}"
    );

    let cells = r["cells"].as_array().unwrap();
    let variants: Vec<&str> = cells
        .iter()
        .map(|c| c["variant"].as_str().unwrap())
        .collect();
    assert_eq!(variants, ["sync", "threads", "asyncio", "multiprocessing"]);
    for c in cells {
        let id = c["id"].as_str().unwrap();
        assert_eq!(c["status"], "ok", "{id}: {}", c["failure"]);
        let s = &c["summary"];
        assert_eq!(s["errors"], 0, "{id}");
        let p = &c["params"];
        let (n, delay, conc) = (
            p["requests"].as_f64().unwrap(),
            p["delay_ms"].as_f64().unwrap(),
            p["concurrency"].as_f64().unwrap(),
        );
        let bound = littles_law_per_s(conc, n, delay);
        let got = s["throughput_per_s"]["median"].as_f64().unwrap();
        assert!(
            got <= bound * 1.02,
            "{id}: {got:.1}/s exceeds Little's law {bound:.1}/s — a timing bug"
        );
        assert!(
            got >= 0.7 * bound,
            "{id}: {got:.1}/s is below 70% of Little's law {bound:.1}/s"
        );
        for run in c["runs"].as_array().unwrap() {
            assert_eq!(
                run["server_requests"].as_u64(),
                Some(n as u64),
                "{id}: the server saw every request, no more"
            );
            assert_eq!(run["ops"].as_u64(), Some(n as u64), "{id}");
        }
        assert!(c["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|w| !w.as_str().unwrap().contains("mock server served")));
    }
    // The A/A twin: sync again in every round, kept apart from the cells, and within what
    // a sleep-bound batch allows of its original (its rounds here differ by well under 1%).
    let twins = r["twins"].as_array().unwrap();
    assert_eq!(twins.len(), 1, "{twins:?}");
    assert_eq!(twins[0]["twin_of"], cells[0]["id"]);
    assert_eq!(
        twins[0]["runs"].as_array().unwrap().len(),
        cells[0]["runs"].as_array().unwrap().len(),
        "the twin runs every round its original runs"
    );
    let (t, o) = (
        twins[0]["summary"]["throughput_per_s"]["median"]
            .as_f64()
            .unwrap(),
        cells[0]["summary"]["throughput_per_s"]["median"]
            .as_f64()
            .unwrap(),
    );
    assert!((t / o - 1.0).abs() < 0.1, "twin {t}/s against {o}/s");
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(
        summary.contains("| io_http | sync |") && summary.contains("**Resolution.**"),
        "{summary}"
    );
    let sync = &cells[0]["summary"]["latency_ms"];
    let p50 = sync["p50"].as_f64().unwrap();
    assert!(
        (100.0..110.0).contains(&p50),
        "sync p50 {p50} ms at a 100 ms delay"
    );
    assert_eq!(sync["kind"], "service");

    for f in ["results.json", "results.csv", "summary.md"] {
        assert!(dir.join(f).is_file(), "{f}");
    }
    let csv = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 5, "header + 4 cells");

    // `report` regenerates the exports from results.json alone, identically.
    let before = std::fs::read(dir.join("summary.md")).unwrap();
    bin().arg("report").arg(&dir).assert().success();
    assert_eq!(std::fs::read(dir.join("summary.md")).unwrap(), before);
}
